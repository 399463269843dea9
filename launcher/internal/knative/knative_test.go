package knative

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// Objects shaped as eventing-kafka-broker writes them: the spec as a user
// (and Knative's webhook defaults) leave it, the status as its controllers
// write it (conditions, status.annotations).

func knObj(apiVersion, kind, name, uid string, spec, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": "shop", "uid": uid},
	}}
	if spec != nil {
		u.Object["spec"] = spec
	}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func ready(extra map[string]any) map[string]any {
	st := map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
	for k, v := range extra {
		st[k] = v
	}
	return st
}

func notReady(reason string) map[string]any {
	return map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": reason, "message": "waiting"}}}
}

func kafkaSource(mut func(spec map[string]any), status map[string]any) *unstructured.Unstructured {
	spec := map[string]any{
		"bootstrapServers": []any{"kafka-0.kafka:9092", "kafka-1.kafka:9092"},
		"topics":           []any{"orders", "refunds"},
		"consumerGroup":    "knative-kafka-source-7d1c",
		"consumers":        int64(2),
		"sink":             map[string]any{"ref": map[string]any{"apiVersion": "v1", "kind": "Service", "name": "handler"}},
	}
	if mut != nil {
		mut(spec)
	}
	return knObj("sources.knative.dev/v1beta1", "KafkaSource", "orders-source", "src-uid", spec, status)
}

func secretRef(name, key string) map[string]any {
	return map[string]any{"secretKeyRef": map[string]any{"name": name, "key": key}}
}

