package launcher

import (
	"context"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/approval"
	"github.com/kafka-replay/kafka-replay/launcher/internal/lifecycle"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/internal/undo"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// startFailures are the waiting reasons of a runner container that waiting
// does not mend by itself, and the request's reason for each.
var startFailures = map[string]string{
	"ErrImagePull":               state.ReasonImagePullFailed,
	"ImagePullBackOff":           state.ReasonImagePullFailed,
	"InvalidImageName":           state.ReasonImagePullFailed,
	"ErrImageNeverPull":          state.ReasonImagePullFailed,
	"CreateContainerConfigError": state.ReasonConfigMissing,
}

// startFailure is a runner that has not started and will not by itself.
type startFailure struct {
	// Reason is the request's reason (state.ReasonImagePullFailed, ...); empty
	// when the runner may still start.
	Reason string
	// Message says what the pod waits for.
	Message string
	// Due is when the request fails for it: failAfter after the pod was
	// made (an image pull) or became unschedulable.
	Due time.Time
	// ReadEvents is true, with Reason empty, for a pod that is still
	// creating its containers: only its events say whether a volume cannot
	// be mounted (a Secret or ConfigMap that does not exist: FailedMount).
	// They are read, past the cache, once Due (startEvents).
	ReadEvents bool
	// pod is the pod the failure is about.
	pod *corev1.Pod
}

// startVerdict says, for a runner (what) that has not started since since,
// whether it is stopped and with which outcome, or when to look again: at
// the start timeout it fails PodNotStarted; before it, a failure waiting
// does not mend (earlyStartFailure) fails it with that reason once due. It
// is pure.
func startVerdict(what string, since time.Time, pods []corev1.Pod, events []corev1.Event, start podStart, now time.Time, opts Options) (*record.Outcome, time.Duration) {
	early := earlyStartFailure(pods, events, opts.StartFailAfter)
	deadline := since.Add(opts.StartTimeout)
	if !now.Before(deadline) {
		waiting := start.Waiting
		if early.Message != "" {
			waiting = early.Message
		}
		return &record.Outcome{Reason: state.ReasonPodNotStarted, FinishedAt: now,
			Message: fmt.Sprintf("the %s did not start within the start timeout (%s): %s", what, opts.StartTimeout, waiting)}, 0
	}
	again := deadline.Sub(now)
	if early.Reason != "" || early.ReadEvents {
		if early.Reason != "" && !now.Before(early.Due) {
			return &record.Outcome{Reason: early.Reason, FinishedAt: now,
				Message: fmt.Sprintf("the %s pod could not start for %s, and will not by itself: %s; nothing was run", what, opts.StartFailAfter, early.Message)}, 0
		}
		if now.Before(early.Due) {
			again = min(again, early.Due.Sub(now))
		}
	}
	return nil, again
}

// ReasonFailedMount is the kubelet's event reason for a pod volume it
// cannot mount: a Secret or ConfigMap that does not exist, or a key.
const ReasonFailedMount = "FailedMount"

// mountFailure is the message of the newest FailedMount event of pod, if
// any. It is pure.
func mountFailure(pod *corev1.Pod, events []corev1.Event) string {
	var newest *corev1.Event
	for i := range events {
		e := &events[i]
		if e.Reason != ReasonFailedMount || e.InvolvedObject.UID != pod.UID {
			continue
		}
		if newest == nil || eventTime(e).After(eventTime(newest)) {
			newest = e
		}
	}
	if newest == nil {
		return ""
	}
	return joinReason(ReasonFailedMount, newest.Message)
}

func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// startEvents reads, past the cache (events are never cached), the events
// of the pod earlyStartFailure says may only be understood from them, once
// they are due; else none. A launcher not allowed to read events (a chart
// older than this rule) waits for the start timeout, as before.
func startEvents(ctx context.Context, api client.Reader, pods []corev1.Pod, failAfter time.Duration, now time.Time) []corev1.Event {
	early := earlyStartFailure(pods, nil, failAfter)
	if !early.ReadEvents || now.Before(early.Due) {
		return nil
	}
	var list corev1.EventList
	if err := api.List(ctx, &list, client.InNamespace(early.pod.Namespace), client.MatchingFields{"involvedObject.uid": string(early.pod.UID)}); err != nil {
		log.FromContext(ctx).Info("cannot read the runner pod's events; its start is bounded by the start timeout", "pod", early.pod.Name, "error", err.Error())
		return nil
	}
	return list.Items
}

// earlyStartFailure says whether a runner that has not started (the newest
// of its Job's pods) has failed in a way that waiting will not mend: an
// image that cannot be pulled, a pod no node can take, a container whose
// configuration names a missing Secret or ConfigMap, or a volume of one
// that cannot be mounted (the pod's FailedMount events, given in events:
// the pod itself only says ContainerCreating). Each counts failAfter
// after it began (a registry's hiccup, an autoscaler adding a node or a
// Secret made a moment late get that long), well within the start timeout,
// so that such a request gives its group to the next replay early. It is
// pure.
func earlyStartFailure(pods []corev1.Pod, events []corev1.Event, failAfter time.Duration) startFailure {
	if len(pods) == 0 || failAfter <= 0 {
		return startFailure{}
	}
	p := slices.MaxFunc(pods, func(a, b corev1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; cs.Name == state.ContainerName && w != nil && startFailures[w.Reason] != "" {
			return startFailure{Reason: startFailures[w.Reason], Message: joinReason(w.Reason, w.Message), Due: p.CreationTimestamp.Add(failAfter)}
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return startFailure{Reason: state.ReasonUnschedulable, Message: joinReason(c.Reason, c.Message), Due: c.LastTransitionTime.Add(failAfter)}
		}
	}
	if creating(&p) {
		due := p.CreationTimestamp.Add(failAfter)
		if msg := mountFailure(&p, events); msg != "" {
			return startFailure{Reason: state.ReasonConfigMissing, Message: msg, Due: due, pod: &p}
		}
		return startFailure{ReadEvents: true, Due: due, pod: &p}
	}
	return startFailure{}
}

// creating says whether a pod is on a node and its runner container not
// created yet: what a pod whose volumes cannot be mounted looks like, for
// as long as it cannot.
func creating(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodPending || p.Spec.NodeName == "" {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == state.ContainerName {
			return cs.State.Waiting != nil && cs.State.Waiting.Reason == "ContainerCreating"
		}
	}
	return true
}

// podStart is how far a Job's runner got towards starting.
type podStart struct {
	// Started is true once a runner container has run in any pod of the
	// Job: from then on activeDeadlineSeconds bounds the Job, not the start
	// timeout.
	Started bool
	// Pod is the pod the rest is about, if any.
	Pod string
	// Waiting says, while not Started, what the pod waits for, as
	// "<Reason>: <message>".
	Waiting string
	// Reason is Waiting's reason alone.
	Reason string
}

// startingReasons are the waiting reasons of a pod that starts as every pod
// does: a moment on the way, not a problem.
var startingReasons = map[string]bool{"": true, reasonNoPod: true, reasonPending: true, "ContainerCreating": true, "PodInitializing": true}

const (
	reasonNoPod   = "NoPod"
	reasonPending = "Pending"
)

// EventType is the type of the event that says what a pod waits for:
// Normal while it starts as every pod does, Warning when it waits for
// something that may not come (an image, a node, a Secret).
func (s podStart) EventType() string {
	if startingReasons[s.Reason] {
		return corev1.EventTypeNormal
	}
	return corev1.EventTypeWarning
}

// startProgress reads from a Job's pods whether its runner has started, and
// if not, why. It is pure.
func startProgress(pods []corev1.Pod) podStart {
	if len(pods) == 0 {
		return podStart{Reason: reasonNoPod, Waiting: reasonNoPod + ": the Job has made no runner pod yet (a missing ServiceAccount, a quota or an admission webhook shows in the Job's events)"}
	}
	sorted := slices.Clone(pods)
	slices.SortFunc(sorted, func(a, b corev1.Pod) int { return b.CreationTimestamp.Compare(a.CreationTimestamp.Time) })
	for i := range sorted {
		p := &sorted[i]
		if p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			return podStart{Started: true, Pod: p.Name}
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == state.ContainerName && (cs.State.Running != nil || cs.State.Terminated != nil || cs.LastTerminationState.Terminated != nil) {
				return podStart{Started: true, Pod: p.Name}
			}
		}
	}
	p := &sorted[0] // the newest pod says what the Job waits for now
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == state.ContainerName && cs.State.Waiting != nil && cs.State.Waiting.Reason != "" {
			return podStart{Pod: p.Name, Reason: cs.State.Waiting.Reason, Waiting: joinReason(cs.State.Waiting.Reason, cs.State.Waiting.Message)}
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			reason := state.ValueOrString(c.Reason, corev1.PodReasonUnschedulable)
			return podStart{Pod: p.Name, Reason: reason, Waiting: joinReason(reason, c.Message)}
		}
	}
	return podStart{Pod: p.Name, Reason: reasonPending, Waiting: reasonPending + ": the pod has not started yet"}
}

