package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/test/cachedir"
	"github.com/kafka-replay/kafka-replay/test/cluster"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// Issue 31 on the real cluster, on Apache Kafka with SCRAM-SHA-512 turned
// on (its SASL_PLAINTEXT listener): Strimzi's own CRDs (make strimzi-crds),
// no Strimzi operator. The test writes, as Strimzi's operators would, in
// namespace kafka, the objects docs/strimzi.md's walk-through names: a
// Kafka my-cluster whose status lists a plain listener and the SCRAM one,
// a KafkaUser my-user whose Secret holds the password Kafka knows the user
// by, a KafkaConnect my-connect on the plain listener and the sink
// KafkaConnector orders-sink on it; and it plays the operator's part in
// spec.state: a stand-in Deployment that consumes as the connector's group
// connect-orders-sink is scaled to 0 while spec.state is stopped, and back
// to 1 otherwise. Then it runs the walk-through's commands as written
// (strimziDocFile: kubectl replay groups with --cluster and --user, whose
// runner is refused unless the resolution's binding holds, kubectl replay
// create with --consumer-ref, --cluster, --user and --consumers, then
// kubectl replay undo), and checks
// what they did: the group and topic resolved from the connector, the
// connector stopped and put back as it was (twice), the group moved over
// SASL/SCRAM by 7 a partition, and the undo applied.
func TestStrimziSinkConnectorOverSCRAM(t *testing.T) {
	t.Run(onApache, func(t *testing.T) { strimziSinkConnectorOverSCRAM(t, needApacheFlow(t)) })
}

