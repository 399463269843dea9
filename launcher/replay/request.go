// Package replay says what a ReplayRequest replays and what its
// ReplayRecord kept, as the launcher reads them: the group, servers, topics
// and credentials, whichever way the request names them; the size its
// explicit offsets take on the runner's pod; the partitions a record holds.
// It has none of the launcher's controller machinery, so the kubectl plugin
// imports it instead of package launcher.
package replay

import (
	corev1 "k8s.io/api/core/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// What a request replays, whichever way it says it: spec.kafka, spec.group
// and spec.topics, or spec.consumerRef, which the launcher resolves once, at
// acceptance, into status.resolved (launcher/knative.go). Every reader of
// the group, the servers, the topics or the credentials goes through these,
// so that a consumerRef request is queued, labelled, locked and run like any
// other. Before a consumerRef request is accepted they return the zero
// value.

// UsesConsumerRef reports whether a request names a Knative resource.
func UsesConsumerRef(rr *v1alpha1.ReplayRequest) bool {
	return rr.Spec.ConsumerRef != nil
}

// Resolved is status.resolved when it belongs to the request's own
// consumerRef (the same kind and name), else nil: a status that claims
// another resource resolves nothing.
func Resolved(rr *v1alpha1.ReplayRequest) *v1alpha1.ResolvedConsumer {
	ref, res := rr.Spec.ConsumerRef, rr.Status.Resolved
	if ref == nil || res == nil || res.Kind != ref.Kind || res.Name != ref.Name {
		return nil
	}
	return res
}

// UsesClusterRef reports whether a request names a Strimzi Kafka
// (spec.kafka.clusterRef): alone, or with a KafkaConnector consumerRef,
// which gives the group and the topics only.
func UsesClusterRef(rr *v1alpha1.ReplayRequest) bool {
	if ref := rr.Spec.ConsumerRef; ref != nil && ref.Kind != v1alpha1.ConsumerRefKafkaConnector {
		return false
	}
	return rr.Spec.Kafka.ClusterRef != nil
}

// ResolvedKafka is status.resolvedKafka when it belongs to the request's
// own clusterRef (the same Kafka, listener and user), else nil.
func ResolvedKafka(rr *v1alpha1.ReplayRequest) *v1alpha1.ResolvedKafka {
	res := rr.Status.ResolvedKafka
	if !UsesClusterRef(rr) || res == nil {
		return nil
	}
	if ref := rr.Spec.Kafka.ClusterRef; res.Name != ref.Name || res.Listener != ref.Listener || res.User != ref.User {
		return nil
	}
	return res
}

// ClusterID is the Kafka cluster's ID a clusterRef request resolved to;
// empty for other requests and before acceptance.
func ClusterID(rr *v1alpha1.ReplayRequest) string {
	if res := ResolvedKafka(rr); res != nil {
		return res.ClusterID
	}
	return ""
}

// Group is the consumer group a request replays.
func Group(rr *v1alpha1.ReplayRequest) string {
	if !UsesConsumerRef(rr) {
		return rr.Spec.Group
	}
	if res := Resolved(rr); res != nil {
		return res.Group
	}
	return ""
}

// BootstrapServers is the bootstrap servers a request connects to.
func BootstrapServers(rr *v1alpha1.ReplayRequest) string {
	if UsesClusterRef(rr) {
		if res := ResolvedKafka(rr); res != nil {
			return res.BootstrapServers
		}
		return ""
	}
	if !UsesConsumerRef(rr) {
		return rr.Spec.Kafka.BootstrapServers
	}
	if res := Resolved(rr); res != nil {
		return res.BootstrapServers
	}
	return ""
}

// Topics is the scope of a request: spec.topics, or every partition
// of the topics its Knative resource consumes.
func Topics(rr *v1alpha1.ReplayRequest) []v1alpha1.TopicSelector {
	if !UsesConsumerRef(rr) {
		return rr.Spec.Topics
	}
	res := Resolved(rr)
	if res == nil {
		return nil
	}
	out := make([]v1alpha1.TopicSelector, len(res.Topics))
	for i, t := range res.Topics {
		out[i] = v1alpha1.TopicSelector{Name: t}
	}
	return out
}

// ConfigMapRef is the ConfigMap of librdkafka properties a request
// mounts. A consumerRef request has none: everything it connects with
// comes from the Knative resource and its Secret.
func ConfigMapRef(rr *v1alpha1.ReplayRequest) *v1alpha1.LocalObjectReference {
	if UsesConsumerRef(rr) {
		return nil
	}
	return rr.Spec.Kafka.ConfigMapRef
}

// SecretName is the Secret whose keys are a request's credentials:
// spec.kafka.secretRef, or the Secret its Knative resource names. Empty
// when there is none.
func SecretName(rr *v1alpha1.ReplayRequest) string {
	if UsesClusterRef(rr) {
		return ClusterUserSecret(rr)
	}
	if !UsesConsumerRef(rr) {
		if ref := rr.Spec.Kafka.SecretRef; ref != nil {
			return ref.Name
		}
		return ""
	}
	if res := Resolved(rr); res != nil {
		return res.SecretName
	}
	return ""
}

// SecretProjection is how a request's Secret is mounted into the
// runner's secret directory, or nil. A secretRef's keys are librdkafka
// properties already and are mounted as they are. A Knative Secret is in
// Knative's layout (protocol, user, password, ca.crt, ...): only the keys
// status.resolved.secretKeys maps are mounted, each under its property's
// name, and the Secret is optional with them, because a Knative Secret has
// only some of those keys (a kubelet skips an optional Secret's missing
// keys; one that is not optional fails the mount on the first). A missing
// Secret then mounts nothing and the run has no credentials; a Secret
// without bootstrap.servers is refused by the runner's binding
// (CredentialsNotBound) as a secretRef's would be.
func SecretProjection(rr *v1alpha1.ReplayRequest) *corev1.SecretProjection {
	if !UsesConsumerRef(rr) {
		if ref := rr.Spec.Kafka.SecretRef; ref != nil {
			return &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name}}
		}
		return nil
	}
	res := Resolved(rr)
	if res == nil || res.SecretName == "" || len(res.SecretKeys) == 0 {
		return nil
	}
	items := make([]corev1.KeyToPath, len(res.SecretKeys))
	for i, k := range res.SecretKeys {
		items[i] = corev1.KeyToPath{Key: k.Key, Path: k.Property}
	}
	optional := true
	return &corev1.SecretProjection{
		LocalObjectReference: corev1.LocalObjectReference{Name: res.SecretName},
		Items:                items,
		Optional:             &optional,
	}
}

// ClusterUserSecret is the KafkaUser's Secret a clusterRef request
// resolved to; empty without a user.
func ClusterUserSecret(rr *v1alpha1.ReplayRequest) string {
	if res := ResolvedKafka(rr); res != nil {
		return res.UserSecret
	}
	return ""
}
