package launcher

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// The phase handlers' paths that TestUnitPhasesRunARequest and its
// neighbours do not take: refusals at acceptance, the approval decisions,
// a name already taken, a Job the API server refuses, a failed plan. Each
// over the fake client and the fake clock, as phase_fake_test.go.

// annotate sets annotations on the request as a user would (admission's
// approved-by stamp included, when given).
func (f *fakeAPI) annotate(rr *v1alpha1.ReplayRequest, kv ...string) {
	f.t.Helper()
	cur := f.request(rr)
	if cur.Annotations == nil {
		cur.Annotations = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		cur.Annotations[kv[i]] = kv[i+1]
	}
	if err := f.c.Update(context.Background(), cur); err != nil {
		f.t.Fatal(err)
	}
}

// noJob fails the test if the request's Job of stage exists.
func (f *fakeAPI) noJob(rr *v1alpha1.ReplayRequest, stage runnerjob.Stage) {
	f.t.Helper()
	var j batchv1.Job
	name := runnerjob.Name(rr, stage)
	if err := f.c.Get(context.Background(), types.NamespacedName{Namespace: rr.Namespace, Name: name}, &j); !apierrors.IsNotFound(err) {
		f.t.Errorf("the %s Job %s exists (%v), want none", stage, name, err)
	}
}

// planned runs a Manual request's planning Job (three partitions moved) and
// the pass that shows its plan, returning the request and the pass's
// result.
func (f *fakeAPI) planned(rr *v1alpha1.ReplayRequest) (*v1alpha1.ReplayRequest, reconcile.Result) {
	f.t.Helper()
	f.reconcile(rr)
	cur := f.request(rr)
	planJob := f.job(cur.Namespace, runnerjob.Name(cur, runnerjob.StagePlan))
	f.clock.Step(time.Minute)
	plan := testutil.Result(cur.Spec.Group, report.ExitOK, 10, 20, 30)
	plan.DryRun, plan.Reason, plan.RunID = true, report.ReasonDryRun, runnerjob.RunID(cur)
	for i := range plan.Partitions {
		plan.Partitions[i].Applied = false
	}
	plan.Summarize()
	plan.Plan = report.PlanDigest(plan.Group, plan.Target.Resolved, plan.Partitions)
	f.ran(planJob, 0, plan, "")
	res := f.reconcile(rr)
	cur = f.request(rr)
	if cur.Status.Phase != v1alpha1.PhaseAwaitingApproval || cur.Status.Plan == nil || cur.Status.Plan.Digest != plan.Plan {
		f.t.Fatalf("phase %s, plan %+v; want the plan %s awaiting approval", cur.Status.Phase, cur.Status.Plan, plan.Plan)
	}
	return cur, res
}

