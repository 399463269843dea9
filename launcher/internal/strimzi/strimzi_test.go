package strimzi

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kafka-replay/kafka-replay/runner/config"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// kafka is a Kafka as the Strimzi operator leaves it once Ready: listeners
// plain (no authentication), scram (plain, scram-sha-512), tls (TLS,
// scram-sha-512) and mtls (TLS, tls), each with its status entry.
func kafka(edit ...func(map[string]any)) *unstructured.Unstructured {
	listener := func(name string, port int64, tls bool, auth string) map[string]any {
		l := map[string]any{"name": name, "port": port, "type": "internal", "tls": tls}
		if auth != "" {
			l["authentication"] = map[string]any{"type": auth}
		}
		return l
	}
	status := func(name string, port string) map[string]any {
		return map[string]any{
			"name":             name,
			"bootstrapServers": "my-cluster-kafka-bootstrap.kafka.svc:" + port,
			"addresses":        []any{map[string]any{"host": "my-cluster-kafka-bootstrap.kafka.svc", "port": port}},
		}
	}
	obj := map[string]any{
		"apiVersion": "kafka.strimzi.io/v1",
		"kind":       "Kafka",
		"metadata":   map[string]any{"name": "my-cluster", "namespace": "kafka", "uid": "kafka-uid", "generation": int64(3)},
		"spec": map[string]any{"kafka": map[string]any{"listeners": []any{
			listener("plain", 9092, false, ""),
			listener("scram", 9094, false, "scram-sha-512"),
			listener("tls", 9093, true, "scram-sha-512"),
			listener("mtls", 9095, true, "tls"),
		}}},
		"status": map[string]any{
			"observedGeneration": int64(3),
			"clusterId":          "4aAN7TeqSz2dBl2FbXkSwQ",
			"conditions":         []any{map[string]any{"type": "Ready", "status": "True"}},
			"listeners":          []any{status("plain", "9092"), status("scram", "9094"), status("tls", "9093"), status("mtls", "9095")},
		},
	}
	for _, e := range edit {
		e(obj)
	}
	return &unstructured.Unstructured{Object: obj}
}

// user is a Ready KafkaUser of my-cluster with the given authentication.
func user(auth string, edit ...func(map[string]any)) *unstructured.Unstructured {
	username := "my-user"
	if auth == "tls" {
		username = "CN=my-user"
	}
	obj := map[string]any{
		"apiVersion": "kafka.strimzi.io/v1",
		"kind":       "KafkaUser",
		"metadata": map[string]any{"name": "my-user", "namespace": "kafka", "generation": int64(1),
			"labels": map[string]any{"strimzi.io/cluster": "my-cluster"}},
		"spec": map[string]any{"authentication": map[string]any{"type": auth}},
		"status": map[string]any{
			"observedGeneration": int64(1),
			"conditions":         []any{map[string]any{"type": "Ready", "status": "True"}},
			"username":           username,
			"secret":             "my-user",
		},
	}
	for _, e := range edit {
		e(obj)
	}
	return &unstructured.Unstructured{Object: obj}
}

func set(value any, path ...string) func(map[string]any) {
	return func(o map[string]any) {
		if err := unstructured.SetNestedField(o, value, path...); err != nil {
			panic(err)
		}
	}
}

func remove(path ...string) func(map[string]any) {
	return func(o map[string]any) { unstructured.RemoveNestedField(o, path...) }
}

// onListener edits the spec.kafka.listeners entry called name.
func onListener(name string, edit func(map[string]any)) func(map[string]any) {
	return func(o map[string]any) {
		ls, _, _ := unstructured.NestedSlice(o, "spec", "kafka", "listeners")
		for _, l := range ls {
			if m := l.(map[string]any); m["name"] == name {
				edit(m)
			}
		}
		_ = unstructured.SetNestedSlice(o, ls, "spec", "kafka", "listeners")
	}
}

// notYet are TestResolve's refusals that are ErrNotReady: the Strimzi
// operator has not reconciled the object yet, or not written its status.
var notYet = map[string]bool{
	"Kafka not ready": true, "Kafka Ready False": true, "Kafka status of an older spec": true, "no cluster ID": true,
	"listener without status": true, "listener with empty servers": true,
	"user not ready": true, "user without its Secret": true, "SCRAM user without a username": true,
}