func TestResolveKafkaSource(t *testing.T) {
	tests := []struct {
		name      string
		src       *unstructured.Unstructured
		annotate  map[string]string
		want      v1alpha1.ResolvedConsumer
		wantErr   string // substring; "" means success
		wantWarn  string
		wantPause string
	}{{
		name: "plain source",
		src:  kafkaSource(nil, ready(nil)),
		want: v1alpha1.ResolvedConsumer{
			Kind: v1alpha1.KnativeKafkaSource, Name: "orders-source", UID: "src-uid",
			BootstrapServers: "kafka-0.kafka:9092,kafka-1.kafka:9092", BootstrapServersFrom: "KafkaSource orders-source: spec.bootstrapServers",
			Group: "knative-kafka-source-7d1c", GroupFrom: "KafkaSource orders-source: spec.consumerGroup",
			Topics: []string{"orders", "refunds"}, TopicsFrom: "KafkaSource orders-source: spec.topics",
		},
		wantPause: "scale subresource",
	}, {
		name: "SASL over TLS, every credential in one Secret",
		src: kafkaSource(func(s map[string]any) {
			s["net"] = map[string]any{
				"sasl": map[string]any{"enable": true, "user": secretRef("kafka-creds", "user"), "password": secretRef("kafka-creds", "password"), "type": secretRef("kafka-creds", "saslType")},
				"tls":  map[string]any{"enable": true, "caCert": secretRef("kafka-creds", "ca.crt")},
			}
		}, ready(nil)),
		want: v1alpha1.ResolvedConsumer{
			SecretName: "kafka-creds", SecretFrom: "KafkaSource orders-source: spec.net.tls.caCert.secretKeyRef",
			SecretKeys: []v1alpha1.SecretKeyProperty{
				{Key: "bootstrap.servers", Property: "bootstrap.servers"},
				{Key: "protocol", Property: "security.protocol"},
				{Key: "user", Property: "sasl.username"},
				{Key: "password", Property: "sasl.password"},
				{Key: "saslType", Property: "sasl.mechanism"},
				{Key: "ca.crt", Property: "ssl.ca.pem"},
			},
		},
		wantWarn: "security.protocol SASL_SSL",
	}, {
		name: "credentials in two Secrets",
		src: kafkaSource(func(s map[string]any) {
			s["net"] = map[string]any{"sasl": map[string]any{"enable": true, "user": secretRef("a", "user"), "password": secretRef("b", "password")}}
		}, ready(nil)),
		wantErr: "spec.net.sasl.user.secretKeyRef names Secret a and spec.net.sasl.password.secretKeyRef names Secret b",
	}, {
		name: "one key for two credentials",
		src: kafkaSource(func(s map[string]any) {
			s["net"] = map[string]any{"sasl": map[string]any{"enable": true, "user": secretRef("a", "k"), "password": secretRef("a", "k")}}
		}, ready(nil)),
		wantErr: `spec.net.sasl.password.secretKeyRef.key "k" is also another credential's key`,
	}, {
		name: "secretKeyRef without a key",
		src: kafkaSource(func(s map[string]any) {
			s["net"] = map[string]any{"sasl": map[string]any{"enable": true, "user": map[string]any{"secretKeyRef": map[string]any{"name": "a"}}}}
		}, ready(nil)),
		wantErr: "spec.net.sasl.user.secretKeyRef.key is empty",
	}, {
		name:      "KEDA scales it",
		src:       kafkaSource(nil, ready(nil)),
		annotate:  map[string]string{"autoscaling.knative.dev/class": "keda.autoscaling.knative.dev"},
		wantPause: "ScaledObject of its ConsumerGroup src-uid",
	}, {
		name:    "not ready",
		src:     kafkaSource(nil, notReady("NotScheduled")),
		wantErr: "KafkaSource orders-source is not ready (status.conditions Ready is False: NotScheduled waiting)",
	}, {
		name:    "no status at all",
		src:     kafkaSource(nil, nil),
		wantErr: "status.conditions has no Ready condition",
	}, {
		name:    "consumerGroup never defaulted",
		src:     kafkaSource(func(s map[string]any) { delete(s, "consumerGroup") }, ready(nil)),
		wantErr: "spec.consumerGroup is empty",
	}, {
		name:    "no bootstrap servers",
		src:     kafkaSource(func(s map[string]any) { s["bootstrapServers"] = []any{} }, ready(nil)),
		wantErr: "spec.bootstrapServers is empty",
	}, {
		name:    "bad bootstrap server",
		src:     kafkaSource(func(s map[string]any) { s["bootstrapServers"] = []any{"kafka-0"} }, ready(nil)),
		wantErr: "KafkaSource orders-source: spec.bootstrapServers: ",
	}, {
		name:    "no topics",
		src:     kafkaSource(func(s map[string]any) { delete(s, "topics") }, ready(nil)),
		wantErr: "spec.topics is empty",
	}, {
		name:    "topic that is a pattern",
		src:     kafkaSource(func(s map[string]any) { s["topics"] = []any{"orders-.*"} }, ready(nil)),
		wantErr: `"orders-.*" is not a Kafka topic name`,
	}, {
		name:    "group with a control character",
		src:     kafkaSource(func(s map[string]any) { s["consumerGroup"] = "a\nb" }, ready(nil)),
		wantErr: "KafkaSource orders-source: spec.consumerGroup: ",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.annotate != nil {
				tc.src.SetAnnotations(tc.annotate)
			}
			got, err := ResolveKafkaSource(tc.src)
			checkResolved(t, got, err, tc.want, tc.wantErr, tc.wantWarn, tc.wantPause)
		})
	}
}

