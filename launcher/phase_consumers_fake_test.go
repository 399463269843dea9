package launcher

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// The pausing and restoring handlers over the fake client (phase_fake_test.go):
// the record before any change, the pause, the Job only once every consumer
// is paused, the restore only after the last runner pod has ended and only
// where the pause is still in place, and a pause that fails restoring what
// it had paused. The envtest suite (consumers_envtest_test.go) runs the same
// over a real API server, with KEDA's CRD.

// consumerFixture is a request naming a Deployment (3 replicas) and a
// StatefulSet (2) as its consumers, over the fake API server.
func consumerFixture(t *testing.T, name string) (*fakeAPI, *v1alpha1.ReplayRequest, *appsv1.Deployment, *appsv1.StatefulSet) {
	t.Helper()
	dep := testutil.Deployment("shop", name+"-consumer", 3, nil)
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name + "-store"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](2), ServiceName: name + "-store",
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name + "-store"}},
			Template: testutil.ConsumerPodTemplate(name + "-store"),
		},
	}
	rr := testutil.MakeRequest("shop", name).UID("rr-uid").Created(t0).ShiftBy(-10).Wait(time.Minute).
		Consumers(v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerDeployment, Name: dep.Name}, v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerStatefulSet, Name: sts.Name}).Obj()
	return newFakeAPI(t, fakeOptions(), rr, dep, sts), rr, dep, sts
}

// scaleWrite is one write of a workload's scale: to how many replicas, and
// whether the stored request had recorded the workload by then.
type scaleWrite struct {
	workload string
	replicas int32
	recorded bool
}

func workloadKind(obj client.Object) string {
	if _, ok := obj.(*appsv1.StatefulSet); ok {
		return string(v1alpha1.ConsumerStatefulSet)
	}
	return string(v1alpha1.ConsumerDeployment)
}

