package launcher

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
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
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: w.Namespace, Name: w.Name}})
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
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: row.Child}})
			}
		}
	}}
}
