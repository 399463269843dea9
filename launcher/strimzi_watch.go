package launcher

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/internal/strimzi"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// A clusterRef request whose Kafka or KafkaUser Strimzi's operator has not
// reconciled yet, or whose KafkaConnector consumerRef's status is behind
// its spec, waits for them (waitForStrimzi); their changes wake it. The
// launcher watches those kinds' metadata only (every status write the
// operator makes changes the resourceVersion, and the object itself is read
// past the cache when the request is reconciled), so their specs and
// statuses never fill its memory.
//
// +kubebuilder:rbac:groups=kafka.strimzi.io,resources=kafkas;kafkausers;kafkaconnectors,verbs=list;watch

// indexStrimziWait indexes the requests not yet accepted by the Strimzi
// objects their clusterRef names (strimziWaitKeys).
const indexStrimziWait = "kafkareplay.dev/strimziWait"

// strimziWaitKeys are the Kafka, the KafkaUser and the KafkaConnector
// consumerRef a request not yet accepted names, as kind/namespace/name; none for any other request, so
// that the index holds only the requests that may wait.
func strimziWaitKeys(rr *v1alpha1.ReplayRequest) []string {
	if !replay.UsesClusterRef(rr) || rr.Status.ResolvedTarget != "" || state.IsFinished(rr) {
		return nil
	}
	ref := rr.Spec.Kafka.ClusterRef
	ns := rr.Namespace
	if ref.Namespace != "" {
		ns = ref.Namespace
	}
	keys := []string{strimziKey(strimzi.KafkaGVK.Kind, ns, ref.Name)}
	if ref.User != "" {
		keys = append(keys, strimziKey(strimzi.KafkaUserGVK.Kind, rr.Namespace, ref.User))
	}
	if c := rr.Spec.ConsumerRef; c != nil && c.Kind == v1alpha1.ConsumerRefKafkaConnector {
		keys = append(keys, strimziKey(strimzi.KafkaConnectorGVK.Kind, rr.Namespace, c.Name))
	}
	return keys
}

func strimziKey(kind, ns, name string) string { return kind + "/" + ns + "/" + name }

// watchStrimzi adds the watches of Kafkas, KafkaUsers and KafkaConnectors to the request
// controller when Strimzi support is on and the cluster serves those kinds
// at kafka.strimzi.io/v1 when the launcher starts; otherwise a request that
// waits for them is woken by nothing but its deadline.
func watchStrimzi(mgr ctrl.Manager, b *builder.Builder, opts Options) *builder.Builder {
	if opts.NoStrimzi {
		return b
	}
	for _, gvk := range []schema.GroupVersionKind{strimzi.KafkaGVK, strimzi.KafkaUserGVK, strimzi.KafkaConnectorGVK} {
		if _, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			mgr.GetLogger().Info("not watching Strimzi's kind: the cluster does not serve it; a clusterRef request waiting for one is woken by its deadline only", "kind", gvk.Kind, "reason", err.Error())
			continue
		}
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(gvk)
		b = b.WatchesMetadata(obj, wakeStrimziWaiters(mgr.GetClient(), gvk.Kind))
	}
	return b
}

// wakeStrimziWaiters enqueues the requests waiting for a Kafka, KafkaUser or
// KafkaConnector when it changes.
func wakeStrimziWaiters(c client.Client, kind string) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		var rrs v1alpha1.ReplayRequestList
		if err := c.List(ctx, &rrs, client.MatchingFields{indexStrimziWait: strimziKey(kind, o.GetNamespace(), o.GetName())}); err != nil {
			log.FromContext(ctx).Error(err, "list requests waiting for a Strimzi object")
			return nil
		}
		out := make([]reconcile.Request, len(rrs.Items))
		for i := range rrs.Items {
			out[i] = reconcile.Request{NamespacedName: types.NamespacedName{Namespace: rrs.Items[i].Namespace, Name: rrs.Items[i].Name}}
		}
		return out
	})
}
