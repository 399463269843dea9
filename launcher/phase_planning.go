package launcher

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/approval"
	"github.com/kafka-replay/kafka-replay/launcher/internal/lifecycle"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// maxLargestDeltas is how many of a plan's largest moves status shows.
const maxLargestDeltas = 10

// maxPlanWarnings bounds status.plan.warnings (the CRD's MaxItems).
const maxPlanWarnings = 32

// planSummaryOf is the status form of a planning run's record: the digest
// of every partition, the totals, the largest moves, the internal topics
// it deletes and the warnings, with
// plannedAt and expiresAt. It is pure.
func planSummaryOf(rr *v1alpha1.ReplayRequest, rec *v1alpha1.ReplayRecord, plan *report.Result, plannedAt time.Time) *v1alpha1.PlanSummary {
	s := &v1alpha1.PlanSummary{
		Digest:    plan.Plan,
		JobName:   rec.Name,
		Target:    rec.Target,
		PlannedAt: &metav1.Time{Time: plannedAt},
		ExpiresAt: &metav1.Time{Time: plannedAt.Add(state.ApprovalTimeout(rr))},
		Totals:    record.APITotals(plan.Totals),
	}
	for _, p := range largestDeltas(plan.Partitions, maxLargestDeltas) {
		d := record.APIPartition(p)
		// The plan is read from the whole record, not the runner's compact
		// result: bound what a note may add to status.
		d.Note = state.Truncate(d.Note, 256)
		s.LargestDeltas = append(s.LargestDeltas, d)
	}
	if it := plan.InternalTopics; it != nil {
		// Bound by the digest: the approval covers deleting these.
		s.InternalTopics = slices.Clone(it.Planned)
	}
	for i, w := range plan.Warnings {
		if i == maxPlanWarnings {
			break
		}
		s.Warnings = append(s.Warnings, state.Truncate(w, 1024))
	}
	return s
}

