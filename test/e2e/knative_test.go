package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

var kafkaSourceGVK = schema.GroupVersionKind{Group: "sources.knative.dev", Version: "v1beta1", Kind: "KafkaSource"}

// Issue 13 on the real cluster: a KafkaSource (its CRD only, no Knative
// controllers: the test writes its Ready status as eventing-kafka-broker's
// controller would) names the Kafka and a group; a request with consumerRef,
// written as a user writes it, resolves it, pauses the source through its
// scale subresource (spec.consumers 1 -> 0), replays that group and
// restores the source. The offsets an independent franz-go client reads
// are the ones the request's status and its ReplayRecord say.
func TestKnativeKafkaSourceReplayed(t *testing.T) { onKafkas(t, knativeKafkaSourceReplayed) }

func knativeKafkaSourceReplayed(t *testing.T, f *flowEnv) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := f.ns("team-knative")
	const (
		group  = "knative-kafka-source-e2e"
		name   = "rewind-source"
		source = "orders-source"
		shift  = 15
	)
	if _, err := f.c.Kubectl(ctx, "apply", "--server-side", "-f", filepath.Join("..", "..", "launcher", "testdata", "knative", "crds.yaml")); err != nil {
		t.Fatalf("Knative CRDs: %v", err)
	}
	if _, err := f.c.Kubectl(ctx, "wait", "--for=condition=Established", "--timeout=60s", "crd/kafkasources.sources.knative.dev"); err != nil {
		t.Fatal(err)
	}
	ensureNamespace(t, ctx, f, ns)
	before := map[int32]int64{0: 40, 1: 50, 2: 60}
	if err := f.kafka.Commit(ctx, group, kafkatest.Offsets{topic: before}, "e2e"); err != nil {
		t.Fatal(err)
	}

	src := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"bootstrapServers": toAny(strings.Split(f.kafka.Bootstrap(), ",")),
		"topics":           []any{topic},
		"consumerGroup":    group,
		"consumers":        int64(1),
		"initialOffset":    "latest",
		"sink":             map[string]any{"ref": map[string]any{"apiVersion": "v1", "kind": "Service", "name": "handler"}},
	}}}
	src.SetGroupVersionKind(kafkaSourceGVK)
	src.SetNamespace(ns)
	src.SetName(source)
	if err := f.cl.Create(ctx, src); err != nil {
		t.Fatal(err)
	}
	src.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}
	if err := f.cl.Status().Update(ctx, src); err != nil {
		t.Fatal(err)
	}

	t0 := time.Now()
	f.apply(t, ctx, fmt.Sprintf(`apiVersion: kafkareplay.dev/v1alpha1
kind: ReplayRequest
metadata:
  name: %s
  namespace: %s
spec:
  consumerRef:
    kind: KafkaSource
    name: %s
  target:
    shiftBy: -%d
  whenGroupActive: Wait
  waitTimeout: 2m
`, name, ns, source, shift))
	rr := f.waitFinal(t, ctx, ns, name)
	tDone := time.Now()
	if st, reason := condition(rr, v1alpha1.ConditionSucceeded); st != "True" || reason != "Applied" {
		t.Fatalf("Succeeded %s %s: %s", st, reason, rr.Status.Message)
	}
	res := rr.Status.Resolved
	if res == nil || res.Group != group || res.BootstrapServers != f.kafka.Bootstrap() || len(res.Topics) != 1 || res.Topics[0] != topic {
		t.Fatalf("status.resolved = %+v", res)
	}

	got := f.committed(t, ctx, group)
	if rr.Status.Result == nil || len(rr.Status.Result.Partitions) != parts {
		t.Fatalf("status.result %+v", rr.Status.Result)
	}
	for _, p := range rr.Status.Result.Partitions {
		want := before[p.Partition] - shift
		if p.NewOffset != want || got[p.Partition] != want {
			t.Errorf("partition %d: status newOffset %d, Kafka has %d (independent client), want %d", p.Partition, p.NewOffset, got[p.Partition], want)
		}
	}
	prev, next, _ := recordOffsets(t, f.record(t, ctx, ns, rr.Status.JobName))
	for p, o := range before {
		if prev[p] != o || next[p] != got[p] {
			t.Errorf("record partition %d: %d -> %d, Kafka had %d and has %d", p, prev[p], next[p], o, got[p])
		}
	}

	// The source was paused and is back at its one consumer.
	restored := f.waitRR(t, ctx, ns, name, "the KafkaSource restored", func(rr *v1alpha1.ReplayRequest) bool {
		st, _ := condition(rr, v1alpha1.ConditionConsumersRestored)
		return st == "True"
	})
	if len(restored.Status.Consumers) != 1 || restored.Status.Consumers[0].Kind != v1alpha1.ConsumerKafkaSource ||
		restored.Status.Consumers[0].State != v1alpha1.ConsumerRestored || restored.Status.Consumers[0].Replicas == nil || *restored.Status.Consumers[0].Replicas != 1 {
		t.Fatalf("status.consumers %+v", restored.Status.Consumers)
	}
	t.Logf("request -> Succeeded %s, -> source restored %s", tDone.Sub(t0).Round(100*time.Millisecond), time.Since(t0).Round(100*time.Millisecond))
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(kafkaSourceGVK)
	if err := f.cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: source}, cur); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := unstructured.NestedInt64(cur.Object, "spec", "consumers"); n != 1 {
		t.Fatalf("KafkaSource spec.consumers %d after the restore, want 1", n)
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
