package record

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

// Outcome is what a finished runner Job says about its replay.
type Outcome struct {
	// Succeeded is the value of the Succeeded condition.
	Succeeded bool
	// Reason is a one-word reason for the Succeeded condition.
	Reason string
	// Message explains the outcome in a sentence.
	Message string
	// Result is the runner's result, when its termination message held one.
	Result *report.Result
	// ExitCode is the runner container's exit code, when a pod reported one.
	ExitCode *int32
	// FinishedAt is when the Job finished.
	FinishedAt time.Time
	// PodName is the pod the result came from, for the log tail.
	PodName string

	// Attempts are the Job's runner pods, oldest first (see MergeAttempts).
	Attempts []Attempt
	// OffsetsChanged says whether any attempt changed committed offsets.
	OffsetsChanged v1alpha1.OffsetsChanged
	// Full is the merged result of every attempt, every partition, for the
	// ReplayRecord; Result is its compact form.
	Full *report.Result
	// Complete is true when every attempt's full result was read.
	Complete bool
	// LogTail is the end of the last attempt's log without the result
	// frame, when Collector read the whole log; empty otherwise.
	LogTail string
}

// APIResult converts the runner's result into its status form.
func APIResult(r *report.Result) *v1alpha1.ReplayResult {
	if r == nil {
		return nil
	}
	out := &v1alpha1.ReplayResult{
		RunID:          r.RunID,
		Reason:         string(r.Reason),
		ExitCode:       int32(r.ExitCode),
		DryRun:         r.DryRun,
		AlreadyApplied: r.AlreadyApplied,
		Target:         r.Target.Resolved,
		CommitMode:     r.CommitMode,
		GroupType:      r.GroupType,
		Truncated:      r.Truncated,
		Error:          r.Error,
		Warnings:       slices.Clone(r.Warnings),
		Totals:         APITotals(r.Totals),
	}
	if out.Target == "" {
		out.Target = r.Target.Given
	}
	if it := r.InternalTopics; it != nil {
		out.InternalTopics = &v1alpha1.InternalTopics{Planned: slices.Clone(it.Planned), Deleted: slices.Clone(it.Deleted)}
	}
	if !r.StartedAt.IsZero() {
		out.StartedAt = &metav1.Time{Time: r.StartedAt}
	}
	if !r.FinishedAt.IsZero() {
		out.FinishedAt = &metav1.Time{Time: r.FinishedAt}
	}
	for _, p := range r.Partitions {
		out.Partitions = append(out.Partitions, APIPartition(p))
	}
	return out
}

// APIPartition converts one partition of the runner's result into its
// status form (status.result.partitions, status.plan.largestDeltas).
func APIPartition(p report.Partition) v1alpha1.PartitionResult {
	return v1alpha1.PartitionResult{
		Topic:          p.Topic,
		Partition:      p.Partition,
		PreviousOffset: state.CopyPtr(p.PreviousOffset),
		NewOffset:      p.NewOffset,
		Delta:          state.CopyPtr(p.Delta),
		Clamped:        p.Clamped,
		Note:           p.Note,
		Error:          p.Error,
		LeftAlone:      p.LeftAlone,
	}
}

// Finish records a final outcome in the request's status: the Succeeded
// condition, Running false, the result, the times and the phase.
func Finish(rr *v1alpha1.ReplayRequest, o Outcome, logTail string, now time.Time) {
	st := metav1.ConditionFalse
	if o.Succeeded {
		st = metav1.ConditionTrue
	}
	state.SetCondition(rr, v1alpha1.ConditionSucceeded, st, o.Reason, o.Message)
	if state.IsStarted(rr) {
		state.SetCondition(rr, v1alpha1.ConditionRunning, metav1.ConditionFalse, state.ReasonFinished, "the runner Job has finished")
	}
	finished := o.FinishedAt
	if finished.IsZero() {
		finished = now
	}
	rr.Status.CompletionTime = &metav1.Time{Time: finished}
	switch r := rr.Status.Result; {
	case o.Result != nil:
		rr.Status.Result = APIResult(o.Result)
	case r != nil && r.DryRun && !rr.Spec.DryRun:
		// The planning Job's result of a Manual request that ends without
		// applying its plan (rejected, expired, never started): it stays
		// in status.plan, and status.result, which kubectl get rr's
		// RECONSUMED and SKIPPED columns read, would count it as done.
		rr.Status.Result = nil
	}
	if logTail != "" {
		rr.Status.LogTail = state.Tail(logTail, 4096)
	}
	rr.Status.Message = o.Message
	rr.Status.Phase = state.PhaseFor(rr.Status.Conditions)
	rr.Status.ObservedGeneration = rr.Generation
}

// apiTotals converts the runner's totals into their API form.
func APITotals(t report.Totals) v1alpha1.ResultTotals {
	return v1alpha1.ResultTotals{
		Partitions:          int32(t.Partitions),
		Applied:             int32(t.Applied),
		Moved:               int32(t.Moved),
		MessagesToReconsume: t.MessagesToReconsume,
		MessagesSkipped:     t.MessagesSkipped,
		Clamped:             int32(t.Clamped),
		NoPreviousOffset:    int32(t.NoPreviousOffset),
		Failed:              int32(t.Failed),
		LeftAlone:           int32(t.LeftAlone),
	}
}
