package launcher

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// Field indexes on cached ReplayRequests.
const (
	indexQueueKey = "kafkareplay.dev/queueKey"
	indexGroup    = "kafkareplay.dev/group"
)

// RBAC, least privilege: the launcher reads and writes requests, Jobs and
// events, reads pods and their logs, and holds a Lease. It has no access to
// Secrets or ConfigMaps: the runner pod mounts them, the launcher never reads
// them. Events go through events.k8s.io, except leader election's, which
// client-go still sends through the core API. The Lease Role's namespace is
// the chart's release namespace; the generated file names the default one.
//
// +kubebuilder:rbac:groups=kafkareplay.dev,resources=replayrequests,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=kafkareplay.dev,resources=replayrequests/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kafkareplay.dev,resources=replayrequests/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=kafka-replay-system

// ReplayRequestReconciler runs each ReplayRequest as a Job of the runner:
//
//	accept  validate with the runner's own rules, resolve the target once
//	queue   wait while another replay of the same group runs (FIFO)
//	run     create the Job under a deterministic name (AlreadyExists is fine)
//	record  when the Job finishes: result, reason, times and log tail into
//	        status, the outcome onto the Job, events, metrics, history limit
//
// Every step reads the cluster's state first, so a retried reconcile or a
// restarted launcher continues where the last one stopped.
type ReplayRequestReconciler struct {
	Client client.Client
	// APIReader reads past the cache, only to confirm that a Job the cache
	// does not show is really gone before declaring it deleted.
	APIReader client.Reader
	Recorder  recorder.EventRecorder
	Logs      LogFetcher
	Options   Options
	// Now is the clock; tests may stop it.
	Now func() time.Time

	queue *groupQueue
}