// A request the launcher cannot run is refused in the pass that first sees
// it, naming the field, with nothing made: no Job, no finalizer.
func TestUnitPhasesAcceptingRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, reason, says string
		rr                 *v1alpha1.ReplayRequest
		opts               func(*Options)
	}{
		{"a time that is no time", state.ReasonInvalidTarget, "yesterday-ish",
			testutil.MakeRequest("shop", "bad-time").Time("yesterday-ish").Obj(), nil},
		{"no group", string(report.ReasonInvalidInput), "group",
			testutil.MakeRequest("shop", "no-group").Group("").ShiftBy(-1).Obj(), nil},
		{"a runner image from elsewhere", string(report.ReasonInvalidInput), "runner.image",
			testutil.MakeRequest("shop", "evil-image").ShiftBy(-1).Runner(v1alpha1.RunnerOverrides{Image: "docker.io/library/busybox:latest"}).Obj(), nil},
		{"a clusterRef with Strimzi turned off", state.ReasonClusterRefNotResolved, "--strimzi=false",
			unresolvedClusterRef(), func(o *Options) { o.NoStrimzi = true }},
		{"an undo of a request that never ran", state.ReasonUndoRefused, "never-ran",
			testutil.MakeRequest("shop", "undo").UndoOf("never-ran").Obj(), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.rr.UID, tc.rr.CreationTimestamp = "rr-uid", metav1.NewTime(t0)
			opts := fakeOptions()
			if tc.opts != nil {
				tc.opts(&opts)
			}
			f := newFakeAPI(t, opts, tc.rr)
			f.reconcile(tc.rr)
			cur := f.request(tc.rr)
			a := conditionOf(cur, v1alpha1.ConditionAccepted)
			if a.Status != metav1.ConditionFalse || a.Reason != tc.reason || !strings.Contains(a.Message, tc.says) {
				t.Errorf("Accepted = %+v, want False/%s naming %q", a, tc.reason, tc.says)
			}
			if s := conditionOf(cur, v1alpha1.ConditionSucceeded); s.Status != metav1.ConditionFalse || s.Reason != tc.reason {
				t.Errorf("Succeeded = %+v, want False/%s", s, tc.reason)
			}
			if cur.Status.Phase != v1alpha1.PhaseFailed || cur.Status.JobName != "" || len(cur.Finalizers) != 0 {
				t.Errorf("phase %s, job %q, finalizers %v: want Failed, nothing made", cur.Status.Phase, cur.Status.JobName, cur.Finalizers)
			}
			f.noJob(cur, runnerjob.StageApply)
			if ev := f.sent(); !hasEvent(ev, "Warning "+tc.reason+" ") {
				t.Errorf("events %q, want a Warning %s", ev, tc.reason)
			}
		})
	}
}

// unresolvedClusterRef is a request through a Strimzi clusterRef not
// resolved yet.
func unresolvedClusterRef() *v1alpha1.ReplayRequest {
	rr := testutil.MakeRequest("shop", "strimzi").ShiftBy(-1).Obj()
	rr.Spec.Kafka = v1alpha1.KafkaConnection{ClusterRef: &v1alpha1.StrimziClusterRef{Name: "my-cluster", Listener: "tls"}}
	return rr
}

