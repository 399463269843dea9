package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReplayRequest asks for one Kafka consumer group's committed offsets to be
// moved to a target, once. The launcher runs it as a Job of the runner, in the
// request's namespace, and writes the outcome back into status. The whole spec
// is immutable: to replay again, create another request.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=rr,categories=kafka
// +kubebuilder:printcolumn:name="Group",type=string,JSONPath=`.status.group`,description="Consumer group being repositioned: spec.group, or the group spec.consumerRef resolved to"
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.status.resolvedTarget`,description="Target as given to the runner; ago is resolved to a time"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Finished")].reason`,description="Why the request finished (Applied, AlreadyRan, GroupActive, PodNotStarted, ...)"
// +kubebuilder:printcolumn:name="Reconsumed",type=integer,JSONPath=`.status.result.totals.messagesToReconsume`,description="Messages the group will consume again (a dry run: the plan's figure, Reason DryRun)"
// +kubebuilder:printcolumn:name="Skipped",type=integer,JSONPath=`.status.result.totals.messagesSkipped`,description="Messages the group was moved past without consuming them (a dry run: the plan's figure)"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Plan",type=string,JSONPath=`.status.plan.digest`,priority=1,description="Digest of the plan awaiting approval (approval: Manual)"
// +kubebuilder:printcolumn:name="ApprovedBy",type=string,JSONPath=`.status.approval.by`,priority=1,description="Who approved or rejected the plan"
// +kubebuilder:printcolumn:name="Moved",type=integer,JSONPath=`.status.result.totals.moved`,priority=1,description="Partitions whose committed offset changed (a dry run: would change); an undo's forward moves re-consume and skip nothing, and show only here"
// +kubebuilder:printcolumn:name="ConsumerRef",type=string,JSONPath=`.spec.consumerRef.name`,priority=1,description="The Knative resource whose group is replayed (spec.consumerRef)"
type ReplayRequest struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says which group to move, where to, and how to reach Kafka.
	// It is immutable after creation.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable after creation; create a new ReplayRequest instead"
	Spec ReplayRequestSpec `json:"spec"`

	// status is written by the launcher.
	// +optional
	Status ReplayRequestStatus `json:"status,omitempty"`
}

