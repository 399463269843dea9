package launcher

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// finish records a final outcome: first on the Job (annotations, and the
// request's ownership released so the Job stays as history), then, through
// the pass, in status (Succeeded, Finished, the result), then as an event and
// metrics; the finalizer goes and the history limit applies after the
// status write. A failure part-way is retried by the next reconcile, which
// finds the same outcome again.
func (r *ReplayRequestReconciler) finish(ctx context.Context, p *pass, job *batchv1.Job, o Outcome) error {
	logTail := ""
	if job != nil {
		if o.PodName != "" && r.Logs != nil {
			t, err := r.Logs.Tail(ctx, p.rr.Namespace, o.PodName, ContainerName, r.Options.LogTailLines, r.Options.LogTailBytes)
			if err != nil {
				log.FromContext(ctx).V(1).Info("no log tail", "pod", o.PodName, "error", err.Error())
			}
			logTail = t
		}
		if err := recordOnJob(ctx, r.Client, job, o, true); client.IgnoreNotFound(err) != nil {
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
