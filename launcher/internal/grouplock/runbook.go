package grouplock

import (
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

// The labels the chart puts on its runbook CronJobs (templates/runbooks.yaml,
// through kafka-replay.runner.labels), besides LabelRunbook. A runbook Job is
// trusted only when its controller is a CronJob carrying them.
const (
	labelPartOf       = "app.kubernetes.io/part-of"
	labelPartOfValue  = "kafka-replay"
	labelComponent    = "app.kubernetes.io/component"
	labelComponentRun = "runner"
)

// isRunbookJob reports whether a runner Job was made without a request: a
// candidate runbook Job, trusted only if TrustedRunbookJob says so.
func IsRunbookJob(job *batchv1.Job) bool {
	if job.Labels[v1alpha1.LabelRunner] != v1alpha1.LabelRunnerValue || job.Labels[v1alpha1.LabelRunbook] == "" {
		return false
	}
	_, fromRequest := job.Labels[v1alpha1.LabelRequest]
	return !fromRequest
}

// TrustedRunbookJob reports whether job was made from one of the chart's
// runbook CronJobs: its controller is cronJob (same UID), which carries the
// chart's labels and the same runbook name. Carrying the runner label is not
// enough: anyone who may create a Job could put it on one. It is pure.
func TrustedRunbookJob(job *batchv1.Job, cronJob *batchv1.CronJob) bool {
	ref := metav1.GetControllerOf(job)
	if !IsRunbookJob(job) || ref == nil || cronJob == nil || ref.Kind != "CronJob" || ref.APIVersion != batchv1.SchemeGroupVersion.String() || ref.UID != cronJob.UID {
		return false
	}
	l := cronJob.Labels
	return l[labelPartOf] == labelPartOfValue && l[labelComponent] == labelComponentRun && l[v1alpha1.LabelRunbook] == job.Labels[v1alpha1.LabelRunbook]
}

// runbookWaits reports whether a runbook Job waits in its group's queue:
// created suspended, not yet started by the launcher, not recorded, not being
// deleted.
func RunbookWaits(job *batchv1.Job) bool {
	if !IsRunbookJob(job) || job.DeletionTimestamp != nil || state.IsRecorded(job) {
		return false
	}
	if _, started := job.Annotations[v1alpha1.AnnotationStartedAt]; started {
		return false
	}
	return job.Spec.Suspend != nil && *job.Spec.Suspend
}
