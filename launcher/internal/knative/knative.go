package knative

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"text/template"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kafka-replay/kafka-replay/runner/config"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// Resolving a spec.consumerRef: pure functions of the Knative objects as
// the API server returns them (unstructured: the launcher has no Knative Go
// dependency), one per kind, each rule citing the file of
// knative-extensions/eventing-kafka-broker (or knative/eventing) it follows.
// The launcher reads the objects (its knative_io.go); acceptance calls these
// once and stores the result in status.resolved.
//
// A resolution never guesses silently: a resource that is not Ready, or a
// value upstream has not written yet, fails with the field that is missing;
// the one documented fallback (a Trigger's group from the consumer-group
// template when its status has no group.id annotation) says so in warnings.

// Upstream names, all from eventing-kafka-broker unless said otherwise.
const (
	// control-plane/pkg/kafka/topic.go: the Broker's and the KafkaChannel's
	// status annotations.
	knativeTopicAnnotation            = "default.topic"
	knativeBootstrapServersAnnotation = "bootstrap.servers"
	// control-plane/pkg/kafka/topic.go GroupIDConfigMapKey, used as the
	// Trigger's status annotation (kafka.GroupIdAnnotation) by
	// control-plane/pkg/reconciler/trigger/trigger.go.
	knativeGroupIDAnnotation = "group.id"
	// control-plane/pkg/security/config.go: where a Broker's status and the
	// kafka-channel-config ConfigMap name their Secret.
	knativeAuthSecretName      = "auth.secret.ref.name"
	knativeAuthSecretNamespace = "auth.secret.ref.namespace"

	// knative/eventing pkg/apis/eventing/register.go: the Broker class
	// annotation; eventing-kafka-broker's classes are Kafka and
	// KafkaNamespaced (control-plane/pkg/kafka/broker_class.go).
	knativeBrokerClassAnnotation = "eventing.knative.dev/broker.class"

	// control-plane/pkg/apis/sources/v1beta1/kafka_defaults.go: a
	// KafkaSource that KEDA scales carries this class.
	AutoscalingClassAnnotation = "autoscaling.knative.dev/class"
	KEDAClass                  = "keda.autoscaling.knative.dev"

	// defaultTriggerGroupTemplate is upstream's default
	// triggers.consumergroup.template
	// (control-plane/config/eventing-kafka-broker/200-controller/100-config-kafka-features.yaml).
	defaultTriggerGroupTemplate = "knative-trigger-{{ .Namespace }}-{{ .Name }}"
	// defaultChannelTopicTemplate is upstream's default
	// channels.topic.template (same file).
	defaultChannelTopicTemplate = "knative-messaging-kafka.{{ .Namespace }}.{{ .Name }}"
)

// Knative's kinds, as their CRDs serve them.
var (
	KafkaSourceGVK  = schema.GroupVersionKind{Group: "sources.knative.dev", Version: "v1beta1", Kind: "KafkaSource"}
	TriggerGVK      = schema.GroupVersionKind{Group: "eventing.knative.dev", Version: "v1", Kind: "Trigger"}
	BrokerGVK       = schema.GroupVersionKind{Group: "eventing.knative.dev", Version: "v1", Kind: "Broker"}
	SubscriptionGVK = schema.GroupVersionKind{Group: "messaging.knative.dev", Version: "v1", Kind: "Subscription"}
	KafkaChannelGVK = schema.GroupVersionKind{Group: "messaging.knative.dev", Version: "v1beta1", Kind: "KafkaChannel"}
)

var knativeBrokerClasses = []string{"Kafka", "KafkaNamespaced"}

