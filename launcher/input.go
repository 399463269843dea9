package launcher

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// RecordResult rebuilds the full runner result of a run from its
// ReplayRecord: group, run ID, the kind of group, target, dry run, exit code and reason, every
// partition (RecordPartitions), the internal topics it deletes, the totals and, for a dry run, its plan
// digest (report.Result.Digest over its target, those partitions and topics, as the
// runner's dry run wrote it and its plan: target recomputes). It is pure. A record that does not hold every
// partition (Complete false) cannot stand for the run, and is an error.
func RecordResult(rec *v1alpha1.ReplayRecord) (*report.Result, error) {
	if !rec.Complete {
		return nil, fmt.Errorf("ReplayRecord %s/%s is incomplete (not every attempt's full result was read), so it cannot stand for the run", rec.Namespace, rec.Name)
	}
	parts, err := replay.RecordPartitions(rec)
	if err != nil {
		return nil, fmt.Errorf("ReplayRecord %s/%s: %w", rec.Namespace, rec.Name, err)
	}
	if parts == nil {
		parts = []report.Partition{}
	}
	r := &report.Result{
		Schema:     report.Schema,
		Group:      rec.Group,
		RunID:      rec.RunID,
		ClusterID:  rec.ClusterID,
		GroupType:  rec.GroupType,
		Target:     report.Target{Given: rec.Target, Resolved: rec.Target},
		DryRun:     rec.DryRun,
		Reason:     report.Reason(rec.Outcome.Reason),
		Partitions: parts,
		Warnings:   slices.Clone(rec.Warnings),
	}
	if rec.Outcome.ExitCode != nil {
		r.ExitCode = report.ExitCode(*rec.Outcome.ExitCode)
	}
	r.AlreadyApplied = r.Reason == report.ReasonAlreadyApplied
	if t := rec.Outcome.FinishedAt; t != nil {
		r.FinishedAt = t.UTC()
	}
	if it := rec.InternalTopics; it != nil {
		r.InternalTopics = &report.InternalTopics{Planned: slices.Clone(it.Planned), Deleted: slices.Clone(it.Deleted)}
	}
	r.Summarize()
	if r.DryRun {
		r.Plan = r.Digest()
	}
	return r, nil
}

// ensureInput creates an input ConfigMap. One already there is fine, and
// never read: either an earlier pass wrote these very bytes, or it is not
// what the Job's digest names and the runner refuses it.
func (r *ReplayRequestReconciler) ensureInput(ctx context.Context, cm *corev1.ConfigMap) error {
	if err := r.Client.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create input ConfigMap %s: %w", cm.Name, err)
	}
	return nil
}
