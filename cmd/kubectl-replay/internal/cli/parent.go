package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/exit"
	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/progress"
	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/render"
	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/request"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// A request over several groups (a parent, docs/groups.md) is one row per
// group in status.groups, each group replayed by a child request that the
// launcher made and controls. The verbs read the parent, and its children
// only where a row does not say enough (each child's plan).

// GroupRows are a parent's rows, in start order: status.groups, or,
// before the launcher wrote them, its groups with no phase yet.
func GroupRows(rr *v1alpha1.ReplayRequest) []render.GroupRow {
	if len(rr.Status.Groups) > 0 {
		out := make([]render.GroupRow, len(rr.Status.Groups))
		for i, g := range rr.Status.Groups {
			out[i] = render.GroupRow{Group: g.Group, Request: g.Child, Phase: string(g.Phase), Reason: g.Reason,
				Moved: g.Moved, MessagesToReconsume: g.MessagesToReconsume, MessagesSkipped: g.MessagesSkipped}
		}
		return out
	}
	groups := rr.Status.ResolvedGroups
	if len(groups) == 0 {
		groups = rr.Spec.Groups
	}
	out := make([]render.GroupRow, len(groups))
	for i, g := range groups {
		out[i] = render.GroupRow{Group: g}
	}
	return out
}

// children are the child requests parent controls, by name: one List by
// the parent label, keeping only those whose controller is this parent
// (its UID), so that a request a tenant made under a child's name is
// never shown as the parent's.
func (a *app) children(ctx context.Context, parent *v1alpha1.ReplayRequest) (map[string]*v1alpha1.ReplayRequest, error) {
	c, _, err := a.client()
	if err != nil {
		return nil, err
	}
	var list v1alpha1.ReplayRequestList
	if err := c.List(ctx, &list, client.InNamespace(parent.Namespace), client.MatchingLabels{v1alpha1.LabelParent: v1alpha1.LabelValue(parent.Name)}); err != nil {
		return nil, apiError(err)
	}
	out := map[string]*v1alpha1.ReplayRequest{}
	for i := range list.Items {
		ch := &list.Items[i]
		if o := metav1.GetControllerOf(ch); o != nil && o.UID == parent.UID {
			out[ch.Name] = ch
		}
	}
	return out, nil
}

// ParentPlan is a parent's plan, as `kubectl replay plan -o json` prints
// it: the one digest an approval names, each group's plan, and the
// largest moves across groups.
type ParentPlan struct {
	Request   string `json:"request"`
	Namespace string `json:"namespace"`
	// Digest is what approve sets kafkareplay.dev/approve to: it covers
	// every group's plan (docs/groups.md).
	Digest    string                   `json:"digest,omitempty"`
	Target    string                   `json:"target,omitempty"`
	PlannedAt *metav1.Time             `json:"plannedAt,omitempty"`
	ExpiresAt *metav1.Time             `json:"expiresAt,omitempty"`
	Groups    []render.GroupPlan       `json:"groups"`
	Largest   []render.Move            `json:"largestMoves"`
	Approval  *v1alpha1.ApprovalStatus `json:"approval,omitempty"`
	// MaxTotalMessagesToReconsume is the parent's guard over all its
	// groups (spec.limits), which the launcher judges over this plan.
	MaxTotalMessagesToReconsume *int64 `json:"maxTotalMessagesToReconsume,omitempty"`
}

// largestMoves is how many of the largest moves across groups plan shows:
// a child's status.plan keeps its ten largest.
const largestMoves = 10

