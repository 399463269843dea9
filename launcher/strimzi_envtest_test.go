package launcher_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/internal/strimzi"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

var strimziOnce sync.Once

// installStrimzi installs the Kafka and KafkaUser CRDs of testdata/strimzi
// (see there for where they come from), once.
func installStrimzi(t *testing.T) {
	t.Helper()
	var err error
	strimziOnce.Do(func() {
		_, err = envtest.InstallCRDs(adminCfg, envtest.CRDInstallOptions{
			Paths: []string{filepath.Join("testdata", "strimzi", "crds.yaml")}, ErrorIfPathMissing: true,
		})
	})
	if err != nil {
		t.Fatalf("Strimzi CRDs: %v", err)
	}
}

// strimziObject creates a Strimzi object as a user would, then writes its
// status as Strimzi's operators would, Ready for its generation.
func strimziObject(t *testing.T, gvk schema.GroupVersionKind, ns, name string, labels map[string]string, spec, status map[string]any) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(labels)
	create(t, u)
	status["observedGeneration"] = u.GetGeneration()
	status["conditions"] = []any{map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}}
	u.Object["status"] = status
	if err := k8s.Status().Update(context.Background(), u); err != nil {
		t.Fatalf("%s %s status: %v", gvk.Kind, name, err)
	}
	return u
}

// strimziCluster is a Kafka named my-cluster with a plain listener (no
// authentication), a scram one (TLS, scram-sha-512) and an mtls one (TLS,
// tls), and their servers in status as Strimzi writes them. Its cluster ID,
// returned, is the namespace's: every test's cluster is another cluster,
// whose group locks are its own.
func strimziCluster(t *testing.T, ns string) string {
	t.Helper()
	listener := func(name string, port int64, tls bool, auth string) map[string]any {
		l := map[string]any{"name": name, "port": port, "type": "internal", "tls": tls}
		if auth != "" {
			l["authentication"] = map[string]any{"type": auth}
		}
		return l
	}
	servers := func(name, port string) map[string]any {
		return map[string]any{"name": name, "bootstrapServers": "my-cluster-kafka-bootstrap." + ns + ".svc:" + port}
	}
	strimziObject(t, strimzi.KafkaGVK, ns, "my-cluster", nil,
		map[string]any{"kafka": map[string]any{"listeners": []any{
			listener("plain", 9092, false, ""), listener("scram", 9093, true, "scram-sha-512"), listener("mtls", 9094, true, "tls"),
		}}},
		map[string]any{"clusterId": "id-" + ns, "listeners": []any{servers("plain", "9092"), servers("scram", "9093"), servers("mtls", "9094")}})
	return "id-" + ns
}

func strimziUser(t *testing.T, ns, name, cluster, auth string) {
	t.Helper()
	strimziObject(t, strimzi.KafkaUserGVK, ns, name, map[string]string{strimzi.ClusterLabel: cluster},
		map[string]any{"authentication": map[string]any{"type": auth}},
		map[string]any{"username": name, "secret": name})
}

func clusterRequest(ns, name, listener, user, by string) *v1alpha1.ReplayRequest {
	w := testutil.MakeRequest(ns, name)
	w.Spec.Kafka = v1alpha1.KafkaConnection{ClusterRef: &v1alpha1.StrimziClusterRef{Name: "my-cluster", Listener: listener, User: user}}
	rr := w.Obj()
	rr.Annotations = map[string]string{v1alpha1.AnnotationRequestedBy: by}
	return rr
}

// grantSecret lets user use the Secret secret of ns, as an admin would
// for kafka.secretRef.
func grantSecret(t *testing.T, ns, user, secret string) {
	t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "use-" + secret},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{secret}, Verbs: []string{"use"}}}}
	create(t, role)
	create(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user + "-uses-" + secret},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}})
}