// ReplayRequestSpec is the desired replay.
//
// +kubebuilder:validation:XValidation:rule="!has(self.target.fromGroup) || !has(self.group) || self.target.fromGroup != self.group",message="target.fromGroup must name a different group than group",fieldPath=".target.fromGroup"
// +kubebuilder:validation:XValidation:rule="has(self.consumerRef) || (has(self.kafka) && (has(self.group) || has(self.groups) || has(self.groupSelector) || has(self.target.undoOf)))",message="set kafka and group, or consumerRef to take them from a Knative resource or a KafkaConnector"
// +kubebuilder:validation:XValidation:rule="(has(self.group) ? 1 : 0) + (has(self.groups) ? 1 : 0) + (has(self.groupSelector) ? 1 : 0) <= 1",message="set exactly one of group, groups and groupSelector"
// +kubebuilder:validation:XValidation:rule="!has(self.groupSelector) || !has(self.kafka) || !has(self.kafka.clusterRef)",message="groupSelector with kafka.clusterRef is not built: give kafka.bootstrapServers (and secretRef), or list the groups in groups",fieldPath=".groupSelector"
// +kubebuilder:validation:XValidation:rule="!has(self.continueOnError) || !self.continueOnError || has(self.groups) || has(self.groupSelector) || (has(self.target.undoOf) && !has(self.group) && !has(self.consumerRef))",message="continueOnError only applies to a request over several groups (groups, groupSelector, or the undo of such a request)",fieldPath=".continueOnError"
// +kubebuilder:validation:XValidation:rule="!has(self.parallelism) || has(self.groups) || has(self.groupSelector) || (has(self.target.undoOf) && !has(self.group) && !has(self.consumerRef))",message="parallelism only applies to a request over several groups (groups, groupSelector, or the undo of such a request)",fieldPath=".parallelism"
// +kubebuilder:validation:XValidation:rule="!has(self.limits) || !has(self.limits.maxTotalMessagesToReconsume) || has(self.groups) || has(self.groupSelector) || (has(self.target.undoOf) && !has(self.group) && !has(self.consumerRef))",message="limits.maxTotalMessagesToReconsume only applies to a request over several groups (groups, groupSelector, or the undo of such a request); for one group, limits.maxMessagesToReconsume is its total",fieldPath=".limits.maxTotalMessagesToReconsume"
// +kubebuilder:validation:XValidation:rule="!(has(self.groups) || has(self.groupSelector)) || !has(self.consumerRef)",message="consumerRef names one resource's group: not with groups or groupSelector",fieldPath=".consumerRef"
// +kubebuilder:validation:XValidation:rule="!(has(self.groups) || has(self.groupSelector)) || !has(self.target.undoOf)",message="target.undoOf names the request to undo, with its groups: not with groups or groupSelector (the undo of a request over several groups names it alone, without group)",fieldPath=".target.undoOf"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || !has(self.target.fromGroup) || !(self.target.fromGroup in self.groups)",message="target.fromGroup must name a group that groups does not list",fieldPath=".target.fromGroup"
// +kubebuilder:validation:XValidation:rule="!has(self.consumers) || size(self.consumers) == 0 || !has(self.parallelism) || self.parallelism == 1",message="consumers with several groups need parallelism 1: two groups' requests would pause the same workloads at once, and the second would record the first's pause as their replicas",fieldPath=".consumers"
// +kubebuilder:validation:XValidation:rule="!has(self.consumerRef) || (!has(self.group) && (!has(self.topics) || size(self.topics) == 0))",message="consumerRef replaces group and topics: the launcher resolves them from the resource it names, so leave them out",fieldPath=".consumerRef"
// +kubebuilder:validation:XValidation:rule="!has(self.consumerRef) || self.consumerRef.kind == 'KafkaConnector' || !has(self.kafka)",message="a Knative consumerRef replaces kafka: the launcher resolves the servers and the Secret from the Knative resource, so leave kafka out",fieldPath=".consumerRef"
// +kubebuilder:validation:XValidation:rule="!has(self.consumerRef) || self.consumerRef.kind != 'KafkaConnector' || (has(self.kafka) && has(self.kafka.clusterRef))",message="a KafkaConnector consumerRef needs kafka.clusterRef: the Strimzi Kafka its KafkaConnect connects to, and the KafkaUser to replay as",fieldPath=".consumerRef"
// +kubebuilder:validation:XValidation:rule="!has(self.target.offsets) || !has(self.topics) || size(self.topics) == 0",message="topics must be empty when target.offsets is set: the offsets already choose the partitions",fieldPath=".topics"
// +kubebuilder:validation:XValidation:rule="!has(self.waitTimeout) || self.whenGroupActive == 'Wait'",message="waitTimeout is only allowed with whenGroupActive: Wait",fieldPath=".waitTimeout"
// +kubebuilder:validation:XValidation:rule="self.whenGroupActive != 'Wait' || has(self.waitTimeout)",message="whenGroupActive: Wait needs a waitTimeout",fieldPath=".whenGroupActive"
// +kubebuilder:validation:XValidation:rule="!has(self.consumers) || size(self.consumers) == 0 || self.whenGroupActive == 'Wait'",message="consumers need whenGroupActive: Wait and a waitTimeout: the runner waits, bounded by it, for the paused consumers to leave the group",fieldPath=".consumers"
// +kubebuilder:validation:XValidation:rule="!(has(self.approval) && self.approval == 'Manual' && has(self.dryRun) && self.dryRun)",message="approval: Manual already plans before applying; a dryRun has nothing to approve",fieldPath=".approval"
// +kubebuilder:validation:XValidation:rule="!has(self.approvalTimeout) || (has(self.approval) && self.approval == 'Manual')",message="approvalTimeout is only allowed with approval: Manual",fieldPath=".approvalTimeout"
// +kubebuilder:validation:XValidation:rule="!has(self.force) || !self.force || has(self.target.undoOf)",message="force is only allowed with target.undoOf: it restores partitions the undo rules would leave alone",fieldPath=".force"
// +kubebuilder:validation:XValidation:rule="!has(self.target.undoOf) || !has(self.topics) || size(self.topics) == 0",message="topics must be empty when target.undoOf is set: the undone request's record already chooses the partitions",fieldPath=".topics"
// +kubebuilder:validation:XValidation:rule="!has(self.target.position) || self.target.position != 'Latest' || (has(self.limits) && has(self.limits.allowSkip) && self.limits.allowSkip)",message="target.position: Latest moves the group past messages its consumers never handled; set limits.allowSkip: true to allow that",fieldPath=".limits"
// +kubebuilder:validation:XValidation:rule="!has(self.target.shiftBy) || self.target.shiftBy < 0 || (has(self.limits) && has(self.limits.allowSkip) && self.limits.allowSkip)",message="a positive target.shiftBy skips messages the consumers never handled; set limits.allowSkip: true to allow that",fieldPath=".limits"
// +kubebuilder:validation:XValidation:rule="!has(self.deleteAllInternalTopics) || !self.deleteAllInternalTopics || !has(self.groupType) || self.groupType == 'Auto' || self.groupType == 'Streams'",message="deleteAllInternalTopics: only a streams group has internal topics to delete; set groupType Streams or Auto",fieldPath=".deleteAllInternalTopics"
// +kubebuilder:validation:XValidation:rule="!has(self.deleteAllInternalTopics) || !self.deleteAllInternalTopics || !has(self.target.undoOf)",message="deleteAllInternalTopics: an undo puts offsets back and cannot recreate deleted topics; delete them in a request with a target of its own",fieldPath=".deleteAllInternalTopics"
// +kubebuilder:validation:XValidation:rule="!has(self.deleteAllInternalTopics) || !self.deleteAllInternalTopics || !has(self.consumerRef)",message="deleteAllInternalTopics: a consumerRef's group is a consumer group, never a streams group; name the streams group in group",fieldPath=".deleteAllInternalTopics"
// +kubebuilder:validation:XValidation:rule="!has(self.deleteAllInternalTopics) || !self.deleteAllInternalTopics || (!has(self.groups) && !has(self.groupSelector))",message="deleteAllInternalTopics: deletes the internal topics of one streams group; name it in group",fieldPath=".deleteAllInternalTopics"
type ReplayRequestSpec struct {
	// kafka says how to reach the Kafka cluster. Required unless
	// consumerRef is set, which replaces it.
	// +optional
	Kafka KafkaConnection `json:"kafka,omitzero"`

	// group is the consumer group whose committed offsets are moved. The group
	// must be empty (no active members) when the runner starts; see
	// whenGroupActive. Required unless consumerRef is set, which replaces it.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[^\\s\\x00-\\x1f\\x7f]([^\\x00-\\x1f\\x7f]*[^\\s\\x00-\\x1f\\x7f])?$')`,message="group must be non-empty, with no leading or trailing spaces and no control characters"
	Group string `json:"group,omitempty"`

	// topics limits the replay to these topics (and, per topic, partitions).
	// Empty means every topic the group has committed offsets for.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=1000
	Topics []TopicSelector `json:"topics,omitempty"`

	// consumerRef names a resource in the request's namespace whose
	// consumer group is replayed, instead of group and topics: a Knative
	// KafkaSource, a Trigger on a Kafka Broker, or a Subscription to a
	// KafkaChannel, which replace kafka too; or a Strimzi sink
	// KafkaConnector, with kafka.clusterRef naming the Kafka its
	// KafkaConnect connects to. The launcher resolves it once, when it
	// accepts the request, to the group and the topics (and, for Knative,
	// the bootstrap servers and the Secret, as eventing-kafka-broker derives
	// them), and keeps what it found in status.resolved (docs/knative.md,
	// docs/strimzi.md).
	// +optional
	ConsumerRef *KnativeRef `json:"consumerRef,omitempty"`

	// target is where the group's offsets go. Set exactly one field.
	// +required
	Target Target `json:"target"`

	// dryRun plans the replay and records the plan in status.result without
	// committing anything.
	// +optional
	DryRun bool `json:"dryRun,omitempty"`

	// whenGroupActive says what to do when the group has active members:
	// Fail (the default) ends the request Failed with reason GroupActive and
	// changes nothing; Wait waits up to waitTimeout for the group to become
	// empty, then fails the same way.
	// +optional
	// +kubebuilder:default=Fail
	WhenGroupActive GroupActivePolicy `json:"whenGroupActive,omitempty"`

	// waitTimeout bounds the wait of whenGroupActive: Wait, as a Go duration
	// such as 5m. Required with Wait, not allowed with Fail.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule=`self.matches('^([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) > duration('0s') && duration(self) <= duration('24h')`,message="waitTimeout must be a positive Go duration of at most 24h, such as 5m"
	WaitTimeout *metav1.Duration `json:"waitTimeout,omitempty"`

	// runner overrides how the runner Job is run. Defaults come from the
	// launcher's configuration.
	// +optional
	Runner *RunnerOverrides `json:"runner,omitempty"`

	// consumers are the workloads in the request's namespace that consume
	// the group. The launcher pauses them before the runner commits and
	// restores them afterwards, whatever the outcome: it records each one's
	// replica count (or KEDA pause annotations) in status.consumers before
	// changing anything, and restores only what it changed. A Deployment or
	// StatefulSet that a KEDA ScaledObject targets is paused through the
	// ScaledObject. Needs whenGroupActive: Wait: the runner waits, within
	// waitTimeout, for the consumers to leave the group. A dry run pauses
	// nothing.
	// +optional
	// +listType=map
	// +listMapKey=kind
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Consumers []ConsumerRef `json:"consumers,omitempty"`

	// approval says whether the request applies as soon as it can
	// (Automatic, the default) or waits for a person: with Manual the
	// launcher first runs a planning Job (a dry run), shows its summary and
	// digest in status.plan with the condition AwaitingApproval, and applies
	// exactly that plan only once someone with the verb approve on
	// replayrequests annotates the request kafkareplay.dev/approve=<digest>
	// (or rejects it with kafkareplay.dev/reject=<reason>).
	// +optional
	// +kubebuilder:default=Automatic
	Approval ApprovalPolicy `json:"approval,omitempty"`

	// approvalTimeout bounds the wait for an approval, from when the plan
	// is ready, as a Go duration such as 4h; when it runs out the request
	// fails with reason Expired. Only with approval: Manual; 24h when unset.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule=`self.matches('^([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) > duration('0s') && duration(self) <= duration('168h')`,message="approvalTimeout must be a positive Go duration of at most 168h (7 days), such as 4h"
	ApprovalTimeout *metav1.Duration `json:"approvalTimeout,omitempty"`

	// limits are guards the plan must pass before anything is committed
	// (in a dry run and the planning run too, which then fail the same way).
	// +optional
	Limits *Limits `json:"limits,omitempty"`

	// force, with target.undoOf, restores also the partitions the undo
	// rules leave alone (see docs/usage.md, "Undo"), to their offset before
	// the undone request.
	// +optional
	Force bool `json:"force,omitempty"`

	// commitMode is how the runner commits the offsets: Plain (when unset:
	// OffsetCommit requests, as Kafka's own tool), Atomic (one Kafka
	// transaction with transactional.id kafka-replay.<group>, which fences
	// every other Atomic replay of the group on the cluster, however it is
	// addressed and wherever it was started, and shows every offset or
	// none; the Kafka user needs WRITE and DESCRIBE on that
	// TransactionalId, or the request fails with InvalidInput), or Auto
	// (Atomic where the user may use the ID, else Plain).
	// status.result.commitMode says which ran. A replay fenced by another
	// ends Superseded, having committed nothing.
	// +optional
	CommitMode CommitMode `json:"commitMode,omitempty"`

	// groupType is the kind of group spec.group is: Auto (when unset: the
	// runner finds it out and resets the group as that kind), or Classic,
	// Consumer (KIP-848), Share (KIP-932) or Streams (KIP-1071), which the
	// group must be: a group of another kind fails InvalidInput, naming
	// both kinds, before anything is planned. A group that does not exist
	// yet passes as Classic or Consumer. status.result.groupType says the
	// kind found.
	// +optional
	GroupType GroupType `json:"groupType,omitempty"`

	// deleteAllInternalTopics deletes, once the offsets are moved and read
	// back, the internal topics of a streams group (its topology's
	// repartition and changelog topics named after the group), as
	// kafka-streams-groups.sh --delete-all-internal-topics does: the
	// application's state is rebuilt from the reset input. Irreversible:
	// an undo puts the offsets back and cannot recreate the topics. A dry
	// run, and the planning run of approval: Manual, list them and delete
	// nothing; status.plan.internalTopics shows them, the plan's digest
	// binds them, and the approved apply deletes exactly those, or fails
	// PlanStale when the topology names others by then. Only with
	// groupType Streams or Auto (a group of another kind fails
	// InvalidInput), one group, and not with target.undoOf nor a
	// consumerRef. status.result.internalTopics says what was deleted.
	// +optional
	DeleteAllInternalTopics bool `json:"deleteAllInternalTopics,omitempty"`

	// groups names several consumer groups, instead of group: the launcher
	// makes one child ReplayRequest per group, in this order, each with this
	// spec for its one group and so its own lock, run ID, record, undo and
	// pause (docs/groups.md).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=500
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=255
	// +kubebuilder:validation:XValidation:rule=`self.all(g, g.matches('^[^\\s\\x00-\\x1f\\x7f]([^\\x00-\\x1f\\x7f]*[^\\s\\x00-\\x1f\\x7f])?$'))`,message="each of groups must be a group name as group is: no leading or trailing spaces and no control characters"
	Groups []string `json:"groups,omitempty"`

	// groupSelector chooses the groups by name instead of group or groups:
	// the consumer groups (or those of groupType) the cluster lists,
	// resolved once, when the request is accepted, by a list Job, into
	// status.resolvedGroups; groups that appear later are not added
	// (docs/groups.md).
	// +optional
	GroupSelector *GroupSelector `json:"groupSelector,omitempty"`

	// continueOnError, with groups or groupSelector, goes on to the next
	// group after one failed; when false (the default) the first failed
	// group stops the request, and the groups after it are not attempted.
	// +optional
	ContinueOnError bool `json:"continueOnError,omitempty"`

	// parallelism, with groups or groupSelector, is how many groups'
	// child requests may be between their creation and their end at once
	// (1 when unset, at most 10). Each child still waits for its own
	// group's lock.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	Parallelism int32 `json:"parallelism,omitempty"`
}

