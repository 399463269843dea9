package launcher

import (
	batchv1 "k8s.io/api/batch/v1"

	"github.com/kafka-replay/kafka-replay/launcher/internal/grouplock"
)

// TrustedRunbookJob reports whether the launcher trusts job as a runbook Job
// made by cronJob (grouplock.TrustedRunbookJob): the chart's tests check its
// CronJobs against this rule, and cannot import the launcher's internal
// packages.
func TrustedRunbookJob(job *batchv1.Job, cronJob *batchv1.CronJob) bool {
	return grouplock.TrustedRunbookJob(job, cronJob)
}
