package launcher_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	utilyaml "sigs.k8s.io/yaml"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/consumers"
	"github.com/kafka-replay/kafka-replay/launcher/internal/knative"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// knativeEventingModule has Knative's core CRDs (Trigger, Broker,
// Subscription, Channel) in config/core/resources; the proxy serves exact
// versions of it (its version list is refused).
const knativeEventingModule = "knative.dev/eventing@v0.47.0"

var knativeOnce sync.Once

// installKnative installs Knative's core CRDs from the knative.dev/eventing
// module (downloaded through the Go module proxy into the module cache on
// first use), the KafkaSource and KafkaChannel CRDs of testdata/knative
// (eventing-kafka-broker is not a module the proxy serves; written from
// upstream's, see there), and Knative's namespace, once.
func installKnative(t *testing.T) {
	t.Helper()
	var err error
	knativeOnce.Do(func() {
		cmd := exec.Command("go", "mod", "download", "-json", knativeEventingModule)
		cmd.Dir = t.TempDir() // outside this module: its go.mod is not touched
		var out []byte
		if out, err = cmd.Output(); err != nil {
			err = fmt.Errorf("go mod download %s: %w\n%s", knativeEventingModule, err, out)
			return
		}
		var mod struct{ Dir, Error string }
		if err = json.Unmarshal(out, &mod); err != nil {
			err = fmt.Errorf("go mod download %s: %w", knativeEventingModule, err)
			return
		}
		if mod.Dir == "" {
			err = fmt.Errorf("go mod download %s: no directory: %s", knativeEventingModule, mod.Error)
			return
		}
		paths := []string{filepath.Join("testdata", "knative", "crds.yaml")}
		for _, f := range []string{"trigger", "broker", "subscription", "channel"} {
			paths = append(paths, filepath.Join(mod.Dir, "config", "core", "resources", f+".yaml"))
		}
		if _, err = envtest.InstallCRDs(adminCfg, envtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true}); err != nil {
			return
		}
		err = k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "knative-eventing"}})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	})
	if err != nil {
		t.Fatalf("Knative CRDs: %v", err)
	}
}

// knativeObject creates a Knative object as a user would, then writes its
// status as eventing-kafka-broker's controller would.
func knativeObject(t *testing.T, gvk schema.GroupVersionKind, ns, name string, annotations map[string]string, spec map[string]any, status func(*unstructured.Unstructured) map[string]any) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetAnnotations(annotations)
	create(t, u)
	if status != nil {
		u.Object["status"] = status(u)
		if err := k8s.Status().Update(context.Background(), u); err != nil {
			t.Fatalf("%s %s status: %v", gvk.Kind, name, err)
		}
	}
	return u
}

func readyStatus(annotations map[string]any) map[string]any {
	st := map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}}}
	if annotations != nil {
		st["annotations"] = annotations
	}
	return st
}

func knativeRequest(ns, name string, kind v1alpha1.KnativeKind, ref string) *testutil.RequestWrapper {
	w := testutil.MakeRequest(ns, name)
	w.Spec.Kafka = v1alpha1.KafkaConnection{}
	w.Spec.Group = ""
	w.Spec.ConsumerRef = &v1alpha1.KnativeRef{Kind: kind, Name: ref}
	return w
}

// waitNotResolved waits for a request to fail ConsumerRefNotResolved and
// returns its message.
func waitNotResolved(t *testing.T, rr *v1alpha1.ReplayRequest) string {
	t.Helper()
	return waitRefused(t, rr, state.ReasonConsumerRefNotResolved)
}

// waitRefused waits for a request to fail with reason, with no Job, and
// returns its message.
func waitRefused(t *testing.T, rr *v1alpha1.ReplayRequest, reason string) string {
	t.Helper()
	cur := waitPhase(t, rr, v1alpha1.PhaseFailed)
	c := condition(cur, v1alpha1.ConditionSucceeded)
	if c == nil || c.Reason != reason {
		t.Fatalf("Succeeded = %+v, want reason %s", c, reason)
	}
	if cur.Status.JobName != "" || len(jobsOf(t, rr.Namespace, map[string]string{v1alpha1.LabelRequest: rr.Name})) != 0 {
		t.Fatal("a request that did not resolve has a Job")
	}
	return c.Message
}

