package launcher

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/approval"
	"github.com/kafka-replay/kafka-replay/launcher/internal/fanout"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// The launcher creates the child requests of a request over several groups.
//
// +kubebuilder:rbac:groups=kafkareplay.dev,resources=replayrequests,verbs=create

// ParentReconciler runs a request over several groups (a parent,
// docs/groups.md) by making one child ReplayRequest per group, which the
// ReplayRequestReconciler runs as any request: its own lock, queue
// position, run ID, record, undo and pause. The parent holds no group and
// has no Job; it starts children in order under spec.parallelism
// (fanout.Next), stops starting them after a failure without
// continueOnError, and sums them up, one status row per group.
//
// It is driven by watches alone: the parent's own changes, and every
// change of a child it controls. Each pass reads the parent and its
// children, decides, and writes status once.
type ParentReconciler struct {
	Client client.Client
	// APIReader reads past the cache: a child this launcher made that the
	// cache does not show yet, before deciding it was deleted.
	APIReader client.Reader
	Recorder  recorder.EventRecorder
	// Options are the runner Jobs' settings, for a groupSelector's list
	// Job (parent_list.go).
	Options Options
	// Logs reads a list Job's pod log, for a listing too long for its
	// termination message.
	Logs record.LogFetcher
	// Now is the clock; tests may stop it.
	Now func() time.Time
}

