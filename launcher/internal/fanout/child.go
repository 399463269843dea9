package fanout

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// UndoGroups are, for the undo of parent undone, its groups in their order
// and, of them, those left alone, each with why: a group is undone only
// if its child request committed something to undo (replay.Undoable, the
// one-group undo's rule). An undone request that is no parent, or not
// finished, or with no group to undo, is an error naming it.
func UndoGroups(undone *v1alpha1.ReplayRequest, children map[string]*v1alpha1.ReplayRequest) (groups []string, left map[string]string, err error) {
	switch {
	case !replay.IsParent(undone):
		return nil, nil, fmt.Errorf("%s is not a request over several groups: undo it with its group (spec.group)", undone.Name)
	case !state.IsFinished(undone):
		return nil, nil, fmt.Errorf("%s has not finished yet (phase %s); undo it once it has", undone.Name, undone.Status.Phase)
	}
	left = map[string]string{}
	undo := 0
	for _, g := range Groups(undone) {
		groups = append(groups, g)
		c := children[g]
		if c == nil {
			left[g] = fmt.Sprintf("%s: no request ran it", g)
			continue
		}
		if err := replay.Undoable(c); err != nil {
			left[g] = err.Error()
			continue
		}
		undo++
	}
	if undo == 0 {
		return nil, nil, fmt.Errorf("no group of %s committed anything to undo", undone.Name)
	}
	return groups, left, nil
}

// Groups are the parent's groups in start order: spec.groups as given,
// whatever status says (whoever may write status cannot add a group), or
// what a groupSelector resolved to (status.resolvedGroups).
func Groups(parent *v1alpha1.ReplayRequest) []string {
	if len(parent.Spec.Groups) > 0 {
		return parent.Spec.Groups
	}
	return parent.Status.ResolvedGroups
}

// ChildSpec is the parent's spec for one group: the same request, with
// group instead of groups, and without the settings only a parent has.
func ChildSpec(parent *v1alpha1.ReplayRequest, group string) v1alpha1.ReplayRequestSpec {
	s := *parent.Spec.DeepCopy()
	s.Group = group
	s.Groups, s.GroupSelector, s.ContinueOnError, s.Parallelism = nil, nil, false, 0
	if s.Limits != nil && s.Limits.MaxTotalMessagesToReconsume != nil {
		// The total is the parent's to judge, over every child's plan: so
		// each child plans first and waits for the parent's decision,
		// whatever the parent's approval.
		s.Limits.MaxTotalMessagesToReconsume = nil
		if !s.DryRun {
			s.Approval = v1alpha1.ApprovalManual
		}
		if *s.Limits == (v1alpha1.Limits{}) {
			s.Limits = nil
		}
	}
	if u := parent.Spec.Target.UndoOf; u != nil {
		// The undo of a parent undoes each group's child request.
		child := ChildName(*u, group)
		s.Target.UndoOf = &child
	}
	return s
}

// Child is the child request of parent for group, as the launcher creates
// it: named ChildName, in the parent's namespace, controlled by the parent
// (so it goes when the parent goes, and its events reach the parent),
// labelled with the parent, and carrying the parent's requester stamps, so
// that every check made for the requester (a SubjectAccessReview of a
// Secret, the approval's stamps) is made for the parent's requester, never
// for the launcher that creates it.
func Child(parent *v1alpha1.ReplayRequest, group string) *v1alpha1.ReplayRequest {
	ctrl := true
	c := &v1alpha1.ReplayRequest{
		ObjectMeta: metav1.ObjectMeta{
			Name:      ChildName(parent.Name, group),
			Namespace: parent.Namespace,
			Labels:    map[string]string{v1alpha1.LabelParent: v1alpha1.LabelValue(parent.Name)},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: v1alpha1.GroupVersion.String(), Kind: "ReplayRequest",
				Name: parent.Name, UID: parent.UID, Controller: &ctrl,
			}},
		},
		Spec: ChildSpec(parent, group),
	}
	for _, k := range requesterKeys {
		if v, ok := parent.Annotations[k]; ok {
			if c.Annotations == nil {
				c.Annotations = map[string]string{}
			}
			c.Annotations[k] = v
		}
	}
	return c
}

var requesterKeys = []string{v1alpha1.AnnotationRequestedBy, v1alpha1.AnnotationRequestedByGroups}

// ErrTampered is a request with a child's name that the parent did not
// make as it is.
var ErrTampered = errors.New("not the parent's child")

