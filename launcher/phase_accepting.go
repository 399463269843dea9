package launcher

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
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
	// What status.resolvedKafka held before this pass: a request that goes
	// on waiting keeps it, so that a resolution of this pass is never
	// stored without Accepted (a later pass would take it for someone
	// else's and refuse the request once the Kafka changed).
	heldKafka := rr.Status.ResolvedKafka
	if replay.UsesClusterRef(rr) {
		// Resolved once, here, and kept in status with Accepted
		// (strimzi.go). First, so that a KafkaConnector consumerRef is
		// resolved against a Kafka that is ready: until Strimzi's
		// operator has reconciled the Kafka and the KafkaUser, the
		// request waits for them (waitForStrimzi).
		res, err := r.acceptClusterRef(ctx, rr)
		if errors.Is(err, strimzi.ErrNotReady) {
			return false, r.waitForStrimzi(ctx, p, err, state.ReasonWaitingForCluster, state.ReasonClusterRefNotResolved)
		}
		if errors.Is(err, strimzi.ErrNotResolvable) {
			return false, r.refuseUnresolved(ctx, p, state.ReasonClusterRefNotResolved, err)
		}
		if err != nil {
			return false, err
		}
		rr.Status.ResolvedKafka = res
	}
	if replay.UsesConsumerRef(rr) {
		// The same once-at-acceptance resolution (knative_io.go); a
		// status.resolved someone else wrote first is refused, not
		// trusted.
		res, err := r.acceptConsumerRef(ctx, rr)
		if errors.Is(err, strimzi.ErrNotReady) {
			// A KafkaConnector whose status is behind its spec.
			rr.Status.ResolvedKafka = heldKafka
			return false, r.waitForStrimzi(ctx, p, err, state.ReasonWaitingForConnector, state.ReasonConsumerRefNotResolved)
		}
		if errors.Is(err, knative.ErrNotResolvable) {
			return false, r.refuseUnresolved(ctx, p, state.ReasonConsumerRefNotResolved, err)
		}
		if err != nil {
			return false, err
		}
		rr.Status.Resolved = res
	}
	// The pass's queue key was taken before the group and the cluster
	// were known.
	p.key = grouplock.QueueKey(rr)
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

// waitForStrimzi keeps a request Pending while Strimzi's operator has not
// reconciled what it names (strimzi.ErrNotReady): its clusterRef's Kafka or
// KafkaUser (WaitingForCluster, then ClusterRefNotResolved), or its
// KafkaConnector consumerRef (WaitingForConnector, then
// ConsumerRefNotResolved), saying what it waits for in its Accepted
// condition (Unknown, reason wait). Changes to those objects wake it
// (watchStrimzi), and nothing polls: its one timer is the deadline, the
// launcher's start timeout counted from the request's creation, after
// which it fails with reason fail and the last thing it waited for.
func (r *ReplayRequestReconciler) waitForStrimzi(ctx context.Context, p *pass, err error, wait, fail string) error {
	rr := p.rr
	what := strings.TrimPrefix(err.Error(), strimzi.ErrNotResolvable.Error()+": ")
	deadline := rr.CreationTimestamp.Add(r.Options.StartTimeout)
	if !p.now.Before(deadline) {
		sentinel := strimzi.ErrNotResolvable
		if fail == state.ReasonConsumerRefNotResolved {
			sentinel = knative.ErrNotResolvable
		}
		return r.refuseUnresolved(ctx, p, fail,
			fmt.Errorf("%w: %s; waited %s from the request's creation (the launcher's --start-timeout) for Strimzi's operator", sentinel, what, r.Options.StartTimeout))
	}
	msg := fmt.Sprintf("waiting for Strimzi's operator: %s; until %s (the launcher's --start-timeout from the request's creation), then it fails %s",
		what, deadline.UTC().Format(time.RFC3339), fail)
	if state.SetCondition(rr, v1alpha1.ConditionAccepted, metav1.ConditionUnknown, wait, state.Truncate(msg, 1024)) {
		p.event(nil, corev1.EventTypeNormal, wait, "Resolve", state.Truncate(msg, 1024))
	}
	rr.Status.Phase = state.PhaseFor(rr.Status.Conditions)
	rr.Status.ObservedGeneration = rr.Generation
	p.requeueAfter(deadline.Sub(p.now))
	return nil
}

// refuseUnresolved finishes a request whose consumerRef or clusterRef
// cannot be resolved, nothing run, with why.
func (r *ReplayRequestReconciler) refuseUnresolved(ctx context.Context, p *pass, reason string, err error) error {
	msg := state.Truncate(err.Error(), 1024)
	state.SetCondition(p.rr, v1alpha1.ConditionAccepted, metav1.ConditionFalse, reason, msg)
	return r.finish(ctx, p, nil, record.Outcome{Reason: reason, Message: msg})
}