func (r *ParentReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Reconcile moves one parent on: accepts it, adopts or creates its
// children, gives up the groups that will not run, and finishes it once
// every group has ended.
func (r *ParentReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.reconcile(ctx, req)
	return quietConflict(ctx, res, err)
}

func (r *ParentReconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var p v1alpha1.ReplayRequest
	if err := r.Client.Get(ctx, req.NamespacedName, &p); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	// A finished parent changes no more; a deleted one takes its children
	// with it (their owner reference), each stopping its own Job.
	if !replay.IsParent(&p) || p.DeletionTimestamp != nil || state.IsFinished(&p) {
		return reconcile.Result{}, nil
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("requestedBy", p.Requester()))
	before := p.Status.DeepCopy()
	now := metav1.NewTime(r.now())
	var events []pendingEvent

	if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionAccepted); c == nil || c.Status == metav1.ConditionUnknown {
		p.Status.RequestedBy = p.Requester()
		groups, left, listing, err := r.resolve(ctx, &p)
		if err == nil && listing != "" {
			// A groupSelector's list Job runs; its changes wake the parent.
			p.Status.ObservedGeneration = p.Generation
			p.Status.Message = listing
			changed := state.SetCondition(&p, v1alpha1.ConditionAccepted, metav1.ConditionUnknown, state.ReasonListingGroups, listing)
			p.Status.Phase = state.PhaseFor(p.Status.Conditions)
			if err := r.writeStatus(ctx, &p, before); err != nil {
				return reconcile.Result{}, err
			}
			if changed {
				r.Recorder.Eventf(&p, nil, corev1.EventTypeNormal, state.ReasonListingGroups, "Accept", "%s", listing)
			}
			return reconcile.Result{}, nil
		}
		if err == nil && len(p.Status.ResolvedGroups) > 0 && !slices.Equal(p.Status.ResolvedGroups, groups) {
			err = fmt.Errorf("%w: status.resolvedGroups was written before the launcher accepted the request, and is not what it resolves to", errRefused)
		}
		if errors.Is(err, errRefused) {
			// Nothing was made: the request ends here, saying why.
			msg := state.Truncate(strings.TrimPrefix(err.Error(), errRefused.Error()+": "), 1024)
			reason := string(report.ReasonInvalidInput)
			if replay.IsUndoParent(&p) {
				reason = state.ReasonUndoRefused
			}
			if rf := (*refusal)(nil); errors.As(err, &rf) {
				reason = rf.reason
			}
			state.SetCondition(&p, v1alpha1.ConditionAccepted, metav1.ConditionFalse, reason, msg)
			r.finish(&p, now, false, reason, msg)
			p.Status.Phase = state.PhaseFor(p.Status.Conditions)
			if err := r.writeStatus(ctx, &p, before); err != nil {
				return reconcile.Result{}, err
			}
			r.Recorder.Eventf(&p, nil, corev1.EventTypeWarning, reason, "Accept", "%s", msg)
			return reconcile.Result{}, nil
		}
		if err != nil {
			return reconcile.Result{}, err
		}
		p.Status.ResolvedGroups = groups
		msg := fmt.Sprintf("%d groups, in this order, at most %d at once", len(groups), max(p.Spec.Parallelism, 1))
		if len(left) > 0 {
			var why []string
			for _, g := range groups {
				if w, ok := left[g]; ok {
					why = append(why, w)
					p.Status.Groups = append(p.Status.Groups, v1alpha1.GroupStatus{Group: g, Phase: v1alpha1.GroupNotAttempted, Reason: state.ReasonNothingToUndo})
				}
			}
			msg = fmt.Sprintf("%d of %d groups to undo, at most %d at once; left alone: %s", len(groups)-len(left), len(groups), max(p.Spec.Parallelism, 1), strings.Join(why, "; "))
		}
		state.SetCondition(&p, v1alpha1.ConditionAccepted, metav1.ConditionTrue, state.ReasonAccepted, msg)
		events = append(events, pendingEvent{eventType: corev1.EventTypeNormal, reason: state.ReasonAccepted, action: "Accept", message: fmt.Sprintf("requested by %s; %s", p.Requester(), state.Truncate(msg, 512))})
	}
	p.Status.ObservedGeneration = p.Generation

	groups := fanout.Groups(&p)
	last := map[string]*v1alpha1.GroupStatus{}
	for i := range p.Status.Groups {
		last[p.Status.Groups[i].Group] = &p.Status.Groups[i]
	}
	rows := make([]v1alpha1.GroupStatus, len(groups))
	children := make([]*v1alpha1.ReplayRequest, len(groups))
	var tampered error
	for i, g := range groups {
		child, row, err := r.observe(ctx, &p, g, last[g])
		if errors.Is(err, fanout.ErrTampered) {
			tampered = errors.Join(tampered, err)
		} else if err != nil {
			return reconcile.Result{}, err
		}
		children[i], rows[i] = child, row
	}

	// manual: the children plan before any applies (replay.PlansFirst):
	// approval Manual, or a guard over the total of their plans.
	manual := replay.PlansFirst(&p)
	var requeue time.Duration
	// ended: the parent ends now, though children may not have (a
	// decision against the plan, a failed plan): the reason and message.
	var ended *parentEnd

	// A Manual parent whose children have all planned: its plan, then the
	// decision on it (the total guard, then approval.Decide, as for one
	// group's plan).
	if tampered == nil && manual && !state.Approved(&p) && p.Status.Approval == nil {
		ended, requeue, events = r.decide(ctx, &p, rows, children, now, events)
	}

	// startErr: the API server refused a child; status keeps what was
	// started before it, and the retry decides again.
	var startErr error
	if tampered == nil && ended == nil {
		approved := state.Approved(&p)
		fsm := make([]fanout.Row, len(rows))
		for i := range rows {
			st := fanout.StateOf(rows[i])
			if manual {
				st = fanout.ManualState(rows[i], children[i], approved)
			}
			if fanout.Restoring(children[i]) {
				st = fanout.Running
			}
			fsm[i] = fanout.Row{Group: rows[i].Group, State: st}
		}
		step := fanout.Next(fsm, int(p.Spec.Parallelism), p.Spec.ContinueOnError)
		for i := range rows {
			switch {
			case slices.Contains(step.GiveUp, rows[i].Group):
				if err := r.decideChild(ctx, children[i], "", fmt.Sprintf("not attempted: an earlier group of %s failed, without continueOnError", p.Name), EventSource); err != nil {
					startErr = errors.Join(startErr, err)
					continue
				}
				rows[i].Phase, rows[i].Reason = v1alpha1.GroupNotAttempted, state.ReasonNotAttempted
			case slices.Contains(step.Start, rows[i].Group) && startErr == nil:
				if children[i] != nil {
					// A planned child of an approved parent: the launcher
					// approves it with its own digest, the one the
					// parent's approval covers, in the approver's name.
					if children[i].Status.Plan.Digest != rows[i].Plan {
						rows[i].Phase, rows[i].Reason = v1alpha1.GroupPhase(v1alpha1.PhaseFailed), string(report.ReasonPlanStale)
						continue
					}
					if err := r.decideChild(ctx, children[i], rows[i].Plan, "", p.Status.Approval.By); err != nil {
						startErr = err
					}
					continue
				}
				child, err := r.start(ctx, &p, rows[i].Group)
				switch {
				case errors.Is(err, fanout.ErrTampered):
					tampered = errors.Join(tampered, err)
				case err != nil:
					startErr = err
				default:
					children[i], rows[i] = child, fanout.RowOf(rows[i].Group, child, &rows[i])
				}
			}
		}
		// A Manual parent whose groups all failed to plan, or, without
		// continueOnError, one of them did: no plan to approve, nothing
		// applied; the planned ones are told so.
		if manual && !approved && p.Status.Plan == nil && step.Done && startErr == nil {
			ended = r.planFailed(ctx, &p, rows, children)
		}
	}
	p.Status.Groups = rows

	switch {
	case startErr != nil:
		state.SetCondition(&p, v1alpha1.ConditionRunning, metav1.ConditionTrue, state.ReasonGroupsRunning, state.Truncate(startErr.Error(), 1024))
	case tampered != nil:
		msg := state.Truncate(tampered.Error()+"; no more groups are started", 1024)
		r.finish(&p, now, false, state.ReasonChildTampered, msg)
		events = append(events, pendingEvent{eventType: corev1.EventTypeWarning, reason: state.ReasonChildTampered, action: "Adopt", message: msg})
	case ended != nil:
		r.finish(&p, now, false, ended.reason, ended.message)
		events = append(events, pendingEvent{eventType: corev1.EventTypeWarning, reason: ended.reason, action: "Finish", message: state.Truncate(ended.message, 1024)})
	case allEnded(rows, children):
		var results []report.Result
		for i := range rows {
			if rows[i].Phase != v1alpha1.GroupNotAttempted {
				results = append(results, fanout.ResultOf(children[i], rows[i]))
			}
		}
		ok, reason, msg := fanout.Overall(results, fanout.NotAttemptedGroups(rows), p.Spec.DryRun)
		if v, over := fanout.JudgeTotal(&p, fanout.Contributions(&p, rows, children)); ok && p.Spec.DryRun && v == fanout.TotalRefused {
			// A dry run fails as the real run would, as for one group.
			ok, reason, msg = false, string(report.ReasonLimitExceeded), over
		}
		r.finish(&p, now, ok, reason, msg)
		events = append(events, pendingEvent{eventType: eventType(ok), reason: reason, action: "Finish", message: state.Truncate(msg, 1024)})
	case manual && p.Status.Plan != nil && !state.Approved(&p):
		// AwaitingApproval says it (decide).
		state.SetCondition(&p, v1alpha1.ConditionRunning, metav1.ConditionFalse, state.ReasonPlanReady, "")
	default:
		progress := fanout.Progress(rows)
		state.SetCondition(&p, v1alpha1.ConditionRunning, metav1.ConditionTrue, state.ReasonGroupsRunning, progress)
		p.Status.Message = progress
	}
	p.Status.Phase = state.PhaseFor(p.Status.Conditions)

	if err := r.writeStatus(ctx, &p, before); err != nil {
		return reconcile.Result{}, err
	}
	for _, e := range events {
		r.Recorder.Eventf(&p, nil, e.eventType, e.reason, e.action, "%s", e.message)
	}
	return reconcile.Result{RequeueAfter: requeue}, startErr
}

