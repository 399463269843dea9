package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestUnboundServers(t *testing.T) {
	tests := []struct {
		name, requested, binding string
		want                     []string
	}{
		{"same", "k1:9093,k2:9093", "k1:9093,k2:9093", nil},
		{"a subset", "k2:9093", "k1:9093, k2:9093", nil},
		{"host case and spaces", " K1.Example.COM:9093 ", "k1.example.com:9093", nil},
		{"another host", "evil.example.net:9093", "k1:9093", []string{"evil.example.net:9093"}},
		{"one of two elsewhere", "k1:9093,evil:9093", "k1:9093", []string{"evil:9093"}},
		{"another port", "k1:9094", "k1:9093", []string{"k1:9094"}},
		{"a longer name", "k1.example.com.evil.io:9093", "k1.example.com:9093", []string{"k1.example.com.evil.io:9093"}},
		// A protocol prefix decides how librdkafka connects: PLAINTEXT://
		// at a SASL_SSL cluster's host is not what the Secret was for.
		{"a protocol prefix", "sasl_plaintext://k1:9093", "k1:9093", []string{"sasl_plaintext://k1:9093"}},
		{"the same prefix", "SASL_SSL://k1:9093", "sasl_ssl://k1:9093", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := unboundServers(tt.requested, tt.binding); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("unboundServers(%q, %q) = %q, want %q", tt.requested, tt.binding, got, tt.want)
			}
		})
	}
}

func TestProtectedProperty(t *testing.T) {
	for _, n := range []string{
		"security.protocol", "sasl.mechanism", "sasl.mechanisms", "sasl.username", "sasl.password",
		"sasl.oauthbearer.token.endpoint.url", "sasl.oauthbearer.method", "sasl.oauthbearer.client.secret",
		"sasl.oauthbearer.metadata.authentication.type", "sasl.oauthbearer.assertion.file",
		"ssl.ca.location", "ssl.ca.pem", "ssl.endpoint.identification.algorithm", "ssl.certificate.pem",
		"https.ca.location", "https.ca.pem", "enable.ssl.certificate.verification",
		"enable.sasl.oauthbearer.unsecure.jwt", "client.dns.lookup",
	} {
		if !protectedProperty(n) {
			t.Errorf("%s is not protected", n)
		}
	}
	for _, n := range []string{"client.id", "socket.timeout.ms", "enable.metrics.push", "api.version.request", "client.rack"} {
		if protectedProperty(n) {
			t.Errorf("%s is protected", n)
		}
	}
}

func TestMergeCredentials(t *testing.T) {
	const servers = "k1:9093,k2:9093"
	secret := Properties{"bootstrap.servers": servers, "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.username": "u", "sasl.password": "p"}
	unbound := Properties{"security.protocol": "SASL_SSL", "sasl.password": "p"}
	tests := []struct {
		name         string
		bootstrap    string
		cfg, secret  Properties
		haveSecret   bool
		allowUnbound bool
		// wantErr are the flags the errors name, in order; notBound says
		// whether one is ErrCredentialsNotBound.
		wantErr  []string
		notBound bool
		want     Properties
	}{
		{name: "no secret: the config directory is the user's own", bootstrap: "evil:9093",
			cfg:  Properties{"sasl.password": "mine", "security.protocol": "SASL_SSL"},
			want: Properties{"sasl.password": "mine", "security.protocol": "SASL_SSL"}},
		{name: "bound, the same servers", bootstrap: "k2:9093", secret: secret, haveSecret: true,
			cfg:  Properties{"client.id": "x"},
			want: Properties{"client.id": "x", "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.username": "u", "sasl.password": "p"}},
		{name: "bound, another server", bootstrap: "k1:9093,evil:9093", secret: secret, haveSecret: true,
			wantErr: []string{FlagBootstrapServers}, notBound: true},
		{name: "bound, even when unbound secrets are allowed", bootstrap: "evil:9093", secret: secret, haveSecret: true, allowUnbound: true,
			wantErr: []string{FlagBootstrapServers}, notBound: true},
		{name: "unbound", bootstrap: "k1:9093", secret: unbound, haveSecret: true,
			wantErr: []string{FlagKafkaSecretDir}, notBound: true},
		{name: "unbound, allowed by the operator", bootstrap: "evil:9093", secret: unbound, haveSecret: true, allowUnbound: true,
			cfg:  Properties{"sasl.mechanism": "PLAIN"},
			want: Properties{"security.protocol": "SASL_SSL", "sasl.password": "p", "sasl.mechanism": "PLAIN"}},
		{name: "the config directory redirects the OAuth token", bootstrap: "k1:9093", secret: secret, haveSecret: true,
			cfg:     Properties{"sasl.oauthbearer.token.endpoint.url": "https://evil/token", "ssl.ca.pem": "x", "client.id": "ok"},
			wantErr: []string{FlagKafkaConfigDir}, notBound: true},
		{name: "the config directory downgrades the protocol", bootstrap: "k1:9093", secret: secret, haveSecret: true,
			cfg:     Properties{"security.protocol": "SASL_PLAINTEXT"},
			wantErr: []string{FlagKafkaConfigDir}, notBound: true},
		{name: "the config directory repeats a Secret's property", bootstrap: "k1:9093", haveSecret: true, allowUnbound: true,
			secret:  Properties{"client.id": "a"},
			cfg:     Properties{"client.id": "b"},
			wantErr: []string{FlagKafkaConfigDir}},
		{name: "an unreadable secret directory is not also unbound", bootstrap: "k1:9093", haveSecret: true,
			cfg: Properties{"security.protocol": "SASL_SSL"}, wantErr: []string{FlagKafkaConfigDir}, notBound: true},
		{name: "an invalid binding", bootstrap: "k1:9093", haveSecret: true,
			secret: Properties{"bootstrap.servers": "k1"}, wantErr: []string{FlagKafkaSecretDir}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := mergeCredentials(tt.bootstrap, tt.cfg, tt.secret, tt.haveSecret, tt.allowUnbound)
			var flags []string
			for _, e := range errs {
				flags = append(flags, e.Flag)
			}
			if !reflect.DeepEqual(flags, tt.wantErr) {
				t.Fatalf("errors %v name %q, want %q", errs, flags, tt.wantErr)
			}
			if nb := errors.Is(errs, ErrCredentialsNotBound); nb != tt.notBound {
				t.Errorf("ErrCredentialsNotBound = %v, want %v (%v)", nb, tt.notBound, errs)
			}
			if len(tt.wantErr) == 0 && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("properties = %q, want %q", got, tt.want)
			}
			if _, leaked := got["bootstrap.servers"]; leaked {
				t.Error("the binding reached the client's properties")
			}
		})
	}
}