// secretDir is the Job's projected secret directory: each Secret's items
// (key -> path) and the downward API files (path -> annotation value).
func secretDir(t *testing.T, job *batchv1.Job) (map[string]map[string]string, map[string]string) {
	t.Helper()
	secrets, files := map[string]map[string]string{}, map[string]string{}
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.Secret != nil {
				items := map[string]string{}
				for _, it := range s.Secret.Items {
					items[it.Key] = it.Path
				}
				secrets[s.Secret.Name] = items
			}
			if s.DownwardAPI != nil {
				for _, f := range s.DownwardAPI.Items {
					key := strings.TrimSuffix(strings.TrimPrefix(f.FieldRef.FieldPath, "metadata.annotations['"), "']")
					files[f.Path] = job.Spec.Template.Annotations[key]
				}
			}
		}
	}
	return secrets, files
}

// waitClusterRefNotResolved waits for a request to fail
// ClusterRefNotResolved, with no Job, and returns its message.
func waitClusterRefNotResolved(t *testing.T, rr *v1alpha1.ReplayRequest) string {
	t.Helper()
	return waitRefused(t, rr, state.ReasonClusterRefNotResolved)
}

// A clusterRef with a SCRAM-SHA-512 user on a TLS listener: refused while
// its creator may neither get nor use the user's Secret, as a secretRef
// would be; once allowed, resolved once into status.resolvedKafka, and
// its Job connects to the listener's servers with the cluster's ID, the
// CA, the password and the listener's properties in its secret directory,
// bound to those servers.
func TestEnvtestStrimziSCRAM(t *testing.T) {
	env(t)
	installStrimzi(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 2)
	clusterID := strimziCluster(t, ns)
	strimziUser(t, ns, "my-user", "my-cluster", "scram-sha-512")

	refused := clusterRequest(ns, "by-alice", "scram", "my-user", "alice")
	create(t, refused)
	if msg := waitClusterRefNotResolved(t, refused); !strings.Contains(msg, "names Secret my-user, which the request's creator alice may neither get nor use") {
		t.Fatalf("refusal says %q", msg)
	}

	grantSecret(t, ns, "bob", "my-user")
	allowed := clusterRequest(ns, "by-bob", "scram", "my-user", "bob")
	create(t, allowed)
	job := waitJob(t, allowed)
	servers := "my-cluster-kafka-bootstrap." + ns + ".svc:9093"
	res := getRR(t, allowed).Status.ResolvedKafka
	if res == nil || res.ClusterID != clusterID || res.BootstrapServers != servers || res.UserSecret != "my-user" {
		t.Fatalf("status.resolvedKafka = %+v", res)
	}
	if testutil.RunnerEnv(job)[config.EnvBootstrapServers] != servers || testutil.RunnerEnv(job)[config.EnvClusterID] != clusterID || testutil.RunnerEnv(job)[config.EnvKafkaSecretDir] == "" || testutil.RunnerEnv(job)[config.EnvAllowUnboundSecret] != "" {
		t.Fatalf("Job env %v", job.Spec.Template.Spec.Containers[0].Env)
	}
	secrets, files := secretDir(t, job)
	if fmt.Sprint(secrets) != fmt.Sprint(map[string]map[string]string{
		"my-cluster-cluster-ca-cert": {"ca.crt": "ssl.ca.pem"},
		"my-user":                    {"password": "sasl.password"},
	}) {
		t.Fatalf("Secrets mounted %v", secrets)
	}
	if fmt.Sprint(files) != fmt.Sprint(map[string]string{
		"bootstrap.servers": servers, "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "my-user",
	}) {
		t.Fatalf("properties %v", files)
	}
	// The digest of those very properties, shown in status and given to
	// the runner, which refuses other ones (a patched pod annotation).
	read := config.Properties{"ssl.ca.pem": "ca", "sasl.password": "pw"}
	for n, v := range files {
		read[n] = v
	}
	if d := config.PropertiesDigestOf(read); res.PropertiesDigest != d || testutil.RunnerEnv(job)[config.EnvPropertiesDigest] != d {
		t.Fatalf("status.resolvedKafka.propertiesDigest %q, %s %q, want %q", res.PropertiesDigest, config.EnvPropertiesDigest, testutil.RunnerEnv(job)[config.EnvPropertiesDigest], d)
	}
}

