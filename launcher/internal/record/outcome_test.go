package record

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

func finishedJob(t *testing.T, succeeded bool, reason string) *batchv1.Job {
	t.Helper()
	job := runnerJob()
	job.UID = "job-uid"
	if succeeded {
		testutil.Complete(job, t0)
	} else {
		testutil.Fail(job, reason, t0)
	}
	return job
}

func podWith(job *batchv1.Job, name string, code int32, msg string, at time.Time) corev1.Pod {
	p := testutil.PodFor(job, name)
	testutil.Terminated(p, code, msg, at)
	return *p
}

func TestUnitJobOutcome(t *testing.T) {
	applied := testutil.Result("orders", report.ExitOK, 10, 5)
	dry := testutil.Result("orders", report.ExitOK, 3)
	dry.DryRun, dry.Reason = true, report.ReasonDryRun
	again := testutil.Result("orders", report.ExitOK, 3)
	again.AlreadyApplied, again.Reason = true, report.ReasonAlreadyApplied

	type statusCase struct {
		name       string
		succeeded  bool
		jobReason  string
		pods       func(job *batchv1.Job) []corev1.Pod
		wantOK     bool
		wantReason string
		wantMsg    string
		wantResult bool
	}
	cases := []statusCase{
		{"applied", true, "", func(j *batchv1.Job) []corev1.Pod {
			return []corev1.Pod{podWith(j, "p1", 0, testutil.Compact(applied), t0)}
		}, true, "Applied", "2 partitions moved, 15 messages", true},
		{"dry run", true, "", func(j *batchv1.Job) []corev1.Pod {
			return []corev1.Pod{podWith(j, "p1", 0, testutil.Compact(dry), t0)}
		}, true, "DryRun", "dry run: 1 partitions planned", true},
		{"already applied", true, "", func(j *batchv1.Job) []corev1.Pod {
			return []corev1.Pod{podWith(j, "p1", 0, testutil.Compact(again), t0)}
		}, true, "AlreadyApplied", "already applied", true},
		{"completed without a result", true, "", func(j *batchv1.Job) []corev1.Pod {
			return []corev1.Pod{podWith(j, "p1", 0, "", t0)}
		}, true, state.ReasonCompleted, "no result", false},
	}
	for _, code := range []report.ExitCode{report.ExitInternal, report.ExitInvalidInput, report.ExitGroupActive, report.ExitKafkaError, report.ExitPartiallyApplied, report.ExitInterrupted} {
		r := testutil.Result("orders", code, 1)
		cases = append(cases, statusCase{"runner " + string(report.ReasonForExitCode(code)), false, batchv1.JobReasonPodFailurePolicy, func(j *batchv1.Job) []corev1.Pod {
			return []corev1.Pod{podWith(j, "p1", int32(code), testutil.Compact(r), t0)}
		}, false, string(report.ReasonForExitCode(code)), "runner failed", true})
	}
	cases = append(cases, []statusCase{
		{"crash without a result: logs fallback", false, batchv1.JobReasonBackoffLimitExceeded, func(j *batchv1.Job) []corev1.Pod {
			return []corev1.Pod{podWith(j, "p1", 4, "connecting...\nbroker down: all brokers unreachable\n", t0)}
		}, false, "KafkaError", "exited with code 4: broker down", false},
		{"last attempt wins", false, batchv1.JobReasonBackoffLimitExceeded, func(j *batchv1.Job) []corev1.Pod {
			return []corev1.Pod{
				podWith(j, "p2", 5, testutil.Compact(testutil.Result("orders", report.ExitPartiallyApplied, 1)), t0),
				podWith(j, "p1", 4, testutil.Compact(testutil.Result("orders", report.ExitKafkaError, 1)), t0.Add(-time.Minute)),
			}
		}, false, "PartiallyApplied", "", true},
		{"deadline exceeded", false, batchv1.JobReasonDeadlineExceeded, func(j *batchv1.Job) []corev1.Pod {
			return []corev1.Pod{podWith(j, "p1", 137, "", t0)}
		}, false, state.ReasonDeadlineExceeded, "activeDeadlineSeconds (600)", false},
		{"killed for memory", false, batchv1.JobReasonBackoffLimitExceeded, func(j *batchv1.Job) []corev1.Pod {
			return []corev1.Pod{oomKilled(j, "p1", t0)}
		}, false, state.ReasonOOMKilled, "more memory than its limit", false},
		{"unknown exit code", false, batchv1.JobReasonBackoffLimitExceeded, func(j *batchv1.Job) []corev1.Pod {
			return []corev1.Pod{podWith(j, "p1", 139, "segfault", t0)}
		}, false, "InternalError", "code 139", false},
		{"no pod left", false, batchv1.JobReasonBackoffLimitExceeded, func(j *batchv1.Job) []corev1.Pod { return nil },
			false, state.ReasonJobFailed, "BackoffLimitExceeded", false},
	}...)

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := finishedJob(t, tc.succeeded, tc.jobReason)
			o := JobOutcome(job, tc.pods(job))
			if o.Succeeded != tc.wantOK || o.Reason != tc.wantReason || !strings.Contains(o.Message, tc.wantMsg) || (o.Result != nil) != tc.wantResult {
				t.Fatalf("outcome = %+v, want ok=%v reason=%s message~%q result=%v", o, tc.wantOK, tc.wantReason, tc.wantMsg, tc.wantResult)
			}
			if !o.FinishedAt.Equal(t0) {
				t.Fatalf("finishedAt = %v", o.FinishedAt)
			}
		})
	}
}

