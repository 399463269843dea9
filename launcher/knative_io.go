package launcher

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/knative"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// The reads behind a consumerRef: the Knative objects as unstructured (no
// Knative Go dependency), past the cache (the launcher caches only its own
// objects and may get, not list or watch, these), and two of Knative's own
// ConfigMaps in its system namespace, by name.
//
// +kubebuilder:rbac:groups=sources.knative.dev,resources=kafkasources,verbs=get
// +kubebuilder:rbac:groups=sources.knative.dev,resources=kafkasources/scale,verbs=get;patch
// +kubebuilder:rbac:groups=eventing.knative.dev,resources=triggers;brokers,verbs=get
// +kubebuilder:rbac:groups=messaging.knative.dev,resources=subscriptions;kafkachannels,verbs=get
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get,resourceNames=kafka-channel-config;config-kafka-features

// Knative's ConfigMaps the launcher reads, in KnativeNamespace only: the
// KafkaChannel configuration (control-plane/config/eventing-kafka-broker/
// 100-channel/100-kafka-channel-configmap.yaml) and the features with the
// name templates (200-controller/100-config-kafka-features.yaml).
const (
	knativeChannelConfigMap  = "kafka-channel-config"
	knativeFeaturesConfigMap = "config-kafka-features"
	defaultKnativeNamespace  = "knative-eventing"
)

func (r *ReplayRequestReconciler) knativeNamespace() string {
	if r.Options.KnativeNamespace != "" {
		return r.Options.KnativeNamespace
	}
	return defaultKnativeNamespace
}

// getKnative reads one Knative object; nil, nil when it does not exist. A
// kind the cluster does not serve, or one the launcher may not read, is
// not resolvable, with what to do about it.
func (r *ReplayRequestReconciler) getKnative(ctx context.Context, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, obj)
	switch {
	case err == nil:
		return obj, nil
	case meta.IsNoMatchError(err):
		return nil, knative.Unresolvable("this cluster does not serve %s (%s): is Knative's CRD installed?", gvk.Kind, gvk.GroupVersion())
	case apierrors.IsNotFound(err):
		return nil, nil
	case apierrors.IsForbidden(err):
		return nil, knative.Unresolvable("the launcher may not read %s %s/%s: install the chart with launcher.knative.enabled true", gvk.Kind, ns, name)
	}
	return nil, fmt.Errorf("read %s %s/%s: %w", gvk.Kind, ns, name, err)
}

// readKnativeConfigMap reads one of Knative's ConfigMaps; nil when it
// does not exist or the launcher may not read it.
func (r *ReplayRequestReconciler) readKnativeConfigMap(ctx context.Context, name string) (*knative.ConfigData, error) {
	var cm corev1.ConfigMap
	ns := r.knativeNamespace()
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &cm); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("read ConfigMap %s/%s: %w", ns, name, err)
	}
	return &knative.ConfigData{Namespace: ns, Name: ns + "/" + name, Data: cm.Data}, nil
}

// knativeConfig is the name templates from config-kafka-features, when it
// can be read; upstream's defaults otherwise. Upstream reads the template
// under either spelling of its key (the dotted one and the dashed one).
func (r *ReplayRequestReconciler) knativeConfig(ctx context.Context) (knative.Config, error) {
	cm, err := r.readKnativeConfigMap(ctx, knativeFeaturesConfigMap)
	if err != nil || cm == nil {
		return knative.Config{}, err
	}
	pick := func(keys ...string) string {
		for _, k := range keys {
			if v := cm.Data[k]; v != "" {
				return v
			}
		}
		return ""
	}
	return knative.Config{
		TriggerGroupTemplate: pick("triggers.consumergroup.template", "triggers-consumergroup-template"),
		ChannelTopicTemplate: pick("channels.topic.template", "channels-topic-template"),
	}, nil
}

// resolveConsumerRef reads a request's Knative resource (and its Broker or
// KafkaChannel) and resolves it. An knative.ErrNotResolvable error fails the
// request; any other is retried.
func (r *ReplayRequestReconciler) resolveConsumerRef(ctx context.Context, rr *v1alpha1.ReplayRequest) (*v1alpha1.ResolvedConsumer, error) {
	ref := rr.Spec.ConsumerRef
	if ref.Kind == v1alpha1.ConsumerRefKafkaConnector {
		return r.resolveConnectorRef(ctx, rr)
	}
	if r.Options.NoKnative {
		return nil, knative.Unresolvable("consumerRef: Knative support is turned off in this launcher (--knative=false)")
	}
	ns := rr.Namespace
	var res v1alpha1.ResolvedConsumer
	switch ref.Kind {
	case v1alpha1.KnativeKafkaSource:
		src, err := r.getKnative(ctx, knative.KafkaSourceGVK, ns, ref.Name)
		if err != nil {
			return nil, err
		}
		if src == nil {
			return nil, knative.Unresolvable("consumerRef: KafkaSource %s does not exist in namespace %s", ref.Name, ns)
		}
		if res, err = knative.ResolveKafkaSource(src); err != nil {
			return nil, err
		}
	case v1alpha1.KnativeTrigger:
		trigger, err := r.getKnative(ctx, knative.TriggerGVK, ns, ref.Name)
		if err != nil {
			return nil, err
		}
		if trigger == nil {
			return nil, knative.Unresolvable("consumerRef: Trigger %s does not exist in namespace %s", ref.Name, ns)
		}
		var broker *unstructured.Unstructured
		if name, _, _ := unstructured.NestedString(trigger.Object, "spec", "broker"); name != "" {
			if broker, err = r.getKnative(ctx, knative.BrokerGVK, ns, name); err != nil {
				return nil, err
			}
		}
		cfg, err := r.knativeConfig(ctx)
		if err != nil {
			return nil, err
		}
		if res, err = knative.ResolveTrigger(trigger, broker, cfg); err != nil {
			return nil, err
		}
	case v1alpha1.KnativeSubscription:
		sub, err := r.getKnative(ctx, knative.SubscriptionGVK, ns, ref.Name)
		if err != nil {
			return nil, err
		}
		if sub == nil {
			return nil, knative.Unresolvable("consumerRef: Subscription %s does not exist in namespace %s", ref.Name, ns)
		}
		var channel *unstructured.Unstructured
		kind, _, _ := unstructured.NestedString(sub.Object, "spec", "channel", "kind")
		if name, _, _ := unstructured.NestedString(sub.Object, "spec", "channel", "name"); name != "" && kind == knative.KafkaChannelGVK.Kind {
			if channel, err = r.getKnative(ctx, knative.KafkaChannelGVK, ns, name); err != nil {
				return nil, err
			}
		}
		chcfg, err := r.readKnativeConfigMap(ctx, knativeChannelConfigMap)
		if err != nil {
			return nil, err
		}
		cfg, err := r.knativeConfig(ctx)
		if err != nil {
			return nil, err
		}
		if res, err = knative.ResolveSubscription(sub, channel, chcfg, cfg); err != nil {
			return nil, err
		}
	default:
		return nil, knative.Unresolvable("consumerRef.kind %q is not KafkaSource, Trigger or Subscription", ref.Kind)
	}
	if res.SecretName != "" {
		if err := r.authorizeSecret(ctx, rr, res.SecretName, res.SecretFrom); err != nil {
			return nil, err
		}
	}
	knative.BoundResolved(&res)
	return &res, nil
}

