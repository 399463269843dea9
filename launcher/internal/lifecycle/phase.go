package lifecycle

import (
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

// Phase is the step a request is at, as the launcher decides it from what it
// read (DecidePhase). Each phase has its own file in the launcher
// (phase_<name>.go) with the one handler that moves a request through it.
// A reconcile may pass through several phases (a new request is accepted,
// queued and its Job created in one go), and writes status once, at the
// end, then sends its events.
//
// A request with approval: Manual goes Accepting → Queued (its planning
// Job) → Planning → AwaitingApproval, and once approved → Queued (its apply
// Job) → (PausingConsumers) → Applying like any other.
type Phase string

const (
	// Accepting validates a new request and resolves its target.
	Accepting Phase = "Accepting"
	// Recognising handles a Job with the request's name that this
	// request did not make: an earlier run of the same request (AlreadyRan,
	// or still in progress) or someone else's Job (JobConflict).
	Recognising Phase = "Recognising"
	// Queued waits for the group, then creates the Job: the planning
	// Job of a Manual request not yet approved (NeedsPlan), else the apply
	// Job.
	Queued Phase = "Queued"
	// Planning follows a Manual request's planning Job (a dry run
	// with the request's guards) and makes its record the plan awaiting
	// approval, or fails the request with the planning run's reason.
	Planning Phase = "Planning"
	// AwaitingApproval waits, without a Job and without holding the
	// group, for the plan's approval (then Queued), its rejection or its
	// expiry.
	AwaitingApproval Phase = "AwaitingApproval"
	// PausingConsumers pauses the recorded consumers (the record was
	// written by the start, in Queued), then creates the Job.
	PausingConsumers Phase = "PausingConsumers"
	// Applying follows the request's Job until it finishes, within
	// the start timeout until its pod starts.
	Applying Phase = "Applying"
	// Deleting holds a deleted request (finalizer) until its runner is
	// gone.
	Deleting Phase = "Deleting"
	// RestoringConsumers restores the consumers of a finished request,
	// whatever its outcome.
	RestoringConsumers Phase = "RestoringConsumers"
	// Finished has nothing left to do but drop the finalizer.
	Finished Phase = "Finished"
)

// Observed is what a reconcile read about one request.
type Observed struct {
	// Request is the request, as the cache shows it.
	Request *v1alpha1.ReplayRequest
	// Job is the Job with the request's deterministic name, whoever made it;
	// nil when there is none.
	Job *batchv1.Job
	// PlanJob is the planning Job of a Manual request (JobName with
	// StagePlan), whoever made it; nil when there is none or it was not
	// looked for.
	PlanJob *batchv1.Job
}

// DecidePhase decides a request's phase from what was read. It is pure.
func DecidePhase(o Observed) Phase {
	rr := o.Request
	switch {
	case rr.DeletionTimestamp != nil:
		return Deleting
	case state.IsFinished(rr) && state.ConsumersHeld(rr):
		return RestoringConsumers
	case state.IsFinished(rr):
		return Finished
	case o.Job != nil && !ControlledBy(o.Job, rr):
		return Recognising
	case o.Job != nil || state.IsStarted(rr):
		return Applying
	case rr.Status.ResolvedTarget == "":
		return Accepting
	case state.NeedsPlan(rr) && rr.Status.Plan != nil:
		return AwaitingApproval
	case state.NeedsPlan(rr) && o.PlanJob != nil:
		return Planning
	case state.NeedsPlan(rr):
		return Queued // for the planning Job
	case state.ConsumersHeld(rr):
		return PausingConsumers
	default:
		return Queued
	}
}

// ControlledBy reports whether job's controller is rr itself (same UID): the
// only Job a request adopts as its own.
func ControlledBy(job *batchv1.Job, rr *v1alpha1.ReplayRequest) bool {
	ref := metav1.GetControllerOf(job)
	return ref != nil && ref.UID == rr.UID && ref.Kind == "ReplayRequest" && ref.APIVersion == v1alpha1.GroupVersion.String()
}
