package launcher

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// The Job and its pods reach the launcher's cache through two watches with
// no order between them: the Job's finish may come before its last
// attempt's pod. Here the cache (Client) has not seen the second attempt
// yet while the API server (APIReader) has: the outcome is the second
// attempt's, PartiallyApplied, not the first's KafkaError ("nothing
// changed") nor an attempt counted as gone. TestEnvtestFailureReasons
// /retried-then-failed met this under load.
func TestUnitPhasesFinishedJobAheadOfItsPods(t *testing.T) {
	rr := testutil.MakeRequest("shop", "retried").UID("rr-uid").Created(t0).ShiftBy(-10).Obj()
	f := newFakeAPI(t, fakeOptions(), rr)
	ctx := context.Background()
	f.reconcile(rr)
	cur := f.request(rr)
	job := f.job(cur.Namespace, cur.Status.JobName)

	f.clock.Step(10 * time.Second)
	if err := testutil.Attempt(ctx, f.c, f.logs, job, job.Name+"-0", int32(report.ExitKafkaError), testutil.Result(cur.Spec.Group, report.ExitKafkaError, 1), f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(10 * time.Second)
	late := job.Name + "-1"
	if err := testutil.Attempt(ctx, f.c, f.logs, job, late, int32(report.ExitPartiallyApplied), testutil.Result(cur.Spec.Group, report.ExitPartiallyApplied, 1), f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	done := f.job(job.Namespace, job.Name)
	testutil.Fail(done, batchv1.JobReasonBackoffLimitExceeded, f.clock.Now())
	done.Status.Failed = 2 // the Job controller counted both attempts
	if err := f.c.Status().Update(ctx, done); err != nil {
		t.Fatal(err)
	}

	// The cache has the finished Job and the first attempt only.
	f.r.Client = interceptor.NewClient(f.c, interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		if err := c.List(ctx, list, opts...); err != nil {
			return err
		}
		if pods, ok := list.(*corev1.PodList); ok {
			kept := pods.Items[:0]
			for _, p := range pods.Items {
				if p.Name != late {
					kept = append(kept, p)
				}
			}
			pods.Items = kept
		}
		return nil
	}})
	f.reconcile(rr)
	cur = f.request(rr)
	c := conditionOf(cur, v1alpha1.ConditionSucceeded)
	if c.Status != metav1.ConditionFalse || c.Reason != string(report.ReasonPartiallyApplied) {
		t.Fatalf("Succeeded = %+v, want False/PartiallyApplied, the last attempt's", c)
	}
	var rec v1alpha1.ReplayRecord
	if err := f.c.Get(ctx, types.NamespacedName{Namespace: job.Namespace, Name: job.Name}, &rec); err != nil {
		t.Fatal(err)
	}
	if !rec.Complete || rec.Outcome.Attempts != 2 {
		t.Errorf("record complete %v with %d attempts: want both attempts read", rec.Complete, rec.Outcome.Attempts)
	}
}