// TLS client authentication: the user's certificate and key, the CA, and
// SSL, on the mtls listener.
func TestEnvtestStrimziTLSClientAuth(t *testing.T) {
	env(t)
	installStrimzi(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 2)
	strimziCluster(t, ns)
	strimziUser(t, ns, "tls-user", "my-cluster", "tls")
	grantSecret(t, ns, "bob", "tls-user")

	rr := clusterRequest(ns, "mtls", "mtls", "tls-user", "bob")
	create(t, rr)
	job := waitJob(t, rr)
	secrets, files := secretDir(t, job)
	if fmt.Sprint(secrets) != fmt.Sprint(map[string]map[string]string{
		"my-cluster-cluster-ca-cert": {"ca.crt": "ssl.ca.pem"},
		"tls-user":                   {"user.crt": "ssl.certificate.pem", "user.key": "ssl.key.pem"},
	}) || files["security.protocol"] != "SSL" || files["bootstrap.servers"] != testutil.RunnerEnv(job)[config.EnvBootstrapServers] {
		t.Fatalf("Secrets %v, properties %v", secrets, files)
	}
}

// Every refusal fails the request ClusterRefNotResolved, with no Job and a
// message naming the field.
func TestEnvtestStrimziRefusals(t *testing.T) {
	env(t)
	installStrimzi(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 4)
	strimziCluster(t, ns)
	strimziUser(t, ns, "other-user", "other-cluster", "scram-sha-512")
	strimziUser(t, ns, "my-user", "my-cluster", "scram-sha-512")
	for _, tc := range []struct{ name, listener, user, want string }{
		{"missing-listener", "external", "", `kafka.clusterRef.listener: Kafka my-cluster has no listener "external"`},
		{"user-of-another-cluster", "scram", "other-user", `kafka.clusterRef.user: KafkaUser other-user is a user of cluster "other-cluster"`},
		{"missing-user", "scram", "nobody", "kafka.clusterRef.user: KafkaUser nobody does not exist"},
		{"no-user", "scram", "", "kafka.clusterRef.user: Kafka my-cluster: listener scram authenticates with scram-sha-512"},
		{"scram-user-on-mtls", "mtls", "my-user", `KafkaUser my-user authenticates with "scram-sha-512"`},
	} {
		rr := clusterRequest(ns, tc.name, tc.listener, tc.user, "bob")
		create(t, rr)
		if msg := waitClusterRefNotResolved(t, rr); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: refusal says %q, want %q", tc.name, msg, tc.want)
		}
	}
	missing := clusterRequest(ns, "missing-kafka", "plain", "", "bob")
	missing.Spec.Kafka.ClusterRef.Name = "nope"
	create(t, missing)
	if msg := waitClusterRefNotResolved(t, missing); !strings.Contains(msg, "kafka.clusterRef.name: Kafka nope does not exist") {
		t.Errorf("refusal says %q", msg)
	}
}

// Requests that name the same Kafka share one lock for a group, whichever
// listener they use: the second waits for the first and starts after it.
func TestEnvtestStrimziGroupLockByClusterID(t *testing.T) {
	env(t)
	installStrimzi(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 4)
	clusterID := strimziCluster(t, ns)
	strimziUser(t, ns, "my-user", "my-cluster", "scram-sha-512")
	grantSecret(t, ns, "bob", "my-user")

	first := clusterRequest(ns, "via-plain", "plain", "", "bob")
	create(t, first)
	firstJob := waitJob(t, first)
	second := clusterRequest(ns, "via-scram", "scram", "my-user", "bob")
	create(t, second)
	eventually(t, 10*time.Second, "via-scram waits for via-plain", func() error {
		cur := getRR(t, second)
		c := condition(cur, v1alpha1.ConditionAccepted)
		if c == nil || c.Reason != state.ReasonWaitingForGroup || !strings.Contains(c.Message, ns+"/via-plain") || cur.Status.JobName != "" {
			return fmt.Errorf("status %+v", cur.Status)
		}
		return nil
	})
	group := first.Spec.Group
	runPod(t, firstJob, 0, 0, testutil.Compact(testutil.Result(group, report.ExitOK, 1)))
	finishJob(t, firstJob, "")
	waitPhase(t, first, v1alpha1.PhaseSucceeded)
	if job := waitJob(t, second); testutil.RunnerEnv(job)[config.EnvClusterID] != clusterID {
		t.Fatalf("via-scram's Job: %v", job.Spec.Template.Spec.Containers[0].Env)
	}
}

