package launcher

import (
	"context"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/approval"
	"github.com/kafka-replay/kafka-replay/launcher/internal/grouplock"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/internal/undo"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// errStale says the cache is behind the API server for this request: its
// Job is not created from what may be an old picture. The watch event that
// brings the current request reconciles it again.
var errStale = errors.New("the cache is behind the API server")

// queued creates the request's Job when the group's queue says it may start,
// or records what it waits for.
func (r *ReplayRequestReconciler) queued(ctx context.Context, p *pass) (next bool, err error) {
	rr := p.rr
	if v, ok := approval.LateRejection(rr); ok {
		// Approved, but waiting for the group: a rejection still stops
		// it, before anything is made.
		return false, r.rejected(ctx, p, v)
	}
	var created *batchv1.Job
	var createErr error
	recorded := false
	// A Manual request plans first; its planning run pauses nothing.
	stage := runnerjob.StageApply
	if state.NeedsPlan(rr) {
		stage = runnerjob.StagePlan
	}
	jobKey := types.NamespacedName{Namespace: rr.Namespace, Name: runnerjob.Name(rr, stage)}
	d, err := decideStart(ctx, r.queue, r.Client, r.APIReader, p.key, p.self, jobKey, func() (bool, error) {
		if state.PausesConsumers(rr) && stage == runnerjob.StageApply {
			// The start of a request with consumers is their record
			// (PausingConsumers then pauses them and creates the Job).
			if err := r.recordConsumers(ctx, p); err != nil {
				createErr = err
				return false, nil
			}
			recorded = true
			return true, nil
		}
		job, err := r.createJob(ctx, rr, stage)
		if err != nil {
			createErr = err
			return false, nil
		}
		created = job
		// The hold lasts until the cache shows the Job; one found under
		// the name without the runner label (planted: AlreadyExists)
		// never shows there, and would hold the group for good. Such a
		// Job is no start: Recognising or Applying refuses it.
		return RunnerSelector().Matches(labels.Set(job.Labels)), nil
	})
	if err != nil {
		return false, err
	}
	switch {
	case errors.Is(createErr, errStale):
		log.FromContext(ctx).V(1).Info("not starting from a stale cache")
		return false, nil
	case createErr != nil && state.PausesConsumers(rr) && stage == runnerjob.StageApply:
		return false, r.recordFailed(ctx, p, createErr)
	case recorded:
		return true, nil
	case createErr != nil:
		return false, r.createFailed(ctx, p, createErr)
	case created != nil && stage == runnerjob.StagePlan:
		p.planJob = created
		return true, nil // Planning follows it
	case created != nil:
		p.job = created
		return true, nil // Applying adopts it
	}
	msg := grouplock.WaitingMessage(rr.Namespace, replay.Group(rr), d)
	if state.SetCondition(rr, v1alpha1.ConditionAccepted, metav1.ConditionTrue, state.ReasonWaitingForGroup, msg) {
		p.event(nil, corev1.EventTypeNormal, state.ReasonWaitingForGroup, "Queue", msg)
	}
	rr.Status.Message = msg
	rr.Status.Phase = state.PhaseFor(rr.Status.Conditions)
	return false, nil
}

// createJob creates the request's Job, after making sure that the request is
// what the cache shows (nothing may start a run twice because a read was
// stale) and that it carries the finalizer (so that its deletion is seen).
// Both are one call: the finalizer patch carries the cached resourceVersion
// and fails with a conflict when the cache is behind; a request that already
// has the finalizer is read from the API server instead and compared. The
// Job's name is the request's own (JobName), so a Job created by an earlier
// pass is found, not doubled: AlreadyExists hands it to Applying, which
// adopts it only if this request controls it.
func (r *ReplayRequestReconciler) createJob(ctx context.Context, rr *v1alpha1.ReplayRequest, stage runnerjob.Stage) (*batchv1.Job, error) {
	if err := r.confirmCurrent(ctx, rr); err != nil {
		return nil, err
	}
	if err := r.authorizeResolved(ctx, rr); err != nil {
		return nil, err
	}
	in, err := r.inputFor(ctx, rr, stage)
	if err != nil {
		return nil, err
	}
	job, err := BuildJobWithInput(rr, stage, r.Options, in)
	if err != nil {
		return nil, err
	}
	if err := r.Client.Create(ctx, job); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return nil, err
		}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return nil, err
		}
	}
	return job, nil
}