// A KafkaSource as upstream leaves it (consumerGroup defaulted, two
// consumers, Ready): the request resolves it once, its Job replays that
// group on those servers and topics, the source is paused through its scale
// (spec.consumers 0) while the runner runs and restored to 2 after;
// status.resolved cannot be rewritten afterwards.
func TestEnvtestKnativeKafkaSource(t *testing.T) {
	env(t)
	installKnative(t)
	ns := newNamespace(t, nil)
	ctx := context.Background()
	startLauncher(t, testOptions(), 2)

	servers := "kafka-0.kafka." + ns + ".svc:9092,kafka-1.kafka." + ns + ".svc:9092"
	src := knativeObject(t, knative.KafkaSourceGVK, ns, "orders-source", nil, map[string]any{
		"bootstrapServers": strings.Split(servers, ","),
		"topics":           []any{"orders", "refunds"},
		"consumerGroup":    "knative-kafka-source-0c6f",
		"consumers":        int64(2),
		"initialOffset":    "latest",
		"sink":             map[string]any{"ref": map[string]any{"apiVersion": "v1", "kind": "Service", "name": "handler"}},
	}, func(*unstructured.Unstructured) map[string]any { return readyStatus(nil) })

	rr := knativeRequest(ns, "replay-source", v1alpha1.KnativeKafkaSource, src.GetName()).ShiftBy(-10).Wait(time.Minute).Obj()
	create(t, rr)
	cur, job := waitPaused(t, rr)

	res := cur.Status.Resolved
	if res == nil || res.Group != "knative-kafka-source-0c6f" || res.BootstrapServers != servers || !slices.Equal(res.Topics, []string{"orders", "refunds"}) ||
		res.GroupFrom != "KafkaSource orders-source: spec.consumerGroup" || res.UID != string(src.GetUID()) || !strings.Contains(res.Pause, "scale subresource") {
		t.Fatalf("status.resolved = %+v", res)
	}
	if testutil.RunnerEnv(job)[config.EnvGroup] != res.Group || testutil.RunnerEnv(job)[config.EnvBootstrapServers] != servers || testutil.RunnerEnv(job)[config.EnvTopics] != "orders refunds" {
		t.Fatalf("Job env group %q servers %q topics %q", testutil.RunnerEnv(job)[config.EnvGroup], testutil.RunnerEnv(job)[config.EnvBootstrapServers], testutil.RunnerEnv(job)[config.EnvTopics])
	}
	if job.Labels[v1alpha1.LabelGroup] != v1alpha1.LabelValue(res.Group) || job.Annotations[v1alpha1.AnnotationGroup] != res.Group {
		t.Fatalf("Job labels %v", job.Labels)
	}
	if len(cur.Status.Consumers) != 1 || cur.Status.Consumers[0].Kind != v1alpha1.ConsumerKafkaSource || cur.Status.Consumers[0].Method != v1alpha1.PauseScale ||
		cur.Status.Consumers[0].Replicas == nil || *cur.Status.Consumers[0].Replicas != 2 {
		t.Fatalf("status.consumers = %+v", cur.Status.Consumers)
	}
	if n := kafkaSourceConsumers(t, ns, src.GetName()); n != 0 {
		t.Fatalf("running with the source's spec.consumers at %d", n)
	}

	// status.resolved is written once: not even the status subresource
	// may change it.
	changed := cur.DeepCopy()
	changed.Status.Resolved.Group = "someone-elses-group"
	if err := k8s.Status().Update(ctx, changed); err == nil || !strings.Contains(err.Error(), "status.resolved is written once") {
		t.Fatalf("rewriting status.resolved: %v", err)
	}

	result := testutil.Result(res.Group, report.ExitOK, 10)
	result.RunID = string(job.UID)
	runPod(t, job, 0, 0, testutil.Compact(result))
	finishJob(t, job, "")
	waitRestored(t, rr, state.ReasonRestored)
	if n := kafkaSourceConsumers(t, ns, src.GetName()); n != 2 {
		t.Fatalf("restored to %d consumers, want 2", n)
	}
}

func kafkaSourceConsumers(t *testing.T, ns, name string) int64 {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(knative.KafkaSourceGVK)
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	n, _, _ := unstructured.NestedInt64(u.Object, "spec", "consumers")
	return n
}

