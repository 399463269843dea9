package launcher

import (
	"context"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/consumers"
	"github.com/kafka-replay/kafka-replay/launcher/internal/grouplock"
	"github.com/kafka-replay/kafka-replay/launcher/internal/lifecycle"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

// releaseDeleted says whether a deleted request may go (its finalizer be
// removed), given its Job (nil when gone) and that Job's pods. It is pure.
//
// With --cascade=orphan the user keeps the Job running: the request goes at
// once, and the Job and its pod hold the group by themselves (Holders) until
// the pod is gone. Otherwise the request stays until no runner pod of its
// Job is active or terminating: a deleted request is visibly Terminating for
// as long as its runner may still commit.
func releaseDeleted(rr *v1alpha1.ReplayRequest, job *batchv1.Job, pods []corev1.Pod) bool {
	if slices.Contains(rr.Finalizers, metav1.FinalizerOrphanDependents) {
		return true
	}
	for i := range pods {
		if grouplock.PodActive(&pods[i]) {
			return false
		}
	}
	return job == nil || !grouplock.JobRuns(job)
}

// deleting handles a request being deleted that carries the launcher's
// finalizer: it deletes the request's running Job (unless the deletion
// orphans it), and drops the finalizer once releaseDeleted says so. Pod
// events bring it back until then.
func (r *ReplayRequestReconciler) deleting(ctx context.Context, p *pass) error {
	rr := p.rr
	if !controllerutil.ContainsFinalizer(rr, Finalizer) {
		return nil
	}
	job := p.job
	if job == nil {
		job = p.planJob // a Manual request deleted while it plans
	}
	if job != nil && !lifecycle.ControlledBy(job, rr) {
		job = nil // not this request's
	}
	var pods []corev1.Pod
	if job != nil {
		var err error
		if pods, err = podsOfJob(ctx, r.Client, job); err != nil {
			return err
		}
	} else if rr.Status.JobName != "" {
		// The Job is gone; its pods may not be (--cascade=orphan on the
		// Job).
		var err error
		if pods, err = runnerPodsNamed(ctx, r.Client, rr.Namespace, rr.Status.JobName); err != nil {
			return err
		}
	}
	orphan := slices.Contains(rr.Finalizers, metav1.FinalizerOrphanDependents)
	if job != nil && grouplock.JobRuns(job) && !orphan {
		// Background propagation: the Job goes at once and the garbage
		// collector removes its pods, each with its grace period.
		if err := r.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &job.UID}); client.IgnoreNotFound(err) != nil {
			return err
		}
		log.FromContext(ctx).Info("request deleted: stopping its runner Job", "job", job.Name)
		job = nil
	}
	if !releaseDeleted(rr, job, pods) {
		return nil
	}
	r.logReads.forget(pods) // no runner left to follow (followRunner)
	// No runner is left: the consumers go back as recorded before the
	// request does (a deleted request's status is not written; the record
	// stays until the restore is done).
	if err := r.restoreAll(ctx, rr); err != nil {
		return err
	}
	if state.ConsumersHeld(rr) {
		return nil
	}
	for _, c := range rr.Status.Consumers {
		if c.Message != "" {
			log.FromContext(ctx).Info("request deleted: consumer restored", "kind", c.Kind, "name", c.Name, "state", c.State, "message", c.Message)
		}
	}
	if len(rr.Status.Consumers) > 0 {
		_, msg := consumers.RestoredCondition(rr.Status.Consumers)
		p.event(nil, corev1.EventTypeNormal, v1alpha1.ConditionConsumersRestored, "Restore", msg)
	}
	return r.removeFinalizer(ctx, rr)
}
