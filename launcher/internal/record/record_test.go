package record

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// attemptResult is a runner result over partitions orders/0..n-1, each
// moved from 1000 back by 10; applied says which ones this attempt's
// read-back found committed, failed which ones carry an error.
func attemptResult(code report.ExitCode, n int, applied, failed []int32) *report.Result {
	r := testutil.Result("orders", code)
	for i := range n {
		prev, next := int64(1000+i), int64(990+i)
		d := prev - next
		p := report.Partition{Topic: "orders", Partition: int32(i), PreviousOffset: &prev, NewOffset: next, Delta: &d, LogEndOffset: 2000}
		for _, a := range applied {
			p.Applied = p.Applied || a == int32(i)
		}
		for _, f := range failed {
			if f == int32(i) {
				p.Error = "NOT_COORDINATOR"
			}
		}
		r.Partitions = append(r.Partitions, p)
	}
	r.Summarize()
	return r
}

func oomKilled(job *batchv1.Job, name string, at time.Time) corev1.Pod {
	p := podWith(job, name, 137, "", at)
	p.Status.ContainerStatuses[0].State.Terminated.Reason = state.ReasonOOMKilled
	return p
}

// Every attempt counts: the outcome says whether any attempt changed
// offsets, and lists what they changed.
func TestUnitMergeAttempts(t *testing.T) {
	all := []int32{0, 1, 2}
	partial := attemptResult(report.ExitPartiallyApplied, 3, []int32{0, 1}, []int32{2})
	kafkaDown := testutil.Result("orders", report.ExitKafkaError) // failed before reading anything
	planNotCommitted := attemptResult(report.ExitKafkaError, 3, []int32{0, 1}, nil)
	rest := attemptResult(report.ExitOK, 3, all, nil)
	// A retry reads the offsets attempt 1 committed; were its previous
	// offsets taken as the record's, undo would restore the wrong ones.
	for i := range rest.Partitions[:2] {
		p := &rest.Partitions[i]
		*p.PreviousOffset = p.NewOffset
		*p.Delta = 0
	}
	// A retry finding the first attempt's commit reports its offsets.
	again := attemptResult(report.ExitOK, 3, all, nil)
	again.AlreadyApplied, again.Reason = true, report.ReasonAlreadyApplied
	dry := attemptResult(report.ExitOK, 3, nil, nil)
	dry.DryRun, dry.Reason = true, report.ReasonDryRun
	dry.Summarize()

	type pod struct {
		name string
		code int32
		res  *report.Result
		oom  bool
	}
	cases := []struct {
		name       string
		succeeded  bool
		jobReason  string
		jobFailed  int32 // the Job controller's count of failed pods, when more than the pods given
		pods       []pod
		wantReason string
		wantMsg    []string
		changed    v1alpha1.OffsetsChanged
		// applied lists the merged result's applied partitions; nil for no merged result.
		applied  []int32
		previous []int64 // merged previous offsets of orders/0..
	}{
		{"one attempt applied", true, "", 0, []pod{{"p1", 0, rest, false}},
			"Applied", []string{"3 partitions moved"}, v1alpha1.OffsetsChangedYes, all, []int64{990, 991, 1002}},
		{"partial, then Kafka unreachable: not KafkaError", false, batchv1.JobReasonBackoffLimitExceeded, 0,
			[]pod{{"p1", 5, partial, false}, {"p2", 4, kafkaDown, false}},
			"PartiallyApplied", []string{"offsets were changed", "attempt 1 (p1) PartiallyApplied", "committed 2 of 3", "attempt 2 (p2) KafkaError"},
			v1alpha1.OffsetsChangedYes, []int32{0, 1}, []int64{1000, 1001, 1002}},
		{"partial, then a plan that failed to commit", false, batchv1.JobReasonBackoffLimitExceeded, 0,
			[]pod{{"p1", 5, partial, false}, {"p2", 4, planNotCommitted, false}},
			"PartiallyApplied", []string{"offsets were changed", "attempt 2 (p2) KafkaError"},
			v1alpha1.OffsetsChangedYes, []int32{0, 1}, []int64{1000, 1001, 1002}},
		{"partial, then the rest applied", true, "", 0,
			[]pod{{"p1", 5, partial, false}, {"p2", 0, rest, false}},
			"Applied", []string{"3 partitions moved"}, v1alpha1.OffsetsChangedYes, all, []int64{1000, 1001, 1002}},
		{"killed for memory", false, batchv1.JobReasonBackoffLimitExceeded, 0,
			[]pod{{"p1", 137, nil, true}}, state.ReasonOOMKilled, []string{"offsets may have changed", "more memory than its limit"}, v1alpha1.OffsetsChangedUnknown, nil, nil},
		{"killed for memory, then Kafka unreachable: not KafkaError", false, batchv1.JobReasonBackoffLimitExceeded, 0,
			[]pod{{"p1", 137, nil, true}, {"p2", 4, kafkaDown, false}}, state.ReasonOOMKilled, []string{"offsets may have changed", "attempt 1 (p1) OOMKilled", "left no result"}, v1alpha1.OffsetsChangedUnknown, []int32{}, nil},
		{"killed for memory after committing, then found applied", true, "", 0,
			[]pod{{"p1", 137, nil, true}, {"p2", 0, again, false}},
			"AlreadyApplied", []string{"already applied"}, v1alpha1.OffsetsChangedYes, all, []int64{1000, 1001, 1002}},
		{"Kafka unreachable twice", false, batchv1.JobReasonBackoffLimitExceeded, 0,
			[]pod{{"p1", 4, kafkaDown, false}, {"p2", 4, kafkaDown, false}},
			"KafkaError", []string{"attempt 1 (p1) KafkaError", "attempt 2 (p2) KafkaError"}, v1alpha1.OffsetsChangedNo, []int32{}, nil},
		{"an attempt whose pod is gone", false, batchv1.JobReasonBackoffLimitExceeded, 2,
			[]pod{{"p2", 4, kafkaDown, false}}, state.ReasonJobFailed, []string{"offsets may have changed", "1 more attempt(s) whose pods are gone"}, v1alpha1.OffsetsChangedUnknown, []int32{}, nil},
		{"group active", false, batchv1.JobReasonPodFailurePolicy, 0,
			[]pod{{"p1", 3, testutil.Result("orders", report.ExitGroupActive), false}},
			"GroupActive", nil, v1alpha1.OffsetsChangedNo, []int32{}, nil},
		{"dry run", true, "", 0, []pod{{"p1", 0, dry, false}},
			"DryRun", []string{"3 partitions planned"}, v1alpha1.OffsetsChangedNo, []int32{}, []int64{1000, 1001, 1002}},
		{"deadline after one partial attempt", false, batchv1.JobReasonDeadlineExceeded, 0,
			[]pod{{"p1", 5, partial, false}}, state.ReasonDeadlineExceeded, []string{"offsets were changed", "activeDeadlineSeconds", "committed 2 of 3"}, v1alpha1.OffsetsChangedYes, []int32{0, 1}, []int64{1000, 1001, 1002}},
		{"deadline after a partial attempt", false, batchv1.JobReasonDeadlineExceeded, 0,
			[]pod{{"p1", 5, partial, false}, {"p2", 137, nil, false}}, state.ReasonDeadlineExceeded, []string{"offsets were changed", "activeDeadlineSeconds", "committed 2 of 3"}, v1alpha1.OffsetsChangedYes, []int32{0, 1}, []int64{1000, 1001, 1002}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := finishedJob(t, tc.succeeded, tc.jobReason)
			job.Status.Failed = max(job.Status.Failed, tc.jobFailed)
			var pods []corev1.Pod
			// Listed newest first: order comes from the termination times.
			for i := len(tc.pods) - 1; i >= 0; i-- {
				p, at := tc.pods[i], t0.Add(time.Duration(i-len(tc.pods))*time.Minute)
				msg := ""
				if p.res != nil {
					msg = testutil.Compact(p.res)
				}
				if p.oom {
					pods = append(pods, oomKilled(job, p.name, at))
				} else {
					pods = append(pods, podWith(job, p.name, p.code, msg, at))
				}
			}
			o := JobOutcome(job, pods)
			if o.Succeeded != tc.succeeded || o.Reason != tc.wantReason || o.OffsetsChanged != tc.changed {
				t.Fatalf("outcome = %v %s changed=%s (%s); want %v %s changed=%s", o.Succeeded, o.Reason, o.OffsetsChanged, o.Message, tc.succeeded, tc.wantReason, tc.changed)
			}
			for _, m := range tc.wantMsg {
				if !strings.Contains(o.Message, m) {
					t.Errorf("message %q does not say %q", o.Message, m)
				}
			}
			if len(o.Attempts) != len(tc.pods) || o.Attempts[len(o.Attempts)-1].Pod != tc.pods[len(tc.pods)-1].name || o.PodName != tc.pods[len(tc.pods)-1].name {
				t.Fatalf("attempts %+v, pod %s", o.Attempts, o.PodName)
			}
			if tc.applied == nil {
				if o.Full != nil {
					t.Fatalf("a merged result from no result: %+v", o.Full)
				}
				return
			}
			if o.Full == nil || o.Result == nil {
				t.Fatal("no merged result")
			}
			if o.Full.Reason != report.Reason(o.Reason) || o.Result.Reason != report.Reason(o.Reason) {
				t.Errorf("merged result's reason %s, outcome's %s", o.Full.Reason, o.Reason)
			}
			var applied []int32
			for _, p := range o.Full.Partitions {
				if p.Applied {
					applied = append(applied, p.Partition)
				}
			}
			if len(applied) != len(tc.applied) || (len(applied) > 0 && !equalInts(applied, tc.applied)) {
				t.Errorf("applied partitions %v, want %v", applied, tc.applied)
			}
			if o.Full.Totals.Applied != len(tc.applied) {
				t.Errorf("totals.applied %d, want %d", o.Full.Totals.Applied, len(tc.applied))
			}
			for i, want := range tc.previous {
				p := o.Full.Partitions[i]
				if p.PreviousOffset == nil || *p.PreviousOffset != want || p.Delta == nil || *p.Delta != want-p.NewOffset {
					t.Errorf("orders/%d previous %v delta %v, want previous %d", i, p.PreviousOffset, p.Delta, want)
				}
			}
		})
	}
}

