package launcher

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/grouplock"
	"github.com/kafka-replay/kafka-replay/launcher/internal/lifecycle"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// Field indexes on cached objects.
const (
	// indexQueueKey indexes requests, runner Jobs and runner pods by the
	// QueueKey of the group they replay.
	indexQueueKey = "kafkareplay.dev/queueKey"
)

// Finalizer is put on a request before its Job is created, so that its
// deletion is seen: the launcher stops the runner and lets the request go
// only once no runner pod of its Job is left. It is removed as soon as the
// request has finished.
const Finalizer = "kafkareplay.dev/runner"

// RBAC, least privilege: the launcher reads requests and writes their status
// and finalizer (it never deletes one: they are the users'), makes and
// deletes runner Jobs, reads pods and their logs and the chart's runbook
// CronJobs (to trust the Jobs made from them), and holds a Lease. It has no
// access to Secrets, and may only create ConfigMaps (the input files of
// runnerjob.InputConfigMap), never read, list or watch them: the runner pod mounts the
// tenants' ConfigMaps and Secrets, the launcher never reads them. Events go
// through events.k8s.io, except leader election's, which client-go still
// sends through the core API. The Lease Role's namespace is the chart's
// release namespace; the generated file names the default one.
//
// +kubebuilder:rbac:groups=kafkareplay.dev,resources=replayrequests,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=kafkareplay.dev,resources=replayrequests/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kafkareplay.dev,resources=replayrequests/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=batch,resources=cronjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=create
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch;list
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=kafka-replay-system

// ReplayRequestReconciler runs each ReplayRequest as a Job of the runner,
// through the phases of phase.go: Accepting → (Recognising) → Queued →
// (PausingConsumers) → Applying → (RestoringConsumers) → Finished, and
// Deleting when a request is deleted.
//
// Every reconcile reads the cluster's state first and decides the phase from
// it alone, so a retried reconcile or a restarted launcher continues where
// the last one stopped.
type ReplayRequestReconciler struct {
	Client client.Client
	// APIReader reads past the cache: to confirm that a Job the cache does
	// not show is really gone, and that a request is as the cache shows it
	// before its Job is created.
	APIReader client.Reader
	Recorder  recorder.EventRecorder
	Logs      record.LogFetcher
	// Records reads a finished Job's full results from its pods' logs and
	// keeps its ReplayRecord; nil records from termination messages alone,
	// and keeps no record.
	Records *record.Collector
	Options Options
	// Now is the clock; tests may stop it.
	Now func() time.Time

	queue *grouplock.Queue
	// logReads is when each running runner's log was last read
	// (followRunner).
	logReads logReads
	// written is what the cache may show of a request that the
	// launcher's own writes have replaced.
	written writtenOver
}

