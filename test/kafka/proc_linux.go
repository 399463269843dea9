package kafkatest

import (
	"errors"
	"os/exec"
	"runtime"
	"syscall"
)

// setProcessGroup starts cmd in its own process group, so that Stop can
// kill it and anything it started by one PID, and asks the kernel to kill
// it when the test binary dies (a go test -timeout panic, a SIGKILL), so
// that no broker outlives the tests that started it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// startHeld starts cmd from an OS thread that stays alive until exited is
// closed: the kernel sends Pdeathsig when the thread that started the
// child ends, not the process, and Go may end an idle thread.
func startHeld(cmd *exec.Cmd, exited <-chan struct{}) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		errc <- err
		if err == nil {
			<-exited
		}
	}()
	return <-errc
}

func killProcessGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
