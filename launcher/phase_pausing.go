package launcher

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/approval"
	"github.com/kafka-replay/kafka-replay/launcher/internal/consumers"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

// recordConsumers is a start of a request with consumers (Queued, under the
// group's queue): it reads every consumer and writes the record into status
// before anything is changed, so that a launcher stopped at any point later
// knows what to restore. The write is the start itself, as creating the Job
// is for a request without consumers: from it on the request holds its group
// (ConsumersHeld), and it is made with the request's current version only,
// so a stale read never starts a run.
func (r *ReplayRequestReconciler) recordConsumers(ctx context.Context, p *pass) error {
	rr := p.rr
	if err := r.confirmCurrent(ctx, rr); err != nil {
		return err
	}
	refs := state.RequestConsumers(rr)
	recorded := make([]v1alpha1.ConsumerStatus, 0, len(refs))
	for _, ref := range refs {
		c, err := r.recordConsumer(ctx, rr.Namespace, ref)
		if err != nil {
			return err
		}
		recorded = append(recorded, c)
	}
	rr.Status.Consumers = recorded
	state.SetCondition(rr, v1alpha1.ConditionConsumersPaused, metav1.ConditionFalse, state.ReasonPausing, "recorded, pausing: "+consumersList(recorded))
	rr.Status.Message = "pausing the consumers"
	rr.Status.Phase = state.PhaseFor(rr.Status.Conditions)
	return r.updateStatus(ctx, rr)
}

// recordFailed reports consumers that could not be recorded. Nothing was
// changed. A consumer that is missing or cannot be paused as named fails the
// request; anything else (an outage) is retried.
func (r *ReplayRequestReconciler) recordFailed(ctx context.Context, p *pass, err error) error {
	if apierrors.IsConflict(err) {
		return nil // the newer version's event reconciles again
	}
	if !permanent(err) {
		return err
	}
	rr := p.rr
	rr.Status.Consumers = nil
	msg := "cannot record the consumers, nothing was changed: " + err.Error()
	state.SetCondition(rr, v1alpha1.ConditionConsumersPaused, metav1.ConditionFalse, state.ReasonPauseFailed, msg)
	return r.finish(ctx, p, nil, record.Outcome{Reason: state.ReasonPauseFailed, Message: msg})
}

// pausingConsumers pauses every recorded consumer, then creates the Job: the
// runner waits, within waitTimeout, for the group to be empty. A consumer
// that cannot be paused fails the request; what was paused is restored
// (RestoringConsumers).
func (r *ReplayRequestReconciler) pausingConsumers(ctx context.Context, p *pass) (next bool, err error) {
	rr := p.rr
	if v, ok := approval.LateRejection(rr); ok {
		// Approved and its consumers recorded, but no apply Job yet: a
		// rejection still stops it, and what was paused is restored.
		return false, r.rejected(ctx, p, v)
	}
	for i := range rr.Status.Consumers {
		c := &rr.Status.Consumers[i]
		if c.State != v1alpha1.ConsumerRecorded {
			continue
		}
		if err := r.pauseConsumer(ctx, rr.Namespace, c); err != nil {
			if !permanent(err) {
				return false, err
			}
			msg := "cannot pause " + consumers.Name(*c) + ": " + err.Error()
			state.SetCondition(rr, v1alpha1.ConditionConsumersPaused, metav1.ConditionFalse, state.ReasonPauseFailed, msg)
			return false, r.finish(ctx, p, nil, record.Outcome{Reason: state.ReasonPauseFailed, Message: msg})
		}
		c.State = v1alpha1.ConsumerPaused
		c.Message = "paused"
	}
	msg := consumers.PausedMessage(rr.Status.Consumers)
	if state.SetCondition(rr, v1alpha1.ConditionConsumersPaused, metav1.ConditionTrue, state.ReasonPaused, msg) {
		p.event(nil, corev1.EventTypeNormal, v1alpha1.ConditionConsumersPaused, "Pause", msg)
		for _, c := range rr.Status.Consumers {
			for _, w := range c.Warnings {
				p.event(nil, corev1.EventTypeWarning, "ConsumerPauseWarning", "Pause", w)
			}
		}
	}
	rr.Status.Message = msg
	// The request holds its group already (ConsumersHeld): the Job is
	// created without asking the queue again.
	job, err := r.createJob(ctx, rr, runnerjob.StageApply)
	switch {
	case errors.Is(err, errStale):
		log.FromContext(ctx).V(1).Info("not starting from a stale cache")
		return false, nil
	case err != nil:
		return false, r.createFailed(ctx, p, err)
	}
	p.job = job
	return true, nil // Applying adopts it
}

func consumersList(cs []v1alpha1.ConsumerStatus) string {
	s := ""
	for i, c := range cs {
		if i > 0 {
			s += ", "
		}
		s += consumers.Summary(c)
	}
	return s
}