// knativeSecretKeys maps Knative's Secret layout
// (control-plane/pkg/security/secret.go: protocol, sasl.mechanism, user,
// password, ca.crt, user.crt, user.key) to the librdkafka properties the
// runner reads, and keeps the runner's binding key as it is. The legacy
// keys (username, saslType) are not mapped: a Secret with both layouts
// would give two values for one property.
var knativeSecretKeys = []v1alpha1.SecretKeyProperty{
	{Key: "bootstrap.servers", Property: "bootstrap.servers"},
	{Key: "protocol", Property: "security.protocol"},
	{Key: "sasl.mechanism", Property: "sasl.mechanism"},
	{Key: "user", Property: "sasl.username"},
	{Key: "password", Property: "sasl.password"},
	{Key: "ca.crt", Property: "ssl.ca.pem"},
	{Key: "user.crt", Property: "ssl.certificate.pem"},
	{Key: "user.key", Property: "ssl.key.pem"},
}

// Config is what the launcher knows about the Knative installation.
type Config struct {
	// TriggerGroupTemplate is config-kafka-features'
	// triggers.consumergroup.template, for Triggers whose status has no
	// group.id annotation. Empty: upstream's default.
	TriggerGroupTemplate string
	// ChannelTopicTemplate is config-kafka-features' channels.topic.template,
	// for KafkaChannels whose status has no default.topic annotation.
	// Empty: upstream's default.
	ChannelTopicTemplate string
}

// ErrNotResolvable marks a consumerRef that cannot be resolved as it is
// now: missing, not ready, of the wrong kind, or without a value upstream
// should have written. The request fails (reason ConsumerRefNotResolved);
// other errors (the API server unreachable) are retried.
var ErrNotResolvable = errors.New("consumerRef not resolvable")

// Unresolvable is an ErrNotResolvable saying why.
func Unresolvable(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrNotResolvable}, args...)...)
}