// The API server refuses a clusterRef beside bootstrapServers or
// secretRef, and a request with neither.
func TestEnvtestStrimziCEL(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	for _, tc := range []struct {
		name  string
		kafka v1alpha1.KafkaConnection
		want  string
	}{
		{"both", v1alpha1.KafkaConnection{BootstrapServers: "k:9092", ClusterRef: &v1alpha1.StrimziClusterRef{Name: "c", Listener: "tls"}}, "set bootstrapServers, or clusterRef"},
		{"neither", v1alpha1.KafkaConnection{ConfigMapRef: &v1alpha1.LocalObjectReference{Name: "props"}}, "set bootstrapServers, or clusterRef"},
		{"secret", v1alpha1.KafkaConnection{ClusterRef: &v1alpha1.StrimziClusterRef{Name: "c", Listener: "tls"}, SecretRef: &v1alpha1.LocalObjectReference{Name: "s"}}, "kafka.secretRef: not with clusterRef"},
		{"listener", v1alpha1.KafkaConnection{ClusterRef: &v1alpha1.StrimziClusterRef{Name: "c", Listener: "External"}}, "spec.kafka.clusterRef.listener"},
	} {
		w := testutil.MakeRequest(ns, tc.name)
		w.Spec.Kafka = tc.kafka
		err := k8s.Create(context.Background(), w.Obj())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	ok := testutil.MakeRequest(ns, "ok")
	ok.Spec.Kafka = v1alpha1.KafkaConnection{ClusterRef: &v1alpha1.StrimziClusterRef{Name: "c", Listener: "tls", User: "u"}}
	create(t, ok.Obj())
	// A KafkaConnector consumerRef needs a clusterRef, and a Knative one
	// none.
	connector := connectorRequest(ns, "connector-without-cluster", "sink")
	connector.Spec.Kafka = v1alpha1.KafkaConnection{BootstrapServers: "k:9092"}
	if err := k8s.Create(context.Background(), connector); err == nil || !strings.Contains(err.Error(), "a KafkaConnector consumerRef needs kafka.clusterRef") {
		t.Errorf("a KafkaConnector without clusterRef: %v", err)
	}
	trigger := connectorRequest(ns, "trigger-with-cluster", "t")
	trigger.Spec.ConsumerRef.Kind = v1alpha1.KnativeTrigger
	if err := k8s.Create(context.Background(), trigger); err == nil || !strings.Contains(err.Error(), "a Knative consumerRef replaces kafka") {
		t.Errorf("a Trigger with clusterRef: %v", err)
	}
	create(t, connectorRequest(ns, "connector-ok", "sink"))
}

// connectorState is a KafkaConnector's spec.state, or "(absent)".
func connectorStateOf(t *testing.T, ns, name string) string {
	t.Helper()
	kc := &unstructured.Unstructured{}
	kc.SetGroupVersionKind(strimzi.KafkaConnectorGVK)
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, kc); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := unstructured.NestedString(kc.Object, "spec", "state"); ok {
		return v
	}
	return "(absent)"
}

