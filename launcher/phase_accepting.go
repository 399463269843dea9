package launcher

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/grouplock"
	"github.com/kafka-replay/kafka-replay/launcher/internal/knative"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/internal/strimzi"
	"github.com/kafka-replay/kafka-replay/launcher/internal/undo"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// accepting validates a new request with the runner's own rules and
// resolves its target, against the request's creationTimestamp: an ago
// target means "that long before I asked", whenever the launcher gets to it,
// and resolving it from a stored instant gives the same time on every
// attempt. A refused request finishes here.
//
// The resolved target is only kept in memory here. It is stored by the
// pass's status write, after the Job (which carries it in an annotation and
// REPLAY_TO) when the request starts at once: one write fewer on the path
// from request to Job, and a Job that exists is always adopted with the
// target it carries.
func (r *ReplayRequestReconciler) accepting(ctx context.Context, p *pass) (next bool, err error) {
	rr := p.rr
	target, terr := ResolveTarget(rr.Spec.Target, rr.CreationTimestamp.Time)
	serr := ValidateSpec(&rr.Spec)
	if serr == nil && rr.Spec.Runner != nil {
		if _, err := r.Options.RunnerImageFor(rr.Spec.Runner.Image); err != nil {
			serr = fmt.Errorf("runner.image: %w", err)
		}
	}
	if terr != nil || serr != nil {
		reason, msg := state.ReasonInvalidTarget, ""
		if terr != nil {
			msg = terr.Error()
		} else {
			reason, msg = string(report.ReasonInvalidInput), serr.Error()
		}
		state.SetCondition(rr, v1alpha1.ConditionAccepted, metav1.ConditionFalse, reason, msg)
		return false, r.finish(ctx, p, nil, record.Outcome{Reason: reason, Message: msg})
	}
	if replay.UsesConsumerRef(rr) {
		// Resolved once, here, and kept in status with Accepted
		// (knative_io.go); a status.resolved someone else wrote first is
		// refused, not trusted.
		res, err := r.acceptConsumerRef(ctx, rr)
		if errors.Is(err, knative.ErrNotResolvable) {
			return false, r.refuseUnresolved(ctx, p, state.ReasonConsumerRefNotResolved, err)
		}
		if err != nil {
			return false, err
		}
		rr.Status.Resolved = res
		// The pass's queue key was taken before the group was known.
		p.key = grouplock.QueueKey(rr)
	}
	if replay.UsesClusterRef(rr) {
		// The same once-at-acceptance resolution, for a Strimzi Kafka
		// (strimzi.go).
		res, err := r.acceptClusterRef(ctx, rr)
		if errors.Is(err, strimzi.ErrNotResolvable) {
			return false, r.refuseUnresolved(ctx, p, state.ReasonClusterRefNotResolved, err)
		}
		if err != nil {
			return false, err
		}
		rr.Status.ResolvedKafka = res
		p.key = grouplock.QueueKey(rr)
	}
	if rr.Spec.Target.UndoOf != nil {
		decided, _, err := r.decideUndo(ctx, rr)
		if refusal := (*undo.Refusal)(nil); errors.As(err, &refusal) {
			state.SetCondition(rr, v1alpha1.ConditionAccepted, metav1.ConditionFalse, state.ReasonUndoRefused, refusal.Error())
			return false, r.finish(ctx, p, nil, record.Outcome{Reason: state.ReasonUndoRefused, Message: refusal.Error()})
		}
		if err != nil {
			return false, err
		}
		rr.Status.Undo = decided
	}
	rr.Status.ResolvedTarget = target
	rr.Status.RequestedBy = rr.Requester()
	state.SetCondition(rr, v1alpha1.ConditionAccepted, metav1.ConditionTrue, state.ReasonAccepted, "target resolved to "+target)
	rr.Status.Phase = state.PhaseFor(rr.Status.Conditions)
	rr.Status.ObservedGeneration = rr.Generation
	p.accepted = true
	return true, nil
}

// refuseUnresolved finishes a request whose consumerRef or clusterRef
// cannot be resolved, nothing run, with why.
func (r *ReplayRequestReconciler) refuseUnresolved(ctx context.Context, p *pass, reason string, err error) error {
	msg := state.Truncate(err.Error(), 1024)
	state.SetCondition(p.rr, v1alpha1.ConditionAccepted, metav1.ConditionFalse, reason, msg)
	return r.finish(ctx, p, nil, record.Outcome{Reason: reason, Message: msg})
}
