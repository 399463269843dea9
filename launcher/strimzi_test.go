package launcher

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kafka-replay/kafka-replay/runner/config"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/grouplock"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/strimzi"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// clusterRefRequest is an accepted clusterRef request whose
// status.resolvedKafka is a real resolution of a SCRAM user on a TLS
// listener.
func clusterRefRequest(t *testing.T, name, listener string) *testutil.RequestWrapper {
	t.Helper()
	kafka := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "my-cluster", "generation": int64(1)},
		"spec": map[string]any{"kafka": map[string]any{"listeners": []any{
			map[string]any{"name": "tls", "tls": true, "authentication": map[string]any{"type": "scram-sha-512"}},
			map[string]any{"name": "scram", "tls": false, "authentication": map[string]any{"type": "scram-sha-512"}},
		}}},
		"status": map[string]any{
			"observedGeneration": int64(1), "clusterId": "cluster-1",
			"conditions": []any{map[string]any{"type": "Ready", "status": "True"}},
			"listeners": []any{
				map[string]any{"name": "tls", "bootstrapServers": "my-cluster-kafka-bootstrap:9093"},
				map[string]any{"name": "scram", "bootstrapServers": "my-cluster-kafka-bootstrap:9094"},
			},
		},
	}}
	user := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "my-user", "labels": map[string]any{strimzi.ClusterLabel: "my-cluster"}},
		"spec":     map[string]any{"authentication": map[string]any{"type": "scram-sha-512"}},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}},
			"username": "my-user", "secret": "my-user"},
	}}
	ref := v1alpha1.StrimziClusterRef{Name: "my-cluster", Listener: listener, User: "my-user"}
	res, err := strimzi.Resolve(ref, kafka, user)
	if err != nil {
		t.Fatal(err)
	}
	w := testutil.MakeRequest("ns", name)
	w.Spec.Kafka = v1alpha1.KafkaConnection{ClusterRef: &ref}
	w.Status.ResolvedKafka = &res
	return w
}

// A clusterRef request's Job: the listener's servers, the cluster's ID, and
// one secret directory with the CA's and the user's keys and the resolved
// properties, the binding among them, from pod annotations; never unbound.
func TestUnitClusterRefJob(t *testing.T) {
	job := buildJob(t, clusterRefRequest(t, "a", "tls"))
	env := testutil.RunnerEnv(job)
	if env[config.EnvBootstrapServers] != "my-cluster-kafka-bootstrap:9093" || env[config.EnvClusterID] != "cluster-1" ||
		env[config.EnvKafkaSecretDir] != "/etc/kafka-replay/kafka-secret" || env[config.EnvAllowUnboundSecret] != "" || env[config.EnvKafkaConfigDir] != "" {
		t.Fatalf("env %v", env)
	}
	var secrets []string
	files := map[string]string{}
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.Name != "kafka-secret" {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.Secret != nil {
				for _, it := range s.Secret.Items {
					secrets = append(secrets, s.Secret.Name+":"+it.Key+"->"+it.Path)
				}
			}
			if s.DownwardAPI != nil {
				for _, f := range s.DownwardAPI.Items {
					key := strings.TrimSuffix(strings.TrimPrefix(f.FieldRef.FieldPath, "metadata.annotations['"), "']")
					files[f.Path] = job.Spec.Template.Annotations[key]
				}
			}
		}
	}
	if got := strings.Join(secrets, " "); got != "my-cluster-cluster-ca-cert:ca.crt->ssl.ca.pem my-user:password->sasl.password" {
		t.Errorf("secret items %s", got)
	}
	if files["bootstrap.servers"] != "my-cluster-kafka-bootstrap:9093" || files["security.protocol"] != "SASL_SSL" ||
		files["sasl.mechanism"] != "SCRAM-SHA-512" || files["sasl.username"] != "my-user" || len(files) != 4 {
		t.Errorf("properties %v", files)
	}
	// The runner is told the digest of exactly what the annotations give
	// it (beside the Secrets' keys, which it leaves out), so a patched
	// annotation is refused.
	read := config.Properties{"sasl.password": "pw", "ssl.ca.pem": "ca"}
	for n, v := range files {
		read[n] = v
	}
	digest := env[config.EnvPropertiesDigest]
	if digest != config.PropertiesDigestOf(read) {
		t.Errorf("%s = %q, not the digest of the properties the runner reads", config.EnvPropertiesDigest, digest)
	}
	read["security.protocol"] = "SASL_PLAINTEXT"
	if digest == config.PropertiesDigestOf(read) {
		t.Error("a downgraded security.protocol has the same digest")
	}
}