func TestUnitOutcomeReasonIsAlwaysAValidConditionReason(t *testing.T) {
	odd := testutil.Result("orders", report.ExitKafkaError, 1)
	odd.Reason, odd.Error = "not a reason!", ""
	job := finishedJob(t, false, batchv1.JobReasonBackoffLimitExceeded)
	o := JobOutcome(job, []corev1.Pod{podWith(job, "p1", 4, testutil.Compact(odd), t0)})
	if o.Reason != "KafkaError" || !strings.Contains(o.Message, "exit code 4") {
		t.Fatalf("outcome = %+v", o)
	}
	ok := testutil.Result("orders", report.ExitOK, 1)
	ok.Reason = ""
	job = finishedJob(t, true, "")
	if o := JobOutcome(job, []corev1.Pod{podWith(job, "p1", 0, testutil.Compact(ok), t0)}); o.Reason != state.ReasonCompleted {
		t.Fatalf("outcome = %+v", o)
	}
}

func TestUnitFinishSetsConditionsAndPhase(t *testing.T) {
	rr := testutil.MakeRequest("ns", "a").Obj()
	rr.Generation = 1
	if state.PhaseFor(rr.Status.Conditions) != v1alpha1.PhasePending {
		t.Fatal("new request not Pending")
	}
	rr.Status.JobName = "a-123"
	state.SetCondition(rr, v1alpha1.ConditionRunning, metav1.ConditionTrue, state.ReasonJobCreated, "")
	if state.PhaseFor(rr.Status.Conditions) != v1alpha1.PhaseRunning {
		t.Fatal("not Running")
	}
	res := testutil.Result("orders", report.ExitOK, 10, -2)
	Finish(rr, Outcome{Succeeded: true, Reason: "Applied", Message: "ok", Result: res, FinishedAt: t0}, strings.Repeat("x", 5000)+"\nlast line", t0.Add(time.Hour))
	if rr.Status.Phase != v1alpha1.PhaseSucceeded || !meta.IsStatusConditionTrue(rr.Status.Conditions, v1alpha1.ConditionSucceeded) ||
		meta.IsStatusConditionTrue(rr.Status.Conditions, v1alpha1.ConditionRunning) {
		t.Fatalf("status = %+v", rr.Status)
	}
	if !rr.Status.CompletionTime.Time.Equal(t0) || rr.Status.ObservedGeneration != 1 {
		t.Fatalf("completion %v generation %d", rr.Status.CompletionTime, rr.Status.ObservedGeneration)
	}
	r := rr.Status.Result
	if r.Totals.MessagesToReconsume != 10 || r.Totals.MessagesSkipped != 2 || len(r.Partitions) != 2 || *r.Partitions[1].Delta != -2 || *r.Partitions[0].PreviousOffset != 1000 {
		t.Fatalf("result = %+v", r)
	}
	if len(rr.Status.LogTail) > 4096 || rr.Status.LogTail != "last line" {
		t.Fatalf("log tail = %q", rr.Status.LogTail)
	}
	if !state.IsFinished(rr) {
		t.Fatal("not finished")
	}

	failed := testutil.MakeRequest("ns", "b").Obj()
	Finish(failed, Outcome{Reason: "GroupActive", Message: "2 members"}, "", t0)
	c := meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionSucceeded)
	if failed.Status.Phase != v1alpha1.PhaseFailed || c.Status != metav1.ConditionFalse || c.Reason != "GroupActive" {
		t.Fatalf("failed status = %+v", failed.Status)
	}
	if meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionRunning) != nil {
		t.Fatal("Running set on a request that never ran")
	}

	// A Manual request's plan in status.result is no outcome: a request
	// that ends without applying it (rejected) no longer shows its counts
	// where kubectl get rr reads RECONSUMED (issue 32, friction 5).
	plan := testutil.Result("orders", report.ExitOK, 40)
	plan.DryRun, plan.Reason = true, report.ReasonDryRun
	plan.Summarize()
	rejected := testutil.MakeRequest("ns", "c").Obj()
	rejected.Status.Result = APIResult(plan)
	Finish(rejected, Outcome{Reason: "Rejected", Message: "plan rejected; nothing was applied"}, "", t0)
	if rejected.Status.Result != nil {
		t.Errorf("a rejected plan's result stays in status.result: %+v", rejected.Status.Result.Totals)
	}
	// A dry-run request's own result is its outcome, and stays.
	dry := testutil.MakeRequest("ns", "d").Obj()
	dry.Spec.DryRun = true
	dry.Status.Result = APIResult(plan)
	Finish(dry, Outcome{Reason: "PodNotStarted", Message: "no pod"}, "", t0)
	if dry.Status.Result == nil {
		t.Error("a dry-run request lost its result")
	}
}

