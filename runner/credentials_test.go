package runner_test

import (
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// trapListener is a loopback server the test owns, standing for an
// attacker's broker or token endpoint: it only counts connections.
type trapListener struct {
	ln       net.Listener
	accepted chan net.Conn
}

func newTrap(t *testing.T) *trapListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := &trapListener{ln: ln, accepted: make(chan net.Conn, 64)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(tr.accepted)
				return
			}
			tr.accepted <- c
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return tr
}

func (tr *trapListener) addr() string { return tr.ln.Addr().String() }

// connectionsSoFar counts the connections made to the trap before this
// call, without waiting on time: it connects once more itself, and since
// the kernel hands out connections in the order they were made, every
// earlier one is accepted before its own.
func (tr *trapListener) connectionsSoFar(t *testing.T) int {
	t.Helper()
	sentinel, err := net.Dial("tcp", tr.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sentinel.Close() }()
	local := sentinel.LocalAddr().String()
	n := 0
	for c := range tr.accepted {
		remote := c.RemoteAddr().String()
		_ = c.Close()
		if remote == local {
			return n
		}
		n++
	}
	t.Fatal("the trap stopped accepting")
	return n
}

// TestCredentialsGoOnlyWhereTheirSecretSays: a Secret's credentials are
// presented only to the servers its own bootstrap.servers names. A run
// pointed anywhere else, with a Secret that names no servers, or with a
// config directory that would change how the credentials are presented,
// ends with exit 2 (CredentialsNotBound) before it opens any connection:
// a listener the test owns receives none.
func TestCredentialsGoOnlyWhereTheirSecretSays(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := kafkatest.NewWith(t, kafkatest.Options{
		Brokers: 3,
		Fake:    []kfake.Opt{kfake.EnableSASL(), kfake.Superuser("PLAIN", "replay", canary)},
		Client:  []kgo.Opt{kgo.SASL(plain.Auth{User: "replay", Pass: canary}.AsMechanism())},
	})
	c.RequireFake(t)
	seedWith(t, c)
	credentials := map[string]string{
		"security.protocol": "SASL_PLAINTEXT",
		"sasl.mechanism":    "PLAIN",
		"sasl.username":     "replay",
		"sasl.password":     canary,
	}
	secret := func(binding string) string {
		props := map[string]string{}
		for k, v := range credentials {
			props[k] = v
		}
		if binding != "" {
			props["bootstrap.servers"] = binding
		}
		dir := filepath.Join(t.TempDir(), "secret")
		writeSecretVolume(t, dir, props)
		return dir
	}
	configMap := func(props map[string]string) string {
		dir := filepath.Join(t.TempDir(), "config")
		writeSecretVolume(t, dir, props)
		return dir
	}
	broker, tokenURL := newTrap(t), newTrap(t)

	// The Secret bound to the real cluster works there.
	o := run(t, c, "--kafka-secret-dir", secret(c.Bootstrap()), "--group", group, "--topic", topic, "--to", "earliest").mustCode(t, report.ExitOK)
	if got := offsetsOf(t, c, group); got["orders/0"] != 0 || got["orders/1"] != 0 {
		t.Fatalf("the bound run did not apply: offsets %v\n%s", got, o.stderr)
	}
	before := offsetsOf(t, c, group)

	refused := []struct {
		name string
		args []string
		want string // in the result's error
	}{
		{"another broker", []string{"--bootstrap-servers", broker.addr(), "--kafka-secret-dir", secret(c.Bootstrap())},
			"is not among the servers the credentials of --kafka-secret-dir are bound to"},
		{"the cluster and another broker", []string{"--bootstrap-servers", c.Bootstrap() + "," + broker.addr(), "--kafka-secret-dir", secret(c.Bootstrap())},
			"is not among the servers"},
		{"a Secret bound to nothing", []string{"--bootstrap-servers", broker.addr(), "--kafka-secret-dir", secret("")},
			"the credentials are not bound to any servers"},
		{"elsewhere than a config directory's own servers (an Argo step's Secret)", []string{
			"--bootstrap-servers", broker.addr(), "--kafka-config-dir", configMap(map[string]string{"bootstrap.servers": c.Bootstrap(), "sasl.password": canary})},
			"is not among the servers --kafka-config-dir is for"},
		{"the config directory sends the OAuth client secret elsewhere", []string{
			"--bootstrap-servers", broker.addr(), "--kafka-secret-dir", secret(broker.addr()),
			"--kafka-config-dir", configMap(map[string]string{"sasl.oauthbearer.token.endpoint.url": "http://" + tokenURL.addr() + "/token", "sasl.mechanism": "OAUTHBEARER"})},
			"must not set sasl.mechanism, sasl.oauthbearer.token.endpoint.url beside the credentials"},
		{"the config directory downgrades the protocol", []string{
			"--bootstrap-servers", broker.addr(), "--kafka-secret-dir", secret(broker.addr()),
			"--kafka-config-dir", configMap(map[string]string{"security.protocol": "SASL_PLAINTEXT", "enable.ssl.certificate.verification": "false"})},
			"must not set enable.ssl.certificate.verification, security.protocol beside"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			o := runCtx(t, testCtx(t), nil, append(tc.args, "--group", group, "--topic", topic, "--to", "latest")...).mustCode(t, report.ExitInvalidInput)
			if o.result.Reason != report.ReasonCredentialsNotBound || o.termination.Reason != report.ReasonCredentialsNotBound {
				t.Errorf("reason %q (termination message %q), want %q", o.result.Reason, o.termination.Reason, report.ReasonCredentialsNotBound)
			}
			if !strings.Contains(o.result.Error, tc.want) {
				t.Errorf("error %q does not say %q", o.result.Error, tc.want)
			}
			for what, tr := range map[string]*trapListener{"broker": broker, "token endpoint": tokenURL} {
				if n := tr.connectionsSoFar(t); n != 0 {
					t.Errorf("the %s outside the binding received %d connections", what, n)
				}
			}
			for what, text := range map[string]string{"result": o.resultRaw, "stdout": o.stdout, "stderr": o.stderr} {
				if strings.Contains(text, canary) {
					t.Errorf("the password appears in the %s", what)
				}
			}
		})
	}
	if got := offsetsOf(t, c, group); !equalMaps(got, before) {
		t.Errorf("offsets changed by refused runs: %v, were %v", got, before)
	}
}