// ResolveKafkaSource resolves a sources.knative.dev/v1beta1 KafkaSource,
// following control-plane/pkg/apis/sources/v1beta1/kafka_types.go (the
// fields) and kafka_defaults.go (consumerGroup is set by the webhook when
// empty, so an empty one means the object was never defaulted).
func ResolveKafkaSource(src *unstructured.Unstructured) (v1alpha1.ResolvedConsumer, error) {
	what := "KafkaSource " + src.GetName()
	res := v1alpha1.ResolvedConsumer{Kind: v1alpha1.KnativeKafkaSource, Name: src.GetName(), UID: string(src.GetUID())}
	if err := knativeReady(src, what); err != nil {
		return res, err
	}
	servers, _, _ := unstructured.NestedStringSlice(src.Object, "spec", "bootstrapServers")
	if len(servers) == 0 {
		return res, Unresolvable("%s: spec.bootstrapServers is empty", what)
	}
	res.BootstrapServers = strings.Join(servers, ",")
	res.BootstrapServersFrom = what + ": spec.bootstrapServers"
	group, _, _ := unstructured.NestedString(src.Object, "spec", "consumerGroup")
	if group == "" {
		return res, Unresolvable("%s: spec.consumerGroup is empty (Knative's webhook sets it on creation; was the source created without it?)", what)
	}
	res.Group, res.GroupFrom = group, what+": spec.consumerGroup"
	topics, _, _ := unstructured.NestedStringSlice(src.Object, "spec", "topics")
	if len(topics) == 0 {
		return res, Unresolvable("%s: spec.topics is empty", what)
	}
	res.Topics, res.TopicsFrom = topics, what+": spec.topics"

	// control-plane/pkg/security/secrets_provider_net_spec.go: every
	// credential is a secretKeyRef of its own, to any Secret and key; the
	// runner mounts one Secret, so they must all name the same one.
	refs := []struct{ path, property string }{
		{"sasl.user", "sasl.username"},
		{"sasl.password", "sasl.password"},
		{"sasl.type", "sasl.mechanism"},
		{"tls.caCert", "ssl.ca.pem"},
		{"tls.cert", "ssl.certificate.pem"},
		{"tls.key", "ssl.key.pem"},
	}
	var secret, secretField string
	keys := []v1alpha1.SecretKeyProperty{
		{Key: "bootstrap.servers", Property: "bootstrap.servers"},
		{Key: "protocol", Property: "security.protocol"},
	}
	for _, r := range refs {
		fields := append([]string{"spec", "net"}, strings.Split(r.path, ".")...)
		fields = append(fields, "secretKeyRef")
		name, _, _ := unstructured.NestedString(src.Object, append(fields, "name")...)
		key, _, _ := unstructured.NestedString(src.Object, append(fields, "key")...)
		if name == "" {
			continue
		}
		field := "spec.net." + r.path + ".secretKeyRef"
		if key == "" {
			return res, Unresolvable("%s: %s.key is empty", what, field)
		}
		if secret != "" && name != secret {
			return res, Unresolvable("%s: %s names Secret %s and %s names Secret %s: the runner mounts one Secret, so every credential must be in the same one", what, secretField, secret, field, name)
		}
		if slices.ContainsFunc(keys, func(k v1alpha1.SecretKeyProperty) bool { return k.Key == key && k.Property != r.property }) {
			return res, Unresolvable("%s: %s.key %q is also another credential's key", what, field, key)
		}
		secret, secretField = name, field
		keys = append(keys, v1alpha1.SecretKeyProperty{Key: key, Property: r.property})
	}
	if secret != "" {
		res.SecretName, res.SecretFrom, res.SecretKeys = secret, what+": "+secretField, keys
		// control-plane/pkg/security/secrets_provider_net_spec.go
		// getProtocolFromNetSpec: the protocol follows net.sasl.enable and
		// net.tls.enable, outside the Secret. The runner takes how it
		// presents credentials from the Secret only, so say what to add.
		if p := netSpecProtocol(src); p != "PLAINTEXT" {
			res.Warnings = append(res.Warnings, fmt.Sprintf("the source's net.sasl.enable and net.tls.enable mean security.protocol %s: Secret %s must say so in a protocol key (and sasl.mechanism with SASL), as Knative's Broker Secrets do; the runner never takes them from the source", p, secret))
		}
	}
	if src.GetAnnotations()[AutoscalingClassAnnotation] == KEDAClass {
		res.Pause = "KEDA scales this source (" + AutoscalingClassAnnotation + ": " + KEDAClass + "): with whenGroupActive: Wait it is paused through the ScaledObject of its ConsumerGroup " + string(src.GetUID())
	} else {
		res.Pause = "with whenGroupActive: Wait it is paused through its scale subresource (spec.consumers to 0) and restored afterwards"
	}
	return res, validateResolvedValues(res)
}

func netSpecProtocol(src *unstructured.Unstructured) string {
	sasl, _, _ := unstructured.NestedBool(src.Object, "spec", "net", "sasl", "enable")
	tls, _, _ := unstructured.NestedBool(src.Object, "spec", "net", "tls", "enable")
	switch {
	case sasl && tls:
		return "SASL_SSL"
	case sasl:
		return "SASL_PLAINTEXT"
	case tls:
		return "SSL"
	}
	return "PLAINTEXT"
}