// A KafkaConnector among the consumers is stopped through spec.state for
// the replay and put back to its recorded state after, absent (running)
// and paused alike (one changed meanwhile is left as found:
// TestUnitDecideRestore).
func TestEnvtestStrimziConnectorConsumer(t *testing.T) {
	env(t)
	installStrimzi(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 4)
	connector := func(name string, spec map[string]any) {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		u.SetGroupVersionKind(strimzi.KafkaConnectorGVK)
		u.SetNamespace(ns)
		u.SetName(name)
		create(t, u)
	}
	connector("sink", map[string]any{"class": "org.example.Sink", "tasksMax": int64(2)})
	connector("paused-sink", map[string]any{"class": "org.example.Sink", "state": "paused"})
	rr := consumerRequest(ns, "replay-sinks", "connect-sink",
		v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerKafkaConnector, Name: "sink"},
		v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerKafkaConnector, Name: "paused-sink"})
	create(t, rr)
	cur, job := waitPaused(t, rr)
	if connectorStateOf(t, ns, "sink") != "stopped" || connectorStateOf(t, ns, "paused-sink") != "stopped" {
		t.Fatalf("running with connectors %s and %s", connectorStateOf(t, ns, "sink"), connectorStateOf(t, ns, "paused-sink"))
	}
	recorded := map[string]string{}
	for _, s := range cur.Status.Consumers {
		if s.Method != v1alpha1.PauseState || s.State != v1alpha1.ConsumerPaused {
			t.Fatalf("consumer status %+v", s)
		}
		recorded[s.Name] = fmt.Sprint(s.PreviousState != nil)
	}
	if recorded["sink"] != "false" || recorded["paused-sink"] != "true" {
		t.Fatalf("recorded %v", recorded)
	}
	runPod(t, job, 0, 0, testutil.Compact(testutil.Result("connect-sink", report.ExitOK, 10)))
	finishJob(t, job, "")
	waitRestored(t, rr, state.ReasonRestored)
	if connectorStateOf(t, ns, "sink") != "(absent)" || connectorStateOf(t, ns, "paused-sink") != "paused" {
		t.Fatalf("restored to %s and %s", connectorStateOf(t, ns, "sink"), connectorStateOf(t, ns, "paused-sink"))
	}
}

// strimziConnect is a KafkaConnect that manages KafkaConnectors and
// connects to servers.
func strimziConnect(t *testing.T, ns, name, servers string, annotate bool) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"bootstrapServers": servers, "replicas": int64(1)}}}
	u.SetGroupVersionKind(strimzi.KafkaConnectGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	if annotate {
		u.SetAnnotations(map[string]string{strimzi.UseConnectorResources: "true"})
	}
	create(t, u)
}

// strimziConnector is a KafkaConnector of KafkaConnect connect with the
// config and the status Strimzi writes from Kafka Connect's REST API
// (connectorStatus: its type and the connector's state; topics).
func strimziConnector(t *testing.T, ns, name, connect string, spec map[string]any, typ, connState string, topics ...string) {
	t.Helper()
	status := map[string]any{"connectorStatus": map[string]any{
		"name": name, "type": typ, "connector": map[string]any{"state": connState, "worker_id": "10.0.0.1:8083"},
	}}
	if len(topics) > 0 {
		ts := make([]any, len(topics))
		for i, tp := range topics {
			ts[i] = tp
		}
		status["topics"] = ts
	}
	strimziObject(t, strimzi.KafkaConnectorGVK, ns, name, map[string]string{strimzi.ClusterLabel: connect}, spec, status)
}

func connectorRequest(ns, name, connector string) *v1alpha1.ReplayRequest {
	rr := clusterRequest(ns, name, "scram", "my-user", "bob")
	rr.Spec.Group = ""
	rr.Spec.ConsumerRef = &v1alpha1.KnativeRef{Kind: v1alpha1.ConsumerRefKafkaConnector, Name: connector}
	return rr
}