// A Trigger on a Kafka Broker whose status names a Secret: a creator who
// may neither get nor use that Secret is refused (as for secretRef), one
// who may use it gets a Job that mounts only the Secret's Knative keys
// under librdkafka names. The Trigger pauses nothing (its dispatchers are
// shared) and says so.
func TestEnvtestKnativeTriggerSecretAuthorised(t *testing.T) {
	env(t)
	installKnative(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 2)

	servers := "kafka." + ns + ".svc:9092"
	knativeObject(t, knative.BrokerGVK, ns, "default", map[string]string{"eventing.knative.dev/broker.class": "Kafka"},
		map[string]any{"config": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "kafka-broker-config"}},
		func(*unstructured.Unstructured) map[string]any {
			return readyStatus(map[string]any{"default.topic": "knative-broker-" + ns + "-default", "bootstrap.servers": servers, "auth.secret.ref.name": "kafka-creds"})
		})
	knativeObject(t, knative.TriggerGVK, ns, "orders-trigger", nil,
		map[string]any{"broker": "default", "subscriber": map[string]any{"ref": map[string]any{"apiVersion": "v1", "kind": "Service", "name": "handler"}}},
		func(*unstructured.Unstructured) map[string]any {
			return readyStatus(map[string]any{"group.id": "knative-trigger-" + ns + "-orders-trigger"})
		})

	refused := knativeRequest(ns, "by-alice", v1alpha1.KnativeTrigger, "orders-trigger").Obj()
	refused.Annotations = map[string]string{v1alpha1.AnnotationRequestedBy: "alice", v1alpha1.AnnotationRequestedByGroups: "system:authenticated"}
	create(t, refused)
	if msg := waitNotResolved(t, refused); !strings.Contains(msg, "names Secret kafka-creds, which the request's creator alice may neither get nor use") {
		t.Fatalf("refusal says %q", msg)
	}

	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "use-kafka-creds"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"kafka-creds"}, Verbs: []string{"use"}}}}
	create(t, role)
	create(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bob-uses-kafka-creds"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bob"}}})
	allowed := knativeRequest(ns, "by-bob", v1alpha1.KnativeTrigger, "orders-trigger").Obj()
	allowed.Annotations = map[string]string{v1alpha1.AnnotationRequestedBy: "bob"}
	create(t, allowed)
	job := waitJob(t, allowed)
	cur := getRR(t, allowed)
	res := cur.Status.Resolved
	if res == nil || res.Group != "knative-trigger-"+ns+"-orders-trigger" || res.SecretName != "kafka-creds" || !strings.Contains(res.Pause, "no safe per-resource pause") {
		t.Fatalf("status.resolved = %+v", res)
	}
	if testutil.RunnerEnv(job)[config.EnvGroup] != res.Group || testutil.RunnerEnv(job)[config.EnvBootstrapServers] != servers || testutil.RunnerEnv(job)[config.EnvTopics] != "knative-broker-"+ns+"-default" {
		t.Fatalf("Job env %v", job.Spec.Template.Spec.Containers[0].Env)
	}
	var secret *corev1.SecretProjection
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.Projected != nil {
			for _, s := range v.Projected.Sources {
				if s.Secret != nil {
					secret = s.Secret
				}
			}
		}
	}
	if secret == nil || secret.Name != "kafka-creds" || secret.Optional == nil || !*secret.Optional {
		t.Fatalf("Job's Secret %+v", secret)
	}
	paths := map[string]string{}
	for _, it := range secret.Items {
		paths[it.Key] = it.Path
	}
	if paths["user"] != "sasl.username" || paths["password"] != "sasl.password" || paths["protocol"] != "security.protocol" || paths["bootstrap.servers"] != "bootstrap.servers" || paths["ca.crt"] != "ssl.ca.pem" {
		t.Fatalf("Secret items %v", paths)
	}
	if testutil.RunnerEnv(job)[config.EnvKafkaSecretDir] == "" || testutil.RunnerEnv(job)[config.EnvAllowUnboundSecret] != "" {
		t.Fatalf("Job env secret dir %q, unbound %q", testutil.RunnerEnv(job)[config.EnvKafkaSecretDir], testutil.RunnerEnv(job)[config.EnvAllowUnboundSecret])
	}
	if len(cur.Status.Consumers) != 0 {
		t.Fatalf("a Trigger request paused %+v", cur.Status.Consumers)
	}
}