// The approval decisions on a shown plan: a wrong digest is refused with
// one Warning and approves nothing; the right one, stamped by admission,
// approves and makes the apply Job in the same pass, with the approved plan
// as its input.
func TestUnitPhasesApprovalApproves(t *testing.T) {
	rr := testutil.MakeRequest("shop", "manual").UID("rr-uid").Created(t0).ShiftBy(-10).Manual().ApprovalTimeout(time.Hour).Obj()
	f := newFakeAPI(t, fakeOptions(), rr)
	cur, _ := f.planned(rr)
	digest := cur.Status.Plan.Digest
	f.sent()

	f.annotate(rr, v1alpha1.AnnotationApprove, "sha256:not-this-plan", v1alpha1.AnnotationApprovedBy, "mallory")
	f.clock.Step(time.Minute)
	res := f.reconcile(rr)
	cur = f.request(rr)
	c := conditionOf(cur, v1alpha1.ConditionAwaitingApproval)
	if c.Status != metav1.ConditionTrue || c.Reason != state.ReasonPlanReady || !strings.Contains(c.Message, "not-this-plan") || !strings.Contains(c.Message, "mallory") {
		t.Errorf("AwaitingApproval = %+v, want still PlanReady, saying the wrong digest and who", c)
	}
	if cur.Status.Approval != nil {
		t.Errorf("approval %+v from a wrong digest", cur.Status.Approval)
	}
	if want := time.Hour - time.Minute; res.RequeueAfter != want {
		t.Errorf("RequeueAfter %s, want the plan's expiry in %s", res.RequeueAfter, want)
	}
	if ev := f.sent(); len(ev) != 1 || !hasEvent(ev, "Warning "+state.ReasonApprovalRefused+" ") {
		t.Errorf("events %q, want one Warning %s", ev, state.ReasonApprovalRefused)
	}
	f.reconcile(rr)
	if ev := f.sent(); len(ev) != 0 {
		t.Errorf("the same wrong digest again sent %q", ev)
	}
	f.noJob(cur, runnerjob.StageApply)

	f.annotate(rr, v1alpha1.AnnotationApprove, digest, v1alpha1.AnnotationApprovedBy, "alice")
	f.reconcile(rr)
	cur = f.request(rr)
	if c := conditionOf(cur, v1alpha1.ConditionAwaitingApproval); c.Status != metav1.ConditionFalse || c.Reason != state.ReasonApproved {
		t.Errorf("AwaitingApproval = %+v, want False/Approved", c)
	}
	if a := cur.Status.Approval; a == nil || a.Decision != v1alpha1.ApprovalApproved || a.By != "alice" || a.Digest != digest || !a.At.Time.Equal(f.clock.Now()) {
		t.Errorf("approval %+v, want approved by alice at %s for %s", a, f.clock.Now(), digest)
	}
	if cur.Status.JobName != runnerjob.Name(cur, runnerjob.StageApply) {
		t.Fatalf("status.jobName %q, want the apply Job made in the approving pass", cur.Status.JobName)
	}
	job := f.job(cur.Namespace, cur.Status.JobName)
	var cm corev1.ConfigMap
	if err := f.c.Get(context.Background(), types.NamespacedName{Namespace: cur.Namespace, Name: runnerjob.InputConfigMapName(job.Name)}, &cm); err != nil {
		t.Fatalf("the apply Job's input (the approved plan): %v", err)
	}
	if !mountsConfigMap(job, cm.Name) {
		t.Errorf("the apply Job does not read its input ConfigMap %s", cm.Name)
	}
	if ev := f.sent(); !hasEvent(ev, "Normal "+state.ReasonApproved+" ") {
		t.Errorf("events %q, want Approved", ev)
	}
}

func mountsConfigMap(job *batchv1.Job, name string) bool {
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == name {
			return true
		}
	}
	return false
}

