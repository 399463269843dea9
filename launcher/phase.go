package launcher

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/grouplock"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

// Phase is the step a request is at, as the launcher decides it from what it
// read (DecidePhase). Each phase has its own file (phase_<name>.go) with the
// one handler that moves a request through it. A reconcile may pass through
// several phases (a new request is accepted, queued and its Job created in
// one go), and writes status once, at the end, then sends its events.
//
// A request with approval: Manual goes Accepting → Queued (its planning
// Job) → Planning → AwaitingApproval, and once approved → Queued (its apply
// Job) → (PausingConsumers) → Applying like any other.
type Phase string

const (
	// PhaseAccepting validates a new request and resolves its target.
	PhaseAccepting Phase = "Accepting"
	// PhaseRecognising handles a Job with the request's name that this
	// request did not make: an earlier run of the same request (AlreadyRan,
	// or still in progress) or someone else's Job (JobConflict).
	PhaseRecognising Phase = "Recognising"
	// PhaseQueued waits for the group, then creates the Job: the planning
	// Job of a Manual request not yet approved (NeedsPlan), else the apply
	// Job.
	PhaseQueued Phase = "Queued"
	// PhasePlanning follows a Manual request's planning Job (a dry run
	// with the request's guards) and makes its record the plan awaiting
	// approval, or fails the request with the planning run's reason.
	PhasePlanning Phase = "Planning"
	// PhaseAwaitingApproval waits, without a Job and without holding the
	// group, for the plan's approval (then Queued), its rejection or its
	// expiry.
	PhaseAwaitingApproval Phase = "AwaitingApproval"
	// PhasePausingConsumers pauses the recorded consumers (the record was
	// written by the start, in Queued), then creates the Job.
	PhasePausingConsumers Phase = "PausingConsumers"
	// PhaseApplying follows the request's Job until it finishes, within
	// the start timeout until its pod starts.
	PhaseApplying Phase = "Applying"
	// PhaseDeleting holds a deleted request (finalizer) until its runner is
	// gone.
	PhaseDeleting Phase = "Deleting"
	// PhaseRestoringConsumers restores the consumers of a finished request,
	// whatever its outcome.
	PhaseRestoringConsumers Phase = "RestoringConsumers"
	// PhaseFinished has nothing left to do but drop the finalizer.
	PhaseFinished Phase = "Finished"
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
		return PhaseDeleting
	case state.IsFinished(rr) && state.ConsumersHeld(rr):
		return PhaseRestoringConsumers
	case state.IsFinished(rr):
		return PhaseFinished
	case o.Job != nil && !ControlledBy(o.Job, rr):
		return PhaseRecognising
	case o.Job != nil || state.IsStarted(rr):
		return PhaseApplying
	case rr.Status.ResolvedTarget == "":
		return PhaseAccepting
	case state.NeedsPlan(rr) && rr.Status.Plan != nil:
		return PhaseAwaitingApproval
	case state.NeedsPlan(rr) && o.PlanJob != nil:
		return PhasePlanning
	case state.NeedsPlan(rr):
		return PhaseQueued // for the planning Job
	case state.ConsumersHeld(rr):
		return PhasePausingConsumers
	default:
		return PhaseQueued
	}
}

// ControlledBy reports whether job's controller is rr itself (same UID): the
// only Job a request adopts as its own.
func ControlledBy(job *batchv1.Job, rr *v1alpha1.ReplayRequest) bool {
	ref := metav1.GetControllerOf(job)
	return ref != nil && ref.UID == rr.UID && ref.Kind == "ReplayRequest" && ref.APIVersion == v1alpha1.GroupVersion.String()
}

// pass is one reconcile's work in progress: the request whose status it
// changes in memory, and what to do once that status is written.
type pass struct {
	rr  *v1alpha1.ReplayRequest
	job *batchv1.Job
	// planJob is the planning Job of a Manual request, when it has one.
	planJob *batchv1.Job
	now     time.Time
	key     string
	self    grouplock.Entry

	// accepted: the request was accepted in this pass (its Accepted event
	// waits for the status write).
	accepted bool
	events   []pendingEvent
	requeue  time.Duration
	// finished is the final outcome reached in this pass, if any, and
	// finishedJob the Job it is about (nil when there is none).
	finished    *record.Outcome
	finishedJob *batchv1.Job
}

// pendingEvent is an event to send after the status write.
type pendingEvent struct {
	related     *batchv1.Job
	eventType   string
	reason      string
	action      string
	message     string
	regardingRR bool
}

func (p *pass) event(related *batchv1.Job, eventType, reason, action, message string) {
	p.events = append(p.events, pendingEvent{related: related, eventType: eventType, reason: reason, action: action, message: message, regardingRR: true})
}

// requeueAfter keeps the earliest deadline of the pass.
func (p *pass) requeueAfter(d time.Duration) {
	if d <= 0 {
		d = time.Millisecond
	}
	if p.requeue == 0 || d < p.requeue {
		p.requeue = d
	}
}