// inputFor writes the input file a request's Job of stage reads its target
// from, and says where it is; nil when the Job reads none. The ConfigMap is
// created before the Job, so the Job never waits for it.
//
// A Manual request's apply Job applies its approved plan: the planning
// Job's ReplayRecord (status.plan.jobName, which must be this request's own
// planning Job), rebuilt (RecordResult) and checked against the approved
// digest once more, since the record could have been changed since.
func (r *ReplayRequestReconciler) inputFor(ctx context.Context, rr *v1alpha1.ReplayRequest, stage runnerjob.Stage) (*runnerjob.Input, error) {
	if rr.Spec.Target.UndoOf != nil && (stage == runnerjob.StagePlan || rr.Spec.Approval != v1alpha1.ApprovalManual) {
		// An undo reads the undone run's record (undo.go); a Manual
		// undo's planning Job does, and its apply Job applies that plan.
		return r.undoJobInput(ctx, rr, runnerjob.Name(rr, stage))
	}
	if rr.Spec.Approval != v1alpha1.ApprovalManual || stage != runnerjob.StageApply {
		return nil, nil
	}
	plan := rr.Status.Plan
	if plan == nil || !state.Approved(rr) {
		return nil, fmt.Errorf("%w: request %s/%s: approval: Manual and no approved plan", errJobRefused, rr.Namespace, rr.Name)
	}
	if want := runnerjob.Name(rr, runnerjob.StagePlan); plan.JobName != want {
		return nil, fmt.Errorf("%w: request %s/%s: status.plan.jobName %q is not its planning Job %s", errJobRefused, rr.Namespace, rr.Name, plan.JobName, want)
	}
	var planJob batchv1.Job
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: rr.Namespace, Name: plan.JobName}, &planJob)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, client.ObjectKey{Namespace: rr.Namespace, Name: plan.JobName}, &planJob)
	}
	var res *report.Result
	if err == nil {
		_, res, err = r.readPlan(ctx, &planJob)
	}
	if err != nil {
		if apiServerTrouble(err) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: request %s/%s: the approved plan: %w", errJobRefused, rr.Namespace, rr.Name, err)
	}
	if res.Plan != plan.Digest {
		return nil, fmt.Errorf("%w: request %s/%s: the planning Job's ReplayRecord %s is now plan %s, not the approved %s", errJobRefused, rr.Namespace, rr.Name, plan.JobName, res.Plan, plan.Digest)
	}
	name := runnerjob.Name(rr, runnerjob.StageApply)
	cm, digest, err := runnerjob.InputConfigMap(rr, name, res)
	if err != nil {
		return nil, fmt.Errorf("%w: request %s/%s: %w", errJobRefused, rr.Namespace, rr.Name, err)
	}
	if err := r.ensureInput(ctx, cm); err != nil {
		return nil, err
	}
	in := &runnerjob.Input{Kind: runnerjob.InputPlan, ConfigMap: cm.Name, Digest: digest}
	if rr.Spec.Target.UndoOf != nil {
		// The apply Job of a Manual undo says what it undoes, as its
		// planning Job does: it is what refuses a second undo once this
		// request is gone (undo.EarlierJob).
		in.Undo = runnerjob.UndoFromJob(planJob.Annotations)
	}
	return in, nil
}

