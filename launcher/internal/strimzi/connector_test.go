package strimzi

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func connectorObj(spec, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "sink", "generation": int64(1), "labels": map[string]any{ClusterLabel: "my-connect"}},
		"spec":     spec,
	}}
	st := map[string]any{"observedGeneration": int64(1), "conditions": []any{map[string]any{"type": "Ready", "status": "True"}},
		"connectorStatus": map[string]any{"type": "sink", "connector": map[string]any{"state": "RUNNING"}}}
	for k, v := range status {
		st[k] = v
	}
	u.Object["status"] = st
	return u
}

func connectObj(servers string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "my-connect", "annotations": map[string]any{UseConnectorResources: "true"}},
		"spec":     map[string]any{"bootstrapServers": servers},
	}}
}

// ResolveConnector's group, topics and listener, and the refusals that
// depend on the connector's config alone (the others run on envtest:
// TestEnvtestStrimziConnectorRefRefusals).
func TestResolveConnector(t *testing.T) {
	k := kafka()
	for _, tc := range []struct {
		name           string
		config         map[string]any
		status         map[string]any
		servers        string
		group, topics  string
		listener, fail string
	}{
		{name: "connect-<name>", config: map[string]any{"topics": " orders ,payments,, "}, servers: "my-cluster-kafka-bootstrap.kafka.svc:9092",
			group: "connect-sink", topics: "orders payments", listener: "plain"},
		{name: "an overridden group", config: map[string]any{"topics": "orders", "consumer.override.group.id": "archiver"}, servers: "my-cluster-kafka-bootstrap.kafka.svc:9092",
			group: "archiver", topics: "orders", listener: "plain"},
		{name: "a regex, as Connect reports its topics", config: map[string]any{"topics.regex": "o.*"}, status: map[string]any{"topics": []any{"orders", "other", "orders"}},
			servers: "SSL://MY-CLUSTER-KAFKA-BOOTSTRAP.kafka.svc:9093", group: "connect-sink", topics: "orders other", listener: "tls"},
		{name: "both", config: map[string]any{"topics": "a", "topics.regex": "b"}, servers: "my-cluster-kafka-bootstrap.kafka.svc:9092", fail: "sets both topics and topics.regex"},
		{name: "an empty list", config: map[string]any{"topics": " , "}, servers: "my-cluster-kafka-bootstrap.kafka.svc:9092", fail: "names no topic"},
		{name: "a bad group", config: map[string]any{"topics": "a", "consumer.override.group.id": " g"}, servers: "my-cluster-kafka-bootstrap.kafka.svc:9092", fail: "spec.config.consumer.override.group.id"},
		{name: "another cluster", config: map[string]any{"topics": "a"}, servers: "other:9092", fail: "which is none of Kafka my-cluster's listeners"},
		{name: "no servers", config: map[string]any{"topics": "a"}, servers: "", fail: "which is none of Kafka my-cluster's listeners"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ResolveConnector("sink", connectorObj(map[string]any{"config": tc.config}, tc.status), connectObj(tc.servers), k, "my-cluster")
			if tc.fail != "" {
				if err == nil || !errors.Is(err, ErrNotResolvable) || !strings.Contains(err.Error(), tc.fail) {
					t.Fatalf("error %v, want one with %q", err, tc.fail)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Group != tc.group || strings.Join(res.Topics, " ") != tc.topics || !strings.HasSuffix(res.BootstrapServersFrom, "listener "+tc.listener) {
				t.Errorf("resolved %+v", res)
			}
			if regex := tc.config["topics.regex"] != nil; regex != slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "a topic created since is not replayed") }) {
				t.Errorf("warnings %q", res.Warnings)
			}
		})
	}
}

// A connector whose status Strimzi's operator has not written yet, or
// wrote for an older generation, is ErrNotReady (the launcher waits); a
// source connector, whatever its status's age, and a current status that is
// not Ready, are refused at once (ErrNotResolvable alone).
func TestResolveConnectorNotCurrent(t *testing.T) {
	sink := map[string]any{"topics": "orders"}
	behind := func(typ string) *unstructured.Unstructured {
		u := connectorObj(map[string]any{"config": sink}, map[string]any{"connectorStatus": map[string]any{"type": typ}})
		u.SetGeneration(3)
		u.Object["status"].(map[string]any)["observedGeneration"] = int64(2)
		return u
	}
	noStatus := connectorObj(map[string]any{"config": sink}, nil)
	delete(noStatus.Object, "status")
	notReady := connectorObj(map[string]any{"config": sink}, map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "Failed"}}})
	for _, tc := range []struct {
		name  string
		obj   *unstructured.Unstructured
		wait  bool
		error string
	}{
		{"behind", behind("sink"), true, "status.observedGeneration 2 is behind metadata.generation 3"},
		{"no status", noStatus, true, "KafkaConnector sink has no status yet"},
		{"a source connector behind", behind("source"), false, "is a source connector"},
		{"current, not ready", notReady, false, "KafkaConnector sink is not ready (status.conditions Ready is False: Failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ResolveConnector("sink", tc.obj, connectObj("my-cluster-kafka-bootstrap.kafka.svc:9092"), kafka(), "my-cluster")
			if !errors.Is(err, ErrNotResolvable) || errors.Is(err, ErrNotReady) != tc.wait || !strings.Contains(err.Error(), tc.error) {
				t.Fatalf("error %v (ErrNotReady %v), want wait=%v with %q", err, errors.Is(err, ErrNotReady), tc.wait, tc.error)
			}
		})
	}
}
