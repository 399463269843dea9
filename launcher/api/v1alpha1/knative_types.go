package v1alpha1

// KnativeRef names a Knative resource, in the request's namespace, whose
// Kafka consumer group a request replays (spec.consumerRef).
type KnativeRef struct {
	// kind is KafkaSource (sources.knative.dev/v1beta1), Trigger
	// (eventing.knative.dev/v1, on a Broker of class Kafka), Subscription
	// (messaging.knative.dev/v1, to a KafkaChannel) or KafkaConnector
	// (kafka.strimzi.io/v1, a sink connector).
	// +required
	Kind KnativeKind `json:"kind"`
	// name of the resource, in the request's namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// KnativeKind is the kind of a Knative resource a request may name.
// +kubebuilder:validation:Enum=KafkaSource;Trigger;Subscription;KafkaConnector
type KnativeKind string

const (
	// KnativeKafkaSource is a sources.knative.dev/v1beta1 KafkaSource.
	KnativeKafkaSource KnativeKind = "KafkaSource"
	// KnativeTrigger is an eventing.knative.dev/v1 Trigger on a Kafka Broker.
	KnativeTrigger KnativeKind = "Trigger"
	// KnativeSubscription is a messaging.knative.dev/v1 Subscription to a
	// messaging.knative.dev/v1beta1 KafkaChannel.
	KnativeSubscription KnativeKind = "Subscription"
	// ConsumerRefKafkaConnector is a kafka.strimzi.io/v1 sink
	// KafkaConnector, with spec.kafka.clusterRef (docs/strimzi.md).
	ConsumerRefKafkaConnector KnativeKind = "KafkaConnector"
)

// ResolvedConsumer is what a spec.consumerRef resolved to, and where each
// value came from, so that a person can check it against the Knative
// resource (docs/knative.md).
type ResolvedConsumer struct {
	// kind of the resource resolved, as in spec.consumerRef.
	// +required
	Kind KnativeKind `json:"kind"`
	// name of the resource resolved, as in spec.consumerRef.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// uid is the resource's UID when it was resolved: a resource deleted
	// and created again under the same name is another resource.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	UID string `json:"uid,omitempty"`

	// bootstrapServers the runner connects to, comma-separated.
	// +required
	// +kubebuilder:validation:MaxLength=512
	BootstrapServers string `json:"bootstrapServers"`
	// bootstrapServersFrom says where bootstrapServers came from, such as
	// "KafkaSource orders.spec.bootstrapServers" or
	// "Broker default.status.annotations[bootstrap.servers]".
	// +optional
	// +kubebuilder:validation:MaxLength=512
	BootstrapServersFrom string `json:"bootstrapServersFrom,omitempty"`

	// group is the consumer group the request replays.
	// +required
	// +kubebuilder:validation:MaxLength=255
	Group string `json:"group"`
	// groupFrom says where group came from.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	GroupFrom string `json:"groupFrom,omitempty"`

	// topics the group consumes; the replay is limited to them.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=249
	Topics []string `json:"topics,omitempty"`
	// topicsFrom says where topics came from.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	TopicsFrom string `json:"topicsFrom,omitempty"`

	// secretName is the Secret, in the request's namespace, whose keys the
	// runner gets as its Kafka credentials (mounted, never read by the
	// launcher), under the same binding rules as kafka.secretRef: the
	// Secret must also have a bootstrap.servers key naming the servers its
	// credentials are for. Empty when the resource names no Secret.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	SecretName string `json:"secretName,omitempty"`
	// secretFrom says which field or annotation named the Secret.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	SecretFrom string `json:"secretFrom,omitempty"`
	// secretKeys map the Secret's keys, in Knative's layout, to the
	// librdkafka properties the runner reads (protocol to
	// security.protocol, user to sasl.username, ca.crt to ssl.ca.pem, ...,
	// and bootstrap.servers, the binding, as itself). Keys the Secret does
	// not have are skipped. How the credentials are presented comes from
	// the Secret only, never from the Knative resource's own fields, so
	// that whoever may edit the resource cannot downgrade it.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	SecretKeys []SecretKeyProperty `json:"secretKeys,omitempty"`
	// pause says how the resource's consumers are paused during the
	// replay, or why they cannot be: a Trigger's or a Subscription's
	// dispatchers are shared with other Triggers and Subscriptions, so
	// there is no safe per-resource pause and whenGroupActive decides.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Pause string `json:"pause,omitempty"`

	// warnings are what a person should check: a group taken from the
	// consumer-group template rather than the resource's own status, for
	// example.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=1024
	Warnings []string `json:"warnings,omitempty"`
}

// SecretKeyProperty maps one key of a Knative Secret to the librdkafka
// property the runner reads it as.
type SecretKeyProperty struct {
	// key in the Secret.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
	// property is the librdkafka property, the file name in the runner's
	// secret directory.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Property string `json:"property"`
}