// checkResolved compares the fields tc.want sets (zero fields are not
// checked, so each case says only what it is about).
func checkResolved(t *testing.T, got v1alpha1.ResolvedConsumer, err error, want v1alpha1.ResolvedConsumer, wantErr, wantWarn, wantPause string) {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("error = %v, want one containing %q", err, wantErr)
		}
		if !errors.Is(err, ErrNotResolvable) {
			t.Fatalf("error %v is not ErrNotResolvable: it would be retried instead of failing the request", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	check := func(name, g, w string) {
		if w != "" && g != w {
			t.Errorf("%s = %q, want %q", name, g, w)
		}
	}
	check("kind", string(got.Kind), string(want.Kind))
	check("name", got.Name, want.Name)
	check("uid", got.UID, want.UID)
	check("bootstrapServers", got.BootstrapServers, want.BootstrapServers)
	check("bootstrapServersFrom", got.BootstrapServersFrom, want.BootstrapServersFrom)
	check("group", got.Group, want.Group)
	check("groupFrom", got.GroupFrom, want.GroupFrom)
	check("topicsFrom", got.TopicsFrom, want.TopicsFrom)
	check("secretName", got.SecretName, want.SecretName)
	check("secretFrom", got.SecretFrom, want.SecretFrom)
	if want.Topics != nil && !slices.Equal(got.Topics, want.Topics) {
		t.Errorf("topics = %v, want %v", got.Topics, want.Topics)
	}
	if want.SecretKeys != nil && !slices.Equal(got.SecretKeys, want.SecretKeys) {
		t.Errorf("secretKeys = %v, want %v", got.SecretKeys, want.SecretKeys)
	}
	if want.SecretName == "" && got.SecretName != "" {
		t.Errorf("secretName = %q, want none", got.SecretName)
	}
	if wantWarn != "" && !slices.ContainsFunc(got.Warnings, func(w string) bool { return strings.Contains(w, wantWarn) }) {
		t.Errorf("warnings = %q, want one containing %q", got.Warnings, wantWarn)
	}
	if wantWarn == "" && len(got.Warnings) > 0 {
		t.Errorf("warnings = %q, want none", got.Warnings)
	}
	if wantPause != "" && !strings.Contains(got.Pause, wantPause) {
		t.Errorf("pause = %q, want it to contain %q", got.Pause, wantPause)
	}
}

func kafkaBroker(class string, status map[string]any, configNS string) *unstructured.Unstructured {
	spec := map[string]any{"config": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "kafka-broker-config", "namespace": "knative-eventing"}}
	if configNS != "" {
		spec["config"].(map[string]any)["namespace"] = configNS
	} else {
		delete(spec["config"].(map[string]any), "namespace")
	}
	b := knObj("eventing.knative.dev/v1", "Broker", "default", "broker-uid", spec, status)
	if class != "" {
		b.SetAnnotations(map[string]string{"eventing.knative.dev/broker.class": class})
	}
	return b
}

func brokerReady(ann map[string]any) map[string]any {
	a := map[string]any{"default.topic": "knative-broker-shop-default", "bootstrap.servers": "kafka-0.kafka:9092, kafka-1.kafka:9092"}
	for k, v := range ann {
		if v == nil {
			delete(a, k)
		} else {
			a[k] = v
		}
	}
	return ready(map[string]any{"annotations": a})
}

func trigger(status map[string]any) *unstructured.Unstructured {
	return knObj("eventing.knative.dev/v1", "Trigger", "orders-trigger", "trig-uid",
		map[string]any{"broker": "default", "subscriber": map[string]any{"ref": map[string]any{"apiVersion": "v1", "kind": "Service", "name": "handler"}}},
		status)
}