// CheckAdopted says whether child, found under the name of parent's child
// for group, is the one the parent makes: controlled by the parent's UID,
// with the spec the parent generates and the parent's requester stamps.
// Anything else (a request made ahead under that name, by a tenant or a
// tool) is ErrTampered, naming what differs: the parent then starts
// nothing more, since what it would run is not what was approved.
func CheckAdopted(parent, child *v1alpha1.ReplayRequest, group string) error {
	owner := metav1.GetControllerOf(child)
	if owner == nil || owner.UID != parent.UID {
		return fmt.Errorf("%w: request %s is not controlled by %s (uid %s)", ErrTampered, child.Name, parent.Name, parent.UID)
	}
	if want := ChildSpec(parent, group); !equality.Semantic.DeepEqual(want, child.Spec) {
		return fmt.Errorf("%w: request %s's spec is not the parent's for group %q", ErrTampered, child.Name, group)
	}
	for _, k := range requesterKeys {
		if child.Annotations[k] != parent.Annotations[k] {
			return fmt.Errorf("%w: request %s's %s is not the parent's", ErrTampered, child.Name, k)
		}
	}
	if child.Labels[v1alpha1.LabelParent] != v1alpha1.LabelValue(parent.Name) {
		return fmt.Errorf("%w: request %s's label %s is not the parent's", ErrTampered, child.Name, v1alpha1.LabelParent)
	}
	return nil
}

// Row is the parent's status row of group, from its child (nil when the
// child does not exist) and the row's last state (which keeps
// NotAttempted, and a child that ended before it was deleted).
func RowOf(group string, child *v1alpha1.ReplayRequest, last *v1alpha1.GroupStatus) v1alpha1.GroupStatus {
	row := v1alpha1.GroupStatus{Group: group, Phase: v1alpha1.GroupWaiting}
	if last != nil {
		row = *last
	}
	if child == nil {
		return row
	}
	row.Child = child.Name
	row.Phase = v1alpha1.GroupPhase(state.PhaseFor(child.Status.Conditions))
	row.Reason = ""
	if c := meta.FindStatusCondition(child.Status.Conditions, v1alpha1.ConditionFinished); c != nil && c.Status == metav1.ConditionTrue {
		row.Reason = c.Reason
	}
	row.Moved, row.MessagesToReconsume, row.MessagesSkipped = 0, 0, 0
	if pl := child.Status.Plan; pl != nil {
		// Written once: the digest the parent's plan covers, which the
		// child's must still be when the launcher approves it.
		if row.Plan == "" {
			row.Plan = pl.Digest
		}
		row.Moved, row.MessagesToReconsume, row.MessagesSkipped = pl.Totals.Moved, pl.Totals.MessagesToReconsume, pl.Totals.MessagesSkipped
	}
	if r := child.Status.Result; r != nil {
		row.Moved, row.MessagesToReconsume, row.MessagesSkipped = r.Totals.Moved, r.Totals.MessagesToReconsume, r.Totals.MessagesSkipped
	}
	return row
}

// ParentApproved says whether a child's approval of its plan is its
// parent's (docs/groups.md, "Only the launcher decides a child"): nil when
// parent, the child's controller, records in status its approval of its
// own plan, and its row of this child covers the child's plan digest;
// else why not. The child waits meanwhile: an approval that anyone but
// the launcher set (possible only without the chart's admission
// policies) applies nothing ahead of the parent's one approval and its
// guard over all groups' total. It is pure.
func ParentApproved(parent, child *v1alpha1.ReplayRequest) error {
	owner := metav1.GetControllerOf(child)
	switch {
	case owner == nil || owner.Kind != "ReplayRequest":
		return fmt.Errorf("it is controlled by no ReplayRequest, so no parent's approval covers it")
	case parent == nil:
		return fmt.Errorf("%s does not exist", owner.Name)
	case parent.UID != owner.UID:
		return fmt.Errorf("%s (uid %s) is not its parent (uid %s)", parent.Name, parent.UID, owner.UID)
	}
	a, plan := parent.Status.Approval, parent.Status.Plan
	if a == nil || a.Decision != v1alpha1.ApprovalApproved || plan == nil || a.Digest != plan.Digest {
		return fmt.Errorf("%s's status records no approval of its plan", parent.Name)
	}
	if child.Status.Plan == nil {
		return fmt.Errorf("it has no plan")
	}
	for _, row := range parent.Status.Groups {
		if row.Child != child.Name {
			continue
		}
		if row.Plan != child.Status.Plan.Digest {
			return fmt.Errorf("the approved plan %s of %s covers %s for it, not its plan %s", plan.Digest, parent.Name, orNone(row.Plan), child.Status.Plan.Digest)
		}
		return nil
	}
	return fmt.Errorf("the approved plan %s of %s does not cover it (no group of %s is %s)", plan.Digest, parent.Name, parent.Name, child.Name)
}