// A Subscription to a KafkaChannel: the group is kafka.<ns>.<channel>.<the
// Subscription's UID>, the servers come from kafka-channel-config in
// Knative's namespace.
func TestEnvtestKnativeSubscription(t *testing.T) {
	env(t)
	installKnative(t)
	ns := newNamespace(t, nil)
	ctx := context.Background()
	startLauncher(t, testOptions(), 2)

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "knative-eventing", Name: "kafka-channel-config"},
		Data: map[string]string{"bootstrap.servers": "kafka-0.kafka:9092, kafka-1.kafka:9092"}}
	if err := k8s.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	sub := knativeObject(t, knative.SubscriptionGVK, ns, "orders-sub", nil, map[string]any{
		"channel":    map[string]any{"apiVersion": "messaging.knative.dev/v1beta1", "kind": "KafkaChannel", "name": "orders"},
		"subscriber": map[string]any{"ref": map[string]any{"apiVersion": "v1", "kind": "Service", "name": "handler"}},
	}, func(*unstructured.Unstructured) map[string]any { return readyStatus(nil) })
	knativeObject(t, knative.KafkaChannelGVK, ns, "orders", nil, map[string]any{
		"numPartitions": int64(3), "replicationFactor": int64(1),
		"subscribers": []any{map[string]any{"uid": string(sub.GetUID()), "generation": int64(1), "subscriberUri": "http://handler." + ns + ".svc.cluster.local"}},
	}, func(*unstructured.Unstructured) map[string]any {
		return readyStatus(map[string]any{"default.topic": "knative-messaging-kafka." + ns + ".orders"})
	})

	rr := knativeRequest(ns, "replay-sub", v1alpha1.KnativeSubscription, "orders-sub").Obj()
	create(t, rr)
	job := waitJob(t, rr)
	want := fmt.Sprintf("kafka.%s.orders.%s", ns, sub.GetUID())
	if testutil.RunnerEnv(job)[config.EnvGroup] != want || testutil.RunnerEnv(job)[config.EnvBootstrapServers] != "kafka-0.kafka:9092,kafka-1.kafka:9092" || testutil.RunnerEnv(job)[config.EnvTopics] != "knative-messaging-kafka."+ns+".orders" {
		t.Fatalf("Job env %v", job.Spec.Template.Spec.Containers[0].Env)
	}
	if res := getRR(t, rr).Status.Resolved; res == nil || res.BootstrapServersFrom != "ConfigMap knative-eventing/kafka-channel-config: data[bootstrap.servers]" {
		t.Fatalf("status.resolved = %+v", res)
	}
}

// What cannot be resolved fails at acceptance, naming what is missing, with
// nothing run: a source that does not exist, a Trigger whose Broker is not
// ready, a Subscription to another kind of channel. And what the schema
// refuses: consumerRef beside group, neither.
func TestEnvtestKnativeNotResolved(t *testing.T) {
	env(t)
	installKnative(t)
	ns := newNamespace(t, nil)
	ctx := context.Background()
	startLauncher(t, testOptions(), 2)

	knativeObject(t, knative.BrokerGVK, ns, "default", map[string]string{"eventing.knative.dev/broker.class": "Kafka"}, map[string]any{},
		func(*unstructured.Unstructured) map[string]any {
			return map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "TopicNotPresent", "message": "topic not found", "lastTransitionTime": "2026-01-01T00:00:00Z"}}}
		})
	knativeObject(t, knative.TriggerGVK, ns, "t", nil, map[string]any{"broker": "default"}, func(*unstructured.Unstructured) map[string]any { return readyStatus(nil) })
	knativeObject(t, knative.SubscriptionGVK, ns, "s", nil, map[string]any{"channel": map[string]any{"apiVersion": "messaging.knative.dev/v1", "kind": "InMemoryChannel", "name": "c"}},
		func(*unstructured.Unstructured) map[string]any { return readyStatus(nil) })

	for _, c := range []struct {
		kind v1alpha1.KnativeKind
		ref  string
		want string
	}{
		{v1alpha1.KnativeKafkaSource, "missing", "KafkaSource missing does not exist in namespace " + ns},
		{v1alpha1.KnativeTrigger, "t", "Broker default is not ready (status.conditions Ready is False: TopicNotPresent topic not found)"},
		{v1alpha1.KnativeSubscription, "s", `spec.channel.kind is "InMemoryChannel", not KafkaChannel`},
	} {
		rr := knativeRequest(ns, "r-"+strings.ToLower(string(c.kind)), c.kind, c.ref).Obj()
		create(t, rr)
		if msg := waitNotResolved(t, rr); !strings.Contains(msg, c.want) {
			t.Errorf("%s %s: %q, want %q", c.kind, c.ref, msg, c.want)
		}
	}

	both := knativeRequest(ns, "both", v1alpha1.KnativeTrigger, "t").Obj()
	both.Spec.Group = "orders"
	if err := k8s.Create(ctx, both); err == nil || !strings.Contains(err.Error(), "consumerRef replaces group and topics") {
		t.Fatalf("consumerRef with group: %v", err)
	}
	neither := knativeRequest(ns, "neither", v1alpha1.KnativeTrigger, "t").Obj()
	neither.Spec.ConsumerRef = nil
	if err := k8s.Create(ctx, neither); err == nil || !strings.Contains(err.Error(), "set kafka and group, or consumerRef") {
		t.Fatalf("neither: %v", err)
	}
}

