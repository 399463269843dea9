// Package osspecific holds the Linux process functions that Argo Workflows'
// argoexec needs from its own package of that name
// (github.com/argoproj/argo-workflows/v4/workflow/executor/osspecific) and
// that the v4.0.5 module on the proxy lacks: that module ships the package's
// darwin and windows files but no signal_linux.go, so argoexec does not
// build for Linux.
//
// test/tools/argo/build.sh adds this file to Argo's package at build time
// with `go build -overlay` (the module itself is not copied or patched). It
// therefore uses only the standard library: it must compile both here, where
// its tests run, and inside Argo's package. Argo checks the error Wait
// returns through an interface (ExitCode() int), so the error type is ours.
package osspecific

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Term is the signal that asks a process to stop; emissary maps it to exit
// code 143 while it waits for a container dependency.
var Term os.Signal = syscall.SIGTERM

// CanIgnoreSignal says which of the signals emissary receives it need not
// forward to the command it runs. SIGCHLD is about emissary's own children
// (Wait reaps them), and SIGURG is the Go runtime's goroutine preemption:
// forwarding either would only disturb the command.
func CanIgnoreSignal(s os.Signal) bool {
	return s == syscall.SIGCHLD || s == syscall.SIGURG
}

// Setpgid makes the command the leader of a new process group, so that Kill
// reaches whatever it starts as well.
func Setpgid(a *syscall.SysProcAttr) {
	a.Setpgid = true
}

// Kill sends s to pid's process group when pid leads one (Setpgid, or the
// session a pty gives), and otherwise to pid alone: signalling the group of
// a process that merely belongs to it could reach emissary itself.
func Kill(pid int, s syscall.Signal) error {
	if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
		return syscall.Kill(-pid, s)
	}
	return syscall.Kill(pid, s)
}

// Wait waits for the command to end and returns nil for exit code 0, and
// otherwise an error whose ExitCode is the code, or 128+N for death by
// signal N (as a shell reports it).
//
// emissary runs as the container's PID 1, so orphaned grandchildren are
// re-parented to it and would stay zombies unless it reaps them. Wait
// therefore gives up the os.Process handle and reaps every child that ends
// until the command itself does.
func Wait(process *os.Process) error {
	pid := process.Pid
	if err := process.Release(); err != nil {
		return err
	}
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("waiting for process %d: %w", pid, err)
		}
		if got != pid {
			continue // another child, now reaped
		}
		switch {
		case ws.Exited():
			return exitError(ws.ExitStatus())
		case ws.Signaled():
			return exitError(128 + int(ws.Signal()))
		}
	}
}

// exitError returns nil for 0 and an exitStatus otherwise.
func exitError(code int) error {
	if code == 0 {
		return nil
	}
	return exitStatus(code)
}

// exitStatus is a non-zero exit code. Argo reads it through its
// errors.Exited interface, so the type need not be Argo's.
type exitStatus int

// ExitCode returns the code.
func (e exitStatus) ExitCode() int { return int(e) }

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