// One partition's status form carries every field of the runner's, and
// shares no pointer with it.
func TestUnitAPIPartition(t *testing.T) {
	prev, delta := int64(1000), int64(-5)
	p := report.Partition{Topic: "orders", Partition: 3, PreviousOffset: &prev, NewOffset: 1005, Delta: &delta, LogEndOffset: 2000,
		Clamped: true, Note: "clamped to the log end", Error: "stale", LeftAlone: "consumed since", Applied: true}
	got := APIPartition(p)
	want := v1alpha1.PartitionResult{Topic: "orders", Partition: 3, PreviousOffset: &prev, NewOffset: 1005, Delta: &delta,
		Clamped: true, Note: "clamped to the log end", Error: "stale", LeftAlone: "consumed since"}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Fatalf("APIPartition = %+v, want %+v", got, want)
	}
	if got.PreviousOffset == p.PreviousOffset || got.Delta == p.Delta {
		t.Fatal("the status form shares the result's pointers")
	}
	if r := APIResult(&report.Result{Partitions: []report.Partition{p}}); len(r.Partitions) != 1 || !equality.Semantic.DeepEqual(r.Partitions[0], want) {
		t.Fatalf("APIResult partitions %+v", r.Partitions)
	}
}

// TestAPITotalsCarryEveryCount: every count of the runner's totals reaches
// status.result.totals under its own name (moved included: "nothing
// moved" is a 0 there, not an absent field), each with a value of its own
// so that a swapped pair fails.
func TestAPITotalsCarryEveryCount(t *testing.T) {
	in := report.Totals{}
	rv := reflect.ValueOf(&in).Elem()
	for i := range rv.NumField() {
		if f := rv.Field(i); f.CanInt() {
			f.SetInt(int64(i + 1))
		}
	}
	out := reflect.ValueOf(APITotals(in))
	for i := range rv.NumField() {
		f := rv.Type().Field(i)
		if !rv.Field(i).CanInt() {
			continue // Planned: the API says it with the plan's own field
		}
		got := out.FieldByName(f.Name)
		if !got.IsValid() || got.Int() != rv.Field(i).Int() {
			t.Errorf("report.Totals.%s = %d reaches the API as %v", f.Name, rv.Field(i).Int(), got)
		}
	}
	b, err := json.Marshal(APITotals(report.Totals{Partitions: 3, Applied: 3}))
	if err != nil || !strings.Contains(string(b), `"moved":0`) {
		t.Errorf("a result where nothing moved: %s, %v; want moved: 0 written", b, err)
	}
}
