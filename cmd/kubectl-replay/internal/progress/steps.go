// Package progress says where a request is, step by step (accepted, plan,
// approval, pause, apply, restore), from its status alone: a pure function
// of the object, so that `--wait`'s display is a table test, and the same
// object always shows the same screen.
package progress

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/render"
)

// State is where one step is.
type State int

const (
	// Pending: not reached yet.
	Pending State = iota
	// Active: under way.
	Active
	// Done: finished well.
	Done
	// Failed: finished badly; the request fails (or failed) here.
	Failed
	// Skipped: the request ended before reaching it.
	Skipped
)

// Symbol is the state's mark on the screen.
func (s State) Symbol() string {
	switch s {
	case Active:
		return "…"
	case Done:
		return "✓"
	case Failed:
		return "✗"
	case Skipped:
		return "-"
	}
	return "·"
}

// Step is one line of the display.
type Step struct {
	Name   string
	State  State
	Detail string
}

// Step names.
const (
	StepAccepted = "accepted"
	StepPlan     = "plan"
	StepApproval = "approval"
	StepPause    = "pause consumers"
	StepApply    = "apply"
	StepDryRun   = "dry run"
	StepRestore  = "restore consumers"
)

// Finished reports whether the request has reached its final state, and
// whether it succeeded.
func Finished(rr *v1alpha1.ReplayRequest) (finished, succeeded bool) {
	f := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionFinished)
	if f == nil || f.Status != metav1.ConditionTrue {
		return false, false
	}
	s := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionSucceeded)
	return true, s != nil && s.Status == metav1.ConditionTrue
}

// Outcome is the final reason and message, once finished.
func Outcome(rr *v1alpha1.ReplayRequest) (reason, message string) {
	if s := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionSucceeded); s != nil {
		return s.Reason, s.Message
	}
	return "", rr.Status.Message
}