// A plan whose record changed after it was shown is not applied, even once
// approved: the apply Job is refused (JobInvalid) and nothing is made.
func TestUnitPhasesApprovedPlanChanged(t *testing.T) {
	rr := testutil.MakeRequest("shop", "manual").UID("rr-uid").Created(t0).ShiftBy(-10).Manual().ApprovalTimeout(time.Hour).Obj()
	f := newFakeAPI(t, fakeOptions(), rr)
	cur, _ := f.planned(rr)
	ctx := context.Background()
	var rec v1alpha1.ReplayRecord
	if err := f.c.Get(ctx, types.NamespacedName{Namespace: cur.Namespace, Name: cur.Status.Plan.JobName}, &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Topics) == 0 || len(rec.Topics[0].Partitions) == 0 {
		t.Fatalf("record %+v has no partitions to change", rec.Topics)
	}
	rec.Topics[0].NewOffsets[0] += 1000
	if err := f.c.Update(ctx, &rec); err != nil {
		t.Fatal(err)
	}
	f.annotate(rr, v1alpha1.AnnotationApprove, cur.Status.Plan.Digest, v1alpha1.AnnotationApprovedBy, "alice")
	f.reconcile(rr)
	cur = f.request(rr)
	if c := conditionOf(cur, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionFalse || c.Reason != state.ReasonJobInvalid || !strings.Contains(c.Message, "not the approved") {
		t.Errorf("Succeeded = %+v, want False/JobInvalid: the plan is not the approved one", c)
	}
	f.noJob(cur, runnerjob.StageApply)
}

// A rejection ends the request with who and why, whether it comes while
// the plan is shown or once approved while the group is busy; nothing is
// applied either way.
func TestUnitPhasesRejected(t *testing.T) {
	t.Run("while shown", func(t *testing.T) {
		rr := testutil.MakeRequest("shop", "manual").UID("rr-uid").Created(t0).ShiftBy(-10).Manual().ApprovalTimeout(time.Hour).Obj()
		f := newFakeAPI(t, fakeOptions(), rr)
		cur, _ := f.planned(rr)
		digest := cur.Status.Plan.Digest
		f.annotate(rr, v1alpha1.AnnotationReject, "moves too much", v1alpha1.AnnotationApprovedBy, "bob")
		f.reconcile(rr)
		cur = f.request(rr)
		c := conditionOf(cur, v1alpha1.ConditionSucceeded)
		if c.Status != metav1.ConditionFalse || c.Reason != state.ReasonRejected || !strings.Contains(c.Message, "bob") || !strings.Contains(c.Message, "moves too much") {
			t.Errorf("Succeeded = %+v, want False/Rejected saying who and why", c)
		}
		if a := cur.Status.Approval; a == nil || a.Decision != v1alpha1.ApprovalRejected || a.By != "bob" || a.Digest != digest || a.Reason != "moves too much" {
			t.Errorf("approval %+v", a)
		}
		f.noJob(cur, runnerjob.StageApply)
	})
	t.Run("approved, waiting for the group", func(t *testing.T) {
		rr := testutil.MakeRequest("shop", "manual").UID("rr-uid").Created(t0).ShiftBy(-10).Manual().ApprovalTimeout(time.Hour).Obj()
		f := newFakeAPI(t, fakeOptions(), rr)
		cur, _ := f.planned(rr)
		// Another request of the group starts meanwhile (the group is
		// free while a plan is shown), and holds it.
		other := testutil.MakeRequest("shop", "other").UID("uid-other").ShiftBy(-5).Obj()
		if err := f.c.Create(context.Background(), other); err != nil {
			t.Fatal(err)
		}
		f.reconcile(other)
		if o := f.request(other); o.Status.JobName == "" {
			t.Fatalf("the other request did not start: %+v", conditionOf(o, v1alpha1.ConditionAccepted))
		}
		f.annotate(rr, v1alpha1.AnnotationApprove, cur.Status.Plan.Digest, v1alpha1.AnnotationApprovedBy, "alice")
		f.reconcile(rr)
		cur = f.request(rr)
		if c := conditionOf(cur, v1alpha1.ConditionAccepted); c.Reason != state.ReasonWaitingForGroup || !state.Approved(cur) {
			t.Fatalf("Accepted = %+v, approved %v: want approved and waiting for the group", c, state.Approved(cur))
		}
		f.annotate(rr, v1alpha1.AnnotationReject, "changed my mind", v1alpha1.AnnotationApprovedBy, "alice")
		f.reconcile(rr)
		cur = f.request(rr)
		if c := conditionOf(cur, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionFalse || c.Reason != state.ReasonRejected || !strings.Contains(c.Message, "changed my mind") {
			t.Errorf("Succeeded = %+v, want False/Rejected", c)
		}
		f.noJob(cur, runnerjob.StageApply)
	})
}

// A Job under the request's name that it does not control: an earlier
// request's of the same name and spec still running is waited for (and
// never run again); anyone else's is a conflict, left as it is.
func TestUnitPhasesNameTaken(t *testing.T) {
	ctx := context.Background()
	t.Run("an earlier run in progress", func(t *testing.T) {
		earlier := testutil.MakeRequest("shop", "rewind").UID("uid-earlier").Created(t0).ShiftBy(-10).Obj()
		f := newFakeAPI(t, fakeOptions(), earlier)
		f.reconcile(earlier)
		job := f.job("shop", f.request(earlier).Status.JobName)
		// The earlier request is gone (its finalizer dropped by hand),
		// its Job not.
		gone := f.request(earlier)
		gone.Finalizers = nil
		if err := f.c.Update(ctx, gone); err != nil {
			t.Fatal(err)
		}
		if err := f.c.Delete(ctx, gone); err != nil {
			t.Fatal(err)
		}
		again := testutil.MakeRequest("shop", "rewind").UID("uid-again").ShiftBy(-10).Obj()
		if err := f.c.Create(ctx, again); err != nil {
			t.Fatal(err)
		}
		f.sent()
		f.reconcile(again)
		cur := f.request(again)
		c := conditionOf(cur, v1alpha1.ConditionAccepted)
		if c.Status != metav1.ConditionTrue || c.Reason != state.ReasonEarlierRunInProgress || !strings.Contains(c.Message, job.Name) {
			t.Fatalf("Accepted = %+v, want EarlierRunInProgress naming %s", c, job.Name)
		}
		if s := conditionOf(cur, v1alpha1.ConditionSucceeded); s.Status != "absent" {
			t.Errorf("Succeeded = %+v while the earlier run is in progress", s)
		}
		f.reconcile(again)
		if ev := f.sent(); len(ev) != 1 || !hasEvent(ev, "Normal "+state.ReasonEarlierRunInProgress+" ") {
			t.Errorf("events %q, want one EarlierRunInProgress over two passes", ev)
		}
		// The earlier run ends: this one says it already ran.
		res := testutil.Result(cur.Spec.Group, report.ExitOK, 1)
		f.ran(job, 0, res, "")
		f.reconcile(again)
		if s := conditionOf(f.request(again), v1alpha1.ConditionSucceeded); s.Reason != state.ReasonAlreadyRan {
			t.Errorf("Succeeded = %+v once the earlier run finished, want AlreadyRan", s)
		}
	})
	t.Run("someone else's Job", func(t *testing.T) {
		rr := testutil.MakeRequest("shop", "rewind").UID("rr-uid").Created(t0).ShiftBy(-10).Obj()
		planted := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: runnerjob.Name(rr, runnerjob.StageApply),
				Labels: map[string]string{v1alpha1.LabelRunner: v1alpha1.LabelRunnerValue, v1alpha1.LabelRequest: rr.Name}},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: state.ContainerName, Image: "example.com/evil"}}}}},
		}
		f := newFakeAPI(t, fakeOptions(), rr, planted)
		f.reconcile(rr)
		cur := f.request(rr)
		if c := conditionOf(cur, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionFalse || c.Reason != state.ReasonJobConflict || !strings.Contains(c.Message, planted.Name) {
			t.Errorf("Succeeded = %+v, want False/JobConflict naming %s", c, planted.Name)
		}
		j := f.job("shop", planted.Name)
		if metav1.GetControllerOf(j) != nil || j.Annotations[v1alpha1.AnnotationOutcome] != "" || (j.Spec.Suspend != nil && *j.Spec.Suspend) {
			t.Errorf("someone else's Job was touched: owners %+v, annotations %v, suspend %v", j.OwnerReferences, j.Annotations, j.Spec.Suspend)
		}
	})
}

