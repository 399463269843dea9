package record

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

// This file decides what a finished Job did over all its attempts. A Job may
// run the runner several times (backoffLimit): attempt 1 can commit some
// partitions and exit 5, attempt 2 can then fail to reach Kafka and exit 4,
// "nothing changed". Taken alone, the last attempt would say the group was
// not touched while it is half-moved. So every attempt is read, and the
// outcome is the merge: if any attempt changed offsets the outcome says so
// and lists them; if one may have without saying (killed for memory, say),
// the outcome says that instead of claiming nothing changed.
//
// Everything here is pure; record_io.go reads the pods' logs and writes the
// ReplayRecord.

// Attempt is one runner pod's run, as far as the launcher could learn it.
type Attempt struct {
	// Pod is the pod's name.
	Pod string
	// ExitCode is the runner container's exit code.
	ExitCode int32
	// TerminationReason is the kubelet's (Completed, Error, OOMKilled, ...).
	TerminationReason string
	// StartedAt and FinishedAt bound the container's run.
	StartedAt, FinishedAt time.Time
	// Result is the attempt's result: the full one from the log frame when
	// there was one, else the compact one from the termination message
	// (which may be truncated); nil when it left neither.
	Result *report.Result
	// Source says which of the two Result is.
	Source v1alpha1.ResultSource
	// DamagedFrames counts cut or altered frames in the pod's log.
	DamagedFrames int
	// Text is the last line of a termination message that held no result
	// (with FallbackToLogsOnError, the end of the log of a runner that died
	// before writing its result).
	Text string

	created time.Time
}

// LogRecord is what a pod's log said, for AttemptsOf: the last intact frame,
// how many were damaged, and the log's last lines without frames. Err is set
// when the log could not be read.
type LogRecord struct {
	Result  *report.Result
	Damaged int
	Tail    string
	Err     error
}

// AttemptsOf lists a Job's attempts, oldest first: every pod whose runner
// container has terminated. logs, keyed by pod name, holds what each pod's
// log said; a pod missing from it (or with no intact frame) falls back to its
// termination message.
func AttemptsOf(pods []corev1.Pod, logs map[string]LogRecord) []Attempt {
	var out []Attempt
	for i := range pods {
		p := &pods[i]
		t := state.RunnerTermination(p)
		if t == nil {
			continue
		}
		a := Attempt{
			Pod:               p.Name,
			ExitCode:          t.ExitCode,
			TerminationReason: t.Reason,
			StartedAt:         t.StartedAt.Time,
			FinishedAt:        t.FinishedAt.Time,
			Source:            v1alpha1.ResultSourceNone,
			created:           p.CreationTimestamp.Time,
		}
		lr := logs[p.Name]
		a.DamagedFrames = lr.Damaged
		switch r, err := report.Decode([]byte(t.Message)); {
		case lr.Result != nil:
			a.Result, a.Source = lr.Result, v1alpha1.ResultSourceLog
		case err == nil:
			a.Result, a.Source = r, v1alpha1.ResultSourceTerminationMessage
		case strings.TrimSpace(t.Message) != "":
			a.Text = state.LastLine(t.Message)
		}
		out = append(out, a)
	}
	slices.SortStableFunc(out, func(a, b Attempt) int {
		if c := a.FinishedAt.Compare(b.FinishedAt); c != 0 {
			return c
		}
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		return cmp.Compare(a.Pod, b.Pod)
	})
	return out
}

// Reason is the attempt's one-word outcome: the runner's, or OOMKilled, or
// the one its exit code stands for.
func (a *Attempt) Reason() string {
	switch {
	case a.TerminationReason == state.ReasonOOMKilled:
		// The kernel killed it mid-run; whatever it wrote is not its end.
		return state.ReasonOOMKilled
	case a.Result != nil:
		return state.ValidReason(string(a.Result.Reason), string(report.ReasonForExitCode(a.Result.ExitCode)))
	case a.ExitCode == 0:
		return state.ReasonCompleted
	default:
		return string(report.ReasonForExitCode(report.ExitCode(a.ExitCode)))
	}
}

