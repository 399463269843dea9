package launcher

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// The runbook Job controller over the fake client and clock: it starts a
// trusted runbook Job when its group is free, bounds its start, records
// its outcome, and leaves alone one not made from the chart's CronJobs.
// The envtest suite (TestEnvtestRunbookJobs*) is its integration rung.

// runbook is a RunbookJobReconciler sharing f's client, clock, events and
// group queue with its request reconciler.
func (f *fakeAPI) runbook() *RunbookJobReconciler {
	return &RunbookJobReconciler{Client: f.c, APIReader: f.c, Recorder: f.events, Options: f.r.Options, Now: f.clock.Now, queue: f.r.queue}
}

// runbookJob creates a runbook CronJob of group "orders" (with the chart's
// labels when trusted) and the Job `kubectl create job --from=cronjob/...`
// makes from it, suspended.
func (f *fakeAPI) runbookJob(name string, trusted bool) *batchv1.Job {
	f.t.Helper()
	ctx := context.Background()
	probe := testutil.MakeRequest("shop", "template").Group("orders").UID("x").Time("2026-03-01T09:30:00Z").Resolved("time:2026-03-01T09:30:00Z").Obj()
	tmpl, err := BuildJob(probe, runnerjob.StageApply, f.r.Options)
	if err != nil {
		f.t.Fatal(err)
	}
	cron := testutil.RunbookCronJob("shop", name, "orders", trusted, tmpl)
	if err := f.c.Create(ctx, cron); err != nil {
		f.t.Fatal(err)
	}
	job := testutil.JobFromCronJob(cron, name+"-manual")
	if err := f.c.Create(ctx, job); err != nil {
		f.t.Fatal(err)
	}
	return job
}

func (f *fakeAPI) reconcileRunbook(rb *RunbookJobReconciler, job *batchv1.Job) reconcile.Result {
	f.t.Helper()
	res, err := rb.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(job)})
	if err != nil {
		f.t.Fatalf("reconcile runbook Job %s: %v", job.Name, err)
	}
	return res
}

func started(job *batchv1.Job) bool {
	return job.Spec.Suspend != nil && !*job.Spec.Suspend && job.Annotations[v1alpha1.AnnotationStartedAt] != ""
}

func TestUnitRunbookJobs(t *testing.T) {
	t.Run("not from the chart's CronJobs: left alone", func(t *testing.T) {
		f := newFakeAPI(t, fakeOptions())
		rb := f.runbook()
		job := f.runbookJob("homemade", false)
		f.reconcileRunbook(rb, job)
		if j := f.job("shop", job.Name); started(j) || state.IsRecorded(j) {
			t.Errorf("an untrusted runbook Job was started or recorded: suspend %v, annotations %v", j.Spec.Suspend, j.Annotations)
		}
	})

	t.Run("started when its group is free, recorded when it finishes", func(t *testing.T) {
		f := newFakeAPI(t, fakeOptions())
		rb := f.runbook()
		job := f.runbookJob("rewind-orders", true)
		f.reconcileRunbook(rb, job)
		j := f.job("shop", job.Name)
		if !started(j) || j.Annotations[v1alpha1.AnnotationStartedAt] != f.clock.Now().UTC().Format(time.RFC3339) {
			t.Fatalf("not started at %s: suspend %v, annotations %v", f.clock.Now(), j.Spec.Suspend, j.Annotations)
		}
		if ev := f.sent(); !hasEvent(ev, "Normal Started ") {
			t.Errorf("events %q, want Started", ev)
		}
		f.clock.Step(time.Minute)
		res := testutil.Result("orders", report.ExitOK, 4, 5)
		f.ran(j, 0, res, "")
		f.reconcileRunbook(rb, j)
		j = f.job("shop", job.Name)
		if !state.IsRecorded(j) || j.Annotations[v1alpha1.AnnotationOutcome] != v1alpha1.OutcomeSucceeded {
			t.Errorf("annotations %v, want the outcome recorded", j.Annotations)
		}
		if ev := f.sent(); !hasEvent(ev, "Normal "+string(report.ReasonApplied)+" ") {
			t.Errorf("events %q, want Applied", ev)
		}
	})

	t.Run("waits while a request of its group runs", func(t *testing.T) {
		rr := testutil.MakeRequest("shop", "first").UID("uid-first").Created(t0).Group("orders").ShiftBy(-1).Obj()
		f := newFakeAPI(t, fakeOptions(), rr)
		f.reconcile(rr)
		if f.request(rr).Status.JobName == "" {
			t.Fatal("the request did not start")
		}
		rb := f.runbook()
		job := f.runbookJob("rewind-orders", true)
		f.sent()
		f.reconcileRunbook(rb, job)
		if j := f.job("shop", job.Name); started(j) {
			t.Fatalf("started while request %s runs", rr.Name)
		}
		if ev := f.sent(); !hasEvent(ev, "Normal "+state.ReasonWaitingForGroup+" ") {
			t.Errorf("events %q, want WaitingForGroup", ev)
		}
	})

	t.Run("a pod that never comes: recorded at the start timeout and stopped", func(t *testing.T) {
		f := newFakeAPI(t, fakeOptions())
		rb := f.runbook()
		job := f.runbookJob("rewind-orders", true)
		f.reconcileRunbook(rb, job)
		timeout := f.r.Options.StartTimeout
		if res := f.reconcileRunbook(rb, job); res.RequeueAfter != timeout {
			t.Fatalf("RequeueAfter %s, want the start timeout %s", res.RequeueAfter, timeout)
		}
		f.clock.Step(timeout - time.Second)
		if res := f.reconcileRunbook(rb, job); res.RequeueAfter != time.Second {
			t.Fatalf("RequeueAfter %s a second before the deadline", res.RequeueAfter)
		}
		f.clock.Step(time.Second)
		f.reconcileRunbook(rb, job)
		j := f.job("shop", job.Name)
		if j.Annotations[v1alpha1.AnnotationReason] != state.ReasonPodNotStarted || j.Spec.Suspend == nil || !*j.Spec.Suspend {
			t.Errorf("annotations %v, suspend %v: want recorded PodNotStarted and suspended", j.Annotations, j.Spec.Suspend)
		}
	})
}