// A sink KafkaConnector as a consumerRef: its group (connect-<name>, or
// consumer.override.group.id) and topics (topics, or topics.regex as
// status.topics reports it) from the connector, on the clusterRef's Kafka,
// which its KafkaConnect must connect to, with the clusterRef's user.
func TestEnvtestStrimziConnectorRef(t *testing.T) {
	env(t)
	installStrimzi(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 4)
	clusterID := strimziCluster(t, ns)
	strimziUser(t, ns, "my-user", "my-cluster", "scram-sha-512")
	grantSecret(t, ns, "bob", "my-user")
	// Connect uses the plain listener; the replay the scram one.
	strimziConnect(t, ns, "my-connect", "my-cluster-kafka-bootstrap."+ns+".svc:9092", true)
	strimziConnector(t, ns, "orders-sink", "my-connect", map[string]any{"class": "org.example.Sink", "config": map[string]any{"topics": "orders, payments"}}, "sink", "RUNNING")
	strimziConnector(t, ns, "regex-sink", "my-connect", map[string]any{"class": "org.example.Sink", "state": "paused",
		"config": map[string]any{"topics.regex": "audit-.*", "consumer.override.group.id": "audit-archiver"}}, "sink", "PAUSED", "audit-b", "audit-a")

	for _, tc := range []struct {
		connector, group, topics, from string
	}{
		{"orders-sink", "connect-orders-sink", "orders payments", "KafkaConnector orders-sink: spec.config.topics"},
		{"regex-sink", "audit-archiver", "audit-a audit-b", "KafkaConnector regex-sink: status.topics"},
	} {
		rr := connectorRequest(ns, "replay-"+tc.connector, tc.connector)
		create(t, rr)
		job := waitJob(t, rr)
		env := testutil.RunnerEnv(job)
		servers := "my-cluster-kafka-bootstrap." + ns + ".svc:9093"
		if env[config.EnvGroup] != tc.group || env[config.EnvTopics] != tc.topics || env[config.EnvBootstrapServers] != servers ||
			env[config.EnvClusterID] != clusterID || env[config.EnvPropertiesDigest] == "" {
			t.Fatalf("%s: Job env %v", tc.connector, env)
		}
		if secrets, _ := secretDir(t, job); secrets["my-user"]["password"] != "sasl.password" {
			t.Fatalf("%s: Secrets mounted %v", tc.connector, secrets)
		}
		res := getRR(t, rr).Status.Resolved
		if res == nil || res.Group != tc.group || !strings.HasPrefix(res.TopicsFrom, tc.from) ||
			res.BootstrapServersFrom != "KafkaConnect my-connect: spec.bootstrapServers, Kafka my-cluster's listener plain" {
			t.Fatalf("%s: status.resolved %+v", tc.connector, res)
		}
	}
}

