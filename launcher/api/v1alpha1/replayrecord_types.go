package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReplayRecord is the complete record of one finished runner Job: every
// attempt (pod) it made, and for every partition the committed offset before
// the run and the offset after it (for a dry run, the plan). The launcher
// writes it once the Job has finished, for every runner Job (a request's, a
// dry run's or a runbook's), with the Job's name, namespace and labels, and an
// owner reference to the Job: it lives exactly as long as the Job, which is
// the group's history, and outlives the pods and the request. A request's
// status keeps a summary and the first partitions; this is the whole of it:
//
//	kubectl get replayrecord <status.jobName> -o json
//
// The runner hands the launcher its full result as a framed block in its log
// (see runner/report.WriteFrame); the termination message holds only 4 KiB.
// Records are written by the launcher alone; nothing in them comes from the
// Kafka configuration, so they never hold credentials.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=rrec,categories=kafka
// +kubebuilder:printcolumn:name="Group",type=string,JSONPath=`.group`,description="Consumer group the Job repositioned"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.outcome.reason`,description="The Job's outcome, over all its attempts"
// +kubebuilder:printcolumn:name="Changed",type=string,JSONPath=`.outcome.offsetsChanged`,description="Whether any attempt changed committed offsets"
// +kubebuilder:printcolumn:name="DryRun",type=boolean,JSONPath=`.dryRun`,description="The Job only planned: its counts are the plan's, nothing moved"
// +kubebuilder:printcolumn:name="Partitions",type=integer,JSONPath=`.totals.partitions`
// +kubebuilder:printcolumn:name="Reconsumed",type=integer,JSONPath=`.totals.messagesToReconsume`,description="Messages the group will consume again"
// +kubebuilder:printcolumn:name="Skipped",type=integer,JSONPath=`.totals.messagesSkipped`,description="Messages the group was moved past without consuming them"
// +kubebuilder:printcolumn:name="Attempts",type=integer,JSONPath=`.outcome.attempts`
// +kubebuilder:printcolumn:name="Complete",type=boolean,JSONPath=`.complete`,description="Every partition of every attempt is in the record"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ReplayRecord struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata: the runner Job's name, namespace and
	// labels, and an owner reference to the Job.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// job is the name of the runner Job this record is of.
	// +required
	Job string `json:"job"`

	// request is the name of the ReplayRequest that made the Job; empty for
	// a runbook Job.
	// +optional
	Request string `json:"request,omitempty"`

	// runbook is the chart runbook a runbook Job was made from; empty for a
	// request's Job.
	// +optional
	Runbook string `json:"runbook,omitempty"`

	// group is the consumer group, in full.
	// +optional
	Group string `json:"group,omitempty"`

	// runId is the idempotency key the runner recorded in the commit
	// metadata.
	// +optional
	RunID string `json:"runId,omitempty"`

	// clusterId is the ID of the Kafka cluster the run read (from
	// Metadata), as its result gave it: an undo or an approved plan built
	// from this record is refused on another cluster.
	// +optional
	ClusterID string `json:"clusterId,omitempty"`

	// groupType is the kind of group the run found: Classic, Consumer,
	// Share or Streams; empty when the group did not exist. An undo or an
	// approved plan built from this record is refused on a group of the
	// other family (a share group against a consumer group).
	// +optional
	GroupType string `json:"groupType,omitempty"`

	// internalTopics are, for a run with deleteAllInternalTopics, the
	// streams group's internal topics it planned to delete and those it
	// deleted (every attempt's together). A dry run's list is part of its
	// plan: an approved plan built from this record deletes exactly these.
	// +optional
	InternalTopics *InternalTopics `json:"internalTopics,omitempty"`

	// target is the target as the runner resolved it (time:<RFC3339>,
	// offset:<N>, ...).
	// +optional
	Target string `json:"target,omitempty"`

	// dryRun is true when the Job only planned: the partitions are the plan,
	// and nothing was committed.
	// +optional
	DryRun bool `json:"dryRun,omitempty"`

	// outcome is the Job's outcome over all its attempts.
	// +required
	Outcome RecordOutcome `json:"outcome"`

	// attempts are the Job's pods that ran the runner, oldest first.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Attempts []RecordAttempt `json:"attempts,omitempty"`

	// complete is true when every attempt's full result was read, so topics
	// holds every partition any attempt planned or committed. When false,
	// an attempt's result was lost (the pod or its log was gone, or the
	// runner was killed before writing it) and topics may lack partitions.
	// +optional
	Complete bool `json:"complete"`

	// totals summarise the partitions below.
	// +optional
	Totals ResultTotals `json:"totals,omitzero"`

	// warnings are the runner's warnings, such as clamped targets.
	// +optional
	// +listType=atomic
	Warnings []string `json:"warnings,omitempty"`

	// topics are the partitions, one entry per topic sorted by name, in
	// columns: entry i of partitions, previousOffsets and newOffsets
	// belongs together. For very large records (many long topic names)
	// they are in topicsGzip instead.
	// +optional
	// +listType=atomic
	Topics []RecordTopic `json:"topics,omitempty"`

	// topicsGzip holds topics as gzip-compressed JSON, base64 in the
	// object, when they would make the record too large for the API server
	// uncompressed. Then topics is empty. Read it with
	// `kubectl get replayrecord NAME -o jsonpath='{.topicsGzip}' | base64 -d | gunzip`.
	// +optional
	TopicsGzip []byte `json:"topicsGzip,omitempty"`
}

