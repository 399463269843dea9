package launcher

import (
	"context"
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
