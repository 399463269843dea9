package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/exit"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// screen is a tmux session of its own (its own server socket), so that the
// plugin runs on a real terminal and the test reads what a person sees.
type screen struct {
	t    *testing.T
	sock string
}

func tmux(t *testing.T, sock string, args ...string) string {
	t.Helper()
	cmd := exec.Command("tmux", append([]string{"-S", sock}, args...)...)
	// CI has no terminal of its own: tmux needs to know what it emulates.
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return string(out)
}

// newScreen starts cmd in a detached width×40 tmux window; the window
// stays after the command so its last screen can be read.
func newScreen(t *testing.T, width int, cmd string) *screen {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is needed for the terminal test (Debian package tmux; .ci/run installs it)")
	}
	s := &screen{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	tmux(t, s.sock, "-f", "/dev/null", "new-session", "-d", "-x", strconv.Itoa(width), "-y", "40", "-s", "kr", cmd)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", s.sock, "kill-server").Run() })
	return s
}

// text is the visible screen; with escapes, its colours too.
func (s *screen) text(escapes bool) string {
	args := []string{"capture-pane", "-p", "-t", "kr"}
	if escapes {
		args = append(args, "-e")
	}
	return tmux(s.t, s.sock, args...)
}

// waitFor waits until the screen shows want, and returns it.
func (s *screen) waitFor(want string) string {
	s.t.Helper()
	var last string
	eventually(s.t, 60*time.Second, "the screen to show "+want, func() error {
		last = s.text(false)
		if !strings.Contains(last, want) {
			return fmt.Errorf("screen:\n%s", last)
		}
		return nil
	})
	return last
}

// buildPlugin builds the plugin binary the way make build does.
func buildPlugin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kubectl-replay")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/kafka-replay/kafka-replay/cmd/kubectl-replay")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func lineWith(screen, sub string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// `create --wait` on a terminal: the steps are drawn once and redrawn in
// place, in colour. At the start the plan waits for approval and the apply
// has not begun; at the end every step is done, the outcome is printed
// below the steps, and the exit code is 0.
func TestEnvtestTerminalWait(t *testing.T) {
	env(t)
	ns := newNamespace(t)
	logs := testutil.NewRunnerLogs()
	startLauncher(t, ns, logs)
	bin := buildPlugin(t)
	servers := "kafka." + ns + ".svc:9092"
	cmd := fmt.Sprintf("env -u NO_COLOR %s create term --bootstrap-servers %s --group orders --topic orders --to shift:-100 --approval Manual --wait --kubeconfig %s -n %s --as %s; echo \"exit code $?\"; sleep 3600",
		bin, servers, kubeconfig, ns, operator)
	s := newScreen(t, 150, cmd)

	plan := planResult("orders", 100, 300, 20)
	runJob(t, logs, planJob(t, ns, "term"), plan)
	start := s.waitFor("waiting: kubectl replay approve term")
	t.Logf("start screen:\n%s", strings.TrimRight(start, "\n"))
	header := "replayrequest " + ns + "/term  group orders"
	for _, c := range []struct{ sub, want string }{
		{header, "AwaitingApproval"},
		{"accepted", "✓"},
		{" plan ", "✓ plan"},
		{"approval", "… approval"},
		{" apply", "· apply"},
	} {
		if l := lineWith(start, c.sub); !strings.Contains(l, c.want) {
			t.Errorf("start screen: the %q line is %q, want %q in it:\n%s", c.sub, l, c.want, start)
		}
	}
	if strings.Contains(start, "succeeded") || strings.Contains(start, "exit code") {
		t.Errorf("start screen already shows an outcome:\n%s", start)
	}
	if !strings.Contains(lineWith(start, " plan "), plan.Plan) {
		t.Errorf("start screen: the plan line does not give the digest %s:\n%s", plan.Plan, start)
	}

	wantCode(t, "approve", plugin(t, ns, operator, "approve", "term"), exit.OK)
	apply := waitJob(t, ns, "term")
	runJob(t, logs, apply, appliedResult(plan))
	end := s.waitFor("exit code")
	t.Logf("end screen:\n%s", strings.TrimRight(end, "\n"))
	for _, c := range []struct{ sub, want string }{
		{header, "Succeeded"},
		{"approval", "✓ approval"},
		{" apply", "✓ apply"},
		{"succeeded", "succeeded Applied"},
		{"exit code", "exit code 0"},
	} {
		if l := lineWith(end, c.sub); !strings.Contains(l, c.want) {
			t.Errorf("end screen: the %q line is %q, want %q in it:\n%s", c.sub, l, c.want, end)
		}
	}
	// Redrawn in place: one header, one line per step, however many
	// updates came.
	if n := strings.Count(end, header); n != 1 {
		t.Errorf("end screen has %d headers, want 1 (redrawn in place):\n%s", n, end)
	}
	if n := strings.Count(end, "approval "); n != 1 {
		t.Errorf("end screen has %d approval lines:\n%s", n, end)
	}
	// Colour on a terminal: the done marks are green.
	if col := s.text(true); !bytes.Contains([]byte(col), []byte("\x1b[32m✓")) {
		t.Errorf("no green ✓ on the terminal:\n%q", col)
	}
	if rr := getRR(t, ns, "term"); rr.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Errorf("phase %s", rr.Status.Phase)
	}
}

// On a terminal narrower than the display's lines, each line is cut to
// the width: a wrapped line would take two rows, and the redraw (one row
// up per line) would leave copies of the block behind.
func TestEnvtestTerminalWaitNarrow(t *testing.T) {
	env(t)
	ns := newNamespace(t)
	logs := testutil.NewRunnerLogs()
	startLauncher(t, ns, logs)
	bin := buildPlugin(t)
	cmd := fmt.Sprintf("env -u NO_COLOR %s create narrow --bootstrap-servers kafka.%s.svc:9092 --group orders --to shift:-100 --wait --kubeconfig %s -n %s --as %s; echo \"exit code $?\"; sleep 3600",
		bin, ns, kubeconfig, ns, operator)
	const width = 60
	s := newScreen(t, width, cmd)
	job := waitJob(t, ns, "narrow")
	start := s.waitFor("apply")
	t.Logf("start screen:\n%s", strings.TrimRight(start, "\n"))
	runJob(t, logs, job, runResult("orders", 0, 100, 300))
	end := s.waitFor("exit code")
	t.Logf("end screen:\n%s", strings.TrimRight(end, "\n"))
	if n := strings.Count(end, "replayrequest "+ns); n != 1 {
		t.Errorf("end screen has %d headers, want 1 (lines cut to the width, redrawn in place):\n%s", n, end)
	}
	if n := strings.Count(end, "accepted "); n != 1 {
		t.Errorf("end screen has %d accepted lines:\n%s", n, end)
	}
	if !strings.Contains(end, "exit code 0") {
		t.Errorf("end screen:\n%s", end)
	}
	for _, l := range strings.Split(end, "\n") {
		if n := len([]rune(l)); n > width {
			t.Errorf("a line of %d columns on a %d-column screen: %q", n, width, l)
		}
	}
}