// Through Load: the binding is read from the secret directory only, and
// refusing it is an input error saying what to do, in the request's names
// under the launcher, never showing the Secret's servers or values.
func TestLoadCredentialsBinding(t *testing.T) {
	const canary = "CANARY-binding-pass"
	secret := secretDir(t, map[string]string{"bootstrap.servers": "kafka.internal:9093", "sasl.password": canary})
	t.Run("bound", func(t *testing.T) {
		clearEnv(t)
		c := mustLoad(t, args("--bootstrap-servers", "kafka.internal:9093", "--kafka-secret-dir", secret)...)
		if c.KafkaProperties["sasl.password"] != canary || c.KafkaProperties["bootstrap.servers"] != "" {
			t.Errorf("KafkaProperties = %q", c.KafkaProperties.Names())
		}
	})
	t.Run("elsewhere", func(t *testing.T) {
		clearEnv(t)
		t.Setenv(EnvFieldNames, string(FieldNamesSpec))
		_, err := load(t, args("--bootstrap-servers", "evil.example:9093", "--kafka-secret-dir", secret)...)
		if !errors.Is(err, ErrCredentialsNotBound) || !IsInvalidInput(err) {
			t.Fatalf("err = %v, want an input error that is ErrCredentialsNotBound", err)
		}
		msg := err.Error()
		for _, want := range []string{`spec.kafka.bootstrapServers: "evil.example:9093" is not among the servers the credentials of spec.kafka.secretRef are bound to`} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q does not say %q", msg, want)
			}
		}
		if strings.Contains(msg, "kafka.internal") || strings.Contains(msg, canary) {
			t.Errorf("error %q shows the Secret's content", msg)
		}
	})
	t.Run("the config directory's servers only restrict", func(t *testing.T) {
		clearEnv(t)
		// They do not bind a Secret...
		cfg := secretDir(t, map[string]string{"bootstrap.servers": "evil.example:9093"})
		unbound := secretDir(t, map[string]string{"sasl.password": canary})
		_, err := load(t, args("--bootstrap-servers", "evil.example:9093", "--kafka-config-dir", cfg, "--kafka-secret-dir", unbound)...)
		if err == nil || !strings.Contains(err.Error(), "the credentials are not bound to any servers") || !errors.Is(err, ErrCredentialsNotBound) {
			t.Errorf("a config directory binding a Secret: %v", err)
		}
		// ...and without one they hold the run to them (an Argo step
		// mounts a Secret as the config directory).
		plain := secretDir(t, map[string]string{"bootstrap.servers": "kafka.internal:9093", "sasl.password": canary})
		c := mustLoad(t, args("--bootstrap-servers", "kafka.internal:9093", "--kafka-config-dir", plain)...)
		if _, leaked := c.KafkaProperties["bootstrap.servers"]; leaked || c.KafkaProperties["sasl.password"] != canary {
			t.Errorf("KafkaProperties = %q", c.KafkaProperties.Names())
		}
		_, err = load(t, args("--bootstrap-servers", "evil.example:9093", "--kafka-config-dir", plain)...)
		if !errors.Is(err, ErrCredentialsNotBound) || !strings.Contains(err.Error(), `"evil.example:9093" is not among the servers --kafka-config-dir is for`) {
			t.Errorf("elsewhere than the config directory's servers: %v", err)
		}
	})
	t.Run("the operator's opt-out", func(t *testing.T) {
		clearEnv(t)
		unbound := secretDir(t, map[string]string{"sasl.password": canary})
		t.Setenv(EnvAllowUnboundSecret, "true")
		c := mustLoad(t, args("--bootstrap-servers", "anywhere:9093", "--kafka-secret-dir", unbound)...)
		if c.KafkaProperties["sasl.password"] != canary {
			t.Errorf("KafkaProperties = %q", c.KafkaProperties.Names())
		}
	})
}