// Changed says whether the attempt changed committed offsets, by the exit
// code contract of runner/report: only a success (not a dry run, not already
// applied), a partial application or an internal error that lists applied
// partitions change anything; the other failure codes guarantee nothing was
// changed. An attempt that left no result and did not exit with one of those
// codes, or was killed for memory, may have done anything.
func (a *Attempt) Changed() v1alpha1.OffsetsChanged {
	if a.TerminationReason == state.ReasonOOMKilled && a.Result == nil {
		return v1alpha1.OffsetsChangedUnknown
	}
	if r := a.Result; r != nil {
		switch {
		case r.DryRun || r.AlreadyApplied:
			return v1alpha1.OffsetsChangedNo
		case r.ExitCode == report.ExitOK || r.ExitCode == report.ExitPartiallyApplied || r.ExitCode == report.ExitInternal:
			if r.Totals.Applied > 0 {
				return v1alpha1.OffsetsChangedYes
			}
			if r.ExitCode == report.ExitPartiallyApplied {
				// The read-back failed: something may have moved.
				return v1alpha1.OffsetsChangedUnknown
			}
			return v1alpha1.OffsetsChangedNo
		default:
			return v1alpha1.OffsetsChangedNo
		}
	}
	switch report.ExitCode(a.ExitCode) {
	case report.ExitInvalidInput, report.ExitGroupActive, report.ExitKafkaError, report.ExitInterrupted, report.ExitSuperseded:
		return v1alpha1.OffsetsChangedNo
	}
	return v1alpha1.OffsetsChangedUnknown
}

// describe is one attempt in a sentence, for the outcome's message.
func (a *Attempt) describe(n int) string {
	s := fmt.Sprintf("attempt %d (%s) %s, exit code %d", n, a.Pod, a.Reason(), a.ExitCode)
	switch a.Changed() {
	case v1alpha1.OffsetsChangedYes:
		s += fmt.Sprintf(", committed %d of %d partitions", a.Result.Totals.Applied, a.Result.Totals.Partitions)
	case v1alpha1.OffsetsChangedUnknown:
		if a.Result == nil {
			s += ", left no result: offsets may have changed"
		} else {
			// It said so itself (OutcomeUnknown, or a read-back that
			// failed): its commit went out and its answer did not come
			// back. A run with the same run ID finds the commit or makes it.
			s += ", the commit may have applied: retry with the same run ID to settle it"
		}
	}
	if a.Result != nil && a.Result.Error != "" {
		s += ": " + state.Truncate(a.Result.Error, 200)
	} else if a.Text != "" {
		s += ": " + state.Truncate(a.Text, 200)
	}
	return s
}

// mergeChanged combines the attempts' answers: Yes wins, then Unknown. A
// retry that finds its run's commit already in place (AlreadyApplied) shows
// that an earlier attempt of the Job made it, even one that said nothing
// (killed right after committing): the Job changed offsets.
func mergeChanged(attempts []Attempt, missing int) v1alpha1.OffsetsChanged {
	out := v1alpha1.OffsetsChangedNo
	if missing > 0 {
		out = v1alpha1.OffsetsChangedUnknown
	}
	for i := range attempts {
		if r := attempts[i].Result; r != nil && r.AlreadyApplied && !r.DryRun && (i > 0 || missing > 0) {
			return v1alpha1.OffsetsChangedYes
		}
		switch attempts[i].Changed() {
		case v1alpha1.OffsetsChangedYes:
			return v1alpha1.OffsetsChangedYes
		case v1alpha1.OffsetsChangedUnknown:
			out = v1alpha1.OffsetsChangedUnknown
		}
	}
	return out
}

// claimsNothingChanged reports whether a reason means, by the runner's
// contract, that the group was not touched. Such a reason must not be the
// Job's when an earlier attempt did touch it.
func claimsNothingChanged(reason string) bool {
	// By the exit code the reason goes with (runner/report, the one list):
	// invalid input (CredentialsNotBound too), an active group, a Kafka
	// error before the commit and an interruption change nothing.
	code, ok := report.Reason(reason).ExitCode()
	return ok && code != report.ExitOK && code != report.ExitInternal && code != report.ExitPartiallyApplied
}

// missingAttempts is how many finished pods the Job counted that are no
// longer there to read (deleted, or garbage-collected).
func missingAttempts(job *batchv1.Job, attempts []Attempt) int {
	return max(0, int(job.Status.Failed+job.Status.Succeeded)-len(attempts))
}