// OffsetsChanged says whether a Job, or one attempt, changed committed
// offsets.
// +kubebuilder:validation:Enum=Yes;No;Unknown
type OffsetsChanged string

const (
	// OffsetsChangedYes: offsets were committed (some or all partitions).
	OffsetsChangedYes OffsetsChanged = "Yes"
	// OffsetsChangedNo: nothing was committed (failed before the commit,
	// refused, a dry run, or already applied earlier).
	OffsetsChangedNo OffsetsChanged = "No"
	// OffsetsChangedUnknown: an attempt ended without saying what it did
	// (killed for memory, say); offsets may have changed. Read the group's
	// offsets before doing anything else.
	OffsetsChangedUnknown OffsetsChanged = "Unknown"
)

// RecordOutcome is a Job's outcome over all its attempts.
type RecordOutcome struct {
	// succeeded is true when the Job's replay succeeded (applied, already
	// applied, or a dry run).
	// +optional
	Succeeded bool `json:"succeeded"`
	// reason is the one-word reason, as in the request's Succeeded
	// condition: the runner's (Applied, PartiallyApplied, OutcomeUnknown,
	// KafkaError, ...) or the launcher's (OOMKilled, DeadlineExceeded,
	// JobFailed, ...).
	// +optional
	Reason string `json:"reason,omitempty"`
	// message explains the outcome, attempt by attempt when there were
	// several.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message,omitempty"`
	// exitCode is the last attempt's runner exit code.
	// +optional
	ExitCode *int32 `json:"exitCode,omitempty"`
	// offsetsChanged is Yes when any attempt committed offsets, Unknown when
	// an attempt may have without saying so, No otherwise.
	// +optional
	OffsetsChanged OffsetsChanged `json:"offsetsChanged,omitempty"`
	// attempts is how many runner pods ran.
	// +optional
	Attempts int32 `json:"attempts"`
	// finishedAt is when the Job finished.
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
}

// ResultSource is where the launcher read an attempt's result from.
// +kubebuilder:validation:Enum=Log;TerminationMessage;None
type ResultSource string

const (
	// ResultSourceLog: the full, checksummed result frame in the pod's log.
	ResultSourceLog ResultSource = "Log"
	// ResultSourceTerminationMessage: the 4 KiB termination message, which
	// may be truncated.
	ResultSourceTerminationMessage ResultSource = "TerminationMessage"
	// ResultSourceNone: the attempt left no result.
	ResultSourceNone ResultSource = "None"
)

