package launcher

import (
	"context"
	"errors"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/grouplock"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// wakeWaiting over the fake client: which waiting entries an object of a
// group wakes when it stops holding the group or is deleted, and which it
// leaves alone. The handler is called directly with the events a watch
// would deliver; nothing waits on a watch or a timer.

// wakeFixture is a group ("orders" on kafka.shop.svc:9092) held by the
// request "running" and its apply Job, with waiting requests in two
// namespaces, a waiting runbook Job, and requests and a group that must
// never be woken.
type wakeFixture struct {
	f       *fakeAPI
	running *v1alpha1.ReplayRequest
	job     *batchv1.Job // running's apply Job, as the cache shows it
	runbook *batchv1.Job // a trusted runbook Job, suspended, waiting
}

const wakeServers = "kafka.shop.svc:9092"

func newWakeFixture(t *testing.T) *wakeFixture {
	t.Helper()
	ctx := context.Background()
	f := newFakeAPI(t, fakeOptions())
	running := testutil.MakeRequest("shop", "running").UID("u-running").ShiftBy(-10).Resolved("shift:-10").Obj()
	job, err := BuildJob(running, runnerjob.StageApply, f.r.Options)
	if err != nil {
		t.Fatal(err)
	}
	running.Status.JobName = job.Name
	finished := testutil.MakeRequest("shop", "finished").Obj()
	finished.Status.JobName = "finished-1"
	finished.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionSucceeded, Status: metav1.ConditionTrue, Reason: "Applied"}}
	awaiting := testutil.MakeRequest("shop", "awaiting").Manual().Obj()
	awaiting.Status.Plan = &v1alpha1.PlanSummary{}
	// Deleted while it waited: a finalizer keeps it, with its
	// deletionTimestamp, and it has left the queue.
	deleting := testutil.MakeRequest("shop", "deleting").Obj()
	deleting.Finalizers = []string{"test/keep"}
	objs := []client.Object{
		running, job, finished, awaiting, deleting,
		testutil.MakeRequest("shop", "wait-a").Obj(),
		// The lock is across namespaces: the same servers and group.
		testutil.MakeRequest("other", "wait-b").Bootstrap(wakeServers).Obj(),
		// Another group on the same servers, and the same group name on
		// other servers: other locks.
		testutil.MakeRequest("shop", "payments").Group("payments").Obj(),
		testutil.MakeRequest("other", "elsewhere").Obj(),
	}
	for _, o := range objs {
		if err := f.c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, rr := range []*v1alpha1.ReplayRequest{running, finished, awaiting} {
		st := rr.Status
		cur := f.request(rr)
		cur.Status = st
		if err := f.c.Status().Update(ctx, cur); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.c.Delete(ctx, deleting); err != nil {
		t.Fatal(err)
	}
	return &wakeFixture{f: f, running: f.request(running), job: f.job("shop", job.Name), runbook: f.runbookJob("nightly", true)}
}

// woken is every request the handler h enqueued for the events fire
// sends, as "namespace/name", sorted.
func woken(t *testing.T, h handler.TypedEventHandler[client.Object, reconcile.Request], fire func(context.Context, handler.TypedEventHandler[client.Object, reconcile.Request], workqueue.TypedRateLimitingInterface[reconcile.Request])) []string {
	t.Helper()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	fire(context.Background(), h, q)
	var out []string
	for q.Len() > 0 {
		item, _ := q.Get()
		out = append(out, item.String())
		q.Done(item)
	}
	slices.Sort(out)
	return out
}

func update(old, cur client.Object) func(context.Context, handler.TypedEventHandler[client.Object, reconcile.Request], workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	return func(ctx context.Context, h handler.TypedEventHandler[client.Object, reconcile.Request], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		h.Update(ctx, event.UpdateEvent{ObjectOld: old, ObjectNew: cur}, q)
	}
}

func deleted(o client.Object, unknown bool) func(context.Context, handler.TypedEventHandler[client.Object, reconcile.Request], workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	return func(ctx context.Context, h handler.TypedEventHandler[client.Object, reconcile.Request], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		h.Delete(ctx, event.DeleteEvent{Object: o, DeleteStateUnknown: unknown}, q)
	}
}

// The waiting requests of the group: in both namespaces, and none that has
// started, finished, awaits a person's decision, is being deleted, or
// moves another group.
var wakeRequests = []string{"other/wait-b", "shop/wait-a"}

func TestUnitWakeWaitingRequests(t *testing.T) {
	x := newWakeFixture(t)
	h := wakeWaiting(x.f.c, grouplock.EntryRequest)
	now := metav1.NewTime(t0)

	jobEnded := x.job.DeepCopy()
	testutil.Complete(jobEnded, t0)
	jobFailed := x.job.DeepCopy()
	testutil.Fail(jobFailed, "BackoffLimitExceeded", t0)
	jobSuspended := x.job.DeepCopy()
	jobSuspended.Spec.Suspend = ptr.To(true)
	jobDeleting := x.job.DeepCopy()
	jobDeleting.DeletionTimestamp = &now
	jobStarted := x.job.DeepCopy()
	testutil.Started(jobStarted, t0)

	pod := testutil.PodFor(x.job, x.job.Name+"-0")
	pod.Status.Phase = corev1.PodRunning
	podDone := pod.DeepCopy()
	podDone.Status.Phase = corev1.PodSucceeded
	podFailed := pod.DeepCopy()
	podFailed.Status.Phase = corev1.PodFailed
	podTerminating := pod.DeepCopy()
	podTerminating.DeletionTimestamp = &now
	podPending := pod.DeepCopy()
	podPending.Status.Phase = corev1.PodPending

	rrDone := x.running.DeepCopy()
	rrDone.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionSucceeded, Status: metav1.ConditionFalse, Reason: "Failed"}}
	// Finished with its consumers still paused: the group stays held
	// until they are restored.
	rrHeld := rrDone.DeepCopy()
	rrHeld.Status.Consumers = []v1alpha1.ConsumerStatus{{State: v1alpha1.ConsumerPaused}}
	rrRestored := rrHeld.DeepCopy()
	rrRestored.Status.Consumers[0].State = v1alpha1.ConsumerRestored
	// A waiting request deleted: it leaves the queue, so those after it
	// may now be first; it is not woken itself (its own controller sees
	// its deletion).
	waitA := x.f.request(testutil.MakeRequest("shop", "wait-a").Obj())
	waitADeleting := waitA.DeepCopy()
	waitADeleting.DeletionTimestamp = &now

	// A pod and a Job that run no replay (no runner container) have no
	// group: their ends wake nobody.
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web"}}}}
	otherDone := other.DeepCopy()
	otherDone.Status.Phase = corev1.PodSucceeded
	otherJob := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "batch"}}

	cases := []struct {
		name string
		fire func(context.Context, handler.TypedEventHandler[client.Object, reconcile.Request], workqueue.TypedRateLimitingInterface[reconcile.Request])
		want []string
	}{
		{"the holder's Job completes", update(x.job, jobEnded), wakeRequests},
		{"the holder's Job fails", update(x.job, jobFailed), wakeRequests},
		{"the holder's Job is suspended (its start timed out)", update(x.job, jobSuspended), wakeRequests},
		{"the holder's Job is being deleted", update(x.job, jobDeleting), wakeRequests},
		{"the holder's Job is deleted", deleted(x.job, false), wakeRequests},
		// A restarted watch may only know an object was deleted (a
		// tombstone): the last state it saw still names the group.
		{"the holder's Job is deleted, seen late", deleted(x.job, true), wakeRequests},
		{"the holder's Job starts a pod: still holds", update(x.job, jobStarted), nil},
		{"a finished Job is written again (its record)", update(jobEnded, jobEnded.DeepCopy()), nil},
		{"the runner pod succeeds", update(pod, podDone), wakeRequests},
		{"the runner pod fails", update(pod, podFailed), wakeRequests},
		{"the runner pod starts: still holds", update(podPending, pod), nil},
		// Its containers get their grace period and may commit in it.
		{"the runner pod is terminating: still holds", update(pod, podTerminating), nil},
		{"the terminating runner pod is gone", deleted(podTerminating, false), wakeRequests},
		{"the holding request finishes", update(x.running, rrDone), wakeRequests},
		{"the holding request finishes, consumers still paused", update(x.running, rrHeld), nil},
		{"its consumers are restored", update(rrHeld, rrRestored), wakeRequests},
		{"a finished request is written again", update(rrDone, rrDone.DeepCopy()), nil},
		{"a waiting request is being deleted", update(waitA, waitADeleting), []string{"other/wait-b"}},
		{"a waiting request is deleted", deleted(waitADeleting, false), []string{"other/wait-b"}},
		{"a pod of no group ends", update(other, otherDone), nil},
		{"a pod of no group is deleted", deleted(other, false), nil},
		{"a Job of no group is deleted", deleted(otherJob, false), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := woken(t, h, tc.fire); !slices.Equal(got, tc.want) {
				t.Fatalf("woke %v, want %v", got, tc.want)
			}
		})
	}
}

