package runner_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replay/kafka-replay/runner"
	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// holdReadBack makes the OffsetFetch requests that follow the first
// OffsetCommit (the read-back) wait until release is closed; reached
// receives when the first one arrives.
func holdReadBack(c *kafkatest.Cluster) (reached, release chan struct{}) {
	reached, release = make(chan struct{}, 16), make(chan struct{})
	var committed atomic.Bool
	c.Fake.ControlKey(int16(kmsg.OffsetCommit), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.Fake.KeepControl()
		committed.Store(true)
		return nil, nil, false
	})
	c.Fake.ControlKey(int16(kmsg.OffsetFetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.Fake.KeepControl()
		if committed.Load() {
			select {
			case reached <- struct{}{}:
			default:
			}
			c.Fake.SleepControl(func() { <-release })
		}
		return nil, nil, false
	})
	return reached, release
}

// startRunner starts the runner binary with stdout to a pipe, and returns
// the pipe's read end, the result and termination message paths, and a
// wait for its end.
func startRunner(t *testing.T, args ...string) (stdout *os.File, resultFile, termFile string, wait func() (*os.ProcessState, string)) {
	t.Helper()
	dir := t.TempDir()
	resultFile, termFile = filepath.Join(dir, "result.json"), filepath.Join(dir, "term")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(runnerBin, append([]string{"--result-file", resultFile}, args...)...)
	cmd.Env = append(os.Environ(), "REPLAY_TERMINATION_MESSAGE_PATH="+termFile)
	cmd.Stdout = w
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done; _ = r.Close() })
	return r, resultFile, termFile, func() (*os.ProcessState, string) {
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("runner did not end:\n%s", stderr.String())
		}
		return cmd.ProcessState, stderr.String()
	}
}

// TestStdoutClosedAfterTheCommitKeepsTheResult: the reader of the runner's
// stdout goes away while it verifies its commit. Writing the table then
// raised SIGPIPE and killed it (exit 141) before the result file or the
// termination message were written. Now the write fails, the files have
// the result, and the exit code is the outcome's.
func TestStdoutClosedAfterTheCommitKeepsTheResult(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	c.RequireFake(t)
	reached, release := holdReadBack(c)
	stdout, resultFile, termFile, wait := startRunner(t, "--bootstrap-servers", c.Bootstrap(), "--group", group, "--topic", topic, "--to", "earliest", "--run-id", "pipe")
	select {
	case <-reached:
	case <-time.After(60 * time.Second):
		t.Fatal("the runner never read back")
	}
	_ = stdout.Close()
	close(release)
	st, stderr := wait()
	if st.ExitCode() != int(report.ExitOK) {
		t.Fatalf("exit %v, want 0\n%s", st, stderr)
	}
	for _, path := range []string{resultFile, termFile} {
		res, _ := decodeFile(t, path)
		if res == nil || res.Reason != report.ReasonApplied || res.Totals.Applied != partitions {
			t.Fatalf("%s: %+v", filepath.Base(path), res)
		}
	}
	if !strings.Contains(stderr, "cannot write the result to stdout") {
		t.Errorf("the lost stdout is not logged:\n%s", stderr)
	}
	for k, v := range offsetsOf(t, c, group) {
		if v != 0 {
			t.Errorf("%s at %d, want 0", k, v)
		}
	}
}

// TestStdoutClosedBeforeTheCommitIsAnInterruption: a stdout whose reader
// has gone before the commit is what SIGPIPE would say at the first write:
// the run stops there, Interrupted, nothing committed.
func TestStdoutClosedBeforeTheCommitIsAnInterruption(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	stdout, resultFile, _, wait := startRunner(t, "--bootstrap-servers", c.Bootstrap(), "--group", group, "--topic", topic, "--to", "earliest", "--run-id", "pipe-early")
	_ = stdout.Close()
	st, stderr := wait()
	if st.ExitCode() != int(report.ExitInterrupted) {
		t.Fatalf("exit %v, want %d\n%s", st, report.ExitInterrupted, stderr)
	}
	res, _ := decodeFile(t, resultFile)
	if res == nil || res.Reason != report.ReasonInterrupted || !strings.Contains(res.Error, "stdout") {
		t.Fatalf("result %+v", res)
	}
	assertUnchanged(t, c)
}

