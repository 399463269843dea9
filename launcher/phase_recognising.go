package launcher

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

// foreignJob is what a Job with a request's name, not controlled by the
// request, is to it.
type foreignJob int

const (
	// foreignConflict: someone else's Job.
	foreignConflict foreignJob = iota
	// foreignAlreadyRan: the finished Job of an earlier request with the
	// same name and spec.
	foreignAlreadyRan
	// foreignInProgress: the unfinished Job of such an earlier request.
	foreignInProgress
)

// classifyForeignJob says what a Job named like rr's, that rr does not
// control, is. It is pure. The launcher's own Jobs say which request and spec
// they ran (labels and annotations); one made by anyone else is a conflict.
func classifyForeignJob(rr *v1alpha1.ReplayRequest, job *batchv1.Job) foreignJob {
	if job.Labels[v1alpha1.LabelRequest] != v1alpha1.LabelValue(rr.Name) ||
		job.Annotations[v1alpha1.AnnotationRequest] != rr.Name ||
		job.Annotations[v1alpha1.AnnotationSpecDigest] != runnerjob.SpecDigest(&rr.Spec) {
		return foreignConflict
	}
	if ref := metav1.GetControllerOf(job); ref != nil && ref.Kind != "ReplayRequest" {
		return foreignConflict
	}
	if finished, _, _ := state.JobFinished(job); finished || state.IsRecorded(job) {
		return foreignAlreadyRan
	}
	return foreignInProgress
}

// alreadyRanOutcome is the outcome of a request that ran before, as its kept
// Job tells: Succeeded as the earlier run, reason AlreadyRan, and a message
// naming the Job, when it finished and how.
func alreadyRanOutcome(job *batchv1.Job) record.Outcome {
	finished := jobFinishedAt(job)
	earlier := job.Annotations[v1alpha1.AnnotationOutcome]
	if earlier == "" {
		if _, ok, _ := state.JobFinished(job); ok {
			earlier = v1alpha1.OutcomeSucceeded
		} else {
			earlier = v1alpha1.OutcomeFailed
		}
	}
	how := earlier
	if reason := job.Annotations[v1alpha1.AnnotationReason]; reason != "" {
		how += " (" + reason + ")"
	}
	return record.Outcome{
		Succeeded: earlier == v1alpha1.OutcomeSucceeded,
		Reason:    state.ReasonAlreadyRan,
		Message: fmt.Sprintf("this replay already ran: a request with the same name and spec ran as Job %s, which finished at %s: %s; it is not run again (to run it again, create a request with another name, for example with metadata.generateName)",
			job.Name, finished.UTC().Format(time.RFC3339), how),
	}
}

// recognising ends a request whose Job name is taken: AlreadyRan when an
// earlier run of the same request has finished, JobConflict for anyone
// else's Job; it waits while an earlier run is still in progress (that Job
// holds the group, and its events wake this request).
func (r *ReplayRequestReconciler) recognising(ctx context.Context, p *pass) (next bool, err error) {
	rr, job := p.rr, p.job
	switch classifyForeignJob(rr, job) {
	case foreignAlreadyRan:
		return false, r.finish(ctx, p, nil, alreadyRanOutcome(job))
	case foreignInProgress:
		msg := fmt.Sprintf("an earlier request with the same name and spec is still running as Job %s; this one waits for it, and will not run again", job.Name)
		if state.SetCondition(rr, v1alpha1.ConditionAccepted, metav1.ConditionTrue, state.ReasonEarlierRunInProgress, msg) {
			p.event(nil, corev1.EventTypeNormal, state.ReasonEarlierRunInProgress, "Queue", msg)
		}
		rr.Status.Message = msg
		rr.Status.Phase = state.PhaseFor(rr.Status.Conditions)
		return false, nil
	default:
		msg := fmt.Sprintf("a Job named %s already exists that the launcher did not make for this request; it is not adopted, and nothing was run", job.Name)
		state.SetCondition(rr, v1alpha1.ConditionAccepted, metav1.ConditionFalse, state.ReasonJobConflict, msg)
		return false, r.finish(ctx, p, nil, record.Outcome{Reason: state.ReasonJobConflict, Message: msg})
	}
}