func (r *ReplayRequestReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Reconcile moves one request through as many phases as it can, writes its
// status once, then sends the events of what it did. A write that conflicts
// with a newer version is retried quietly (quietConflict); whatever it
// requeues goes behind the passes that start requests (behindStarts).
func (r *ReplayRequestReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.reconcile(ctx, req)
	return behindStarts(quietConflict(ctx, res, err))
}

func (r *ReplayRequestReconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var rr v1alpha1.ReplayRequest
	if err := r.Client.Get(ctx, req.NamespacedName, &rr); err != nil {
		if apierrors.IsNotFound(err) {
			r.written.behind(req.NamespacedName, "")
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if r.written.behind(req.NamespacedName, rr.ResourceVersion) {
		log.FromContext(ctx).V(1).Info("the cache is behind the launcher's own write; its event reconciles again")
		return reconcile.Result{}, nil
	}
	// A request over several groups has no group and no Job of its own:
	// ParentReconciler runs it, through child requests, which are runs
	// like any other here.
	if replay.IsParent(&rr) {
		return reconcile.Result{}, nil
	}
	// Every log line of the pass says who asked.
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("requestedBy", rr.Requester()))
	before := rr.Status.DeepCopy()
	p := &pass{rr: &rr, now: r.now(), key: grouplock.QueueKey(&rr)}
	p.self = grouplock.Entry{Kind: grouplock.EntryRequest, Namespace: rr.Namespace, Name: rr.Name, Created: rr.CreationTimestamp.Time, Since: p.now}

	var err error
	for range 8 { // a pass goes through at most a few phases
		var job, planJob *batchv1.Job
		if job, err = r.findJob(ctx, p.rr); err != nil {
			break
		}
		// A Job this pass created, or got back past the cache on
		// AlreadyExists, may not be in the cache yet, or ever (one made
		// without the runner label): the pass goes on with it rather than
		// deciding again from the cache's miss and creating again.
		p.job = orHeld(job, p.job)
		if planJob, err = r.findPlanJob(ctx, p.rr, p.job); err != nil {
			break
		}
		p.planJob = orHeld(planJob, p.planJob)
		phase := lifecycle.DecidePhase(lifecycle.Observed{Request: p.rr, Job: p.job, PlanJob: p.planJob})
		var next bool
		switch phase {
		case lifecycle.Accepting:
			next, err = r.accepting(ctx, p)
		case lifecycle.Recognising:
			next, err = r.recognising(ctx, p)
		case lifecycle.Queued:
			next, err = r.queued(ctx, p)
		case lifecycle.Planning:
			next, err = r.planning(ctx, p)
		case lifecycle.AwaitingApproval:
			next, err = r.awaitingApproval(ctx, p)
		case lifecycle.PausingConsumers:
			next, err = r.pausingConsumers(ctx, p)
		case lifecycle.Applying:
			next, err = r.applying(ctx, p)
		case lifecycle.Deleting:
			err = r.deleting(ctx, p)
		case lifecycle.RestoringConsumers:
			err = r.restoringConsumers(ctx, p)
		case lifecycle.Finished:
			// What a finish left after its status write, should that pass
			// have stopped there.
			err = r.afterFinish(ctx, p.rr, outcomeJob(p), nil)
		}
		if err != nil || !next {
			break
		}
	}

	// The Group column's value: a consumerRef request's group is known once
	// it is resolved, and requests accepted before status.group existed
	// get it on their next write.
	if g := replay.Group(p.rr); g != "" {
		p.rr.Status.Group = g
	}
	// One status write per reconcile, whatever the phases did.
	if !equality.Semantic.DeepEqual(before, &p.rr.Status) && p.rr.DeletionTimestamp == nil {
		if uerr := r.updateStatus(ctx, p.rr); uerr != nil {
			if apierrors.IsNotFound(uerr) {
				return reconcile.Result{}, nil // deleted meanwhile
			}
			if apierrors.IsConflict(uerr) {
				// The cache was behind: a newer version of the request
				// exists, so its watch event is queued or on its way, and
				// that reconcile reads again and decides again. Returning
				// the error would add a rate-limited retry on top, which
				// under load (the launcher's own writes arrive as events
				// while it works) throttles every request.
				log.FromContext(ctx).V(1).Info("status update conflict; the newer version's event reconciles again")
				return reconcile.Result{}, nil
			}
			return reconcile.Result{}, uerr
		}
	}
	// Events after the write: they never announce what status does not say.
	if p.accepted {
		// The log line carries requestedBy (the pass's logger), the audit
		// trail of who asked for what.
		log.FromContext(ctx).Info("accepted", "group", replay.Group(p.rr), "target", p.rr.Status.ResolvedTarget)
		r.Recorder.Eventf(p.rr, nil, corev1.EventTypeNormal, state.ReasonAccepted, "Accept", "requested by %s; target resolved to %s", p.rr.Requester(), p.rr.Status.ResolvedTarget)
	}
	for _, e := range p.events {
		var related *batchv1.Job
		if e.related != nil {
			related = e.related
		}
		if related != nil {
			r.Recorder.Eventf(p.rr, related, e.eventType, e.reason, e.action, "%s", e.message)
		} else {
			r.Recorder.Eventf(p.rr, nil, e.eventType, e.reason, e.action, "%s", e.message)
		}
	}
	if o := p.finished; o != nil && err == nil {
		observeOutcome(*o, p.rr.CreationTimestamp.Time)
		log.FromContext(ctx).Info("replay finished", "succeeded", o.Succeeded, "reason", o.Reason, "job", p.rr.Status.JobName)
		if ferr := r.afterFinish(ctx, p.rr, p.finishedJob, o); ferr != nil {
			return reconcile.Result{}, ferr
		}
		if perr := pruneHistory(ctx, r.Client, r.Recorder, p.rr, p.finishedJob, r.Options.HistoryLimit); perr != nil {
			return reconcile.Result{}, perr
		}
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: p.requeue}, nil
}

// findJob returns the Job with the request's deterministic name, whoever made
// it, or nil when there is none. A cache miss for a request that has started
// is confirmed against the API server: the cache may not have caught up with
// the launcher's own create yet.
func (r *ReplayRequestReconciler) findJob(ctx context.Context, rr *v1alpha1.ReplayRequest) (*batchv1.Job, error) {
	key := types.NamespacedName{Namespace: rr.Namespace, Name: runnerjob.Name(rr, runnerjob.StageApply)}
	var job batchv1.Job
	err := r.Client.Get(ctx, key, &job)
	if apierrors.IsNotFound(err) && state.IsStarted(rr) && !state.IsFinished(rr) {
		err = r.APIReader.Get(ctx, key, &job)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &job, nil
}

// orHeld is the Job the cache found, or else the one the pass holds from the
// API server.
func orHeld(found, held *batchv1.Job) *batchv1.Job {
	if found != nil {
		return found
	}
	return held
}

// outcomeJob is the Job a finished request's outcome belongs on: its apply
// Job, or the planning Job of a request that failed while planning.
func outcomeJob(p *pass) *batchv1.Job {
	if p.job == nil && p.rr.Status.Plan == nil {
		return p.planJob
	}
	return p.job
}

// findPlanJob returns the planning Job of a Manual request that has no apply
// Job yet, whoever made it, or nil: from the cache only, as a plan Job the
// cache misses is found by its create (AlreadyExists), and planning again
// changes nothing.
func (r *ReplayRequestReconciler) findPlanJob(ctx context.Context, rr *v1alpha1.ReplayRequest, applyJob *batchv1.Job) (*batchv1.Job, error) {
	if rr.Spec.Approval != v1alpha1.ApprovalManual || applyJob != nil || state.IsStarted(rr) {
		return nil, nil
	}
	var job batchv1.Job
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: rr.Namespace, Name: runnerjob.Name(rr, runnerjob.StagePlan)}, &job)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &job, nil
}

// updateStatus writes rr's status, and remembers the version it replaced
// (writtenOver).
func (r *ReplayRequestReconciler) updateStatus(ctx context.Context, rr *v1alpha1.ReplayRequest) error {
	rv := rr.ResourceVersion
	if err := r.Client.Status().Update(ctx, rr); err != nil {
		return err
	}
	r.written.wrote(client.ObjectKeyFromObject(rr), rv, rr.ResourceVersion)
	return nil
}

// removeFinalizer drops the launcher's finalizer, if the request has it.
func (r *ReplayRequestReconciler) removeFinalizer(ctx context.Context, rr *v1alpha1.ReplayRequest) error {
	if !controllerutil.ContainsFinalizer(rr, Finalizer) {
		return nil
	}
	patched := rr.DeepCopy()
	controllerutil.RemoveFinalizer(patched, Finalizer)
	if err := r.Client.Patch(ctx, patched, client.MergeFrom(rr)); err != nil {
		return client.IgnoreNotFound(err)
	}
	r.written.wrote(client.ObjectKeyFromObject(rr), rr.ResourceVersion, patched.ResourceVersion)
	rr.Finalizers, rr.ResourceVersion = patched.Finalizers, patched.ResourceVersion
	return nil
}

// groupState reads, from the cache, what holds a group and who waits for it.
func groupState(ctx context.Context, c client.Client, key string) (holders, waiting []grouplock.Entry, err error) {
	var rrs v1alpha1.ReplayRequestList
	if err := c.List(ctx, &rrs, client.MatchingFields{indexQueueKey: key}); err != nil {
		return nil, nil, err
	}
	var jobs batchv1.JobList
	if err := c.List(ctx, &jobs, client.MatchingFields{indexQueueKey: key}); err != nil {
		return nil, nil, err
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.MatchingFields{indexQueueKey: key}); err != nil {
		return nil, nil, err
	}
	var runbooks []batchv1.Job
	for i := range jobs.Items {
		j := &jobs.Items[i]
		if grouplock.RunbookWaits(j) {
			trusted, err := trustedRunbookJob(ctx, c, j)
			if err != nil {
				return nil, nil, err
			}
			if trusted {
				runbooks = append(runbooks, *j)
			}
		}
	}
	return grouplock.Holders(rrs.Items, jobs.Items, pods.Items), grouplock.Waiting(rrs.Items, runbooks), nil
}

// decideStart asks the group's queue whether self may start its Job job, and
// starts it with start when it may (see groupQueue.TryStart), with any start
// the cache does not show yet counted as a holder.
func decideStart(ctx context.Context, q *grouplock.Queue, c client.Client, api client.Reader, key string, self grouplock.Entry, job types.NamespacedName, start func() (bool, error)) (grouplock.Decision, error) {
	var readErr error
	settled := func(kind grouplock.EntryKind, job types.NamespacedName) bool {
		var j batchv1.Job
		if err := c.Get(ctx, job, &j); err == nil {
			return grouplock.HoldSettled(kind, &j)
		}
		// Not in the cache: settled only if the API server has no such
		// Job either (it was deleted before the cache ever saw it)...
		if err := api.Get(ctx, job, &j); !apierrors.IsNotFound(err) {
			return false
		}
		// ...and, for a start that recorded consumers instead, once the
		// cache shows the record that makes the request a holder.
		return consumersStartSettled(ctx, c, api, key, job)
	}
	d, err := q.TryStart(key, job, self, settled, func(pending *grouplock.Entry) grouplock.Decision {
		holders, waiting, err := groupState(ctx, c, key)
		if err != nil {
			readErr = err
			return grouplock.Decision{}
		}
		if pending != nil {
			holders = append(holders, *pending)
		}
		return grouplock.Decide(self, holders, waiting)
	}, start)
	if readErr != nil {
		return grouplock.Decision{}, readErr
	}
	return d, err
}

// consumersStartSettled says whether the start of the request whose Job
// would be job is shown by the cache as far as the queue needs: it is not a
// request of key's group with consumers (its start is its Job), or the cache
// shows its record (Holders sees it), or the API server has no record either
// (the start did not happen, or is undone).
func consumersStartSettled(ctx context.Context, c client.Client, api client.Reader, key string, job types.NamespacedName) bool {
	var rrs v1alpha1.ReplayRequestList
	if err := c.List(ctx, &rrs, client.InNamespace(job.Namespace), client.MatchingFields{indexQueueKey: key}); err != nil {
		return false
	}
	for i := range rrs.Items {
		rr := &rrs.Items[i]
		if !state.PausesConsumers(rr) || runnerjob.Name(rr, runnerjob.StageApply) != job.Name {
			continue
		}
		if state.ConsumersHeld(rr) || state.IsStarted(rr) || state.IsFinished(rr) {
			return true
		}
		var live v1alpha1.ReplayRequest
		if err := api.Get(ctx, client.ObjectKeyFromObject(rr), &live); err != nil {
			return apierrors.IsNotFound(err)
		}
		return !state.ConsumersHeld(&live)
	}
	return true
}

// SetupWithManager registers the controller, its indexes and its watches:
// requests (a new one ahead of other work, startsFirst); their Jobs and pods
// (mapped back through the request annotation, which also works once a
// finished Job is no longer owned); and, so that a replay that leaves its
// group lets the next one start, the waiting requests of a group whenever
// one of its Jobs, pods or requests stops holding it.
//
// It also registers the queue key indexes, which the runbook Job controller
// uses too.
func (r *ReplayRequestReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, workers int) error {
	if r.queue == nil {
		r.queue = grouplock.NewQueue()
	}
	if err := setupIndexes(ctx, mgr); err != nil {
		return err
	}
	toRequest := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		name := o.GetAnnotations()[v1alpha1.AnnotationRequest]
		if name == "" || o.GetLabels()[v1alpha1.LabelRequest] == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
	})
	wake := wakeWaiting(mgr.GetClient(), grouplock.EntryRequest)
	b := ctrl.NewControllerManagedBy(mgr).
		Named("replayrequest").
		For(&v1alpha1.ReplayRequest{}, builder.WithPredicates(notCreatedBeforeStart)).
		Watches(&v1alpha1.ReplayRequest{}, startsFirst()).
		Watches(&batchv1.Job{}, toRequest).
		Watches(&corev1.Pod{}, toRequest).
		Watches(&batchv1.Job{}, wake).
		Watches(&corev1.Pod{}, wake).
		Watches(&v1alpha1.ReplayRequest{}, wake).
		Watches(&v1alpha1.ReplayRequest{}, wakeChildrenOnApproval())
	return watchStrimzi(mgr, b, r.Options).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(workers, 1)}).
		Complete(r)
}

