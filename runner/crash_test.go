package runner_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

var crashBin struct {
	once sync.Once
	path string
	err  error
}

// crashRunner builds, once, a runner binary with the crashhook tag: its
// environment can make it panic, or fail fatally, at a named point. The
// production binary has no such hook.
func crashRunner(t *testing.T) string {
	t.Helper()
	crashBin.once.Do(func() {
		// Beside runnerBin, so TestMain's cleanup removes it.
		crashBin.path = filepath.Join(filepath.Dir(runnerBin), "runner-crashhook")
		out, err := exec.Command("go", "build", "-tags", "crashhook", "-o", crashBin.path, "../cmd/runner").CombinedOutput()
		if err != nil {
			crashBin.err = errors.New(string(out))
		}
	})
	if crashBin.err != nil {
		t.Fatalf("build the crashhook runner: %v", crashBin.err)
	}
	return crashBin.path
}

// proc is one finished runner process.
type proc struct {
	state          *os.ProcessState
	stderr         string
	result, termRs *report.Result
}

func runBinary(t *testing.T, bin string, env []string, args ...string) proc {
	t.Helper()
	dir := t.TempDir()
	resultFile, termFile := filepath.Join(dir, "result.json"), filepath.Join(dir, "term")
	cmd := exec.Command(bin, append([]string{"--result-file", resultFile}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "REPLAY_TERMINATION_MESSAGE_PATH="+termFile), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	p := proc{state: cmd.ProcessState, stderr: stderr.String()}
	p.result, _ = decodeFile(t, resultFile)
	p.termRs, _ = decodeFile(t, termFile)
	return p
}

// TestPanicIsAnInternalError: a panic, in the runner's own goroutine or in
// one it started, ends a real runner process with exit 1 (InternalError,
// never 2, InvalidInput) and a result that says what is known to have been
// applied.
func TestPanicIsAnInternalError(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	bin := crashRunner(t)
	cases := []struct {
		at       string
		moved    bool   // the offsets changed
		errorHas string // in the result's error
	}{
		{at: "start", errorHas: "before the commit, nothing was changed"},
		{at: "goroutine", errorHas: "before the commit, nothing was changed"},
		{at: "committed", moved: true, errorHas: "during the commit: offsets may have changed"},
		{at: "emit", moved: true, errorHas: "while writing the result (the run itself ended Applied"},
	}
	for _, tc := range cases {
		t.Run(tc.at, func(t *testing.T) {
			c := seeded(t)
			args := []string{"--bootstrap-servers", c.Bootstrap(), "--group", group, "--topic", topic, "--to", "earliest", "--run-id", "crash-" + tc.at}
			p := runBinary(t, bin, []string{"REPLAY_TEST_CRASH_AT=" + tc.at}, args...)
			if code := p.state.ExitCode(); code != int(report.ExitInternal) {
				t.Fatalf("exit %d (%s), want %d\n%s", code, p.state, report.ExitInternal, p.stderr)
			}
			if !strings.Contains(p.stderr, "test panic at "+tc.at) || !strings.Contains(p.stderr, "goroutine") {
				t.Errorf("the log does not show the panic and its stack:\n%s", p.stderr)
			}
			for name, r := range map[string]*report.Result{"result file": p.result, "termination message": p.termRs} {
				if r == nil {
					t.Fatalf("no %s", name)
				}
				if r.ExitCode != report.ExitInternal || r.Reason != report.ReasonInternalError || !strings.Contains(r.Error, tc.errorHas) {
					t.Errorf("%s: exit %d, reason %s, error %q; want InternalError saying %q", name, r.ExitCode, r.Reason, r.Error, tc.errorHas)
				}
			}
			got := offsetsOf(t, c, group)
			for p := range int32(partitions) {
				k := fmt.Sprintf("%s/%d", topic, p)
				if moved := got[k] != committed; moved != tc.moved {
					t.Errorf("%s at %d: moved=%v, want %v", k, got[k], moved, tc.moved)
				}
			}
			if tc.at != "committed" {
				return
			}
			// Cut short mid-commit, every partition's outcome is unknown,
			// and a retry with the same run ID finds the commit in place.
			for _, part := range p.result.Partitions {
				if !strings.Contains(part.Error, "outcome unknown") {
					t.Errorf("%s/%d: error %q, want outcome unknown", part.Topic, part.Partition, part.Error)
				}
			}
			again := runBinary(t, runnerBin, nil, args...)
			if again.state.ExitCode() != 0 || again.result == nil || again.result.Reason != report.ReasonAlreadyApplied {
				t.Errorf("retry: exit %d, result %+v\n%s", again.state.ExitCode(), again.result, again.stderr)
			}
		})
	}
}

// TestFatalErrorIsNotInvalidInput: an unrecoverable runtime error cannot
// be turned into a result, but it must not exit 2 either: the process ends
// by SIGABRT (exit 134 in a container), which reads as InternalError.
func TestFatalErrorIsNotInvalidInput(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	p := runBinary(t, crashRunner(t), []string{"REPLAY_TEST_CRASH_AT=start", "REPLAY_TEST_CRASH_MODE=fatal"},
		"--bootstrap-servers", "127.0.0.1:1", "--group", group, "--to", "earliest")
	ws, ok := p.state.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGABRT {
		t.Fatalf("process ended with %s, want SIGABRT\n%s", p.state, p.stderr)
	}
	if !strings.Contains(p.stderr, "fatal error: sync: unlock of unlocked mutex") {
		t.Errorf("stderr does not show the fatal error:\n%s", p.stderr)
	}
	if got := report.ReasonForExitCode(128 + report.ExitCode(syscall.SIGABRT)); got != report.ReasonInternalError {
		t.Errorf("exit 134 reads as %s", got)
	}
}

// TestHangupAndQuitAbortLikeSIGTERM: SIGHUP and SIGQUIT before the commit
// stop a real runner cleanly with exit 6, as SIGTERM does (without handling,
// Go exits 2 on SIGQUIT and the default SIGHUP kills the process outright).
func TestHangupAndQuitAbortLikeSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGQUIT} {
		t.Run(sig.String(), func(t *testing.T) {
			c := seeded(t)
			c.RequireFake(t)
			reached, release := holdListOffsets(c)
			defer close(release)
			dir := t.TempDir()
			resultFile := filepath.Join(dir, "result.json")
			cmd := exec.Command(runnerBin, "--bootstrap-servers", c.Bootstrap(), "--group", group, "--topic", topic,
				"--to", "earliest", "--result-file", resultFile)
			cmd.Env = append(os.Environ(), "REPLAY_TERMINATION_MESSAGE_PATH="+filepath.Join(dir, "term"))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-reached:
			case err := <-done:
				t.Fatalf("runner ended before reaching ListOffsets: %v\n%s", err, stderr.String())
			case <-time.After(60 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("runner never reached ListOffsets:\n%s", stderr.String())
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(60 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("runner ignored %s:\n%s", sig, stderr.String())
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != int(report.ExitInterrupted) {
				t.Fatalf("exit %v, want %d\n%s", err, report.ExitInterrupted, stderr.String())
			}
			res, _ := decodeFile(t, resultFile)
			if res == nil || res.Reason != report.ReasonInterrupted || !strings.Contains(res.Error, "signal") {
				t.Fatalf("result %+v", res)
			}
			assertUnchanged(t, c)
		})
	}
}

// holdListOffsets makes every ListOffsets request wait until release is
// closed; reached receives when the first one arrives.
func holdListOffsets(c *kafkatest.Cluster) (reached chan struct{}, release chan struct{}) {
	reached, release = make(chan struct{}, 16), make(chan struct{})
	c.Fake.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.Fake.KeepControl()
		select {
		case reached <- struct{}{}:
		default:
		}
		c.Fake.SleepControl(func() { <-release })
		return nil, nil, false
	})
	return reached, release
}