// GroupSelector chooses consumer groups by name: those matching an
// include and no exclude, and, with withOffsetsOn, only those with
// committed offsets on one of those topics.
type GroupSelector struct {
	// include chooses every group that matches one of these.
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=50
	Include []GroupPattern `json:"include"`

	// exclude leaves out every chosen group that matches one of these.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=50
	Exclude []GroupPattern `json:"exclude,omitempty"`

	// withOffsetsOn keeps only the groups with committed offsets on at
	// least one of these topics.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=249
	WithOffsetsOn []string `json:"withOffsetsOn,omitempty"`
}

// GroupPattern matches group names: by prefix, or by a regular
// expression (RE2 syntax, matched against the whole name).
// +kubebuilder:validation:XValidation:rule="has(self.prefix) != has(self.regex)",message="set exactly one of prefix and regex"
type GroupPattern struct {
	// prefix matches the groups whose name starts with it.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Prefix string `json:"prefix,omitempty"`

	// regex matches the groups whose whole name it matches.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Regex string `json:"regex,omitempty"`
}

// CommitMode is how the runner commits (runner/config's CommitMode*).
// +kubebuilder:validation:Enum=Atomic;Plain;Auto
type CommitMode string

// GroupType is a kind of group (runner/config's GroupType*).
// +kubebuilder:validation:Enum=Auto;Classic;Consumer;Share;Streams
type GroupType string

// ApprovalPolicy is whether a request waits for a person's approval.
// +kubebuilder:validation:Enum=Automatic;Manual
type ApprovalPolicy string

const (
	// ApprovalAutomatic applies as soon as the group is free.
	ApprovalAutomatic ApprovalPolicy = "Automatic"
	// ApprovalManual plans first and applies only the approved plan.
	ApprovalManual ApprovalPolicy = "Manual"
)