func joinReason(reason, message string) string {
	if message == "" {
		return reason
	}
	return state.Truncate(reason+": "+message, 512)
}

// applying follows the request's Job: it adopts a Job the request controls
// but status does not name yet, says while the pod waits why, fails the
// request when the pod has not started within the start timeout, and
// records the outcome when the Job finishes.
func (r *ReplayRequestReconciler) applying(ctx context.Context, p *pass) (next bool, err error) {
	rr, job := p.rr, p.job
	if job == nil || job.DeletionTimestamp != nil && !state.IsRecorded(job) {
		// Gone, or going, before it finished.
		return false, r.jobDeleted(ctx, p)
	}
	if !state.IsStarted(rr) {
		// The Job exists but status does not say so: this pass (or a
		// previous one, or leader) created it, or someone who may create
		// Jobs planted it with this request as its controller. It is
		// adopted only under the approval the request itself says.
		if err := r.recoverPlan(ctx, p); err != nil {
			return false, err
		}
		approved, err := approval.Adopted(rr, job)
		var undone *v1alpha1.UndoStatus
		if err == nil {
			undone, err = undo.Adopted(rr, job)
		}
		if err != nil {
			msg := fmt.Sprintf("the runner Job %s was not made for this request: %v; it is not adopted, and its outcome is not this request's", job.Name, err)
			state.SetCondition(rr, v1alpha1.ConditionAccepted, metav1.ConditionFalse, state.ReasonJobConflict, msg)
			return false, r.finish(ctx, p, nil, record.Outcome{Reason: state.ReasonJobConflict, Message: msg})
		}
		// The target it carries wins over one resolved since.
		if t := job.Annotations[v1alpha1.AnnotationResolvedTarget]; t != "" {
			rr.Status.ResolvedTarget = t
		}
		rr.Status.JobName = job.Name
		if undone != nil && rr.Status.Undo == nil {
			// Decided when the Job was made; a pass that stopped before
			// its status write lost it.
			rr.Status.Undo = undone
		}
		rr.Status.StartTime = &metav1.Time{Time: job.CreationTimestamp.Time}
		approval.Adopt(rr, approved)
		state.SetCondition(rr, v1alpha1.ConditionAccepted, metav1.ConditionTrue, state.ReasonAccepted, "target resolved to "+rr.Status.ResolvedTarget)
		state.SetCondition(rr, v1alpha1.ConditionRunning, metav1.ConditionTrue, state.ReasonJobCreated, "runner Job "+job.Name+" created")
		rr.Status.Message = "runner Job " + job.Name + " created"
		rr.Status.ObservedGeneration = rr.Generation
		p.event(job, corev1.EventTypeNormal, state.ReasonJobCreated, "Run", "created runner Job "+job.Name)
	}
	rr.Status.Phase = state.PhaseFor(rr.Status.Conditions)

	pods, err := podsOfJob(ctx, r.Client, job)
	if err != nil {
		return false, err
	}
	if finished, _, _ := state.JobFinished(job); finished {
		r.logReads.forget(pods)
		if pods, err = settledPods(ctx, r.APIReader, job, pods); err != nil {
			return false, err
		}
		o := record.JobOutcome(job, pods)
		alive, overdue, wait := outcomeWait(pods, o, r.Options.PodResultGrace, p.now)
		if alive != "" {
			p.waitForRunner(job, "runner", alive, overdue)
			if wait > 0 {
				p.requeueAfter(wait)
			}
			return false, nil
		}
		if wait > 0 {
			// The pod's last state is not in the cache yet; its event will
			// trigger a reconcile sooner than this.
			p.requeueAfter(wait)
			return false, nil
		}
		if o, err = record.CollectRecord(ctx, r.Records, job, pods, o); err != nil {
			return false, err
		}
		return false, r.finish(ctx, p, job, o)
	}
	if state.IsRecorded(job) {
		// Recorded but not finished: the launcher stopped it (start
		// timeout) in an earlier pass that did not get to write status.
		return false, r.finish(ctx, p, nil, recordedOutcome(job))
	}

	start := startProgress(pods)
	running := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionRunning)
	if start.Started {
		// Only a status that said the pod waits needs correcting; a
		// write per pod start would be one more on every run's path.
		// A runner that may wait for its group says so at once: its log
		// is read only after RunnerLogInterval.
		if running != nil && (running.Reason == state.ReasonPodWaiting || runnerWaits(rr) && running.Reason == state.ReasonJobCreated) {
			msg := runningMessage(rr, start.Pod)
			state.SetCondition(rr, v1alpha1.ConditionRunning, metav1.ConditionTrue, state.ReasonPodRunning, msg)
			rr.Status.Message = msg
		}
		r.followRunner(ctx, p, job, pods)
		return false, nil
	}
	deadline := job.CreationTimestamp.Add(r.Options.StartTimeout)
	events := startEvents(ctx, r.APIReader, pods, r.Options.StartFailAfter, p.now)
	o, again := startVerdict("runner", job.CreationTimestamp.Time, pods, events, start, p.now, r.Options)
	if o != nil {
		if err := stopJob(ctx, r.Client, job); err != nil {
			return false, err
		}
		return false, r.finish(ctx, p, job, *o)
	}
	p.requeueAfter(again)
	if start.Pod == "" {
		// No pod yet, normally for a moment only: the status keeps
		// saying the Job was created. Should no pod ever come, the start
		// timeout names that.
		return false, nil
	}
	msg := fmt.Sprintf("runner Job %s is waiting for its pod to start: %s (the request fails with %s at %s)",
		job.Name, start.Waiting, state.ReasonPodNotStarted, deadline.UTC().Format(time.RFC3339))
	if state.SetCondition(rr, v1alpha1.ConditionRunning, metav1.ConditionTrue, state.ReasonPodWaiting, msg) {
		p.event(job, start.EventType(), state.ReasonPodWaiting, "Run", msg)
	}
	rr.Status.Message = msg
	return false, nil
}