func TestResolve(t *testing.T) {
	const servers = "my-cluster-kafka-bootstrap.kafka.svc:"
	ca := v1alpha1.ResolvedSecret{
		Name: "my-cluster-cluster-ca-cert", From: "Kafka my-cluster: the cluster CA (my-cluster-cluster-ca-cert)",
		Keys: []v1alpha1.SecretKeyProperty{{Key: "ca.crt", Property: "ssl.ca.pem"}},
	}
	scramSecret := v1alpha1.ResolvedSecret{
		Name: "my-user", From: "KafkaUser my-user: status.secret",
		Keys: []v1alpha1.SecretKeyProperty{{Key: "password", Property: "sasl.password"}},
	}
	scramProps := []v1alpha1.KafkaProperty{{Name: "sasl.mechanism", Value: "SCRAM-SHA-512"}, {Name: "sasl.username", Value: "my-user"}}
	props := func(servers, protocol string, more ...v1alpha1.KafkaProperty) []v1alpha1.KafkaProperty {
		return append([]v1alpha1.KafkaProperty{{Name: "bootstrap.servers", Value: servers}, {Name: "security.protocol", Value: protocol}}, more...)
	}
	resolved := func(listener, user, port string, p []v1alpha1.KafkaProperty, secrets ...v1alpha1.ResolvedSecret) v1alpha1.ResolvedKafka {
		r := v1alpha1.ResolvedKafka{
			Name: "my-cluster", Listener: listener, User: user, UID: "kafka-uid", ClusterID: "4aAN7TeqSz2dBl2FbXkSwQ",
			BootstrapServers: servers + port, Properties: p, Secrets: secrets,
		}
		if user != "" {
			r.UserSecret = secrets[len(secrets)-1].Name
		}
		return r
	}
	ref := func(listener, user string) v1alpha1.StrimziClusterRef {
		return v1alpha1.StrimziClusterRef{Name: "my-cluster", Listener: listener, User: user}
	}
	for _, tc := range []struct {
		name  string
		ref   v1alpha1.StrimziClusterRef
		kafka *unstructured.Unstructured
		user  *unstructured.Unstructured
		want  v1alpha1.ResolvedKafka
		err   string // a part of the refusal; empty: resolved
	}{
		{name: "plain listener, no user", ref: ref("plain", ""), kafka: kafka(),
			want: resolved("plain", "", "9092", props(servers+"9092", "PLAINTEXT"))},
		{name: "SCRAM-SHA-512 on a plain listener", ref: ref("scram", "my-user"), kafka: kafka(), user: user("scram-sha-512"),
			want: resolved("scram", "my-user", "9094", props(servers+"9094", "SASL_PLAINTEXT", scramProps...), scramSecret)},
		{name: "SCRAM-SHA-512 on a TLS listener", ref: ref("tls", "my-user"), kafka: kafka(), user: user("scram-sha-512"),
			want: resolved("tls", "my-user", "9093", props(servers+"9093", "SASL_SSL", scramProps...), ca, scramSecret)},
		{name: "TLS client authentication", ref: ref("mtls", "my-user"), kafka: kafka(), user: user("tls"),
			want: resolved("mtls", "my-user", "9095", props(servers+"9095", "SSL"), ca, v1alpha1.ResolvedSecret{
				Name: "my-user", From: "KafkaUser my-user: status.secret",
				Keys: []v1alpha1.SecretKeyProperty{{Key: "user.crt", Property: "ssl.certificate.pem"}, {Key: "user.key", Property: "ssl.key.pem"}},
			})},
		{name: "TLS listener without authentication", ref: ref("tls", ""),
			kafka: kafka(onListener("tls", func(l map[string]any) { delete(l, "authentication") })),
			want:  resolved("tls", "", "9093", props(servers+"9093", "SSL"), ca)},
		{name: "the user's Secret is the one its status names", ref: ref("scram", "my-user"), kafka: kafka(),
			user: user("scram-sha-512", set("team-my-user", "status", "secret")),
			want: resolved("scram", "my-user", "9094", props(servers+"9094", "SASL_PLAINTEXT", scramProps...), v1alpha1.ResolvedSecret{
				Name: "team-my-user", From: scramSecret.From, Keys: scramSecret.Keys,
			})},
		{name: "a listener's server list is spelled as the runner reads it", ref: ref("plain", ""),
			kafka: kafka(set([]any{map[string]any{"name": "plain", "bootstrapServers": " a:9092 , b:9092,"}}, "status", "listeners")),
			want: func() v1alpha1.ResolvedKafka {
				r := resolved("plain", "", "", props("a:9092,b:9092", "PLAINTEXT"))
				r.BootstrapServers = "a:9092,b:9092"
				return r
			}()},

		{name: "missing Kafka", ref: ref("plain", ""), err: "kafka.clusterRef.name: Kafka my-cluster does not exist"},
		{name: "Kafka not ready", ref: ref("plain", ""),
			kafka: kafka(set([]any{map[string]any{"type": "NotReady", "status": "True"}}, "status", "conditions")),
			err:   "Kafka my-cluster is not ready: status.conditions has no Ready condition"},
		{name: "Kafka Ready False", ref: ref("plain", ""),
			kafka: kafka(set([]any{map[string]any{"type": "Ready", "status": "False", "reason": "InvalidResourceException"}}, "status", "conditions")),
			err:   "Kafka my-cluster is not ready (status.conditions Ready is False: InvalidResourceException"},
		{name: "Kafka status of an older spec", ref: ref("plain", ""), kafka: kafka(set(int64(2), "status", "observedGeneration")),
			err: "Kafka my-cluster: status.observedGeneration 2 is behind metadata.generation 3"},
		{name: "no cluster ID", ref: ref("plain", ""), kafka: kafka(remove("status", "clusterId")),
			err: "Kafka my-cluster: status.clusterId is empty"},
		{name: "missing listener", ref: ref("ext", ""), kafka: kafka(),
			err: `kafka.clusterRef.listener: Kafka my-cluster has no listener "ext" (spec.kafka.listeners has "plain", "scram", "tls", "mtls")`},
		{name: "listener without status", ref: ref("plain", ""), kafka: kafka(set([]any{}, "status", "listeners")),
			err: "Kafka my-cluster: status.listeners has no entry for listener plain"},
		{name: "listener with empty servers", ref: ref("plain", ""),
			kafka: kafka(set([]any{map[string]any{"name": "plain", "bootstrapServers": " , "}}, "status", "listeners")),
			err:   "Kafka my-cluster: status.listeners[plain].bootstrapServers is empty"},
		{name: "listener with servers the runner refuses", ref: ref("plain", ""),
			kafka: kafka(set([]any{map[string]any{"name": "plain", "bootstrapServers": "no-port"}}, "status", "listeners")),
			err:   "Kafka my-cluster: status.listeners[plain].bootstrapServers: "},
		{name: "listener with its own certificate", ref: ref("tls", "my-user"), user: user("scram-sha-512"),
			kafka: kafka(onListener("tls", func(l map[string]any) {
				l["configuration"] = map[string]any{"brokerCertChainAndKey": map[string]any{"secretName": "own"}}
			})),
			err: "listener tls has its own certificate (configuration.brokerCertChainAndKey)"},
		{name: "OAuth listener", ref: ref("scram", "my-user"), user: user("scram-sha-512"),
			kafka: kafka(onListener("scram", func(l map[string]any) { l["authentication"] = map[string]any{"type": "oauth"} })),
			err:   "Kafka my-cluster: listener scram authenticates with oauth (spec.kafka.listeners[].authentication.type): only scram-sha-512 and tls"},
		{name: "user on a listener without authentication", ref: ref("plain", "my-user"), kafka: kafka(), user: user("scram-sha-512"),
			err: "kafka.clusterRef.user: Kafka my-cluster: listener plain has no authentication"},
		{name: "no user on a listener with authentication", ref: ref("scram", ""), kafka: kafka(),
			err: "kafka.clusterRef.user: Kafka my-cluster: listener scram authenticates with scram-sha-512: name the KafkaUser"},
		{name: "missing user", ref: ref("scram", "my-user"), kafka: kafka(),
			err: "kafka.clusterRef.user: KafkaUser my-user does not exist"},
		{name: "a user of another cluster", ref: ref("scram", "my-user"), kafka: kafka(),
			user: user("scram-sha-512", set(map[string]any{"strimzi.io/cluster": "other"}, "metadata", "labels")),
			err:  `kafka.clusterRef.user: KafkaUser my-user is a user of cluster "other" (label strimzi.io/cluster), not of Kafka my-cluster`},
		{name: "a user of no cluster", ref: ref("scram", "my-user"), kafka: kafka(),
			user: user("scram-sha-512", remove("metadata", "labels")),
			err:  `KafkaUser my-user is a user of cluster "" (label strimzi.io/cluster)`},
		{name: "user not ready", ref: ref("scram", "my-user"), kafka: kafka(),
			user: user("scram-sha-512", set([]any{map[string]any{"type": "Ready", "status": "False", "reason": "Pending"}}, "status", "conditions")),
			err:  "KafkaUser my-user is not ready (status.conditions Ready is False: Pending"},
		{name: "a TLS user on a SCRAM listener", ref: ref("scram", "my-user"), kafka: kafka(), user: user("tls"),
			err: `kafka.clusterRef.user: KafkaUser my-user authenticates with "tls" (spec.authentication.type), and Kafka my-cluster: listener scram with scram-sha-512`},
		{name: "a SCRAM user on a TLS-authenticated listener", ref: ref("mtls", "my-user"), kafka: kafka(), user: user("scram-sha-512"),
			err: `KafkaUser my-user authenticates with "scram-sha-512" (spec.authentication.type), and Kafka my-cluster: listener mtls with tls`},
		{name: "a tls-external user", ref: ref("mtls", "my-user"), kafka: kafka(), user: user("tls-external"),
			err: "kafka.clusterRef.user: KafkaUser my-user authenticates with tls-external"},
		{name: "user without its Secret", ref: ref("scram", "my-user"), kafka: kafka(), user: user("scram-sha-512", remove("status", "secret")),
			err: "KafkaUser my-user: status.secret is empty"},
		{name: "user whose Secret is the cluster CA's", ref: ref("scram", "my-user"), kafka: kafka(),
			user: user("scram-sha-512", set("my-cluster-cluster-ca-cert", "status", "secret")),
			err:  "KafkaUser my-user: status.secret names the cluster CA's Secret my-cluster-cluster-ca-cert"},
		{name: "SCRAM user without a username", ref: ref("scram", "my-user"), kafka: kafka(), user: user("scram-sha-512", remove("status", "username")),
			err: "KafkaUser my-user: status.username is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resolve(tc.ref, tc.kafka, tc.user)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrNotResolvable) {
					t.Fatalf("error %v, want one with %q, not resolvable", err, tc.err)
				}
				// What Strimzi's operator mends by itself is waited for;
				// everything else is refused at once.
				if errors.Is(err, ErrNotReady) != notYet[tc.name] {
					t.Fatalf("error %v: waited for %v, want %v", err, errors.Is(err, ErrNotReady), notYet[tc.name])
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// The digest's own rules are config.PropertiesDigestOf's.
			tc.want.PropertiesDigest = config.PropertiesDigestOf(propsOf(tc.want.Properties))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestResolveBindsCredentialsToListener: whatever is resolved, the
// credentials' binding (bootstrap.servers among the properties, mounted
// beside the Secret keys) is the listener's own server list, so the runner
// refuses any other servers for them.
func TestResolveBindsCredentialsToListener(t *testing.T) {
	for _, l := range []struct{ listener, auth string }{{"scram", "scram-sha-512"}, {"tls", "scram-sha-512"}, {"mtls", "tls"}} {
		got, err := Resolve(v1alpha1.StrimziClusterRef{Name: "my-cluster", Listener: l.listener, User: "my-user"}, kafka(), user(l.auth))
		if err != nil {
			t.Fatal(err)
		}
		var binding []string
		for _, p := range got.Properties {
			if p.Name == "bootstrap.servers" {
				binding = append(binding, p.Value)
			}
		}
		if len(binding) != 1 || binding[0] != got.BootstrapServers {
			t.Errorf("%s: binding %q, servers %q", l.listener, binding, got.BootstrapServers)
		}
	}
}

// TestResolvePropertiesAreNotSecretKeys: no property is given both as a
// value and from a Secret key, which the runner would take twice.
func TestResolvePropertiesAreNotSecretKeys(t *testing.T) {
	got, err := Resolve(v1alpha1.StrimziClusterRef{Name: "my-cluster", Listener: "tls", User: "my-user"}, kafka(), user("scram-sha-512"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range got.Properties {
		seen[p.Name] = true
	}
	for _, s := range got.Secrets {
		for _, k := range s.Keys {
			if seen[k.Property] {
				t.Errorf("property %s is set twice", k.Property)
			}
			seen[k.Property] = true
		}
	}
}

// Check passes every resolution and refuses each way a status writer could
// make the runner mount more, or send credentials elsewhere.
func TestCheck(t *testing.T) {
	good, err := Resolve(v1alpha1.StrimziClusterRef{Name: "my-cluster", Listener: "tls", User: "my-user"}, kafka(), user("scram-sha-512"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(good); err != nil {
		t.Fatalf("a resolution: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*v1alpha1.ResolvedKafka)
		err  string
	}{
		{"binding to other servers", func(r *v1alpha1.ResolvedKafka) { r.Properties[0].Value = "evil:9092" }, "bootstrap.servers is not status.resolvedKafka.bootstrapServers"},
		{"servers elsewhere", func(r *v1alpha1.ResolvedKafka) { r.BootstrapServers = "evil:9092" }, "bootstrap.servers is not"},
		{"no binding", func(r *v1alpha1.ResolvedKafka) { r.Properties = r.Properties[1:] }, "are missing"},
		{"another property", func(r *v1alpha1.ResolvedKafka) {
			r.Properties = append(r.Properties, v1alpha1.KafkaProperty{Name: "sasl.oauthbearer.token.endpoint.url", Value: "https://evil"})
		}, `"sasl.oauthbearer.token.endpoint.url" is not a property`},
		{"a property twice", func(r *v1alpha1.ResolvedKafka) { r.Properties = append(r.Properties, r.Properties[1]) }, "twice"},
		{"another Secret", func(r *v1alpha1.ResolvedKafka) { r.Secrets[1].Name = "admin" }, "admin is neither"},
		{"another key", func(r *v1alpha1.ResolvedKafka) {
			r.Secrets[1].Keys = append(r.Secrets[1].Keys, v1alpha1.SecretKeyProperty{Key: "x", Property: "ssl.keystore.location"})
		}, "x -> ssl.keystore.location"},
		{"the CA's Secret with a credential key", func(r *v1alpha1.ResolvedKafka) {
			r.Secrets[0].Keys = []v1alpha1.SecretKeyProperty{{Key: "password", Property: "sasl.password"}}
		}, "other keys than ca.crt"},
		{"a property from a value and a key", func(r *v1alpha1.ResolvedKafka) {
			r.Secrets[1].Keys = append(r.Secrets[1].Keys, v1alpha1.SecretKeyProperty{Key: "ca.crt", Property: "ssl.ca.pem"})
		}, "sets a property twice"},
		{"no cluster ID", func(r *v1alpha1.ResolvedKafka) { r.ClusterID = "" }, "clusterId: empty"},
		{"a digest of other properties", func(r *v1alpha1.ResolvedKafka) { r.Properties[1].Value = "SASL_PLAINTEXT" }, "propertiesDigest is not the digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := good
			r.Properties = slices.Clone(good.Properties)
			r.Secrets = nil
			for _, s := range good.Secrets {
				s.Keys = slices.Clone(s.Keys)
				r.Secrets = append(r.Secrets, s)
			}
			tc.edit(&r)
			if err := Check(r); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}

// The runner's --properties-digest leaves the Secret-held properties out:
// every property a resolution gives as a value (from pod annotations) must
// be in the digest, and every Secret key's property out of it (the
// launcher never reads their values), or a Job would either leave a
// patchable property unchecked or be refused for every run.
func TestDigestCoversTheValuesNotTheKeys(t *testing.T) {
	for n := range valueProperties {
		if config.SecretHeldProperty(n) {
			t.Errorf("property %s comes from an annotation but the digest leaves it out", n)
		}
	}
	for k := range secretKeys {
		if !config.SecretHeldProperty(k.Property) {
			t.Errorf("Secret key %s -> %s would be in the digest", k.Key, k.Property)
		}
	}
	got, err := Resolve(v1alpha1.StrimziClusterRef{Name: "my-cluster", Listener: "tls", User: "my-user"}, kafka(), user("scram-sha-512"))
	if err != nil {
		t.Fatal(err)
	}
	if got.PropertiesDigest == "" || got.PropertiesDigest != PropertiesDigest(got.Properties) {
		t.Errorf("propertiesDigest %q is not the properties' digest", got.PropertiesDigest)
	}
}

func propsOf(ps []v1alpha1.KafkaProperty) config.Properties {
	p := config.Properties{}
	for _, kp := range ps {
		p[kp.Name] = kp.Value
	}
	return p
}

// testCA is a self-signed certificate, PEM, as Strimzi publishes its
// cluster CA in status.listeners[].certificates.
func testCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cluster-ca v0"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(0, 0).Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// A Kafka of another namespace (ref.Namespace set: the launcher clears it
// for the request's own): its TLS listener's trust is the certificates its
// status publishes, not the CA Secret, which the runner pod could not
// mount; the user's Secret is still mounted. Empty certificates wait for
// the operator; anything but PEM certificates is refused.
func TestResolveOtherNamespace(t *testing.T) {
	ca := testCA(t)
	ref := v1alpha1.StrimziClusterRef{Name: "my-cluster", Namespace: "kafka", Listener: "tls", User: "my-user"}
	withCerts := func(certs ...any) func(map[string]any) {
		return func(o map[string]any) {
			ls, _, _ := unstructured.NestedSlice(o, "status", "listeners")
			for _, l := range ls {
				if m := l.(map[string]any); m["name"] == "tls" {
					m["certificates"] = certs
				}
			}
			_ = unstructured.SetNestedSlice(o, ls, "status", "listeners")
		}
	}
	res, err := Resolve(ref, kafka(withCerts(ca, ca)), user("scram-sha-512"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Namespace != "kafka" || res.CACertificates != ca+ca || len(res.Secrets) != 1 || res.Secrets[0].Name != "my-user" || res.UserSecret != "my-user" {
		t.Fatalf("resolved %+v", res)
	}
	if err := Check(res); err != nil {
		t.Fatalf("Check: %v", err)
	}
	// The plain listener needs no CA.
	plain := ref
	plain.Listener, plain.User = "plain", ""
	if res, err := Resolve(plain, kafka(), nil); err != nil || res.CACertificates != "" || len(res.Secrets) != 0 {
		t.Fatalf("plain: %+v, %v", res, err)
	}

	for _, tc := range []struct {
		name     string
		kafka    *unstructured.Unstructured
		want     string
		notReady bool
	}{
		{"no certificates yet", kafka(), "status.listeners[tls].certificates is empty", true},
		{"not PEM", kafka(withCerts("not a certificate")), "status.listeners[tls].certificates[0]: not PEM CERTIFICATE blocks", false},
		{"a key among them", kafka(withCerts(ca + "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")), "certificates[0]: not PEM CERTIFICATE blocks", false},
		{"not X.509", kafka(withCerts("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")), "certificates[0]: not an X.509 certificate", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Resolve(ref, tc.kafka, user("scram-sha-512"))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrNotResolvable) || errors.Is(err, ErrNotReady) != tc.notReady {
				t.Fatalf("error %v, want %q (waits: %v)", err, tc.want, tc.notReady)
			}
		})
	}
	if _, err := Resolve(ref, nil, nil); err == nil || !strings.Contains(err.Error(), "kafka.clusterRef.name: Kafka my-cluster does not exist in namespace kafka") {
		t.Fatalf("missing Kafka: %v", err)
	}

	// Check: CA certificates only for another namespace, only PEM
	// certificates, and never the CA Secret there.
	for _, tc := range []struct {
		name string
		edit func(*v1alpha1.ResolvedKafka)
		want string
	}{
		{"certificates for the request's namespace", func(r *v1alpha1.ResolvedKafka) { r.Namespace = "" }, "caCertificates: only for a Kafka of another namespace"},
		{"a key for a certificate", func(r *v1alpha1.ResolvedKafka) {
			r.CACertificates = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
		}, "caCertificates: not PEM"},
		{"the CA Secret too", func(r *v1alpha1.ResolvedKafka) {
			r.Secrets = append(r.Secrets, v1alpha1.ResolvedSecret{Name: "my-cluster-cluster-ca-cert", Keys: []v1alpha1.SecretKeyProperty{{Key: "ca.crt", Property: "ssl.ca.pem"}}})
		}, "my-cluster-cluster-ca-cert is neither"},
	} {
		t.Run("Check/"+tc.name, func(t *testing.T) {
			r := res
			r.Secrets = slices.Clone(res.Secrets)
			tc.edit(&r)
			if err := Check(r); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