// The runbook Job controller's handler wakes the group's waiting runbook
// Jobs, and only them: the requests are the request controller's.
func TestUnitWakeWaitingRunbookJobs(t *testing.T) {
	x := newWakeFixture(t)
	h := wakeWaiting(x.f.c, grouplock.EntryJob)
	ended := x.job.DeepCopy()
	testutil.Complete(ended, t0)
	rrDone := x.running.DeepCopy()
	rrDone.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionSucceeded, Status: metav1.ConditionTrue, Reason: "Applied"}}
	want := []string{"shop/" + x.runbook.Name}
	if got := woken(t, h, update(x.job, ended)); !slices.Equal(got, want) {
		t.Errorf("the holder's Job ended: woke %v, want %v", got, want)
	}
	if got := woken(t, h, update(x.running, rrDone)); !slices.Equal(got, want) {
		t.Errorf("the holding request finished: woke %v, want %v", got, want)
	}
	// The waiting runbook Job deleted wakes nobody else: it was the only
	// runbook Job waiting, and it does not wake itself.
	if got := woken(t, h, deleted(x.runbook, false)); len(got) != 0 {
		t.Errorf("the waiting runbook Job deleted: woke %v, want nobody", got)
	}
}

// An object of another kind that happens to carry a waiting entry's name
// (a tenant names a request as a hand-made runner Job, or a runbook Job as
// a request) still wakes that entry: only the object itself is left out.
// Nothing polls, so an entry not woken here waits until something else of
// its group changes.
func TestUnitWakeWaitingSameNameOtherKind(t *testing.T) {
	x := newWakeFixture(t)
	hand := x.job.DeepCopy()
	hand.Name = "wait-a"
	ended := hand.DeepCopy()
	testutil.Complete(ended, t0)
	if got := woken(t, wakeWaiting(x.f.c, grouplock.EntryRequest), update(hand, ended)); !slices.Equal(got, wakeRequests) {
		t.Errorf("a Job named as a waiting request ended: woke %v, want %v", got, wakeRequests)
	}
	rr := x.running.DeepCopy()
	rr.Name = x.runbook.Name
	done := rr.DeepCopy()
	done.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionSucceeded, Status: metav1.ConditionTrue, Reason: "Applied"}}
	want := []string{"shop/" + x.runbook.Name}
	if got := woken(t, wakeWaiting(x.f.c, grouplock.EntryJob), update(rr, done)); !slices.Equal(got, want) {
		t.Errorf("a request named as a waiting runbook Job finished: woke %v, want %v", got, want)
	}
}

// A failed read of the waiting entries wakes nobody and does not panic
// (the error is logged; the next change of the group wakes them).
func TestUnitWakeWaitingListFails(t *testing.T) {
	x := newWakeFixture(t)
	failing := interceptor.NewClient(x.f.c, interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
		return errors.New("apiserver down")
	}})
	for _, kind := range []grouplock.EntryKind{grouplock.EntryRequest, grouplock.EntryJob} {
		if got := woken(t, wakeWaiting(failing, kind), deleted(x.job, false)); len(got) != 0 {
			t.Errorf("%v: woke %v with the list failing", kind, got)
		}
	}
}

// holdsGroup and queueKeyOf know only requests, runner Jobs and runner
// pods: any other object holds nothing and names no group.
func TestUnitHoldsGroupOtherKinds(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "wait-a"}}
	if holdsGroup(cm) || queueKeyOf(cm) != "" {
		t.Errorf("a ConfigMap: holds %v, key %q", holdsGroup(cm), queueKeyOf(cm))
	}
	rr := testutil.MakeRequest("shop", "a").Obj()
	if queueKeyOf(rr) != grouplock.QueueKey(rr) || queueKeyOf(rr) == "" {
		t.Errorf("a request's key %q", queueKeyOf(rr))
	}
}
