package launcher

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// Reasons of the launcher's own, next to the runner's (report.Reason*).
const (
	// ReasonAccepted: the request was validated and its target resolved.
	ReasonAccepted = "Accepted"
	// ReasonWaitingForGroup: another replay of the same group runs first.
	ReasonWaitingForGroup = "WaitingForGroup"
	// ReasonInvalidTarget: the target is one the runner would refuse.
	ReasonInvalidTarget = "InvalidTarget"
	// ReasonJobCreated: the runner Job exists and runs.
	ReasonJobCreated = "JobCreated"
	// ReasonFinished: the Job has finished (see Succeeded).
	ReasonFinished = "Finished"
	// ReasonJobDeleted: the Job was deleted before it finished.
	ReasonJobDeleted = "JobDeleted"
	// ReasonDeadlineExceeded: the Job ran out of activeDeadlineSeconds.
	ReasonDeadlineExceeded = "DeadlineExceeded"
	// ReasonJobFailed: the Job failed and no pod said why.
	ReasonJobFailed = "JobFailed"
	// ReasonCompleted: the Job completed but its pod left no result.
	ReasonCompleted = "Completed"
	// ReasonJobCreateFailed: the API server refused the Job for now (a
	// quota, say); the launcher retries.
	ReasonJobCreateFailed = "JobCreateFailed"
	// ReasonJobInvalid: the API server refused the Job as invalid, which no
	// retry can change.
	ReasonJobInvalid = "JobInvalid"
	// ReasonOOMKilled: the runner was killed for using more memory than its
	// limit. It left no result of its own, so offsets may have changed.
	ReasonOOMKilled = "OOMKilled"
)

// Reasons of review before apply (approval: Manual).
const (
	// ReasonPlanReady: the planning run's plan waits for a decision
	// (AwaitingApproval True); the message has the commands.
	ReasonPlanReady = "PlanReady"
	// ReasonApproved: the plan was approved with its digest.
	ReasonApproved = "Approved"
	// ReasonApprovalRefused (a Warning event): kafkareplay.dev/approve
	// named another digest than the plan's; nothing changed.
	ReasonApprovalRefused = "ApprovalRefused"
	// ReasonRejected: the plan was rejected (kafkareplay.dev/reject);
	// nothing was applied.
	ReasonRejected = "Rejected"
	// ReasonExpired: nobody decided within approvalTimeout; nothing was
	// applied.
	ReasonExpired = "Expired"
	// ReasonPlanNotRecorded: the planning run finished, but its whole plan
	// could not be kept (no complete ReplayRecord), so there is nothing
	// exact to approve; nothing was applied.
	ReasonPlanNotRecorded = "PlanNotRecorded"
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
	// frame, when RecordCollector read the whole log; empty otherwise.
	LogTail string
}

// JobFinished reports whether a Job has reached a terminal condition
// (Complete or Failed), and which.
func JobFinished(job *batchv1.Job) (finished, succeeded bool, cond *batchv1.JobCondition) {
	for i := range job.Status.Conditions {
		c := &job.Status.Conditions[i]
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return true, true, c
		case batchv1.JobFailed:
			return true, false, c
		}
	}
	return false, false, nil
}

// runnerTermination is the runner container's last termination in a pod.
func runnerTermination(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name != ContainerName {
			continue
		}
		if cs.State.Terminated != nil {
			return cs.State.Terminated
		}
		return cs.LastTerminationState.Terminated
	}
	return nil
}

// JobOutcome derives the outcome of a finished Job from its terminal
// condition and all its pods' termination messages (see MergeAttempts). The
// runner writes its compact result there; with FallbackToLogsOnError a runner
// that died before writing it leaves its last log lines instead, which end up
// in the message. RecordCollector.Collect gives the same outcome from the
// pods' full results in their logs, and keeps the record.
func JobOutcome(job *batchv1.Job, pods []corev1.Pod) Outcome {
	return MergeAttempts(job, AttemptsOf(pods, nil))
}

// conditionReason is the API server's rule for metav1.Condition reasons.
var conditionReason = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// validReason returns reason when it is a valid condition reason of at most
// 1024 bytes, else fallback: a result from a runner of another version must
// never make the status update fail for ever.
func validReason(reason, fallback string) string {
	if len(reason) <= 1024 && conditionReason.MatchString(reason) {
		return reason
	}
	return fallback
}