func strimziSinkConnectorOverSCRAM(t *testing.T, f *flowEnv) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	// The walk-through's names (docs/strimzi.md); the test runs only on
	// Apache Kafka, so the namespace is the docs' own.
	const (
		ns        = "kafka"
		connector = "orders-sink"
		group     = "connect-" + connector
		user      = "my-user"
		password  = "my-user-e2e-scram-password"
		deploy    = "sink-stand-in"
		rewind    = 7
		image     = "localhost/kafka-replay-e2e-consumer:1"
	)
	// Strimzi's own CRDs (make strimzi-crds: Strimzi's generator over its
	// API model, from Maven Central), as a Strimzi install applies them.
	for _, crd := range []string{"040-Crd-kafka.yaml", "041-Crd-kafkaconnect.yaml", "044-Crd-kafkauser.yaml", "047-Crd-kafkaconnector.yaml"} {
		if _, err := f.c.Kubectl(ctx, "apply", "--server-side", "-f", filepath.Join(cachedir.StrimziCRDs(), crd)); err != nil {
			t.Fatalf("Strimzi %s's CRDs (make strimzi-crds): %v", cachedir.StrimziVersion, err)
		}
	}
	for _, crd := range []string{"kafkas", "kafkausers", "kafkaconnects", "kafkaconnectors"} {
		if _, err := f.c.Kubectl(ctx, "wait", "--for=condition=Established", "--timeout=60s", "crd/"+crd+".kafka.strimzi.io"); err != nil {
			t.Fatal(err)
		}
	}
	ensureNamespace(t, ctx, f, ns)

	// Kafka knows the user; the Secret holds its password, as Strimzi's
	// user operator writes both.
	a := f.kafka.Apache
	if err := a.AddSCRAMUser(ctx, kafkatest.SCRAMSHA512, user, password); err != nil {
		t.Fatal(err)
	}
	if err := f.cl.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user}, StringData: map[string]string{"password": password}}); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(append(a.ClientOpts(), kgo.SeedBrokers(a.Bootstrap()...))...)
	if err != nil {
		t.Fatal(err)
	}
	md, err := kadm.NewClient(cl).Metadata(ctx)
	cl.Close()
	if err != nil || md.Cluster == "" {
		t.Fatalf("the cluster's ID: %q, %v", md.Cluster, err)
	}
	scram := strings.Join(a.SASLBootstrap(), ",")
	strimziE2EObject(t, ctx, f, "Kafka", ns, "my-cluster", nil, nil,
		map[string]any{"kafka": map[string]any{"listeners": []any{
			map[string]any{"name": "plain", "port": int64(9092), "type": "internal", "tls": false},
			map[string]any{"name": "scram", "port": int64(9094), "type": "internal", "tls": false, "authentication": map[string]any{"type": "scram-sha-512"}},
		}}},
		map[string]any{"clusterId": md.Cluster, "listeners": []any{
			map[string]any{"name": "plain", "bootstrapServers": f.kafka.Bootstrap()},
			map[string]any{"name": "scram", "bootstrapServers": scram},
		}})
	strimziE2EObject(t, ctx, f, "KafkaUser", ns, user, map[string]string{"strimzi.io/cluster": "my-cluster"}, nil,
		map[string]any{"authentication": map[string]any{"type": "scram-sha-512"}},
		map[string]any{"username": user, "secret": user})
	strimziE2EObject(t, ctx, f, "KafkaConnect", ns, "my-connect", nil, map[string]string{"strimzi.io/use-connector-resources": "true"},
		map[string]any{"bootstrapServers": f.kafka.Bootstrap(), "replicas": int64(1), "groupId": "my-connect",
			"configStorageTopic": "my-connect-configs", "offsetStorageTopic": "my-connect-offsets", "statusStorageTopic": "my-connect-status"}, map[string]any{})
	strimziE2EObject(t, ctx, f, "KafkaConnector", ns, connector, map[string]string{"strimzi.io/cluster": "my-connect"}, nil,
		map[string]any{"class": "org.example.OrdersSink", "tasksMax": int64(1), "config": map[string]any{"topics": topic}},
		map[string]any{"connectorStatus": map[string]any{"name": connector, "type": "sink", "connector": map[string]any{"state": "RUNNING"}}, "topics": []any{topic}})

	// The connector's tasks: a consumer of its group, on the plain
	// listener, that the test scales as the operator would stop and start
	// the tasks.
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
						RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name: "consumer", Image: image, ImagePullPolicy: corev1.PullNever,
						Env: []corev1.EnvVar{
							{Name: "BOOTSTRAP", Value: f.kafka.Bootstrap()},
							{Name: "GROUP", Value: group},
							{Name: "TOPIC", Value: topic},
							{Name: "GROUP_PROTOCOL", Value: kafkatest.ProtocolConsumer},
						},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
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
	f.waitCommitted(t, ctx, ns, group, perPart)

	// The operator's part: spec.state stopped stops the tasks, anything
	// else runs them. Stopped with the test.
	states := make(chan string, 16)
	opCtx, stopOperator := context.WithCancel(ctx)
	defer stopOperator()
	go playConnectOperator(opCtx, f, ns, connector, deploy, states)

	// The walk-through, as written: only the example host names would be
	// replaced (it names none).
	root, err := cluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := docBlocks(root, strimziDocFile)
	if err != nil {
		t.Fatal(err)
	}
	var helm string
	env := docTools(t, ctx, f, root, &helm)
	dir := t.TempDir()
	ran := 0
	for _, b := range blocks {
		if !b.run {
			t.Logf("%s: not run here, as marked: %s", b.file, b.first)
			continue
		}
		cmd := f.c.Command(ctx, "sh", "-ec", b.text)
		cmd.Env = append(cmd.Env, env...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		t.Logf("%s: ran %q:\n%s", b.file, b.first, out)
		if err != nil {
			t.Fatalf("%s: the documented commands starting %q failed: %v\n%s", b.file, b.first, err, out)
		}
		ran++
	}
	if ran != 4 {
		t.Fatalf("ran %d of docs/strimzi.md's blocks, want its 4 (grant, groups, replay, undo)", ran)
	}
	rr := f.waitFinal(t, ctx, ns, "rewind-sink")
	if st, reason := condition(rr, v1alpha1.ConditionSucceeded); st != "True" || reason != "Applied" {
		t.Fatalf("Succeeded %s %s: %s", st, reason, rr.Status.Message)
	}
	if res := rr.Status.Resolved; res == nil || res.Group != group || len(res.Topics) != 1 || res.Topics[0] != topic {
		t.Fatalf("status.resolved = %+v", res)
	}
	rk := rr.Status.ResolvedKafka
	if rk == nil || rk.ClusterID != md.Cluster || rk.BootstrapServers != scram || rk.PropertiesDigest == "" {
		t.Fatalf("status.resolvedKafka = %+v", rk)
	}
	job := f.recordedJob(t, ctx, ns, rr.Status.JobName)
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		if e.Name == config.EnvPropertiesDigest && e.Value != rk.PropertiesDigest {
			t.Errorf("the Job's %s %q is not status.resolvedKafka.propertiesDigest %q", e.Name, e.Value, rk.PropertiesDigest)
		}
	}
	prev, next, _ := recordOffsets(t, f.record(t, ctx, ns, rr.Status.JobName))
	for p := int32(0); p < parts; p++ {
		if prev[p] != perPart || next[p] != perPart-rewind {
			t.Errorf("partition %d: the record moved %d -> %d, want %d -> %d", p, prev[p], next[p], perPart, perPart-rewind)
		}
	}
	// Running (no spec.state) before, stopped for the replay, put back as
	// it was, and the same again for the undo.
	var seen []string
	for len(seen) < 5 {
		select {
		case s := <-states:
			if len(seen) == 0 || seen[len(seen)-1] != s {
				seen = append(seen, s)
			}
		case <-ctx.Done():
			t.Fatalf("the connector's spec.state went %v, want (absent), stopped, (absent), stopped, (absent)", seen)
		}
	}
	if strings.Join(seen, " ") != "(absent) stopped (absent) stopped (absent)" {
		t.Fatalf("the connector's spec.state went %v, want (absent), stopped, (absent), stopped, (absent)", seen)
	}
	// Its tasks run again and consume the replayed records to the end.
	f.waitCommitted(t, ctx, ns, group, perPart)
	var after v1alpha1.ReplayRequest
	if err := f.cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rewind-sink"}, &after); err != nil {
		t.Fatal(err)
	}
	if st, reason := condition(&after, v1alpha1.ConditionConsumersRestored); st != "True" {
		t.Fatalf("ConsumersRestored %s %s", st, reason)
	}
	// The undo: the same group, on the cluster of the same ID, Applied.
	undo := f.waitFinal(t, ctx, ns, "rewind-sink-undo")
	if st, reason := condition(undo, v1alpha1.ConditionSucceeded); st != "True" || reason != "Applied" {
		t.Fatalf("the undo: Succeeded %s %s: %s", st, reason, undo.Status.Message)
	}
	if undo.Status.Group != group || undo.Status.ResolvedKafka == nil || undo.Status.ResolvedKafka.ClusterID != md.Cluster {
		t.Fatalf("the undo: group %q, status.resolvedKafka %+v", undo.Status.Group, undo.Status.ResolvedKafka)
	}
}

