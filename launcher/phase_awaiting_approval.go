package launcher

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// maxRejectReason bounds a rejection's reason as status keeps it.
const maxRejectReason = 1024

// Verdict is what the annotations and the clock say about a plan awaiting
// approval.
type Verdict string

const (
	// VerdictWaiting: nobody decided yet.
	VerdictWaiting Verdict = "Waiting"
	// VerdictApproved: kafkareplay.dev/approve names this plan's digest.
	VerdictApproved Verdict = "Approved"
	// VerdictWrongDigest: kafkareplay.dev/approve names another digest; it
	// approves nothing.
	VerdictWrongDigest Verdict = "WrongDigest"
	// VerdictRejected: kafkareplay.dev/reject is set.
	VerdictRejected Verdict = "Rejected"
	// VerdictExpired: the approval timeout ran out first.
	VerdictExpired Verdict = "Expired"
)

// ApprovalVerdict is DecideApproval's answer.
type ApprovalVerdict struct {
	Verdict Verdict
	// By is who set the deciding annotation, as admission stamped it
	// (kafkareplay.dev/approved-by), or "unknown".
	By string
	// Value is the approve annotation's value (the digest given), or the
	// reject annotation's (the reason), bounded.
	Value string
}

// DecideApproval reads a plan's fate from the request's annotations and the
// time. It is pure. A rejection wins over everything: whoever may approve
// may also stop a replay. The timeout comes next: a plan that expired is
// never applied, whatever was annotated after. Only an approve value equal
// to the plan's digest approves; any other value is a refusal that changes
// nothing.
func DecideApproval(rr *v1alpha1.ReplayRequest, now time.Time) ApprovalVerdict {
	by := decider(rr)
	plan := rr.Status.Plan
	if reason, ok := rr.Annotations[v1alpha1.AnnotationReject]; ok {
		return ApprovalVerdict{Verdict: VerdictRejected, By: by, Value: truncate(reason, maxRejectReason)}
	}
	if !now.Before(PlanExpiry(rr)) {
		return ApprovalVerdict{Verdict: VerdictExpired}
	}
	given, ok := rr.Annotations[v1alpha1.AnnotationApprove]
	switch {
	case !ok:
		return ApprovalVerdict{Verdict: VerdictWaiting}
	case given == plan.Digest:
		return ApprovalVerdict{Verdict: VerdictApproved, By: by, Value: given}
	default:
		return ApprovalVerdict{Verdict: VerdictWrongDigest, By: by, Value: truncate(given, 64)}
	}
}

// awaitingApproval waits for a decision on a ready plan: an approval moves
// the request on to Queued (for its apply Job), a rejection or the timeout
// ends it, and a wrong digest is refused with a Warning event. The group is
// free meanwhile. The wait is a timer to expiresAt, not a poll: the
// annotations' changes are watch events.
func (r *ReplayRequestReconciler) awaitingApproval(ctx context.Context, p *pass) (next bool, err error) {
	rr := p.rr
	plan := rr.Status.Plan
	v := DecideApproval(rr, p.now)
	switch v.Verdict {
	case VerdictRejected:
		return false, r.rejected(ctx, p, v)
	case VerdictExpired:
		msg := fmt.Sprintf("plan %s was not approved by %s (approvalTimeout %s); nothing was applied", plan.Digest, PlanExpiry(rr).UTC().Format(time.RFC3339), ApprovalTimeout(rr))
		SetCondition(rr, v1alpha1.ConditionAwaitingApproval, metav1.ConditionFalse, ReasonExpired, msg)
		return false, r.finish(ctx, p, nil, Outcome{Reason: ReasonExpired, Message: msg})
	case VerdictApproved:
		rr.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: v.By, At: &metav1.Time{Time: p.now}, Digest: plan.Digest}
		msg := fmt.Sprintf("plan %s approved by %s", plan.Digest, v.By)
		SetCondition(rr, v1alpha1.ConditionAwaitingApproval, metav1.ConditionFalse, ReasonApproved, msg)
		rr.Status.Message = msg
		rr.Status.Phase = PhaseFor(rr.Status.Conditions)
		p.event(nil, corev1.EventTypeNormal, ReasonApproved, "Approve", msg)
		return true, nil // Queued starts the apply Job
	}
	msg := PlanReadyMessage(rr, plan)
	if v.Verdict == VerdictWrongDigest {
		msg = fmt.Sprintf("%s=%q (set by %s) is not this plan's digest, so nothing was approved; %s", v1alpha1.AnnotationApprove, v.Value, v.By, msg)
	}
	// The condition's message says it once; the event goes only when it
	// changes, not on every reconcile.
	if SetCondition(rr, v1alpha1.ConditionAwaitingApproval, metav1.ConditionTrue, ReasonPlanReady, msg) && v.Verdict == VerdictWrongDigest {
		p.event(nil, corev1.EventTypeWarning, ReasonApprovalRefused, "Approve", msg)
	}
	rr.Status.Message = msg
	rr.Status.Phase = PhaseFor(rr.Status.Conditions)
	p.requeueAfter(PlanExpiry(rr).Sub(p.now))
	return false, nil
}