// A Job the API server refuses for now (a quota) is retried, said once per
// refusal with a Warning, and the request fails JobNotCreated at the start
// timeout, counted by the fake clock from the first refusal; one it finds
// invalid fails the request at once.
func TestUnitPhasesJobRefused(t *testing.T) {
	quota := apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "x", errString("exceeded quota: jobs"))
	t.Run("for now", func(t *testing.T) {
		rr := testutil.MakeRequest("shop", "quota").UID("rr-uid").Created(t0).ShiftBy(-10).Obj()
		f := newFakeAPI(t, fakeOptions(), rr)
		f.failCreate = func(obj client.Object) error {
			if _, ok := obj.(*batchv1.Job); ok {
				return quota
			}
			return nil
		}
		timeout := f.r.Options.StartTimeout
		res := f.reconcile(rr)
		cur := f.request(rr)
		c := conditionOf(cur, v1alpha1.ConditionRunning)
		if c.Status != metav1.ConditionFalse || c.Reason != state.ReasonJobCreateFailed || !strings.Contains(c.Message, "exceeded quota") {
			t.Fatalf("Running = %+v, want False/JobCreateFailed with the API server's word", c)
		}
		if res.RequeueAfter != time.Second {
			t.Errorf("RequeueAfter %s, want the first retry in 1s", res.RequeueAfter)
		}
		if ev := f.sent(); !hasEvent(ev, "Warning "+state.ReasonJobCreateFailed+" ") {
			t.Errorf("events %q, want a Warning %s", ev, state.ReasonJobCreateFailed)
		}
		f.clock.Step(timeout - time.Second)
		f.reconcile(rr)
		if s := conditionOf(f.request(rr), v1alpha1.ConditionSucceeded); s.Status != "absent" {
			t.Fatalf("Succeeded = %+v a second before the start timeout", s)
		}
		f.clock.Step(time.Second)
		f.reconcile(rr)
		cur = f.request(rr)
		if s := conditionOf(cur, v1alpha1.ConditionSucceeded); s.Status != metav1.ConditionFalse || s.Reason != state.ReasonJobNotCreated || !strings.Contains(s.Message, "exceeded quota") {
			t.Errorf("Succeeded = %+v at the start timeout, want False/JobNotCreated", s)
		}
		f.noJob(cur, runnerjob.StageApply)
	})
	t.Run("invalid", func(t *testing.T) {
		rr := testutil.MakeRequest("shop", "invalid").UID("rr-uid").Created(t0).ShiftBy(-10).Obj()
		f := newFakeAPI(t, fakeOptions(), rr)
		f.failCreate = func(obj client.Object) error {
			if _, ok := obj.(*batchv1.Job); ok {
				return apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, obj.GetName(), field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), obj.GetName(), "too long")})
			}
			return nil
		}
		f.reconcile(rr)
		cur := f.request(rr)
		if s := conditionOf(cur, v1alpha1.ConditionSucceeded); s.Status != metav1.ConditionFalse || s.Reason != state.ReasonJobInvalid || !strings.Contains(s.Message, "metadata.name") {
			t.Errorf("Succeeded = %+v, want False/JobInvalid naming the field", s)
		}
	})
}