// strimziE2EObject creates a Strimzi object and writes its status, Ready
// for its generation, as Strimzi's operators do.
func strimziE2EObject(t *testing.T, ctx context.Context, f *flowEnv, kind, ns, name string, labels, annotations map[string]string, spec, status map[string]any) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "kafka.strimzi.io", Version: "v1", Kind: kind})
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(labels)
	u.SetAnnotations(annotations)
	if err := f.cl.Create(ctx, u); err != nil {
		t.Fatalf("%s %s: %v", kind, name, err)
	}
	status["observedGeneration"] = u.GetGeneration()
	status["conditions"] = []any{map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}
	u.Object["status"] = status
	if err := f.cl.Status().Update(ctx, u); err != nil {
		t.Fatalf("%s %s status: %v", kind, name, err)
	}
}

// playConnectOperator does what Strimzi's operator and Kafka Connect do
// with a sink connector's spec.state, for a stand-in Deployment: stopped
// stops its tasks (0 replicas), anything else runs them (1). Each
// spec.state it sees goes to states.
func playConnectOperator(ctx context.Context, f *flowEnv, ns, connector, deploy string, states chan<- string) {
	last := ""
	for ctx.Err() == nil {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: "kafka.strimzi.io", Version: "v1", Kind: "KafkaConnector"})
		if err := f.cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: connector}, u); err == nil {
			st, ok, _ := unstructured.NestedString(u.Object, "spec", "state")
			if !ok {
				st = "(absent)"
			}
			var d appsv1.Deployment
			if err := f.cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: deploy}, &d); err == nil {
				want := int32(1)
				if st == "stopped" {
					want = 0
				}
				if d.Spec.Replicas == nil || *d.Spec.Replicas != want {
					d.Spec.Replicas = &want
					_ = f.cl.Update(ctx, &d)
				}
			}
			// Then, as Strimzi's operator does once it has reconciled a
			// spec change, status.observedGeneration catches up (until
			// then the launcher holds a consumerRef to it,
			// WaitingForConnector, up to its --start-timeout).
			if og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); og < u.GetGeneration() {
				_ = unstructured.SetNestedField(u.Object, u.GetGeneration(), "status", "observedGeneration")
				_ = f.cl.Status().Update(ctx, u)
			}
			if st != last {
				last = st
				select {
				case states <- st:
				default:
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}