// parentEnd is why a parent ends before its children do.
type parentEnd struct{ reason, message string }

// decide is a Manual parent's plan and decision: once no group is left to
// plan, its plan (fanout.ParentPlan) and AwaitingApproval, as a one-group
// request's; then approval.Decide over its annotations and the clock. An
// approval is recorded (the children are approved by the pass, in order);
// a rejection or the expiry ends the parent, and every child still
// awaiting its decision is rejected with that reason.
func (r *ParentReconciler) decide(ctx context.Context, p *v1alpha1.ReplayRequest, rows []v1alpha1.GroupStatus, children []*v1alpha1.ReplayRequest, now metav1.Time, events []pendingEvent) (*parentEnd, time.Duration, []pendingEvent) {
	if p.Status.Plan == nil {
		for i := range rows {
			if fanout.PlanApproved(children[i]) {
				continue // approved by a pass whose status was lost: planned
			}
			if s := fanout.ManualState(rows[i], children[i], false); s == fanout.Waiting || s == fanout.Running {
				return nil, 0, events // still planning
			}
			if fanout.StateOf(rows[i]) == fanout.Failed && !p.Spec.ContinueOnError {
				return nil, 0, events // planFailed ends it
			}
		}
		plan, ok, err := fanout.ParentPlan(rows, children)
		if err != nil || !ok {
			return nil, 0, events
		}
		switch verdict, total := fanout.JudgeTotal(p, fanout.Contributions(p, rows, children)); verdict {
		case fanout.TotalRefused:
			// As a one-group plan a guard refused: no plan to approve,
			// and every planned child is told so.
			reason := string(report.ReasonLimitExceeded)
			r.rejectPlanned(ctx, rows, children, fmt.Sprintf("%s of %s: %s", reason, p.Name, total), EventSource)
			return &parentEnd{reason: reason, message: total}, 0, events
		case fanout.TotalApproved:
			// An Automatic parent planned only for its guard: the launcher
			// approves, and the pass approves its children in order.
			p.Status.Plan = plan
			p.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: EventSource, At: &now, Digest: plan.Digest}
			msg := fmt.Sprintf("plan %s approved by %s: %s", plan.Digest, EventSource, total)
			state.SetCondition(p, v1alpha1.ConditionAwaitingApproval, metav1.ConditionFalse, state.ReasonApproved, msg)
			p.Status.Message = msg
			return nil, 0, append(events, pendingEvent{eventType: corev1.EventTypeNormal, reason: state.ReasonApproved, action: "Approve", message: msg})
		}
		p.Status.Plan = plan
		msg := planReadyMessage(p, plan)
		state.SetCondition(p, v1alpha1.ConditionAwaitingApproval, metav1.ConditionTrue, state.ReasonPlanReady, msg)
		p.Status.Message = msg
		events = append(events, pendingEvent{eventType: corev1.EventTypeNormal, reason: state.ReasonPlanReady, action: "Plan", message: msg})
	}
	plan := p.Status.Plan
	v := approval.Decide(p, now.Time)
	switch v.Verdict {
	case approval.VerdictApproved:
		p.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: v.By, At: &now, Digest: plan.Digest}
		msg := fmt.Sprintf("plan %s approved by %s", plan.Digest, v.By)
		state.SetCondition(p, v1alpha1.ConditionAwaitingApproval, metav1.ConditionFalse, state.ReasonApproved, msg)
		p.Status.Message = msg
		return nil, 0, append(events, pendingEvent{eventType: corev1.EventTypeNormal, reason: state.ReasonApproved, action: "Approve", message: msg})
	case approval.VerdictRejected, approval.VerdictExpired:
		reason, msg := state.ReasonRejected, fmt.Sprintf("plan %s rejected by %s: %s; nothing was applied", plan.Digest, v.By, v.Value)
		if v.Verdict == approval.VerdictExpired {
			reason, msg = state.ReasonExpired, fmt.Sprintf("plan %s was not approved by %s; nothing was applied", plan.Digest, approval.PlanExpiry(p).UTC().Format(time.RFC3339))
			p.Status.Approval = nil
		} else {
			p.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalRejected, By: v.By, At: &now, Digest: plan.Digest, Reason: v.Value}
		}
		state.SetCondition(p, v1alpha1.ConditionAwaitingApproval, metav1.ConditionFalse, reason, msg)
		r.rejectPlanned(ctx, rows, children, fmt.Sprintf("%s of %s: %s", reason, p.Name, msg), state.ValueOrString(v.By, EventSource))
		return &parentEnd{reason: reason, message: msg}, 0, events
	}
	msg := planReadyMessage(p, plan)
	if v.Verdict == approval.VerdictWrongDigest {
		msg = fmt.Sprintf("%s=%q (set by %s) is not this plan's digest, so nothing was approved; %s", v1alpha1.AnnotationApprove, v.Value, v.By, msg)
	}
	if state.SetCondition(p, v1alpha1.ConditionAwaitingApproval, metav1.ConditionTrue, state.ReasonPlanReady, msg) && v.Verdict == approval.VerdictWrongDigest {
		events = append(events, pendingEvent{eventType: corev1.EventTypeWarning, reason: state.ReasonApprovalRefused, action: "Approve", message: msg})
	}
	p.Status.Message = msg
	return nil, max(approval.PlanExpiry(p).Sub(now.Time), time.Millisecond), events
}