// runnerWaits says whether a request's runner Job waits for its group to
// empty (whenGroupActive: Wait; a dry run never waits, runnerjob.Build).
func runnerWaits(rr *v1alpha1.ReplayRequest) bool {
	return rr.Spec.WhenGroupActive == v1alpha1.GroupActiveWait && rr.Spec.WaitTimeout != nil && !rr.Spec.DryRun
}

// runningMessage is the Running condition's message once the runner pod
// runs, before its log is first read: for a request that waits for its
// group, what it waits for, how long, and what happens then (issue 32,
// friction 4: "runner pod is running" said nothing while it waited). It is
// pure.
func runningMessage(rr *v1alpha1.ReplayRequest, pod string) string {
	msg := "runner pod " + pod + " is running"
	if !runnerWaits(rr) {
		return msg
	}
	who := "members"
	if len(rr.Status.Consumers) > 0 {
		who = "members (the paused consumers' pods among them)"
	}
	return fmt.Sprintf("%s; while group %s has %s, it waits for them to leave, up to %s (spec.waitTimeout), then fails GroupActive naming those that stayed (client ID@host); status.logTail shows the wait once the log is read",
		msg, replay.Group(rr), who, rr.Spec.WaitTimeout.Duration)
}

// recoverPlan puts back into status the plan of a Manual request whose
// apply Job exists while status has no plan: one pass saw the planning Job
// finish, found the approval already there and made the apply Job, then
// stopped before its status write. The plan is read as Planning reads it
// (the planning Job's own ReplayRecord, its digest recomputed), so that
// approval.Adopted compares the approval with the plan, not with the Job's
// word. A plan that cannot be read stays missing: the Job is then not
// adopted.
func (r *ReplayRequestReconciler) recoverPlan(ctx context.Context, p *pass) error {
	rr := p.rr
	if rr.Spec.Approval != v1alpha1.ApprovalManual || rr.Status.Plan != nil {
		return nil
	}
	key := client.ObjectKey{Namespace: rr.Namespace, Name: runnerjob.Name(rr, runnerjob.StagePlan)}
	var planJob batchv1.Job
	err := r.Client.Get(ctx, key, &planJob)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, &planJob)
	}
	var rec *v1alpha1.ReplayRecord
	var plan *report.Result
	if err == nil && lifecycle.ControlledBy(&planJob, rr) {
		rec, plan, err = r.readPlan(ctx, &planJob)
	}
	switch {
	case err != nil && apiServerTrouble(err):
		return err
	case err != nil || plan == nil:
		log.FromContext(ctx).V(1).Info("no plan to adopt an apply Job under", "planJob", key.Name, "error", fmt.Sprint(err))
		return nil
	}
	rr.Status.Plan = planSummaryOf(rr, rec, plan, jobFinishedAt(&planJob))
	return nil
}