// The examples of docs/knative.md are objects the API server takes as
// written: every ReplayRequest (the CRD's rules: consumerRef alone, Wait
// with waitTimeout, ...) and every Knative object (the CRDs of
// testdata/knative), created with a server-side dry run.
func TestEnvtestKnativeDocsExamplesAdmitted(t *testing.T) {
	env(t)
	installKnative(t)
	ns := newNamespace(t, nil)
	b, err := os.ReadFile(filepath.Join("..", "docs", "knative.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(b), -1)
	requests := 0
	for _, blk := range blocks {
		for _, doc := range strings.Split(blk[1], "\n---\n") {
			u := &unstructured.Unstructured{}
			if err := utilyaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				t.Fatalf("docs/knative.md: %v\n%s", err, doc)
			}
			if u.GetKind() == "" {
				continue // a fragment (the spec excerpt at the top)
			}
			if u.GetKind() == "ReplayRequest" {
				requests++
			}
			u.SetNamespace(ns)
			if err := k8s.Create(context.Background(), u, client.DryRunAll); err != nil {
				t.Errorf("docs/knative.md: %s %s refused: %v", u.GetKind(), u.GetName(), err)
			}
		}
	}
	if requests != 3 {
		t.Fatalf("docs/knative.md has %d ReplayRequests, want one per kind", requests)
	}
}

func plainSource(t *testing.T, ns, name, servers, group string, annotations map[string]string) *unstructured.Unstructured {
	t.Helper()
	return knativeObject(t, knative.KafkaSourceGVK, ns, name, annotations, map[string]any{
		"bootstrapServers": strings.Split(servers, ","),
		"topics":           []any{"orders"},
		"consumerGroup":    group,
		"consumers":        int64(3),
		"sink":             map[string]any{"ref": map[string]any{"apiVersion": "v1", "kind": "Service", "name": "handler"}},
	}, func(*unstructured.Unstructured) map[string]any { return readyStatus(nil) })
}

// The group lock holds across both ways of naming a group: a consumerRef
// request whose source resolves to a group another request is replaying
// on the same servers waits for it, and starts when it finishes.
func TestEnvtestKnativeSharesTheGroupLock(t *testing.T) {
	env(t)
	installKnative(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 4)

	servers := "kafka." + ns + ".svc:9092"
	plain := testutil.MakeRequest(ns, "plain").Bootstrap(servers).Group("knative-kafka-source-lock").Obj()
	create(t, plain)
	plainJob := waitJob(t, plain)

	src := plainSource(t, ns, "locked-source", servers, "knative-kafka-source-lock", nil)
	viaRef := knativeRequest(ns, "via-ref", v1alpha1.KnativeKafkaSource, src.GetName()).Obj()
	create(t, viaRef)
	eventually(t, 10*time.Second, "via-ref waits for plain", func() error {
		cur := getRR(t, viaRef)
		c := condition(cur, v1alpha1.ConditionAccepted)
		if c == nil || c.Reason != state.ReasonWaitingForGroup || !strings.Contains(c.Message, ns+"/plain") || cur.Status.JobName != "" {
			return fmt.Errorf("status %+v", cur.Status)
		}
		return nil
	})
	runPod(t, plainJob, 0, 0, testutil.Compact(testutil.Result("knative-kafka-source-lock", report.ExitOK, 1)))
	finishJob(t, plainJob, "")
	waitPhase(t, plain, v1alpha1.PhaseSucceeded)
	if job := waitJob(t, viaRef); testutil.RunnerEnv(job)[config.EnvGroup] != "knative-kafka-source-lock" {
		t.Fatalf("via-ref's Job replays %q", testutil.RunnerEnv(job)[config.EnvGroup])
	}
}

// Whoever may write replayrequests/status cannot choose the group: a
// status.resolved written before the launcher accepts the request (here
// while no launcher runs) is refused, nothing is run, and the refusal says
// why.
func TestEnvtestKnativePrewrittenResolvedRefused(t *testing.T) {
	env(t)
	installKnative(t)
	ns := newNamespace(t, nil)
	src := plainSource(t, ns, "source", "kafka."+ns+".svc:9092", "knative-kafka-source-real", nil)
	rr := knativeRequest(ns, "prewritten", v1alpha1.KnativeKafkaSource, src.GetName()).Obj()
	create(t, rr)
	rr.Status.Resolved = &v1alpha1.ResolvedConsumer{
		Kind: v1alpha1.KnativeKafkaSource, Name: src.GetName(),
		BootstrapServers: "kafka." + ns + ".svc:9092", Group: "someone-elses-group", Topics: []string{"orders"},
	}
	if err := k8s.Status().Update(context.Background(), rr); err != nil {
		t.Fatal(err)
	}
	startLauncher(t, testOptions(), 2)
	if msg := waitNotResolved(t, rr); !strings.Contains(msg, "status.resolved was written before the launcher accepted the request") {
		t.Fatalf("refusal says %q", msg)
	}
	if got := getRR(t, rr).Status.Resolved; got == nil || got.Group != "someone-elses-group" {
		t.Fatalf("status.resolved %+v: the launcher rewrote it (the API server should have refused)", got)
	}
}

// A KafkaSource KEDA scales is paused through the ScaledObject that targets
// its ConsumerGroup (named by the source's UID), with KEDA's two pause
// annotations, and its spec.consumers is not touched; the annotations go
// back as they were.
func TestEnvtestKnativeKafkaSourceThroughKEDA(t *testing.T) {
	env(t)
	installKEDA(t)
	installKnative(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 2)

	src := plainSource(t, ns, "keda-source", "kafka."+ns+".svc:9092", "knative-kafka-source-keda",
		map[string]string{"autoscaling.knative.dev/class": "keda.autoscaling.knative.dev"})
	so := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"scaleTargetRef": map[string]any{"apiVersion": "internal.kafka.eventing.knative.dev/v1alpha1", "kind": "ConsumerGroup", "name": string(src.GetUID())},
		"triggers":       []any{map[string]any{"type": "kafka", "metadata": map[string]any{"bootstrapServers": "kafka:9092", "consumerGroup": "knative-kafka-source-keda", "topic": "orders", "lagThreshold": "10"}}},
	}}}
	so.SetGroupVersionKind(consumers.ScaledObjectGVK)
	so.SetNamespace(ns)
	so.SetName("so-" + string(src.GetUID()))
	create(t, so)

	rr := knativeRequest(ns, "via-keda", v1alpha1.KnativeKafkaSource, src.GetName()).ShiftBy(-5).Wait(time.Minute).Obj()
	create(t, rr)
	cur, job := waitPaused(t, rr)
	if len(cur.Status.Consumers) != 1 || cur.Status.Consumers[0].Method != v1alpha1.PauseKEDA || cur.Status.Consumers[0].ScaledObject != so.GetName() {
		t.Fatalf("status.consumers %+v", cur.Status.Consumers)
	}
	if ann := scaledObjectAnnotations(t, ns, so.GetName()); ann["autoscaling.keda.sh/paused"] != "true" || ann["autoscaling.keda.sh/paused-replicas"] != "0" {
		t.Fatalf("ScaledObject annotations %v", ann)
	}
	if n := kafkaSourceConsumers(t, ns, src.GetName()); n != 3 {
		t.Fatalf("a KEDA-scaled source's spec.consumers changed to %d", n)
	}
	runPod(t, job, 0, 0, testutil.Compact(testutil.Result("knative-kafka-source-keda", report.ExitOK, 1)))
	finishJob(t, job, "")
	waitRestored(t, rr, state.ReasonRestored)
	if ann := scaledObjectAnnotations(t, ns, so.GetName()); ann["autoscaling.keda.sh/paused"] != "" || ann["autoscaling.keda.sh/paused-replicas"] != "" {
		t.Fatalf("ScaledObject annotations after the restore %v", ann)
	}
}

