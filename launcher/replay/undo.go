package replay

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// UndoSpec is the spec of a request that undoes undone, the request named
// undoOf: the same way to the group (the Kafka connection and group, or the
// consumerRef, which the undo resolves again and must find the same), the
// same consumers to pause, the same wait for the group, the same runner
// overrides, the same commit mode (an Atomic replay's undo is fenced as
// it was) and the same stated kind of group; nothing of the target, the topics or the limits, since the
// undone run's record is the scope. The launcher's status.undoCommand and
// the plugin's `kubectl replay undo` both make it here, so the fields an
// undo copies are listed once.
func UndoSpec(undone *v1alpha1.ReplayRequestSpec, undoOf string) v1alpha1.ReplayRequestSpec {
	src := undone.DeepCopy()
	return v1alpha1.ReplayRequestSpec{
		Kafka:           src.Kafka,
		Group:           src.Group,
		ConsumerRef:     src.ConsumerRef,
		Target:          v1alpha1.Target{UndoOf: &undoOf},
		WhenGroupActive: src.WhenGroupActive,
		WaitTimeout:     src.WaitTimeout,
		Runner:          src.Runner,
		Consumers:       src.Consumers,
		CommitMode:      src.CommitMode,
		GroupType:       src.GroupType,
	}
}

// UndoRule names the rule that keeps a request from being undone.
type UndoRule string

const (
	// UndoDryRun: a dry run (by its spec or its result) committed nothing.
	UndoDryRun UndoRule = "DryRun"
	// UndoNotFinished: the request has not succeeded yet.
	UndoNotFinished UndoRule = "NotFinished"
	// UndoFailed: the request failed; only one that succeeded has previous
	// offsets to restore.
	UndoFailed UndoRule = "Failed"
	// UndoNoJob: no runner Job in status.jobName, so no ReplayRecord.
	UndoNoJob UndoRule = "NoJob"
	// UndoNothingApplied: its result applied no partition.
	UndoNothingApplied UndoRule = "NothingApplied"
)

// NotUndoable is why a request cannot be undone: the rule, and a sentence
// naming the request.
type NotUndoable struct {
	Rule UndoRule
	msg  string
}

func (e *NotUndoable) Error() string { return e.msg }

func notUndoable(rule UndoRule, format string, a ...any) error {
	return &NotUndoable{Rule: rule, msg: fmt.Sprintf(format, a...)}
}

// Undoable says whether rr, as its status says, committed something an undo
// can restore: it succeeded, with a runner Job (status.jobName, whose
// ReplayRecord keeps the previous offsets), it was no dry run, by its spec
// or by its result, and its result applied at least one partition (an
// AlreadyApplied retry counts: the commit is its own). It returns nil, or a
// *NotUndoable naming the rule. The launcher's undo.Decide and
// status.undoCommand and the plugin's `kubectl replay undo` all judge by
// it; the launcher then checks what only it reads (the group, the servers,
// the Job and its record). It is pure.
func Undoable(rr *v1alpha1.ReplayRequest) error {
	r := rr.Status.Result
	if rr.Spec.DryRun || r != nil && r.DryRun {
		return notUndoable(UndoDryRun, "%s was a dry run: it moved nothing, there is nothing to undo", rr.Name)
	}
	switch c := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionSucceeded); {
	case c == nil || c.Status == metav1.ConditionUnknown:
		phase := rr.Status.Phase
		if phase == "" {
			phase = v1alpha1.PhasePending
		}
		return notUndoable(UndoNotFinished, "%s has not finished yet (phase %s); undo it once it has succeeded", rr.Name, phase)
	case c.Status != metav1.ConditionTrue:
		msg := c.Message
		if len(msg) > maxQuotedMessage {
			msg = strings.ToValidUTF8(msg[:maxQuotedMessage], "")
		}
		return notUndoable(UndoFailed, "%s did not succeed (%s: %s); only a request that succeeded has previous offsets to restore", rr.Name, c.Reason, msg)
	}
	switch {
	case rr.Status.JobName == "":
		return notUndoable(UndoNoJob, "%s has no runner Job in status.jobName, so no ReplayRecord to restore from", rr.Name)
	case r == nil || r.Totals.Applied == 0:
		return notUndoable(UndoNothingApplied, "%s applied no partition (status.result): it moved nothing, there is nothing to undo", rr.Name)
	}
	return nil
}

// maxQuotedMessage bounds the failed request's condition message quoted in
// a refusal.
const maxQuotedMessage = 256
