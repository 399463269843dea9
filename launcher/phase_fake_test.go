package launcher

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/grouplock"
	"github.com/kafka-replay/kafka-replay/launcher/internal/lifecycle"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// The phase handlers, run by Reconcile over controller-runtime's fake
// client and a fake clock: what a pass reads, writes and sends, in
// milliseconds and without an API server (go test -short). Time moves only
// when a test moves it, so timeouts are tested at their deadline, not by
// sleeping past it. The envtest suites stay as the integration rung: the
// real API server's validation, RBAC, caches and watches.

// fakeAPI is the launcher's reconciler over a fake API server.
type fakeAPI struct {
	t      *testing.T
	c      client.WithWatch
	clock  *clocktesting.FakeClock
	events *events.FakeRecorder
	logs   *testutil.RunnerLogs
	r      *ReplayRequestReconciler
	uids   int
	// scales is every write of a workload's scale, in order
	// (subResourcePatch); failScale, when set, may fail one instead.
	scales    []scaleWrite
	failScale func(obj client.Object) error
	// failCreate, when set, may refuse a create as the API server would.
	failCreate func(obj client.Object) error
	// deletedAt is the deletionTimestamp, by the fake clock, of each
	// object deleted while it had finalizers (delete).
	deletedAt map[types.NamespacedName]time.Time
}

// newFakeAPI serves objs, with the launcher's queue-key indexes and the
// status subresources the launcher writes through, to a reconciler with
// opts whose clock starts at t0.
func newFakeAPI(t *testing.T, opts Options, objs ...client.Object) *fakeAPI {
	t.Helper()
	f := &fakeAPI{t: t, clock: clocktesting.NewFakeClock(t0), events: events.NewFakeRecorder(1000), logs: testutil.NewRunnerLogs()}
	b := fake.NewClientBuilder().WithScheme(NewScheme()).WithObjects(objs...).
		WithStatusSubresource(&v1alpha1.ReplayRequest{}, &batchv1.Job{}, &corev1.Pod{}).
		WithInterceptorFuncs(interceptor.Funcs{Create: f.create, SubResourcePatch: f.subResourcePatch, Delete: f.delete, Get: f.get, List: f.list,
			Update: f.update, SubResourceUpdate: f.subResourceUpdate})
	for _, q := range queueKeyIndexes {
		b = b.WithIndex(q.obj, indexQueueKey, q.key)
	}
	f.c = b.Build()
	records := record.NewCollector(f.c, f.c, f.logs)
	records.TailLines, records.TailBytes = opts.LogTailLines, opts.LogTailBytes
	f.r = &ReplayRequestReconciler{
		Client: f.c, APIReader: f.c, Recorder: f.events, Logs: f.logs, Records: records,
		Options: opts, Now: f.clock.Now, queue: grouplock.NewQueue(),
	}
	return f
}

// fakeOptions are the launcher's defaults with a test image.
func fakeOptions() Options {
	o := DefaultOptions()
	o.RunnerImage = "kafka-replay/runner:test"
	return o
}

// create stamps what the API server would on a new object: a UID and the
// creation time, by the fake clock.
func (f *fakeAPI) create(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
	if obj.GetUID() == "" {
		f.uids++
		obj.SetUID(types.UID(fmt.Sprintf("uid-%d", f.uids)))
	}
	obj.SetCreationTimestamp(metav1.NewTime(f.clock.Now()))
	if f.failCreate != nil {
		if err := f.failCreate(obj); err != nil {
			return err
		}
	}
	return c.Create(ctx, obj, opts...)
}

// delete stamps what the API server would on an object deleted while it has
// finalizers: a deletionTimestamp of now, by the fake clock, plus a pod's
// grace period (the fake client stamps the wall clock, without the grace),
// which get and list then show.
func (f *fakeAPI) delete(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
	var grace time.Duration
	if pod, ok := obj.(*corev1.Pod); ok {
		var cur corev1.Pod
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), &cur); err == nil && cur.Spec.TerminationGracePeriodSeconds != nil {
			grace = time.Duration(*cur.Spec.TerminationGracePeriodSeconds) * time.Second
		}
		do := (&client.DeleteOptions{}).ApplyOptions(opts)
		if do.GracePeriodSeconds != nil {
			grace = time.Duration(*do.GracePeriodSeconds) * time.Second
		}
	}
	if err := c.Delete(ctx, obj, opts...); err != nil {
		return err
	}
	if f.deletedAt == nil {
		f.deletedAt = map[types.NamespacedName]time.Time{}
	}
	f.deletedAt[client.ObjectKeyFromObject(obj)] = f.clock.Now().Add(grace)
	return nil
}