// The launcher's switches: Knative off fails a consumerRef request at
// acceptance; scale off fails one that would pause a KafkaSource before
// anything changes (PauseFailed), its spec.consumers untouched.
func TestEnvtestKnativeSwitchedOff(t *testing.T) {
	env(t)
	installKnative(t)
	ns := newNamespace(t, nil)
	src := plainSource(t, ns, "source", "kafka."+ns+".svc:9092", "knative-kafka-source-off", nil)

	opts := testOptions()
	opts.NoKnative = true
	l := startLauncher(t, opts, 2)
	off := knativeRequest(ns, "knative-off", v1alpha1.KnativeKafkaSource, src.GetName()).Obj()
	create(t, off)
	if msg := waitNotResolved(t, off); !strings.Contains(msg, "Knative support is turned off") {
		t.Fatalf("refusal says %q", msg)
	}
	// Nor is a KafkaSource named in spec.consumers paused.
	listed := testutil.MakeRequest(ns, "listed-source").ShiftBy(-5).Wait(time.Minute).
		Consumers(v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerKafkaSource, Name: src.GetName()}).Obj()
	create(t, listed)
	cur := waitPhase(t, listed, v1alpha1.PhaseFailed)
	if c := condition(cur, v1alpha1.ConditionSucceeded); c == nil || c.Reason != state.ReasonPauseFailed || !strings.Contains(c.Message, "Knative support is turned off") {
		t.Fatalf("Succeeded %+v", c)
	}
	l.stop(t)

	opts = testOptions()
	opts.NoKnativeScale = true
	startLauncher(t, opts, 2)
	noScale := knativeRequest(ns, "scale-off", v1alpha1.KnativeKafkaSource, src.GetName()).ShiftBy(-5).Wait(time.Minute).Obj()
	create(t, noScale)
	cur = waitPhase(t, noScale, v1alpha1.PhaseFailed)
	if c := condition(cur, v1alpha1.ConditionSucceeded); c == nil || c.Reason != state.ReasonPauseFailed || !strings.Contains(c.Message, "--knative-scale=false") {
		t.Fatalf("Succeeded %+v", c)
	}
	if n := kafkaSourceConsumers(t, ns, src.GetName()); n != 3 {
		t.Fatalf("spec.consumers %d, want 3 untouched", n)
	}
}