type errString string

func (e errString) Error() string { return string(e) }

// A planning run that fails fails the request with its reason, prefixed
// "planning:"; no plan is shown and nothing is applied.
func TestUnitPhasesPlanFails(t *testing.T) {
	rr := testutil.MakeRequest("shop", "manual").UID("rr-uid").Created(t0).ShiftBy(-10).Manual().Obj()
	f := newFakeAPI(t, fakeOptions(), rr)
	f.reconcile(rr)
	cur := f.request(rr)
	planJob := f.job(cur.Namespace, runnerjob.Name(cur, runnerjob.StagePlan))
	f.clock.Step(time.Minute)
	f.ran(planJob, int32(report.ExitKafkaError), testutil.Result(cur.Spec.Group, report.ExitKafkaError), batchv1.JobReasonPodFailurePolicy)
	f.reconcile(rr)
	cur = f.request(rr)
	c := conditionOf(cur, v1alpha1.ConditionSucceeded)
	if c.Status != metav1.ConditionFalse || c.Reason != string(report.ReasonKafkaError) || !strings.HasPrefix(c.Message, "planning: ") {
		t.Errorf("Succeeded = %+v, want False/KafkaError, said of the planning run", c)
	}
	if cur.Status.Plan != nil || conditionOf(cur, v1alpha1.ConditionAwaitingApproval).Status == metav1.ConditionTrue {
		t.Errorf("plan %+v shown after a failed planning run", cur.Status.Plan)
	}
	if j := f.job(cur.Namespace, planJob.Name); j.Annotations[v1alpha1.AnnotationOutcome] != v1alpha1.OutcomeFailed {
		t.Errorf("planning Job annotations %v, want its outcome", j.Annotations)
	}
	f.noJob(cur, runnerjob.StageApply)
}