// ResolveTrigger resolves an eventing.knative.dev/v1 Trigger on a Kafka
// Broker, following control-plane/pkg/reconciler/trigger/trigger.go
// (reconcileConsumerGroup: the Broker's status annotations give the topic,
// the bootstrap servers and the Secret, whose namespace is the Broker's
// spec.config namespace when set; the group is the Trigger's group.id
// status annotation, or, for Triggers that do not have it yet, the
// triggers.consumergroup.template executed on the Trigger's metadata).
func ResolveTrigger(trigger, broker *unstructured.Unstructured, cfg Config) (v1alpha1.ResolvedConsumer, error) {
	what := "Trigger " + trigger.GetName()
	res := v1alpha1.ResolvedConsumer{Kind: v1alpha1.KnativeTrigger, Name: trigger.GetName(), UID: string(trigger.GetUID())}
	brokerName, _, _ := unstructured.NestedString(trigger.Object, "spec", "broker")
	if brokerName == "" {
		return res, Unresolvable("%s: spec.broker is empty", what)
	}
	if broker == nil {
		return res, Unresolvable("%s: its Broker %s (spec.broker) does not exist", what, brokerName)
	}
	bwhat := "Broker " + broker.GetName()
	if class := broker.GetAnnotations()[knativeBrokerClassAnnotation]; !slices.Contains(knativeBrokerClasses, class) {
		return res, Unresolvable("%s: its %s has %s %q, not Kafka: only eventing-kafka-broker's Brokers have a Kafka consumer group per Trigger", what, bwhat, knativeBrokerClassAnnotation, class)
	}
	if err := knativeReady(broker, bwhat); err != nil {
		return res, err
	}
	if err := knativeReady(trigger, what); err != nil {
		return res, err
	}
	ann, _, _ := unstructured.NestedStringMap(broker.Object, "status", "annotations")
	topic := ann[knativeTopicAnnotation]
	if topic == "" {
		return res, Unresolvable("%s: status.annotations[%s] is missing", bwhat, knativeTopicAnnotation)
	}
	res.Topics, res.TopicsFrom = []string{topic}, bwhat+": status.annotations["+knativeTopicAnnotation+"]"
	servers := ann[knativeBootstrapServersAnnotation]
	if normaliseKnativeServers(servers) == "" {
		return res, Unresolvable("%s: status.annotations[%s] is missing", bwhat, knativeBootstrapServersAnnotation)
	}
	res.BootstrapServers, res.BootstrapServersFrom = normaliseKnativeServers(servers), bwhat+": status.annotations["+knativeBootstrapServersAnnotation+"]"
	if name := ann[knativeAuthSecretName]; name != "" {
		ns, _, _ := unstructured.NestedString(broker.Object, "spec", "config", "namespace")
		if ns == "" {
			ns = broker.GetNamespace()
		}
		if ns != trigger.GetNamespace() {
			return res, Unresolvable("%s: its Secret %s/%s (status.annotations[%s], namespace from spec.config.namespace) is not in the request's namespace %s: a runner pod mounts only Secrets of its own namespace; copy the Secret here and name it in a Broker of this namespace, or use kafka.secretRef", bwhat, ns, name, knativeAuthSecretName, trigger.GetNamespace())
		}
		res.SecretName, res.SecretFrom, res.SecretKeys = name, bwhat+": status.annotations["+knativeAuthSecretName+"]", slices.Clone(knativeSecretKeys)
	}
	tann, _, _ := unstructured.NestedStringMap(trigger.Object, "status", "annotations")
	if g := tann[knativeGroupIDAnnotation]; g != "" {
		res.Group, res.GroupFrom = g, what+": status.annotations["+knativeGroupIDAnnotation+"]"
	} else {
		tmpl, from := cfg.TriggerGroupTemplate, "triggers.consumergroup.template"
		if tmpl == "" {
			tmpl, from = defaultTriggerGroupTemplate, "upstream's default triggers.consumergroup.template"
		}
		g, err := executeKnativeTemplate(tmpl, trigger)
		if err != nil {
			return res, Unresolvable("%s: status.annotations[%s] is missing and %s %q fails: %v", what, knativeGroupIDAnnotation, from, tmpl, err)
		}
		res.Group, res.GroupFrom = g, fmt.Sprintf("%s: %s %q (status.annotations[%s] is missing)", what, from, tmpl, knativeGroupIDAnnotation)
		res.Warnings = append(res.Warnings, fmt.Sprintf("the group is computed from the template, not read from the Trigger's status.annotations[%s]: check it is the group the Broker's dispatcher uses (Triggers made by eventing-kafka-broker before 1.10 used their UID, %s)", knativeGroupIDAnnotation, trigger.GetUID()))
	}
	res.Pause = "no safe per-resource pause: a Kafka Broker's dispatchers are shared by all its Triggers, so the launcher pauses nothing and whenGroupActive decides (Wait until the Trigger's group is empty, or Fail)"
	return res, validateResolvedValues(res)
}