// stopJob suspends a Job whose runner never started: the Job controller
// removes its pods, and the Job stays, with its outcome, as history.
func stopJob(ctx context.Context, c client.Client, job *batchv1.Job) error {
	if job.Spec.Suspend != nil && *job.Spec.Suspend {
		return nil
	}
	patched := job.DeepCopy()
	patched.Spec.Suspend = ptr.To(true)
	if err := c.Patch(ctx, patched, client.MergeFrom(job)); err != nil {
		return client.IgnoreNotFound(err)
	}
	*job = *patched
	return nil
}

// recordedOutcome reads back an outcome the launcher recorded on a Job.
func recordedOutcome(job *batchv1.Job) record.Outcome {
	o := record.Outcome{
		Succeeded:  job.Annotations[v1alpha1.AnnotationOutcome] == v1alpha1.OutcomeSucceeded,
		Reason:     job.Annotations[v1alpha1.AnnotationReason],
		FinishedAt: jobFinishedAt(job),
	}
	o.Message = fmt.Sprintf("the runner Job %s ended: %s", job.Name, o.Reason)
	return o
}

// jobDeleted follows a request whose runner Job was deleted before it
// finished (by a tenant, a TTL controller, a cleanup script): it waits while
// a runner pod of that Job is alive, since it may still commit and the
// request's paused consumers must not come back under it, then finishes with
// what the pods said (deletedJobOutcome).
func (r *ReplayRequestReconciler) jobDeleted(ctx context.Context, p *pass) error {
	rr := p.rr
	name := state.ValueOrString(rr.Status.JobName, runnerjob.Name(rr, runnerjob.StageApply))
	pods, err := runnerPodsNamed(ctx, r.Client, rr.Namespace, name)
	if err != nil {
		return err
	}
	alive, o := deletedJobOutcome(rr, name, pods)
	if alive != nil {
		msg := fmt.Sprintf("the runner Job %s was deleted before it finished; its runner pod %s is still stopping and may still commit: the outcome is read from it once it has ended", name, alive.Name)
		if state.ConsumersHeld(rr) {
			msg += ", and the consumers stay paused until then"
		}
		if state.SetCondition(rr, v1alpha1.ConditionRunning, metav1.ConditionTrue, state.ReasonJobDeleted, msg) {
			p.event(nil, corev1.EventTypeWarning, state.ReasonJobDeleted, "Run", msg)
		}
		rr.Status.Message = msg
		rr.Status.Phase = state.PhaseFor(rr.Status.Conditions)
		return nil // the pod's events bring it back
	}
	r.logReads.forget(pods)
	return r.finish(ctx, p, nil, o)
}