// confirmCurrent returns errStale unless rr is the API server's current
// version, and adds the finalizer on the way.
func (r *ReplayRequestReconciler) confirmCurrent(ctx context.Context, rr *v1alpha1.ReplayRequest) error {
	if !controllerutil.ContainsFinalizer(rr, Finalizer) {
		patched := rr.DeepCopy()
		controllerutil.AddFinalizer(patched, Finalizer)
		err := r.Client.Patch(ctx, patched, client.MergeFromWithOptions(rr, client.MergeFromWithOptimisticLock{}))
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return errStale
		}
		if err != nil {
			return err
		}
		r.written.wrote(client.ObjectKeyFromObject(rr), rr.ResourceVersion, patched.ResourceVersion)
		// The patch answered with the current request: keep the status
		// this pass has made, on the new version.
		rr.Finalizers, rr.ResourceVersion = patched.Finalizers, patched.ResourceVersion
		return nil
	}
	var live v1alpha1.ReplayRequest
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(rr), &live); err != nil {
		if apierrors.IsNotFound(err) {
			return errStale
		}
		return err
	}
	if live.ResourceVersion != rr.ResourceVersion {
		return errStale
	}
	return nil
}

// createFailed reports a Job the API server refused. A Job it finds invalid
// can never be created, so the request fails. Anything else (a quota, a
// webhook, an outage) is reported on the request and retried, for at most
// the start timeout, after which the request fails with JobNotCreated and
// its group goes to the next replay.
func (r *ReplayRequestReconciler) createFailed(ctx context.Context, p *pass, err error) error {
	rr := p.rr
	if refusal := (*undo.Refusal)(nil); errors.As(err, &refusal) {
		state.
			// What an undo restores from is gone or changed since it was
			// accepted: refused as at acceptance, before anything is made.
			SetCondition(rr, v1alpha1.ConditionAccepted, metav1.ConditionFalse, state.ReasonUndoRefused, refusal.Error())
		return r.finish(ctx, p, nil, record.Outcome{Reason: state.ReasonUndoRefused, Message: refusal.Error()})
	}
	msg := "cannot create the runner Job: " + err.Error()
	if apierrors.IsInvalid(err) || errors.Is(err, errJobRefused) {
		state.SetCondition(rr, v1alpha1.ConditionAccepted, metav1.ConditionFalse, state.ReasonJobInvalid, msg)
		return r.finish(ctx, p, nil, record.Outcome{Reason: state.ReasonJobInvalid, Message: msg})
	}
	prev := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionRunning)
	refusedSince := prev == nil || prev.Status != metav1.ConditionFalse
	state.SetCondition(rr, v1alpha1.ConditionRunning, metav1.ConditionFalse, state.ReasonJobCreateFailed, msg)
	running := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionRunning)
	if refusedSince {
		// The refusals begin now by the pass's clock (the condition would
		// stamp the wall clock), which the start timeout counts from.
		running.LastTransitionTime = metav1.NewTime(p.now)
	}
	since := running.LastTransitionTime.Time
	retry, left := createRetry(since, p.now, r.Options.StartTimeout)
	if left <= 0 {
		timeout := "cannot create the runner Job within the start timeout (" + r.Options.StartTimeout.String() + "): " + err.Error()
		return r.finish(ctx, p, nil, record.Outcome{Reason: state.ReasonJobNotCreated, Message: timeout})
	}
	p.event(nil, corev1.EventTypeWarning, state.ReasonJobCreateFailed, "Run", msg)
	rr.Status.Message = state.Truncate(msg, 1024)
	rr.Status.Phase = state.PhaseFor(rr.Status.Conditions)
	p.requeueAfter(retry)
	log.FromContext(ctx).V(1).Info("Job refused; retrying", "error", err.Error(), "retry", retry)
	return nil
}

// createRetry says when to try creating a refused Job again, and how much of
// the start timeout is left, given when the refusals began. The retry waits
// half the time refused so far, between 1 s and 30 s, and never past the
// timeout. It is pure.
func createRetry(since, now time.Time, timeout time.Duration) (retry, left time.Duration) {
	left = since.Add(timeout).Sub(now)
	retry = min(max(now.Sub(since)/2, time.Second), 30*time.Second)
	if left <= 0 {
		return 0, left
	}
	return min(retry, left), left
}
