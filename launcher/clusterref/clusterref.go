// Package clusterref resolves a Strimzi clusterRef (a Kafka, one of its
// listeners, a KafkaUser) for a reader that is not the launcher: the
// kubectl plugin's `groups --cluster/--user`, which must reach the same
// servers with the same credentials a request's clusterRef does. It is
// the launcher's own resolution (launcher/internal/strimzi) and the
// runner's secret directory made of it, exported without the launcher's
// controller machinery.
package clusterref

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/strimzi"
	"github.com/kafka-replay/kafka-replay/runner/config"
)

const caProperty = "ssl.ca.pem"

// The kinds a clusterRef names.
var (
	KafkaGVK     = strimzi.KafkaGVK
	KafkaUserGVK = strimzi.KafkaUserGVK
)

// ErrNotResolvable marks a clusterRef that cannot be resolved as the
// objects are now (missing, not ready, a listener or user that does not
// fit).
var ErrNotResolvable = strimzi.ErrNotResolvable

// Resolve is the launcher's resolution of ref against the Kafka and the
// KafkaUser (nil when they do not exist); its errors name the request's
// fields (kafka.clusterRef.name, .listener, .user).
func Resolve(ref v1alpha1.StrimziClusterRef, kafka, user *unstructured.Unstructured) (v1alpha1.ResolvedKafka, error) {
	return strimzi.Resolve(ref, kafka, user)
}

// SecretDir is the runner's secret directory for a resolved clusterRef:
// the Secrets' keys under the property names they are (the cluster CA,
// the user's credentials) and, through the downward API, the resolved
// properties, the binding (bootstrap.servers) among them, from the pod
// annotations returned, so that the directory says which servers its
// credentials are for as a secretRef's Secret does. Nothing for nil.
func SecretDir(res *v1alpha1.ResolvedKafka) ([]corev1.VolumeProjection, map[string]string) {
	if res == nil {
		return nil, nil
	}
	var sources []corev1.VolumeProjection
	for _, s := range res.Secrets {
		items := make([]corev1.KeyToPath, len(s.Keys))
		for i, k := range s.Keys {
			items[i] = corev1.KeyToPath{Key: k.Key, Path: k.Property}
		}
		sources = append(sources, corev1.VolumeProjection{Secret: &corev1.SecretProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: s.Name},
			Items:                items,
		}})
	}
	annotations := map[string]string{}
	var files []corev1.DownwardAPIVolumeFile
	for _, p := range res.Properties {
		key := v1alpha1.AnnotationPropertyPrefix + p.Name
		annotations[key] = p.Value
		files = append(files, corev1.DownwardAPIVolumeFile{
			Path:     p.Name,
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + key + "']"},
		})
	}
	if res.CACertificates != "" {
		// A Kafka of another namespace: its CA certificates from its
		// status (public data), vouched for by config.CADigestOf.
		key := v1alpha1.AnnotationPropertyPrefix + caProperty
		annotations[key] = res.CACertificates
		files = append(files, corev1.DownwardAPIVolumeFile{
			Path:     caProperty,
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + key + "']"},
		})
	}
	sources = append(sources, corev1.VolumeProjection{DownwardAPI: &corev1.DownwardAPIProjection{Items: files}})
	return sources, annotations
}

// Binding is the runner's environment that binds it to the resolution
// SecretDir mounts, for a request's Job and the plugin's groups pod alike:
// the cluster's ID, so that servers reaching another cluster are refused
// (the launcher's group lock is keyed by it too); the digest of the
// properties, which come from pod annotations that whoever may patch pods
// could change before the kubelet writes them; and, for a Kafka of another
// namespace, the digest of its CA certificates, from annotations too. The
// runner refuses, before it reads anything, a directory or a cluster that
// is not these. Nothing for nil.
func Binding(res *v1alpha1.ResolvedKafka) []corev1.EnvVar {
	if res == nil {
		return nil
	}
	env := []corev1.EnvVar{
		{Name: config.EnvClusterID, Value: res.ClusterID},
		{Name: config.EnvPropertiesDigest, Value: strimzi.PropertiesDigest(res.Properties)},
	}
	if res.CACertificates != "" {
		env = append(env, corev1.EnvVar{Name: config.EnvCADigest, Value: config.CADigestOf(res.CACertificates)})
	}
	return env
}