func (r *ReplayRequestReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Reconcile moves one request one or more steps forward.
func (r *ReplayRequestReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var rr v1alpha1.ReplayRequest
	if err := r.Client.Get(ctx, req.NamespacedName, &rr); err != nil {
		if apierrors.IsNotFound(err) {
			// Deleted: its Job, if still running, goes with it (owner
			// reference), and the group is free for the next request.
			r.queue.Release(req.NamespacedName)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	if rr.DeletionTimestamp != nil {
		r.queue.Release(req.NamespacedName)
		return reconcile.Result{}, nil
	}
	if IsFinished(&rr) {
		r.queue.Release(req.NamespacedName)
		return reconcile.Result{}, nil
	}

	accepted := false
	if rr.Status.ResolvedTarget == "" {
		if done, err := r.accept(ctx, &rr); done || err != nil {
			return reconcile.Result{}, err
		}
		accepted = true
	}

	job, err := r.findJob(ctx, &rr)
	if err != nil {
		return reconcile.Result{}, err
	}
	if job == nil {
		if IsStarted(&rr) {
			return reconcile.Result{}, r.finish(ctx, &rr, nil, Outcome{
				Reason:  ReasonJobDeleted,
				Message: fmt.Sprintf("the runner Job %s was deleted before it finished", rr.Status.JobName),
			})
		}
		return reconcile.Result{}, r.startOrWait(ctx, &rr, accepted)
	}

	if !IsStarted(&rr) {
		// The Job exists but status does not say so: a previous reconcile
		// (or leader) created it and stopped before recording it.
		if err := r.markRunning(ctx, &rr, job, accepted); err != nil {
			return reconcile.Result{}, err
		}
	}
	if finished, _, _ := JobFinished(job); !finished {
		return reconcile.Result{}, nil
	}
	pods, err := podsOfJob(ctx, r.Client, job)
	if err != nil {
		return reconcile.Result{}, err
	}
	o := JobOutcome(job, pods)
	if wait := resultGraceLeft(o, r.Options.PodResultGrace, r.now()); wait > 0 {
		// The pod's last state is not in the cache yet; its event will
		// trigger a reconcile sooner than this.
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	return reconcile.Result{}, r.finish(ctx, &rr, job, o)
}

// accept validates a new request with the runner's own rules and resolves its
// target. It reports done when the request was refused (and is now finished).
//
// The resolved target is only kept in memory here. It is stored by the next
// write, whichever comes first: the status update of a request that must wait
// for its group, or the Job itself (an annotation and REPLAY_TO) followed by
// the status update of a request that starts at once. That keeps one write
// off the path from request to Job, and still resolves an ago target exactly
// once: a Job that exists is always adopted with the target it carries.
func (r *ReplayRequestReconciler) accept(ctx context.Context, rr *v1alpha1.ReplayRequest) (done bool, err error) {
	target, terr := ResolveTarget(rr.Spec.Target, r.now())
	serr := ValidateSpec(&rr.Spec)
	if serr == nil && rr.Spec.Runner != nil {
		if ok, allowed := r.Options.RunnerImageAllowed(rr.Spec.Runner.Image); !ok {
			serr = fmt.Errorf("runner.image: %q is not allowed by this launcher (--allowed-runner-images: %s)", rr.Spec.Runner.Image, strings.Join(allowed, ","))
		}
	}
	if terr != nil || serr != nil {
		reason, msg := ReasonInvalidTarget, ""
		if terr != nil {
			msg = terr.Error()
		} else {
			reason, msg = string(report.ReasonInvalidInput), serr.Error()
		}
		SetCondition(rr, v1alpha1.ConditionAccepted, metav1.ConditionFalse, reason, msg)
		return true, r.finish(ctx, rr, nil, Outcome{Reason: reason, Message: msg})
	}
	rr.Status.ResolvedTarget = target
	SetCondition(rr, v1alpha1.ConditionAccepted, metav1.ConditionTrue, ReasonAccepted, "target resolved to "+target)
	rr.Status.Phase = PhaseFor(rr.Status.Conditions)
	rr.Status.ObservedGeneration = rr.Generation
	return false, nil
}

// acceptedEvent reports the acceptance once its status is stored.
func (r *ReplayRequestReconciler) acceptedEvent(rr *v1alpha1.ReplayRequest) {
	r.Recorder.Eventf(rr, nil, corev1.EventTypeNormal, ReasonAccepted, "Accept", "target resolved to %s", rr.Status.ResolvedTarget)
}

// findJob returns the request's Job, or nil when there is none. A cache miss
// for a request that has started is confirmed against the API server: the
// cache may not have caught up with the launcher's own create yet.
func (r *ReplayRequestReconciler) findJob(ctx context.Context, rr *v1alpha1.ReplayRequest) (*batchv1.Job, error) {
	key := types.NamespacedName{Namespace: rr.Namespace, Name: JobName(rr, StageApply)}
	var job batchv1.Job
	err := r.Client.Get(ctx, key, &job)
	if apierrors.IsNotFound(err) && IsStarted(rr) {
		err = r.APIReader.Get(ctx, key, &job)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if job.Annotations[v1alpha1.AnnotationRequest] != rr.Name {
		return nil, fmt.Errorf("job %s exists but was not made for request %s", job.Name, rr.Name)
	}
	if job.DeletionTimestamp != nil && !IsRecorded(&job) {
		return nil, nil // deleted before it finished: as good as gone
	}
	return &job, nil
}

// startOrWait creates the Job when the request is first in its group's queue,
// or records what it waits for.
func (r *ReplayRequestReconciler) startOrWait(ctx context.Context, rr *v1alpha1.ReplayRequest, accepted bool) error {
	key := QueueKey(rr)
	self := types.NamespacedName{Namespace: rr.Namespace, Name: rr.Name}
	var decideErr error
	decide := func() Decision {
		var peers v1alpha1.ReplayRequestList
		if err := r.Client.List(ctx, &peers, client.MatchingFields{indexQueueKey: key}); err != nil {
			decideErr = err
			return Decision{}
		}
		return Decide(rr, peers.Items, func(p *v1alpha1.ReplayRequest) bool {
			if IsStarted(p) {
				return true
			}
			var j batchv1.Job
			err := r.Client.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: JobName(p, StageApply)}, &j)
			return err == nil
		})
	}
	d, holder := r.queue.TryStart(key, self, decide)
	if holder != nil && r.staleHold(ctx, *holder) {
		r.queue.Release(*holder)
		d, holder = r.queue.TryStart(key, self, decide)
	}
	if decideErr != nil {
		return decideErr
	}
	if !d.Start {
		var blocker string
		switch {
		case d.Blocker != nil:
			blocker = d.Blocker.Namespace + "/" + d.Blocker.Name
		case holder != nil:
			blocker = holder.String()
		}
		msg := fmt.Sprintf("waiting for %s, which replays group %q on the same Kafka cluster first", blocker, rr.Spec.Group)
		if SetCondition(rr, v1alpha1.ConditionAccepted, metav1.ConditionTrue, ReasonWaitingForGroup, msg) || accepted {
			rr.Status.Message = msg
			rr.Status.Phase = PhaseFor(rr.Status.Conditions)
			if err := r.Client.Status().Update(ctx, rr); err != nil {
				return err
			}
			if accepted {
				r.acceptedEvent(rr)
			}
			r.Recorder.Eventf(rr, nil, corev1.EventTypeNormal, ReasonWaitingForGroup, "Queue", "%s", msg)
		}
		return nil
	}

	job, err := BuildJob(rr, StageApply, r.Options)
	if err != nil {
		r.queue.Release(self)
		return err
	}
	if err := r.Client.Create(ctx, job); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			r.queue.Release(self)
			return r.createFailed(ctx, rr, accepted, err)
		}
		// Made by an earlier reconcile or leader: the deterministic name is
		// what makes this safe.
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return err
		}
	}
	return r.markRunning(ctx, rr, job, accepted)
}

