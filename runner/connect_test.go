package runner_test

import (
	"bytes"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// unreachableTimeout is far longer than a fast failure takes, so that a run
// that ends well within it did not wait for it.
const unreachableTimeout = 3 * time.Minute

// runUnreachable runs the runner binary at bootstrap, through wrap (a
// command and its arguments, before the runner's), and returns the result
// and how long the run took.
func runUnreachable(t *testing.T, bootstrap string, props map[string]string, wrap ...string) (*report.Result, string, time.Duration) {
	t.Helper()
	dir := t.TempDir()
	resultFile := filepath.Join(dir, "result.json")
	args := []string{"--bootstrap-servers", bootstrap, "--group", group, "--topic", topic, "--to", "earliest",
		"--result-file", resultFile, "--timeout", unreachableTimeout.String()}
	if props != nil {
		cfgDir := filepath.Join(dir, "kafka")
		writeSecretVolume(t, cfgDir, props)
		args = append(args, "--kafka-config-dir", cfgDir)
	}
	argv := append(append(wrap, runnerBin), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), config.EnvTerminationMessagePath+"="+filepath.Join(dir, "term"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	b, rerr := os.ReadFile(resultFile)
	if rerr != nil {
		t.Fatalf("no result (%v)\nstderr:\n%s", err, stderr.String())
	}
	res, derr := report.Decode(b)
	if derr != nil {
		t.Fatal(derr)
	}
	if ee != nil && ee.ExitCode() != int(res.ExitCode) {
		t.Fatalf("exit %d, result says %d", ee.ExitCode(), res.ExitCode)
	}
	return res, stderr.String(), took
}

// checkUnreachable: the run ended with the connection's own cause, as the
// given exit code, long before --timeout, and changed nothing.
func checkUnreachable(t *testing.T, res *report.Result, stderr string, took time.Duration, code report.ExitCode, want ...string) {
	t.Helper()
	if res.ExitCode != code || res.Reason != report.ReasonForExitCode(code) {
		t.Errorf("exit %d (%s), want %d\nerror: %s", res.ExitCode, res.Reason, code, res.Error)
	}
	for _, w := range append([]string{"cannot connect to Kafka"}, want...) {
		if !strings.Contains(res.Error, w) {
			t.Errorf("error %q lacks %q", res.Error, w)
		}
	}
	if strings.Contains(res.Error, "Timed out") {
		t.Errorf("error %q is a timeout, not the cause", res.Error)
	}
	// A generous bound: the failure is known in seconds, the timeout is
	// minutes.
	if took > unreachableTimeout/2 {
		t.Errorf("took %s, not far from --timeout %s\nstderr:\n%s", took, unreachableTimeout, stderr)
	}
	if len(res.Partitions) != 0 || res.Totals.Applied != 0 {
		t.Errorf("an unreachable Kafka, yet partitions %v totals %+v", res.Partitions, res.Totals)
	}
	t.Logf("%s after %s: %s", res.Reason, took.Round(time.Millisecond), res.Error)
}

// A closed port on loopback: nothing listens, the connection is refused. A
// broker may come back, so it is retryable.
func TestConnectionRefusedEndsTheRunAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	res, stderr, took := runUnreachable(t, addr, nil)
	checkUnreachable(t, res, stderr, took, report.ExitKafkaError, "Connection refused", "Kafka is down, or the port is wrong", "--bootstrap-servers")
	if !report.ExitKafkaError.Retryable() {
		t.Error("a refused connection must be retryable")
	}
}

// A name in the reserved .invalid domain. The runner runs in its own
// network namespace (loopback only, down) and mount namespace, where the
// host lookup consults only /etc/hosts: the name fails to resolve locally
// and no query can leave the machine.
func TestUnresolvableNameEndsTheRunAsInvalidInput(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root for its own network and mount namespaces (no DNS query may leave the machine)")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("needs unshare(1)")
	}
	nss := filepath.Join(t.TempDir(), "nsswitch.conf")
	if err := os.WriteFile(nss, []byte("hosts: files\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// In the new namespaces: bind the files-only nsswitch.conf, then run
	// the runner ("$0" and the rest are its argv).
	wrap := []string{unshare, "--net", "--mount", "--", "sh", "-ec", `mount --bind "$NSS" /etc/nsswitch.conf; exec "$@"`, "sh"}
	t.Setenv("NSS", nss)
	res, stderr, took := runUnreachable(t, "kafka.invalid:9092", nil, wrap...)
	checkUnreachable(t, res, stderr, took, report.ExitInvalidInput, "kafka.invalid:9092", "Failed to resolve", "does not resolve", "--bootstrap-servers")
}

// A TLS listener on loopback whose certificate the runner's CA did not
// sign: the handshake fails, and trying again cannot help.
func TestTLSHandshakeFailureEndsTheRunAsInvalidInput(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	server, other := newPKI(t), newPKI(t)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{server.server}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				_ = conn.SetDeadline(time.Now().Add(time.Minute))
				_ = conn.(*tls.Conn).Handshake() // fails: the client does not trust us
			}()
		}
	}()
	props := map[string]string{"security.protocol": "SSL", "ssl.ca.pem": other.caPEM}
	res, stderr, took := runUnreachable(t, ln.Addr().String(), props)
	checkUnreachable(t, res, stderr, took, report.ExitInvalidInput, "certificate verify failed", "the TLS handshake failed", "--kafka-config-dir", "the client certificate and key (ssl.certificate.pem, ssl.key.pem), which are credentials, in --kafka-secret-dir")
}

// Under the launcher the hints name the request's fields.
func TestUnreachableHintInSpecNames(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	t.Setenv(config.EnvFieldNames, string(config.FieldNamesSpec))
	res, stderr, took := runUnreachable(t, addr, nil)
	checkUnreachable(t, res, stderr, took, report.ExitKafkaError, "check spec.kafka.bootstrapServers")
}

// One dead server in the bootstrap list is not Kafka being unreachable: the
// run goes on through the others.
func TestOneDeadBootstrapServerIsNotTheEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	_ = ln.Close()
	alive := strings.Split(c.Bootstrap(), ",")[0]
	for _, list := range []string{dead + "," + alive, alive + "," + dead} {
		res, stderr, _ := runUnreachable(t, list, nil)
		if res.ExitCode != report.ExitOK {
			t.Fatalf("bootstrap %s: exit %d: %s\nstderr:\n%s", list, res.ExitCode, res.Error, stderr)
		}
	}
	for p, off := range offsetsOf(t, c, group) {
		if off != 0 {
			t.Errorf("%s at %d, want 0 (earliest)", p, off)
		}
	}
}
