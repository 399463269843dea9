package launcher

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/lifecycle"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/internal/undo"
)

// finish records a final outcome in status, through the pass (Succeeded,
// Finished, the result), and as an event and metrics. After the status write
// (afterFinish) the outcome goes on the Job in the same patch that releases
// it from the request, then the finalizer goes and the history limit
// applies. Status comes first: until it says the request has finished, the
// request keeps controlling its Job, so a pass that stops in between finds
// its own Job again, never one it would take for an earlier run's
// (AlreadyRan). A failure part-way is retried by the next reconcile.
func (r *ReplayRequestReconciler) finish(ctx context.Context, p *pass, job *batchv1.Job, o record.Outcome) error {
	logTail := ""
	if job != nil || o.PodName != "" {
		// The collector read the whole log and kept its end without the
		// result frame; otherwise read the end (also of the pod of a
		// deleted Job, while it is there).
		logTail = o.LogTail
		if logTail == "" && o.PodName != "" && r.Logs != nil {
			t, err := r.Logs.Tail(ctx, p.rr.Namespace, o.PodName, state.ContainerName, r.Options.LogTailLines, r.Options.LogTailBytes)
			if err != nil {
				log.FromContext(ctx).V(1).Info("no log tail", "pod", o.PodName, "error", err.Error())
			}
			logTail = record.WithoutFrameLines(t)
		}
	}
	FinishRequest(p.rr, o, logTail, p.now)
	eventType := corev1.EventTypeNormal
	if !o.Succeeded {
		eventType = corev1.EventTypeWarning
	}
	p.event(job, eventType, o.Reason, "Finish", o.Message)
	p.finished = &o
	p.finishedJob = job
	return nil
}

// FinishRequest is Finish, and the Finished condition: True on every final
// outcome, with the outcome's reason, so that
// `kubectl wait --for=condition=Finished` returns on success and failure
// alike.
func FinishRequest(rr *v1alpha1.ReplayRequest, o record.Outcome, logTail string, now time.Time) {
	record.Finish(rr, o, logTail, now)
	state.SetCondition(rr, v1alpha1.ConditionFinished, metav1.ConditionTrue, o.Reason, o.Message)
	// How to take it back, with the outcome: empty unless it committed.
	rr.Status.UndoCommand = undo.Command(rr)
}

// afterFinish is what a finish does once status says the request has
// finished: the outcome on the request's Job, and the Job released, in one
// patch; then the finalizer goes. o is the outcome this pass reached, or nil
// when an earlier pass reached it and stopped before this (the Finished
// phase), in which case the Job is recorded from status (statusOutcome).
func (r *ReplayRequestReconciler) afterFinish(ctx context.Context, rr *v1alpha1.ReplayRequest, job *batchv1.Job, o *record.Outcome) error {
	if job != nil && lifecycle.ControlledBy(job, rr) && !refusedJob(rr, job) {
		var out record.Outcome
		switch {
		case o != nil:
			out = *o
		case state.IsRecorded(job):
			out = recordedOutcome(job)
		default:
			out = statusOutcome(rr)
		}
		if err := recordOnJob(ctx, r.Client, job, out, rr); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	if state.ConsumersHeld(rr) {
		// The finalizer guarantees the restore (RestoringConsumers, on the
		// status event this finish's write sends).
		return nil
	}
	return r.removeFinalizer(ctx, rr)
}

// refusedJob reports whether job is a finished request's apply Job that its
// status never named: Applying refused to adopt it (approval.Adopted, a
// JobConflict), or it came after the request ended. Its controller
// reference notwithstanding, the launcher leaves it as it was, as it does
// any Job it did not make: no outcome of this request is written on it. It
// is pure.
func refusedJob(rr *v1alpha1.ReplayRequest, job *batchv1.Job) bool {
	return job.Name == runnerjob.Name(rr, runnerjob.StageApply) && rr.Status.JobName != job.Name
}

// statusOutcome is the outcome a finished request's status records, for a
// Job that did not get it: reason, success, message and time (the full
// result is in status and in the Job's record). It is pure.
func statusOutcome(rr *v1alpha1.ReplayRequest) record.Outcome {
	o := record.Outcome{Message: rr.Status.Message}
	if c := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionSucceeded); c != nil {
		o.Succeeded, o.Reason = c.Status == metav1.ConditionTrue, c.Reason
	}
	if rr.Status.CompletionTime != nil {
		o.FinishedAt = rr.Status.CompletionTime.Time
	}
	return o
}
