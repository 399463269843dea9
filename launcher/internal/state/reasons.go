package state

// Reasons of the consumers' conditions.
const (
	// ReasonPausing: the consumers are recorded; the pause is under way.
	ReasonPausing = "Pausing"
	// ReasonPaused: every consumer is paused.
	ReasonPaused = "Paused"
	// ReasonPauseFailed: a consumer could not be recorded or paused; the
	// request fails and whatever was paused is restored.
	ReasonPauseFailed = "PauseFailed"
	// ReasonRestored: every paused consumer is as recorded again.
	ReasonRestored = "Restored"
	// ReasonNotRestored: someone else changed a consumer while it was
	// paused, and the launcher left it as found.
	ReasonNotRestored = "NotRestored"
	// ReasonRestoreFailed: a restore call failed; the launcher retries.
	ReasonRestoreFailed = "RestoreFailed"
	// ReasonWaitingForRunner: a runner pod of the request is still alive
	// (stopping, say) after its Job finished or the request ended: the
	// outcome is written (Running) and the consumers are restored
	// (ConsumersRestored) once it has ended, as it may still commit.
	ReasonWaitingForRunner = "WaitingForRunner"
)

// ReasonConsumerRefNotResolved is the Succeeded condition's reason of a
// request whose consumerRef cannot be resolved.
const ReasonConsumerRefNotResolved = "ConsumerRefNotResolved"

// ReasonClusterRefNotResolved is the Succeeded condition's reason of a
// request whose kafka.clusterRef cannot be resolved.
const ReasonClusterRefNotResolved = "ClusterRefNotResolved"

// ReasonWaitingForCluster is the Accepted condition's reason (Unknown) of a
// clusterRef request whose Kafka or KafkaUser Strimzi's operator has not
// reconciled yet: it waits for them, up to the launcher's start timeout.
const ReasonWaitingForCluster = "WaitingForCluster"

// ReasonWaitingForConnector is the Accepted condition's reason (Unknown) of
// a request whose consumerRef is a KafkaConnector whose status Strimzi's
// operator has not written for its current generation yet: it waits for
// it, up to the launcher's start timeout.
const ReasonWaitingForConnector = "WaitingForConnector"

// Reasons of the Applying phase.
const (
	// ReasonPodWaiting: the runner pod has not started yet; the message
	// says why (ImagePullBackOff, CreateContainerConfigError,
	// Unschedulable, ...).
	ReasonPodWaiting = "PodWaiting"
	// ReasonPodRunning: the runner runs.
	ReasonPodRunning = "PodRunning"
	// ReasonPodNotStarted: no runner pod started within the start timeout;
	// the message names what it waited for. The Job is suspended, which
	// removes its pod, and the group goes to the next replay once the pod
	// is gone.
	ReasonPodNotStarted = "PodNotStarted"
	// ReasonImagePullFailed: the runner's image could not be pulled
	// (ErrImagePull, ImagePullBackOff, InvalidImageName) for
	// Options.StartFailAfter; nothing was run.
	ReasonImagePullFailed = "ImagePullFailed"
	// ReasonUnschedulable: no node could take the runner pod for
	// Options.StartFailAfter; nothing was run.
	ReasonUnschedulable = "Unschedulable"
	// ReasonConfigMissing: the runner container could not be created from
	// its configuration (CreateContainerConfigError: a missing Secret or
	// ConfigMap, or key) for Options.StartFailAfter; nothing was run.
	ReasonConfigMissing = "ConfigMissing"
)

// Reasons of the Queued phase.
const (
	// ReasonJobNotCreated: the API server kept refusing the Job (a quota, a
	// policy webhook) for longer than the start timeout.
	ReasonJobNotCreated = "JobNotCreated"
)

// Reasons of the Recognising phase.
const (
	// ReasonAlreadyRan: a request with the same namespace, name and spec
	// has run before (its Job is kept as history); this one ends without
	// running. To run the same replay again, create a request with another
	// name (metadata.generateName makes one).
	ReasonAlreadyRan = "AlreadyRan"
	// ReasonJobConflict: a Job with the request's name exists that the
	// launcher did not make for this request. It is never adopted, and its
	// result never counts as the request's.
	ReasonJobConflict = "JobConflict"
	// ReasonEarlierRunInProgress: an earlier request with the same name and
	// spec still has its Job running; this one waits for it to finish (and
	// will then be AlreadyRan).
	ReasonEarlierRunInProgress = "EarlierRunInProgress"
)