// rejectPlanned rejects every child awaiting its decision, in the name of
// by, when the parent's plan will not be applied.
func (r *ParentReconciler) rejectPlanned(ctx context.Context, rows []v1alpha1.GroupStatus, children []*v1alpha1.ReplayRequest, reason, by string) {
	var errs error
	for i := range rows {
		if fanout.Planned(children[i]) {
			errs = errors.Join(errs, r.decideChild(ctx, children[i], "", reason, by))
		}
	}
	if errs != nil {
		log.FromContext(ctx).Error(errs, "reject the children of a decided parent; each expires on its own")
	}
}

// planFailed ends a Manual parent that has no plan to approve: its groups
// all failed to plan, or one did without continueOnError. The planned
// children are rejected, so none waits for a decision that cannot come.
func (r *ParentReconciler) planFailed(ctx context.Context, p *v1alpha1.ReplayRequest, rows []v1alpha1.GroupStatus, children []*v1alpha1.ReplayRequest) *parentEnd {
	var results []report.Result
	var left []string
	for i := range rows {
		switch {
		case fanout.Planned(children[i]):
			if err := r.decideChild(ctx, children[i], "", fmt.Sprintf("%s has no plan to approve: a group failed to plan", p.Name), EventSource); err != nil {
				log.FromContext(ctx).Error(err, "reject a planned child", "child", children[i].Name)
			}
			left = append(left, rows[i].Group)
		case rows[i].Phase == v1alpha1.GroupNotAttempted:
			left = append(left, rows[i].Group)
		default:
			results = append(results, fanout.ResultOf(children[i], rows[i]))
		}
	}
	_, reason, msg := fanout.Overall(results, left, true)
	return &parentEnd{reason: reason, message: "no plan to approve, nothing applied: " + msg}
}

