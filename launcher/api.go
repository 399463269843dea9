package launcher

import (
	batchv1 "k8s.io/api/batch/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/grouplock"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
)

// What code outside launcher/ (cmd/launcher's flag checks, the chart's and
// the plugin's tests) may use of the launcher's internal packages, which it
// cannot import. Each name is the internal one; the launcher itself uses
// those.

// TrustedRunbookJob reports whether the launcher trusts job as a runbook Job
// made by cronJob (grouplock.TrustedRunbookJob): the chart's tests check its
// CronJobs against this rule.
func TrustedRunbookJob(job *batchv1.Job, cronJob *batchv1.CronJob) bool {
	return grouplock.TrustedRunbookJob(job, cronJob)
}

// Stage is runnerjob.Stage: which Job of a request.
type Stage = runnerjob.Stage

// The stages (runnerjob.StageApply, runnerjob.StagePlan).
const (
	StageApply = runnerjob.StageApply
	StagePlan  = runnerjob.StagePlan
)

// BuildListJob is the list Job of a request with spec.groupSelector
// (runnerjob.BuildList), for the chart's tests of what the launcher may
// create.
func BuildListJob(rr *v1alpha1.ReplayRequest, opts Options) (*batchv1.Job, error) {
	return runnerjob.BuildList(rr, opts.Defaults)
}

// Input is runnerjob.Input, a file a Job's runner reads its target from.
type Input = runnerjob.Input

// InputPlan is runnerjob.InputPlan: an approved plan as a Job's input.
const InputPlan = runnerjob.InputPlan

// JobName is a request's Job name for a stage (runnerjob.Name).
func JobName(rr *v1alpha1.ReplayRequest, stage Stage) string { return runnerjob.Name(rr, stage) }

// RequestRunID is a request's run ID (runnerjob.RunID).
func RequestRunID(rr *v1alpha1.ReplayRequest) string { return runnerjob.RunID(rr) }

// InputConfigMapName is the name of a Job's input ConfigMap
// (runnerjob.InputConfigMapName).
func InputConfigMapName(jobName string) string { return runnerjob.InputConfigMapName(jobName) }

// CheckRunnerImage is runnerjob.CheckImage: whether a request may run
// image, and its normalised form.
func CheckRunnerImage(image string, allowed []string, defaultImage string, requireDigest bool) (string, error) {
	return runnerjob.CheckImage(image, allowed, defaultImage, requireDigest)
}

// ParseImageRules is runnerjob.ParseImageRules: every allowed-images entry
// parsed, so that a bad one is an error at startup.
func ParseImageRules(entries []string) error { return runnerjob.ParseImageRules(entries) }