// Resolved once: a Trigger request waiting for its group keeps the group it
// was accepted with across a launcher restart, although the Trigger's
// group.id annotation changed meanwhile (a Trigger re-created, a template
// changed): its Job replays the group it resolved, and status.resolved is
// as written at acceptance.
func TestEnvtestKnativeResolvedOnceAcrossRestart(t *testing.T) {
	env(t)
	installKnative(t)
	ns := newNamespace(t, nil)
	ctx := context.Background()
	servers := "kafka." + ns + ".svc:9092"
	first := "knative-trigger-" + ns + "-first"
	knativeObject(t, knative.BrokerGVK, ns, "default", map[string]string{"eventing.knative.dev/broker.class": "Kafka"}, map[string]any{},
		func(*unstructured.Unstructured) map[string]any {
			return readyStatus(map[string]any{"default.topic": "knative-broker-" + ns + "-default", "bootstrap.servers": servers})
		})
	trig := knativeObject(t, knative.TriggerGVK, ns, "orders-trigger", nil, map[string]any{"broker": "default"},
		func(*unstructured.Unstructured) map[string]any { return readyStatus(map[string]any{"group.id": first}) })

	l := startLauncher(t, testOptions(), 2)
	holder := testutil.MakeRequest(ns, "holder").Bootstrap(servers).Group(first).Obj()
	create(t, holder)
	holderJob := waitJob(t, holder)
	rr := knativeRequest(ns, "waits", v1alpha1.KnativeTrigger, trig.GetName()).Obj()
	create(t, rr)
	eventually(t, 10*time.Second, "waits is accepted and waits for holder", func() error {
		cur := getRR(t, rr)
		c := condition(cur, v1alpha1.ConditionAccepted)
		if c == nil || c.Reason != state.ReasonWaitingForGroup || cur.Status.Resolved == nil {
			return fmt.Errorf("status %+v", cur.Status)
		}
		return nil
	})
	l.stop(t)

	trig.Object["status"] = readyStatus(map[string]any{"group.id": "knative-trigger-" + ns + "-second"})
	if err := k8s.Status().Update(ctx, trig); err != nil {
		t.Fatal(err)
	}
	startLauncher(t, testOptions(), 2)
	runPod(t, holderJob, 0, 0, testutil.Compact(testutil.Result(first, report.ExitOK, 1)))
	finishJob(t, holderJob, "")
	job := waitJob(t, rr)
	if got := testutil.RunnerEnv(job)[config.EnvGroup]; got != first {
		t.Fatalf("the Job replays %q, want %q as resolved at acceptance", got, first)
	}
	if res := getRR(t, rr).Status.Resolved; res == nil || res.Group != first {
		t.Fatalf("status.resolved %+v", res)
	}
}