// MergeAttempts derives a finished Job's outcome from its terminal condition
// and every attempt. Outcome.Full is the merged result over all attempts (for
// the record); Outcome.Result its compact form, bounded for status and the
// Job's annotation.
func MergeAttempts(job *batchv1.Job, attempts []Attempt) Outcome {
	_, succeeded, cond := state.JobFinished(job)
	o := Outcome{Succeeded: succeeded, Attempts: attempts}
	if cond != nil {
		o.FinishedAt = cond.LastTransitionTime.Time
	}
	if job.Status.CompletionTime != nil {
		o.FinishedAt = job.Status.CompletionTime.Time
	}
	missing := missingAttempts(job, attempts)
	o.OffsetsChanged = mergeChanged(attempts, missing)
	o.Full = mergeResults(attempts)
	o.Complete = missing == 0 && len(attempts) > 0
	for i := range attempts {
		if r := attempts[i].Result; r == nil || r.Truncated {
			o.Complete = false
		}
	}

	var last *Attempt
	if len(attempts) > 0 {
		last = &attempts[len(attempts)-1]
		o.PodName = last.Pod
		code := last.ExitCode
		o.ExitCode = &code
	}
	deadline := cond != nil && cond.Reason == batchv1.JobReasonDeadlineExceeded
	switch {
	case succeeded && last != nil && last.Result != nil:
		o.Reason = state.ValidReason(string(last.Result.Reason), state.ReasonCompleted)
		o.Message = last.Result.Summary()
	case succeeded:
		o.Reason = state.ReasonCompleted
		o.Message = "the runner succeeded but left no result in its termination message"
	case deadline:
		o.Reason = state.ReasonDeadlineExceeded
		o.Message = fmt.Sprintf("the Job ran longer than its activeDeadlineSeconds (%d)", state.ValueOr(job.Spec.ActiveDeadlineSeconds, 0))
	case last != nil:
		o.Reason = last.Reason()
		switch {
		case last.TerminationReason == state.ReasonOOMKilled:
			o.Message = "the runner was killed for using more memory than its limit; raise spec.runner.resources.limits.memory"
		case last.Result != nil && last.Result.Error != "":
			o.Message = last.Result.Error
		case last.Result != nil:
			o.Message = fmt.Sprintf("the runner failed (%s, exit code %d)", o.Reason, last.Result.ExitCode)
		default:
			o.Message = fmt.Sprintf("the runner exited with code %d", last.ExitCode)
			if last.Text != "" {
				o.Message += ": " + last.Text
			}
		}
	default:
		o.Reason = state.ReasonJobFailed
		if cond != nil && cond.Reason != "" {
			o.Message = fmt.Sprintf("the Job failed (%s): %s", cond.Reason, cond.Message)
		} else {
			o.Message = "the Job failed"
		}
	}

	if !succeeded {
		// The last attempt's word is not the Job's when an earlier one did
		// more: a reason that promises "nothing changed" gives way.
		switch {
		case o.OffsetsChanged == v1alpha1.OffsetsChangedYes && claimsNothingChanged(o.Reason):
			o.Reason = string(report.ReasonPartiallyApplied)
		case o.OffsetsChanged == v1alpha1.OffsetsChangedUnknown && claimsNothingChanged(o.Reason):
			for i := range attempts {
				if attempts[i].Changed() == v1alpha1.OffsetsChangedUnknown {
					o.Reason = attempts[i].Reason()
					break
				}
			}
			if claimsNothingChanged(o.Reason) {
				o.Reason = state.ReasonJobFailed
			}
		}
		switch {
		case len(attempts) > 1 || missing > 0:
			o.Message = attemptsMessage(o.Message, attempts, missing, o.OffsetsChanged)
		case o.OffsetsChanged == v1alpha1.OffsetsChangedUnknown:
			o.Message = changedPrefix(o.OffsetsChanged) + o.Message
		case o.OffsetsChanged == v1alpha1.OffsetsChangedYes && o.Reason != string(report.ReasonPartiallyApplied):
			// A launcher reason (DeadlineExceeded, say) says nothing of
			// the commit the attempt made: the message does.
			o.Message = attemptsMessage(o.Message, attempts, missing, o.OffsetsChanged)
		}
	}
	if o.Full != nil {
		o.Full.Reason = report.Reason(o.Reason)
		if !succeeded {
			o.Full.Error = o.Message
			if o.Reason == string(report.ReasonPartiallyApplied) {
				o.Full.ExitCode = report.ExitPartiallyApplied
			}
		}
		o.Result = compactResult(o.Full)
	}
	o.Message = state.Truncate(o.Message, 1024)
	return o
}

// attemptsMessage puts the summary first (what changed), then each attempt.
func attemptsMessage(final string, attempts []Attempt, missing int, changed v1alpha1.OffsetsChanged) string {
	var b strings.Builder
	b.WriteString(changedPrefix(changed))
	b.WriteString(final)
	for i := range attempts {
		b.WriteString("; ")
		b.WriteString(attempts[i].describe(i + 1))
	}
	if missing > 0 {
		fmt.Fprintf(&b, "; %d more attempt(s) whose pods are gone", missing)
	}
	return b.String()
}