// createFailed reports a Job the API server refused. A Job it finds invalid
// can never be created, so the request fails; anything else (a quota, a
// webhook, an outage) is reported on the request and retried with backoff.
func (r *ReplayRequestReconciler) createFailed(ctx context.Context, rr *v1alpha1.ReplayRequest, accepted bool, err error) error {
	msg := "cannot create the runner Job: " + err.Error()
	if apierrors.IsInvalid(err) {
		SetCondition(rr, v1alpha1.ConditionAccepted, metav1.ConditionFalse, ReasonJobInvalid, msg)
		return r.finish(ctx, rr, nil, Outcome{Reason: ReasonJobInvalid, Message: msg})
	}
	r.Recorder.Eventf(rr, nil, corev1.EventTypeWarning, ReasonJobCreateFailed, "Run", "%s", msg)
	if rr.Status.Message != truncate(msg, 1024) || accepted {
		rr.Status.Message = truncate(msg, 1024)
		if uerr := r.Client.Status().Update(ctx, rr); uerr != nil {
			log.FromContext(ctx).V(1).Info("status update after a refused Job", "error", uerr.Error())
		}
	}
	return err
}

// staleHold reports whether a hold outlived its request: the cache already
// shows the holder finished, being deleted, or gone. Holds are released when
// that happens, but a peer woken by the same event may get here first.
func (r *ReplayRequestReconciler) staleHold(ctx context.Context, holder types.NamespacedName) bool {
	var h v1alpha1.ReplayRequest
	if err := r.Client.Get(ctx, holder, &h); err != nil {
		return apierrors.IsNotFound(err)
	}
	return IsFinished(&h) || h.DeletionTimestamp != nil
}

// markRunning records that the request's Job exists. The target the Job
// carries wins over one resolved in this reconcile: the Job may have been made
// by an earlier attempt that never got to store it in status.
func (r *ReplayRequestReconciler) markRunning(ctx context.Context, rr *v1alpha1.ReplayRequest, job *batchv1.Job, accepted bool) error {
	if t := job.Annotations[v1alpha1.AnnotationResolvedTarget]; t != "" {
		rr.Status.ResolvedTarget = t
	}
	rr.Status.JobName = job.Name
	if rr.Status.StartTime == nil {
		rr.Status.StartTime = &metav1.Time{Time: job.CreationTimestamp.Time}
	}
	SetCondition(rr, v1alpha1.ConditionAccepted, metav1.ConditionTrue, ReasonAccepted, "target resolved to "+rr.Status.ResolvedTarget)
	SetCondition(rr, v1alpha1.ConditionRunning, metav1.ConditionTrue, ReasonJobCreated, "runner Job "+job.Name+" created")
	rr.Status.Message = "runner Job " + job.Name + " is running"
	rr.Status.Phase = PhaseFor(rr.Status.Conditions)
	rr.Status.ObservedGeneration = rr.Generation
	if err := r.Client.Status().Update(ctx, rr); err != nil {
		return err
	}
	if accepted {
		r.acceptedEvent(rr)
	}
	r.Recorder.Eventf(rr, job, corev1.EventTypeNormal, ReasonJobCreated, "Run", "created runner Job %s", job.Name)
	return nil
}