// A status writer who also skips acceptance (writes status.resolvedTarget
// with a status.resolved naming a Secret) still gets no Job that mounts a
// Secret the request's creator may neither get nor use: the Secret is
// checked again before the Job is made.
func TestEnvtestKnativeSkippedAcceptanceStillChecksTheSecret(t *testing.T) {
	env(t)
	installKnative(t)
	ns := newNamespace(t, nil)
	src := plainSource(t, ns, "source", "kafka."+ns+".svc:9092", "knative-kafka-source-skip", nil)
	rr := knativeRequest(ns, "skipped", v1alpha1.KnativeKafkaSource, src.GetName()).Obj()
	rr.Annotations = map[string]string{v1alpha1.AnnotationRequestedBy: "mallory"}
	create(t, rr)
	rr.Status.ResolvedTarget = "earliest"
	rr.Status.Resolved = &v1alpha1.ResolvedConsumer{
		Kind: v1alpha1.KnativeKafkaSource, Name: src.GetName(),
		BootstrapServers: "kafka." + ns + ".svc:9092", Group: "knative-kafka-source-skip", Topics: []string{"orders"},
		SecretName: "victim-creds", SecretKeys: []v1alpha1.SecretKeyProperty{{Key: "password", Property: "sasl.password"}},
	}
	if err := k8s.Status().Update(context.Background(), rr); err != nil {
		t.Fatal(err)
	}
	startLauncher(t, testOptions(), 2)
	cur := waitPhase(t, rr, v1alpha1.PhaseFailed)
	if c := condition(cur, v1alpha1.ConditionSucceeded); c == nil || c.Reason != state.ReasonJobInvalid || !strings.Contains(c.Message, "Secret victim-creds, which the request's creator mallory may neither get nor use") {
		t.Fatalf("Succeeded %+v", c)
	}
	if len(jobsOf(t, ns, map[string]string{v1alpha1.LabelRequest: rr.Name})) != 0 {
		t.Fatal("a Job was made")
	}
}

// groupColumn is the Group printer column of each request in ns, as the API
// server prints it for `kubectl get replayrequests` (a server-side Table).
func groupColumn(t *testing.T, ns string) map[string]string {
	t.Helper()
	hc, err := rest.HTTPClientFor(adminCfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(adminCfg.Host, "/")+"/apis/"+v1alpha1.GroupVersion.String()+"/namespaces/"+ns+"/replayrequests", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var table metav1.Table
	if err := json.NewDecoder(resp.Body).Decode(&table); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("Table of %s: %d %v", req.URL, resp.StatusCode, err)
	}
	col := slices.IndexFunc(table.ColumnDefinitions, func(c metav1.TableColumnDefinition) bool { return c.Name == "Group" })
	if col < 0 {
		t.Fatalf("no Group column in %+v", table.ColumnDefinitions)
	}
	out := map[string]string{}
	for _, row := range table.Rows {
		var m metav1.PartialObjectMetadata
		if err := json.Unmarshal(row.Object.Raw, &m); err != nil {
			t.Fatal(err)
		}
		s, _ := row.Cells[col].(string)
		out[m.Name] = s
	}
	return out
}

// `kubectl get replayrequests` shows the group a request replays, also for
// a consumerRef request (no spec.group: the group it resolved to), and a
// request accepted before status.group existed gets it on the next pass.
func TestEnvtestKnativeGroupColumn(t *testing.T) {
	env(t)
	installKnative(t)
	ns := newNamespace(t, nil)
	l := startLauncher(t, testOptions(), 2)

	servers := "kafka." + ns + ".svc:9092"
	plain := testutil.MakeRequest(ns, "plain").Bootstrap(servers).Group("orders-group").Obj()
	create(t, plain)
	src := plainSource(t, ns, "column-source", servers, "knative-kafka-source-column", nil)
	viaRef := knativeRequest(ns, "via-ref", v1alpha1.KnativeKafkaSource, src.GetName()).Obj()
	create(t, viaRef)
	want := map[string]string{"plain": "orders-group", "via-ref": "knative-kafka-source-column"}
	eventually(t, 20*time.Second, "the Group column", func() error {
		if got := groupColumn(t, ns); !maps.Equal(got, want) {
			return fmt.Errorf("Group column %v, want %v", got, want)
		}
		return nil
	})

	// As an older launcher left them: accepted, no status.group.
	l.stop(t)
	for _, rr := range []*v1alpha1.ReplayRequest{plain, viaRef} {
		cur := getRR(t, rr)
		cur.Status.Group = ""
		if err := k8s.Status().Update(context.Background(), cur); err != nil {
			t.Fatal(err)
		}
	}
	if got := groupColumn(t, ns); got["plain"] != "" || got["via-ref"] != "" {
		t.Fatalf("Group column with no status.group: %v", got)
	}
	startLauncher(t, testOptions(), 2)
	eventually(t, 20*time.Second, "the Group column filled in again", func() error {
		if got := groupColumn(t, ns); !maps.Equal(got, want) {
			return fmt.Errorf("Group column %v, want %v", got, want)
		}
		return nil
	})
}