// ResolveSubscription resolves a messaging.knative.dev/v1 Subscription to
// a messaging.knative.dev/v1beta1 KafkaChannel, following
// control-plane/pkg/reconciler/channel/v2/channelv2.go: the group is
// consumerGroup(channel, subscriber), kafka.<namespace>.<channel>.<the
// Subscription's UID> (the channel's spec.subscribers[].uid is the
// Subscription's, knative/eventing pkg/reconciler/subscription); the topic
// is the channel's default.topic status annotation (else
// channels.topic.template on the channel's metadata); the bootstrap servers
// and the Secret come from the channel configuration ConfigMap
// (kafka-channel-config: bootstrap.servers, auth.secret.ref.name and
// auth.secret.ref.namespace, control-plane/pkg/security/config.go
// MTConfigMapSecretLocator with UseNamespaceInConfigmap).
func ResolveSubscription(sub, channel *unstructured.Unstructured, channelConfig *ConfigData, cfg Config) (v1alpha1.ResolvedConsumer, error) {
	what := "Subscription " + sub.GetName()
	res := v1alpha1.ResolvedConsumer{Kind: v1alpha1.KnativeSubscription, Name: sub.GetName(), UID: string(sub.GetUID())}
	kind, _, _ := unstructured.NestedString(sub.Object, "spec", "channel", "kind")
	chName, _, _ := unstructured.NestedString(sub.Object, "spec", "channel", "name")
	if kind != "KafkaChannel" {
		return res, Unresolvable("%s: spec.channel.kind is %q, not KafkaChannel: only a KafkaChannel has a Kafka consumer group per Subscription", what, kind)
	}
	if chName == "" {
		return res, Unresolvable("%s: spec.channel.name is empty", what)
	}
	if channel == nil {
		return res, Unresolvable("%s: its KafkaChannel %s (spec.channel.name) does not exist", what, chName)
	}
	cwhat := "KafkaChannel " + channel.GetName()
	if err := knativeReady(sub, what); err != nil {
		return res, err
	}
	subscribers, _, _ := unstructured.NestedSlice(channel.Object, "spec", "subscribers")
	if !slices.ContainsFunc(subscribers, func(s any) bool {
		m, _ := s.(map[string]any)
		uid, _ := m["uid"].(string)
		return uid != "" && uid == string(sub.GetUID())
	}) {
		return res, Unresolvable("%s: spec.subscribers has no entry with the Subscription's UID %s: the channel has not taken the Subscription yet", cwhat, sub.GetUID())
	}
	res.Group = fmt.Sprintf("kafka.%s.%s.%s", channel.GetNamespace(), channel.GetName(), sub.GetUID())
	res.GroupFrom = fmt.Sprintf("kafka.<namespace>.<channel>.<Subscription UID> with %s: metadata.uid", what)

	ann, _, _ := unstructured.NestedStringMap(channel.Object, "status", "annotations")
	if t := ann[knativeTopicAnnotation]; t != "" {
		res.Topics, res.TopicsFrom = []string{t}, cwhat+": status.annotations["+knativeTopicAnnotation+"]"
	} else {
		tmpl, from := cfg.ChannelTopicTemplate, "channels.topic.template"
		if tmpl == "" {
			tmpl, from = defaultChannelTopicTemplate, "upstream's default channels.topic.template"
		}
		t, err := executeKnativeTemplate(tmpl, channel)
		if err != nil {
			return res, Unresolvable("%s: status.annotations[%s] is missing and %s %q fails: %v", cwhat, knativeTopicAnnotation, from, tmpl, err)
		}
		res.Topics = []string{t}
		res.TopicsFrom = fmt.Sprintf("%s: %s %q (status.annotations[%s] is missing)", cwhat, from, tmpl, knativeTopicAnnotation)
		res.Warnings = append(res.Warnings, "the topic is computed from the channel topic template, not read from the KafkaChannel's status: check it")
	}
	if channelConfig == nil {
		return res, Unresolvable("the KafkaChannel configuration ConfigMap (kafka-channel-config in Knative's namespace) cannot be read: it has the bootstrap servers")
	}
	servers := channelConfig.Data[knativeBootstrapServersAnnotation]
	if normaliseKnativeServers(servers) == "" {
		return res, Unresolvable("ConfigMap %s: data[%s] is missing", channelConfig.Name, knativeBootstrapServersAnnotation)
	}
	res.BootstrapServers, res.BootstrapServersFrom = normaliseKnativeServers(servers), "ConfigMap "+channelConfig.Name+": data["+knativeBootstrapServersAnnotation+"]"
	if name := channelConfig.Data[knativeAuthSecretName]; name != "" {
		ns := channelConfig.Data[knativeAuthSecretNamespace]
		if ns == "" {
			ns = channelConfig.Namespace
		}
		if ns != sub.GetNamespace() {
			return res, Unresolvable("ConfigMap %s: the channel's Secret %s/%s (data[%s], data[%s]) is not in the request's namespace %s: a runner pod mounts only Secrets of its own namespace", channelConfig.Name, ns, name, knativeAuthSecretName, knativeAuthSecretNamespace, sub.GetNamespace())
		}
		res.SecretName, res.SecretFrom, res.SecretKeys = name, "ConfigMap "+channelConfig.Name+": data["+knativeAuthSecretName+"]", slices.Clone(knativeSecretKeys)
	}
	res.Pause = "no safe per-resource pause: a KafkaChannel's dispatchers are shared by all its Subscriptions, so the launcher pauses nothing and whenGroupActive decides (Wait until the Subscription's group is empty, or Fail)"
	return res, validateResolvedValues(res)
}