func equalInts[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The log frame is the full result; the termination message only a compact
// copy. A pod with both is recorded from the frame, and the record is
// complete only when every attempt's result was whole.
func TestUnitAttemptsPreferTheLogFrame(t *testing.T) {
	job := finishedJob(t, true, "")
	full := attemptResult(report.ExitOK, 500, nil, nil)
	for i := range full.Partitions {
		full.Partitions[i].Applied = true
	}
	full.Summarize()
	pods := []corev1.Pod{podWith(job, "p1", 0, testutil.Compact(full), t0)}

	withoutLog := JobOutcome(job, pods)
	if withoutLog.Complete || withoutLog.Attempts[0].Source != v1alpha1.ResultSourceTerminationMessage || len(withoutLog.Full.Partitions) >= 500 {
		t.Fatalf("from the termination message: complete=%v source=%s partitions=%d", withoutLog.Complete, withoutLog.Attempts[0].Source, len(withoutLog.Full.Partitions))
	}
	// Truncated partitions never shrink the totals.
	if withoutLog.Full.Totals != full.Totals || withoutLog.Result.Totals != full.Totals {
		t.Fatalf("totals from a truncated result: %+v / %+v, want %+v", withoutLog.Full.Totals, withoutLog.Result.Totals, full.Totals)
	}

	o := MergeAttempts(job, AttemptsOf(pods, map[string]LogRecord{"p1": {Result: full, Damaged: 1}}))
	if !o.Complete || o.Attempts[0].Source != v1alpha1.ResultSourceLog || o.Attempts[0].DamagedFrames != 1 || len(o.Full.Partitions) != 500 {
		t.Fatalf("from the log: complete=%v source=%s damaged=%d partitions=%d", o.Complete, o.Attempts[0].Source, o.Attempts[0].DamagedFrames, len(o.Full.Partitions))
	}
	// Status gets the bounded form, never all 500.
	if !o.Result.Truncated || len(o.Result.Partitions) >= 500 || o.Result.Totals.Partitions != 500 {
		t.Fatalf("status result: truncated=%v partitions=%d totals=%d", o.Result.Truncated, len(o.Result.Partitions), o.Result.Totals.Partitions)
	}
}

// A planning Job retried: its plan is what its last attempt planned, from
// the committed offsets of then. An earlier attempt committed nothing, so
// neither its previous offsets nor its partitions belong in the plan the
// approver is shown and the apply Job is given: merged, a shift of -10
// planned from 1000 and again, after the consumers moved, from 1100 read
// as a move of -110 from 1000, a plan no runner made; a partition only the
// first attempt saw would be applied too.
func TestUnitMergeAttemptsOfARetriedPlan(t *testing.T) {
	first := attemptResult(report.ExitKafkaError, 4, nil, []int32{3})
	first.DryRun, first.Reason = true, report.ReasonKafkaError
	last := attemptResult(report.ExitOK, 3, nil, nil)
	last.DryRun, last.Reason = true, report.ReasonDryRun
	for i := range last.Partitions {
		p := &last.Partitions[i]
		*p.PreviousOffset += 100
		p.NewOffset += 100
	}
	last.Summarize()
	job := finishedJob(t, true, "")
	pods := []corev1.Pod{
		podWith(job, "p2", 0, testutil.Compact(last), t0),
		podWith(job, "p1", int32(report.ExitKafkaError), testutil.Compact(first), t0.Add(-time.Minute)),
	}
	o := JobOutcome(job, pods)
	if o.Full == nil || o.Reason != string(report.ReasonDryRun) {
		t.Fatalf("outcome %s (%s), merged %v", o.Reason, o.Message, o.Full)
	}
	if got, want := report.PlanDigest(o.Full.Group, o.Full.Target.Resolved, o.Full.Partitions), report.PlanDigest(last.Group, last.Target.Resolved, last.Partitions); got != want {
		t.Errorf("the merged plan is %s, not the last attempt's %s: %+v", got, want, o.Full.Partitions)
	}
	if len(o.Full.Partitions) != len(last.Partitions) {
		t.Fatalf("merged plan has %d partitions, the last attempt planned %d", len(o.Full.Partitions), len(last.Partitions))
	}
	for i, p := range o.Full.Partitions {
		want := last.Partitions[i]
		if p.PreviousOffset == nil || *p.PreviousOffset != *want.PreviousOffset || p.NewOffset != want.NewOffset || p.Delta == nil || *p.Delta != *want.Delta {
			t.Errorf("orders/%d previous %v new %d delta %v, want the last attempt's %d -> %d", p.Partition, p.PreviousOffset, p.NewOffset, p.Delta, *want.PreviousOffset, want.NewOffset)
		}
	}
	if o.Full.Totals.MessagesToReconsume != last.Totals.MessagesToReconsume {
		t.Errorf("totals %+v, the last attempt's %+v", o.Full.Totals, last.Totals)
	}
}

// An attempt's sentence says what it knows: one that left no result may
// have done anything; one whose result says the commit's outcome is unknown
// (exit 5, nothing confirmed) may have applied, and a retry with the same
// run ID settles it.
func TestUnitAttemptDescribe(t *testing.T) {
	unknown := attemptResult(report.ExitPartiallyApplied, 3, nil, nil)
	unknown.Reason = report.ReasonOutcomeUnknown
	partial := attemptResult(report.ExitPartiallyApplied, 3, []int32{0, 1}, []int32{2})
	cases := []struct {
		name      string
		a         Attempt
		want, not []string
	}{
		{"outcome unknown", Attempt{Pod: "p1", ExitCode: 5, Result: unknown},
			[]string{"attempt 1 (p1) OutcomeUnknown", "the commit may have applied", "retry with the same run ID"}, []string{"left no result"}},
		{"no result", Attempt{Pod: "p1", ExitCode: 139},
			[]string{"left no result: offsets may have changed"}, []string{"retry with the same run ID"}},
		{"killed for memory", Attempt{Pod: "p1", ExitCode: 137, TerminationReason: state.ReasonOOMKilled},
			[]string{"OOMKilled", "left no result"}, nil},
		{"partly applied", Attempt{Pod: "p1", ExitCode: 5, Result: partial},
			[]string{"committed 2 of 3 partitions"}, []string{"left no result", "may have applied"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.a.describe(1)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q does not say %q", got, w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("%q says %q", got, n)
				}
			}
		})
	}
}