// decideChild approves a planned child with digest, or rejects it with
// reason (digest empty), on behalf of its parent, in the name of by: the
// parent's approver (or rejecter), or the launcher when it decides alone
// (a group not attempted).
func (r *ParentReconciler) decideChild(ctx context.Context, child *v1alpha1.ReplayRequest, digest, reason, by string) error {
	if child == nil || !fanout.Planned(child) {
		return nil
	}
	before := child.DeepCopy()
	if child.Annotations == nil {
		child.Annotations = map[string]string{}
	}
	if digest != "" {
		child.Annotations[v1alpha1.AnnotationApprove] = digest
	} else {
		child.Annotations[v1alpha1.AnnotationReject] = state.Truncate(reason, 1024)
	}
	child.Annotations[v1alpha1.AnnotationApprovedBy] = by
	if err := r.Client.Patch(ctx, child, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("decide the plan of request %s: %w", child.Name, err)
	}
	return nil
}

// errRefused is a parent the launcher will not run, with nothing made.
var errRefused = errors.New("refused")

// resolve is, at acceptance, the parent's groups in start order: spec.groups
// as given; spec.groupSelector's over its list Job's listing, or while that
// runs, what the parent waits for (listing); for the undo of a parent, the
// undone parent's groups and of them those left alone, each with why
// (fanout.UndoGroups over the undone parent and the children it made, read
// from the cache).
func (r *ParentReconciler) resolve(ctx context.Context, p *v1alpha1.ReplayRequest) (groups []string, left map[string]string, listing string, err error) {
	if p.Spec.GroupSelector != nil {
		groups, listing, err = r.resolveSelector(ctx, p)
		return groups, nil, listing, err
	}
	if !replay.IsUndoParent(p) {
		return slices.Clone(p.Spec.Groups), nil, "", nil
	}
	name := *p.Spec.Target.UndoOf
	var undone v1alpha1.ReplayRequest
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: name}, &undone); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, "", fmt.Errorf("%w: target.undoOf: no request %s in namespace %s", errRefused, name, p.Namespace)
		}
		return nil, nil, "", err
	}
	children := map[string]*v1alpha1.ReplayRequest{}
	for _, g := range fanout.Groups(&undone) {
		var c v1alpha1.ReplayRequest
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: fanout.ChildName(undone.Name, g)}, &c)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, nil, "", err
		}
		// Only the undone parent's own child speaks for its group.
		if fanout.CheckAdopted(&undone, &c, g) == nil {
			children[g] = &c
		}
	}
	groups, left, err = fanout.UndoGroups(&undone, children)
	if err != nil {
		return nil, nil, "", fmt.Errorf("%w: target.undoOf: %w", errRefused, err)
	}
	return groups, left, "", nil
}