// ConfigData is a ConfigMap's name (namespace/name) and data, as read.
type ConfigData struct {
	Namespace string
	Name      string
	Data      map[string]string
}

// knativeReady requires a Knative object's Ready condition to be True
// (knative.dev/pkg apis.ConditionReady): before that its status values
// may be absent or stale.
func knativeReady(obj *unstructured.Unstructured, what string) error {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] != "Ready" {
			continue
		}
		if m["status"] == string(metav1.ConditionTrue) {
			return nil
		}
		reason, _ := m["reason"].(string)
		msg, _ := m["message"].(string)
		return Unresolvable("%s is not ready (status.conditions Ready is %v: %s %s)", what, m["status"], reason, state.Truncate(msg, 256))
	}
	return Unresolvable("%s is not ready: status.conditions has no Ready condition (is eventing-kafka-broker's controller running?)", what)
}

// executeKnativeTemplate runs an upstream name template on an object's
// metadata, as control-plane/pkg/apis/config (ExecuteTriggersConsumerGroupTemplate,
// ExecuteChannelsTopicTemplate) does on its metav1.ObjectMeta.
func executeKnativeTemplate(tmpl string, obj *unstructured.Unstructured) (string, error) {
	t, err := template.New("name").Option("missingkey=error").Parse(tmpl)
	if err != nil {
		return "", err
	}
	meta := metav1.ObjectMeta{
		Name: obj.GetName(), Namespace: obj.GetNamespace(), UID: obj.GetUID(),
		Labels: obj.GetLabels(), Annotations: obj.GetAnnotations(), Generation: obj.GetGeneration(),
	}
	var b bytes.Buffer
	if err := t.Execute(&b, meta); err != nil {
		return "", err
	}
	return b.String(), nil
}

