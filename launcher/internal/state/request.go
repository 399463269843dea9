package state

import (
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// PausesConsumers reports whether a request pauses consumers: it names some
// and is not a dry run (a plan changes no offsets, so nothing needs to
// stop).
func PausesConsumers(rr *v1alpha1.ReplayRequest) bool {
	return len(RequestConsumers(rr)) > 0 && !rr.Spec.DryRun
}

// ConsumersHeld reports whether a request has consumers recorded that are
// not restored yet (Recorded or Paused). Such a request holds its group
// (Holders) and keeps its finalizer until they are: the group stays locked
// until the restore is done.
func ConsumersHeld(rr *v1alpha1.ReplayRequest) bool {
	return slices.ContainsFunc(rr.Status.Consumers, func(c v1alpha1.ConsumerStatus) bool {
		return c.State == v1alpha1.ConsumerRecorded || c.State == v1alpha1.ConsumerPaused
	})
}

// RequestConsumers are the consumers a request pauses: spec.consumers and,
// for a consumerRef to a KafkaSource with whenGroupActive: Wait, that
// source (once, if spec.consumers does not name it already). Without Wait
// the runner does not wait for a paused group to empty, so nothing is
// paused and an active group fails the request as GroupActive.
func RequestConsumers(rr *v1alpha1.ReplayRequest) []v1alpha1.ConsumerRef {
	ref := rr.Spec.ConsumerRef
	if ref == nil || ref.Kind != v1alpha1.KnativeKafkaSource || rr.Spec.WhenGroupActive != v1alpha1.GroupActiveWait {
		return rr.Spec.Consumers
	}
	src := v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerKafkaSource, Name: ref.Name}
	if slices.Contains(rr.Spec.Consumers, src) {
		return rr.Spec.Consumers
	}
	return append(slices.Clone(rr.Spec.Consumers), src)
}

// defaultApprovalTimeout is how long a plan waits for a decision when
// spec.approvalTimeout is unset.
const defaultApprovalTimeout = 24 * time.Hour

// NeedsPlan reports whether a request's next Job is its planning Job: it
// has approval: Manual and no approved plan yet.
func NeedsPlan(rr *v1alpha1.ReplayRequest) bool {
	return rr.Spec.Approval == v1alpha1.ApprovalManual && !Approved(rr)
}

// Approved reports whether a request's plan was approved.
func Approved(rr *v1alpha1.ReplayRequest) bool {
	a := rr.Status.Approval
	return a != nil && a.Decision == v1alpha1.ApprovalApproved
}

// AwaitsDecision reports whether a request's plan is ready and nobody has
// decided yet: such a request neither holds its group nor waits for it.
func AwaitsDecision(rr *v1alpha1.ReplayRequest) bool {
	return NeedsPlan(rr) && rr.Status.Plan != nil && rr.Status.Approval == nil
}

// ApprovalTimeout is a request's approvalTimeout, or the default.
func ApprovalTimeout(rr *v1alpha1.ReplayRequest) time.Duration {
	if t := rr.Spec.ApprovalTimeout; t != nil && t.Duration > 0 {
		return t.Duration
	}
	return defaultApprovalTimeout
}

// IsRecorded reports whether a Job already carries its outcome.
func IsRecorded(job *batchv1.Job) bool {
	_, ok := job.Annotations[v1alpha1.AnnotationOutcome]
	return ok
}