func TestResolveTrigger(t *testing.T) {
	withGroup := ready(map[string]any{"annotations": map[string]any{"group.id": "knative-trigger-shop-orders-trigger"}})
	tests := []struct {
		name     string
		trigger  *unstructured.Unstructured
		broker   *unstructured.Unstructured
		cfg      Config
		want     v1alpha1.ResolvedConsumer
		wantErr  string
		wantWarn string
	}{{
		name:    "group from the status annotation",
		trigger: trigger(withGroup),
		broker:  kafkaBroker("Kafka", brokerReady(nil), ""),
		want: v1alpha1.ResolvedConsumer{
			Kind: v1alpha1.KnativeTrigger, Name: "orders-trigger", UID: "trig-uid",
			BootstrapServers: "kafka-0.kafka:9092,kafka-1.kafka:9092", BootstrapServersFrom: "Broker default: status.annotations[bootstrap.servers]",
			Group: "knative-trigger-shop-orders-trigger", GroupFrom: "Trigger orders-trigger: status.annotations[group.id]",
			Topics: []string{"knative-broker-shop-default"}, TopicsFrom: "Broker default: status.annotations[default.topic]",
		},
	}, {
		name:     "no group.id annotation: upstream's default template",
		trigger:  trigger(ready(nil)),
		broker:   kafkaBroker("Kafka", brokerReady(nil), ""),
		want:     v1alpha1.ResolvedConsumer{Group: "knative-trigger-shop-orders-trigger", GroupFrom: `Trigger orders-trigger: upstream's default triggers.consumergroup.template "knative-trigger-{{ .Namespace }}-{{ .Name }}" (status.annotations[group.id] is missing)`},
		wantWarn: "not read from the Trigger's status.annotations[group.id]",
	}, {
		name:     "no group.id annotation: the installation's template",
		trigger:  trigger(ready(nil)),
		broker:   kafkaBroker("Kafka", brokerReady(nil), ""),
		cfg:      Config{TriggerGroupTemplate: "cg-{{ .UID }}"},
		want:     v1alpha1.ResolvedConsumer{Group: "cg-trig-uid"},
		wantWarn: "computed from the template",
	}, {
		name:    "a template that fails",
		trigger: trigger(ready(nil)),
		broker:  kafkaBroker("Kafka", brokerReady(nil), ""),
		cfg:     Config{TriggerGroupTemplate: "cg-{{ .Nope }}"},
		wantErr: "status.annotations[group.id] is missing and triggers.consumergroup.template",
	}, {
		name:    "the Broker's Secret in the request's namespace",
		trigger: trigger(withGroup),
		broker:  kafkaBroker("Kafka", brokerReady(map[string]any{"auth.secret.ref.name": "kafka-creds"}), ""),
		want:    v1alpha1.ResolvedConsumer{SecretName: "kafka-creds", SecretFrom: "Broker default: status.annotations[auth.secret.ref.name]", SecretKeys: knativeSecretKeys},
	}, {
		name:    "the Broker's Secret in Knative's namespace",
		trigger: trigger(withGroup),
		broker:  kafkaBroker("Kafka", brokerReady(map[string]any{"auth.secret.ref.name": "kafka-creds"}), "knative-eventing"),
		wantErr: "its Secret knative-eventing/kafka-creds (status.annotations[auth.secret.ref.name], namespace from spec.config.namespace) is not in the request's namespace shop",
	}, {
		name:    "a namespaced Kafka Broker",
		trigger: trigger(withGroup),
		broker:  kafkaBroker("KafkaNamespaced", brokerReady(nil), "shop"),
		want:    v1alpha1.ResolvedConsumer{Group: "knative-trigger-shop-orders-trigger"},
	}, {
		name:    "a Broker of another class",
		trigger: trigger(withGroup),
		broker:  kafkaBroker("MTChannelBasedBroker", brokerReady(nil), ""),
		wantErr: `eventing.knative.dev/broker.class "MTChannelBasedBroker", not Kafka`,
	}, {
		name:    "no Broker",
		trigger: trigger(withGroup),
		wantErr: "its Broker default (spec.broker) does not exist",
	}, {
		name:    "Broker not ready",
		trigger: trigger(withGroup),
		broker:  kafkaBroker("Kafka", notReady("TopicNotPresent"), ""),
		wantErr: "Broker default is not ready",
	}, {
		name:    "Trigger not ready",
		trigger: trigger(notReady("SubscriberResolved")),
		broker:  kafkaBroker("Kafka", brokerReady(nil), ""),
		wantErr: "Trigger orders-trigger is not ready",
	}, {
		name:    "Broker without its topic annotation",
		trigger: trigger(withGroup),
		broker:  kafkaBroker("Kafka", brokerReady(map[string]any{"default.topic": nil}), ""),
		wantErr: "Broker default: status.annotations[default.topic] is missing",
	}, {
		name:    "Broker without its servers annotation",
		trigger: trigger(withGroup),
		broker:  kafkaBroker("Kafka", brokerReady(map[string]any{"bootstrap.servers": " , "}), ""),
		wantErr: "Broker default: status.annotations[bootstrap.servers] is missing",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveTrigger(tc.trigger, tc.broker, tc.cfg)
			checkResolved(t, got, err, tc.want, tc.wantErr, tc.wantWarn, "")
			if err == nil && !strings.Contains(got.Pause, "no safe per-resource pause") {
				t.Errorf("pause = %q, want it to say there is no safe per-resource pause", got.Pause)
			}
		})
	}
}