func orNone(s string) string {
	if s == "" {
		return "no plan of it"
	}
	return s
}

// Planned reports whether a Manual child has its plan and awaits a
// decision.
func Planned(child *v1alpha1.ReplayRequest) bool {
	return child != nil && child.Status.Plan != nil && child.Status.Approval == nil && !state.IsFinished(child)
}

// PlanApproved reports whether a child's plan was approved: its approve
// annotation names its plan's digest. Before the parent records its own
// approval, such a child means the pass that approved it never wrote
// status (the launcher died, or the write conflicted): it has done its
// planning, whatever it did since, and its plan is still the parent's.
func PlanApproved(child *v1alpha1.ReplayRequest) bool {
	return child != nil && child.Status.Plan != nil && child.Annotations[v1alpha1.AnnotationApprove] == child.Status.Plan.Digest
}

// ManualState is a row's state as Next reads it for a Manual parent.
// Before the parent's approval its children plan: one that planned has
// done its part (Succeeded, so it frees its place under parallelism).
// After it, a planned child the launcher has not approved yet waits, and
// one it approved runs.
func ManualState(row v1alpha1.GroupStatus, child *v1alpha1.ReplayRequest, parentApproved bool) State {
	s := StateOf(row)
	if s != Running || !Planned(child) {
		return s
	}
	switch {
	case !parentApproved:
		return Succeeded
	case child.Annotations[v1alpha1.AnnotationApprove] == "" && child.Annotations[v1alpha1.AnnotationReject] == "":
		return Waiting
	}
	return Running
}

// ParentPlan is a Manual parent's plan over its planned children (those
// rows with a plan): PlanDigest over each group's child's plan digest,
// the totals summed, planned when the first child planned and expiring
// when the first child's plan expires, so that no child's plan expires
// while the parent's approval still holds. It is not ready (false) while
// no row has a plan.
func ParentPlan(rows []v1alpha1.GroupStatus, children []*v1alpha1.ReplayRequest) (*v1alpha1.PlanSummary, bool, error) {
	var plans []ChildPlan
	out := &v1alpha1.PlanSummary{}
	for i, r := range rows {
		c := children[i]
		if !covered(r, c) {
			continue
		}
		plans = append(plans, ChildPlan{Group: r.Group, Plan: r.Plan})
		cp := c.Status.Plan
		t := &out.Totals
		t.Partitions += cp.Totals.Partitions
		t.Moved += cp.Totals.Moved
		// Saturating, as the runner sums: the total guard reads these.
		t.MessagesToReconsume = report.AddCounts(t.MessagesToReconsume, cp.Totals.MessagesToReconsume)
		t.MessagesSkipped = report.AddCounts(t.MessagesSkipped, cp.Totals.MessagesSkipped)
		t.Clamped += cp.Totals.Clamped
		t.NoPreviousOffset += cp.Totals.NoPreviousOffset
		if cp.PlannedAt != nil && (out.PlannedAt == nil || cp.PlannedAt.Before(out.PlannedAt)) {
			out.PlannedAt = cp.PlannedAt.DeepCopy()
		}
		if cp.ExpiresAt != nil && (out.ExpiresAt == nil || cp.ExpiresAt.Before(out.ExpiresAt)) {
			out.ExpiresAt = cp.ExpiresAt.DeepCopy()
		}
		if cp.Target != "" {
			out.Target = cp.Target
		}
	}
	if len(plans) == 0 {
		return nil, false, nil
	}
	d, ok, err := PlanDigest(plans)
	if err != nil || !ok {
		return nil, false, err
	}
	out.Digest = d
	return out, true, nil
}

// covered reports whether the parent's plan covers a row: its child has
// the plan the row recorded.
func covered(r v1alpha1.GroupStatus, c *v1alpha1.ReplayRequest) bool {
	return r.Plan != "" && c != nil && c.Status.Plan != nil && c.Status.Plan.Digest == r.Plan
}