// Limits are guards on a plan, checked by the runner before it commits.
type Limits struct {
	// maxMessagesToReconsume fails the request with reason LimitExceeded,
	// before anything is committed, when the plan would have the group
	// consume more messages again than this, in all partitions together.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxMessagesToReconsume *int64 `json:"maxMessagesToReconsume,omitempty"`

	// maxTotalMessagesToReconsume, for a request over several groups, bounds
	// the messages to consume again over all its groups together, as their
	// plans say, while maxMessagesToReconsume bounds each group on its own.
	// The launcher checks it before any group applies: the groups plan
	// first (with approval: Automatic too, and the launcher then approves
	// them itself when the total is within it), and a total above it fails
	// the request with reason LimitExceeded, nothing applied. A dryRun
	// fails the same way once its groups have run.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxTotalMessagesToReconsume *int64 `json:"maxTotalMessagesToReconsume,omitempty"`

	// allowSkip lets the plan move a partition ahead of its committed
	// offset, past messages the consumers never handled (they are lost to
	// them). Without it such a plan fails with reason WouldSkipMessages,
	// before anything is committed.
	// +optional
	AllowSkip bool `json:"allowSkip,omitempty"`
}

// ConsumerRef names a workload that consumes the group.
type ConsumerRef struct {
	// kind of the workload: Deployment, StatefulSet (apps/v1),
	// ScaledObject (keda.sh/v1alpha1), KafkaSource
	// (sources.knative.dev/v1beta1) or KafkaConnector
	// (kafka.strimzi.io/v1).
	// +required
	Kind ConsumerKind `json:"kind"`
	// name of the workload, in the request's namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// ConsumerKind is the kind of a consumer workload.
// +kubebuilder:validation:Enum=Deployment;StatefulSet;ScaledObject;KafkaSource;KafkaConnector
type ConsumerKind string

const (
	// ConsumerDeployment is an apps/v1 Deployment.
	ConsumerDeployment ConsumerKind = "Deployment"
	// ConsumerStatefulSet is an apps/v1 StatefulSet.
	ConsumerStatefulSet ConsumerKind = "StatefulSet"
	// ConsumerScaledObject is a KEDA keda.sh/v1alpha1 ScaledObject.
	ConsumerScaledObject ConsumerKind = "ScaledObject"
	// ConsumerKafkaSource is a Knative sources.knative.dev/v1beta1
	// KafkaSource, paused through its scale subresource (spec.consumers),
	// or through KEDA when KEDA scales it. A request whose consumerRef is a
	// KafkaSource pauses it without naming it here (with whenGroupActive:
	// Wait).
	ConsumerKafkaSource ConsumerKind = "KafkaSource"
	// ConsumerKafkaConnector is a Strimzi kafka.strimzi.io/v1
	// KafkaConnector (a sink connector's tasks are its group's members),
	// stopped through its spec.state.
	ConsumerKafkaConnector ConsumerKind = "KafkaConnector"
)

// PauseMethod is how the launcher pauses a consumer.
// +kubebuilder:validation:Enum=Scale;KEDA;State
type PauseMethod string

const (
	// PauseScale sets the workload's scale subresource to 0 replicas.
	PauseScale PauseMethod = "Scale"
	// PauseKEDA sets the ScaledObject's autoscaling.keda.sh/paused-replicas
	// "0" and autoscaling.keda.sh/paused "true" annotations together (one
	// alone lets KEDA scale the workload up again).
	PauseKEDA PauseMethod = "KEDA"
	// PauseState sets a KafkaConnector's spec.state to stopped, which
	// Strimzi carries out by stopping its tasks (they leave the group),
	// and puts the recorded spec.state back afterwards.
	PauseState PauseMethod = "State"
)

// ConsumerState is where a consumer is in its pause and restore.
// +kubebuilder:validation:Enum=Recorded;Paused;Restored;NotRestored
type ConsumerState string

const (
	// ConsumerRecorded: what it was is recorded; it may or may not be
	// paused yet (a restore compares with the record either way).
	ConsumerRecorded ConsumerState = "Recorded"
	// ConsumerPaused: the launcher paused it.
	ConsumerPaused ConsumerState = "Paused"
	// ConsumerRestored: it is as recorded again.
	ConsumerRestored ConsumerState = "Restored"
	// ConsumerNotRestored: someone else changed it while it was paused (or
	// it is gone), so the launcher left it as it found it; message says
	// what it found.
	ConsumerNotRestored ConsumerState = "NotRestored"
)

// ConsumerStatus is what the launcher recorded about one consumer before
// pausing it, and what it did.
type ConsumerStatus struct {
	// kind of the workload, as in spec.consumers.
	Kind ConsumerKind `json:"kind"`
	// name of the workload, as in spec.consumers.
	Name string `json:"name"`
	// method is how it is paused: Scale (the workload's scale subresource),
	// KEDA (the ScaledObject's pause annotations) or State (a
	// KafkaConnector's spec.state).
	Method PauseMethod `json:"method"`
	// workload is the workload that scales, as Kind/name (a ScaledObject's
	// scale target).
	// +optional
	Workload string `json:"workload,omitempty"`
	// scaledObject is the ScaledObject paused, with method KEDA.
	// +optional
	ScaledObject string `json:"scaledObject,omitempty"`
	// replicas is the workload's spec.replicas before the pause, with
	// method Scale.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// previousPaused is the ScaledObject's autoscaling.keda.sh/paused
	// annotation before the pause, with method KEDA; absent when it had
	// none.
	// +optional
	PreviousPaused *string `json:"previousPaused,omitempty"`
	// previousPausedReplicas is its autoscaling.keda.sh/paused-replicas
	// annotation before the pause, the same way.
	// +optional
	PreviousPausedReplicas *string `json:"previousPausedReplicas,omitempty"`
	// previousState is the KafkaConnector's spec.state before the pause,
	// with method State; absent when it had none (running).
	// +optional
	// +kubebuilder:validation:MaxLength=32
	PreviousState *string `json:"previousState,omitempty"`
	// state is Recorded, Paused, Restored or NotRestored.
	State ConsumerState `json:"state"`
	// message says what the launcher found or did last.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
	// warnings name what may fight the pause: an HorizontalPodAutoscaler on
	// the workload, an Argo CD or Flux owner that self-heals spec.replicas.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	Warnings []string `json:"warnings,omitempty"`
}

// KafkaConnection says how the runner reaches Kafka.
//
// +kubebuilder:validation:XValidation:rule="has(self.bootstrapServers) != has(self.clusterRef)",message="kafka: set bootstrapServers, or clusterRef to take them from a Strimzi Kafka's listener"
// +kubebuilder:validation:XValidation:rule="!has(self.clusterRef) || !has(self.secretRef)",message="kafka.secretRef: not with clusterRef, whose user names the KafkaUser whose Secret holds the credentials",fieldPath=".secretRef"
type KafkaConnection struct {
	// bootstrapServers is a comma-separated list of host:port. Required
	// unless clusterRef is set, which replaces it.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule=`self.matches('^\\s*([A-Za-z][A-Za-z0-9+._-]*://)?(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?):([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])\\s*(,\\s*([A-Za-z][A-Za-z0-9+._-]*://)?(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?):([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])\\s*)*$')`,message="kafka.bootstrapServers must be a comma-separated list of host:port, with ports 1-65535"
	BootstrapServers string `json:"bootstrapServers,omitempty"`

	// clusterRef names a Strimzi Kafka (in the request's namespace, or one
	// the launcher allows) and one
	// of its listeners, and optionally a KafkaUser, instead of
	// bootstrapServers and secretRef: the launcher resolves them once, when
	// it accepts the request, to the listener's bootstrap servers, its TLS
	// trust (the <name>-cluster-ca-cert Secret) and the user's Secret, as
	// librdkafka properties bound to those servers, and keeps what it found
	// in status.resolvedKafka. Replays of a group through any clusterRef to
	// the same cluster (status.clusterId) wait for each other
	// (docs/strimzi.md).
	// +optional
	ClusterRef *StrimziClusterRef `json:"clusterRef,omitempty"`

	// configMapRef names a ConfigMap in the request's namespace. Every key is
	// a librdkafka property (security.protocol, sasl.mechanism, ...) and its
	// value the property's value. It is mounted into the runner as part of
	// its config directory; the launcher never reads it.
	// +optional
	ConfigMapRef *LocalObjectReference `json:"configMapRef,omitempty"`

	// secretRef names a Secret in the request's namespace, laid out like
	// configMapRef, for credentials such as sasl.password or ssl.key.pem. It
	// is mounted read-only into the runner's config directory; the launcher
	// has no access to Secrets and never sees the values.
	// +optional
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`
}

// LocalObjectReference names an object in the request's own namespace.
type LocalObjectReference struct {
	// name of the object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// TopicSelector chooses a topic and, optionally, some of its partitions.
type TopicSelector struct {
	// name is the topic, following Kafka's rules: 1-249 ASCII letters,
	// digits, '.', '_' and '-', and not "." or "..".
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=249
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-zA-Z0-9._-]+$') && self != '.' && self != '..'`,message="topics[].name must be a Kafka topic name: ASCII letters, digits, '.', '_' and '-', not '.' or '..'"
	Name string `json:"name"`

	// partitions limits the replay to these partitions of the topic. Empty
	// means every partition.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=10000
	// +kubebuilder:validation:items:Minimum=0
	Partitions []int32 `json:"partitions,omitempty"`
}

// Target is where the group's offsets go. Exactly one field is set; the
// meanings are the runner's (see REPLAY_TO).
//
// +kubebuilder:validation:XValidation:rule="[has(self.time), has(self.ago), has(self.position), has(self.offset), has(self.shiftBy), has(self.offsets), has(self.fromGroup), has(self.undoOf)].filter(x, x).size() == 1",message="target must set exactly one of time, ago, position, offset, shiftBy, offsets, fromGroup or undoOf"
type Target struct {
	// time moves each partition to the first message at or after this
	// instant, in RFC3339 with a zone (2026-03-01T09:30:00Z or
	// 2026-03-01T10:30:00+01:00). A time after the last message moves to the
	// end of the log.
	// +optional
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$')`,message="target.time must be RFC3339 with a zone, such as 2026-03-01T09:30:00Z; a time without a zone is never assumed to be UTC"
	// +kubebuilder:validation:XValidation:rule=`!self.matches('^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$') || timestamp(self) >= timestamp('1970-01-01T00:00:00Z')`,message="target.time must be a real instant from 1970 on: month 01-12, a day the month has, hour 00-23, zone offset at most 23:59"
	Time *string `json:"time,omitempty"`

	// ago is a time relative to the request's creationTimestamp, as a Go
	// duration such as 2h or 90m: "2h before I asked", however long the
	// request then waits for its group. It is resolved once, on acceptance,
	// and the absolute time is kept in status.resolvedTarget, so a retry or a
	// restart never moves the target.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule=`self.matches('^([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) > duration('0s')`,message="target.ago must be a positive Go duration such as 2h or 90m"
	Ago *metav1.Duration `json:"ago,omitempty"`

	// position moves to the start (Earliest) or the end (Latest) of each
	// partition's log.
	// +optional
	Position *Position `json:"position,omitempty"`

	// offset moves every partition in scope to this absolute offset, clamped
	// to the partition's log.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Offset *int64 `json:"offset,omitempty"`

	// shiftBy moves each partition relative to its committed offset:
	// negative re-consumes that many messages, positive skips them. Not 0.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self != 0",message="target.shiftBy must not be 0, which would change nothing"
	ShiftBy *int64 `json:"shiftBy,omitempty"`

	// offsets sets explicit offsets per partition. The partitions listed are
	// the scope, so topics must be empty. The list reaches the runner as a
	// file through a pod annotation, and the pod's annotations may hold 256
	// KiB in all, so the list as JSON is bounded to 240 KiB: 2,000 entries
	// with topic names of up to about 60 characters, or about 800 with names
	// of the maximum 249.
	// +optional
	// +listType=map
	// +listMapKey=topic
	// +listMapKey=partition
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=2000
	// +kubebuilder:validation:XValidation:rule="self.map(o, size(o.topic) + size(string(o.partition)) + size(string(o.offset)) + 36).sum() <= 245760",message="target.offsets is too long: as JSON it must fit in 240 KiB (a pod annotation); split it into several requests"
	Offsets []PartitionOffset `json:"offsets,omitempty"`

	// fromGroup copies another group's committed offsets.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[^\\s\\x00-\\x1f\\x7f]([^\\x00-\\x1f\\x7f]*[^\\s\\x00-\\x1f\\x7f])?$')`,message="target.fromGroup must be a consumer group name with no leading or trailing spaces and no control characters"
	FromGroup *string `json:"fromGroup,omitempty"`

	// undoOf names an earlier ReplayRequest in this namespace whose replay
	// this one undoes: each partition goes back to the committed offset it
	// had before that request, as its ReplayRecord shows, under the undo
	// rules (docs/usage.md, "Undo"): a partition whose consumers have moved
	// on in a way a restore would re-consume or skip is left alone and
	// listed with the reason, unless force is set. The earlier request must
	// have succeeded, not be a dry run, have its record, and be of the same
	// group and Kafka cluster. topics must be empty. Without group (and
	// consumerRef), it names a request over several groups, and undoes
	// each of its groups that applied, one child request each
	// (docs/groups.md).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	UndoOf *string `json:"undoOf,omitempty"`
}

// PartitionOffset is one explicit offset of an offsets target.
type PartitionOffset struct {
	// topic is the partition's topic.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=249
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[a-zA-Z0-9._-]+$') && self != '.' && self != '..'`,message="target.offsets[].topic must be a Kafka topic name: ASCII letters, digits, '.', '_' and '-', not '.' or '..'"
	Topic string `json:"topic"`
	// partition is the partition number.
	// +required
	// +kubebuilder:validation:Minimum=0
	Partition int32 `json:"partition"`
	// offset is the offset to commit, clamped to the partition's log.
	// +required
	// +kubebuilder:validation:Minimum=0
	Offset int64 `json:"offset"`
}

// Position is the start or the end of a partition's log.
// +kubebuilder:validation:Enum=Earliest;Latest
type Position string

const (
	// PositionEarliest is the log start offset.
	PositionEarliest Position = "Earliest"
	// PositionLatest is the log end offset.
	PositionLatest Position = "Latest"
)

// GroupActivePolicy is what to do when the group has active members.
// +kubebuilder:validation:Enum=Fail;Wait
type GroupActivePolicy string

const (
	// GroupActiveFail fails at once, changing nothing.
	GroupActiveFail GroupActivePolicy = "Fail"
	// GroupActiveWait waits up to waitTimeout for the group to become empty.
	GroupActiveWait GroupActivePolicy = "Wait"
)

// RunnerOverrides change how the runner Job runs for this request. Whoever may
// create ReplayRequests in a namespace may choose these, so grant that
// permission as you would grant creating Jobs there.
type RunnerOverrides struct {
	// image is the runner's container image, instead of the launcher's
	// default.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// serviceAccountName runs the runner pod as this ServiceAccount of the
	// request's namespace. The runner needs no Kubernetes API access, and
	// its pod does not mount a token.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// resources are the runner container's requests and limits, instead of
	// the launcher's defaults.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// activeDeadlineSeconds bounds the whole Job, retries included; when it
	// runs out the request fails with reason DeadlineExceeded.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=604800
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`
}

// ReplayRequestStatus is what the launcher observed and did.
//
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.resolved) || (has(self.resolved) && self.resolved == oldSelf.resolved)",message="status.resolved is written once, when the request is accepted, and never changed"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.resolvedKafka) || (has(self.resolvedKafka) && self.resolvedKafka == oldSelf.resolvedKafka)",message="status.resolvedKafka is written once, when the request is accepted, and never changed"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.resolvedGroups) || (has(self.resolvedGroups) && self.resolvedGroups == oldSelf.resolvedGroups)",message="status.resolvedGroups is written once, when the request is accepted, and never changed"
type ReplayRequestStatus struct {
	// conditions are Accepted, Running and, once finished, Succeeded (True
	// or False, with a one-word reason such as GroupActive, InvalidInput,
	// KafkaError, PartiallyApplied, OutcomeUnknown (the commit may have
	// applied: a retry with the same run ID settles it), Superseded
	// (another Atomic replay of the group fenced it; nothing committed),
	// AlreadyRan,
	// JobDeleted, PodNotStarted or DeadlineExceeded) and Finished (True,
	// with the same reason).
	// `kubectl wait --for=condition=Succeeded` waits for success;
	// `kubectl wait --for=condition=Finished` for any final outcome.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// phase summarises the conditions for people and printer columns:
	// Pending, Running, Succeeded or Failed. Tools should read conditions.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// observedGeneration is the metadata.generation the launcher last acted
	// on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// requestedBy is who created the request: the username the chart's
	// admission policies stamped into metadata.annotations
	// kafkareplay.dev/requested-by from the API server's own record of the
	// creator, or "unknown" when nothing stamped it (an API server without
	// MutatingAdmissionPolicy). Recorded when the request is accepted, and
	// on the Job.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	RequestedBy string `json:"requestedBy,omitempty"`

	// jobName is the runner Job in the request's namespace.
	// +optional
	JobName string `json:"jobName,omitempty"`

	// startTime is when the launcher created the Job.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// completionTime is when the request reached its final state.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// resolved is, for a request with spec.consumerRef, what the Knative
	// resource resolved to when the request was accepted: the bootstrap
	// servers, the group, the topics and the Secret, each with where it
	// came from, and how the consumers are paused. It never changes
	// afterwards: a Trigger re-created (another UID, another group) does
	// not move this request to another group.
	// +optional
	Resolved *ResolvedConsumer `json:"resolved,omitempty"`

	// resolvedKafka is, for a request with spec.kafka.clusterRef, what the
	// Strimzi Kafka, its listener and the KafkaUser resolved to when the
	// request was accepted. It never changes afterwards.
	// +optional
	ResolvedKafka *ResolvedKafka `json:"resolvedKafka,omitempty"`

	// group is the consumer group the request replays, for people and the
	// Group printer column: spec.group, or for a spec.consumerRef the group
	// it resolved to (status.resolved.group) once the request is accepted.
	// The launcher writes it with its status writes and never reads it.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	Group string `json:"group,omitempty"`

	// resolvedTarget is the target as the runner gets it, in the runner's
	// grammar: earliest, latest, time:<RFC3339>, offset:<N>, shift:<+N|-N>,
	// group:<name>, or offsets:<count> for explicit offsets (which reach the
	// runner as a file). An ago target appears as the absolute time it was
	// resolved to when the launcher accepted the request.
	// +optional
	ResolvedTarget string `json:"resolvedTarget,omitempty"`

	// result is the runner's result: per partition the previous and new
	// offsets and the delta, and totals. With dryRun it is the plan.
	// +optional
	Result *ReplayResult `json:"result,omitempty"`

	// logTail is the end of the runner's log, at most 4 KiB.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	LogTail string `json:"logTail,omitempty"`

	// message explains the current state in a sentence.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message,omitempty"`

	// consumers are, per spec.consumers entry, what the launcher recorded
	// before pausing it (written before anything is changed, so that a
	// launcher restart loses nothing) and where its pause and restore are.
	// +optional
	// +listType=map
	// +listMapKey=kind
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Consumers []ConsumerStatus `json:"consumers,omitempty"`

	// plan is, with approval: Manual, the plan awaiting approval: its
	// digest (what kafkareplay.dev/approve must say), its totals, its
	// largest moves and its warnings. The planning Job's ReplayRecord
	// (named plan.jobName) has every partition.
	// +optional
	Plan *PlanSummary `json:"plan,omitempty"`

	// approval is the decision on the plan: who approved or rejected it,
	// as the chart's admission policy stamped it, and when the launcher saw
	// it.
	// +optional
	Approval *ApprovalStatus `json:"approval,omitempty"`

	// undoCommand is, once the request has applied, the exact command that
	// undoes it: it creates a ReplayRequest with target.undoOf naming this
	// one.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	UndoCommand string `json:"undoCommand,omitempty"`

	// undo is, for a request with target.undoOf, what it undoes: the
	// earlier request's Job, whose record holds the offsets it restores.
	// +optional
	Undo *UndoStatus `json:"undo,omitempty"`

	// resolvedGroups are, for a request over several groups (a parent),
	// the groups it replays, in the order their child requests start:
	// spec.groups as given, spec.groupSelector's groups in name order, or
	// for the undo of a parent the undone parent's groups. Written once,
	// when the request is accepted.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=500
	ResolvedGroups []string `json:"resolvedGroups,omitempty"`

	// groups are, for a parent, one row per resolved group, in their
	// order: its child request and where it is.
	// +optional
	// +listType=map
	// +listMapKey=group
	// +kubebuilder:validation:MaxItems=500
	Groups []GroupStatus `json:"groups,omitempty"`
}

// GroupStatus is one group of a request over several groups.
type GroupStatus struct {
	// group is the consumer group.
	// +required
	// +kubebuilder:validation:MaxLength=255
	Group string `json:"group"`
	// child is the child ReplayRequest that replays it, in the parent's
	// namespace; empty while none was made.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Child string `json:"child,omitempty"`
	// plan is, with approval: Manual, the child's plan digest that the
	// request's plan digest covers.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{16}$`
	Plan string `json:"plan,omitempty"`
	// phase is Waiting (no child yet), the child's phase (Pending,
	// Running, AwaitingApproval, Succeeded, Failed), or NotAttempted (no
	// child will be made: an earlier group failed without
	// continueOnError).
	// +optional
	Phase GroupPhase `json:"phase,omitempty"`
	// reason is the child's one-word outcome once it finished (its
	// Finished condition's reason).
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Reason string `json:"reason,omitempty"`
	// moved is the child's result's count of partitions moved (in a dry
	// run, that would move).
	// +optional
	Moved int32 `json:"moved,omitempty"`
	// messagesToReconsume is the child's result's sum of positive deltas.
	// +optional
	MessagesToReconsume int64 `json:"messagesToReconsume,omitempty"`
	// messagesSkipped is the child's result's sum of negative deltas, as
	// a positive number.
	// +optional
	MessagesSkipped int64 `json:"messagesSkipped,omitempty"`
}

// GroupPhase is where one group of a parent request is.
// +kubebuilder:validation:Enum=Waiting;Pending;Running;AwaitingApproval;Succeeded;Failed;NotAttempted
type GroupPhase string

const (
	// GroupWaiting: no child request yet.
	GroupWaiting GroupPhase = "Waiting"
	// GroupNotAttempted: no child will be made.
	GroupNotAttempted GroupPhase = "NotAttempted"
)

// PlanSummary is a planned replay as shown for review.
type PlanSummary struct {
	// digest is the plan's short digest (report.PlanDigest), or, for a
	// request over several groups, sha256:<hex> over its groups' plans
	// (docs/groups.md): approve with kubectl annotate rr NAME
	// kafkareplay.dev/approve=<digest>.
	// +required
	// +kubebuilder:validation:Pattern=`^([0-9a-f]{16}|sha256:[0-9a-f]{64})$`
	Digest string `json:"digest"`
	// jobName is the planning Job; its ReplayRecord, of the same name, has
	// the whole plan. Empty for a request over several groups, whose
	// groups' requests each have theirs.
	// +optional
	JobName string `json:"jobName,omitempty"`
	// target is the target the plan resolved, in the runner's grammar.
	// +optional
	Target string `json:"target,omitempty"`
	// plannedAt is when the planning run finished; approvalTimeout counts
	// from it.
	// +optional
	PlannedAt *metav1.Time `json:"plannedAt,omitempty"`
	// expiresAt is when the request ends Expired if nobody decides.
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`
	// totals summarise every partition of the plan.
	// +optional
	Totals ResultTotals `json:"totals,omitzero"`
	// largestDeltas are the partitions that move the most, largest first
	// (at most 10).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	LargestDeltas []PartitionResult `json:"largestDeltas,omitempty"`
	// warnings are the planning run's warnings.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Warnings []string `json:"warnings,omitempty"`
	// internalTopics are, with spec.deleteAllInternalTopics, the streams
	// group's internal topics the plan deletes once its offsets are moved:
	// the digest binds them, and an undo cannot recreate them. Absent when
	// the plan deletes none.
	// +optional
	// +listType=atomic
	InternalTopics []string `json:"internalTopics,omitempty"`
}

// InternalTopics are a streams group's internal topics planned for
// deletion and deleted (runner/report.InternalTopics).
type InternalTopics struct {
	// planned are the topics the run deletes once the offsets are moved.
	// +optional
	// +listType=atomic
	Planned []string `json:"planned,omitempty"`
	// deleted are those Kafka deleted, or found already gone. A planned
	// topic not in it was not deleted; the error says why.
	// +optional
	// +listType=atomic
	Deleted []string `json:"deleted,omitempty"`
}

// ApprovalDecision is what a person decided about a plan.
// +kubebuilder:validation:Enum=Approved;Rejected
type ApprovalDecision string

const (
	// ApprovalApproved: the plan was approved with its digest.
	ApprovalApproved ApprovalDecision = "Approved"
	// ApprovalRejected: the plan was rejected; nothing was applied.
	ApprovalRejected ApprovalDecision = "Rejected"
)

// ApprovalStatus records the decision on a plan.
type ApprovalStatus struct {
	// decision is Approved or Rejected.
	// +required
	Decision ApprovalDecision `json:"decision"`
	// by is who decided: the username the chart's admission policy stamped
	// into kafkareplay.dev/approved-by when the approve or reject
	// annotation was set, or "unknown" when nothing stamped it.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	By string `json:"by,omitempty"`
	// at is when the launcher saw the decision.
	// +optional
	At *metav1.Time `json:"at,omitempty"`
	// digest is the plan digest approved.
	// +optional
	Digest string `json:"digest,omitempty"`
	// reason is the rejection's reason, as given.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason,omitempty"`
}

// UndoStatus is what an undo request undoes.
type UndoStatus struct {
	// request is the undone ReplayRequest.
	// +required
	Request string `json:"request"`
	// jobName is its Job; the ReplayRecord of that name holds the previous
	// offsets this request restores.
	// +required
	JobName string `json:"jobName"`
	// runId is the undone run's ID, as in its commit metadata.
	// +optional
	RunID string `json:"runId,omitempty"`
}

// Phase is a one-word summary of a request's conditions.
// +kubebuilder:validation:Enum=Pending;Running;AwaitingApproval;Succeeded;Failed
type Phase string

const (
	// PhasePending: accepted or waiting for the group; no Job yet.
	PhasePending Phase = "Pending"
	// PhaseRunning: a Job (the planning Job or the apply Job) exists and
	// has not finished.
	PhaseRunning Phase = "Running"
	// PhaseAwaitingApproval: the plan is ready and waits for approval.
	PhaseAwaitingApproval Phase = "AwaitingApproval"
	// PhaseSucceeded: Succeeded is True.
	PhaseSucceeded Phase = "Succeeded"
	// PhaseFailed: Succeeded is False.
	PhaseFailed Phase = "Failed"
)

// Condition types.
const (
	// ConditionAccepted is True once the launcher has validated the request
	// and resolved its target. While another replay of the same group runs
	// its reason is WaitingForGroup and its message names that request.
	ConditionAccepted = "Accepted"
	// ConditionRunning is True while the runner Job runs.
	ConditionRunning = "Running"
	// ConditionSucceeded is set once the request has finished: True on
	// success, False with the failure's reason.
	ConditionSucceeded = "Succeeded"
	// ConditionFinished is True once the request has reached its final
	// state, whichever it is, with the same reason as Succeeded: what
	// `kubectl wait --for=condition=Finished` waits for.
	ConditionFinished = "Finished"
	// ConditionConsumersPaused is True once every consumer is paused, with
	// the workloads and their recorded replica counts; False with reason
	// Restored after the restore.
	ConditionConsumersPaused = "ConsumersPaused"
	// ConditionAwaitingApproval is True while a Manual request's plan
	// waits for a decision (reason PlanReady; the message says how to
	// approve), then False with reason Approved, Rejected or Expired.
	ConditionAwaitingApproval = "AwaitingApproval"
	// ConditionConsumersRestored is True once every consumer the launcher
	// paused is restored (reason Restored) or, when someone else changed
	// one meanwhile, left as found (reason NotRestored, naming it).
	ConditionConsumersRestored = "ConsumersRestored"
)

// ReplayResult is the runner's result as recorded in status. It mirrors the
// runner's result format (kafkareplay.dev/result/v1); per-partition entries
// may be truncated, the totals never are.
type ReplayResult struct {
	// runId is the idempotency key the runner recorded in the commit
	// metadata: <namespace>/<name>/<spec digest> of the request, the same
	// for a request re-created with the same name and spec.
	// +optional
	RunID string `json:"runId,omitempty"`
	// reason is the runner's one-word outcome (Applied, AlreadyApplied,
	// DryRun, GroupActive, ...).
	// +optional
	Reason string `json:"reason,omitempty"`
	// exitCode is the runner's exit status.
	// +optional
	ExitCode int32 `json:"exitCode,omitempty"`
	// dryRun is true when nothing was committed by design.
	// +optional
	DryRun bool `json:"dryRun,omitempty"`
	// alreadyApplied is true when a retried run found its own commit and
	// did not apply again.
	// +optional
	AlreadyApplied bool `json:"alreadyApplied,omitempty"`
	// target is the target as the runner resolved it.
	// +optional
	Target string `json:"target,omitempty"`
	// commitMode is how the runner committed, or would have: Atomic or
	// Plain (with spec.commitMode Auto, the one it chose). Empty in a dry
	// run and when the run ended before it chose.
	// +optional
	CommitMode string `json:"commitMode,omitempty"`
	// groupType is the kind of group the runner found: Classic, Consumer,
	// Share or Streams. Empty when the group did not exist (a reset makes
	// it a Classic group) and when the run ended before it knew.
	// +optional
	GroupType string `json:"groupType,omitempty"`
	// internalTopics are, with spec.deleteAllInternalTopics, the streams
	// group's internal topics the run deletes once the offsets are moved
	// (in a dry run, those it would delete), and those it deleted.
	// +optional
	InternalTopics *InternalTopics `json:"internalTopics,omitempty"`
	// partitions are the per-partition offsets, sorted by topic and
	// partition. They may be truncated (see truncated); totals are not. The
	// Job's ReplayRecord (named status.jobName) has every partition.
	// +optional
	// +listType=atomic
	Partitions []PartitionResult `json:"partitions,omitempty"`
	// totals summarise every partition.
	// +optional
	Totals ResultTotals `json:"totals,omitzero"`
	// warnings are things an operator should read, such as clamped targets.
	// +optional
	// +listType=atomic
	Warnings []string `json:"warnings,omitempty"`
	// truncated is true when some partitions were left out to keep status
	// small (4 KiB of result, failed partitions first); the ReplayRecord
	// named status.jobName has them all.
	// +optional
	Truncated bool `json:"truncated,omitempty"`
	// error explains a failure.
	// +optional
	Error string `json:"error,omitempty"`
	// startedAt is when the runner started.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// finishedAt is when the runner finished.
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
}

// PartitionResult is one partition's outcome.
type PartitionResult struct {
	// topic of the partition.
	Topic string `json:"topic"`
	// partition number.
	Partition int32 `json:"partition"`
	// previousOffset is the committed offset before the run; absent when the
	// group had never committed this partition.
	// +optional
	PreviousOffset *int64 `json:"previousOffset,omitempty"`
	// newOffset is the offset the group is at now (or, in a dry run, would be).
	NewOffset int64 `json:"newOffset"`
	// delta is previousOffset minus newOffset: positive means that many
	// messages will be consumed again, negative that they are skipped.
	// +optional
	Delta *int64 `json:"delta,omitempty"`
	// clamped is true when the target fell outside the log and was moved to
	// its start or end.
	// +optional
	Clamped bool `json:"clamped,omitempty"`
	// note explains anything unusual about this partition.
	// +optional
	Note string `json:"note,omitempty"`
	// error is set when committing this partition failed.
	// +optional
	Error string `json:"error,omitempty"`
	// leftAlone is set, with target.undoOf, when the undo rules left this
	// partition where it was (and force was not set), and says why: it was
	// not committed, newOffset is its committed offset, and it does not
	// make the request fail.
	// +optional
	LeftAlone string `json:"leftAlone,omitempty"`
}

// ResultTotals summarise a result's partitions.
type ResultTotals struct {
	// partitions in scope.
	// +optional
	Partitions int32 `json:"partitions,omitempty"`
	// applied counts the partitions whose committed offset is this run's
	// commit (made by it, or found in place by a retry).
	// +optional
	Applied int32 `json:"applied,omitempty"`
	// moved counts the partitions whose committed offset the run changed
	// (in a dry run, would change): a partition committed at the offset it
	// already had is applied, not moved. Always written, 0 included: 0
	// moved is "nothing moved".
	// +optional
	Moved int32 `json:"moved"`
	// messagesToReconsume is the sum of the positive deltas.
	// +optional
	MessagesToReconsume int64 `json:"messagesToReconsume"`
	// messagesSkipped is the sum of the negative deltas, as a positive
	// number. Always written, 0 included, so that history columns show it.
	// +optional
	MessagesSkipped int64 `json:"messagesSkipped"`
	// clamped counts partitions whose target was clamped.
	// +optional
	Clamped int32 `json:"clamped,omitempty"`
	// noPreviousOffset counts partitions the group had never committed.
	// +optional
	NoPreviousOffset int32 `json:"noPreviousOffset,omitempty"`
	// failed counts partitions whose commit failed.
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// leftAlone counts the partitions an undo left where they were (see
	// partitions[].leftAlone).
	// +optional
	LeftAlone int32 `json:"leftAlone,omitempty"`
}

// ReplayRequestList is a list of ReplayRequests.
//
// +kubebuilder:object:root=true
type ReplayRequestList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the requests.
	Items []ReplayRequest `json:"items"`
}
