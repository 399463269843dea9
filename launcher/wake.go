package launcher

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/grouplock"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// holdsGroup reports whether an object, in this version, may hold its group:
// a pod that is active or terminating, a Job that runs or may still make pods,
// a request that has started and not finished or holds paused consumers.
// Waiting replays are woken when an object goes from holding to not holding
// (or is deleted): the only moments a group can become free. Nothing is
// polled.
func holdsGroup(o client.Object) bool {
	switch v := o.(type) {
	case *corev1.Pod:
		return grouplock.PodActive(v)
	case *batchv1.Job:
		return grouplock.JobRuns(v)
	case *v1alpha1.ReplayRequest:
		return state.IsStarted(v) && !state.IsFinished(v) || v.DeletionTimestamp == nil && !state.IsFinished(v) || state.ConsumersHeld(v)
	}
	return false
}

// queueKeyOf is the QueueKey of a request, runner Job or runner pod.
func queueKeyOf(o client.Object) string {
	switch v := o.(type) {
	case *corev1.Pod:
		return grouplock.PodSpecQueueKey(&v.Spec)
	case *batchv1.Job:
		return grouplock.PodSpecQueueKey(&v.Spec.Template.Spec)
	case *v1alpha1.ReplayRequest:
		return grouplock.QueueKey(v)
	}
	return ""
}

// entryKindOf is the kind of queue entry an object would be.
func entryKindOf(o client.Object) grouplock.EntryKind {
	switch o.(type) {
	case *corev1.Pod:
		return grouplock.EntryPod
	case *batchv1.Job:
		return grouplock.EntryJob
	case *v1alpha1.ReplayRequest:
		return grouplock.EntryRequest
	}
	return ""
}

// wakeWaiting enqueues the waiting entries of kind (requests for the request
// controller, runbook Jobs for the runbook controller) of a group when one of
// its objects stops holding it or leaves the queue.
func wakeWaiting(c client.Client, kind grouplock.EntryKind) handler.TypedEventHandler[client.Object, reconcile.Request] {
	enqueue := func(ctx context.Context, o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		key := queueKeyOf(o)
		if key == "" {
			return
		}
		var waiting []grouplock.Entry
		switch kind {
		case grouplock.EntryRequest:
			var rrs v1alpha1.ReplayRequestList
			if err := c.List(ctx, &rrs, client.MatchingFields{indexQueueKey: key}); err != nil {
				log.FromContext(ctx).Error(err, "list waiting requests")
				return
			}
			waiting = grouplock.Waiting(rrs.Items, nil)
		case grouplock.EntryJob:
			var jobs batchv1.JobList
			if err := c.List(ctx, &jobs, client.MatchingFields{indexQueueKey: key}); err != nil {
				log.FromContext(ctx).Error(err, "list waiting runbook Jobs")
				return
			}
			waiting = grouplock.Waiting(nil, jobs.Items)
		}
		// Only the object itself is left out (its own controller sees its
		// change), by kind as well as name: a request may share its name
		// with a Job, and an entry not woken here waits until something
		// else of its group changes, since nothing polls.
		self := entryKindOf(o)
		for _, w := range waiting {
			if w.Kind == kind && (w.Kind != self || w.Namespace != o.GetNamespace() || w.Name != o.GetName()) {
				addFirst(q, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: w.Namespace, Name: w.Name}})
			}
		}
	}
	return handler.Funcs{
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if holdsGroup(e.ObjectOld) && !holdsGroup(e.ObjectNew) {
				enqueue(ctx, e.ObjectNew, q)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, q)
		},
	}
}

// wakeChildrenOnApproval wakes a parent's children when its status first
// records its approval. The launcher sets an approved child's annotation
// in the pass where the parent records its approval, before that pass's
// status write; a child reconciled in between waits (parentApproval), and
// this wakes it. Only the transition: a parent's later status writes wake
// nobody.
func wakeChildrenOnApproval() handler.TypedEventHandler[client.Object, reconcile.Request] {
	return handler.Funcs{UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		old, ok := e.ObjectOld.(*v1alpha1.ReplayRequest)
		p, okNew := e.ObjectNew.(*v1alpha1.ReplayRequest)
		if !ok || !okNew || !replay.IsParent(p) || state.Approved(old) || !state.Approved(p) {
			return
		}
		for _, row := range p.Status.Groups {
			if row.Child != "" {
				addFirst(q, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: row.Child}})
			}
		}
	}}
}

// startPriority is the work queue priority of a pass on the way to a
// Job: a new request's first, and every wake above. Each replay holds a
// worker for about eight API calls in a row (finalizer, Job and status on
// the way in; log, record, status, Job and finalizer on the way out), and
// at a steady 25 requests a second all workers are busy nearly all the
// time (make bench-launcher, launcher/README.md): in order of arrival, a
// new request waited for the outcomes of earlier ones to be recorded
// before its Job was created, most of its time from request to Job. A
// priority above controller-runtime's default (0) takes it to the front
// of the queue; the passes that follow running Jobs and record outcomes
// keep their order behind it. A request's later changes, the launcher's
// own writes among them, keep the default: run at once, such a pass would
// read the cache before it has caught up with the write, and spend a call
// on a conflict.
const startPriority = 10

// beforeStart says whether a request has neither started (no Job) nor
// finished: its creation goes to startsFirst, not to the controller's own
// handler.
func beforeStart(o client.Object) bool {
	rr, ok := o.(*v1alpha1.ReplayRequest)
	return ok && !state.IsStarted(rr) && !state.IsFinished(rr)
}

// notCreatedBeforeStart lets the controller's own handler see every event
// but the creation of a request that has not started.
var notCreatedBeforeStart = predicate.Funcs{CreateFunc: func(e event.CreateEvent) bool { return !beforeStart(e.Object) }}

// startsFirst enqueues a request that has not started, on its creation, at
// startPriority; the listing of a (re)start keeps controller-runtime's low
// priority.
func startsFirst() handler.TypedEventHandler[client.Object, reconcile.Request] {
	return handler.Funcs{CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		if !beforeStart(e.Object) {
			return
		}
		r := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.Object.GetNamespace(), Name: e.Object.GetName()}}
		if e.IsInInitialList {
			q.Add(r)
			return
		}
		addFirst(q, r)
	}}
}

// addFirst adds r at startPriority when q is controller-runtime's priority
// queue (its default), else in order.
func addFirst(q workqueue.TypedRateLimitingInterface[reconcile.Request], r reconcile.Request) {
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(startPriority)}, r)
		return
	}
	q.Add(r)
}

// behindStarts gives whatever a pass requeues (its timer, a retry after an
// error) the default priority: controller-runtime would requeue it at the
// priority of the pass, and a request first reconciled at startPriority
// would then keep it for every later pass, its Job's outcome among them,
// once an event brings its timer forward.
func behindStarts(res reconcile.Result, err error) (reconcile.Result, error) {
	res.Priority = ptr.To(0)
	return res, err
}
