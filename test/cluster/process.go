package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is a cluster process this harness started.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has been reaped
	err  error         // Wait's result, valid after done
}

// startProc starts bin in the namespace, logging to logDir/name.log, and
// records its PID in runDir/name.pid, so a later run can stop it even if
// this process dies without cleaning up.
func (c *Cluster) startProc(name, bin string, args ...string) (*proc, error) {
	logf, err := os.OpenFile(filepath.Join(c.dir, "logs", name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	// context.Background: the cluster outlives Start's context, and Stop
	// ends every process itself, gracefully.
	cmd := c.ns.Command(context.Background(), bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "PATH="+c.binDir+":"+os.Getenv("PATH"))
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Own session: a terminal's ^C reaches only the harness, which then
		// tears down in order, rather than every component at once.
		Setsid: true,
		// Last resort if the harness is killed outright: the kernel sends
		// SIGKILL to the process. The next Start sweeps what remains
		// (containers, mounts, the namespace) from the PID files.
		Pdeathsig: syscall.SIGKILL,
	}
	if err := spawn(cmd.Start); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	if err := os.WriteFile(filepath.Join(c.dir, "run", name+".pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		return p, err
	}
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	c.logf("started %s (pid %d)", name, cmd.Process.Pid)
	return p, nil
}

// spawner runs every fork of a cluster process on one OS thread that never
// exits. Pdeathsig fires when the thread that forked the child ends, not
// the process, and the runtime does end threads: NetNS.Do leaves its thread
// locked so that it is discarded. Without this, a probe could kill etcd.
var (
	spawnOnce sync.Once
	spawnCh   chan func()
)

func spawn(start func() error) error {
	spawnOnce.Do(func() {
		spawnCh = make(chan func())
		go func() {
			runtime.LockOSThread() // for the life of the process
			for fn := range spawnCh {
				fn()
			}
		}()
	})
	errc := make(chan error, 1)
	spawnCh <- func() { errc <- start() }
	return <-errc
}

// exited reports whether p has ended (and why) without blocking.
func (p *proc) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// pidAlive reports whether pid runs (a zombie counts as gone) and, when
// mustContain is set, whether its command line contains it: a PID read from
// a file is only signalled if it still names the process that wrote it.
func pidAlive(pid int, mustContain string) bool {
	if pid <= 0 {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
		return false
	}
	if mustContain == "" {
		return true
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	return strings.Contains(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})), mustContain)
}

// ppid is pid's parent, or 0.
func ppid(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// stopPID ends pid: SIGTERM, then SIGKILL after grace. It returns once the
// process is gone. done, when not nil, closes when this process has reaped
// it (a child of ours lingers as a zombie until then).
func stopPID(pid int, verify string, grace time.Duration, done <-chan struct{}) bool {
	if !pidAlive(pid, verify) {
		return false
	}
	gone := func() bool {
		if done != nil {
			select {
			case <-done:
				return true
			default:
				return false
			}
		}
		return !pidAlive(pid, "")
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for _, step := range []struct {
		wait time.Duration
		sig  syscall.Signal
	}{{grace, syscall.SIGKILL}, {10 * time.Second, 0}} {
		deadline := time.Now().Add(step.wait)
		for !gone() && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if gone() {
			return true
		}
		if step.sig != 0 {
			_ = syscall.Kill(pid, step.sig)
		}
	}
	return true
}

func readPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}