// RecordAttempt is one runner pod's run.
type RecordAttempt struct {
	// pod is the pod's name.
	// +required
	Pod string `json:"pod"`
	// exitCode is the runner container's exit code.
	// +optional
	ExitCode *int32 `json:"exitCode,omitempty"`
	// reason is the attempt's one-word outcome: the runner's reason, or
	// OOMKilled, or the kubelet's termination reason when the runner left
	// no result.
	// +optional
	Reason string `json:"reason,omitempty"`
	// error explains a failed attempt.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Error string `json:"error,omitempty"`
	// offsetsChanged says whether this attempt committed offsets.
	// +optional
	OffsetsChanged OffsetsChanged `json:"offsetsChanged,omitempty"`
	// resultSource is where its result was read from.
	// +optional
	ResultSource ResultSource `json:"resultSource,omitempty"`
	// damagedFrames counts result frames in the pod's log that were cut or
	// altered and so were not used.
	// +optional
	DamagedFrames int32 `json:"damagedFrames,omitempty"`
	// startedAt is when the runner container started.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// finishedAt is when it terminated.
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// totals summarise the attempt's own result.
	// +optional
	Totals *ResultTotals `json:"totals,omitempty"`
}

// RecordTopic is one topic's partitions in columns.
type RecordTopic struct {
	// name is the topic.
	// +required
	Name string `json:"name"`
	// partitions are the partition numbers, ascending.
	// +required
	// +listType=atomic
	Partitions []int32 `json:"partitions"`
	// previousOffsets[i] is the committed offset of partitions[i] before
	// the Job's first attempt; -1 when the group had never committed it.
	// Undo restores these.
	// +required
	// +listType=atomic
	PreviousOffsets []int64 `json:"previousOffsets"`
	// newOffsets[i] is the offset partitions[i] was moved to (for a dry
	// run, would be moved to). A partition listed in failed is not there.
	// +required
	// +listType=atomic
	NewOffsets []int64 `json:"newOffsets"`
	// logStartOffsets[i] and logEndOffsets[i] bound partitions[i]'s log
	// when the run planned, so that a reader sees where the group was and
	// went relative to the log (kubectl replay describe draws it). Absent
	// in records written before they were kept.
	// +optional
	// +listType=atomic
	LogStartOffsets []int64 `json:"logStartOffsets,omitempty"`
	// logEndOffsets: see logStartOffsets.
	// +optional
	// +listType=atomic
	LogEndOffsets []int64 `json:"logEndOffsets,omitempty"`
	// clamped lists the partitions whose target fell outside the log and
	// was moved to its start or end.
	// +optional
	// +listType=atomic
	Clamped []int32 `json:"clamped,omitempty"`
	// failed lists the partitions that were not moved (or whose move could
	// not be verified), grouped by error.
	// +optional
	// +listType=atomic
	Failed []RecordPartitionNote `json:"failed,omitempty"`
	// notes are the runner's notes on unusual partitions, grouped by note.
	// +optional
	// +listType=atomic
	Notes []RecordPartitionNote `json:"notes,omitempty"`
	// leftAlone lists, for an undo, the partitions its rules left where
	// they were, grouped by the reason: not committed, newOffsets[i] is
	// the committed offset they were found at, and they are not in failed.
	// +optional
	// +listType=atomic
	LeftAlone []RecordPartitionNote `json:"leftAlone,omitempty"`
}

// RecordPartitionNote is a text shared by some partitions of a topic.
type RecordPartitionNote struct {
	// text is the error or note.
	// +required
	Text string `json:"text"`
	// partitions it applies to, ascending.
	// +required
	// +listType=atomic
	Partitions []int32 `json:"partitions"`
}

// ReplayRecordList is a list of ReplayRecords.
//
// +kubebuilder:object:root=true
type ReplayRecordList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the records.
	Items []ReplayRecord `json:"items"`
}