// Reasons of the launcher's own, next to the runner's (report.Reason*).
const (
	// ReasonAccepted: the request was validated and its target resolved.
	ReasonAccepted = "Accepted"
	// ReasonWaitingForGroup: another replay of the same group runs first.
	ReasonWaitingForGroup = "WaitingForGroup"
	// ReasonInvalidTarget: the target is one the runner would refuse.
	ReasonInvalidTarget = "InvalidTarget"
	// ReasonJobCreated: the runner Job exists and runs.
	ReasonJobCreated = "JobCreated"
	// ReasonFinished: the Job has finished (see Succeeded).
	ReasonFinished = "Finished"
	// ReasonJobDeleted: the Job was deleted before it finished.
	ReasonJobDeleted = "JobDeleted"
	// ReasonDeadlineExceeded: the Job ran out of activeDeadlineSeconds.
	ReasonDeadlineExceeded = "DeadlineExceeded"
	// ReasonJobFailed: the Job failed and no pod said why.
	ReasonJobFailed = "JobFailed"
	// ReasonCompleted: the Job completed but its pod left no result.
	ReasonCompleted = "Completed"
	// ReasonJobCreateFailed: the API server refused the Job for now (a
	// quota, say); the launcher retries.
	ReasonJobCreateFailed = "JobCreateFailed"
	// ReasonJobInvalid: the API server refused the Job as invalid, which no
	// retry can change.
	ReasonJobInvalid = "JobInvalid"
	// ReasonOOMKilled: the runner was killed for using more memory than its
	// limit. It left no result of its own, so offsets may have changed.
	ReasonOOMKilled = "OOMKilled"
)

// Reasons of review before apply (approval: Manual).
const (
	// ReasonPlanReady: the planning run's plan waits for a decision
	// (AwaitingApproval True); the message has the commands.
	ReasonPlanReady = "PlanReady"
	// ReasonApproved: the plan was approved with its digest.
	ReasonApproved = "Approved"
	// ReasonApprovalRefused (a Warning event): kafkareplay.dev/approve
	// named another digest than the plan's; nothing changed.
	ReasonApprovalRefused = "ApprovalRefused"
	// ReasonRejected: the plan was rejected (kafkareplay.dev/reject);
	// nothing was applied.
	ReasonRejected = "Rejected"
	// ReasonExpired: nobody decided within approvalTimeout; nothing was
	// applied.
	ReasonExpired = "Expired"
	// ReasonPlanNotRecorded: the planning run finished, but its whole plan
	// could not be kept (no complete ReplayRecord), so there is nothing
	// exact to approve; nothing was applied.
	ReasonPlanNotRecorded = "PlanNotRecorded"
)

// ReasonUndoRefused: target.undoOf names a request that cannot be undone;
// the message names the rule (see undo.Decide). Nothing was changed.
const ReasonUndoRefused = "UndoRefused"

// A request over several groups (a parent, docs/groups.md) fails with these
// of its own; otherwise its reason is its children's, by report.Outcome.
const (
	// ReasonChildTampered: a request with a child's name is not what the
	// parent would make (another owner, spec or requester); the parent
	// starts nothing more.
	ReasonChildTampered = "ChildTampered"
	// ReasonChildDeleted: a child was deleted before it finished.
	ReasonChildDeleted = "ChildDeleted"
	// ReasonNotAttempted: a group whose child was never made, because an
	// earlier group failed without continueOnError.
	ReasonNotAttempted = "NotAttempted"
	// ReasonNothingToUndo: a group of an undone parent that did not apply
	// (its child request says why), which its undo leaves alone.
	ReasonNothingToUndo = "NothingToUndo"
	// ReasonGroupsRunning: the parent's children are running.
	ReasonGroupsRunning = "GroupsRunning"
	// ReasonListingGroups: a parent with spec.groupSelector waits for its
	// list Job, whose listing it resolves once (Accepted Unknown).
	ReasonListingGroups = "ListingGroups"
	// ReasonListFailed: the list Job of a groupSelector failed; nothing
	// was changed.
	ReasonListFailed = "ListFailed"
	// ReasonNoGroupsMatched: spec.groupSelector matches no listed group.
	ReasonNoGroupsMatched = "NoGroupsMatched"
	// ReasonTooManyGroups: spec.groupSelector matches more groups than a
	// request takes.
	ReasonTooManyGroups = "TooManyGroups"
	// ReasonListingIncomplete: the listing cannot decide the selector (cut
	// short, unreadable, or a group whose commits could not be read when
	// withOffsetsOn asks about them).
	ReasonListingIncomplete = "ListingIncomplete"
)