func subscription(channelKind string, status map[string]any) *unstructured.Unstructured {
	return knObj("messaging.knative.dev/v1", "Subscription", "orders-sub", "sub-uid",
		map[string]any{
			"channel":    map[string]any{"apiVersion": "messaging.knative.dev/v1beta1", "kind": channelKind, "name": "orders"},
			"subscriber": map[string]any{"ref": map[string]any{"apiVersion": "v1", "kind": "Service", "name": "handler"}},
		}, status)
}

func kafkaChannel(subscriberUID string, status map[string]any) *unstructured.Unstructured {
	spec := map[string]any{"numPartitions": int64(3), "replicationFactor": int64(1)}
	if subscriberUID != "" {
		spec["subscribers"] = []any{
			map[string]any{"uid": "someone-else", "generation": int64(1), "subscriberUri": "http://other"},
			map[string]any{"uid": subscriberUID, "generation": int64(1), "subscriberUri": "http://handler.shop.svc.cluster.local"},
		}
	}
	return knObj("messaging.knative.dev/v1beta1", "KafkaChannel", "orders", "chan-uid", spec, status)
}

func TestResolveSubscription(t *testing.T) {
	chReady := ready(map[string]any{"annotations": map[string]any{"default.topic": "knative-messaging-kafka.shop.orders"}})
	cm := func(data map[string]string) *ConfigData {
		return &ConfigData{Namespace: "knative-eventing", Name: "knative-eventing/kafka-channel-config", Data: data}
	}
	servers := map[string]string{"bootstrap.servers": "kafka-0.kafka:9092"}
	tests := []struct {
		name     string
		sub      *unstructured.Unstructured
		channel  *unstructured.Unstructured
		config   *ConfigData
		want     v1alpha1.ResolvedConsumer
		wantErr  string
		wantWarn string
	}{{
		name:    "subscription to a KafkaChannel",
		sub:     subscription("KafkaChannel", ready(nil)),
		channel: kafkaChannel("sub-uid", chReady),
		config:  cm(servers),
		want: v1alpha1.ResolvedConsumer{
			Kind: v1alpha1.KnativeSubscription, Name: "orders-sub", UID: "sub-uid",
			Group: "kafka.shop.orders.sub-uid", BootstrapServers: "kafka-0.kafka:9092",
			BootstrapServersFrom: "ConfigMap knative-eventing/kafka-channel-config: data[bootstrap.servers]",
			Topics:               []string{"knative-messaging-kafka.shop.orders"}, TopicsFrom: "KafkaChannel orders: status.annotations[default.topic]",
		},
	}, {
		name:     "no topic annotation: the channel topic template",
		sub:      subscription("KafkaChannel", ready(nil)),
		channel:  kafkaChannel("sub-uid", ready(nil)),
		config:   cm(servers),
		want:     v1alpha1.ResolvedConsumer{Topics: []string{"knative-messaging-kafka.shop.orders"}},
		wantWarn: "channel topic template",
	}, {
		name:    "the channel's Secret in the request's namespace",
		sub:     subscription("KafkaChannel", ready(nil)),
		channel: kafkaChannel("sub-uid", chReady),
		config:  cm(map[string]string{"bootstrap.servers": "kafka-0.kafka:9092", "auth.secret.ref.name": "kafka-creds", "auth.secret.ref.namespace": "shop"}),
		want:    v1alpha1.ResolvedConsumer{SecretName: "kafka-creds", SecretKeys: knativeSecretKeys},
	}, {
		name:    "the channel's Secret in Knative's namespace",
		sub:     subscription("KafkaChannel", ready(nil)),
		channel: kafkaChannel("sub-uid", chReady),
		config:  cm(map[string]string{"bootstrap.servers": "kafka-0.kafka:9092", "auth.secret.ref.name": "kafka-creds"}),
		wantErr: "the channel's Secret knative-eventing/kafka-creds",
	}, {
		name:    "an InMemoryChannel",
		sub:     subscription("InMemoryChannel", ready(nil)),
		wantErr: `spec.channel.kind is "InMemoryChannel", not KafkaChannel`,
	}, {
		name:    "no channel",
		sub:     subscription("KafkaChannel", ready(nil)),
		config:  cm(servers),
		wantErr: "its KafkaChannel orders (spec.channel.name) does not exist",
	}, {
		name:    "subscription not ready",
		sub:     subscription("KafkaChannel", notReady("NotAddedToChannel")),
		channel: kafkaChannel("sub-uid", chReady),
		config:  cm(servers),
		wantErr: "Subscription orders-sub is not ready",
	}, {
		name:    "channel has not taken the subscriber",
		sub:     subscription("KafkaChannel", ready(nil)),
		channel: kafkaChannel("", chReady),
		config:  cm(servers),
		wantErr: "spec.subscribers has no entry with the Subscription's UID sub-uid",
	}, {
		name:    "channel configuration unreadable",
		sub:     subscription("KafkaChannel", ready(nil)),
		channel: kafkaChannel("sub-uid", chReady),
		wantErr: "kafka-channel-config",
	}, {
		name:    "channel configuration without servers",
		sub:     subscription("KafkaChannel", ready(nil)),
		channel: kafkaChannel("sub-uid", chReady),
		config:  cm(map[string]string{}),
		wantErr: "data[bootstrap.servers] is missing",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveSubscription(tc.sub, tc.channel, tc.config, Config{})
			checkResolved(t, got, err, tc.want, tc.wantErr, tc.wantWarn, "")
		})
	}
}

