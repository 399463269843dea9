package cli

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/exit"
	"github.com/kafka-replay/kafka-replay/launcher/clusterref"
	"github.com/kafka-replay/kafka-replay/runner/config"
)

// A Strimzi Kafka with a SCRAM listener over TLS, and a KafkaUser of it,
// as the operator leaves them once reconciled (only the fields the
// resolution reads).
func strimziObjects(ns string) (kafka, user *unstructured.Unstructured) {
	ready := []any{map[string]any{"type": "Ready", "status": "True"}}
	kafka = &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "my-cluster", "namespace": ns, "generation": int64(1)},
		"spec": map[string]any{"kafka": map[string]any{"listeners": []any{
			map[string]any{"name": "scram", "port": int64(9094), "type": "internal", "tls": true, "authentication": map[string]any{"type": "scram-sha-512"}},
		}}},
		"status": map[string]any{"conditions": ready, "observedGeneration": int64(1), "clusterId": "abc123",
			"listeners": []any{map[string]any{"name": "scram", "bootstrapServers": "my-cluster-kafka-bootstrap." + ns + ".svc:9094"}}},
	}}
	kafka.SetGroupVersionKind(clusterref.KafkaGVK)
	user = &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "replay", "namespace": ns, "generation": int64(1), "labels": map[string]any{"strimzi.io/cluster": "my-cluster"}},
		"spec":     map[string]any{"authentication": map[string]any{"type": "scram-sha-512"}},
		"status":   map[string]any{"conditions": ready, "observedGeneration": int64(1), "secret": "replay", "username": "replay"},
	}}
	user.SetGroupVersionKind(clusterref.KafkaUserGVK)
	return kafka, user
}

func strimziClient(objs ...client.Object) client.Client {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(clusterref.KafkaGVK, meta.RESTScopeNamespace)
	mapper.Add(clusterref.KafkaUserGVK, meta.RESTScopeNamespace)
	return fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithRESTMapper(mapper).WithObjects(objs...).Build()
}

