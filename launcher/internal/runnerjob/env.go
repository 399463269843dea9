package runnerjob

import (
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kafka-replay/kafka-replay/runner/config"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

// guardEnv is the runner's environment for a request's guards and force:
// spec.limits.maxMessagesToReconsume, spec.limits.allowSkip and spec.force.
// Every Job of a request gets it, the planning Job too: a plan must fail on
// the guards the apply would fail on, before anyone approves it. Unset
// fields set nothing, so the runner's defaults hold: no limit on messages,
// and skipping refused (WouldSkipMessages). It is pure.
func guardEnv(spec *v1alpha1.ReplayRequestSpec) []corev1.EnvVar {
	var env []corev1.EnvVar
	if l := spec.Limits; l != nil {
		if l.MaxMessagesToReconsume != nil {
			env = append(env, corev1.EnvVar{Name: config.EnvMaxMessagesToReconsume, Value: strconv.FormatInt(*l.MaxMessagesToReconsume, 10)})
		}
		if l.AllowSkip {
			env = append(env, corev1.EnvVar{Name: config.EnvAllowSkip, Value: "true"})
		}
	}
	if spec.Force {
		env = append(env, corev1.EnvVar{Name: config.EnvForce, Value: "true"})
	}
	return env
}

// PartitionOffsets are spec.target.offsets in the runner's own type.
func PartitionOffsets(in []v1alpha1.PartitionOffset) []config.PartitionOffset {
	out := make([]config.PartitionOffset, len(in))
	for i, o := range in {
		out[i] = config.PartitionOffset{Topic: o.Topic, Partition: o.Partition, Offset: o.Offset}
	}
	return out
}

// ScopeEntries renders spec.topics in the runner's scope grammar: "orders"
// or "orders:0,1,2".
func ScopeEntries(topics []v1alpha1.TopicSelector) []string {
	out := make([]string, 0, len(topics))
	for _, t := range topics {
		if len(t.Partitions) == 0 {
			out = append(out, t.Name)
			continue
		}
		ps := make([]string, len(t.Partitions))
		for i, p := range t.Partitions {
			ps[i] = strconv.Itoa(int(p))
		}
		out = append(out, t.Name+":"+strings.Join(ps, ","))
	}
	return out
}

// DryRun reports whether a runner Job changes no offsets: a request's
// planning Job (StagePlan), a Job whose runner container runs with
// REPLAY_DRY_RUN=true, or one whose recorded result is a dry run's
// (AnnotationDryRun). Only the runner container counts: another container's
// environment says nothing about what the runner does. It is the one rule,
// for the launcher's retention and for undo. It is pure.
func DryRun(j *batchv1.Job) bool {
	if j.Labels[v1alpha1.LabelStage] == string(StagePlan) || j.Annotations[v1alpha1.AnnotationDryRun] == "true" {
		return true
	}
	for _, c := range j.Spec.Template.Spec.Containers {
		if c.Name != state.ContainerName {
			continue
		}
		for _, e := range c.Env {
			if e.Name == config.EnvDryRun && e.Value == "true" {
				return true
			}
		}
	}
	return false
}

// UndoAnnotations are the annotations of an undo's Job (UndoFromJob reads
// them back).
func UndoAnnotations(u *v1alpha1.UndoStatus) map[string]string {
	if u == nil {
		return nil
	}
	return map[string]string{v1alpha1.AnnotationUndoOf: u.Request, v1alpha1.AnnotationUndoJob: u.JobName, v1alpha1.AnnotationUndoRunID: u.RunID}
}

// UndoFromJob is status.undo as an undo's Job carries it (its annotations,
// written so that a launcher that created the Job and stopped before writing
// status fills it in again on adoption), or nil for a Job that is not an
// undo's.
func UndoFromJob(annotations map[string]string) *v1alpha1.UndoStatus {
	name := annotations[v1alpha1.AnnotationUndoOf]
	if name == "" {
		return nil
	}
	return &v1alpha1.UndoStatus{Request: name, JobName: annotations[v1alpha1.AnnotationUndoJob], RunID: annotations[v1alpha1.AnnotationUndoRunID]}
}