// podsBehind: when a finished Job's pods must be read again past the cache.
func TestUnitPodsBehind(t *testing.T) {
	pod := func(phase corev1.PodPhase) corev1.Pod { return corev1.Pod{Status: corev1.PodStatus{Phase: phase}} }
	job := func(failed, succeeded int32) *batchv1.Job {
		return &batchv1.Job{Status: batchv1.JobStatus{Failed: failed, Succeeded: succeeded}}
	}
	for _, tc := range []struct {
		name string
		job  *batchv1.Job
		pods []corev1.Pod
		want bool
	}{
		{"every counted attempt ended", job(1, 1), []corev1.Pod{pod(corev1.PodFailed), pod(corev1.PodSucceeded)}, false},
		{"an attempt not in the list yet", job(2, 0), []corev1.Pod{pod(corev1.PodFailed)}, true},
		{"an attempt not ended in the list yet", job(2, 0), []corev1.Pod{pod(corev1.PodFailed), pod(corev1.PodRunning)}, true},
		{"a pod without status yet", job(1, 0), []corev1.Pod{pod("")}, true},
		{"no attempt counted, none listed", job(0, 0), nil, false},
		{"more ended than counted", job(1, 0), []corev1.Pod{pod(corev1.PodFailed), pod(corev1.PodFailed)}, false},
	} {
		if got := podsBehind(tc.job, tc.pods); got != tc.want {
			t.Errorf("%s: podsBehind = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A Job that ran out of activeDeadlineSeconds is marked Failed while the Job
// controller is still killing its pod, which has its termination grace
// period to stop in: the runner may still commit and write its result. No
// outcome is written while the pod lives (status says what it waits for);
// once it has ended, saying offsets changed, the outcome says so.
func TestUnitPhasesDeadlineExceededWhilePodStops(t *testing.T) {
	rr := testutil.MakeRequest("shop", "slow").UID("rr-uid").Created(t0).ShiftBy(-10).Obj()
	f := newFakeAPI(t, fakeOptions(), rr)
	ctx := context.Background()
	f.reconcile(rr)
	cur := f.request(rr)
	job := f.job(cur.Namespace, cur.Status.JobName)

	pod := testutil.PodFor(job, job.Name+"-0")
	pod.Finalizers = []string{batchv1.JobTrackingFinalizer}
	if err := f.c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: state.ContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}}}
	if err := f.c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	f.reconcile(rr)

	// The deadline: the Job controller deletes the pod (it stays, stopping,
	// under its finalizer) and marks the Job Failed.
	f.clock.Step(time.Minute)
	if err := f.c.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	done := f.job(job.Namespace, job.Name)
	testutil.Fail(done, batchv1.JobReasonDeadlineExceeded, f.clock.Now())
	if err := f.c.Status().Update(ctx, done); err != nil {
		t.Fatal(err)
	}
	f.sent()
	res := f.reconcile(rr)
	cur = f.request(rr)
	if c := conditionOf(cur, v1alpha1.ConditionSucceeded); c.Status != "absent" {
		t.Fatalf("Succeeded = %+v while runner pod %s is still stopping, want no outcome yet", c, pod.Name)
	}
	if c := conditionOf(cur, v1alpha1.ConditionRunning); c.Status != metav1.ConditionTrue || c.Reason != state.ReasonWaitingForRunner ||
		!strings.Contains(c.Message, pod.Name) || !strings.Contains(c.Message, batchv1.JobReasonDeadlineExceeded) {
		t.Errorf("Running = %+v, want True/%s naming the pod and the deadline", c, state.ReasonWaitingForRunner)
	}
	if cur.Status.Result != nil || cur.Status.Phase != v1alpha1.PhaseRunning || len(cur.Finalizers) != 1 {
		t.Errorf("result %+v, phase %s, finalizers %v: want none, Running, kept", cur.Status.Result, cur.Status.Phase, cur.Finalizers)
	}
	// The pod's updates bring the wait back; the one timed wake-up is at
	// the end of its grace period plus runnerOverdueAfter, to say it is
	// overdue should it not have ended by then.
	if want := time.Duration(runnerjob.TerminationGracePeriodSeconds())*time.Second + runnerOverdueAfter; res.RequeueAfter != want {
		t.Errorf("RequeueAfter %s, want %s (grace period and runnerOverdueAfter), no polling", res.RequeueAfter, want)
	}
	if j := f.job(job.Namespace, job.Name); j.Annotations[v1alpha1.AnnotationOutcome] != "" {
		t.Errorf("the Job was recorded (%v) while its pod lives", j.Annotations)
	}
	var rec v1alpha1.ReplayRecord
	if err := f.c.Get(ctx, types.NamespacedName{Namespace: job.Namespace, Name: job.Name}, &rec); err == nil {
		t.Errorf("a ReplayRecord was written while the pod lives: %+v", rec.Outcome)
	}
	if ev := f.sent(); !hasEvent(ev, "Normal "+state.ReasonWaitingForRunner+" ") {
		t.Errorf("events %q, want %s", ev, state.ReasonWaitingForRunner)
	}

	// Within its grace period the runner committed, and said so.
	f.clock.Step(10 * time.Second)
	result := testutil.Result(cur.Spec.Group, report.ExitOK, 10, 20)
	result.RunID = runnerjob.RunID(cur)
	if err := f.logs.Put(pod.Namespace, pod.Name, result); err != nil {
		t.Fatal(err)
	}
	stopping := &corev1.Pod{}
	if err := f.c.Get(ctx, client.ObjectKeyFromObject(pod), stopping); err != nil {
		t.Fatal(err)
	}
	testutil.Terminated(stopping, 0, testutil.Compact(result), f.clock.Now())
	if err := f.c.Status().Update(ctx, stopping); err != nil {
		t.Fatal(err)
	}
	f.reconcile(rr)
	cur = f.request(rr)
	c := conditionOf(cur, v1alpha1.ConditionSucceeded)
	if c.Status != metav1.ConditionFalse || c.Reason != state.ReasonDeadlineExceeded || !strings.HasPrefix(c.Message, "offsets were changed") {
		t.Fatalf("Succeeded = %+v, want False/DeadlineExceeded saying offsets were changed", c)
	}
	if r := cur.Status.Result; r == nil || r.Totals.Applied != 2 {
		t.Errorf("result %+v, want the runner's two applied partitions", r)
	}
	if err := f.c.Get(ctx, types.NamespacedName{Namespace: job.Namespace, Name: job.Name}, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Outcome.OffsetsChanged != v1alpha1.OffsetsChangedYes {
		t.Errorf("record offsetsChanged %q, want Yes", rec.Outcome.OffsetsChanged)
	}
}

// outcomeWait: a finished Job's outcome waits while any of its runner pods
// has not ended, whatever ended the Job, with one wake-up to say it is
// overdue at the end of its grace period plus runnerOverdueAfter; then for
// a pod's termination state within the grace.
func TestUnitOutcomeWait(t *testing.T) {
	now := t0.Add(time.Minute)
	runnerGrace := time.Duration(runnerjob.TerminationGracePeriodSeconds()) * time.Second
	pod := func(name string, phase corev1.PodPhase, deletedAt time.Time) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: phase}}
		if !deletedAt.IsZero() {
			p.DeletionTimestamp = &metav1.Time{Time: deletedAt}
		}
		return p
	}
	var none time.Time
	stops := now.Add(30 * time.Second) // deletionTimestamp: the deletion plus the pod's grace
	code := int32(1)
	known := record.Outcome{Reason: "KafkaError", ExitCode: &code, FinishedAt: now}
	noState := record.Outcome{Reason: state.ReasonJobFailed, FinishedAt: now.Add(-time.Second)}
	deadline := record.Outcome{Reason: state.ReasonDeadlineExceeded, FinishedAt: now}
	unknownFinish := record.Outcome{Reason: state.ReasonJobFailed}
	for _, tc := range []struct {
		name        string
		pods        []corev1.Pod
		o           record.Outcome
		wantAlive   string
		wantOverdue bool
		wantWait    time.Duration
	}{
		{"deadline, pod stopping", []corev1.Pod{pod("a", corev1.PodRunning, stops)}, deadline, "a", false, 30*time.Second + runnerOverdueAfter},
		{"deadline, pod running, not yet deleted", []corev1.Pod{pod("a", corev1.PodRunning, none)}, deadline, "a", false, runnerGrace + runnerOverdueAfter},
		{"an earlier attempt ended, the last one stops", []corev1.Pod{pod("a", corev1.PodFailed, none), pod("b", corev1.PodRunning, stops)}, known, "b", false, 30*time.Second + runnerOverdueAfter},
		{"a pod without a phase yet", []corev1.Pod{pod("a", "", none)}, known, "a", false, runnerGrace + runnerOverdueAfter},
		{"a pod pending", []corev1.Pod{pod("a", corev1.PodPending, stops)}, deadline, "a", false, 30*time.Second + runnerOverdueAfter},
		{"alive wins over the result grace", []corev1.Pod{pod("a", corev1.PodRunning, stops)}, noState, "a", false, 30*time.Second + runnerOverdueAfter},
		{"alive, Job finish unknown, not deleted: no wake-up", []corev1.Pod{pod("a", corev1.PodRunning, none)}, unknownFinish, "a", false, 0},
		{"stopping, a moment before overdue", []corev1.Pod{pod("a", corev1.PodRunning, now.Add(-runnerOverdueAfter).Add(time.Second))}, deadline, "a", false, time.Second},
		{"stopping, overdue: still waited for", []corev1.Pod{pod("a", corev1.PodRunning, now.Add(-runnerOverdueAfter))}, deadline, "a", true, 0},
		{"never deleted, overdue", []corev1.Pod{pod("a", corev1.PodRunning, none)}, record.Outcome{Reason: state.ReasonJobFailed, FinishedAt: now.Add(-runnerGrace - runnerOverdueAfter)}, "a", true, 0},
		{"deadline, pod failed and still deleting", []corev1.Pod{pod("a", corev1.PodFailed, stops)}, deadline, "", false, 0},
		{"deadline, pod gone", nil, deadline, "", false, 0},
		{"pods ended with a result", []corev1.Pod{pod("a", corev1.PodFailed, none), pod("b", corev1.PodSucceeded, none)}, known, "", false, 0},
		{"pods ended, no termination state yet", []corev1.Pod{pod("a", corev1.PodFailed, none)}, noState, "", false, 4 * time.Second},
	} {
		alive, overdue, wait := outcomeWait(tc.pods, tc.o, 5*time.Second, now)
		if alive != tc.wantAlive || overdue != tc.wantOverdue || wait != tc.wantWait {
			t.Errorf("%s: outcomeWait = %q, overdue %v, %s; want %q, %v, %s", tc.name, alive, overdue, wait, tc.wantAlive, tc.wantOverdue, tc.wantWait)
		}
	}
}