// finish records a final outcome: first on the Job (annotations, and the
// request's ownership released so the Job stays as history), then in status,
// then as an event and metrics; then frees the group and applies the history
// limit. A failure part-way is retried by the next reconcile, which finds the
// same outcome again.
func (r *ReplayRequestReconciler) finish(ctx context.Context, rr *v1alpha1.ReplayRequest, job *batchv1.Job, o Outcome) error {
	logTail := ""
	if job != nil {
		if o.PodName != "" && r.Logs != nil {
			t, err := r.Logs.Tail(ctx, rr.Namespace, o.PodName, ContainerName, r.Options.LogTailLines, r.Options.LogTailBytes)
			if err != nil {
				log.FromContext(ctx).V(1).Info("no log tail", "pod", o.PodName, "error", err.Error())
			}
			logTail = t
		}
		if err := recordOnJob(ctx, r.Client, job, o, true); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	Finish(rr, o, logTail, r.now())
	// Free the group before the status update: that update's watch event is
	// what wakes the next request, which must not find the hold still here.
	// Until the update lands, the cache still shows this request running,
	// so nothing can start early.
	r.queue.Release(types.NamespacedName{Namespace: rr.Namespace, Name: rr.Name})
	if err := r.Client.Status().Update(ctx, rr); err != nil {
		return err
	}
	eventType := corev1.EventTypeNormal
	if !o.Succeeded {
		eventType = corev1.EventTypeWarning
	}
	var related *batchv1.Job
	if job != nil {
		related = job
	}
	if related != nil {
		r.Recorder.Eventf(rr, related, eventType, o.Reason, "Finish", "%s", o.Message)
	} else {
		r.Recorder.Eventf(rr, nil, eventType, o.Reason, "Finish", "%s", o.Message)
	}
	observeOutcome(o, rr.CreationTimestamp.Time)
	log.FromContext(ctx).Info("replay finished", "succeeded", o.Succeeded, "reason", o.Reason, "job", rr.Status.JobName)
	return pruneHistory(ctx, r.Client, r.Recorder, rr, job, r.Options.HistoryLimit)
}

// SetupWithManager registers the controller, its indexes and its watches:
// requests; their Jobs and pods (mapped back through the request annotation,
// which also works once a finished Job is no longer owned); and, so that a
// finished or deleted request lets the next one of its group start, every
// waiting peer of a request that leaves the queue.
func (r *ReplayRequestReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, workers int) error {
	r.queue = newGroupQueue()
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &v1alpha1.ReplayRequest{}, indexQueueKey, func(o client.Object) []string {
		return []string{QueueKey(o.(*v1alpha1.ReplayRequest))}
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &v1alpha1.ReplayRequest{}, indexGroup, func(o client.Object) []string {
		return []string{o.(*v1alpha1.ReplayRequest).Spec.Group}
	}); err != nil {
		return err
	}
	toRequest := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		name := o.GetAnnotations()[v1alpha1.AnnotationRequest]
		if name == "" || o.GetLabels()[v1alpha1.LabelRequest] == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("replayrequest").
		For(&v1alpha1.ReplayRequest{}).
		Watches(&batchv1.Job{}, toRequest).
		Watches(&corev1.Pod{}, toRequest).
		Watches(&v1alpha1.ReplayRequest{}, r.peersOfLeaving()).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(workers, 1)}).
		Complete(r)
}

// peersOfLeaving enqueues the unfinished requests of the same group when a
// request finishes or is deleted.
func (r *ReplayRequestReconciler) peersOfLeaving() handler.TypedEventHandler[client.Object, reconcile.Request] {
	enqueuePeers := func(ctx context.Context, o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		rr, ok := o.(*v1alpha1.ReplayRequest)
		if !ok {
			return
		}
		r.queue.Release(types.NamespacedName{Namespace: rr.Namespace, Name: rr.Name})
		var peers v1alpha1.ReplayRequestList
		if err := r.Client.List(ctx, &peers, client.MatchingFields{indexQueueKey: QueueKey(rr)}); err != nil {
			log.FromContext(ctx).Error(err, "list peers")
			return
		}
		for i := range peers.Items {
			p := &peers.Items[i]
			if p.UID != rr.UID && !IsFinished(p) {
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}})
			}
		}
	}
	return handler.Funcs{
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			oldRR, ok1 := e.ObjectOld.(*v1alpha1.ReplayRequest)
			newRR, ok2 := e.ObjectNew.(*v1alpha1.ReplayRequest)
			if ok1 && ok2 && (IsFinished(newRR) && !IsFinished(oldRR) || newRR.DeletionTimestamp != nil && oldRR.DeletionTimestamp == nil) {
				enqueuePeers(ctx, newRR, q)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueuePeers(ctx, e.Object, q)
		},
	}
}