func changedPrefix(changed v1alpha1.OffsetsChanged) string {
	switch changed {
	case v1alpha1.OffsetsChangedYes:
		return "offsets were changed: "
	case v1alpha1.OffsetsChangedUnknown:
		return "offsets may have changed; check the group before retrying: "
	}
	return ""
}

// compactResult bounds a result the way the termination message is bounded:
// totals always, failed partitions first, then as many others as fit.
func compactResult(r *report.Result) *report.Result {
	b, err := report.Compact(r, report.MaxTerminationMessageBytes)
	if err != nil {
		c := *r
		c.Partitions, c.Truncated = nil, true
		return &c
	}
	c, err := report.Decode(b)
	if err != nil {
		return nil
	}
	return c
}

type partitionKey struct {
	topic     string
	partition int32
}

// mergeResults merges the attempts' results into one: the metadata of the
// last result, and every partition any attempt listed. A partition's
// previous offset is the earliest attempt's (before anything moved); it is
// applied when any attempt applied it and no later attempt found it failed;
// its new offset and error are those of the attempt that applied it, or else
// of the latest attempt that listed it. Nil when no attempt left a result.
//
// A dry run's attempts are not merged: none committed anything, so its
// plan is what its last attempt planned, from the offsets of then (an
// earlier attempt's previous offsets, or a partition only it saw, would
// make a plan no runner made, and that is what an approval applies).
func mergeResults(attempts []Attempt) *report.Result {
	var results []*report.Result
	for i := range attempts {
		if attempts[i].Result != nil {
			results = append(results, attempts[i].Result)
		}
	}
	if len(results) == 0 {
		return nil
	}
	last := results[len(results)-1]
	out := *last
	out.Truncated = false
	out.Warnings = nil
	merged := map[partitionKey]*report.Partition{}
	var keys []partitionKey
	seenWarning := map[string]bool{}
	if last.DryRun {
		results = results[len(results)-1:]
	}
	var deleted []string
	for _, r := range results {
		out.Truncated = out.Truncated || r.Truncated
		if r.InternalTopics != nil {
			// An attempt deletes its topics only after its commit; a
			// retry that found the commit in place deletes none: what
			// the Job deleted is every attempt's.
			for _, t := range r.InternalTopics.Deleted {
				if !slices.Contains(deleted, t) {
					deleted = append(deleted, t)
				}
			}
		}
		for _, w := range r.Warnings {
			if !seenWarning[w] {
				seenWarning[w] = true
				out.Warnings = append(out.Warnings, w)
			}
		}
		for _, p := range r.Partitions {
			k := partitionKey{p.Topic, p.Partition}
			m, ok := merged[k]
			if !ok {
				c := p
				c.PreviousOffset = state.CopyPtr(p.PreviousOffset)
				merged[k], keys = &c, append(keys, k)
				continue
			}
			if p.Applied || !m.Applied || p.Error != "" {
				prev := m.PreviousOffset
				*m = p
				m.PreviousOffset = prev
			}
			if m.PreviousOffset != nil {
				d := *m.PreviousOffset - m.NewOffset
				m.Delta = &d
			} else {
				m.Delta = nil
			}
		}
	}
	if out.InternalTopics != nil {
		it := *out.InternalTopics
		it.Deleted = deleted
		out.InternalTopics = &it
	}
	slices.SortFunc(keys, func(a, b partitionKey) int {
		if c := cmp.Compare(a.topic, b.topic); c != 0 {
			return c
		}
		return cmp.Compare(a.partition, b.partition)
	})
	out.Partitions = make([]report.Partition, 0, len(keys))
	for _, k := range keys {
		out.Partitions = append(out.Partitions, *merged[k])
	}
	if !out.Truncated {
		out.Summarize()
	}
	// Otherwise some partitions are missing, and totals computed from the
	// rest would be wrong: the last result's own totals (never truncated)
	// stand, exact for the attempt that decides the outcome.
	return &out
}

// JobOutcome derives the outcome of a finished Job from its terminal
// condition and all its pods' termination messages (see MergeAttempts). The
// runner writes its compact result there; with FallbackToLogsOnError a runner
// that died before writing it leaves its last log lines instead, which end up
// in the message. Collector.Collect gives the same outcome from the
// pods' full results in their logs, and keeps the record.
func JobOutcome(job *batchv1.Job, pods []corev1.Pod) Outcome {
	return MergeAttempts(job, AttemptsOf(pods, nil))
}