// groups --cluster/--user connects as a request's clusterRef does: the
// listener's servers, the cluster CA and the KafkaUser's Secret mounted
// under the runner's property names, the resolved properties (the binding
// among them) from the pod's annotations, and the Job's binding in its
// environment (the cluster's ID, the properties' digest); no credential
// passes through the plugin, and the runner reads the flags and the
// environment it is given, and refuses properties changed since.
func TestGroupsClusterRef(t *testing.T) {
	kafka, user := strimziObjects("shop")
	res, err := resolveCluster(context.Background(), strimziClient(kafka, user), "shop", "my-cluster/scram", "replay")
	if err != nil {
		t.Fatal(err)
	}
	o := groupsOptions{cluster: "my-cluster/scram", user: "replay", timeout: time.Minute, resolved: res}
	args, err := o.runnerArgs()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(args, " "), "--list --bootstrap-servers my-cluster-kafka-bootstrap.shop.svc:9094 --output json --timeout 1m0s --kafka-secret-dir /etc/kafka-replay/kafka-secret"; got != want {
		t.Errorf("runner args:\n%s\nwant\n%s", got, want)
	}
	p := groupsPod("shop", "registry.local/runner:1", args, o)
	if len(p.Spec.Volumes) != 1 || p.Spec.Volumes[0].Projected == nil {
		t.Fatalf("volumes: %+v", p.Spec.Volumes)
	}
	secrets := map[string]string{}
	var downward []string
	for _, s := range p.Spec.Volumes[0].Projected.Sources {
		switch {
		case s.Secret != nil:
			for _, it := range s.Secret.Items {
				secrets[s.Secret.Name+"/"+it.Key] = it.Path
			}
		case s.DownwardAPI != nil:
			for _, it := range s.DownwardAPI.Items {
				downward = append(downward, it.Path+"="+p.Annotations[strings.TrimSuffix(strings.TrimPrefix(it.FieldRef.FieldPath, "metadata.annotations['"), "']")])
			}
		}
	}
	if secrets["my-cluster-cluster-ca-cert/ca.crt"] != "ssl.ca.pem" || secrets["replay/password"] != "sasl.password" || len(secrets) != 2 {
		t.Errorf("secret keys mounted: %v", secrets)
	}
	if got, want := strings.Join(downward, " "), "bootstrap.servers=my-cluster-kafka-bootstrap.shop.svc:9094 security.protocol=SASL_SSL sasl.mechanism=SCRAM-SHA-512 sasl.username=replay"; got != want {
		t.Errorf("properties from annotations:\n%s\nwant\n%s", got, want)
	}
	// The directory as the kubelet lays it out (the Secret's value a
	// stand-in) is one the runner takes with these flags: its binding is
	// the servers the runner is given.
	dir := t.TempDir()
	for _, kv := range append(downward, "sasl.password=stand-in") {
		k, v, _ := strings.Cut(kv, "=")
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{}
	for _, e := range p.Spec.Containers[0].Env {
		if e.ValueFrom != nil {
			t.Errorf("%s comes from %+v: the pod's environment is the binding's values alone", e.Name, e.ValueFrom)
		}
		env[e.Name] = e.Value
	}
	props := config.Properties{}
	for _, kv := range downward {
		k, v, _ := strings.Cut(kv, "=")
		props[k] = v
	}
	if want := map[string]string{config.EnvClusterID: "abc123", config.EnvPropertiesDigest: config.PropertiesDigestOf(props)}; !maps.Equal(env, want) {
		t.Errorf("the pod's environment %v, want the Job's binding %v", env, want)
	}
	local := slices.Clone(args)
	local[slices.Index(local, groupsSecretDir)] = dir
	for k, v := range env {
		t.Setenv(k, v)
	}
	if _, err := config.LoadInspect(local, &strings.Builder{}); err != nil {
		t.Errorf("the runner refuses %v: %v", local, err)
	}
	// An annotation patched before the kubelet wrote the file: refused.
	if err := os.WriteFile(filepath.Join(dir, "bootstrap.servers"), []byte("elsewhere:9094"), 0o600); err != nil {
		t.Fatal(err)
	}
	local[slices.Index(local, "my-cluster-kafka-bootstrap.shop.svc:9094")] = "elsewhere:9094"
	if _, err := config.LoadInspect(local, &strings.Builder{}); err == nil || !strings.Contains(err.Error(), config.FlagPropertiesDigest) {
		t.Errorf("the runner takes properties changed since the resolution: %v", err)
	}
	if m := p.Spec.Containers[0].VolumeMounts; len(m) != 1 || m[0].MountPath != groupsSecretDir || !m[0].ReadOnly {
		t.Errorf("mounts: %+v", m)
	}
}

// A refusal names the plugin's flags, in the namespace asked, and says
// what to do; Strimzi not installed, and bad combinations of flags, are
// refused before any pod.
func TestGroupsClusterRefRefused(t *testing.T) {
	kafka, user := strimziObjects("shop")
	for _, tc := range []struct {
		name          string
		c             client.Client
		cluster, user string
		want          string
		code          exit.Code
	}{
		{"no such Kafka", strimziClient(), "other/scram", "replay", "--cluster (spec.kafka.clusterRef.name): Kafka other does not exist in namespace shop", exit.Usage},
		{"no such listener", strimziClient(kafka, user), "my-cluster/plain", "replay", `--cluster (spec.kafka.clusterRef.listener): Kafka my-cluster has no listener "plain"`, exit.Usage},
		{"no user for a SCRAM listener", strimziClient(kafka, user), "my-cluster/scram", "", "--user (spec.kafka.clusterRef.user): Kafka my-cluster: listener scram authenticates with scram-sha-512", exit.Usage},
		{"no such user", strimziClient(kafka), "my-cluster/scram", "nobody", "--user (spec.kafka.clusterRef.user): KafkaUser nobody does not exist in namespace shop", exit.Usage},
		{"Strimzi not installed", fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithInterceptorFuncs(interceptor.Funcs{
			Get: func(_ context.Context, _ client.WithWatch, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
				gvk := obj.GetObjectKind().GroupVersionKind()
				return &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
			}}).Build(), "my-cluster/scram", "replay", "this cluster does not serve Kafka (" + clusterref.KafkaGVK.GroupVersion().String() + "): is Strimzi installed?", exit.NotFound},
		{"not KAFKA/LISTENER", strimziClient(kafka, user), "my-cluster", "replay", `--cluster: "my-cluster" is not KAFKA/LISTENER`, exit.Usage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := resolveCluster(context.Background(), tc.c, "shop", tc.cluster, tc.user)
			var e *exit.Error
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &e) || e.Code != tc.code {
				t.Errorf("got %v, want exit %d with %q", err, tc.code, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name string
		o    groupsOptions
		want string
	}{
		{"servers and a cluster", groupsOptions{bootstrap: "kafka:9092", cluster: "my-cluster/scram"}, "--cluster conflicts with --bootstrap-servers"},
		{"a Secret and a cluster", groupsOptions{secret: "creds", cluster: "my-cluster/scram"}, "--secret conflicts with --cluster"},
		{"a user without a cluster", groupsOptions{bootstrap: "kafka:9092", user: "replay"}, "--user needs --cluster"},
		{"neither servers nor cluster", groupsOptions{}, "--bootstrap-servers (or --cluster) is required"},
		{"a bad listener name", groupsOptions{cluster: "my-cluster/TLS!"}, `--cluster: listener "TLS!" is not a Strimzi listener name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.o.runnerArgs(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}