// normaliseKnativeServers joins a Knative bootstrap list
// (control-plane/pkg/kafka/topic.go BootstrapServersArray) in the runner's
// syntax, split as every bootstrap list is (replay.ServerList).
func normaliseKnativeServers(s string) string {
	return strings.Join(replay.ServerList(s), ",")
}

var knativeTopicName = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`)

// BoundResolved cuts the descriptive fields to what the CRD stores: a
// template or a Ready message may be long, and a status write the API
// server refuses would leave the request unaccepted, retried for ever.
func BoundResolved(res *v1alpha1.ResolvedConsumer) {
	for _, f := range []*string{&res.BootstrapServersFrom, &res.GroupFrom, &res.TopicsFrom, &res.SecretFrom} {
		*f = state.Truncate(*f, 512)
	}
	res.Pause = state.Truncate(res.Pause, 1024)
	for i := range res.Warnings {
		res.Warnings[i] = state.Truncate(res.Warnings[i], 1024)
	}
}

// validateResolvedValues applies the runner's own rules to what a
// resolution found, so a value the runner would refuse fails at acceptance
// naming where it came from.
func validateResolvedValues(res v1alpha1.ResolvedConsumer) error {
	if err := config.ValidateBootstrapServers(res.BootstrapServers); err != nil {
		return Unresolvable("%s: %v", res.BootstrapServersFrom, err)
	}
	if len(res.BootstrapServers) > 512 {
		return Unresolvable("%s: %d characters, more than 512", res.BootstrapServersFrom, len(res.BootstrapServers))
	}
	if err := config.ValidateGroup(res.Group); err != nil {
		return Unresolvable("%s: %v", res.GroupFrom, err)
	}
	if len(res.Topics) > 100 {
		return Unresolvable("%s: %d topics, more than the 100 a request may replay", res.TopicsFrom, len(res.Topics))
	}
	for _, t := range res.Topics {
		if !knativeTopicName.MatchString(t) || t == "." || t == ".." {
			return Unresolvable("%s: %q is not a Kafka topic name", res.TopicsFrom, t)
		}
	}
	return nil
}

// ValidateRef is the spec side of the launcher's ValidateSpec for a
// consumerRef.
func ValidateRef(ref v1alpha1.KnativeRef) error {
	switch ref.Kind {
	case v1alpha1.KnativeKafkaSource, v1alpha1.KnativeTrigger, v1alpha1.KnativeSubscription, v1alpha1.ConsumerRefKafkaConnector:
	default:
		return fmt.Errorf("consumerRef.kind: %q is not KafkaSource, Trigger, Subscription or KafkaConnector", ref.Kind)
	}
	if ref.Name == "" {
		return errors.New("consumerRef.name: empty")
	}
	return nil
}

// ValidateResolved is the launcher's BuildJob's check of a consumerRef request's
// status.resolved: it must belong to the spec's consumerRef and pass the
// runner's rules, else no Job is made from it.
func ValidateResolved(rr *v1alpha1.ReplayRequest) error {
	if !replay.UsesConsumerRef(rr) {
		return nil
	}
	res := replay.Resolved(rr)
	if res == nil {
		return fmt.Errorf("status.resolved does not resolve consumerRef %s %s", rr.Spec.ConsumerRef.Kind, rr.Spec.ConsumerRef.Name)
	}
	if err := validateResolvedValues(*res); err != nil {
		return fmt.Errorf("status.resolved: %w", err)
	}
	if rr.Spec.Target.FromGroup != nil && *rr.Spec.Target.FromGroup == res.Group {
		return errors.New("target.fromGroup: names the group being repositioned (status.resolved.group)")
	}
	for _, k := range res.SecretKeys {
		if k.Key == "" || k.Property == "" || strings.ContainsAny(k.Property, "/\x00") || strings.HasPrefix(k.Property, ".") {
			return fmt.Errorf("status.resolved.secretKeys: %q -> %q is not a key and a property name", k.Key, k.Property)
		}
	}
	return nil
}