// ParentPlanOf is parent's plan from its rows and its children's plans.
// It is pure.
func ParentPlanOf(parent *v1alpha1.ReplayRequest, children map[string]*v1alpha1.ReplayRequest) *ParentPlan {
	pl := &ParentPlan{Request: parent.Name, Namespace: parent.Namespace, Target: parent.Status.ResolvedTarget, Approval: parent.Status.Approval}
	if l := parent.Spec.Limits; l != nil {
		pl.MaxTotalMessagesToReconsume = l.MaxTotalMessagesToReconsume
	}
	if p := parent.Status.Plan; p != nil {
		pl.Digest, pl.PlannedAt, pl.ExpiresAt = p.Digest, p.PlannedAt, p.ExpiresAt
		if p.Target != "" {
			pl.Target = p.Target
		}
	}
	covered := map[string]string{}
	for _, g := range parent.Status.Groups {
		covered[g.Group] = g.Plan
	}
	moves := map[string][]v1alpha1.PartitionResult{}
	for _, row := range GroupRows(parent) {
		g := render.GroupPlan{Group: row.Group, Request: row.Request, Phase: row.Phase, Reason: row.Reason}
		if ch := children[row.Request]; ch != nil && ch.Status.Plan != nil {
			cp := ch.Status.Plan
			// The digest the parent's covers (status.groups[].plan); a
			// child planned again since shows its new one, which the
			// parent's digest does not cover until it is made again.
			g.Digest = cp.Digest
			if c := covered[row.Group]; c != "" && c != cp.Digest {
				g.Reason = "planned again: " + c + " is covered"
			}
			g.Totals = render.PlanTotals{Partitions: int(cp.Totals.Partitions), MessagesToReconsume: cp.Totals.MessagesToReconsume, MessagesSkipped: cp.Totals.MessagesSkipped,
				NoPreviousOffset: int(cp.Totals.NoPreviousOffset), LeftAlone: int(cp.Totals.LeftAlone)}
			moves[row.Group] = cp.LargestDeltas
			if pl.Target == "" {
				pl.Target = cp.Target
			}
		}
		if g.Phase == "" {
			g.Phase = "Waiting"
		}
		pl.Groups = append(pl.Groups, g)
	}
	pl.Largest = render.LargestMoves(moves, largestMoves)
	return pl
}

func (a *app) loadParentPlan(ctx context.Context, rr *v1alpha1.ReplayRequest) (*ParentPlan, error) {
	if !replay.PlansFirst(rr) && !rr.Spec.DryRun {
		return nil, exit.Errorf(exit.WrongState, "%s has no plan: it is neither --approval Manual, nor a dry run, nor bound by --%s (%s shows what it did)", rr.Name, request.FlagMaxTotalMessagesToReconsume, render.ReplayCommand("describe", rr.Name, rr.Namespace))
	}
	children, err := a.children(ctx, rr)
	if err != nil {
		return nil, err
	}
	return ParentPlanOf(rr, children), nil
}