// Deleted with --cascade=orphan: the request goes at once and its running
// Job is kept (it holds the group by itself); deleted while it plans: the
// planning Job is deleted and the request goes.
func TestUnitPhasesDeletedOrphanOrPlanning(t *testing.T) {
	ctx := context.Background()
	t.Run("orphan", func(t *testing.T) {
		rr := testutil.MakeRequest("shop", "orphan").UID("rr-uid").Created(t0).ShiftBy(-10).Obj()
		f := newFakeAPI(t, fakeOptions(), rr)
		f.reconcile(rr)
		cur := f.request(rr)
		job := f.job(cur.Namespace, cur.Status.JobName)
		pod := testutil.PodFor(job, job.Name+"-0")
		if err := f.c.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		pod.Status.Phase = corev1.PodRunning
		if err := f.c.Status().Update(ctx, pod); err != nil {
			t.Fatal(err)
		}
		// The API server adds the orphan finalizer for propagationPolicy
		// Orphan, then sets the deletionTimestamp.
		cur.Finalizers = append(cur.Finalizers, metav1.FinalizerOrphanDependents)
		if err := f.c.Update(ctx, cur); err != nil {
			t.Fatal(err)
		}
		if err := f.c.Delete(ctx, f.request(rr)); err != nil {
			t.Fatal(err)
		}
		f.reconcile(rr)
		if j := f.job(job.Namespace, job.Name); j.DeletionTimestamp != nil {
			t.Errorf("the orphaned Job is being deleted")
		}
		after := f.request(rr)
		if slices.Contains(after.Finalizers, Finalizer) {
			t.Errorf("finalizers %v: the launcher's stays on an orphaning deletion", after.Finalizers)
		}
	})
	t.Run("while planning", func(t *testing.T) {
		rr := testutil.MakeRequest("shop", "planning").UID("rr-uid").Created(t0).ShiftBy(-10).Manual().Obj()
		f := newFakeAPI(t, fakeOptions(), rr)
		f.reconcile(rr)
		cur := f.request(rr)
		planName := runnerjob.Name(cur, runnerjob.StagePlan)
		f.job(cur.Namespace, planName)
		if err := f.c.Delete(ctx, cur); err != nil {
			t.Fatal(err)
		}
		f.reconcile(rr)
		var j batchv1.Job
		if err := f.c.Get(ctx, types.NamespacedName{Namespace: "shop", Name: planName}, &j); !apierrors.IsNotFound(err) {
			t.Errorf("the planning Job of a deleted request: %v, want it deleted", err)
		}
		var after v1alpha1.ReplayRequest
		if err := f.c.Get(ctx, client.ObjectKeyFromObject(rr), &after); !apierrors.IsNotFound(err) {
			t.Errorf("the request stays (%v), finalizers %v", err, after.Finalizers)
		}
	})
}

