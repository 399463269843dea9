package launcher

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/clusterref"
	"github.com/kafka-replay/kafka-replay/launcher/internal/knative"
	"github.com/kafka-replay/kafka-replay/launcher/internal/strimzi"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// The launcher's side of spec.kafka.clusterRef: it reads the Kafka and the
// KafkaUser (unstructured, past the cache: it may get them, not list or
// watch them), resolves them once at acceptance (launcher/internal/strimzi)
// and keeps the result in status.resolvedKafka, from which the Job mounts
// the Secrets and the properties into the runner's secret directory.
//
// +kubebuilder:rbac:groups=kafka.strimzi.io,resources=kafkas;kafkausers,verbs=get

// validateClusterRef is the spec side of ValidateSpec for a clusterRef.
func validateClusterRef(k v1alpha1.KafkaConnection) []string {
	var errs []string
	ref := k.ClusterRef
	if k.BootstrapServers != "" {
		errs = append(errs, "kafka.bootstrapServers: not with kafka.clusterRef, which gives them")
	}
	if k.SecretRef != nil {
		errs = append(errs, "kafka.secretRef: not with kafka.clusterRef, whose user names the credentials")
	}
	if ref.Name == "" {
		errs = append(errs, "kafka.clusterRef.name: empty")
	}
	if ref.Listener == "" {
		errs = append(errs, "kafka.clusterRef.listener: empty")
	}
	return errs
}

// validateResolvedKafka is BuildJob's check of a clusterRef request's
// status.resolvedKafka: it must belong to the spec's clusterRef and be
// what a resolution makes (strimzi.Check), else no Job is made from it.
func validateResolvedKafka(rr *v1alpha1.ReplayRequest) error {
	if !replay.UsesClusterRef(rr) {
		return nil
	}
	res := replay.ResolvedKafka(rr)
	if res == nil {
		ref := rr.Spec.Kafka.ClusterRef
		return fmt.Errorf("status.resolvedKafka does not resolve kafka.clusterRef %s/%s", ref.Name, ref.Listener)
	}
	return strimzi.Check(*res)
}

// getStrimzi reads one Strimzi object of the request's namespace; nil, nil
// when it does not exist. A kind the cluster does not serve, or that the
// launcher may not read, is not resolvable, with what to do about it.
func (r *ReplayRequestReconciler) getStrimzi(ctx context.Context, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, obj)
	switch {
	case err == nil:
		return obj, nil
	case meta.IsNoMatchError(err):
		return nil, fmt.Errorf("%w: this cluster does not serve %s (%s): is Strimzi 0.49 or later installed (it serves that version)?", strimzi.ErrNotResolvable, gvk.Kind, gvk.GroupVersion())
	case apierrors.IsNotFound(err):
		return nil, nil
	case apierrors.IsForbidden(err):
		return nil, fmt.Errorf("%w: the launcher may not read %s %s/%s: its ClusterRole needs get on kafkas, kafkausers, kafkaconnects and kafkaconnectors (kafka.strimzi.io)", strimzi.ErrNotResolvable, gvk.Kind, ns, name)
	}
	return nil, fmt.Errorf("read %s %s/%s: %w", gvk.Kind, ns, name, err)
}

// acceptClusterRef resolves a request's clusterRef at acceptance and
// checks that its creator may use the KafkaUser's Secret. A
// status.resolvedKafka already there was not written by a launcher (it
// writes it only with Accepted): it must be what the resolution finds, or
// the request fails, so whoever may write status chooses nothing. A
// strimzi.ErrNotResolvable error fails the request; others are retried.
func (r *ReplayRequestReconciler) acceptClusterRef(ctx context.Context, rr *v1alpha1.ReplayRequest) (*v1alpha1.ResolvedKafka, error) {
	ref := *rr.Spec.Kafka.ClusterRef
	if r.Options.NoStrimzi {
		return nil, fmt.Errorf("%w: kafka.clusterRef: Strimzi support is turned off in this launcher (--strimzi=false)", strimzi.ErrNotResolvable)
	}
	switch {
	case ref.Namespace == rr.Namespace:
		ref.Namespace = "" // the request's own: as if not given
	case ref.Namespace != "" && !slices.Contains(r.Options.StrimziClusterNamespaces, ref.Namespace):
		return nil, fmt.Errorf("%w: kafka.clusterRef.namespace: %s is not a namespace this launcher resolves Kafkas in for other namespaces' requests (--strimzi-cluster-namespaces)", strimzi.ErrNotResolvable, ref.Namespace)
	}
	kafkaNS := rr.Namespace
	if ref.Namespace != "" {
		kafkaNS = ref.Namespace
	}
	kafka, err := r.getStrimzi(ctx, strimzi.KafkaGVK, kafkaNS, ref.Name)
	if err != nil {
		return nil, err
	}
	var user *unstructured.Unstructured
	if ref.User != "" && kafka != nil {
		if user, err = r.getStrimzi(ctx, strimzi.KafkaUserGVK, rr.Namespace, ref.User); err != nil {
			return nil, err
		}
	}
	res, err := strimzi.Resolve(ref, kafka, user)
	if err != nil {
		return nil, err
	}
	if res.UserSecret != "" {
		if err := r.authorizeSecret(ctx, rr, res.UserSecret, "KafkaUser "+ref.User+": status.secret"); err != nil {
			if errors.Is(err, knative.ErrNotResolvable) {
				// The same refusal as a Knative resource's Secret, said of
				// the clusterRef.
				return nil, fmt.Errorf("%w: %s", strimzi.ErrNotResolvable, strings.TrimPrefix(err.Error(), knative.ErrNotResolvable.Error()+": "))
			}
			return nil, err
		}
	}
	if rr.Status.ResolvedKafka != nil && !reflect.DeepEqual(*rr.Status.ResolvedKafka, res) {
		return nil, fmt.Errorf("%w: status.resolvedKafka was written before the launcher accepted the request, and is not what kafka.clusterRef resolves to", strimzi.ErrNotResolvable)
	}
	return &res, nil
}

// clusterSecretDir is the runner's secret directory for a clusterRef
// request (clusterref.SecretDir, which the plugin's groups mounts too).
// Nothing when the request has no clusterRef.
func clusterSecretDir(rr *v1alpha1.ReplayRequest) ([]corev1.VolumeProjection, map[string]string) {
	return clusterref.SecretDir(replay.ResolvedKafka(rr))
}