func (f *fakeAPI) get(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	f.stampDeletion(obj)
	return nil
}

func (f *fakeAPI) list(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.List(ctx, list, opts...); err != nil {
		return err
	}
	return meta.EachListItem(list, func(o runtime.Object) error {
		if obj, ok := o.(client.Object); ok {
			f.stampDeletion(obj)
		}
		return nil
	})
}

// update and subResourceUpdate write back the deletionTimestamp the fake
// client holds, which is immutable, in place of the one get showed.
func (f *fakeAPI) update(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
	f.unstampDeletion(ctx, c, obj)
	return c.Update(ctx, obj, opts...)
}

func (f *fakeAPI) subResourceUpdate(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	f.unstampDeletion(ctx, c, obj)
	return c.SubResource(sub).Update(ctx, obj, opts...)
}

func (f *fakeAPI) unstampDeletion(ctx context.Context, c client.Reader, obj client.Object) {
	if obj.GetDeletionTimestamp() == nil {
		return
	}
	held, ok := obj.DeepCopyObject().(client.Object)
	if ok && c.Get(ctx, client.ObjectKeyFromObject(obj), held) == nil {
		obj.SetDeletionTimestamp(held.GetDeletionTimestamp())
	}
}

func (f *fakeAPI) stampDeletion(obj client.Object) {
	if obj.GetDeletionTimestamp() == nil {
		return
	}
	if at, ok := f.deletedAt[client.ObjectKeyFromObject(obj)]; ok {
		obj.SetDeletionTimestamp(&metav1.Time{Time: at})
	}
}

// reconcile runs one pass over rr.
func (f *fakeAPI) reconcile(rr *v1alpha1.ReplayRequest) reconcile.Result {
	f.t.Helper()
	res, err := f.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(rr)})
	if err != nil {
		f.t.Fatalf("reconcile %s: %v", rr.Name, err)
	}
	return res
}

// request reads rr as it is now.
func (f *fakeAPI) request(rr *v1alpha1.ReplayRequest) *v1alpha1.ReplayRequest {
	f.t.Helper()
	var cur v1alpha1.ReplayRequest
	if err := f.c.Get(context.Background(), client.ObjectKeyFromObject(rr), &cur); err != nil {
		f.t.Fatalf("get request %s: %v", rr.Name, err)
	}
	return &cur
}

// job reads the Job called name in namespace ns.
func (f *fakeAPI) job(ns, name string) *batchv1.Job {
	f.t.Helper()
	var j batchv1.Job
	if err := f.c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, &j); err != nil {
		f.t.Fatalf("get Job %s: %v", name, err)
	}
	return &j
}

// ran plays the Job controller and the kubelet: one attempt of job that
// ended with code and the result r (framed in its log, compact in its
// termination message), then the Job Complete, or Failed with failReason.
func (f *fakeAPI) ran(job *batchv1.Job, code int32, r *report.Result, failReason string) {
	f.t.Helper()
	ctx := context.Background()
	if err := testutil.Attempt(ctx, f.c, f.logs, job, job.Name+"-0", code, r, f.clock.Now()); err != nil {
		f.t.Fatal(err)
	}
	cur := f.job(job.Namespace, job.Name)
	if failReason == "" {
		testutil.Complete(cur, f.clock.Now())
	} else {
		testutil.Fail(cur, failReason, f.clock.Now())
	}
	if err := f.c.Status().Update(ctx, cur); err != nil {
		f.t.Fatal(err)
	}
}

