package v1alpha1

// StrimziClusterRef names a Strimzi Kafka cluster, one of its listeners and,
// optionally, a KafkaUser (spec.kafka.clusterRef).
type StrimziClusterRef struct {
	// name of the Kafka (kafka.strimzi.io), in namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// namespace of the Kafka; the request's when empty. Another namespace
	// must be one the launcher allows (its --strimzi-cluster-namespaces);
	// the runner then trusts the CA certificates the Kafka's
	// status.listeners entry publishes, as the runner pod cannot mount a
	// Secret of another namespace. The KafkaUser is always in the
	// request's namespace.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
	// listener is the name of one of the Kafka's listeners
	// (spec.kafka.listeners[].name): the runner connects to the bootstrap
	// servers its status.listeners entry gives, with its TLS and
	// authentication settings.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=11
	// +kubebuilder:validation:Pattern=`^[a-z0-9]{1,11}$`
	Listener string `json:"listener"`
	// user names a KafkaUser of that cluster, in the request's namespace,
	// whose Secret holds the credentials the listener's authentication
	// needs (scram-sha-512 or tls). Required when the listener has
	// authentication, not allowed when it has none. The request's creator
	// must be allowed to get or use the Secret, as with kafka.secretRef.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	User string `json:"user,omitempty"`
}

// ResolvedKafka is what a spec.kafka.clusterRef resolved to when the
// request was accepted, and where each value came from (docs/strimzi.md).
type ResolvedKafka struct {
	// name of the Kafka resolved, as in spec.kafka.clusterRef.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// namespace of the Kafka resolved, when it is not the request's.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
	// listener resolved, as in spec.kafka.clusterRef.
	// +required
	// +kubebuilder:validation:MaxLength=11
	Listener string `json:"listener"`
	// user resolved, as in spec.kafka.clusterRef; empty without one.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	User string `json:"user,omitempty"`
	// uid is the Kafka's UID when it was resolved.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	UID string `json:"uid,omitempty"`
	// clusterId is the Kafka cluster's ID (the Kafka's status.clusterId):
	// the group lock's key, so that requests naming the same cluster
	// through any listener wait for each other.
	// +required
	// +kubebuilder:validation:MaxLength=64
	ClusterID string `json:"clusterId"`
	// bootstrapServers the runner connects to, from the listener's
	// status.listeners[].bootstrapServers; the credentials are bound to
	// them.
	// +required
	// +kubebuilder:validation:MaxLength=512
	BootstrapServers string `json:"bootstrapServers"`
	// properties are the librdkafka properties the listener's settings
	// mean (security.protocol, sasl.mechanism, sasl.username), given to
	// the runner beside the credentials, never from the request.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	Properties []KafkaProperty `json:"properties,omitempty"`
	// propertiesDigest is sha256:<hex> of properties as the runner reads
	// them (REPLAY_PROPERTIES_DIGEST): they reach it through the runner
	// pod's annotations, which whoever may patch pods could change before
	// the kubelet writes them, so the runner refuses (exit 2,
	// CredentialsNotBound) any other properties beside the Secrets' keys.
	// +optional
	// +kubebuilder:validation:MaxLength=71
	PropertiesDigest string `json:"propertiesDigest,omitempty"`
	// caCertificates are, for a TLS listener of a Kafka in another
	// namespace, the PEM certificates its status.listeners entry
	// publishes (public data), which the runner trusts instead of the
	// cluster CA's Secret; they reach it as ssl.ca.pem beside the
	// properties, vouched for by caDigest.
	// +optional
	// +kubebuilder:validation:MaxLength=32768
	CACertificates string `json:"caCertificates,omitempty"`
	// secrets are the Secrets, in the request's namespace, whose keys the
	// runner gets as properties: the cluster CA's for a TLS listener, the
	// KafkaUser's for its credentials. The launcher never reads them.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=2
	Secrets []ResolvedSecret `json:"secrets,omitempty"`
	// userSecret is the one of secrets that is the KafkaUser's (its
	// status.secret): the request's creator must be allowed to get or use
	// it, as with kafka.secretRef. Empty without a user.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	UserSecret string `json:"userSecret,omitempty"`
}

// KafkaProperty is one librdkafka property and its value.
type KafkaProperty struct {
	// name of the property.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// value of the property; never a credential.
	// +required
	// +kubebuilder:validation:MaxLength=512
	Value string `json:"value"`
}

// ResolvedSecret is a Secret whose keys the runner reads as properties.
type ResolvedSecret struct {
	// name of the Secret.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// from says which field named the Secret.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	From string `json:"from,omitempty"`
	// keys map the Secret's keys, in Strimzi's layout, to the librdkafka
	// properties the runner reads them as.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	Keys []SecretKeyProperty `json:"keys"`
}
