package launcher

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/consumers"
	"github.com/kafka-replay/kafka-replay/launcher/internal/strimzi"
)

// Stopping a Strimzi KafkaConnector (spec.consumers kind KafkaConnector).
// Its spec.state (running, paused, stopped; Strimzi 0.38 and later;
// KafkaConnectorSpec) is what Strimzi's operator applies to the connector
// through Kafka Connect's REST API: stopped stops its tasks, so a sink
// connector's tasks leave its group, as a Deployment's pods do at 0
// replicas. The launcher records spec.state before it changes it, and puts
// it back afterwards unless someone else changed it meanwhile, as for any
// consumer (DecideRestore).
//
// +kubebuilder:rbac:groups=kafka.strimzi.io,resources=kafkaconnectors,verbs=get;patch

func (r *ReplayRequestReconciler) getConnector(ctx context.Context, ns, name string) (*unstructured.Unstructured, error) {
	kc := &unstructured.Unstructured{}
	kc.SetGroupVersionKind(strimzi.KafkaConnectorGVK)
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, kc); err != nil {
		return nil, err
	}
	return kc, nil
}

// connectorState is a KafkaConnector's spec.state; nil when it has none.
func connectorState(kc *unstructured.Unstructured) *string {
	if v, ok, _ := unstructured.NestedString(kc.Object, "spec", "state"); ok {
		return &v
	}
	return nil
}

// recordConnector records a KafkaConnector before it is stopped.
func (r *ReplayRequestReconciler) recordConnector(ctx context.Context, ns string, c v1alpha1.ConsumerStatus) (v1alpha1.ConsumerStatus, error) {
	kc, err := r.getConnector(ctx, ns, c.Name)
	if apierrors.IsNotFound(err) {
		return c, errConsumer{fmt.Sprintf("consumers: KafkaConnector %s does not exist", c.Name)}
	}
	if err != nil {
		return c, fmt.Errorf("consumers: KafkaConnector %s: %w", c.Name, err)
	}
	c.Workload = string(v1alpha1.ConsumerKafkaConnector) + "/" + c.Name
	c.Method = v1alpha1.PauseState
	c.PreviousState = connectorState(kc)
	return c, nil
}

// patchConnectorState sets (nil: removes) a KafkaConnector's spec.state,
// only at resourceVersion when it is given.
func (r *ReplayRequestReconciler) patchConnectorState(ctx context.Context, ns, name, version string, st *string) error {
	var v any
	if st != nil {
		v = *st
	}
	body := map[string]any{"spec": map[string]any{"state": v}}
	if version != "" {
		body["metadata"] = map[string]any{"resourceVersion": version}
	}
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	kc := &unstructured.Unstructured{}
	kc.SetGroupVersionKind(strimzi.KafkaConnectorGVK)
	kc.SetNamespace(ns)
	kc.SetName(name)
	return r.Client.Patch(ctx, kc, client.RawPatch(types.MergePatchType, data))
}

// readConnector is what a recorded KafkaConnector looks like now.
func (r *ReplayRequestReconciler) readConnector(ctx context.Context, ns, name string) (consumers.WorkloadState, string, error) {
	kc, err := r.getConnector(ctx, ns, name)
	if apierrors.IsNotFound(err) {
		return consumers.WorkloadState{Gone: true}, "", nil
	}
	if err != nil {
		return consumers.WorkloadState{}, "", err
	}
	return consumers.WorkloadState{State: connectorState(kc)}, kc.GetResourceVersion(), nil
}
