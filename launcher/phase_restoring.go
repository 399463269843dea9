package launcher

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/consumers"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

// restoringConsumers restores every consumer a finished request still holds,
// whatever its outcome, as recorded and only where the pause is still in
// place (consumers.DecideRestore). The pass's status write records it; only the next
// pass (Finished) drops the finalizer, so the record outlives a launcher
// stopped in between, and the group stays held until it is written.
func (r *ReplayRequestReconciler) restoringConsumers(ctx context.Context, p *pass) error {
	alive, err := r.runnerAlive(ctx, p.rr)
	if err != nil {
		return err
	}
	if alive != "" {
		state.
			// Not under a runner that may still commit, whatever ended the
			// request; the pod's events bring it back.
			SetCondition(p.rr, v1alpha1.ConditionConsumersRestored, metav1.ConditionFalse, state.ReasonWaitingForRunner, "the consumers are restored once runner pod "+alive+" has ended")
		return nil
	}
	if err := r.restoreAll(ctx, p.rr); err != nil {
		state.SetCondition(p.rr, v1alpha1.ConditionConsumersRestored, metav1.ConditionFalse, state.ReasonRestoreFailed, "restoring the consumers: "+err.Error())
		return err
	}
	reason, msg := consumers.RestoredCondition(p.rr.Status.Consumers)
	state.SetCondition(p.rr, v1alpha1.ConditionConsumersPaused, metav1.ConditionFalse, state.ReasonRestored, "the consumers are no longer paused")
	state.SetCondition(p.rr, v1alpha1.ConditionConsumersRestored, metav1.ConditionTrue, reason, msg)
	eventType := corev1.EventTypeNormal
	if reason != state.ReasonRestored {
		eventType = corev1.EventTypeWarning
	}
	p.event(nil, eventType, v1alpha1.ConditionConsumersRestored, "Restore", msg)
	return nil
}

// restoreAll restores each held consumer in turn; one that fails stops it,
// and the next try starts again from the record.
func (r *ReplayRequestReconciler) restoreAll(ctx context.Context, rr *v1alpha1.ReplayRequest) error {
	for i := range rr.Status.Consumers {
		c := &rr.Status.Consumers[i]
		if c.State != v1alpha1.ConsumerRecorded && c.State != v1alpha1.ConsumerPaused {
			continue
		}
		if err := r.restoreConsumer(ctx, rr.Namespace, c); err != nil {
			return err
		}
	}
	return nil
}

// runnerAlive names a runner pod of the request's Job that is alive (not
// Succeeded or Failed, deleted or not), whether or not the Job still exists;
// "" when there is none.
func (r *ReplayRequestReconciler) runnerAlive(ctx context.Context, rr *v1alpha1.ReplayRequest) (string, error) {
	if rr.Status.JobName == "" {
		return "", nil
	}
	pods, err := runnerPodsNamed(ctx, r.Client, rr.Namespace, rr.Status.JobName)
	if err != nil {
		return "", err
	}
	if p := alivePod(pods); p != nil {
		return p.Name, nil
	}
	return "", nil
}