// TestPropertiesDigestHoldsTheSecretDirectory: with --properties-digest
// (the launcher's, for the properties a Strimzi clusterRef resolved to,
// which reach the secret directory through pod annotations), a directory
// whose properties were changed after they were vouched for ends with
// exit 2 (CredentialsNotBound) before any connection is opened, and
// nothing is committed; the vouched directory runs.
func TestPropertiesDigestHoldsTheSecretDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := kafkatest.NewWith(t, kafkatest.Options{
		Brokers: 1,
		Fake:    []kfake.Opt{kfake.EnableSASL(), kfake.Superuser("PLAIN", "replay", canary)},
		Client:  []kgo.Opt{kgo.SASL(plain.Auth{User: "replay", Pass: canary}.AsMechanism())},
	})
	c.RequireFake(t)
	seedWith(t, c)
	broker := newTrap(t)
	// As the launcher mounts them: the vouched properties, and the
	// Secret's password beside them, which the digest leaves out.
	vouched := func(servers string) map[string]string {
		return map[string]string{"bootstrap.servers": servers, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.username": "replay"}
	}
	dir := func(props map[string]string, edit func(map[string]string)) string {
		p := map[string]string{"sasl.password": canary}
		for k, v := range props {
			p[k] = v
		}
		edit(p)
		d := filepath.Join(t.TempDir(), "secret")
		writeSecretVolume(t, d, p)
		return d
	}
	digest := config.PropertiesDigestOf(vouched(broker.addr()))
	before := offsetsOf(t, c, group)
	for name, edit := range map[string]func(map[string]string){
		"another mechanism":           func(p map[string]string) { p["sasl.mechanism"] = "SCRAM-SHA-256" },
		"another user":                func(p map[string]string) { p["sasl.username"] = "admin" },
		"a removed annotation":        func(p map[string]string) { p["sasl.mechanism"] = "" },
		"an unchecked certificate":    func(p map[string]string) { p["enable.ssl.certificate.verification"] = "false" },
		"another protocol, by prefix": func(p map[string]string) { p["bootstrap.servers"] = "PLAINTEXT://" + broker.addr() },
	} {
		t.Run(name, func(t *testing.T) {
			o := runCtx(t, testCtx(t), nil, "--bootstrap-servers", broker.addr(), "--kafka-secret-dir", dir(vouched(broker.addr()), edit),
				"--properties-digest", digest, "--group", group, "--topic", topic, "--to", "latest").mustCode(t, report.ExitInvalidInput)
			if o.result.Reason != report.ReasonCredentialsNotBound || o.termination.Reason != report.ReasonCredentialsNotBound {
				t.Errorf("reason %q (termination message %q), want %q", o.result.Reason, o.termination.Reason, report.ReasonCredentialsNotBound)
			}
			if want := "--properties-digest (REPLAY_PROPERTIES_DIGEST): the secret directory's properties "; !strings.Contains(o.result.Error, want) {
				t.Errorf("error %q does not say %q", o.result.Error, want)
			}
			if n := broker.connectionsSoFar(t); n != 0 {
				t.Errorf("the servers received %d connections", n)
			}
		})
	}
	run(t, c, "--kafka-secret-dir", dir(vouched(c.Bootstrap()), func(map[string]string) {}), "--properties-digest", config.PropertiesDigestOf(vouched(c.Bootstrap())),
		"--group", group, "--topic", topic, "--to", "earliest").mustCode(t, report.ExitOK)
	if got := offsetsOf(t, c, group); equalMaps(got, before) {
		t.Errorf("the vouched run did not apply: offsets %v", got)
	}
}