func eventType(ok bool) string {
	if ok {
		return corev1.EventTypeNormal
	}
	return corev1.EventTypeWarning
}

// allEnded: every group's child has finished and restored its consumers,
// or none will be made; so the parent's Finished (what `kubectl wait`
// and `kubectl replay --wait` wait for) means everything is back.
func allEnded(rows []v1alpha1.GroupStatus, children []*v1alpha1.ReplayRequest) bool {
	for i, r := range rows {
		if s := fanout.StateOf(r); s == fanout.Waiting || s == fanout.Running || fanout.Restoring(children[i]) {
			return false
		}
	}
	return true
}

// finish sets the parent's final conditions, as a one-group request's.
func (r *ParentReconciler) finish(p *v1alpha1.ReplayRequest, now metav1.Time, ok bool, reason, msg string) {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	reason = state.ValidReason(reason, state.ReasonFinished)
	state.SetCondition(p, v1alpha1.ConditionRunning, metav1.ConditionFalse, state.ReasonFinished, "")
	state.SetCondition(p, v1alpha1.ConditionSucceeded, status, reason, msg)
	state.SetCondition(p, v1alpha1.ConditionFinished, metav1.ConditionTrue, reason, msg)
	p.Status.Message = state.Truncate(msg, 4096)
	if p.Status.CompletionTime == nil {
		p.Status.CompletionTime = &now
	}
}

