package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/test/cluster"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// consumedLine is what test/e2e/internal/consumer prints for each record.
var consumedLine = regexp.MustCompile(`(?m)^consumed partition=(\d+) offset=(\d+)$`)

// A real consumer Deployment (franz-go, a group member) has read the topic
// to its end and committed; a request with consumers pauses it (replicas 0,
// its pod gone, the group Empty), rewinds the group, and restores it. The
// restored consumer's new pod re-reads exactly the replayed messages, each
// once, which the test counts against the ReplayRecord and the request's
// totals; the group ends back at the end of the topic. On kfake the
// consumer is a member of a classic group; on Apache Kafka, of a KIP-848
// consumer group, the group type Kafka 4 made the default (the consumer
// is franz-go, not librdkafka, so that the runner's client is not checked
// against itself).
func TestConsumersPausedReplayedRestored(t *testing.T) {
	onKafkas(t, consumersPausedReplayedRestored)
}

func consumersPausedReplayedRestored(t *testing.T, f *flowEnv) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ns := f.ns("team-consumers")
	protocol := kafkatest.ProtocolClassic
	if f.on == onApache {
		protocol = kafkatest.ProtocolConsumer
	}
	const (
		group  = "svc-consumers"
		deploy = "consumer"
		rewind = 7
		image  = "localhost/kafka-replay-e2e-consumer:1"
	)
	ensureNamespace(t, ctx, f, ns)

	archive := filepath.Join(t.TempDir(), "consumer.tar")
	if err := cluster.BuildGoImage(ctx, "github.com/kafka-replay/kafka-replay/test/e2e/internal/consumer", image, archive); err != nil {
		t.Fatal(err)
	}
	if err := f.c.ImportImage(ctx, archive); err != nil {
		t.Fatal(err)
	}

	labels := map[string]string{"app": deploy}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: deploy, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](30),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						RunAsUser:      ptr.To[int64](65532),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name: "consumer", Image: image, ImagePullPolicy: corev1.PullNever,
						Env: []corev1.EnvVar{
							{Name: "BOOTSTRAP", Value: f.kafka.Bootstrap()},
							{Name: "GROUP", Value: group},
							{Name: "TOPIC", Value: topic},
							{Name: "GROUP_PROTOCOL", Value: protocol},
						},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
				},
			},
		},
	}
	if err := f.cl.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.cl.Delete(context.Background(), d) })

	// The consumer reads the whole topic and commits at its end.
	f.waitCommitted(t, ctx, ns, group, perPart)
	first := f.consumerPods(t, ctx, ns, labels, "")
	if len(first) != 1 {
		t.Fatalf("consumer pods before the replay: %v, want 1", first)
	}
	if g, err := f.kafka.Group(ctx, group); err != nil || g.Type != protocol {
		t.Fatalf("group %s is %+v (%v), want a %s group", group, g, err, protocol)
	}
	t.Logf("consumer %s committed %s, a %s group, at the end (%d per partition)", first[0], group, protocol, perPart)

	f.apply(t, ctx, rrManifest(ns, "rewind", group, f.kafka.Bootstrap(), fmt.Sprintf("shiftBy: -%d", rewind),
		"  whenGroupActive: Wait\n  waitTimeout: 5m\n  consumers:\n  - kind: Deployment\n    name: "+deploy+"\n"))

	// Until restored; ConsumersPaused turns False at the restore, so its
	// True transition is taken as it is seen.
	var (
		rr     v1alpha1.ReplayRequest
		paused *metav1.Time
	)
	for {
		err := f.cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rewind"}, &rr)
		if err == nil {
			if c := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionConsumersPaused); c != nil && c.Status == metav1.ConditionTrue && paused == nil {
				paused = c.LastTransitionTime.DeepCopy()
			}
			if c := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionConsumersRestored); c != nil && c.Status == metav1.ConditionTrue {
				break
			}
		}
		select {
		case <-ctx.Done():
			out, _ := f.c.Kubectl(context.Background(), "-n", ns, "get", "replayrequest", "rewind", "-o", "yaml")
			lg, _ := f.c.Kubectl(context.Background(), "-n", releaseNS, "logs", "deploy/"+release+"-launcher", "--tail=40")
			t.Fatalf("consumers never restored: %v (last error %v)\n%s\nlauncher:\n%s", ctx.Err(), err, out, lg)
		case <-time.After(100 * time.Millisecond):
		}
	}
	final := f.waitFinal(t, ctx, ns, "rewind")
	if final.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("phase %s: %s", final.Status.Phase, final.Status.Message)
	}
	restored := meta.FindStatusCondition(final.Status.Conditions, v1alpha1.ConditionConsumersRestored)
	if restored.Reason != "Restored" {
		t.Fatalf("ConsumersRestored %s: %s", restored.Reason, restored.Message)
	}
	if cs := final.Status.Consumers; len(cs) != 1 || cs[0].Replicas == nil || *cs[0].Replicas != 1 || cs[0].State != v1alpha1.ConsumerRestored {
		t.Fatalf("status.consumers %+v: want the Deployment recorded at 1 replica, Restored", cs)
	}
	if err := f.cl.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil || d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
		t.Fatalf("Deployment after the restore: replicas %v, %v; want 1", d.Spec.Replicas, err)
	}

	// What the record says was replayed, per partition.
	var rec v1alpha1.ReplayRecord
	if err := f.cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: final.Status.JobName}, &rec); err != nil {
		t.Fatalf("no ReplayRecord %s: %v", final.Status.JobName, err)
	}
	if rec.Outcome.Reason != "Applied" || len(rec.Topics) != 1 || len(rec.Topics[0].Partitions) != parts {
		t.Fatalf("record outcome %+v, topics %+v", rec.Outcome, rec.Topics)
	}
	want := map[int32][2]int64{} // partition: [new, previous)
	var total int64
	tp := rec.Topics[0]
	for i, p := range tp.Partitions {
		if tp.PreviousOffsets[i] != perPart || tp.NewOffsets[i] != perPart-rewind {
			t.Fatalf("record partition %d: previous %d new %d, want %d and %d", p, tp.PreviousOffsets[i], tp.NewOffsets[i], perPart, perPart-rewind)
		}
		want[p] = [2]int64{tp.NewOffsets[i], tp.PreviousOffsets[i]}
		total += tp.PreviousOffsets[i] - tp.NewOffsets[i]
	}
	if final.Status.Result == nil || final.Status.Result.Totals.MessagesToReconsume != total {
		t.Fatalf("status totals %+v, want messagesToReconsume %d as in the record", final.Status.Result, total)
	}

	// The restored consumer is a new pod: it re-reads from the rewound
	// offsets and commits at the end again.
	f.waitCommitted(t, ctx, ns, group, perPart)
	second := f.consumerPods(t, ctx, ns, labels, first[0])
	if len(second) != 1 {
		t.Fatalf("consumer pods after the restore: %v, want one new pod", second)
	}
	// Its log is written asynchronously by the runtime: read until every
	// replayed record is there, then check there is nothing else.
	var seen map[int32][]int64
	for {
		out, err := f.c.Kubectl(ctx, "-n", ns, "logs", "pod/"+second[0], "-c", "consumer")
		if err == nil {
			seen = map[int32][]int64{}
			for _, m := range consumedLine.FindAllStringSubmatch(out, -1) {
				p, _ := strconv.ParseInt(m[1], 10, 32)
				o, _ := strconv.ParseInt(m[2], 10, 64)
				seen[int32(p)] = append(seen[int32(p)], o)
			}
			var n int64
			for _, offs := range seen {
				n += int64(len(offs))
			}
			if n >= total {
				break
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("restored consumer's log never showed the %d replayed records: %v; seen %v", total, err, seen)
		case <-time.After(500 * time.Millisecond):
		}
	}
	for p, r := range want {
		var exp []int64
		for o := r[0]; o < r[1]; o++ {
			exp = append(exp, o)
		}
		if fmt.Sprint(seen[p]) != fmt.Sprint(exp) {
			t.Errorf("partition %d: the restored consumer read offsets %v, want the replayed %v, each once", p, seen[p], exp)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("the restored consumer read partitions %v, want only the record's %v", seen, want)
	}
	t.Logf("the restored consumer re-read %d records (%v), the record's and status totals' %d", total, seen, total)

	// Figures: from the request's creation to each step, by the
	// conditions' lastTransitionTime (seconds resolution).
	created := final.CreationTimestamp.Time
	applied := meta.FindStatusCondition(final.Status.Conditions, v1alpha1.ConditionSucceeded)
	pausedAfter := "not observed"
	if paused != nil {
		pausedAfter = paused.Sub(created).String()
	}
	appliedByRunner := "unknown"
	if fin := final.Status.Result.FinishedAt; fin != nil {
		appliedByRunner = fin.Sub(created).String()
	}
	t.Logf("figures: request -> consumers paused %s, -> applied (runner finished %s, Succeeded %s), -> restored %s",
		pausedAfter, appliedByRunner, applied.LastTransitionTime.Sub(created), restored.LastTransitionTime.Sub(created))
}

// waitCommitted waits until group has committed offset at on every
// partition of the topic, as franz-go reads it from Kafka.
func (f *flowEnv) waitCommitted(t *testing.T, ctx context.Context, ns, group string, at int64) {
	t.Helper()
	var got map[int32]int64
	for {
		c, err := f.kafka.Committed(ctx, group)
		if err == nil {
			got = map[int32]int64{}
			done := len(c[topic]) == parts
			for p, o := range c[topic] {
				got[p] = o.Offset
				done = done && o.Offset == at
			}
			if done {
				return
			}
		}
		select {
		case <-ctx.Done():
			out, _ := f.c.Kubectl(context.Background(), "-n", ns, "logs", "-l", "app=consumer", "--tail=20")
			t.Fatalf("group %s never committed %d on every partition: %v; last %v\nconsumer:\n%s", group, at, ctx.Err(), got, out)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// consumerPods lists the live pods of the consumer other than except.
func (f *flowEnv) consumerPods(t *testing.T, ctx context.Context, ns string, labels map[string]string, except string) []string {
	t.Helper()
	var out []string
	for {
		var pods corev1.PodList
		if err := f.cl.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
			t.Fatal(err)
		}
		out = out[:0]
		for _, p := range pods.Items {
			if p.Name != except && p.DeletionTimestamp == nil {
				out = append(out, p.Name)
			}
		}
		if len(out) > 0 {
			return out
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no consumer pod besides %q: %v", except, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}
