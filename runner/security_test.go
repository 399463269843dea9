package runner_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// canary is a secret that must never leave the runner.
const canary = "CANARY-s3cr3t-9f8e7d6c5b4a"

// procOutcome is what a real runner process produced, every channel of it.
type procOutcome struct {
	code                                int
	stdout, stderr, result, termination string
}

func (p procOutcome) all() string { return p.stdout + p.stderr + p.result + p.termination }

// runProcess runs the runner binary with a config directory of properties.
func runProcess(t *testing.T, c *kafkatest.Cluster, props map[string]string, args ...string) procOutcome {
	t.Helper()
	return runProcessAt(t, c.Bootstrap(), props, args...)
}

// runProcessAt is runProcess with bootstrap servers of the test's choice.
func runProcessAt(t *testing.T, bootstrap string, props map[string]string, args ...string) procOutcome {
	t.Helper()
	dir := t.TempDir()
	cfgDir := filepath.Join(dir, "kafka")
	writeSecretVolume(t, cfgDir, props)
	resultFile, termFile := filepath.Join(dir, "result.json"), filepath.Join(dir, "term")
	full := append([]string{"--bootstrap-servers", bootstrap, "--kafka-config-dir", cfgDir, "--result-file", resultFile}, args...)
	cmd := exec.Command(runnerBin, full...)
	cmd.Env = append(os.Environ(), "REPLAY_TERMINATION_MESSAGE_PATH="+termFile)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	res, _ := os.ReadFile(resultFile)
	term, _ := os.ReadFile(termFile)
	if len(res) == 0 || len(term) == 0 {
		t.Fatalf("result file or termination message missing (exit %d)\n%s", code, stderr.String())
	}
	return procOutcome{code, stdout.String(), stderr.String(), string(res), string(term)}
}

