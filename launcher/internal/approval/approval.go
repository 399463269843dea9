package approval

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
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

// Decision is Decide's answer.
type Decision struct {
	Verdict Verdict
	// By is who set the deciding annotation, as admission stamped it
	// (kafkareplay.dev/approved-by), or "unknown".
	By string
	// Value is the approve annotation's value (the digest given), or the
	// reject annotation's (the reason), bounded.
	Value string
}

// Decide reads a plan's fate from the request's annotations and the
// time. It is pure. A rejection wins over everything: whoever may approve
// may also stop a replay. The timeout comes next: a plan that expired is
// never applied, whatever was annotated after. Only an approve value equal
// to the plan's digest approves; any other value is a refusal that changes
// nothing.
func Decide(rr *v1alpha1.ReplayRequest, now time.Time) Decision {
	by := Decider(rr)
	plan := rr.Status.Plan
	if reason, ok := rr.Annotations[v1alpha1.AnnotationReject]; ok {
		return Decision{Verdict: VerdictRejected, By: by, Value: state.Truncate(reason, maxRejectReason)}
	}
	if !now.Before(PlanExpiry(rr)) {
		return Decision{Verdict: VerdictExpired}
	}
	given, ok := rr.Annotations[v1alpha1.AnnotationApprove]
	switch {
	case !ok:
		return Decision{Verdict: VerdictWaiting}
	case given == plan.Digest:
		return Decision{Verdict: VerdictApproved, By: by, Value: given}
	default:
		return Decision{Verdict: VerdictWrongDigest, By: by, Value: state.Truncate(given, 64)}
	}
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
		return plan.PlannedAt.Add(state.ApprovalTimeout(rr))
	}
	return time.Time{}
}

// Decider is who set the approve or reject annotation, as admission
// stamped it, or "unknown".
func Decider(rr *v1alpha1.ReplayRequest) string {
	if by := rr.Annotations[v1alpha1.AnnotationApprovedBy]; by != "" {
		return by
	}
	return v1alpha1.RequesterUnknown
}

// LateRejection is the rejection of a Manual request approved but whose
// apply Job is not made yet (it waits for its group, or pauses its
// consumers): it still stops it.
func LateRejection(rr *v1alpha1.ReplayRequest) (Decision, bool) {
	reason, ok := rr.Annotations[v1alpha1.AnnotationReject]
	if !ok || rr.Spec.Approval != v1alpha1.ApprovalManual || !state.Approved(rr) {
		return Decision{}, false
	}
	return Decision{Verdict: VerdictRejected, By: Decider(rr), Value: state.Truncate(reason, maxRejectReason)}, true
}

// Adopted is the approval under which a request adopts its apply
// Job when status does not name that Job yet (a pass stopped between
// creating it and writing status), rebuilt from the request alone: the Job
// can be anyone's who may create Jobs, with any annotations and the
// request as its controller. It is pure.
//
// A Manual request's Job is adopted only when the request's approve
// annotation (which admission lets only an approver set), the plan in
// status and the Job's plan-digest annotation all name the same digest.
// Who approved is the request's approved-by stamp (Decider), which
// status.approval, when an earlier pass wrote it, must say too; "unknown"
// when a rejection came since, as the stamp then names the rejecter. The Job's approved-by
// must agree with that name. When it was approved is the Job's creation,
// which the API server stamps: the pass that saw the approval made the Job
// (the Job's approved-at annotation is never read). A Job of a request that
// needs no approval carries none.
//
// Anything else is an error naming what disagrees: the Job was not made
// from this request's approval, and it must not be adopted.
func Adopted(rr *v1alpha1.ReplayRequest, job *batchv1.Job) (*v1alpha1.ApprovalStatus, error) {
	jobDigest, hasDigest := job.Annotations[v1alpha1.AnnotationPlanDigest]
	jobBy, hasBy := job.Annotations[v1alpha1.AnnotationApprovedBy]
	if rr.Spec.Approval != v1alpha1.ApprovalManual {
		if hasDigest || hasBy {
			return nil, fmt.Errorf("it carries an approval (%s=%q, %s=%q), and this request is not approval: Manual",
				v1alpha1.AnnotationPlanDigest, state.Truncate(jobDigest, 64), v1alpha1.AnnotationApprovedBy, state.Truncate(jobBy, 256))
		}
		return nil, nil
	}
	plan := rr.Status.Plan
	given, approved := rr.Annotations[v1alpha1.AnnotationApprove]
	switch {
	case plan == nil:
		return nil, fmt.Errorf("this request has no plan in status that could have been approved")
	case !hasDigest:
		return nil, fmt.Errorf("it names no approved plan (no %s annotation)", v1alpha1.AnnotationPlanDigest)
	case jobDigest != plan.Digest:
		return nil, fmt.Errorf("it applies plan %q, and this request's plan is %s", state.Truncate(jobDigest, 64), plan.Digest)
	case !approved:
		return nil, fmt.Errorf("nobody approved plan %s: the request has no %s annotation", plan.Digest, v1alpha1.AnnotationApprove)
	case given != plan.Digest:
		return nil, fmt.Errorf("the request's %s=%q does not approve plan %s", v1alpha1.AnnotationApprove, state.Truncate(given, 64), plan.Digest)
	}
	if a := rr.Status.Approval; a != nil {
		// Written by an earlier pass from the request's annotations.
		_, rejected := rr.Annotations[v1alpha1.AnnotationReject]
		switch {
		case a.Decision != v1alpha1.ApprovalApproved || a.Digest != plan.Digest:
			return nil, fmt.Errorf("status.approval is %s of plan %q, not the approval of plan %s", a.Decision, a.Digest, plan.Digest)
		case !rejected && a.By != Decider(rr):
			return nil, fmt.Errorf("status.approval says plan %s was approved by %q, and the request's %s says by %q", plan.Digest, a.By, v1alpha1.AnnotationApprovedBy, Decider(rr))
		case jobBy != a.By:
			return nil, fmt.Errorf("it says plan %s was approved by %q, and status.approval says by %q", plan.Digest, state.Truncate(jobBy, 256), a.By)
		}
		return a.DeepCopy(), nil
	}
	by := Decider(rr)
	if _, rejected := rr.Annotations[v1alpha1.AnnotationReject]; rejected {
		// Rejected after the Job was made (a rejection before it stops
		// the request in the launcher's Queued phase): the stamp is the
		// rejecter's now, and the request no longer says who approved.
		by = v1alpha1.RequesterUnknown
	} else if jobBy != by {
		return nil, fmt.Errorf("it says plan %s was approved by %q, and the request's %s says by %q", plan.Digest, state.Truncate(jobBy, 256), v1alpha1.AnnotationApprovedBy, by)
	}
	return &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: by, Digest: plan.Digest, At: &metav1.Time{Time: job.CreationTimestamp.Time}}, nil
}

// Adopt writes into status the approval an adopted Job was made
// under (Adopted's answer; nil for a request that needs none).
func Adopt(rr *v1alpha1.ReplayRequest, a *v1alpha1.ApprovalStatus) {
	if a == nil {
		return
	}
	rr.Status.Approval = a
	if c := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionAwaitingApproval); c == nil || c.Reason != state.ReasonApproved {
		state.SetCondition(rr, v1alpha1.ConditionAwaitingApproval, metav1.ConditionFalse, state.ReasonApproved, fmt.Sprintf("plan %s approved by %s", a.Digest, a.By))
	}
}
