package launcher

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/grouplock"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

// trustedRunbookJob looks up job's CronJob in the cache (only the chart's
// runbook CronJobs are cached) and applies TrustedRunbookJob.
func trustedRunbookJob(ctx context.Context, c client.Reader, job *batchv1.Job) (bool, error) {
	ref := metav1.GetControllerOf(job)
	if !grouplock.IsRunbookJob(job) || ref == nil || ref.Kind != "CronJob" {
		return false, nil
	}
	var cj batchv1.CronJob
	if err := c.Get(ctx, types.NamespacedName{Namespace: job.Namespace, Name: ref.Name}, &cj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	return grouplock.TrustedRunbookJob(job, &cj), nil
}

// RunbookJobReconciler runs the Jobs made from the chart's runbook CronJobs
// (`kubectl create job --from=cronjob/...`) the way requests run: each is
// created suspended and waits in its group's queue, first in first out with
// the group's requests; when its turn comes the launcher starts it
// (suspend: false) and, when it finishes, records its outcome on it, so its
// history reads the same as a request's. Only trusted Jobs (TrustedRunbookJob)
// are started or recorded.
type RunbookJobReconciler struct {
	Client    client.Client
	APIReader client.Reader
	Recorder  recorder.EventRecorder
	// Records keeps a finished runbook Job's ReplayRecord, as for a
	// request's Job; nil keeps none.
	Records *record.Collector
	Options Options
	// Now is the clock; tests may stop it.
	Now func() time.Time

	queue *grouplock.Queue
}

func (r *RunbookJobReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Reconcile starts a waiting runbook Job when its group is free, bounds its
// start, and records its outcome once. A write that conflicts with a newer
// version is retried quietly (quietConflict).
func (r *RunbookJobReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.reconcile(ctx, req)
	return behindStarts(quietConflict(ctx, res, err))
}

func (r *RunbookJobReconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var job batchv1.Job
	if err := r.Client.Get(ctx, req.NamespacedName, &job); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !grouplock.IsRunbookJob(&job) || state.IsRecorded(&job) || job.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	trusted, err := trustedRunbookJob(ctx, r.Client, &job)
	if err != nil || !trusted {
		if err == nil {
			log.FromContext(ctx).V(1).Info("ignoring a runner Job not made from the chart's runbook CronJobs")
		}
		return reconcile.Result{}, err
	}
	if grouplock.RunbookWaits(&job) {
		return reconcile.Result{}, r.startOrWait(ctx, &job)
	}
	pods, err := podsOfJob(ctx, r.Client, &job)
	if err != nil {
		return reconcile.Result{}, err
	}
	now := r.now()
	finished, _, _ := state.JobFinished(&job)
	if !finished {
		return r.bound(ctx, &job, pods, now)
	}
	if pods, err = settledPods(ctx, r.APIReader, &job, pods); err != nil {
		return reconcile.Result{}, err
	}
	o := record.JobOutcome(&job, pods)
	alive, overdue, wait := outcomeWait(pods, o, r.Options.PodResultGrace, now)
	if alive != "" {
		// The pod's updates bring this back (the pod watch below); wait is
		// the one wake-up that says it is overdue.
		if overdue {
			log.FromContext(ctx).Info(aliveMessage("runbook", &job, alive, true))
		} else {
			log.FromContext(ctx).V(1).Info(aliveMessage("runbook", &job, alive, false))
		}
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	if wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	o, err = record.CollectRecord(ctx, r.Records, &job, pods, o)
	if err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, r.record(ctx, &job, o)
}

// startOrWait starts a waiting runbook Job when the queue says so: it sets
// suspend to false and notes when (AnnotationStartedAt), in one patch that
// carries the cached resourceVersion, so a stale cache cannot start it twice.
func (r *RunbookJobReconciler) startOrWait(ctx context.Context, job *batchv1.Job) error {
	key := grouplock.PodSpecQueueKey(&job.Spec.Template.Spec)
	self := grouplock.Entry{Kind: grouplock.EntryJob, Namespace: job.Namespace, Name: job.Name, Created: job.CreationTimestamp.Time, Since: r.now()}
	d, err := decideStart(ctx, r.queue, r.Client, r.APIReader, key, self, client.ObjectKeyFromObject(job), func() (bool, error) {
		patched := job.DeepCopy()
		patched.Spec.Suspend = ptr.To(false)
		if patched.Annotations == nil {
			patched.Annotations = map[string]string{}
		}
		now := r.now()
		patched.Annotations[v1alpha1.AnnotationStartedAt] = now.UTC().Format(time.RFC3339)
		if err := r.Client.Patch(ctx, patched, client.MergeFromWithOptions(job, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				return false, nil // stale: the event brings it back
			}
			return false, err
		}
		*job = *patched
		return true, nil
	})
	if err != nil {
		return err
	}
	if d.Start {
		r.Recorder.Eventf(job, nil, corev1.EventTypeNormal, "Started", "Run", "started: group %q is free", job.Annotations[v1alpha1.AnnotationGroup])
		return nil
	}
	if d.Blocker != nil {
		msg := grouplock.WaitingMessage(job.Namespace, job.Annotations[v1alpha1.AnnotationGroup], d)
		r.Recorder.Eventf(job, nil, corev1.EventTypeNormal, state.ReasonWaitingForGroup, "Queue", "%s", msg)
	}
	return nil
}

// bound fails a started runbook Job whose pod has not started within the
// start timeout, or fails to start in a way waiting does not mend
// (startVerdict): it is recorded with that reason and suspended again, which
// removes its pod.
func (r *RunbookJobReconciler) bound(ctx context.Context, job *batchv1.Job, pods []corev1.Pod, now time.Time) (reconcile.Result, error) {
	start := startProgress(pods)
	if start.Started {
		return reconcile.Result{}, nil
	}
	events := startEvents(ctx, r.APIReader, pods, r.Options.StartFailAfter, now)
	o, again := startVerdict("runner", grouplock.JobSince(job), pods, events, start, now, r.Options)
	if o == nil {
		return reconcile.Result{RequeueAfter: again}, nil
	}
	if err := stopJob(ctx, r.Client, job); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, r.record(ctx, job, *o)
}

func (r *RunbookJobReconciler) record(ctx context.Context, job *batchv1.Job, o record.Outcome) error {
	if err := recordOnJob(ctx, r.Client, job, o, nil); err != nil {
		return err
	}
	observeOutcome(o, jobStartedAt(job))
	eventType := corev1.EventTypeNormal
	if !o.Succeeded {
		eventType = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(job, nil, eventType, o.Reason, "Record", "%s", o.Message)
	log.FromContext(ctx).Info("recorded runbook Job outcome", "outcome", o.Reason)
	return nil
}

func jobStartedAt(job *batchv1.Job) time.Time {
	if job.Status.StartTime != nil {
		return job.Status.StartTime.Time
	}
	return grouplock.JobSince(job)
}

// SetupWithManager registers the runbook Job controller: runbook Jobs, their
// pods, and the groups' freeing events (a runbook Job waits for requests and
// other Jobs of its group).
//
// It needs the queue key indexes that ReplayRequestReconciler.SetupWithManager
// registers, and shares that controller's queue when Setup makes both.
func (r *RunbookJobReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.queue == nil {
		r.queue = grouplock.NewQueue()
	}
	isRunbook := predicate.NewPredicateFuncs(func(o client.Object) bool {
		job, ok := o.(*batchv1.Job)
		return ok && grouplock.IsRunbookJob(job)
	})
	wake := wakeWaiting(mgr.GetClient(), grouplock.EntryJob)
	return ctrl.NewControllerManagedBy(mgr).
		Named("runbookjob").
		For(&batchv1.Job{}, builder.WithPredicates(isRunbook)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if _, fromRequest := o.GetLabels()[v1alpha1.LabelRequest]; fromRequest {
				return nil
			}
			if name := o.GetLabels()[batchv1.JobNameLabel]; name != "" {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
			}
			return nil
		})).
		Watches(&batchv1.Job{}, wake).
		Watches(&corev1.Pod{}, wake).
		Watches(&v1alpha1.ReplayRequest{}, wake).
		Complete(r)
}