// A Job whose first attempt deleted a streams group's internal topics
// and whose retry found its commit in place (deleting nothing) deleted
// them: the record and status say so; the planned list is the last
// attempt's.
func TestUnitMergeAttemptsInternalTopicsDeleted(t *testing.T) {
	planned := []string{"app-a-changelog", "app-b-repartition"}
	first := attemptResult(report.ExitOK, 3, nil, nil)
	first.InternalTopics = &report.InternalTopics{Planned: planned, Deleted: planned[:1]}
	retry := attemptResult(report.ExitOK, 3, nil, nil)
	retry.Reason, retry.AlreadyApplied = report.ReasonAlreadyApplied, true
	retry.InternalTopics = &report.InternalTopics{Planned: planned}
	job := finishedJob(t, true, "")
	pods := []corev1.Pod{
		podWith(job, "p2", 0, testutil.Compact(retry), t0),
		podWith(job, "p1", 0, testutil.Compact(first), t0.Add(-time.Minute)),
	}
	o := JobOutcome(job, pods)
	if o.Full == nil || o.Full.InternalTopics == nil || !slices.Equal(o.Full.InternalTopics.Deleted, planned[:1]) || !slices.Equal(o.Full.InternalTopics.Planned, planned) {
		t.Fatalf("merged internal topics %+v, want %q planned and %q deleted", o.Full, planned, planned[:1])
	}
	if retry.InternalTopics.Deleted != nil {
		t.Errorf("the merge changed the attempt's own result: %+v", retry.InternalTopics)
	}
	rec := BuildRecord(job, o)
	if rec.InternalTopics == nil || !slices.Equal(rec.InternalTopics.Deleted, planned[:1]) {
		t.Errorf("record's internal topics %+v", rec.InternalTopics)
	}
	if st := APIResult(o.Full); st.InternalTopics == nil || !slices.Equal(st.InternalTopics.Deleted, planned[:1]) {
		t.Errorf("status's internal topics %+v", st.InternalTopics)
	}
}
