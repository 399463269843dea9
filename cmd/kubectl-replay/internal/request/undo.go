package request

import (
	"errors"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/exit"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// UndoOptions are the flags of `kubectl replay undo`.
type UndoOptions struct {
	// Name of the undo request; UndoName(undone) when empty.
	Name  string
	Force bool
	// Approval Manual plans the undo and waits for an approval first.
	Approval string
	// MaxMessagesToReconsume bounds the undo like any request.
	MaxMessagesToReconsume *int64
	// MaxTotalMessagesToReconsume bounds the undo of a request over
	// several groups, all groups together.
	MaxTotalMessagesToReconsume *int64
	// AllowSkip lets the undo move offsets forward past messages the
	// undone run's commit cannot vouch for: a share group's start
	// offsets carry no run ID, so the undo of its rewind needs it.
	AllowSkip bool
	// CommitMode overrides the undone request's; "" keeps it.
	CommitMode string
}

// UndoName is the default name of the request that undoes name.
func UndoName(name string) string {
	const suffix = "-undo"
	if len(name)+len(suffix) > 253 {
		name = strings.TrimRight(name[:253-len(suffix)], "-.")
	}
	return name + suffix
}

// CanUndo says whether a request can be undone, by the rule the launcher
// judges it (replay.Undoable; an undo of anything else fails UndoRefused),
// so that the plugin says so before creating anything.
func CanUndo(rr *v1alpha1.ReplayRequest) error {
	if replay.IsParent(rr) {
		return canUndoParent(rr)
	}
	err := replay.Undoable(rr)
	var no *replay.NotUndoable
	switch {
	case err == nil:
		return nil
	case errors.As(err, &no) && no.Rule == replay.UndoFailed:
		return exit.Errorf(exit.WrongState, "%w: a failed request is not undone by another request; see `kubectl replay describe %s` for what moved", err, rr.Name)
	}
	return exit.Errorf(exit.WrongState, "%w", err)
}

// canUndoParent says whether a request over several groups can be
// undone: it has finished (a parent that failed may have groups that
// applied: those are undone, the others left), was no dry run, and at
// least one group's request succeeded. Each group's own request is then
// judged by the launcher as any request's undo is.
func canUndoParent(rr *v1alpha1.ReplayRequest) error {
	if rr.Spec.DryRun {
		return exit.Errorf(exit.WrongState, "%s was a dry run: it moved nothing, there is nothing to undo", rr.Name)
	}
	finished := false
	for _, c := range rr.Status.Conditions {
		if c.Type == v1alpha1.ConditionFinished && c.Status == metav1.ConditionTrue {
			finished = true
		}
	}
	if !finished {
		return exit.Errorf(exit.WrongState, "%s has not finished yet (phase %s); undo it once every group has ended", rr.Name, phaseOf(rr))
	}
	for _, g := range rr.Status.Groups {
		if g.Phase == v1alpha1.GroupPhase(v1alpha1.PhaseSucceeded) {
			return nil
		}
	}
	return exit.Errorf(exit.WrongState, "no group of %s succeeded: it has nothing to undo; `kubectl replay describe %s` shows each group's outcome", rr.Name, rr.Name)
}

func phaseOf(rr *v1alpha1.ReplayRequest) string {
	if rr.Status.Phase == "" {
		return "Pending"
	}
	return string(rr.Status.Phase)
}

// Undo makes the request that undoes undone: target.undoOf naming it, the
// same group and Kafka connection (the launcher refuses an undo whose group
// or servers differ), the same consumers to pause and the same wait for
// the group, and the undone request's runner overrides and commit mode.
func Undo(undone *v1alpha1.ReplayRequest, o UndoOptions) (*v1alpha1.ReplayRequest, error) {
	if err := CanUndo(undone); err != nil {
		return nil, err
	}
	name := o.Name
	if name == "" {
		name = UndoName(undone.Name)
	}
	if err := objectName(name); err != nil {
		return nil, exit.Errorf(exit.Usage, "--name: %w", err)
	}
	rr := &v1alpha1.ReplayRequest{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ReplayRequest"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: undone.Namespace},
		Spec:       replay.UndoSpec(&undone.Spec, undone.Name),
	}
	rr.Spec.Approval, rr.Spec.Force = v1alpha1.ApprovalAutomatic, o.Force
	if undone.Spec.Group == "" && undone.Spec.ConsumerRef == nil {
		// The undo of a request over several groups runs its groups as it
		// ran them: as many at once, and on past a failed one or not.
		rr.Spec.Parallelism, rr.Spec.ContinueOnError = undone.Spec.Parallelism, undone.Spec.ContinueOnError
	}
	if rr.Spec.WhenGroupActive == "" {
		rr.Spec.WhenGroupActive = v1alpha1.GroupActiveFail
	}
	switch o.Approval {
	case "", string(v1alpha1.ApprovalAutomatic):
	case string(v1alpha1.ApprovalManual):
		rr.Spec.Approval = v1alpha1.ApprovalManual
	default:
		return nil, exit.Errorf(exit.Usage, "--%s: %q is not Automatic or Manual", FlagApproval, o.Approval)
	}
	if o.CommitMode != "" {
		mode, err := CommitMode(o.CommitMode)
		if err != nil {
			return nil, exit.Errorf(exit.Usage, "--%s: %w", FlagCommitMode, err)
		}
		rr.Spec.CommitMode = mode
	}
	if o.MaxMessagesToReconsume != nil {
		if *o.MaxMessagesToReconsume < 0 {
			return nil, exit.Errorf(exit.Usage, "--%s: %d is negative", FlagMaxMessagesToReconsume, *o.MaxMessagesToReconsume)
		}
		n := *o.MaxMessagesToReconsume
		rr.Spec.Limits = &v1alpha1.Limits{MaxMessagesToReconsume: &n}
	}
	if o.AllowSkip {
		if rr.Spec.Limits == nil {
			rr.Spec.Limits = &v1alpha1.Limits{}
		}
		rr.Spec.Limits.AllowSkip = true
	}
	if o.MaxTotalMessagesToReconsume != nil {
		switch {
		case !replay.IsUndoParent(rr):
			return nil, exit.Errorf(exit.Usage, "--%s: applies to the undo of a request over several groups; %s has one group, whose total --%s bounds", FlagMaxTotalMessagesToReconsume, undone.Name, FlagMaxMessagesToReconsume)
		case *o.MaxTotalMessagesToReconsume < 0:
			return nil, exit.Errorf(exit.Usage, "--%s: %d is negative", FlagMaxTotalMessagesToReconsume, *o.MaxTotalMessagesToReconsume)
		}
		if rr.Spec.Limits == nil {
			rr.Spec.Limits = &v1alpha1.Limits{}
		}
		n := *o.MaxTotalMessagesToReconsume
		rr.Spec.Limits.MaxTotalMessagesToReconsume = &n
	}
	return rr, nil
}

// Decidable says whether a request's plan can be approved or rejected now:
// it must await approval with a plan in status, and be no child request
// (one group of a parent, whose one approval the launcher carries to each
// child: docs/groups.md, "Only the launcher decides a child").
func Decidable(rr *v1alpha1.ReplayRequest, verb string) error {
	if replay.IsChild(rr) {
		parent := rr.Labels[v1alpha1.LabelParent]
		if o := metav1.GetControllerOf(rr); o != nil && o.Kind == "ReplayRequest" {
			parent = o.Name
		}
		return exit.Errorf(exit.WrongState, "cannot %s %s: it is a child of %s, whose one plan covers all its groups; %s %s instead (kubectl replay %s %s -n %s), and the launcher decides each child",
			verb, rr.Name, parent, verb, parent, verb, parent, rr.Namespace)
	}
	if rr.Status.Phase == v1alpha1.PhaseAwaitingApproval && rr.Status.Plan != nil && rr.Status.Plan.Digest != "" {
		return nil
	}
	if rr.Spec.Approval != v1alpha1.ApprovalManual {
		return exit.Errorf(exit.WrongState, "cannot %s %s: it is not a request with --approval Manual (approval %s), it has no plan to %s", verb, rr.Name, orDefault(string(rr.Spec.Approval), "Automatic"), verb)
	}
	if a := rr.Status.Approval; a != nil {
		return exit.Errorf(exit.WrongState, "cannot %s %s: its plan was already %s by %s (phase %s)", verb, rr.Name, strings.ToLower(string(a.Decision)), orDefault(a.By, "unknown"), phaseOf(rr))
	}
	return exit.Errorf(exit.WrongState, "cannot %s %s: it is not awaiting approval (phase %s)%s", verb, rr.Name, phaseOf(rr), stateHint(rr))
}

func stateHint(rr *v1alpha1.ReplayRequest) string {
	switch rr.Status.Phase {
	case "", v1alpha1.PhasePending, v1alpha1.PhaseRunning:
		return "; its plan is not ready yet: `kubectl replay create --wait` or `kubectl replay describe " + rr.Name + "` shows when it is"
	}
	return ""
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