// waitForRunner says in status that the outcome of job, finished, waits for
// its runner pod alive to end (outcomeWait), as a Warning once it is
// overdue; kind names the Job.
func (p *pass) waitForRunner(job *batchv1.Job, kind, alive string, overdue bool) {
	msg := aliveMessage(kind, job, alive, overdue)
	if state.ConsumersHeld(p.rr) {
		msg += "; the consumers stay paused until then"
	}
	eventType := corev1.EventTypeNormal
	if overdue {
		eventType = corev1.EventTypeWarning
	}
	if state.SetCondition(p.rr, v1alpha1.ConditionRunning, metav1.ConditionTrue, state.ReasonWaitingForRunner, msg) {
		p.event(job, eventType, state.ReasonWaitingForRunner, "Run", msg)
	}
	p.rr.Status.Message = msg
	p.rr.Status.Phase = state.PhaseFor(p.rr.Status.Conditions)
}

// runnerPodsNamed lists the runner pods of the Job called job, from the
// cache, whether or not that Job still exists (its pods carry its name).
func runnerPodsNamed(ctx context.Context, c client.Client, namespace, job string) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := c.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels{batchv1.JobNameLabel: job}); err != nil {
		return nil, fmt.Errorf("list pods of Job %s: %w", job, err)
	}
	return list.Items, nil
}