// subResourcePatch applies a merge patch of a workload's scale as the API
// server does: spec.replicas, only at the patch's metadata.resourceVersion
// when it names one (else a Conflict). The fake client would patch the Scale
// body as an object of its own, which it does not hold.
func (f *fakeAPI) subResourcePatch(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if sub != "scale" {
		return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
	}
	data, err := patch.Data(obj)
	if err != nil {
		return err
	}
	var p struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Spec struct {
			Replicas *int32 `json:"replicas"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(data, &p); err != nil || p.Spec.Replicas == nil {
		return apierrors.NewBadRequest(fmt.Sprintf("scale patch %s: %v", data, err))
	}
	if f.failScale != nil {
		if err := f.failScale(obj); err != nil {
			return err
		}
	}
	cur := obj.DeepCopyObject().(client.Object)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
		return err
	}
	w := scaleWrite{workload: workloadKind(cur) + "/" + cur.GetName(), replicas: *p.Spec.Replicas}
	var rrs v1alpha1.ReplayRequestList
	if err := c.List(ctx, &rrs, client.InNamespace(cur.GetNamespace())); err != nil {
		return err
	}
	for _, rr := range rrs.Items {
		for _, cs := range rr.Status.Consumers {
			w.recorded = w.recorded || (cs.Workload == w.workload && cs.Replicas != nil)
		}
	}
	f.scales = append(f.scales, w)
	if v := p.Metadata.ResourceVersion; v != "" && v != cur.GetResourceVersion() {
		return apierrors.NewConflict(schema.GroupResource{Group: "autoscaling", Resource: "scale"}, obj.GetName(), fmt.Errorf("resourceVersion %s, now %s", v, cur.GetResourceVersion()))
	}
	return c.SubResource("scale").Update(ctx, cur, client.WithSubResourceBody(&autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: *p.Spec.Replicas}}))
}

// replicas is a workload's spec.replicas now; -1 when it is gone.
func (f *fakeAPI) replicas(obj client.Object) int32 {
	f.t.Helper()
	fresh := obj.DeepCopyObject().(client.Object)
	if err := f.c.Get(context.Background(), client.ObjectKeyFromObject(obj), fresh); apierrors.IsNotFound(err) {
		return -1
	} else if err != nil {
		f.t.Fatal(err)
	}
	switch w := fresh.(type) {
	case *appsv1.Deployment:
		return ptr.Deref(w.Spec.Replicas, 1)
	case *appsv1.StatefulSet:
		return ptr.Deref(w.Spec.Replicas, 1)
	}
	f.t.Fatalf("no replicas on %T", fresh)
	return 0
}

// hasJob reports whether the request has a Job of stage.
func (f *fakeAPI) hasJob(rr *v1alpha1.ReplayRequest, stage runnerjob.Stage) bool {
	f.t.Helper()
	err := f.c.Get(context.Background(), types.NamespacedName{Namespace: rr.Namespace, Name: runnerjob.Name(rr, stage)}, &batchv1.Job{})
	if err != nil && !apierrors.IsNotFound(err) {
		f.t.Fatal(err)
	}
	return err == nil
}

// The whole round: recorded with nothing changed, paused and only then the
// Job, the runner's end, a restore that waits for a runner pod still alive,
// then puts back what it paused and leaves what someone else changed since.
func TestUnitPhasesPauseAndRestore(t *testing.T) {
	f, rr, dep, sts := consumerFixture(t, "rewind")
	ctx := context.Background()

	// One pass records both consumers, writes the record, pauses them, and
	// only then creates the Job.
	f.reconcile(rr)
	cur := f.request(rr)
	if len(f.scales) != 2 {
		t.Fatalf("scale writes %+v, want one pause each", f.scales)
	}
	for _, w := range f.scales {
		if w.replicas != 0 || !w.recorded {
			t.Errorf("scale write %+v: a pause to 0, made after the record was written", w)
		}
	}
	if len(cur.Status.Consumers) != 2 {
		t.Fatalf("recorded %+v", cur.Status.Consumers)
	}
	for _, c := range cur.Status.Consumers {
		want := map[string]int32{"Deployment/" + dep.Name: 3, "StatefulSet/" + sts.Name: 2}[c.Workload]
		if c.State != v1alpha1.ConsumerPaused || c.Method != v1alpha1.PauseScale || c.Replicas == nil || *c.Replicas != want {
			t.Errorf("consumer %+v, want paused by scale from %d replicas", c, want)
		}
	}
	if f.replicas(dep) != 0 || f.replicas(sts) != 0 {
		t.Fatalf("paused to %d and %d replicas, want 0", f.replicas(dep), f.replicas(sts))
	}
	if c := conditionOf(cur, v1alpha1.ConditionConsumersPaused); c.Status != metav1.ConditionTrue || c.Reason != state.ReasonPaused || !strings.Contains(c.Message, "Deployment/"+dep.Name+" (3 replicas)") {
		t.Errorf("ConsumersPaused = %+v", c)
	}
	if cur.Status.JobName != runnerjob.Name(cur, runnerjob.StageApply) || !f.hasJob(cur, runnerjob.StageApply) {
		t.Fatalf("no Job after the pause: status.jobName %q", cur.Status.JobName)
	}
	if ev := f.sent(); !hasEvent(ev, "Normal "+v1alpha1.ConditionConsumersPaused+" ") {
		t.Errorf("events %q, want ConsumersPaused", ev)
	}
	// Another pass while the runner runs pauses nothing again.
	f.reconcile(rr)
	if len(f.scales) != 2 {
		t.Errorf("scale writes %+v while the runner runs", f.scales[2:])
	}

	// The runner ends; a second pod of the Job is still alive (a retry the
	// Job controller started as the Job failed, still terminating): nothing is
	// restored under it.
	f.clock.Step(30 * time.Second)
	job := f.job(cur.Namespace, cur.Status.JobName)
	res := testutil.Result(cur.Spec.Group, report.ExitOK, 10)
	res.RunID = runnerjob.RunID(cur)
	f.ran(job, 0, res, "")
	alive := testutil.PodFor(job, job.Name+"-1")
	if err := f.c.Create(ctx, alive); err != nil {
		t.Fatal(err)
	}
	alive.Status.Phase = corev1.PodRunning
	if err := f.c.Status().Update(ctx, alive); err != nil {
		t.Fatal(err)
	}
	// Meanwhile someone scales the StatefulSet by hand: theirs to keep.
	var s appsv1.StatefulSet
	if err := f.c.Get(ctx, client.ObjectKeyFromObject(sts), &s); err != nil {
		t.Fatal(err)
	}
	s.Spec.Replicas = ptr.To[int32](1)
	if err := f.c.Update(ctx, &s); err != nil {
		t.Fatal(err)
	}

	// The pass that sees the Job finished writes no outcome while a pod of
	// it lives (outcomeWait), and restores nothing.
	f.reconcile(rr)
	cur = f.request(rr)
	if c := conditionOf(cur, v1alpha1.ConditionSucceeded); c.Status != "absent" {
		t.Fatalf("Succeeded = %+v while runner pod %s is alive", c, alive.Name)
	}
	if c := conditionOf(cur, v1alpha1.ConditionRunning); c.Reason != state.ReasonWaitingForRunner || !strings.Contains(c.Message, alive.Name) || !strings.Contains(c.Message, "consumers stay paused") {
		t.Fatalf("Running = %+v while runner pod %s is alive", c, alive.Name)
	}
	if f.replicas(dep) != 0 || len(cur.Finalizers) == 0 {
		t.Fatalf("restored (%d replicas) or released (finalizers %v) under a live runner pod", f.replicas(dep), cur.Finalizers)
	}

	// The pod ends: the outcome is recorded; the next pass restores the
	// Deployment to 3, leaves the StatefulSet as its owner set it, and
	// status and a Warning event say so.
	// It ends saying what the first did (the outcome is the last attempt's).
	testutil.Terminated(alive, 0, testutil.Compact(res), f.clock.Now())
	if err := f.c.Status().Update(ctx, alive); err != nil {
		t.Fatal(err)
	}
	f.reconcile(rr)
	cur = f.request(rr)
	if c := conditionOf(cur, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionTrue || c.Reason != string(report.ReasonApplied) {
		t.Fatalf("Succeeded = %+v", c)
	}
	f.sent()
	f.reconcile(rr)
	cur = f.request(rr)
	if f.replicas(dep) != 3 || f.replicas(sts) != 1 {
		t.Fatalf("after the restore: %d and %d replicas, want 3 (restored) and 1 (left as set)", f.replicas(dep), f.replicas(sts))
	}
	states := map[string]v1alpha1.ConsumerState{}
	for _, c := range cur.Status.Consumers {
		states[c.Workload] = c.State
	}
	if states["Deployment/"+dep.Name] != v1alpha1.ConsumerRestored || states["StatefulSet/"+sts.Name] != v1alpha1.ConsumerNotRestored {
		t.Errorf("consumer states %v", states)
	}
	if c := conditionOf(cur, v1alpha1.ConditionConsumersRestored); c.Status != metav1.ConditionTrue || c.Reason != state.ReasonNotRestored {
		t.Errorf("ConsumersRestored = %+v", c)
	}
	if c := conditionOf(cur, v1alpha1.ConditionConsumersPaused); c.Status != metav1.ConditionFalse || c.Reason != state.ReasonRestored {
		t.Errorf("ConsumersPaused = %+v after the restore", c)
	}
	if c := conditionOf(cur, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionTrue {
		t.Errorf("Succeeded = %+v", c)
	}
	if ev := f.sent(); !hasEvent(ev, "Warning "+v1alpha1.ConditionConsumersRestored+" ") {
		t.Errorf("events %q, want a Warning ConsumersRestored", ev)
	}

	// The finalizer goes only in a later pass, once the restore is written.
	for i := 0; i < 3 && len(cur.Finalizers) > 0; i++ {
		f.reconcile(rr)
		cur = f.request(rr)
	}
	if len(cur.Finalizers) != 0 {
		t.Errorf("finalizers %v after the restore", cur.Finalizers)
	}
}

// A consumer that cannot be paused fails the request PauseFailed: no Job is
// made, and what had been paused before it is restored.
func TestUnitPhasesPauseFailureRestores(t *testing.T) {
	f, rr, dep, sts := consumerFixture(t, "half")
	f.failScale = func(obj client.Object) error {
		if obj.GetName() == sts.Name {
			return apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "statefulsets/scale"}, obj.GetName(), fmt.Errorf("not allowed"))
		}
		return nil
	}
	for i := 0; i < 3; i++ {
		f.reconcile(rr)
	}
	cur := f.request(rr)
	if c := conditionOf(cur, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionFalse || c.Reason != state.ReasonPauseFailed || !strings.Contains(c.Message, sts.Name) {
		t.Fatalf("Succeeded = %+v, want PauseFailed naming %s", c, sts.Name)
	}
	if f.hasJob(cur, runnerjob.StageApply) || cur.Status.JobName != "" {
		t.Errorf("a Job was made (status.jobName %q) though a consumer could not be paused", cur.Status.JobName)
	}
	if got := f.replicas(dep); got != 3 || len(f.scales) != 2 || f.scales[0].replicas != 0 || f.scales[1].replicas != 3 {
		t.Errorf("the Deployment is at %d replicas after writes %+v, want paused and put back to 3", got, f.scales)
	}
	if f.replicas(sts) != 2 {
		t.Errorf("the StatefulSet is at %d replicas, want 2 (never paused)", f.replicas(sts))
	}
	if c := conditionOf(cur, v1alpha1.ConditionConsumersRestored); c.Status != metav1.ConditionTrue {
		t.Errorf("ConsumersRestored = %+v", c)
	}
	if len(cur.Finalizers) != 0 {
		t.Errorf("finalizers %v after the request ended", cur.Finalizers)
	}
}

// A consumer missing at the record fails the request with nothing changed:
// no record kept, no workload touched, no Job.
func TestUnitPhasesMissingConsumerChangesNothing(t *testing.T) {
	dep := testutil.Deployment("shop", "here", 3, nil)
	rr := testutil.MakeRequest("shop", "missing").UID("rr-uid").Created(t0).ShiftBy(-10).Wait(time.Minute).
		Consumers(v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerDeployment, Name: dep.Name}, v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerDeployment, Name: "gone"}).Obj()
	f := newFakeAPI(t, fakeOptions(), rr, dep)
	f.reconcile(rr)
	cur := f.request(rr)
	if c := conditionOf(cur, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionFalse || c.Reason != state.ReasonPauseFailed || !strings.Contains(c.Message, "nothing was changed") {
		t.Fatalf("Succeeded = %+v", c)
	}
	if len(cur.Status.Consumers) != 0 || f.replicas(dep) != 3 || f.hasJob(cur, runnerjob.StageApply) {
		t.Errorf("consumers %+v, replicas %d, Job %v: something changed", cur.Status.Consumers, f.replicas(dep), f.hasJob(cur, runnerjob.StageApply))
	}
}

// A runner that never started fails the request (ImagePullFailed) while its
// pod may still be there: the consumers are restored only once it has
// gone, and then as recorded.
func TestUnitPhasesRestoreAfterStartFailure(t *testing.T) {
	f, rr, dep, sts := consumerFixture(t, "pull")
	ctx := context.Background()
	f.reconcile(rr)
	cur := f.request(rr)
	if f.replicas(dep) != 0 {
		t.Fatalf("not paused: %d replicas", f.replicas(dep))
	}
	job := f.job(cur.Namespace, cur.Status.JobName)
	pod := testutil.PodFor(job, job.Name+"-0")
	if err := f.c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodPending
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: state.ContainerName, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull"}}}}
	if err := f.c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	f.reconcile(rr)
	f.clock.SetTime(t0.Add(f.r.Options.StartFailAfter))
	f.reconcile(rr)
	cur = f.request(rr)
	if c := conditionOf(cur, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionFalse || c.Reason != state.ReasonImagePullFailed {
		t.Fatalf("Succeeded = %+v", c)
	}
	f.reconcile(rr)
	cur = f.request(rr)
	if c := conditionOf(cur, v1alpha1.ConditionConsumersRestored); c.Status != metav1.ConditionFalse || c.Reason != state.ReasonWaitingForRunner || !strings.Contains(c.Message, pod.Name) {
		t.Errorf("ConsumersRestored = %+v, want False/WaitingForRunner naming %s", c, pod.Name)
	}
	if f.replicas(dep) != 0 || f.replicas(sts) != 0 || len(cur.Finalizers) == 0 {
		t.Fatalf("restored (%d, %d replicas) or released (finalizers %v) while the runner pod is there", f.replicas(dep), f.replicas(sts), cur.Finalizers)
	}
	// The Job controller removes the pod of the suspended Job.
	if err := f.c.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	f.reconcile(rr)
	cur = f.request(rr)
	if f.replicas(dep) != 3 || f.replicas(sts) != 2 {
		t.Errorf("after the pod went: %d and %d replicas, want 3 and 2 as recorded", f.replicas(dep), f.replicas(sts))
	}
	if c := conditionOf(cur, v1alpha1.ConditionConsumersRestored); c.Status != metav1.ConditionTrue || c.Reason != state.ReasonRestored {
		t.Errorf("ConsumersRestored = %+v", c)
	}
	if c := conditionOf(cur, v1alpha1.ConditionSucceeded); c.Reason != state.ReasonImagePullFailed {
		t.Errorf("the restore changed the outcome: Succeeded = %+v", c)
	}
}

// A restore the API server refuses is said in status (RestoreFailed), the
// error retried by the controller, and the finalizer kept; it goes once
// the restore is written.
func TestUnitPhasesRestoreFails(t *testing.T) {
	f, rr, dep, sts := consumerFixture(t, "refused")
	f.reconcile(rr)
	cur := f.request(rr)
	res := testutil.Result(cur.Spec.Group, report.ExitOK, 10)
	res.RunID = runnerjob.RunID(cur)
	f.ran(f.job(cur.Namespace, cur.Status.JobName), 0, res, "")
	f.reconcile(rr)
	f.failScale = func(obj client.Object) error {
		if obj.GetName() == dep.Name {
			return apierrors.NewServiceUnavailable("etcd is away")
		}
		return nil
	}
	if _, err := f.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(rr)}); err == nil {
		t.Fatal("a failed restore returned no error: it would not be retried")
	}
	cur = f.request(rr)
	if c := conditionOf(cur, v1alpha1.ConditionConsumersRestored); c.Status != metav1.ConditionFalse || c.Reason != state.ReasonRestoreFailed || !strings.Contains(c.Message, "etcd is away") {
		t.Errorf("ConsumersRestored = %+v, want False/RestoreFailed with the error", c)
	}
	if f.replicas(dep) != 0 || len(cur.Finalizers) == 0 {
		t.Fatalf("%d replicas, finalizers %v after a refused restore", f.replicas(dep), cur.Finalizers)
	}
	f.failScale = nil
	for i := 0; i < 3 && len(cur.Finalizers) > 0; i++ {
		f.reconcile(rr)
		cur = f.request(rr)
	}
	if f.replicas(dep) != 3 || f.replicas(sts) != 2 || len(cur.Finalizers) != 0 {
		t.Errorf("after the retry: %d and %d replicas, finalizers %v; want 3, 2 and none", f.replicas(dep), f.replicas(sts), cur.Finalizers)
	}
}

// A request with paused consumers deleted before its runner started: its
// Job is deleted, and, no runner pod being left, the consumers go back as
// recorded before the request goes.
func TestUnitPhasesDeletedRestoresConsumers(t *testing.T) {
	f, rr, dep, sts := consumerFixture(t, "gone")
	ctx := context.Background()
	f.reconcile(rr)
	cur := f.request(rr)
	jobName := cur.Status.JobName
	if f.replicas(dep) != 0 || jobName == "" {
		t.Fatalf("not paused and started: %d replicas, job %q", f.replicas(dep), jobName)
	}
	f.sent()
	if err := f.c.Delete(ctx, cur); err != nil {
		t.Fatal(err)
	}
	f.reconcile(rr)
	var j batchv1.Job
	if err := f.c.Get(ctx, types.NamespacedName{Namespace: "shop", Name: jobName}, &j); !apierrors.IsNotFound(err) {
		t.Errorf("the deleted request's Job: %v, want it deleted", err)
	}
	if f.replicas(dep) != 3 || f.replicas(sts) != 2 {
		t.Errorf("%d and %d replicas, want 3 and 2 restored", f.replicas(dep), f.replicas(sts))
	}
	var after v1alpha1.ReplayRequest
	if err := f.c.Get(ctx, client.ObjectKeyFromObject(rr), &after); !apierrors.IsNotFound(err) {
		t.Errorf("the request stays (%v), finalizers %v", err, after.Finalizers)
	}
	if ev := f.sent(); !hasEvent(ev, "Normal "+v1alpha1.ConditionConsumersRestored+" ") {
		t.Errorf("events %q, want ConsumersRestored", ev)
	}
}
