package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kafka-replay/kafka-replay/test/cluster"
)

// The state directory tells `down` and `stop-consumer` which process runs
// the dev cluster. They act only on a directory that holds a state file of
// this kind, only on the process it names (PID and start time), and remove
// only the files `up` wrote: the directory is the user's to name, and a
// wrong one must never cost anything.
const (
	stateFile = "dev-cluster.json"
	stateKind = "kafka-replay-dev-cluster/v1"
	shellFile = "shell"
	binDir    = "bin"
)

// state is what `up` records in the state directory.
type state struct {
	Kind string `json:"kind"`
	// PID and Start (cluster.ProcessStart) identify the process that runs
	// the cluster, Kafka and the consumer.
	PID   int    `json:"pid"`
	Start string `json:"start"`
	// NetNS is the cluster's network namespace; ClusterDir its harness
	// state directory.
	NetNS      string `json:"netns"`
	ClusterDir string `json:"clusterDir"`
	Kubeconfig string `json:"kubeconfig"`
	Bootstrap  string `json:"bootstrap"`
}

// ownFiles are the files `up` writes into the state directory (the
// kubeconfig may be elsewhere; its path is in the state).
func ownFiles(dir string) []string {
	return []string{
		filepath.Join(dir, shellFile),
		filepath.Join(dir, binDir, "kubectl"),
		filepath.Join(dir, binDir, "helm"),
		filepath.Join(dir, binDir),
		filepath.Join(dir, stateFile),
	}
}

func writeState(dir string, s state) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+stateFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, stateFile))
}

// readState reads a state directory, refusing anything that is not one.
func readState(dir string) (state, error) {
	if !filepath.IsAbs(dir) {
		return state{}, fmt.Errorf("%s: the state directory must be an absolute path", dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return state{}, fmt.Errorf("%s is not a dev-cluster state directory (no %s): nothing to do", dir, stateFile)
	}
	if err != nil {
		return state{}, err
	}
	var s state
	if err := json.Unmarshal(b, &s); err != nil || s.Kind != stateKind {
		return state{}, fmt.Errorf("%s/%s is not a dev-cluster state file (kind %q); not touching anything", dir, stateFile, s.Kind)
	}
	if s.PID <= 0 || s.Start == "" {
		return state{}, fmt.Errorf("%s/%s names no process; not touching anything", dir, stateFile)
	}
	return s, nil
}

// sweep is the harness's sweep of clusters whose owner is gone (a variable
// for the tests, which must not sweep the machine's).
var sweep = cluster.SweepStale

// alive says whether the state's process is still the one that wrote it.
func (s state) alive() bool {
	return cluster.ProcessStart(s.PID) == s.Start
}

// removeOwn removes the files `up` wrote, then the directory if that left
// it empty; the kubeconfig only if it is still the one named in the state.
func removeOwn(dir string, s state) {
	if s.Kubeconfig != "" {
		_ = os.Remove(s.Kubeconfig)
	}
	for _, f := range ownFiles(dir) {
		_ = os.Remove(f)
	}
	_ = os.Remove(dir) // only if empty
}

// down stops the dev cluster recorded in dir: SIGTERM to its process, which
// tears everything down by PID (the harness's Stop), then waits until it
// has exited. If the process is already gone, the harness's sweep removes
// what it left.
func down(dir string, logf func(string, ...any)) error {
	s, err := readState(dir)
	if err != nil {
		return err
	}
	if !s.alive() {
		logf("the dev cluster's process %d is gone; sweeping what it left", s.PID)
		sweep(logf)
		removeOwn(dir, s)
		return nil
	}
	logf("stopping the dev cluster (process %d, namespace %s)", s.PID, s.NetNS)
	if err := signalAndWait(s, syscall.SIGTERM, 5*time.Minute); err != nil {
		return err
	}
	removeOwn(dir, s) // the process removes them itself; this catches a race
	logf("dev cluster stopped")
	return nil
}

// stopConsumer asks the dev cluster's process to stop its live consumer.
func stopConsumer(dir string) error {
	s, err := readState(dir)
	if err != nil {
		return err
	}
	if !s.alive() {
		return fmt.Errorf("the dev cluster's process %d is gone", s.PID)
	}
	return syscall.Kill(s.PID, syscall.SIGUSR1)
}

// signalAndWait signals the state's process and waits for it to exit,
// through a pidfd: no polling, and no mistaking a reused PID for it.
func signalAndWait(s state, sig syscall.Signal, timeout time.Duration) error {
	fd, err := unix.PidfdOpen(s.PID, 0)
	if err != nil {
		return fmt.Errorf("pidfd of %d: %w", s.PID, err)
	}
	defer unix.Close(fd)
	// The PID may have been reused between reading the state and opening
	// the pidfd: check again now that the pidfd pins the process.
	if !s.alive() {
		return nil
	}
	if err := unix.PidfdSendSignal(fd, sig, nil, 0); err != nil {
		return fmt.Errorf("signal %d: %w", s.PID, err)
	}
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("process %d has not exited after %s", s.PID, timeout)
		}
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left.Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n > 0 {
			return nil // readable: the process has exited
		}
	}
}
