package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/consumers"
	"github.com/kafka-replay/kafka-replay/launcher/internal/knative"
)

// Pausing a KafkaSource. Its CRD has a scale subresource whose replicas are
// spec.consumers (control-plane/config/eventing-kafka-broker/100-source/
// 100-kafka-source.yaml: specReplicasPath .spec.consumers), which
// eventing-kafka-broker's source reconciler gives its ConsumerGroup; 0
// stops every consumer of the source's group. A source KEDA scales
// (autoscaling.knative.dev/class: keda.autoscaling.knative.dev,
// control-plane/pkg/apis/sources/v1beta1/kafka_defaults.go) is scaled by a
// ScaledObject targeting that ConsumerGroup, named by the source's UID
// (control-plane/pkg/reconciler/source/v2), and is paused through KEDA's
// annotations on it, as any KEDA-scaled consumer is (consumers_io.go).
//
// A Trigger's or a Subscription's consumers are the Broker's and the
// channel's dispatchers, shared with every other Trigger and Subscription:
// nothing of them is paused (status.resolved.pause says so) and
// whenGroupActive decides.

// knativeConsumerGroupKind is eventing-kafka-broker's internal
// ConsumerGroup (internal.kafka.eventing.knative.dev), the ScaledObject's
// target for a KEDA-scaled source.
const knativeConsumerGroupKind = "ConsumerGroup"

var scaleGVK = schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}

// recordKafkaSource records a KafkaSource before its pause: its scale
// (spec.consumers), or the ScaledObject KEDA scales it through.
func (r *ReplayRequestReconciler) recordKafkaSource(ctx context.Context, ns string, c v1alpha1.ConsumerStatus) (v1alpha1.ConsumerStatus, error) {
	if r.Options.NoKnative {
		return c, errConsumer{fmt.Sprintf("consumers: KafkaSource %s: Knative support is turned off in this launcher (--knative=false)", c.Name)}
	}
	src, err := r.getKnative(ctx, knative.KafkaSourceGVK, ns, c.Name)
	if errors.Is(err, knative.ErrNotResolvable) {
		return c, errConsumer{fmt.Sprintf("consumers: KafkaSource %s: %v", c.Name, err)}
	}
	if err != nil {
		return c, fmt.Errorf("consumers: KafkaSource %s: %w", c.Name, err)
	}
	if src == nil {
		return c, consumerError("KafkaSource "+c.Name, ns, apierrors.NewNotFound(schema.GroupResource{Group: knative.KafkaSourceGVK.Group, Resource: "kafkasources"}, c.Name))
	}
	c.Workload = string(v1alpha1.ConsumerKafkaSource) + "/" + c.Name
	if src.GetAnnotations()[knative.AutoscalingClassAnnotation] == knative.KEDAClass {
		if r.Options.NoKEDA {
			return c, errConsumer{fmt.Sprintf("consumers: KafkaSource %s is scaled by KEDA (%s), and KEDA support is turned off in this launcher", c.Name, knative.AutoscalingClassAnnotation)}
		}
		so, err := r.scaledObjectFor(ctx, ns, knativeConsumerGroupKind, string(src.GetUID()))
		if err != nil {
			return c, fmt.Errorf("consumers: ScaledObjects targeting KafkaSource %s's ConsumerGroup: %w", c.Name, err)
		}
		if so == nil {
			return c, errConsumer{fmt.Sprintf("consumers: KafkaSource %s is scaled by KEDA (%s: %s) but no ScaledObject targets its ConsumerGroup %s", c.Name, knative.AutoscalingClassAnnotation, knative.KEDAClass, src.GetUID())}
		}
		recordKEDA(&c, so)
		c.Warnings = consumers.PauseWarnings(c.Workload, c.Method, src.GetLabels(), src.GetAnnotations(), nil)
		return c, nil
	}
	if r.Options.NoKnativeScale {
		return c, errConsumer{fmt.Sprintf("consumers: KafkaSource %s: pausing KafkaSources through their scale is turned off in this launcher (--knative-scale=false)", c.Name)}
	}
	replicas, _, err := r.kafkaSourceScale(ctx, ns, c.Name)
	if err != nil {
		return c, fmt.Errorf("consumers: KafkaSource %s scale: %w", c.Name, err)
	}
	c.Method = v1alpha1.PauseScale
	c.Replicas = &replicas
	c.Warnings = consumers.PauseWarnings(c.Workload, c.Method, src.GetLabels(), src.GetAnnotations(), nil)
	return c, nil
}

func kafkaSourceObject(ns, name string) *unstructured.Unstructured {
	src := &unstructured.Unstructured{}
	src.SetGroupVersionKind(knative.KafkaSourceGVK)
	src.SetNamespace(ns)
	src.SetName(name)
	return src
}

// kafkaSourceScale reads a KafkaSource's scale subresource.
func (r *ReplayRequestReconciler) kafkaSourceScale(ctx context.Context, ns, name string) (int32, string, error) {
	scale := &unstructured.Unstructured{}
	scale.SetGroupVersionKind(scaleGVK)
	if err := r.Client.SubResource("scale").Get(ctx, kafkaSourceObject(ns, name), scale); err != nil {
		return 0, "", err
	}
	n, _, err := unstructured.NestedInt64(scale.Object, "spec", "replicas")
	if err != nil {
		return 0, "", fmt.Errorf("scale spec.replicas: %w", err)
	}
	return int32(n), scale.GetResourceVersion(), nil
}

// patchKafkaSourceScale sets a KafkaSource's spec.consumers through its
// scale, only at resourceVersion when it is given.
func (r *ReplayRequestReconciler) patchKafkaSourceScale(ctx context.Context, ns, name, version string, replicas int32) error {
	body := map[string]any{"spec": map[string]any{"replicas": replicas}}
	if version != "" {
		body["metadata"] = map[string]any{"resourceVersion": version}
	}
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	scale := &unstructured.Unstructured{}
	scale.SetGroupVersionKind(scaleGVK)
	return r.Client.SubResource("scale").Patch(ctx, kafkaSourceObject(ns, name), client.RawPatch(types.MergePatchType, data), &client.SubResourcePatchOptions{SubResourceBody: scale})
}

// isKafkaSourceScale is a recorded consumer paused through a KafkaSource's
// scale (a KEDA-scaled source goes the ScaledObject's way).
func isKafkaSourceScale(c *v1alpha1.ConsumerStatus) bool {
	return c.Kind == v1alpha1.ConsumerKafkaSource && c.Method == v1alpha1.PauseScale
}