func successMessage(r *report.Result) string {
	switch {
	case r.DryRun:
		return fmt.Sprintf("dry run: %d partitions planned, %d messages would be consumed again, %d skipped",
			r.Totals.Partitions, r.Totals.MessagesToReconsume, r.Totals.MessagesSkipped)
	case r.AlreadyApplied:
		return fmt.Sprintf("already applied by this run: %d partitions", r.Totals.Partitions)
	default:
		return fmt.Sprintf("%d partitions moved, %d messages will be consumed again, %d skipped",
			r.Totals.Partitions, r.Totals.MessagesToReconsume, r.Totals.MessagesSkipped)
	}
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
		Truncated:      r.Truncated,
		Error:          r.Error,
		Warnings:       slices.Clone(r.Warnings),
		Totals:         apiTotals(r.Totals),
	}
	if out.Target == "" {
		out.Target = r.Target.Given
	}
	if !r.StartedAt.IsZero() {
		out.StartedAt = &metav1.Time{Time: r.StartedAt}
	}
	if !r.FinishedAt.IsZero() {
		out.FinishedAt = &metav1.Time{Time: r.FinishedAt}
	}
	for _, p := range r.Partitions {
		out.Partitions = append(out.Partitions, v1alpha1.PartitionResult{
			Topic:          p.Topic,
			Partition:      p.Partition,
			PreviousOffset: copyPtr(p.PreviousOffset),
			NewOffset:      p.NewOffset,
			Delta:          copyPtr(p.Delta),
			Clamped:        p.Clamped,
			Note:           p.Note,
			Error:          p.Error,
			LeftAlone:      p.LeftAlone,
		})
	}
	return out
}

// SetCondition sets one condition, stamped with the request's generation.
// It reports whether anything changed.
func SetCondition(rr *v1alpha1.ReplayRequest, typ string, status metav1.ConditionStatus, reason, message string) bool {
	return meta.SetStatusCondition(&rr.Status.Conditions, metav1.Condition{
		Type:               typ,
		Status:             status,
		Reason:             reason,
		Message:            truncate(message, 1024),
		ObservedGeneration: rr.Generation,
	})
}

// PhaseFor derives the phase from the conditions, so the two never disagree.
func PhaseFor(conds []metav1.Condition) v1alpha1.Phase {
	if c := meta.FindStatusCondition(conds, v1alpha1.ConditionSucceeded); c != nil {
		switch c.Status {
		case metav1.ConditionTrue:
			return v1alpha1.PhaseSucceeded
		case metav1.ConditionFalse:
			return v1alpha1.PhaseFailed
		}
	}
	if meta.IsStatusConditionTrue(conds, v1alpha1.ConditionRunning) {
		return v1alpha1.PhaseRunning
	}
	if meta.IsStatusConditionTrue(conds, v1alpha1.ConditionAwaitingApproval) {
		return v1alpha1.PhaseAwaitingApproval
	}
	return v1alpha1.PhasePending
}

// IsFinished reports whether a request has reached its final state.
func IsFinished(rr *v1alpha1.ReplayRequest) bool {
	c := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionSucceeded)
	return c != nil && c.Status != metav1.ConditionUnknown
}

// IsStarted reports whether the launcher has created the request's Job.
func IsStarted(rr *v1alpha1.ReplayRequest) bool { return rr.Status.JobName != "" }

// Finish records a final outcome in the request's status: the Succeeded
// condition, Running false, the result, the times and the phase.
func Finish(rr *v1alpha1.ReplayRequest, o Outcome, logTail string, now time.Time) {
	st := metav1.ConditionFalse
	if o.Succeeded {
		st = metav1.ConditionTrue
	}
	SetCondition(rr, v1alpha1.ConditionSucceeded, st, o.Reason, o.Message)
	if IsStarted(rr) {
		SetCondition(rr, v1alpha1.ConditionRunning, metav1.ConditionFalse, ReasonFinished, "the runner Job has finished")
	}
	finished := o.FinishedAt
	if finished.IsZero() {
		finished = now
	}
	rr.Status.CompletionTime = &metav1.Time{Time: finished}
	if o.Result != nil {
		rr.Status.Result = APIResult(o.Result)
	}
	if logTail != "" {
		rr.Status.LogTail = tail(logTail, 4096)
	}
	rr.Status.Message = o.Message
	rr.Status.Phase = PhaseFor(rr.Status.Conditions)
	rr.Status.ObservedGeneration = rr.Generation
}

// lastLine returns the last non-empty line of s, bounded.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return truncate(strings.TrimSpace(lines[len(lines)-1]), 512)
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// tail keeps the last n bytes of s, starting on a line (or rune) boundary.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
		return s[i+1:]
	}
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return s
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func valueOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
