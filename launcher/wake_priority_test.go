package launcher

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// The order of the request controller's work queue, over
// controller-runtime's own priority queue (the controllers' default): a new
// request's pass goes before work queued earlier, and nothing else does.

// firstOut fills a priority queue through add, then says which request a
// worker gets first, at which priority, and how many are queued.
func firstOut(t *testing.T, add func(q priorityqueue.PriorityQueue[reconcile.Request])) (string, int, int) {
	t.Helper()
	q := priorityqueue.New[reconcile.Request](t.Name())
	defer q.ShutDown()
	add(q)
	n := q.Len() // also takes in what was added (the queue buffers adds)
	if n == 0 {
		return "", 0, 0
	}
	item, priority, _ := q.GetWithPriority()
	return item.Name, priority, n
}

// createEvent is a watch's creation event of o, to h.
func createEvent(h handler.TypedEventHandler[client.Object, reconcile.Request], o client.Object, inList bool) func(priorityqueue.PriorityQueue[reconcile.Request]) {
	return func(q priorityqueue.PriorityQueue[reconcile.Request]) {
		h.Create(context.Background(), event.CreateEvent{Object: o, IsInInitialList: inList}, q)
	}
}

func TestStartsFirst(t *testing.T) {
	fresh := testutil.MakeRequest("shop", "fresh").Obj()
	started := testutil.MakeRequest("shop", "started").Obj()
	started.Status.JobName = "started-1"
	finished := testutil.MakeRequest("shop", "finished").Obj()
	finished.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionSucceeded, Status: metav1.ConditionFalse, Reason: "InvalidTarget"}}
	earlier := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "shop", Name: "earlier"}}

	for _, tc := range []struct {
		name     string
		obj      *v1alpha1.ReplayRequest
		inList   bool
		wantName string
		wantPrio int
		wantN    int
	}{
		{name: "a new request goes before earlier work", obj: fresh, wantName: "fresh", wantPrio: startPriority, wantN: 2},
		{name: "a listing keeps the low priority", obj: fresh, inList: true, wantName: "earlier", wantPrio: 0, wantN: 2},
		{name: "a started request is the controller's own handler's", obj: started, wantName: "earlier", wantPrio: 0, wantN: 1},
		{name: "a finished request is the controller's own handler's", obj: finished, wantName: "earlier", wantPrio: 0, wantN: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, prio, n := firstOut(t, func(q priorityqueue.PriorityQueue[reconcile.Request]) {
				q.Add(earlier) // a finishing request's Job event, say
				createEvent(startsFirst(), tc.obj, tc.inList)(q)
			})
			if name != tc.wantName || prio != tc.wantPrio || n != tc.wantN {
				t.Errorf("first out %s at %d of %d queued, want %s at %d of %d", name, prio, n, tc.wantName, tc.wantPrio, tc.wantN)
			}
			// The controller's own handler sees exactly the creations
			// startsFirst leaves alone.
			if own, first := notCreatedBeforeStart.Create(event.CreateEvent{Object: tc.obj}), beforeStart(tc.obj); own == first {
				t.Errorf("controller's handler sees the creation: %v, startsFirst takes it: %v", own, first)
			}
		})
	}
	// Every other event of a request that has not started goes to the
	// controller's own handler, at its priority.
	if !notCreatedBeforeStart.Update(event.UpdateEvent{ObjectOld: fresh, ObjectNew: fresh}) || !notCreatedBeforeStart.Delete(event.DeleteEvent{Object: fresh}) {
		t.Error("the controller's handler does not see a new request's update or deletion")
	}
}

func TestAddFirstOnAPlainQueue(t *testing.T) {
	// Without the priority queue (UsePriorityQueue: false) a wake is an
	// ordinary add.
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	addFirst(q, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "shop", Name: "a"}})
	if item, _ := q.Get(); q.Len() != 0 || item.Name != "a" {
		t.Errorf("got %v with %d left, want a alone", item, q.Len())
	}
}

func TestBehindStarts(t *testing.T) {
	boom := errors.New("boom")
	for _, in := range []reconcile.Result{{}, {RequeueAfter: time.Minute}, {RequeueAfter: time.Second, Priority: ptr.To(startPriority)}} {
		res, err := behindStarts(in, boom)
		if !errors.Is(err, boom) || res.RequeueAfter != in.RequeueAfter || res.Priority == nil || *res.Priority != 0 {
			t.Errorf("behindStarts(%+v) = %+v, %v; want the same requeue at priority 0 and the error", in, res, err)
		}
	}
	// A request first reconciled at startPriority requeues its timer;
	// the event of its Job then brings the timer forward. Its next pass
	// waits behind a new request.
	name, prio, _ := firstOut(t, func(q priorityqueue.PriorityQueue[reconcile.Request]) {
		res, _ := behindStarts(reconcile.Result{RequeueAfter: time.Hour}, nil)
		q.AddWithOpts(priorityqueue.AddOpts{After: res.RequeueAfter, Priority: res.Priority}, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "shop", Name: "running"}})
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "shop", Name: "running"}})
		createEvent(startsFirst(), testutil.MakeRequest("shop", "fresh").Obj(), false)(q)
	})
	if name != "fresh" || prio != startPriority {
		t.Errorf("first out %s at %d, want fresh at %d", name, prio, startPriority)
	}
}