// The group of a re-created Trigger or Subscription changes with its UID;
// a request keeps what it resolved (status.resolved), and a status that
// claims another resource resolves nothing.
func TestRequestAccessorsFollowResolved(t *testing.T) {
	rr := &v1alpha1.ReplayRequest{}
	rr.Spec.ConsumerRef = &v1alpha1.KnativeRef{Kind: v1alpha1.KnativeTrigger, Name: "orders-trigger"}
	if replay.Group(rr) != "" || replay.BootstrapServers(rr) != "" || replay.Topics(rr) != nil || replay.SecretProjection(rr) != nil {
		t.Fatal("an unresolved consumerRef request has a group, servers, topics or a Secret")
	}
	rr.Status.Resolved = &v1alpha1.ResolvedConsumer{
		Kind: v1alpha1.KnativeTrigger, Name: "orders-trigger", Group: "g", BootstrapServers: "k:9092", Topics: []string{"t"},
		SecretName: "creds", SecretKeys: []v1alpha1.SecretKeyProperty{{Key: "user", Property: "sasl.username"}},
	}
	if replay.Group(rr) != "g" || replay.BootstrapServers(rr) != "k:9092" || len(replay.Topics(rr)) != 1 || replay.Topics(rr)[0].Name != "t" || len(replay.Topics(rr)[0].Partitions) != 0 || replay.SecretName(rr) != "creds" {
		t.Fatalf("accessors = %q %q %v %q", replay.Group(rr), replay.BootstrapServers(rr), replay.Topics(rr), replay.SecretName(rr))
	}
	p := replay.SecretProjection(rr)
	if p == nil || p.Name != "creds" || p.Optional == nil || !*p.Optional || len(p.Items) != 1 || p.Items[0].Key != "user" || p.Items[0].Path != "sasl.username" {
		t.Fatalf("projection = %+v", p)
	}
	if replay.ConfigMapRef(rr) != nil {
		t.Fatal("a consumerRef request mounts a ConfigMap")
	}
	if err := ValidateResolved(rr); err != nil {
		t.Fatal(err)
	}
	rr.Status.Resolved.Name = "another"
	if replay.Group(rr) != "" || ValidateResolved(rr) == nil {
		t.Fatal("a status.resolved of another resource is used")
	}
	rr.Status.Resolved.Name = "orders-trigger"
	rr.Status.Resolved.SecretKeys = []v1alpha1.SecretKeyProperty{{Key: "user", Property: "../../etc/passwd"}}
	if ValidateResolved(rr) == nil {
		t.Fatal("a secretKeys property with a path is accepted")
	}
	rr.Status.Resolved.SecretKeys = nil
	rr.Status.Resolved.Group = "a\x00b"
	if ValidateResolved(rr) == nil {
		t.Fatal("a resolved group the runner would refuse is accepted")
	}
}