// The Job's lock key is its request's, the cluster's ID with the group,
// whichever listener: two requests through two listeners share it, and a
// request by plain servers does not.
func TestUnitClusterRefQueueKey(t *testing.T) {
	a, b := clusterRefRequest(t, "a", "tls").Obj(), clusterRefRequest(t, "b", "scram").Obj()
	if grouplock.QueueKey(a) != grouplock.QueueKey(b) || !strings.HasPrefix(grouplock.QueueKey(a), "cluster-id:cluster-1|") {
		t.Fatalf("keys %q and %q", grouplock.QueueKey(a), grouplock.QueueKey(b))
	}
	job := buildJob(t, clusterRefRequest(t, "a", "tls"))
	if got := grouplock.PodSpecQueueKey(&job.Spec.Template.Spec); got != grouplock.QueueKey(a) {
		t.Fatalf("the Job's key %q is not the request's %q", got, grouplock.QueueKey(a))
	}
	plain := testutil.MakeRequest("ns", "p").Bootstrap("my-cluster-kafka-bootstrap:9093").Obj()
	plain.Spec.Group = a.Spec.Group
	if grouplock.QueueKey(plain) == grouplock.QueueKey(a) {
		t.Fatal("a request by servers shares the cluster ID's key")
	}
}

// No Job follows from a status.resolvedKafka that is missing, belongs to
// another clusterRef, or is not what a resolution makes.
func TestUnitClusterRefJobRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*v1alpha1.ReplayRequest)
		want string
	}{
		{"unresolved", func(rr *v1alpha1.ReplayRequest) { rr.Status.ResolvedKafka = nil }, "status.resolvedKafka does not resolve"},
		{"another listener", func(rr *v1alpha1.ReplayRequest) { rr.Status.ResolvedKafka.Listener = "scram" }, "status.resolvedKafka does not resolve"},
		{"another binding", func(rr *v1alpha1.ReplayRequest) { rr.Status.ResolvedKafka.Properties[0].Value = "evil:9092" }, "bootstrap.servers is not"},
		{"another Secret", func(rr *v1alpha1.ReplayRequest) { rr.Status.ResolvedKafka.Secrets[1].Name = "admin" }, "admin is neither"},
		{"a digest of other properties", func(rr *v1alpha1.ReplayRequest) {
			rr.Status.ResolvedKafka.PropertiesDigest = config.PropertiesDigestOf(config.Properties{"security.protocol": "SASL_PLAINTEXT"})
		}, "propertiesDigest is not the digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rr := clusterRefRequest(t, "a", "tls").Resolved("earliest").Obj()
			tc.edit(rr)
			_, err := BuildJob(rr, runnerjob.StageApply, DefaultOptions())
			if !errors.Is(err, errJobRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("BuildJob: %v, want refused with %q", err, tc.want)
			}
		})
	}
}

// ValidateSpec refuses a clusterRef beside servers or a secretRef, naming
// the field, as the CRD's rules do.
func TestUnitClusterRefSpec(t *testing.T) {
	rr := clusterRefRequest(t, "a", "tls").Obj()
	if err := ValidateSpec(&rr.Spec); err != nil {
		t.Fatal(err)
	}
	rr.Spec.Kafka.BootstrapServers = "k:9092"
	rr.Spec.Kafka.SecretRef = &v1alpha1.LocalObjectReference{Name: "s"}
	err := ValidateSpec(&rr.Spec)
	if err == nil || !strings.Contains(err.Error(), "kafka.bootstrapServers: not with kafka.clusterRef") || !strings.Contains(err.Error(), "kafka.secretRef: not with kafka.clusterRef") {
		t.Fatalf("ValidateSpec: %v", err)
	}
}

// strimziWaitKeys: a request not yet accepted is indexed by its Kafka (of
// clusterRef.namespace when given), its KafkaUser and its KafkaConnector
// consumerRef, in the request's namespace; an accepted or finished one, or
// one without a clusterRef, by nothing.
func TestUnitStrimziWaitKeys(t *testing.T) {
	mk := func(user, connector, kafkaNS string) *v1alpha1.ReplayRequest {
		rr := &v1alpha1.ReplayRequest{}
		rr.Namespace = "team"
		rr.Spec.Kafka.ClusterRef = &v1alpha1.StrimziClusterRef{Name: "my-cluster", Listener: "tls", User: user, Namespace: kafkaNS}
		if connector != "" {
			rr.Spec.ConsumerRef = &v1alpha1.KnativeRef{Kind: v1alpha1.ConsumerRefKafkaConnector, Name: connector}
		}
		return rr
	}
	accepted := mk("u", "sink", "")
	accepted.Status.ResolvedTarget = "2026-01-01T00:00:00Z"
	noRef := mk("", "", "")
	noRef.Spec.Kafka.ClusterRef = nil
	for _, tc := range []struct {
		name string
		rr   *v1alpha1.ReplayRequest
		want string
	}{
		{"kafka", mk("", "", ""), "Kafka/team/my-cluster"},
		{"kafka elsewhere and user", mk("u", "", "kafka"), "Kafka/kafka/my-cluster KafkaUser/team/u"},
		{"connector", mk("u", "sink", ""), "Kafka/team/my-cluster KafkaUser/team/u KafkaConnector/team/sink"},
		{"accepted", accepted, ""},
		{"no clusterRef", noRef, ""},
	} {
		if got := strings.Join(strimziWaitKeys(tc.rr), " "); got != tc.want {
			t.Errorf("%s: keys %q, want %q", tc.name, got, tc.want)
		}
	}
}
