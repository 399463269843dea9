package launcher

import (
	"context"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// finish records a final outcome: first on the Job (annotations), then,
// through the pass, in status (Succeeded, Finished, the result), then as an
// event and metrics. After the status write the request releases its Job
// (releaseJob: the Job stays as the group's history), the finalizer goes and
// the history limit applies. A failure part-way is retried by the next
// reconcile, which finds the same outcome again.
func (r *ReplayRequestReconciler) finish(ctx context.Context, p *pass, job *batchv1.Job, o Outcome) error {
	logTail := ""
	if job != nil {
		// The collector read the whole log and kept its end without the
		// result frame; otherwise read the end.
		logTail = o.LogTail
		if logTail == "" && o.PodName != "" && r.Logs != nil {
			t, err := r.Logs.Tail(ctx, p.rr.Namespace, o.PodName, ContainerName, r.Options.LogTailLines, r.Options.LogTailBytes)
			if err != nil {
				log.FromContext(ctx).V(1).Info("no log tail", "pod", o.PodName, "error", err.Error())
			}
			logTail = WithoutFrameLines(t)
		}
		// The request keeps controlling its Job until status says it has
		// finished: a pass that fails between the two finds its own Job
		// again, not one it would take for an earlier run's (AlreadyRan).
		if err := recordOnJob(ctx, r.Client, job, o); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	FinishRequest(p.rr, o, logTail, p.now)
	eventType := corev1.EventTypeNormal
	if !o.Succeeded {
		eventType = corev1.EventTypeWarning
	}
	p.event(job, eventType, o.Reason, "Finish", o.Message)
	p.finished = &o
	return nil
}

// FinishRequest is Finish, and the Finished condition: True on every final
// outcome, with the outcome's reason, so that
// `kubectl wait --for=condition=Finished` returns on success and failure
// alike.
func FinishRequest(rr *v1alpha1.ReplayRequest, o Outcome, logTail string, now time.Time) {
	Finish(rr, o, logTail, now)
	SetCondition(rr, v1alpha1.ConditionFinished, metav1.ConditionTrue, o.Reason, o.Message)
}

// releaseJob removes the request's owner reference from its recorded Job:
// while the Job runs the reference makes a deleted request take its Job (and
// pod) with it; once the request has finished, the Job is the group's
// history and outlives the request until the history limit removes it.
func releaseJob(ctx context.Context, c client.Client, rr *v1alpha1.ReplayRequest, job *batchv1.Job) error {
	if job == nil || !ControlledBy(job, rr) || !IsRecorded(job) {
		return nil
	}
	patched := job.DeepCopy()
	patched.OwnerReferences = slices.DeleteFunc(patched.OwnerReferences, func(ref metav1.OwnerReference) bool {
		return ref.UID == rr.UID
	})
	if err := c.Patch(ctx, patched, client.MergeFrom(job)); err != nil {
		return client.IgnoreNotFound(err)
	}
	*job = *patched
	return nil
}

// finished is the Finished phase: what a finish left to do after its status
// write, should that pass have stopped there.
func (r *ReplayRequestReconciler) finishedPhase(ctx context.Context, p *pass) error {
	if err := releaseJob(ctx, r.Client, p.rr, p.job); err != nil {
		return err
	}
	return r.removeFinalizer(ctx, p.rr)
}