// sent is every event sent so far, as "type reason message".
func (f *fakeAPI) sent() []string {
	var out []string
	for {
		select {
		case e := <-f.events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func hasEvent(events []string, prefix string) bool {
	for _, e := range events {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}

func conditionOf(rr *v1alpha1.ReplayRequest, typ string) metav1.Condition {
	if c := meta.FindStatusCondition(rr.Status.Conditions, typ); c != nil {
		return *c
	}
	return metav1.Condition{Type: typ, Status: "absent"}
}

// A request runs to its end: the first pass accepts it, takes the group,
// puts the finalizer on and creates its Job, and says so after its one
// status write; once the Job has finished, the next pass records the
// outcome and the ReplayRecord, releases the Job as history and drops the
// finalizer.
func TestUnitPhasesRunARequest(t *testing.T) {
	rr := testutil.MakeRequest("shop", "rewind").UID("rr-uid").Created(t0).ShiftBy(-10).Obj()
	f := newFakeAPI(t, fakeOptions(), rr)

	if res := f.reconcile(rr); res.RequeueAfter <= 0 || res.RequeueAfter > f.r.Options.StartTimeout {
		t.Errorf("RequeueAfter %s, want the start timeout's deadline (%s) at most", res.RequeueAfter, f.r.Options.StartTimeout)
	}
	cur := f.request(rr)
	name := runnerjob.Name(cur, runnerjob.StageApply)
	if cur.Status.JobName != name || cur.Status.ResolvedTarget != "shift:-10" || cur.Status.Phase != v1alpha1.PhaseRunning {
		t.Fatalf("after one pass: job %q target %q phase %s", cur.Status.JobName, cur.Status.ResolvedTarget, cur.Status.Phase)
	}
	if c := conditionOf(cur, v1alpha1.ConditionRunning); c.Status != metav1.ConditionTrue || c.Reason != state.ReasonJobCreated {
		t.Errorf("Running = %+v", c)
	}
	if c := conditionOf(cur, v1alpha1.ConditionAccepted); c.Status != metav1.ConditionTrue || c.Reason != state.ReasonAccepted {
		t.Errorf("Accepted = %+v", c)
	}
	if len(cur.Finalizers) != 1 || cur.Finalizers[0] != Finalizer {
		t.Errorf("finalizers %v, want %s before the Job", cur.Finalizers, Finalizer)
	}
	job := f.job(cur.Namespace, name)
	if !lifecycle.ControlledBy(job, cur) || !job.CreationTimestamp.Time.Equal(t0) {
		t.Fatalf("Job %s: owners %+v, created %s", job.Name, job.OwnerReferences, job.CreationTimestamp)
	}
	if ev := f.sent(); !hasEvent(ev, "Normal "+state.ReasonAccepted+" ") || !hasEvent(ev, "Normal "+state.ReasonJobCreated+" ") {
		t.Errorf("events %q, want Accepted and JobCreated", ev)
	}
	// A second pass before anything happens changes nothing.
	before := cur.ResourceVersion
	f.reconcile(rr)
	if cur = f.request(rr); cur.ResourceVersion != before {
		t.Errorf("an idle pass wrote the request (resourceVersion %s -> %s)", before, cur.ResourceVersion)
	}

	f.clock.Step(30 * time.Second)
	res := testutil.Result(cur.Spec.Group, report.ExitOK, 10, 20, 30)
	res.RunID = runnerjob.RunID(cur)
	f.ran(job, 0, res, "")
	f.reconcile(rr)
	cur = f.request(rr)
	if c := conditionOf(cur, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionTrue || c.Reason != string(report.ReasonApplied) {
		t.Fatalf("Succeeded = %+v", c)
	}
	if c := conditionOf(cur, v1alpha1.ConditionFinished); c.Status != metav1.ConditionTrue {
		t.Errorf("Finished = %+v", c)
	}
	if r := cur.Status.Result; r == nil || r.Totals.Applied != 3 || r.RunID != res.RunID || cur.Status.UndoCommand == "" {
		t.Errorf("result %+v, undoCommand %q", r, cur.Status.UndoCommand)
	}
	if len(cur.Finalizers) != 0 {
		t.Errorf("finalizers %v after the finish", cur.Finalizers)
	}
	job = f.job(cur.Namespace, name)
	if metav1.GetControllerOf(job) != nil || job.Annotations[v1alpha1.AnnotationOutcome] != v1alpha1.OutcomeSucceeded {
		t.Errorf("the Job is not released as recorded history: owners %+v, annotations %v", job.OwnerReferences, job.Annotations)
	}
	var rec v1alpha1.ReplayRecord
	if err := f.c.Get(context.Background(), types.NamespacedName{Namespace: "shop", Name: name}, &rec); err != nil || !rec.Complete || rec.RunID != res.RunID {
		t.Errorf("ReplayRecord %s: %v, complete %v, run %q", name, err, rec.Complete, rec.RunID)
	}
	if ev := f.sent(); !hasEvent(ev, "Normal "+string(report.ReasonApplied)+" ") {
		t.Errorf("events %q, want Applied", ev)
	}
}

// A runner that never gets a pod fails the request at the start timeout,
// not a moment before: each pass until then asks to be woken at the
// deadline. The Job is stopped (suspended) and kept as history, with its
// outcome.
func TestUnitPhasesStartTimeout(t *testing.T) {
	rr := testutil.MakeRequest("shop", "no-pod").UID("rr-uid").Created(t0).Obj()
	f := newFakeAPI(t, fakeOptions(), rr)
	timeout := f.r.Options.StartTimeout

	if res := f.reconcile(rr); res.RequeueAfter != timeout {
		t.Fatalf("RequeueAfter %s at the Job's creation, want %s", res.RequeueAfter, timeout)
	}
	f.clock.Step(timeout - time.Second)
	if res := f.reconcile(rr); res.RequeueAfter != time.Second {
		t.Fatalf("RequeueAfter %s a second before the deadline, want 1s", res.RequeueAfter)
	}
	if cur := f.request(rr); cur.Status.Phase != v1alpha1.PhaseRunning {
		t.Fatalf("phase %s before the start timeout", cur.Status.Phase)
	}
	f.clock.Step(time.Second)
	f.reconcile(rr)
	cur := f.request(rr)
	c := conditionOf(cur, v1alpha1.ConditionSucceeded)
	if c.Status != metav1.ConditionFalse || c.Reason != state.ReasonPodNotStarted || !strings.Contains(c.Message, "start timeout") {
		t.Fatalf("Succeeded = %+v", c)
	}
	if cur.Status.CompletionTime == nil || !cur.Status.CompletionTime.Time.Equal(t0.Add(timeout)) {
		t.Errorf("completionTime %v, want the deadline %s", cur.Status.CompletionTime, t0.Add(timeout))
	}
	job := f.job(cur.Namespace, cur.Status.JobName)
	if job.Spec.Suspend == nil || !*job.Spec.Suspend || job.Annotations[v1alpha1.AnnotationReason] != state.ReasonPodNotStarted {
		t.Errorf("Job not stopped and recorded: suspend %v, annotations %v", job.Spec.Suspend, job.Annotations)
	}
}

// A pod that cannot pull its image fails the request once it has waited
// StartFailAfter, before the start timeout; until then status says what it
// waits for, once (one event), and the pass asks to be woken when it is
// due.
func TestUnitPhasesImagePullFailure(t *testing.T) {
	rr := testutil.MakeRequest("shop", "bad-image").UID("rr-uid").Created(t0).Obj()
	f := newFakeAPI(t, fakeOptions(), rr)
	failAfter := f.r.Options.StartFailAfter
	f.reconcile(rr)
	cur := f.request(rr)
	job := f.job(cur.Namespace, cur.Status.JobName)
	pod := testutil.PodFor(job, job.Name+"-0")
	ctx := context.Background()
	if err := f.c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodPending
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: state.ContainerName, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "kafka-replay/runner:test"`}}}}
	if err := f.c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	f.sent()

	f.clock.Step(10 * time.Second)
	if res := f.reconcile(rr); res.RequeueAfter != failAfter-10*time.Second {
		t.Errorf("RequeueAfter %s, want when the pull failure is due (%s)", res.RequeueAfter, failAfter-10*time.Second)
	}
	cur = f.request(rr)
	if c := conditionOf(cur, v1alpha1.ConditionRunning); c.Reason != state.ReasonPodWaiting || !strings.Contains(c.Message, "ImagePullBackOff") {
		t.Fatalf("Running = %+v", c)
	}
	if ev := f.sent(); len(ev) != 1 || !hasEvent(ev, "Warning "+state.ReasonPodWaiting+" ") {
		t.Errorf("events %q, want one PodWaiting warning", ev)
	}
	f.clock.Step(time.Second)
	f.reconcile(rr)
	if ev := f.sent(); len(ev) != 0 {
		t.Errorf("a pass that changed nothing sent %q", ev)
	}

	f.clock.SetTime(t0.Add(failAfter))
	f.reconcile(rr)
	cur = f.request(rr)
	if c := conditionOf(cur, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionFalse || c.Reason != state.ReasonImagePullFailed {
		t.Fatalf("Succeeded = %+v", c)
	}
}

// A Manual request plans, shows its plan, and expires at expiresAt when
// nobody decides: the pass that shows the plan asks to be woken then (no
// event would come), and nothing is applied.
func TestUnitPhasesApprovalExpires(t *testing.T) {
	rr := testutil.MakeRequest("shop", "manual").UID("rr-uid").Created(t0).ShiftBy(-10).Manual().ApprovalTimeout(time.Hour).Obj()
	f := newFakeAPI(t, fakeOptions(), rr)

	f.reconcile(rr)
	cur := f.request(rr)
	planJob := f.job(cur.Namespace, runnerjob.Name(cur, runnerjob.StagePlan))
	if cur.Status.JobName != "" || planJob.Labels[v1alpha1.LabelStage] != string(runnerjob.StagePlan) {
		t.Fatalf("status.jobName %q, planning Job labels %v", cur.Status.JobName, planJob.Labels)
	}

	cur, res := f.planned(rr)
	expires := cur.Status.Plan.ExpiresAt.Time
	if !expires.Equal(f.clock.Now().Add(time.Hour)) || res.RequeueAfter != time.Hour {
		t.Fatalf("expiresAt %s, RequeueAfter %s; want an hour from the plan (%s)", expires, res.RequeueAfter, f.clock.Now())
	}

	f.clock.SetTime(expires.Add(-time.Second))
	f.reconcile(rr)
	if cur = f.request(rr); cur.Status.Phase != v1alpha1.PhaseAwaitingApproval {
		t.Fatalf("phase %s a second before expiresAt", cur.Status.Phase)
	}
	f.clock.SetTime(expires)
	f.reconcile(rr)
	cur = f.request(rr)
	if c := conditionOf(cur, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionFalse || c.Reason != state.ReasonExpired {
		t.Fatalf("Succeeded = %+v", c)
	}
	if cur.Status.CompletionTime == nil || cur.Status.CompletionTime.Before(cur.Status.Plan.ExpiresAt) {
		t.Errorf("expired at %v, before expiresAt %v", cur.Status.CompletionTime, cur.Status.Plan.ExpiresAt)
	}
	var j batchv1.Job
	if err := f.c.Get(context.Background(), types.NamespacedName{Namespace: "shop", Name: runnerjob.Name(cur, runnerjob.StageApply)}, &j); !apierrors.IsNotFound(err) {
		t.Errorf("an expired plan made an apply Job: %v", err)
	}
}

// Two requests of one group: the second waits, says for what, and starts
// when the first has finished and gone, on the pass its wake brings.
func TestUnitPhasesOneReplayPerGroup(t *testing.T) {
	first := testutil.MakeRequest("shop", "first").UID("uid-first").Created(t0).Obj()
	second := testutil.MakeRequest("shop", "second").UID("uid-second").Created(t0.Add(time.Second)).Bootstrap("SSL://KAFKA.shop.svc:9092").Obj()
	f := newFakeAPI(t, fakeOptions(), first, second)

	f.reconcile(first)
	f.reconcile(second)
	cur := f.request(second)
	if c := conditionOf(cur, v1alpha1.ConditionAccepted); c.Reason != state.ReasonWaitingForGroup || cur.Status.JobName != "" {
		t.Fatalf("the second request of the group, spelled otherwise: Accepted %+v, job %q", c, cur.Status.JobName)
	}
	done := f.request(first)
	res := testutil.Result(done.Spec.Group, report.ExitOK, 5)
	res.RunID = runnerjob.RunID(done)
	f.ran(f.job(done.Namespace, done.Status.JobName), 0, res, "")
	f.reconcile(first)
	f.reconcile(second)
	if cur = f.request(second); cur.Status.JobName == "" {
		t.Fatalf("the second did not start once the first finished: %+v", conditionOf(cur, v1alpha1.ConditionAccepted))
	}
}

// A request deleted while its runner runs: the pass deletes its Job and
// keeps the request (its finalizer) while the runner pod may still commit;
// once the pod has ended, the request goes.
func TestUnitPhasesDeletedWhileRunning(t *testing.T) {
	rr := testutil.MakeRequest("shop", "rewind").UID("rr-uid").Created(t0).Obj()
	f := newFakeAPI(t, fakeOptions(), rr)
	ctx := context.Background()
	f.reconcile(rr)
	cur := f.request(rr)
	job := f.job(cur.Namespace, cur.Status.JobName)
	pod := testutil.PodFor(job, job.Name+"-0")
	if err := f.c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: state.ContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}}}
	if err := f.c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}

	if err := f.c.Delete(ctx, cur); err != nil {
		t.Fatal(err)
	}
	f.reconcile(rr)
	var gone batchv1.Job
	if err := f.c.Get(ctx, client.ObjectKeyFromObject(job), &gone); !apierrors.IsNotFound(err) {
		t.Fatalf("the deleted request's running Job: %v, want it deleted", err)
	}
	if cur = f.request(rr); cur.DeletionTimestamp == nil || len(cur.Finalizers) != 1 {
		t.Fatalf("the request went while its runner pod runs: finalizers %v", cur.Finalizers)
	}

	testutil.Terminated(pod, 143, "", f.clock.Now())
	if err := f.c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	f.reconcile(rr)
	var after v1alpha1.ReplayRequest
	if err := f.c.Get(ctx, client.ObjectKeyFromObject(rr), &after); !apierrors.IsNotFound(err) {
		t.Fatalf("the request stays once its runner has ended: %v, finalizers %v", err, after.Finalizers)
	}
}

// A request re-created with the same name and spec (a GitOps re-sync) finds
// the earlier run's Job, kept as history, and ends AlreadyRan: nothing runs
// again.
func TestUnitPhasesAlreadyRan(t *testing.T) {
	rr := testutil.MakeRequest("shop", "rewind").UID("rr-uid").Created(t0).ShiftBy(-10).Obj()
	f := newFakeAPI(t, fakeOptions(), rr)
	ctx := context.Background()
	f.reconcile(rr)
	cur := f.request(rr)
	res := testutil.Result(cur.Spec.Group, report.ExitOK, 10)
	res.RunID = runnerjob.RunID(cur)
	f.ran(f.job(cur.Namespace, cur.Status.JobName), 0, res, "")
	f.reconcile(rr)
	if err := f.c.Delete(ctx, f.request(rr)); err != nil {
		t.Fatal(err)
	}

	f.clock.Step(time.Hour)
	again := testutil.MakeRequest("shop", "rewind").UID("rr-uid-2").ShiftBy(-10).Obj()
	if err := f.c.Create(ctx, again); err != nil {
		t.Fatal(err)
	}
	f.reconcile(again)
	cur = f.request(again)
	c := conditionOf(cur, v1alpha1.ConditionSucceeded)
	if c.Status != metav1.ConditionTrue || c.Reason != state.ReasonAlreadyRan || !strings.Contains(c.Message, runnerjob.Name(cur, runnerjob.StageApply)) {
		t.Fatalf("Succeeded = %+v", c)
	}
	var jobs batchv1.JobList
	if err := f.c.List(ctx, &jobs, client.InNamespace("shop")); err != nil || len(jobs.Items) != 1 {
		t.Fatalf("Jobs %d (%v), want the earlier one only", len(jobs.Items), err)
	}
}