// writeStatus is the pass's one status write, when anything changed.
func (r *ParentReconciler) writeStatus(ctx context.Context, p *v1alpha1.ReplayRequest, before *v1alpha1.ReplayRequestStatus) error {
	if equality.Semantic.DeepEqual(before, &p.Status) {
		return nil
	}
	err := r.Client.Status().Update(ctx, p)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if apierrors.IsConflict(err) {
		// A newer version's event reconciles again (as in Reconcile of a
		// one-group request).
		log.FromContext(ctx).V(1).Info("status update conflict; the newer version's event reconciles again")
		return nil
	}
	return err
}

// observe reads group's child and its row. A child is looked up by its
// name alone (fanout.ChildName), in the cache, and past it when the row
// says the launcher made it: one made before is never made again, so a
// child deleted before it finished ends its row ChildDeleted rather than
// running the group a second time.
func (r *ParentReconciler) observe(ctx context.Context, p *v1alpha1.ReplayRequest, group string, last *v1alpha1.GroupStatus) (*v1alpha1.ReplayRequest, v1alpha1.GroupStatus, error) {
	key := types.NamespacedName{Namespace: p.Namespace, Name: fanout.ChildName(p.Name, group)}
	var child v1alpha1.ReplayRequest
	err := r.Client.Get(ctx, key, &child)
	if apierrors.IsNotFound(err) && last != nil && last.Child != "" {
		err = r.APIReader.Get(ctx, key, &child)
	}
	switch {
	case apierrors.IsNotFound(err):
		row := fanout.RowOf(group, nil, last)
		if row.Child != "" && fanout.StateOf(row) == fanout.Running {
			row.Phase, row.Reason = v1alpha1.GroupPhase(v1alpha1.PhaseFailed), state.ReasonChildDeleted
		}
		return nil, row, nil
	case err != nil:
		return nil, v1alpha1.GroupStatus{}, err
	}
	if err := fanout.CheckAdopted(p, &child, group); err != nil {
		row := fanout.RowOf(group, nil, last)
		return nil, row, err
	}
	return &child, fanout.RowOf(group, &child, last), nil
}

// start creates group's child. One the API server already has (this
// launcher made it, and its cache or status had not caught up) is adopted
// only if it passes the same check as any found child.
func (r *ParentReconciler) start(ctx context.Context, p *v1alpha1.ReplayRequest, group string) (*v1alpha1.ReplayRequest, error) {
	child := fanout.Child(p, group)
	err := r.Client.Create(ctx, child)
	if apierrors.IsAlreadyExists(err) {
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(child), child); err != nil {
			return nil, err
		}
		return child, fanout.CheckAdopted(p, child, group)
	}
	if err != nil {
		return nil, fmt.Errorf("create the request of group %q: %w", group, err)
	}
	log.FromContext(ctx).Info("child created", "group", group, "child", child.Name)
	return child, nil
}

// isParent selects the requests this controller runs.
var isParent = predicate.NewPredicateFuncs(func(o client.Object) bool {
	rr, ok := o.(*v1alpha1.ReplayRequest)
	return ok && replay.IsParent(rr)
})

// SetupWithManager watches parents, the children each controls and its
// list Job: a child's every status change, and the list Job's, is a pass
// of its parent, so no parent polls.
func (r *ParentReconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("replayrequest-parent").
		For(&v1alpha1.ReplayRequest{}, builder.WithPredicates(isParent)).
		Watches(&v1alpha1.ReplayRequest{}, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &v1alpha1.ReplayRequest{}, handler.OnlyControllerOwner())).
		// A groupSelector's list Job: its end is the parent's acceptance.
		Watches(&batchv1.Job{}, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &v1alpha1.ReplayRequest{}, handler.OnlyControllerOwner()),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
				return o.GetLabels()[v1alpha1.LabelStage] == string(runnerjob.StageList)
			}))).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(workers, 1)}).
		Complete(r)
}