// A long template (the installation's config-kafka-features) makes long
// descriptions; they are cut to what status.resolved may hold, so the
// status write is never refused.
func TestBoundResolved(t *testing.T) {
	long := "cg-{{ .Name }}" + strings.Repeat("{{/* a comment that renders to nothing */}}", 20)
	res, err := ResolveTrigger(trigger(ready(nil)), kafkaBroker("Kafka", brokerReady(nil), ""), Config{TriggerGroupTemplate: long})
	if err != nil {
		t.Fatal(err)
	}
	if res.Group != "cg-orders-trigger" || len(res.GroupFrom) <= 512 {
		t.Fatalf("group %q from %d characters: the case does not test the bound", res.Group, len(res.GroupFrom))
	}
	BoundResolved(&res)
	if len(res.GroupFrom) > 512 || !strings.HasPrefix(res.GroupFrom, "Trigger orders-trigger: triggers.consumergroup.template") {
		t.Fatalf("groupFrom %d characters: %q", len(res.GroupFrom), res.GroupFrom)
	}
}

// What a request pauses: its spec.consumers and, for a consumerRef to a
// KafkaSource with whenGroupActive: Wait, that source, once.
func TestRequestConsumers(t *testing.T) {
	src := v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerKafkaSource, Name: "orders-source"}
	dep := v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerDeployment, Name: "worker"}
	mk := func(kind v1alpha1.KnativeKind, wait v1alpha1.GroupActivePolicy, consumers ...v1alpha1.ConsumerRef) *v1alpha1.ReplayRequest {
		rr := &v1alpha1.ReplayRequest{}
		if kind != "" {
			rr.Spec.ConsumerRef = &v1alpha1.KnativeRef{Kind: kind, Name: "orders-source"}
		}
		rr.Spec.WhenGroupActive = wait
		rr.Spec.Consumers = consumers
		return rr
	}
	for _, c := range []struct {
		name string
		rr   *v1alpha1.ReplayRequest
		want []v1alpha1.ConsumerRef
	}{
		{"no consumerRef", mk("", v1alpha1.GroupActiveWait, dep), []v1alpha1.ConsumerRef{dep}},
		{"KafkaSource with Wait", mk(v1alpha1.KnativeKafkaSource, v1alpha1.GroupActiveWait, dep), []v1alpha1.ConsumerRef{dep, src}},
		{"KafkaSource already listed", mk(v1alpha1.KnativeKafkaSource, v1alpha1.GroupActiveWait, src), []v1alpha1.ConsumerRef{src}},
		{"KafkaSource with Fail: nothing to wait with", mk(v1alpha1.KnativeKafkaSource, v1alpha1.GroupActiveFail), nil},
		{"Trigger: shared dispatchers", mk(v1alpha1.KnativeTrigger, v1alpha1.GroupActiveWait), nil},
		{"Subscription: shared dispatchers", mk(v1alpha1.KnativeSubscription, v1alpha1.GroupActiveWait), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := slices.Clone(c.rr.Spec.Consumers)
			if got := state.RequestConsumers(c.rr); !slices.Equal(got, c.want) {
				t.Fatalf("RequestConsumers = %v, want %v", got, c.want)
			}
			if !slices.Equal(c.rr.Spec.Consumers, before) {
				t.Fatal("RequestConsumers changed spec.consumers")
			}
			if state.PausesConsumers(c.rr) != (len(c.want) > 0) {
				t.Fatalf("PausesConsumers = %v", state.PausesConsumers(c.rr))
			}
			c.rr.Spec.DryRun = true
			if state.PausesConsumers(c.rr) {
				t.Fatal("a dry run pauses consumers")
			}
		})
	}
}