func printParentPlan(w interface{ Write([]byte) (int, error) }, p render.Palette, pl *ParentPlan) {
	if pl.Digest != "" {
		fmt.Fprintf(w, "Plan %s of %s/%s: %s, target %s\n", p.Bold(render.Clean(pl.Digest)), pl.Namespace, pl.Request, render.Groups(len(pl.Groups)), render.Clean(orDash(pl.Target)))
	} else {
		fmt.Fprintf(w, "Plans of %s/%s so far: %s, target %s (no approvable plan yet: every group must be planned)\n", pl.Namespace, pl.Request, render.Groups(len(pl.Groups)), render.Clean(orDash(pl.Target)))
	}
	if pl.PlannedAt != nil {
		fmt.Fprintf(w, "Planned at %s", pl.PlannedAt.UTC().Format("2006-01-02T15:04:05Z"))
		if pl.ExpiresAt != nil && pl.Approval == nil {
			fmt.Fprintf(w, ", expires at %s", pl.ExpiresAt.UTC().Format("2006-01-02T15:04:05Z"))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, render.GroupPlanTable(p, pl.Groups))
	if limit := pl.MaxTotalMessagesToReconsume; limit != nil {
		fmt.Fprintln(w, totalGuardLine(p, pl.Groups, *limit))
	}
	if len(pl.Largest) > 0 {
		fmt.Fprintf(w, "\nLargest moves across the groups:\n")
		fmt.Fprint(w, render.MovesTable(p, pl.Largest))
		fmt.Fprintf(w, "A group's every partition: %s\n", render.ReplayCommand("plan", "REQUEST", pl.Namespace))
	}
	switch {
	case pl.Approval != nil:
		fmt.Fprintf(w, "%s by %s\n", render.Clean(string(pl.Approval.Decision)), render.Clean(orUnknown(pl.Approval.By)))
	case pl.Digest != "":
		fmt.Fprintf(w, "\napprove: %s\nreject:  %s\n", render.ReplayCommand("approve", pl.Request, pl.Namespace), render.ReplayCommand("reject", pl.Request, pl.Namespace, `--reason "..."`))
	}
}

// totalGuardLine says how the planned groups' total stands against the
// guard over all groups, which the launcher judges before any applies.
func totalGuardLine(p render.Palette, groups []render.GroupPlan, limit int64) string {
	var total int64
	for _, g := range groups {
		if g.Digest != "" {
			total = report.AddCounts(total, g.Totals.MessagesToReconsume)
		}
	}
	field := request.InPluginWords("(spec.limits.maxTotalMessagesToReconsume)")
	if total > limit {
		return fmt.Sprintf("%s %d messages re-consumed over the groups, %s the %d allowed %s: the launcher refuses the plan (LimitExceeded) and applies nothing",
			p.Bold("total guard"), total, p.Red("more than"), limit, field)
	}
	return fmt.Sprintf("%s %d messages re-consumed over the groups, within the %d allowed %s", p.Bold("total guard"), total, limit, field)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// maxLiveGroups bounds the groups a live display draws: a terminal
// redraws the whole block every second. The rest are tallied.
const maxLiveGroups = 20

// ParentLines is the display of a parent: a header, the approval while
// it waits for one, and one line per group (on a terminal the first
// maxLiveGroups not yet ended, then a tally of the rest). It is pure.
func ParentLines(p render.Palette, rr *v1alpha1.ReplayRequest, elapsed time.Duration, limit int) []string {
	phase := string(rr.Status.Phase)
	if phase == "" {
		phase = "Pending"
	}
	rows := GroupRows(rr)
	out := []string{fmt.Sprintf("replayrequest %s/%s  %s  %s  %s", rr.Namespace, rr.Name, render.Tally(rows), p.Bold(render.Clean(phase)), elapsed.Truncate(time.Second))}
	if rr.Status.Phase == v1alpha1.PhaseAwaitingApproval && rr.Status.Plan != nil {
		out = append(out, fmt.Sprintf("  %s %-17s waiting: %s, then %s", p.Yellow(progress.Active.Symbol()), progress.StepApproval,
			render.ReplayCommand("plan", rr.Name, rr.Namespace), render.ReplayCommand("approve", rr.Name, rr.Namespace)))
	}
	shown := rows
	if limit > 0 && len(rows) > limit {
		// The groups under way first: those are the ones to watch.
		shown = slices.Clone(rows)
		slices.SortStableFunc(shown, func(x, y render.GroupRow) int { return ended(x) - ended(y) })
		shown = shown[:limit]
	}
	for _, r := range shown {
		out = append(out, strings.TrimRight("  "+groupLine(p, r), " "))
	}
	if len(shown) < len(rows) {
		out = append(out, fmt.Sprintf("  … %d more", len(rows)-len(shown)))
	}
	return out
}

// ended is 1 for a group that has ended, 0 for one waiting or under way.
func ended(r render.GroupRow) int {
	switch r.Phase {
	case string(v1alpha1.PhaseSucceeded), string(v1alpha1.PhaseFailed), string(v1alpha1.GroupNotAttempted):
		return 1
	}
	return 0
}

// groupLine is one group: its mark, name, phase and reason, and counts.
func groupLine(p render.Palette, r render.GroupRow) string {
	mark := progress.Pending.Symbol()
	switch r.Phase {
	case string(v1alpha1.PhaseSucceeded):
		mark = p.Green(progress.Done.Symbol())
	case string(v1alpha1.PhaseFailed):
		mark = p.Red(progress.Failed.Symbol())
	case string(v1alpha1.GroupNotAttempted):
		mark = progress.Skipped.Symbol()
	case string(v1alpha1.PhasePending), string(v1alpha1.PhaseRunning), string(v1alpha1.PhaseAwaitingApproval):
		mark = p.Yellow(progress.Active.Symbol())
	}
	what := render.Clean(orDash(r.Phase))
	if r.Reason != "" {
		what += " " + render.Clean(r.Reason)
	}
	counts := ""
	if r.Moved > 0 || r.MessagesToReconsume > 0 || r.MessagesSkipped > 0 {
		counts = fmt.Sprintf("  %d moved, %d re-consumed, %d skipped", r.Moved, r.MessagesToReconsume, r.MessagesSkipped)
	}
	return fmt.Sprintf("%s %-17s %s%s", mark, oneLine(r.Group, 60), what, counts)
}