// Restoring reports whether a finished child still holds the consumers
// it paused: it has not ended its part until they are back, so it keeps
// its place under parallelism and the parent does not finish.
func Restoring(child *v1alpha1.ReplayRequest) bool {
	return child != nil && state.IsFinished(child) && state.ConsumersHeld(child)
}

// StateOf is a row as Next reads it.
func StateOf(row v1alpha1.GroupStatus) State {
	switch row.Phase {
	case v1alpha1.GroupWaiting, "":
		return Waiting
	case v1alpha1.GroupNotAttempted:
		return NotAttempted
	case v1alpha1.GroupPhase(v1alpha1.PhaseSucceeded):
		return Succeeded
	case v1alpha1.GroupPhase(v1alpha1.PhaseFailed):
		return Failed
	}
	return Running
}

// ResultOf is a finished child as report.Outcome reads it. A child without
// a runner result failed before the runner said anything: unchanged when
// it never had a Job (it was refused before), else it may have changed
// (its Job ran, or was deleted while it could commit), so the parent never
// says "nothing changed" when it cannot know.
func ResultOf(child *v1alpha1.ReplayRequest, row v1alpha1.GroupStatus) report.Result {
	r := report.Result{Group: row.Group, Reason: report.Reason(row.Reason)}
	succeeded := row.Phase == v1alpha1.GroupPhase(v1alpha1.PhaseSucceeded)
	if child != nil && child.Status.Result != nil {
		res := child.Status.Result
		r.ExitCode, r.DryRun, r.AlreadyApplied, r.Error = report.ExitCode(res.ExitCode), res.DryRun, res.AlreadyApplied, res.Error
		r.Totals.Applied, r.Totals.Failed = int(res.Totals.Applied), int(res.Totals.Failed)
		if succeeded && r.ExitCode != report.ExitOK {
			r.ExitCode = report.ExitOK
		}
		if !succeeded && r.ExitCode == report.ExitOK {
			// The runner ended well, the launcher did not (e.g. a deleted
			// Job): what the runner applied stands.
			r.ExitCode = report.ExitPartiallyApplied
		}
		return r
	}
	switch {
	case succeeded:
		r.ExitCode, r.AlreadyApplied = report.ExitOK, row.Reason == state.ReasonAlreadyRan
	case child != nil && child.Status.JobName != "":
		r.ExitCode = report.ExitPartiallyApplied
		r.Error = "its Job ran, or was deleted, without a result: read the group's offsets"
	default:
		r.ExitCode = report.ExitInvalidInput
	}
	if child != nil && r.Error == "" {
		r.Error = state.Truncate(child.Status.Message, 256)
	}
	return r
}

// Overall is the parent's outcome over its finished rows, by the runner's
// rule for several groups (report.Outcome): whether it succeeded, its
// reason and message.
func Overall(results []report.Result, notAttempted []string, dryRun bool) (bool, string, string) {
	code, reason, msg := report.Outcome(results, notAttempted, dryRun)
	if msg == "" {
		msg = fmt.Sprintf("%d groups: %s", len(results), reason)
	}
	return code == report.ExitOK, string(reason), msg
}

// NotAttemptedGroups are the rows given up (not those an undo leaves
// alone: they had nothing to undo, which is no failure).
func NotAttemptedGroups(rows []v1alpha1.GroupStatus) []string {
	var out []string
	for _, r := range rows {
		if r.Phase == v1alpha1.GroupNotAttempted && r.Reason != state.ReasonNothingToUndo {
			out = append(out, r.Group)
		}
	}
	return out
}

// Progress says, for the parent's Running condition, how many groups are
// in each state.
func Progress(rows []v1alpha1.GroupStatus) string {
	counts := map[v1alpha1.GroupPhase]int{}
	for _, r := range rows {
		counts[r.Phase]++
	}
	var parts []string
	for _, p := range []v1alpha1.GroupPhase{v1alpha1.GroupWaiting, v1alpha1.GroupPhase(v1alpha1.PhasePending), v1alpha1.GroupPhase(v1alpha1.PhaseRunning), v1alpha1.GroupPhase(v1alpha1.PhaseAwaitingApproval), v1alpha1.GroupPhase(v1alpha1.PhaseSucceeded), v1alpha1.GroupPhase(v1alpha1.PhaseFailed), v1alpha1.GroupNotAttempted} {
		if n := counts[p]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, p))
		}
	}
	return fmt.Sprintf("%d groups: %s", len(rows), strings.Join(parts, ", "))
}
