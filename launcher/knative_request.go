package launcher

import (
	corev1 "k8s.io/api/core/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// What a request replays, whichever way it says it: spec.kafka, spec.group
// and spec.topics, or spec.consumerRef, which the launcher resolves once, at
// acceptance, into status.resolved (knative.go). Every reader of the group,
// the servers, the topics or the credentials goes through these, so that a
// consumerRef request is queued, labelled, locked and run like any other.
// Before a consumerRef request is accepted they return the zero value.

// UsesConsumerRef reports whether a request names a Knative resource.
func UsesConsumerRef(rr *v1alpha1.ReplayRequest) bool {
	return rr.Spec.ConsumerRef != nil
}

// resolvedFor is status.resolved when it belongs to the request's own
// consumerRef (the same kind and name), else nil: a status that claims
// another resource resolves nothing.
func resolvedFor(rr *v1alpha1.ReplayRequest) *v1alpha1.ResolvedConsumer {
	ref, res := rr.Spec.ConsumerRef, rr.Status.Resolved
	if ref == nil || res == nil || res.Kind != ref.Kind || res.Name != ref.Name {
		return nil
	}
	return res
}

// RequestGroup is the consumer group a request replays.
func RequestGroup(rr *v1alpha1.ReplayRequest) string {
	if !UsesConsumerRef(rr) {
		return rr.Spec.Group
	}
	if res := resolvedFor(rr); res != nil {
		return res.Group
	}
	return ""
}

// RequestBootstrapServers is the bootstrap servers a request connects to.
func RequestBootstrapServers(rr *v1alpha1.ReplayRequest) string {
	if !UsesConsumerRef(rr) {
		return rr.Spec.Kafka.BootstrapServers
	}
	if res := resolvedFor(rr); res != nil {
		return res.BootstrapServers
	}
	return ""
}

// RequestTopics is the scope of a request: spec.topics, or every partition
// of the topics its Knative resource consumes.
func RequestTopics(rr *v1alpha1.ReplayRequest) []v1alpha1.TopicSelector {
	if !UsesConsumerRef(rr) {
		return rr.Spec.Topics
	}
	res := resolvedFor(rr)
	if res == nil {
		return nil
	}
	out := make([]v1alpha1.TopicSelector, len(res.Topics))
	for i, t := range res.Topics {
		out[i] = v1alpha1.TopicSelector{Name: t}
	}
	return out
}

// RequestConfigMapRef is the ConfigMap of librdkafka properties a request
// mounts. A consumerRef request has none: everything it connects with
// comes from the Knative resource and its Secret.
func RequestConfigMapRef(rr *v1alpha1.ReplayRequest) *v1alpha1.LocalObjectReference {
	if UsesConsumerRef(rr) {
		return nil
	}
	return rr.Spec.Kafka.ConfigMapRef
}

// RequestSecretName is the Secret whose keys are a request's credentials:
// spec.kafka.secretRef, or the Secret its Knative resource names. Empty
// when there is none.
func RequestSecretName(rr *v1alpha1.ReplayRequest) string {
	if !UsesConsumerRef(rr) {
		if ref := rr.Spec.Kafka.SecretRef; ref != nil {
			return ref.Name
		}
		return ""
	}
	if res := resolvedFor(rr); res != nil {
		return res.SecretName
	}
	return ""
}

// RequestSecretProjection is how a request's Secret is mounted into the
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
func RequestSecretProjection(rr *v1alpha1.ReplayRequest) *corev1.SecretProjection {
	if !UsesConsumerRef(rr) {
		if ref := rr.Spec.Kafka.SecretRef; ref != nil {
			return &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name}}
		}
		return nil
	}
	res := resolvedFor(rr)
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