// Steps is the request's progress. The steps a request does not have are
// left out: plan and approval without approval: Manual, the consumers'
// without spec.consumers (or in a dry run, which pauses nothing).
func Steps(rr *v1alpha1.ReplayRequest) []Step {
	conds := rr.Status.Conditions
	cond := func(t string) *metav1.Condition { return meta.FindStatusCondition(conds, t) }
	finished, succeeded := Finished(rr)
	reason, msg := Outcome(rr)
	manual := rr.Spec.Approval == v1alpha1.ApprovalManual
	consumers := len(rr.Spec.Consumers) > 0 && !rr.Spec.DryRun

	var steps []Step
	// failedAt marks the step the request failed at: the first one not
	// done when it finished. Later ones are skipped.
	failedMarked := false
	finish := func(s *Step) {
		if !finished || s.State == Done || s.State == Failed {
			if s.State == Failed {
				failedMarked = true
			}
			return
		}
		if succeeded {
			// A success that skipped a step (AlreadyRan finds the earlier
			// Job's outcome) leaves it skipped, not failed.
			s.State = Skipped
			return
		}
		if !failedMarked {
			s.State, s.Detail, failedMarked = Failed, fmt.Sprintf("%s: %s", reason, msg), true
			return
		}
		s.State = Skipped
	}

	acc := Step{Name: StepAccepted}
	switch c := cond(v1alpha1.ConditionAccepted); {
	case c == nil:
		acc.State, acc.Detail = Active, "waiting for the launcher"
	case c.Status == metav1.ConditionTrue && c.Reason == "WaitingForGroup":
		acc.State, acc.Detail = Active, c.Message
	case c.Status == metav1.ConditionTrue:
		acc.State, acc.Detail = Done, c.Message
	default:
		acc.State, acc.Detail = Failed, c.Reason+": "+c.Message
	}
	finish(&acc)
	steps = append(steps, acc)

	running := cond(v1alpha1.ConditionRunning)
	isRunning := running != nil && running.Status == metav1.ConditionTrue
	approved := rr.Status.Approval != nil && rr.Status.Approval.Decision == v1alpha1.ApprovalApproved
	if manual {
		plan := Step{Name: StepPlan}
		switch p := rr.Status.Plan; {
		case p != nil:
			plan.State = Done
			plan.Detail = fmt.Sprintf("%s: %d partitions, %d to re-consume, %d skipped", p.Digest, p.Totals.Partitions, p.Totals.MessagesToReconsume, p.Totals.MessagesSkipped)
		case isRunning:
			plan.State, plan.Detail = Active, running.Message
		}
		finish(&plan)
		steps = append(steps, plan)

		appr := Step{Name: StepApproval}
		a := cond(v1alpha1.ConditionAwaitingApproval)
		switch {
		case rr.Status.Approval != nil && approved:
			appr.State = Done
			appr.Detail = "approved by " + orUnknown(rr.Status.Approval.By)
		case rr.Status.Approval != nil:
			appr.State = Failed
			appr.Detail = fmt.Sprintf("rejected by %s: %s", orUnknown(rr.Status.Approval.By), rr.Status.Approval.Reason)
		case a != nil && a.Status == metav1.ConditionTrue:
			appr.State = Active
			appr.Detail = fmt.Sprintf("waiting: %s (or %s)", render.ReplayCommand("approve", rr.Name, rr.Namespace), render.ReplayCommand("reject", rr.Name, rr.Namespace, "--reason ..."))
			if p := rr.Status.Plan; p != nil && p.ExpiresAt != nil {
				appr.Detail += ", expires " + p.ExpiresAt.UTC().Format("2006-01-02T15:04:05Z")
			}
		case a != nil && a.Status == metav1.ConditionFalse && a.Reason != "Approved":
			appr.State, appr.Detail = Failed, a.Reason+": "+a.Message
		case a != nil && a.Reason == "Approved":
			appr.State, appr.Detail = Done, a.Message
		}
		finish(&appr)
		steps = append(steps, appr)
	}

	pausedCond := cond(v1alpha1.ConditionConsumersPaused)
	if consumers {
		pause := Step{Name: StepPause}
		switch {
		case pausedCond != nil && pausedCond.Status == metav1.ConditionTrue:
			pause.State, pause.Detail = Done, pausedCond.Message
		case pausedCond != nil && pausedCond.Reason == "Restored":
			pause.State, pause.Detail = Done, "paused, then restored"
		case pausedCond != nil && pausedCond.Reason == "PauseFailed":
			pause.State, pause.Detail = Failed, pausedCond.Message
		case pausedCond != nil:
			pause.State, pause.Detail = Active, pausedCond.Message
		}
		finish(&pause)
		steps = append(steps, pause)
	}

	apply := Step{Name: StepApply}
	if rr.Spec.DryRun {
		apply.Name = StepDryRun
	}
	applying := isRunning && (!manual || approved)
	switch {
	case finished && succeeded:
		apply.State, apply.Detail = Done, reason+": "+msg
	case applying:
		apply.State, apply.Detail = Active, running.Message
	}
	finish(&apply)
	steps = append(steps, apply)

	if consumers {
		restore := Step{Name: StepRestore}
		rc := cond(v1alpha1.ConditionConsumersRestored)
		switch {
		case rc != nil && rc.Status == metav1.ConditionTrue:
			restore.State, restore.Detail = Done, rc.Message
		case rc != nil:
			restore.State, restore.Detail = Active, rc.Reason+": "+rc.Message
		case finished && (pausedCond != nil && pausedCond.Status == metav1.ConditionTrue || held(rr)):
			restore.State, restore.Detail = Active, "restoring"
		case finished && pausedCond == nil:
			restore.State, restore.Detail = Skipped, "nothing was paused"
		}
		if restore.State == Pending && finished {
			restore.State = Skipped
		}
		steps = append(steps, restore)
	}
	return steps
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// Over reports whether --wait is over: the request finished, and the
// consumers it paused are restored (or left, said why) — the launcher
// restores them after the outcome is written.
func Over(rr *v1alpha1.ReplayRequest) bool {
	finished, _ := Finished(rr)
	if !finished {
		return false
	}
	if len(rr.Spec.Consumers) == 0 || rr.Spec.DryRun {
		return true
	}
	if c := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionConsumersRestored); c != nil && c.Status == metav1.ConditionTrue {
		return true
	}
	if held(rr) {
		return false
	}
	paused := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionConsumersPaused)
	return paused == nil || paused.Status != metav1.ConditionTrue
}

// held reports whether a consumer is recorded or paused and not yet
// restored.
func held(rr *v1alpha1.ReplayRequest) bool {
	for _, c := range rr.Status.Consumers {
		if c.State == v1alpha1.ConsumerRecorded || c.State == v1alpha1.ConsumerPaused {
			return true
		}
	}
	return false
}
