package launcher

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/grouplock"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
)

// The phases a reconcile passes through, and how each is decided from what
// it read, are internal/lifecycle's (DecidePhase); each has its own file
// here (phase_<name>.go) with the one handler that moves a request through
// it.

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
