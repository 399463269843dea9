package osspecific

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests start real processes and reap them with Wait, which takes any
// child of the test binary: they do not run in parallel.

// start runs sh -c script in a new process group, as emissary does.
func start(t *testing.T, script string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	Setpgid(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

func exitCodeOf(err error) (int, bool) {
	var e interface{ ExitCode() int }
	if errors.As(err, &e) {
		return e.ExitCode(), true
	}
	return 0, false
}

func TestWaitExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string
		want   int // 0: Wait returns nil
	}{
		{"exit 0", "exit 0", 0},
		{"exit 2", "exit 2", 2},
		{"exit 4", "exit 4", 4},
		{"killed by SIGKILL", "kill -KILL $$", 128 + int(syscall.SIGKILL)},
		{"killed by SIGTERM", "kill -TERM $$", 128 + int(syscall.SIGTERM)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Wait(start(t, tc.script).Process)
			if tc.want == 0 {
				if err != nil {
					t.Fatalf("Wait: %v, want nil", err)
				}
				return
			}
			got, ok := exitCodeOf(err)
			if !ok || got != tc.want {
				t.Fatalf("Wait: %v (exit code %d, %v), want exit code %d", err, got, ok, tc.want)
			}
			if err.Error() != "exit status "+strconv.Itoa(tc.want) {
				t.Errorf("error text %q", err)
			}
		})
	}
}

// Wait reaps the other children that end before the command (as PID 1 of a
// container it inherits orphans, which would stay zombies) and still returns
// the command's own exit code.
func TestWaitReapsOtherChildren(t *testing.T) {
	other := start(t, "exit 7")
	// The command waits on its stdin, so it ends only when the test lets it.
	cmd := exec.Command("sh", "-c", "read line; exit 3")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Wait(cmd.Process) }()

	// The other child ends at once; Wait must reap it while the command
	// still runs: its /proc entry disappears.
	deadline := time.Now().Add(time.Minute)
	for state(other.Process.Pid) != "" {
		if time.Now().After(deadline) {
			t.Fatalf("child %d never reaped (state %s) while Wait ran", other.Process.Pid, state(other.Process.Pid))
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = stdin.Close()
	if got, ok := exitCodeOf(<-done); !ok || got != 3 {
		t.Fatalf("Wait: exit code %d (%v), want 3", got, ok)
	}
}

// state is a process's state letter from /proc (R, S, Z, ...), or "" once
// it is gone.
func state(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name, in parentheses, may hold spaces: the state follows it.
	s := string(b)
	if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) > 0 {
		return f[0]
	}
	return "?"
}

// Kill reaches the whole group the command leads: a grandchild the shell
// started in the background goes too.
func TestKillSignalsTheGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "grandchild")
	// The shell starts a long sleep, records its PID, then waits for it.
	cmd := start(t, `sleep 300 & echo $! > `+pidFile+`.tmp; mv `+pidFile+`.tmp `+pidFile+`; wait`)
	grandchild := readPID(t, pidFile)
	deadline := time.Now().Add(time.Minute)
	if err := Kill(cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if got, ok := exitCodeOf(Wait(cmd.Process)); !ok || got != 128+int(syscall.SIGTERM) {
		t.Fatalf("shell exit code %d, want %d", got, 128+int(syscall.SIGTERM))
	}
	// The grandchild was re-parented away from us when the shell died, so
	// watch it through /proc until it is gone or a zombie.
	for {
		if st := state(grandchild); st == "" || st == "Z" {
			return // gone, or dead and waiting for its new parent to reap it
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(grandchild, syscall.SIGKILL)
			t.Fatalf("grandchild %d survived Kill of its group", grandchild)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Kill of a process that does not lead its group signals that process only,
// not the group it is in: here a shell leads the group and its background
// sleep is killed; the shell must live on to exit 7 by itself.
func TestKillOnlyThePIDWhenNotALeader(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "sleep")
	cmd := start(t, `sleep 300 & echo $! > `+pidFile+`.tmp; mv `+pidFile+`.tmp `+pidFile+`; wait; exit 7`)
	sleeper := readPID(t, pidFile)
	if err := Kill(sleeper, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if got, ok := exitCodeOf(Wait(cmd.Process)); !ok || got != 7 {
		t.Fatalf("shell exit code %d, want 7 (%d: the shell was signalled with its child)", got, 128+int(syscall.SIGTERM))
	}
}

// readPID waits for a shell to write a PID to path.
func readPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if b, err := os.ReadFile(path); err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no PID in %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCanIgnoreSignal(t *testing.T) {
	for s, want := range map[os.Signal]bool{
		syscall.SIGCHLD: true, syscall.SIGURG: true,
		syscall.SIGTERM: false, syscall.SIGINT: false, syscall.SIGHUP: false, syscall.SIGUSR1: false,
	} {
		if got := CanIgnoreSignal(s); got != want {
			t.Errorf("CanIgnoreSignal(%v) = %v, want %v", s, got, want)
		}
	}
	if Term != syscall.SIGTERM {
		t.Errorf("Term = %v", Term)
	}
}