// A runner pod stuck terminating (its node partitioned): the outcome waits
// for it still, as its runner may still commit, but not silently: once it
// is runnerOverdueAfter past its grace period, one Warning says so and what
// to do. Force-deleted, it is gone, and the outcome says offsets may have
// changed.
func TestUnitPhasesRunnerOverdue(t *testing.T) {
	rr := testutil.MakeRequest("shop", "stuck").UID("rr-uid").Created(t0).ShiftBy(-10).Obj()
	f := newFakeAPI(t, fakeOptions(), rr)
	ctx := context.Background()
	f.reconcile(rr)
	cur := f.request(rr)
	job := f.job(cur.Namespace, cur.Status.JobName)
	pod := testutil.PodFor(job, job.Name+"-0")
	pod.Finalizers = []string{batchv1.JobTrackingFinalizer}
	if err := f.c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	if err := f.c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	f.reconcile(rr)

	f.clock.Step(time.Minute)
	if err := f.c.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	done := f.job(job.Namespace, job.Name)
	testutil.Fail(done, batchv1.JobReasonDeadlineExceeded, f.clock.Now())
	done.Status.Failed = 1 // a Job controller that counts a deleted pod as failed
	if err := f.c.Status().Update(ctx, done); err != nil {
		t.Fatal(err)
	}
	f.sent()
	res := f.reconcile(rr)
	if res.RequeueAfter <= runnerOverdueAfter {
		t.Fatalf("RequeueAfter %s, want the end of the pod's grace period plus %s", res.RequeueAfter, runnerOverdueAfter)
	}
	if ev := f.sent(); !hasEvent(ev, "Normal "+state.ReasonWaitingForRunner+" ") {
		t.Fatalf("events %q, want a Normal %s", ev, state.ReasonWaitingForRunner)
	}

	// A second short of overdue: nothing new.
	f.clock.Step(res.RequeueAfter - time.Second)
	f.reconcile(rr)
	if ev := f.sent(); len(ev) != 0 {
		t.Errorf("events %q before the pod is overdue", ev)
	}
	// Overdue: a Warning naming the pod and the way out, no outcome.
	f.clock.Step(time.Second)
	res = f.reconcile(rr)
	cur = f.request(rr)
	c := conditionOf(cur, v1alpha1.ConditionRunning)
	if c.Status != metav1.ConditionTrue || c.Reason != state.ReasonWaitingForRunner || !strings.Contains(c.Message, "node may be lost") || !strings.Contains(c.Message, "delete pod "+pod.Name+" --force") {
		t.Errorf("Running = %+v, want the overdue pod named with the way out", c)
	}
	if s := conditionOf(cur, v1alpha1.ConditionSucceeded); s.Status != "absent" || cur.Status.Result != nil {
		t.Fatalf("Succeeded = %+v, result %+v, under a runner pod that may still commit", s, cur.Status.Result)
	}
	if ev := f.sent(); !hasEvent(ev, "Warning "+state.ReasonWaitingForRunner+" ") {
		t.Errorf("events %q, want a Warning %s", ev, state.ReasonWaitingForRunner)
	}
	if res.RequeueAfter != 0 {
		t.Errorf("RequeueAfter %s once overdue: the pod's updates bring it back", res.RequeueAfter)
	}
	// Said once.
	f.clock.Step(time.Hour)
	f.reconcile(rr)
	if ev := f.sent(); len(ev) != 0 {
		t.Errorf("events %q: the Warning again", ev)
	}

	// Someone who knows the node force-deletes the pod.
	stuck := &corev1.Pod{}
	if err := f.c.Get(ctx, client.ObjectKeyFromObject(pod), stuck); err != nil {
		t.Fatal(err)
	}
	stuck.Finalizers = nil
	if err := f.c.Update(ctx, stuck); err != nil {
		t.Fatal(err)
	}
	f.reconcile(rr)
	cur = f.request(rr)
	s := conditionOf(cur, v1alpha1.ConditionSucceeded)
	if s.Status != metav1.ConditionFalse || s.Reason != state.ReasonDeadlineExceeded || !strings.Contains(s.Message, "may have") {
		t.Errorf("Succeeded = %+v, want False/DeadlineExceeded saying offsets may have changed", s)
	}
}
