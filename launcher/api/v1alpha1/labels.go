package v1alpha1

import (
	"crypto/sha256"
	"encoding/hex"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Labels and annotations on runner Jobs and their pods. They are the same
// whichever way a replay was started (a ReplayRequest, or a Job created from
// one of the chart's runbook CronJobs), so that
// `kubectl get jobs -l kafkareplay.dev/group=<group>` lists a group's history
// and the launcher records results on every runner Job.
const (
	// LabelRunner marks every runner Job and pod with the value "true". The
	// launcher's cache only holds Jobs and pods that carry it.
	LabelRunner = "kafkareplay.dev/runner"
	// LabelRunnerValue is the value of LabelRunner.
	LabelRunnerValue = "true"
	// LabelRequest names the ReplayRequest a launcher-made Job runs, through
	// LabelValue (so long names are hashed). Runbook Jobs do not have it.
	LabelRequest = "kafkareplay.dev/request"
	// LabelGroup is the consumer group, through LabelValue: the group itself
	// when it is a valid label value, otherwise a hash of it. The full name is
	// in AnnotationGroup.
	LabelGroup = "kafkareplay.dev/group"
	// LabelRunbook names the chart runbook (a suspended CronJob) that a Job
	// was made from with `kubectl create job --from=cronjob/...`. Such Jobs
	// carry it instead of LabelRequest; everything else is the same.
	LabelRunbook = "kafkareplay.dev/runbook"
	// LabelParent is on a child request (docs/groups.md): its parent's
	// name, through LabelValue. The chart's admission policy lets only the
	// launcher create a request that carries it.
	LabelParent = "kafkareplay.dev/parent"
	// LabelStage says which step of a request a Job performs. Today every Job
	// is StageApply; review before apply will add a planning stage.
	LabelStage = "kafkareplay.dev/stage"

	// AnnotationGroup holds the consumer group's full name.
	AnnotationGroup = "kafkareplay.dev/group"
	// AnnotationParent holds, on a child request's Jobs and ReplayRecords,
	// its parent's full name (LabelParent's value is hashed when long).
	AnnotationParent = "kafkareplay.dev/parent"
	// AnnotationRequest holds the ReplayRequest's full name.
	AnnotationRequest = "kafkareplay.dev/request"
	// AnnotationSpecDigest holds, on a launcher-made Job, the digest of the
	// request's spec (the last part of its run ID). With AnnotationRequest it
	// recognises a request re-created with the same name and spec.
	AnnotationSpecDigest = "kafkareplay.dev/spec-digest"
	// AnnotationResolvedTarget holds, on a launcher-made Job, the target as
	// resolved on acceptance (status.resolvedTarget).
	AnnotationResolvedTarget = "kafkareplay.dev/resolved-target"
	// AnnotationStartedAt, on a runbook Job, is when the launcher started it
	// (set suspend to false) at the head of its group's queue, RFC3339.
	AnnotationStartedAt = "kafkareplay.dev/started-at"
	// AnnotationApprove, on a request, approves its plan: its value must
	// be the plan's digest (status.plan.digest). Setting or changing it
	// needs the verb approve on replayrequests (the chart's admission
	// policy).
	AnnotationApprove = "kafkareplay.dev/approve"
	// AnnotationReject, on a request, rejects its plan; its value is the
	// reason. The same right as AnnotationApprove.
	AnnotationReject = "kafkareplay.dev/reject"
	// AnnotationApprovedBy is who set AnnotationApprove or
	// AnnotationReject, stamped by the chart's admission policy from the
	// API server's record of the user (never from the user's own words).
	// On the apply Job, it is who approved the plan.
	AnnotationApprovedBy = "kafkareplay.dev/approved-by"
	// AnnotationApprovedAt, on the apply Job, is when the launcher saw the
	// approval, RFC3339.
	AnnotationApprovedAt = "kafkareplay.dev/approved-at"
	// AnnotationPlanDigest, on the apply Job of an approved plan, is the
	// digest approved; on a planning Job, the digest of its plan once known.
	AnnotationPlanDigest = "kafkareplay.dev/plan-digest"
	// AnnotationUndoOf, on the Job of an undo, names the undone request.
	AnnotationUndoOf = "kafkareplay.dev/undo-of"
	// AnnotationUndoJob, on the Job of an undo, is the undone request's Job,
	// whose ReplayRecord it restores from (status.undo.jobName).
	AnnotationUndoJob = "kafkareplay.dev/undo-job"
	// AnnotationUndoRunID, on the Job of an undo, is the undone run's ID
	// (status.undo.runId).
	AnnotationUndoRunID = "kafkareplay.dev/undo-run-id"

	// AnnotationOffsets, on the pod template, holds the JSON list of explicit
	// offsets of an `offsets` target. A downward API volume turns it into the
	// file that the runner's file: target reads.
	AnnotationOffsets = "kafkareplay.dev/offsets"

	// AnnotationClusterID, on the pod template of a spec.kafka.clusterRef
	// request's Job, is the Kafka cluster's ID (status.resolvedKafka): the
	// group lock's key for the Job, as for its request.
	AnnotationClusterID = "kafkareplay.dev/cluster-id"
	// AnnotationPropertyPrefix starts the pod template annotations that
	// hold a clusterRef request's resolved properties
	// (status.resolvedKafka.properties): a downward API source of the
	// secret directory turns each into the property file the runner reads,
	// beside the Secrets' keys.
	AnnotationPropertyPrefix = "kafkareplay.dev/property."

	// Result annotations, written on the Job when it has finished, so that
	// the Job alone tells what happened after the request is gone.

	// AnnotationOutcome is Succeeded or Failed.
	AnnotationOutcome = "kafkareplay.dev/outcome"
	// AnnotationReason is the one-word reason, as in the Succeeded condition.
	AnnotationReason = "kafkareplay.dev/reason"
	// AnnotationResult is the runner's compact JSON result (at most 4096
	// bytes), when the runner wrote one.
	AnnotationResult = "kafkareplay.dev/result"
	// AnnotationMessagesReconsumed is the number of messages the group will
	// consume again (for a dry run, would: see AnnotationDryRun).
	AnnotationMessagesReconsumed = "kafkareplay.dev/messages-reconsumed"
	// AnnotationMessagesSkipped is the number of messages the group was
	// moved past without consuming them (for a dry run, would be).
	AnnotationMessagesSkipped = "kafkareplay.dev/messages-skipped"
	// AnnotationDryRun is "true" on the Job of a dry run, whose message
	// counts are the plan's: nothing moved. It is absent otherwise, so a
	// history column of it reads <none> for real runs.
	AnnotationDryRun = "kafkareplay.dev/dry-run"
	// AnnotationFinishedAt is when the Job finished, RFC3339.
	AnnotationFinishedAt = "kafkareplay.dev/finished-at"
)

// HashedLabelPrefix starts a label value that stands for a longer or
// otherwise invalid name. The chart computes the same value with
// `printf "sha256-%s" (sha256sum $name | trunc 48)`.
const HashedLabelPrefix = "sha256-"

// LabelValue returns name itself when it is a valid label value, otherwise
// "sha256-" and the first 48 hex digits of its SHA-256. Consumer group names
// may be up to 255 bytes of nearly anything, and request names up to 253
// characters; label values are at most 63 characters of [A-Za-z0-9._-].
func LabelValue(name string) string {
	if len(validation.IsValidLabelValue(name)) == 0 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return HashedLabelPrefix + hex.EncodeToString(sum[:])[:48]
}

// Values of AnnotationOutcome.
const (
	OutcomeSucceeded = "Succeeded"
	OutcomeFailed    = "Failed"
)