// setupIndexes registers the queue key index on requests, Jobs and pods,
// and the index of the requests that may wait for Strimzi's objects.
func setupIndexes(ctx context.Context, mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	for _, q := range queueKeyIndexes {
		if err := idx.IndexField(ctx, q.obj, indexQueueKey, q.key); err != nil {
			return err
		}
	}
	return idx.IndexField(ctx, &v1alpha1.ReplayRequest{}, indexStrimziWait, func(o client.Object) []string {
		return strimziWaitKeys(o.(*v1alpha1.ReplayRequest))
	})
}

// queueKeyIndexes say, per kind, the QueueKey of the group an object
// replays (indexQueueKey).
var queueKeyIndexes = []struct {
	obj client.Object
	key client.IndexerFunc
}{
	{&v1alpha1.ReplayRequest{}, func(o client.Object) []string {
		return []string{grouplock.QueueKey(o.(*v1alpha1.ReplayRequest))}
	}},
	{&batchv1.Job{}, func(o client.Object) []string {
		if k := grouplock.PodSpecQueueKey(&o.(*batchv1.Job).Spec.Template.Spec); k != "" {
			return []string{k}
		}
		return nil
	}},
	{&corev1.Pod{}, func(o client.Object) []string {
		if k := grouplock.PodSpecQueueKey(&o.(*corev1.Pod).Spec); k != "" {
			return []string{k}
		}
		return nil
	}},
}