// PlanExpiry is when a request's plan expires: status.plan.expiresAt, or
// approvalTimeout after plannedAt when a status writer left it out; a plan
// that says neither has expired (nothing is applied on a plan of unknown
// age).
func PlanExpiry(rr *v1alpha1.ReplayRequest) time.Time {
	switch plan := rr.Status.Plan; {
	case plan == nil:
		return time.Time{}
	case plan.ExpiresAt != nil:
		return plan.ExpiresAt.Time
	case plan.PlannedAt != nil:
		return plan.PlannedAt.Add(ApprovalTimeout(rr))
	}
	return time.Time{}
}

// decider is who set the approve or reject annotation, as admission
// stamped it, or "unknown".
func decider(rr *v1alpha1.ReplayRequest) string {
	if by := rr.Annotations[v1alpha1.AnnotationApprovedBy]; by != "" {
		return by
	}
	return v1alpha1.RequesterUnknown
}

// rejected ends a request whose plan was rejected: nothing was applied.
func (r *ReplayRequestReconciler) rejected(ctx context.Context, p *pass, v ApprovalVerdict) error {
	rr := p.rr
	digest := ""
	if rr.Status.Plan != nil {
		digest = rr.Status.Plan.Digest
	}
	rr.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalRejected, By: v.By, At: &metav1.Time{Time: p.now}, Digest: digest, Reason: v.Value}
	msg := fmt.Sprintf("plan %s rejected by %s: %s; nothing was applied", digest, v.By, v.Value)
	SetCondition(rr, v1alpha1.ConditionAwaitingApproval, metav1.ConditionFalse, ReasonRejected, msg)
	return r.finish(ctx, p, nil, Outcome{Reason: ReasonRejected, Message: msg})
}

// lateRejection is the rejection of a Manual request approved but whose
// apply Job is not made yet (it waits for its group, or pauses its
// consumers): it still stops it.
func lateRejection(rr *v1alpha1.ReplayRequest) (ApprovalVerdict, bool) {
	reason, ok := rr.Annotations[v1alpha1.AnnotationReject]
	if !ok || rr.Spec.Approval != v1alpha1.ApprovalManual || !Approved(rr) {
		return ApprovalVerdict{}, false
	}
	return ApprovalVerdict{Verdict: VerdictRejected, By: decider(rr), Value: truncate(reason, maxRejectReason)}, true
}

// adoptApproval fills, from the apply Job's annotations, the approval a
// pass recorded on the Job but did not get to write into status (the
// launcher stopped between the two).
func adoptApproval(rr *v1alpha1.ReplayRequest, job *batchv1.Job) {
	digest := job.Annotations[v1alpha1.AnnotationPlanDigest]
	if rr.Spec.Approval != v1alpha1.ApprovalManual || digest == "" {
		return
	}
	if rr.Status.Approval == nil {
		a := &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: job.Annotations[v1alpha1.AnnotationApprovedBy], Digest: digest}
		if t, err := time.Parse(time.RFC3339, job.Annotations[v1alpha1.AnnotationApprovedAt]); err == nil {
			a.At = &metav1.Time{Time: t}
		}
		rr.Status.Approval = a
	}
	if c := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionAwaitingApproval); c == nil || c.Reason != ReasonApproved {
		SetCondition(rr, v1alpha1.ConditionAwaitingApproval, metav1.ConditionFalse, ReasonApproved, fmt.Sprintf("plan %s approved by %s", digest, rr.Status.Approval.By))
	}
}

// checkApproved is BuildJob's rule for a Manual request: its apply Job is
// made only with its plan as input, and only when the plan in status was
// approved by the request's own approve annotation (which the chart's
// admission policy gives only to a user with the verb approve).
func checkApproved(rr *v1alpha1.ReplayRequest, stage Stage, in *Input) error {
	if rr.Spec.Approval != v1alpha1.ApprovalManual || stage != StageApply {
		return nil
	}
	plan, a := rr.Status.Plan, rr.Status.Approval
	switch {
	case plan == nil || a == nil || a.Decision != v1alpha1.ApprovalApproved:
		return fmt.Errorf("approval: Manual and no approved plan")
	case a.Digest != plan.Digest || rr.Annotations[v1alpha1.AnnotationApprove] != plan.Digest:
		return fmt.Errorf("the approval in status is not the request's %s annotation of plan %s", v1alpha1.AnnotationApprove, plan.Digest)
	case in == nil || in.Kind != InputPlan:
		return fmt.Errorf("approval: Manual applies only its approved plan")
	}
	return nil
}