// writeSecretVolume lays props out exactly as the kubelet mounts a Secret:
// files in a timestamped directory, a ..data symlink, and one visible
// symlink per key.
func writeSecretVolume(t *testing.T, dir string, props map[string]string) {
	t.Helper()
	data := filepath.Join(dir, "..2026_11_30_05_00_00.000000001")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	for k, v := range props {
		if err := os.WriteFile(filepath.Join(data, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..data", k), filepath.Join(dir, k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Base(data), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

func seedWith(t *testing.T, c *kafkatest.Cluster) {
	t.Helper()
	if err := c.Seed(testCtx(t), topic, 2, 20, base, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(testCtx(t), group, kafkatest.Offsets{topic: {0: 15, 1: 15}}, ""); err != nil {
		t.Fatal(err)
	}
}

func TestSASLThroughConfigDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	mechanisms := []struct {
		name   string
		client kgo.Opt
	}{
		{"PLAIN", kgo.SASL(plain.Auth{User: "replay", Pass: canary}.AsMechanism())},
		{"SCRAM-SHA-256", kgo.SASL(scram.Auth{User: "replay", Pass: canary}.AsSha256Mechanism())},
		{"SCRAM-SHA-512", kgo.SASL(scram.Auth{User: "replay", Pass: canary}.AsSha512Mechanism())},
	}
	for _, m := range mechanisms {
		t.Run(m.name, func(t *testing.T) {
			c := kafkatest.NewWith(t, kafkatest.Options{
				Brokers: 3,
				Fake:    []kfake.Opt{kfake.EnableSASL(), kfake.Superuser(m.name, "replay", canary)},
				Client:  []kgo.Opt{m.client},
			})
			c.RequireFake(t)
			seedWith(t, c)
			props := map[string]string{
				"security.protocol": "SASL_PLAINTEXT",
				"sasl.mechanism":    m.name,
				"sasl.username":     "replay",
				"sasl.password":     canary + "\n", // as `kubectl create secret --from-file` leaves it
			}
			o := runProcess(t, c, props, "--group", group, "--topic", topic, "--to", "earliest", "--output", "json")
			if o.code != 0 {
				t.Fatalf("exit %d\n%s", o.code, o.stderr)
			}
			if got := offsetsOf(t, c, group); got["orders/0"] != 0 || got["orders/1"] != 0 {
				t.Errorf("offsets %v", got)
			}
			if strings.Contains(o.all(), canary) {
				t.Fatal("the password appears in the runner's output")
			}

			// A wrong password fails as a Kafka error, and that password
			// must not leak either (librdkafka's errors are redacted too).
			wrong := map[string]string{}
			for k, v := range props {
				wrong[k] = v
			}
			wrong["sasl.password"] = "WRONG-" + canary
			o = runProcess(t, c, wrong, "--group", group, "--topic", topic, "--to", "latest", "--timeout", "3s")
			if o.code != int(report.ExitKafkaError) {
				t.Fatalf("exit %d with a wrong password, want %d\n%s", o.code, report.ExitKafkaError, o.stderr)
			}
			if strings.Contains(o.all(), canary) {
				t.Fatalf("the wrong password appears in the output:\n%s", o.all())
			}
		})
	}
}

func TestMutualTLSThroughConfigDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	pki := newPKI(t)
	serverTLS := &tls.Config{
		Certificates: []tls.Certificate{pki.server},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pki.pool,
		MinVersion:   tls.VersionTLS12,
	}
	clientTLS := &tls.Config{RootCAs: pki.pool, Certificates: []tls.Certificate{pki.client}, MinVersion: tls.VersionTLS12}
	c := kafkatest.NewWith(t, kafkatest.Options{
		Brokers: 3,
		Fake:    []kfake.Opt{kfake.TLS(serverTLS)},
		Client:  []kgo.Opt{kgo.DialTLSConfig(clientTLS)},
	})
	c.RequireFake(t)
	seedWith(t, c)
	props := map[string]string{
		"security.protocol":   "SSL",
		"ssl.ca.pem":          pki.caPEM,
		"ssl.certificate.pem": pki.clientCertPEM,
		"ssl.key.pem":         pki.clientKeyPEM,
	}
	o := runProcess(t, c, props, "--group", group, "--topic", topic, "--to", "offset:3")
	if o.code != 0 {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	if got := offsetsOf(t, c, group); got["orders/0"] != 3 || got["orders/1"] != 3 {
		t.Errorf("offsets %v", got)
	}
	keyBody := strings.Split(strings.TrimSpace(pki.clientKeyPEM), "\n")[1]
	if strings.Contains(o.all(), keyBody) {
		t.Fatal("the private key appears in the output")
	}
	// Without a client certificate the broker refuses the handshake: the
	// configuration is wrong, and retrying cannot help.
	delete(props, "ssl.certificate.pem")
	delete(props, "ssl.key.pem")
	o = runProcess(t, c, props, "--group", group, "--topic", topic, "--to", "latest", "--timeout", "3s")
	if o.code != int(report.ExitInvalidInput) || !strings.Contains(o.result, "the TLS handshake failed") {
		t.Fatalf("exit %d without a client certificate, want %d saying the TLS handshake failed\n%s\n%s", o.code, report.ExitInvalidInput, o.result, o.stderr)
	}
}

type testPKI struct {
	pool                               *x509.CertPool
	server, client                     tls.Certificate
	caPEM, clientCertPEM, clientKeyPEM string
}

func newPKI(t *testing.T) testPKI {
	t.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	serial := int64(1)
	sign := func(tmpl, parent *x509.Certificate, pub, signer any) []byte {
		serial++
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore = time.Now().Add(-time.Hour)
		tmpl.NotAfter = time.Now().Add(time.Hour)
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	pemOf := func(typ string, der []byte) string {
		return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
	}
	caKey := key()
	caTmpl := &x509.Certificate{Subject: pkix.Name{CommonName: "kafka-replay test CA"}, IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER := sign(caTmpl, caTmpl, &caKey.PublicKey, caKey)
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leaf := func(cn string, usage x509.ExtKeyUsage) (tls.Certificate, string, string) {
		k := key()
		der := sign(&x509.Certificate{
			Subject: pkix.Name{CommonName: cn}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		}, ca, &k.PublicKey, caKey)
		kder, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		certPEM, keyPEM := pemOf("CERTIFICATE", der), pemOf("PRIVATE KEY", kder)
		pair, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM))
		if err != nil {
			t.Fatal(err)
		}
		return pair, certPEM, keyPEM
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	server, _, _ := leaf("127.0.0.1", x509.ExtKeyUsageServerAuth)
	client, clientCert, clientKey := leaf("replay", x509.ExtKeyUsageClientAuth)
	return testPKI{pool: pool, server: server, client: client, caPEM: pemOf("CERTIFICATE", caDER), clientCertPEM: clientCert, clientKeyPEM: clientKey}
}

// TestResultDecodableWhateverTheSecret: secret values are removed from the
// result's values, not from its encoded bytes, so a secret that is also a
// word, number or piece of JSON syntax of the result (the schema name, a
// year, a quote) leaves every channel decodable and the log lines whole.
func TestResultDecodableWhateverTheSecret(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	for i, secret := range []string{"kafka", "2026", "schema", "kafkareplay.dev/result/v1", `"}],`, `\\\\`, "::::", "level", "true"} {
		t.Run(secret, func(t *testing.T) {
			props := map[string]string{"security.protocol": "PLAINTEXT", "sasl.password": secret}
			o := runProcess(t, c, props, "--group", group, "--topic", topic, "--to", "offset:"+strconv.Itoa(10+i),
				"--run-id", "secret-"+strconv.Itoa(i), "--output", "json", "--emit-record", "--allow-skip")
			if o.code != 0 {
				t.Fatalf("exit %d\n%s", o.code, o.stderr)
			}
			res, err := report.Decode([]byte(o.result))
			if err != nil {
				t.Fatalf("result file: %v\n%s", err, o.result)
			}
			if res.Schema != report.Schema || res.StartedAt.Year() != time.Now().Year() || len(res.Partitions) != partitions || res.Partitions[0].NewOffset != int64(10+i) {
				t.Errorf("result altered: %+v", res)
			}
			if _, err := report.Decode([]byte(o.termination)); err != nil {
				t.Errorf("termination message: %v\n%s", err, o.termination)
			}
			doc, _, _ := strings.Cut(o.stdout, report.FrameMarker)
			if _, err := report.Decode([]byte(doc)); err != nil {
				t.Errorf("stdout JSON: %v\n%s", err, doc)
			}
			frames, damaged, err := report.ReadFrames(strings.NewReader(o.stdout))
			if err != nil || damaged != 0 || len(frames) != 1 || frames[0].RunID != res.RunID || len(frames[0].Partitions) != partitions {
				t.Errorf("record frame: %d frames, %d damaged, %v", len(frames), damaged, err)
			}
			for _, line := range strings.Split(strings.TrimSpace(o.stderr), "\n") {
				if !strings.HasPrefix(line, "time=") || !strings.Contains(line, " level=") {
					t.Errorf("log line lost its structure: %q", line)
				}
			}
		})
	}
}

// TestCodeLoadingPropertyNeverLoads: a config directory that names a
// plugin library is refused before librdkafka could load it, unless the
// operator allows the property by name, in which case the library's code
// runs: the refusal is what stands between a request and code execution.
func TestCodeLoadingPropertyNeverLoads(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build a plugin with")
	}
	dir := t.TempDir()
	src, lib := filepath.Join(dir, "plugin.c"), filepath.Join(dir, "plugin.so")
	const code = `#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void loaded(void) {
	const char *p = getenv("KAFKA_REPLAY_TEST_PLUGIN_MARKER");
	FILE *f = p ? fopen(p, "w") : NULL;
	if (f) fclose(f);
}
`
	if err := os.WriteFile(src, []byte(code), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
		t.Fatalf("build the plugin: %v\n%s", err, out)
	}
	marker := filepath.Join(dir, "loaded")
	t.Setenv("KAFKA_REPLAY_TEST_PLUGIN_MARKER", marker)
	c := seeded(t)
	props := map[string]string{"plugin.library.paths": lib}
	args := []string{"--group", group, "--topic", topic, "--to", "latest", "--timeout", "5s"}
	o := runProcess(t, c, props, args...)
	if o.code != int(report.ExitInvalidInput) || !strings.Contains(o.result, "plugin.library.paths") {
		t.Fatalf("exit %d, want %d naming the property\n%s", o.code, report.ExitInvalidInput, o.result)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the plugin was loaded (%v)", err)
	}
	runProcess(t, c, props, append(args, "--allow-unsafe-properties", "plugin.library.paths")...)
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("allowed by the operator, the plugin did not load (%v): this test no longer shows the refusal matters", err)
	}
}