// authorizeSecret holds a Knative resource's Secret to the rule the
// chart's admission policy applies to spec.kafka.secretRef: the request's
// creator must be allowed to get that Secret or to use it. The policy
// cannot check it at admission (the Secret is known only once the resource
// is resolved), so the launcher asks the API server (SubjectAccessReview)
// for the creator as the admission policies stamped them
// (kafkareplay.dev/requested-by and -groups).
func (r *ReplayRequestReconciler) authorizeSecret(ctx context.Context, rr *v1alpha1.ReplayRequest, secret, from string) error {
	user := rr.Annotations[v1alpha1.AnnotationRequestedBy]
	if user == "" {
		return knative.Unresolvable("%s names Secret %s, and the request's creator is unknown (no %s annotation: are the chart's admission policies on?), so the launcher cannot check they may use it", from, secret, v1alpha1.AnnotationRequestedBy)
	}
	var groups []string
	for _, g := range strings.Split(rr.Annotations[v1alpha1.AnnotationRequestedByGroups], ",") {
		if g = strings.TrimSpace(g); g != "" {
			groups = append(groups, g)
		}
	}
	for _, verb := range []string{"get", "use"} {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   user,
			Groups: groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: rr.Namespace, Verb: verb, Resource: "secrets", Name: secret,
			},
		}}
		if err := r.Client.Create(ctx, sar); err != nil {
			return fmt.Errorf("check %s may %s Secret %s: %w", user, verb, secret, err)
		}
		if sar.Status.Allowed {
			return nil
		}
	}
	return knative.Unresolvable("%s names Secret %s, which the request's creator %s may neither get nor use (grant the verb use on it, as for kafka.secretRef)", from, secret, user)
}

// acceptConsumerRef resolves a request's consumerRef at acceptance. A
// status.resolved that is already there was not written by a launcher
// (the launcher writes it only together with Accepted, after which a
// request is never accepted again): it must be what the resolution finds,
// or the request fails, so whoever may write status cannot choose the
// group, the servers or the Secret.
func (r *ReplayRequestReconciler) acceptConsumerRef(ctx context.Context, rr *v1alpha1.ReplayRequest) (*v1alpha1.ResolvedConsumer, error) {
	res, err := r.resolveConsumerRef(ctx, rr)
	if err != nil {
		return nil, err
	}
	if rr.Status.Resolved != nil && !reflect.DeepEqual(*rr.Status.Resolved, *res) {
		return nil, knative.Unresolvable("status.resolved was written before the launcher accepted the request, and is not what %s %s resolves to", rr.Spec.ConsumerRef.Kind, rr.Spec.ConsumerRef.Name)
	}
	return res, nil
}

// authorizeResolved checks again, before a consumerRef or clusterRef
// request's Job is made, that its creator may use the Secret
// status.resolved (or status.resolvedKafka, its user's) names. The
// Secret was checked at acceptance, but whoever may write status could
// also have written Accepted and skipped acceptance: the Job, which mounts
// the Secret, is what must not follow from status alone.
func (r *ReplayRequestReconciler) authorizeResolved(ctx context.Context, rr *v1alpha1.ReplayRequest) error {
	// A KafkaConnector's status.resolved names no Secret: its request's
	// credentials are its clusterRef's user's.
	secret, from := replay.ClusterUserSecret(rr), "status.resolvedKafka.userSecret"
	if res := replay.Resolved(rr); res != nil && !replay.UsesClusterRef(rr) {
		secret, from = res.SecretName, "status.resolved.secretName"
	}
	if secret == "" {
		return nil
	}
	if err := r.authorizeSecret(ctx, rr, secret, from); err != nil {
		if errors.Is(err, knative.ErrNotResolvable) {
			return fmt.Errorf("%w: request %s/%s: %w", errJobRefused, rr.Namespace, rr.Name, err)
		}
		return err
	}
	return nil
}