// TestSecondClientRefusesWhatItCannotReproduce: a connection property the
// runner's second client (franz-go) cannot reproduce as librdkafka would
// ends the run with exit 2 naming it, before either client connects: the
// trap broker at the bootstrap address receives no connection at all.
func TestSecondClientRefusesWhatItCannotReproduce(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	broker := newTrap(t)
	for _, tc := range []struct {
		name, property string
		bootstrap      string // default: the trap
		props          map[string]string
	}{
		{"GSSAPI, librdkafka's default mechanism", "sasl.mechanism", "", map[string]string{"security.protocol": "SASL_PLAINTEXT"}},
		{"OAUTHBEARER", "sasl.mechanism", "", map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"}},
		{"a keystore", "ssl.keystore.location", "", map[string]string{"security.protocol": "SSL", "ssl.keystore.location": "/nonexistent.p12", "ssl.keystore.password": canary}},
		{"a TLS prefix under SASL_PLAINTEXT", "security.protocol", "SASL_SSL://" + broker.addr(),
			map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.username": "u", "sasl.password": canary}},
		{"a CA file that cannot be read", "ssl.ca.location", "", map[string]string{"security.protocol": "SSL", "ssl.ca.location": "/nonexistent/ca.pem"}},
		// Harmless to librdkafka on a plaintext connection, once left the
		// kind unchecked with a warning (TestKindUncheckedWarnedOnce).
		{"a TLS setting beside PLAINTEXT", "ssl.sigalgs.list", "", map[string]string{"ssl.sigalgs.list": "RSA-PSS+SHA256"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			boot := tc.bootstrap
			if boot == "" {
				boot = broker.addr()
			}
			dir := filepath.Join(t.TempDir(), "config")
			writeSecretVolume(t, dir, tc.props)
			o := runCtx(t, testCtx(t), nil, "--bootstrap-servers", boot, "--kafka-config-dir", dir, "--group", group, "--topic", topic, "--to", "latest").mustCode(t, report.ExitInvalidInput)
			if o.result.Reason != report.ReasonInvalidInput || !strings.Contains(o.result.Error, "property "+tc.property+" ") || !strings.Contains(o.result.Error, "nothing was contacted") {
				t.Errorf("reason %s, error %q: want InvalidInput naming %s", o.result.Reason, o.result.Error, tc.property)
			}
			if n := broker.connectionsSoFar(t); n != 0 {
				t.Errorf("the broker received %d connections", n)
			}
			if strings.Contains(o.resultRaw+o.stdout+o.stderr, canary) {
				t.Error("a secret appears in the output")
			}
		})
	}
}
