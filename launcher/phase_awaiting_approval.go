package launcher

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/approval"
	"github.com/kafka-replay/kafka-replay/launcher/internal/fanout"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// awaitingApproval waits for a decision on a ready plan: an approval moves
// the request on to Queued (for its apply Job), a rejection or the timeout
// ends it, and a wrong digest is refused with a Warning event. The group is
// free meanwhile. The wait is a timer to expiresAt, not a poll: the
// annotations' changes are watch events.
func (r *ReplayRequestReconciler) awaitingApproval(ctx context.Context, p *pass) (next bool, err error) {
	rr := p.rr
	plan := rr.Status.Plan
	v := approval.Decide(rr, p.now)
	switch v.Verdict {
	case approval.VerdictRejected:
		return false, r.rejected(ctx, p, v)
	case approval.VerdictExpired:
		msg := fmt.Sprintf("plan %s was not approved by %s (approvalTimeout %s); nothing was applied", plan.Digest, approval.PlanExpiry(rr).UTC().Format(time.RFC3339), state.ApprovalTimeout(rr))
		state.SetCondition(rr, v1alpha1.ConditionAwaitingApproval, metav1.ConditionFalse, state.ReasonExpired, msg)
		return false, r.finish(ctx, p, nil, record.Outcome{Reason: state.ReasonExpired, Message: msg})
	case approval.VerdictApproved:
		parent, waits, err := r.parentApproval(ctx, rr)
		if err != nil {
			return false, err
		}
		if waits != "" {
			// Not an approval yet, and no refusal: the launcher sets a
			// child's annotation in the pass where the parent records its
			// approval, before that status write, which wakes the child
			// (a watch of parents).
			msg := fmt.Sprintf("%s=%q (set by %s) applies nothing yet: %s is a child of %s, whose approval alone applies it, and %s; approve or reject %s (kubectl replay approve %s)", v1alpha1.AnnotationApprove, v.Value, v.By, rr.Name, parent, waits, parent, parent)
			state.SetCondition(rr, v1alpha1.ConditionAwaitingApproval, metav1.ConditionTrue, state.ReasonPlanReady, msg)
			rr.Status.Message = msg
			rr.Status.Phase = state.PhaseFor(rr.Status.Conditions)
			p.requeueAfter(approval.PlanExpiry(rr).Sub(p.now))
			return false, nil
		}
		rr.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: v.By, At: &metav1.Time{Time: p.now}, Digest: plan.Digest}
		msg := fmt.Sprintf("plan %s approved by %s", plan.Digest, v.By)
		state.SetCondition(rr, v1alpha1.ConditionAwaitingApproval, metav1.ConditionFalse, state.ReasonApproved, msg)
		rr.Status.Message = msg
		rr.Status.Phase = state.PhaseFor(rr.Status.Conditions)
		p.event(nil, corev1.EventTypeNormal, state.ReasonApproved, "Approve", msg)
		return true, nil // Queued starts the apply Job
	}
	msg := planReadyMessage(rr, plan)
	if v.Verdict == approval.VerdictWrongDigest {
		msg = fmt.Sprintf("%s=%q (set by %s) is not this plan's digest, so nothing was approved; %s", v1alpha1.AnnotationApprove, v.Value, v.By, msg)
	}
	// The condition's message says it once; the event goes only when it
	// changes, not on every reconcile.
	if state.SetCondition(rr, v1alpha1.ConditionAwaitingApproval, metav1.ConditionTrue, state.ReasonPlanReady, msg) && v.Verdict == approval.VerdictWrongDigest {
		p.event(nil, corev1.EventTypeWarning, state.ReasonApprovalRefused, "Approve", msg)
	}
	rr.Status.Message = msg
	rr.Status.Phase = state.PhaseFor(rr.Status.Conditions)
	p.requeueAfter(approval.PlanExpiry(rr).Sub(p.now))
	return false, nil
}

// rejected ends a request whose plan was rejected: nothing was applied.
func (r *ReplayRequestReconciler) rejected(ctx context.Context, p *pass, v approval.Decision) error {
	rr := p.rr
	digest := ""
	if rr.Status.Plan != nil {
		digest = rr.Status.Plan.Digest
	}
	rr.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalRejected, By: v.By, At: &metav1.Time{Time: p.now}, Digest: digest, Reason: v.Value}
	msg := fmt.Sprintf("plan %s rejected by %s: %s; nothing was applied", digest, v.By, v.Value)
	state.SetCondition(rr, v1alpha1.ConditionAwaitingApproval, metav1.ConditionFalse, state.ReasonRejected, msg)
	return r.finish(ctx, p, nil, record.Outcome{Reason: state.ReasonRejected, Message: msg})
}

// checkApproved is BuildJob's rule for a Manual request: its apply Job is
// made only with its plan as input, and only when the plan in status was
// approved by the request's own approve annotation (which the chart's
// admission policy gives only to a user with the verb approve), by whom the
// request's approved-by stamp says.
func checkApproved(rr *v1alpha1.ReplayRequest, stage runnerjob.Stage, in *runnerjob.Input) error {
	if rr.Spec.Approval != v1alpha1.ApprovalManual || stage != runnerjob.StageApply {
		return nil
	}
	plan, a := rr.Status.Plan, rr.Status.Approval
	switch {
	case plan == nil || a == nil || a.Decision != v1alpha1.ApprovalApproved:
		return fmt.Errorf("approval: Manual and no approved plan")
	case a.Digest != plan.Digest || rr.Annotations[v1alpha1.AnnotationApprove] != plan.Digest:
		return fmt.Errorf("the approval in status is not the request's %s annotation of plan %s", v1alpha1.AnnotationApprove, plan.Digest)
	case a.By != approval.Decider(rr):
		// The stamp changes only with the decision, and a rejection stops
		// the request before its Job (approval.LateRejection).
		return fmt.Errorf("status.approval.by %q is not the request's %s %q", a.By, v1alpha1.AnnotationApprovedBy, approval.Decider(rr))
	case in == nil || in.Kind != runnerjob.InputPlan:
		return fmt.Errorf("approval: Manual applies only its approved plan")
	}
	return nil
}

// parentApproval is, for a child request (one group of a parent), its
// parent's name and why its approval is not the parent's yet
// (fanout.ParentApproved); waits is "" when it is, or when the request is
// no child.
func (r *ReplayRequestReconciler) parentApproval(ctx context.Context, rr *v1alpha1.ReplayRequest) (name, waits string, err error) {
	if !replay.IsChild(rr) {
		return "", "", nil
	}
	name = childParent(rr)
	var parent *v1alpha1.ReplayRequest
	if o := metav1.GetControllerOf(rr); o != nil && o.Kind == "ReplayRequest" {
		parent = &v1alpha1.ReplayRequest{}
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: rr.Namespace, Name: o.Name}, parent)
		if apierrors.IsNotFound(err) {
			parent = nil
		} else if err != nil {
			return name, "", fmt.Errorf("read the parent of request %s: %w", rr.Name, err)
		}
	}
	if err := fanout.ParentApproved(parent, rr); err != nil {
		return name, err.Error(), nil
	}
	return name, "", nil
}

// childParent is the name of a child request's parent: its controller's,
// or its parent label's value when it has none (a hash when the name is
// long).
func childParent(rr *v1alpha1.ReplayRequest) string {
	if o := metav1.GetControllerOf(rr); o != nil && o.Kind == "ReplayRequest" {
		return o.Name
	}
	return rr.Labels[v1alpha1.LabelParent]
}