// Every KafkaConnector a replay cannot take its group from fails the
// request ConsumerRefNotResolved, with no Job, saying why and what to do.
func TestEnvtestStrimziConnectorRefRefusals(t *testing.T) {
	env(t)
	installStrimzi(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 4)
	strimziCluster(t, ns)
	strimziUser(t, ns, "my-user", "my-cluster", "scram-sha-512")
	grantSecret(t, ns, "bob", "my-user")
	plain := "my-cluster-kafka-bootstrap." + ns + ".svc:9092"
	strimziConnect(t, ns, "my-connect", plain, true)
	strimziConnect(t, ns, "unmanaged", plain, false)
	strimziConnect(t, ns, "elsewhere", "other-kafka-bootstrap:9092", true)
	sink := map[string]any{"class": "org.example.Sink", "config": map[string]any{"topics": "orders"}}
	strimziConnector(t, ns, "source", "my-connect", map[string]any{"class": "org.example.Source"}, "source", "RUNNING")
	strimziConnector(t, ns, "stopped", "my-connect", map[string]any{"class": "org.example.Sink", "state": "stopped", "config": map[string]any{"topics": "orders"}}, "sink", "STOPPED")
	strimziConnector(t, ns, "orphan", "nope", sink, "sink", "RUNNING")
	strimziConnector(t, ns, "unmanaged-sink", "unmanaged", sink, "sink", "RUNNING")
	strimziConnector(t, ns, "elsewhere-sink", "elsewhere", sink, "sink", "RUNNING")
	strimziConnector(t, ns, "no-topics", "my-connect", map[string]any{"class": "org.example.Sink"}, "sink", "RUNNING")
	strimziConnector(t, ns, "regex-unused", "my-connect", map[string]any{"class": "org.example.Sink", "config": map[string]any{"topics.regex": "x-.*"}}, "sink", "RUNNING")
	strimziConnector(t, ns, "unreported", "my-connect", sink, "", "")
	for _, tc := range []struct{ connector, want string }{
		{"source", "KafkaConnector source is a source connector: its offsets are positions in the system it reads, kept by Kafka Connect, not a consumer group's; use Strimzi's own offsets management (Strimzi 0.44 and later): spec.alterOffsets or the strimzi.io/connector-offsets annotation"},
		{"stopped", `KafkaConnector stopped is stopped (spec.state "stopped", Kafka Connect reports "STOPPED")`},
		{"orphan", "KafkaConnector orphan: KafkaConnect nope (its strimzi.io/cluster label) does not exist"},
		{"unmanaged-sink", `KafkaConnect unmanaged does not have the annotation strimzi.io/use-connector-resources: "true"`},
		{"elsewhere-sink", `KafkaConnect elsewhere connects to "other-kafka-bootstrap:9092" (spec.bootstrapServers), which is none of Kafka my-cluster's listeners`},
		{"no-topics", "spec.config sets neither topics nor topics.regex"},
		{"regex-unused", `spec.config.topics.regex is "x-.*" and status.topics is empty`},
		{"unreported", "status.connectorStatus.type is empty"},
		{"missing", "consumerRef: KafkaConnector missing does not exist"},
	} {
		rr := connectorRequest(ns, "replay-"+tc.connector, tc.connector)
		create(t, rr)
		if msg := waitRefused(t, rr, state.ReasonConsumerRefNotResolved); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: refusal says %q, want %q", tc.connector, msg, tc.want)
		}
	}
}

// With Strimzi support off (the chart's launcher.strimzi.enabled false),
// a clusterRef, a KafkaConnector consumerRef and a KafkaConnector among
// the consumers each fail before anything changes, saying so.
func TestEnvtestStrimziSwitchedOff(t *testing.T) {
	env(t)
	installStrimzi(t)
	ns := newNamespace(t, nil)
	opts := testOptions()
	opts.NoStrimzi = true
	startLauncher(t, opts, 2)
	cluster := clusterRequest(ns, "cluster-off", "plain", "", "bob")
	create(t, cluster)
	if msg := waitClusterRefNotResolved(t, cluster); !strings.Contains(msg, "kafka.clusterRef: Strimzi support is turned off in this launcher (--strimzi=false)") {
		t.Errorf("clusterRef: refusal says %q", msg)
	}
	connector := connectorRequest(ns, "connector-off", "sink")
	create(t, connector)
	if msg := waitRefused(t, connector, state.ReasonConsumerRefNotResolved); !strings.Contains(msg, "consumerRef: Strimzi support is turned off") {
		t.Errorf("consumerRef: refusal says %q", msg)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"class": "org.example.Sink"}}}
	u.SetGroupVersionKind(strimzi.KafkaConnectorGVK)
	u.SetNamespace(ns)
	u.SetName("sink")
	create(t, u)
	listed := consumerRequest(ns, "listed-connector", "connect-sink", v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerKafkaConnector, Name: "sink"})
	create(t, listed)
	cur := waitPhase(t, listed, v1alpha1.PhaseFailed)
	if c := condition(cur, v1alpha1.ConditionSucceeded); c == nil || c.Reason != state.ReasonPauseFailed || !strings.Contains(c.Message, "Strimzi support is turned off") {
		t.Fatalf("Succeeded %+v", c)
	}
	if st := connectorStateOf(t, ns, "sink"); st != "(absent)" {
		t.Fatalf("the connector's spec.state is %s", st)
	}
}