// deletedJobOutcome decides for a request whose runner Job, named job, was
// deleted before it finished, from the pods of that Job that are left. While
// one is alive (not Succeeded or Failed, deleted or not) it is returned, and
// the request waits: it may still commit. Then, when a pod's termination
// message holds the runner's result, the outcome is what it says, read as a
// finished Job's would be (the last attempt's exit code standing for the
// Job's condition). Else it is JobDeleted, which says whether offsets may
// have changed, and how to find out. It is pure.
func deletedJobOutcome(rr *v1alpha1.ReplayRequest, job string, pods []corev1.Pod) (*corev1.Pod, record.Outcome) {
	if p := alivePod(pods); p != nil {
		return p, record.Outcome{}
	}
	attempts := record.AttemptsOf(pods, nil)
	if n := len(attempts); n > 0 && attempts[n-1].Result != nil {
		last := &attempts[n-1]
		cond := batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Time{Time: last.FinishedAt}}
		if last.ExitCode == 0 {
			cond.Type = batchv1.JobComplete
		}
		o := record.MergeAttempts(&batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{cond}}}, attempts)
		o.Message = state.Truncate(o.Message+" (the runner Job "+job+" was deleted before it finished; this is what its pod "+last.Pod+" reported)", 1024)
		return nil, o
	}
	o := record.Outcome{Reason: state.ReasonJobDeleted, OffsetsChanged: v1alpha1.OffsetsChangedUnknown, Attempts: attempts}
	if n := len(attempts); n > 0 {
		o.PodName = attempts[n-1].Pod
	}
	running := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionRunning)
	if len(attempts) == 0 && running != nil && running.Reason == state.ReasonPodWaiting {
		o.OffsetsChanged = v1alpha1.OffsetsChangedNo
		o.Message = fmt.Sprintf("the runner Job %s was deleted before it finished, while its pod had not started: nothing was run", job)
		return nil, o
	}
	o.Message = fmt.Sprintf("the runner Job %s was deleted before it finished, and no runner pod is left that says what it did: offsets may have changed. "+
		"Find out with `kubectl replay describe %s -n %s`, or read group %q's committed offsets and their commit metadata (run ID %s)",
		job, rr.Name, rr.Namespace, replay.Group(rr), runnerjob.RunID(rr))
	return nil, o
}