// largestDeltas are the n partitions that move the most (by |delta|, then
// topic and partition), largest first; partitions with no committed offset
// have no delta and are not among them. It is pure.
func largestDeltas(ps []report.Partition, n int) []report.Partition {
	var out []report.Partition
	for _, p := range ps {
		if p.Delta != nil && *p.Delta != 0 {
			out = append(out, p)
		}
	}
	abs := func(d int64) int64 {
		if d < 0 {
			return -d
		}
		return d
	}
	slices.SortFunc(out, func(a, b report.Partition) int {
		return cmp.Or(cmp.Compare(abs(*b.Delta), abs(*a.Delta)), cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out[:min(n, len(out))]
}

// approveCommand is the command that approves a request's plan, and
// rejectCommand the one that rejects it.
func approveCommand(rr *v1alpha1.ReplayRequest, digest string) string {
	return fmt.Sprintf("kubectl annotate replayrequest %s -n %s %s=%s", rr.Name, rr.Namespace, v1alpha1.AnnotationApprove, digest)
}

// rejectCommand: see approveCommand.
func rejectCommand(rr *v1alpha1.ReplayRequest) string {
	return fmt.Sprintf("kubectl annotate replayrequest %s -n %s %s='<reason>'", rr.Name, rr.Namespace, v1alpha1.AnnotationReject)
}

// planReadyMessage is the AwaitingApproval condition's message: what the
// plan does and the exact commands that decide it; for a child, that its
// parent is decided instead (only the launcher decides a child).
func planReadyMessage(rr *v1alpha1.ReplayRequest, s *v1alpha1.PlanSummary) string {
	if replay.IsChild(rr) {
		parent := childParent(rr)
		return fmt.Sprintf("plan %s ready: %d partitions, %d messages would be consumed again, %d skipped; the plan of %s covers it: approve or reject %s (kubectl replay approve %s -n %s), and the launcher decides this child; expires at %s",
			s.Digest, s.Totals.Partitions, s.Totals.MessagesToReconsume, s.Totals.MessagesSkipped,
			parent, parent, parent, rr.Namespace, planExpiryOf(rr, s).UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("plan %s ready: %d partitions, %d messages would be consumed again, %d skipped; approve with `%s`, or reject with `%s`; expires at %s",
		s.Digest, s.Totals.Partitions, s.Totals.MessagesToReconsume, s.Totals.MessagesSkipped,
		approveCommand(rr, s.Digest), rejectCommand(rr), planExpiryOf(rr, s).UTC().Format(time.RFC3339))
}

// planExpiryOf is PlanExpiry of rr with plan s.
func planExpiryOf(rr *v1alpha1.ReplayRequest, s *v1alpha1.PlanSummary) time.Time {
	cp := *rr
	cp.Status.Plan = s
	return approval.PlanExpiry(&cp)
}

// planning follows a Manual request's planning Job, as applying follows an
// apply Job (the start timeout, the runner's log), and when it has finished
// makes its record the plan awaiting approval. A planning run that fails (a
// guard refused the plan, say) fails the request with its reason: nothing
// was changed, and nothing will be.
func (r *ReplayRequestReconciler) planning(ctx context.Context, p *pass) (next bool, err error) {
	rr, job := p.rr, p.planJob
	if !lifecycle.ControlledBy(job, rr) {
		msg := fmt.Sprintf("a Job named %s already exists that the launcher did not make for this request's plan; it is not adopted, and nothing was run", job.Name)
		state.SetCondition(rr, v1alpha1.ConditionAccepted, metav1.ConditionFalse, state.ReasonJobConflict, msg)
		return false, r.finish(ctx, p, nil, record.Outcome{Reason: state.ReasonJobConflict, Message: msg})
	}
	if job.DeletionTimestamp != nil {
		return false, nil // gone soon; then Queued plans again
	}
	if c := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionRunning); c == nil || c.Status != metav1.ConditionTrue {
		msg := "planning Job " + job.Name + " created"
		state.SetCondition(rr, v1alpha1.ConditionAccepted, metav1.ConditionTrue, state.ReasonAccepted, "target resolved to "+rr.Status.ResolvedTarget)
		state.SetCondition(rr, v1alpha1.ConditionRunning, metav1.ConditionTrue, state.ReasonJobCreated, msg)
		rr.Status.Message = msg
		rr.Status.ObservedGeneration = rr.Generation
		p.event(job, corev1.EventTypeNormal, state.ReasonJobCreated, "Plan", "created planning Job "+job.Name)
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
			p.waitForRunner(job, "planning", alive, overdue)
			if wait > 0 {
				p.requeueAfter(wait)
			}
			return false, nil
		}
		if wait > 0 {
			p.requeueAfter(wait)
			return false, nil
		}
		if o, err = record.CollectRecord(ctx, r.Records, job, pods, o); err != nil {
			return false, err
		}
		return r.planned(ctx, p, job, o)
	}
	start := startProgress(pods)
	if start.Started {
		r.followRunner(ctx, p, job, pods)
		return false, nil
	}
	events := startEvents(ctx, r.APIReader, pods, r.Options.StartFailAfter, p.now)
	o, again := startVerdict("planning runner", job.CreationTimestamp.Time, pods, events, start, p.now, r.Options)
	if o != nil {
		if err := stopJob(ctx, r.Client, job); err != nil {
			return false, err
		}
		return false, r.planFailed(ctx, p, job, *o)
	}
	p.requeueAfter(again)
	return false, nil
}

// planned turns a finished planning Job into the plan awaiting approval,
// from its ReplayRecord (what the apply Job will be given), or fails the
// request with the planning run's reason.
func (r *ReplayRequestReconciler) planned(ctx context.Context, p *pass, job *batchv1.Job, o record.Outcome) (next bool, err error) {
	rr := p.rr
	if !o.Succeeded || o.Result == nil || !o.Result.DryRun || o.Reason != string(report.ReasonDryRun) {
		if o.Succeeded {
			o.Succeeded = false
			o.Message = fmt.Sprintf("the planning Job %s did not end as a dry run (%s): nothing was applied", job.Name, o.Reason)
			o.Reason = state.ReasonPlanNotRecorded
		}
		return false, r.planFailed(ctx, p, job, o)
	}
	rec, plan, err := r.readPlan(ctx, job)
	if err != nil {
		if apiServerTrouble(err) {
			return false, err // the API server's trouble: retried
		}
		// No record, or one that cannot stand for the plan: nothing that
		// could be approved.
		return false, r.planFailed(ctx, p, job, record.Outcome{
			Reason:     state.ReasonPlanNotRecorded,
			Message:    fmt.Sprintf("the plan of Job %s cannot be kept whole for approval, so nothing will be applied: %v", job.Name, err),
			FinishedAt: o.FinishedAt,
		})
	}
	plannedAt := o.FinishedAt
	if plannedAt.IsZero() {
		plannedAt = p.now
	}
	if err := annotatePlanJob(ctx, r.Client, job, plan.Plan); err != nil {
		return false, err
	}
	s := planSummaryOf(rr, rec, plan, plannedAt)
	rr.Status.Plan = s
	rr.Status.Result = record.APIResult(o.Result)
	if o.LogTail != "" {
		rr.Status.LogTail = state.Tail(o.LogTail, 4096)
	}
	state.SetCondition(rr, v1alpha1.ConditionRunning, metav1.ConditionFalse, state.ReasonFinished, "the planning Job "+job.Name+" has finished")
	msg := planReadyMessage(rr, s)
	state.SetCondition(rr, v1alpha1.ConditionAwaitingApproval, metav1.ConditionTrue, state.ReasonPlanReady, msg)
	rr.Status.Message = msg
	rr.Status.Phase = state.PhaseFor(rr.Status.Conditions)
	p.event(job, corev1.EventTypeNormal, state.ReasonPlanReady, "Plan", msg)
	return true, nil // AwaitingApproval looks at the annotations at once
}

// annotatePlanJob writes the plan's digest on its planning Job
// (kafkareplay.dev/plan-digest), so the Job alone says which plan it made.
func annotatePlanJob(ctx context.Context, c client.Client, job *batchv1.Job, digest string) error {
	if job.Annotations[v1alpha1.AnnotationPlanDigest] == digest {
		return nil
	}
	patched := job.DeepCopy()
	if patched.Annotations == nil {
		patched.Annotations = map[string]string{}
	}
	patched.Annotations[v1alpha1.AnnotationPlanDigest] = digest
	if err := c.Patch(ctx, patched, client.MergeFrom(job)); err != nil {
		return client.IgnoreNotFound(err)
	}
	*job = *patched
	return nil
}

// readPlan reads a planning Job's record past the cache and rebuilds the
// plan from it. The record must be the Job's own (its owner reference): one
// someone else made under the Job's name (the collector then leaves it,
// ErrRecordNotOwned) is not a plan this launcher made.
func (r *ReplayRequestReconciler) readPlan(ctx context.Context, job *batchv1.Job) (*v1alpha1.ReplayRecord, *report.Result, error) {
	if r.Records == nil {
		return nil, nil, fmt.Errorf("the launcher keeps no ReplayRecords")
	}
	jobName := job.Name
	var rec v1alpha1.ReplayRecord
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: jobName}, &rec); err != nil {
		return nil, nil, err
	}
	if !record.OwnedBy(&rec, job) {
		return nil, nil, fmt.Errorf("ReplayRecord %s: %w", jobName, record.ErrRecordNotOwned)
	}
	plan, err := RecordResult(&rec)
	if err != nil {
		return nil, nil, err
	}
	if !plan.DryRun {
		return nil, nil, fmt.Errorf("ReplayRecord %s is not a dry run's", jobName)
	}
	return &rec, plan, nil
}

// apiServerTrouble says whether err is the API server's answer other than
// NotFound: a read to retry, not a verdict on what was read.
func apiServerTrouble(err error) bool {
	var st apierrors.APIStatus
	return errors.As(err, &st) && !apierrors.IsNotFound(err)
}

// planFailed fails a request whose planning run failed, with that run's
// reason; the planning Job gets the outcome like any finished Job.
func (r *ReplayRequestReconciler) planFailed(ctx context.Context, p *pass, job *batchv1.Job, o record.Outcome) error {
	state.SetCondition(p.rr, v1alpha1.ConditionRunning, metav1.ConditionFalse, state.ReasonFinished, "the planning Job "+job.Name+" has finished")
	o.Message = "planning: " + o.Message
	return r.finish(ctx, p, job, o)
}