// TestUnwritableOutputIsRefusedBeforeTheCommit: a result file or a
// termination message that cannot be written (a directory, a path under
// /proc, a full disk) refuses the run before it commits, naming the
// setting; it used to commit, exit 0 and leave no result.
func TestUnwritableOutputIsRefusedBeforeTheCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	dir := t.TempDir()
	// A full disk: a link to /dev/full (never /dev/full itself, which a
	// runner that renames its result into place would replace, as root).
	full := filepath.Join(dir, "full")
	if err := os.Symlink("/dev/full", full); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, resultFile, termPath, names string
	}{
		{"result file is a directory", dir, filepath.Join(dir, "term"), "--result-file"},
		{"result file under /proc", "/proc/self/kafka-replay-result.json", filepath.Join(dir, "term"), "--result-file"},
		{"result file on a full disk", full, filepath.Join(dir, "term"), "--result-file"},
		{"termination message under /proc", filepath.Join(dir, "result.json"), "/proc/self/kafka-replay-term", "REPLAY_TERMINATION_MESSAGE_PATH"},
		{"termination message on a full disk", filepath.Join(dir, "result.json"), full, "REPLAY_TERMINATION_MESSAGE_PATH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("REPLAY_TERMINATION_MESSAGE_PATH", tc.termPath)
			var stdout, stderr bytes.Buffer
			code := runner.Main(context.Background(), []string{"--bootstrap-servers", c.Bootstrap(), "--group", group, "--topic", topic,
				"--to", "earliest", "--run-id", "unwritable", "--timeout", "20s", "--result-file", tc.resultFile}, &stdout, &stderr)
			if code != int(report.ExitInvalidInput) {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, report.ExitInvalidInput, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.names) || !strings.Contains(stdout.String(), "nothing was committed") {
				t.Errorf("the error does not name %s:\n%s", tc.names, stdout.String())
			}
			assertUnchanged(t, c)
		})
	}
	// The device is still one behind its link: a result is never renamed
	// over what is not a regular file.
	if st, err := os.Stat(full); err != nil || st.Mode()&os.ModeDevice == 0 {
		t.Fatalf("%s: %v %v", full, st, err)
	}
}

// TestKilledDuringTheCommitLeavesAnUnknownOutcome: a runner killed
// (SIGKILL, the OOM killer, a crash in librdkafka) while its commit is
// with the broker leaves the result written before the commit:
// OutcomeUnknown, exit 5, retry with the same run ID; never no result.
func TestKilledDuringTheCommitLeavesAnUnknownOutcome(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	c.RequireFake(t)
	reached, release := make(chan struct{}, 16), make(chan struct{})
	defer close(release)
	c.Fake.ControlKey(int16(kmsg.OffsetCommit), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.Fake.KeepControl()
		select {
		case reached <- struct{}{}:
		default:
		}
		c.Fake.SleepControl(func() { <-release })
		return nil, nil, false
	})
	dir := t.TempDir()
	resultFile, termFile := filepath.Join(dir, "result.json"), filepath.Join(dir, "term")
	cmd := exec.Command(runnerBin, "--bootstrap-servers", c.Bootstrap(), "--group", group, "--topic", topic, "--to", "earliest", "--run-id", "killed", "--result-file", resultFile)
	cmd.Env = append(os.Environ(), "REPLAY_TERMINATION_MESSAGE_PATH="+termFile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reached:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the runner never committed")
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) {
		t.Fatalf("wait: %v", err)
	}
	for _, path := range []string{resultFile, termFile} {
		res, raw := decodeFile(t, path)
		if res == nil || res.Reason != report.ReasonOutcomeUnknown || res.ExitCode != report.ExitPartiallyApplied || !strings.Contains(res.Error, "retry with the same run ID") {
			t.Fatalf("%s: %s", filepath.Base(path), raw)
		}
	}
}
