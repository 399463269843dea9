package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/consumers"
	"github.com/kafka-replay/kafka-replay/launcher/internal/knative"
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
// +kubebuilder:rbac:groups=kafka.strimzi.io,resources=kafkaconnects,verbs=get

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
	if r.Options.NoStrimzi {
		return c, errConsumer{fmt.Sprintf("consumers: KafkaConnector %s: Strimzi support is turned off in this launcher (--strimzi=false)", c.Name)}
	}
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

// resolveConnectorRef resolves a KafkaConnector consumerRef: the connector,
// its KafkaConnect and the clusterRef's Kafka, read past the cache, and
// resolved by strimzi.ResolveConnector. A refusal is the consumerRef's
// (knative.ErrNotResolvable, ConsumerRefNotResolved), but a connector whose
// status is not current yet is strimzi.ErrNotReady, waited for; the Kafka's
// own refusals are the clusterRef's, resolved (and waited for) before it.
func (r *ReplayRequestReconciler) resolveConnectorRef(ctx context.Context, rr *v1alpha1.ReplayRequest) (*v1alpha1.ResolvedConsumer, error) {
	name, ns := rr.Spec.ConsumerRef.Name, rr.Namespace
	ref := rr.Spec.Kafka.ClusterRef
	if ref == nil {
		return nil, knative.Unresolvable("consumerRef: a KafkaConnector needs kafka.clusterRef")
	}
	if r.Options.NoStrimzi {
		return nil, knative.Unresolvable("consumerRef: Strimzi support is turned off in this launcher (--strimzi=false)")
	}
	asConsumerRef := func(err error) error {
		if errors.Is(err, strimzi.ErrNotReady) {
			return err // waited for (waitForStrimzi)
		}
		if errors.Is(err, strimzi.ErrNotResolvable) {
			return knative.Unresolvable("%s", strings.TrimPrefix(err.Error(), strimzi.ErrNotResolvable.Error()+": "))
		}
		return err
	}
	connector, err := r.getStrimzi(ctx, strimzi.KafkaConnectorGVK, ns, name)
	if err != nil {
		return nil, asConsumerRef(err)
	}
	var connect, kafka *unstructured.Unstructured
	if connector != nil {
		if c := connector.GetLabels()[strimzi.ClusterLabel]; c != "" {
			if connect, err = r.getStrimzi(ctx, strimzi.KafkaConnectGVK, ns, c); err != nil {
				return nil, asConsumerRef(err)
			}
		}
	}
	if kafka, err = r.getStrimzi(ctx, strimzi.KafkaGVK, ns, ref.Name); err != nil {
		return nil, asConsumerRef(err)
	}
	if kafka == nil {
		return nil, knative.Unresolvable("kafka.clusterRef.name: Kafka %s does not exist in the request's namespace", ref.Name)
	}
	res, err := strimzi.ResolveConnector(name, connector, connect, kafka, ref.Name)
	if err != nil {
		return nil, asConsumerRef(err)
	}
	knative.BoundResolved(&res)
	return &res, nil
}