// A planning run that cannot stand for a plan fails the request
// PlanNotRecorded, nothing shown for approval: one that did not end as a dry
// run, or whose ReplayRecord someone else planted under its name.
func TestUnitPhasesPlanNotRecorded(t *testing.T) {
	dryRun := func(cur *v1alpha1.ReplayRequest) *report.Result {
		plan := testutil.Result(cur.Spec.Group, report.ExitOK, 10)
		plan.DryRun, plan.Reason, plan.RunID = true, report.ReasonDryRun, runnerjob.RunID(cur)
		plan.Partitions[0].Applied = false
		plan.Summarize()
		plan.Plan = report.PlanDigest(plan.Group, plan.Target.Resolved, plan.Partitions)
		return plan
	}
	for _, tc := range []struct {
		name, says string
		prepare    func(f *fakeAPI, cur *v1alpha1.ReplayRequest, planJob *batchv1.Job) *report.Result
	}{
		{"not a dry run", "did not end as a dry run", func(_ *fakeAPI, cur *v1alpha1.ReplayRequest, _ *batchv1.Job) *report.Result {
			applied := testutil.Result(cur.Spec.Group, report.ExitOK, 10)
			applied.RunID = runnerjob.RunID(cur)
			return applied
		}},
		{"a planted record", "cannot be kept whole", func(f *fakeAPI, cur *v1alpha1.ReplayRequest, planJob *batchv1.Job) *report.Result {
			planted := &v1alpha1.ReplayRecord{ObjectMeta: metav1.ObjectMeta{Namespace: planJob.Namespace, Name: planJob.Name},
				Job: planJob.Name, Group: cur.Spec.Group, DryRun: true}
			if err := f.c.Create(context.Background(), planted); err != nil {
				f.t.Fatal(err)
			}
			return dryRun(cur)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rr := testutil.MakeRequest("shop", "manual").UID("rr-uid").Created(t0).ShiftBy(-10).Manual().Obj()
			f := newFakeAPI(t, fakeOptions(), rr)
			f.reconcile(rr)
			cur := f.request(rr)
			planJob := f.job(cur.Namespace, runnerjob.Name(cur, runnerjob.StagePlan))
			res := tc.prepare(f, cur, planJob)
			f.clock.Step(time.Minute)
			f.ran(planJob, 0, res, "")
			f.reconcile(rr)
			cur = f.request(rr)
			c := conditionOf(cur, v1alpha1.ConditionSucceeded)
			if c.Status != metav1.ConditionFalse || c.Reason != state.ReasonPlanNotRecorded || !strings.Contains(c.Message, tc.says) {
				t.Errorf("Succeeded = %+v, want False/PlanNotRecorded saying %q", c, tc.says)
			}
			if cur.Status.Plan != nil {
				t.Errorf("plan %+v shown", cur.Status.Plan)
			}
			f.noJob(cur, runnerjob.StageApply)
		})
	}
}

// Someone who may create Jobs plants the apply Job of a Manual request not
// yet approved, controlled by the request, as the launcher would name it:
// it is not adopted (JobConflict), and left as it was.
func TestUnitPhasesPlantedApplyJob(t *testing.T) {
	rr := testutil.MakeRequest("shop", "manual").UID("rr-uid").Created(t0).ShiftBy(-10).Manual().ApprovalTimeout(time.Hour).Obj()
	f := newFakeAPI(t, fakeOptions(), rr)
	cur, _ := f.planned(rr)
	planJob := f.job(cur.Namespace, cur.Status.Plan.JobName)
	planted := planJob.DeepCopy()
	planted.ObjectMeta = metav1.ObjectMeta{Namespace: cur.Namespace, Name: runnerjob.Name(cur, runnerjob.StageApply),
		Labels: planJob.Labels, Annotations: planJob.Annotations, OwnerReferences: planJob.OwnerReferences}
	planted.Labels[v1alpha1.LabelStage] = string(runnerjob.StageApply)
	planted.Status = batchv1.JobStatus{}
	if err := f.c.Create(context.Background(), planted); err != nil {
		t.Fatal(err)
	}
	f.reconcile(rr)
	cur = f.request(rr)
	if c := conditionOf(cur, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionFalse || c.Reason != state.ReasonJobConflict || !strings.Contains(c.Message, "nobody approved") {
		t.Errorf("Succeeded = %+v, want False/JobConflict: nobody approved, so the planted apply Job is not adopted", c)
	}
	if cur.Status.Approval != nil && cur.Status.Approval.Decision == v1alpha1.ApprovalApproved {
		t.Errorf("approval %+v from a planted Job", cur.Status.Approval)
	}
	j := f.job(planted.Namespace, planted.Name)
	if j.Annotations[v1alpha1.AnnotationOutcome] != "" || (j.Spec.Suspend != nil && *j.Spec.Suspend) {
		t.Errorf("the planted Job was touched: annotations %v, suspend %v", j.Annotations, j.Spec.Suspend)
	}
}
