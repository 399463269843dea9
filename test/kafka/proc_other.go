//go:build !linux

package kafkatest

import (
	"os"
	"os/exec"
)

func setProcessGroup(*exec.Cmd) {}

func startHeld(cmd *exec.Cmd, _ <-chan struct{}) error { return cmd.Start() }

func killProcessGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// processAlive is conservative where it cannot tell: an abandoned
// directory is left rather than one in use removed.
func processAlive(int) bool { return true }
