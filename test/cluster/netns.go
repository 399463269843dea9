package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// netnsDir is where `ip netns add` bind-mounts named network namespaces.
const netnsDir = "/var/run/netns"

// NetNS is the cluster's own network namespace. Every cluster process runs
// in it, the node IP exists only in it, and nothing in it routes anywhere
// else, so no cluster traffic can leave the machine or touch the host's
// interfaces.
//
// The test process itself stays in the host's namespace: Listen and
// DialContext create their sockets inside the namespace (a socket keeps the
// namespace it was created in), which is how in-process helpers such as the
// kfake cluster and the API client reach it.
type NetNS struct {
	Name string
}

// Path is the namespace's bind mount, for nsenter --net=PATH.
func (n NetNS) Path() string { return filepath.Join(netnsDir, n.Name) }

func createNetNS(ctx context.Context, name, nodeIP string) (NetNS, error) {
	n := NetNS{Name: name}
	steps := [][]string{
		{"netns", "add", name},
		{"-n", name, "link", "set", "lo", "up"},
		// The node IP lives on the namespace's lo: the kubelet refuses a
		// loopback node IP, and an address on lo needs no extra device.
		{"-n", name, "addr", "add", nodeIP + "/32", "dev", "lo"},
	}
	for _, args := range steps {
		if out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput(); err != nil {
			return n, fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return n, nil
}

// Do runs fn on an OS thread that has entered the namespace. Sockets fn
// creates belong to the namespace for their whole life.
func (n NetNS) Do(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		// The thread is never unlocked: its network namespace has changed,
		// and a goroutine that exits while locked makes the runtime
		// terminate the thread rather than reuse it for other goroutines.
		runtime.LockOSThread()
		fd, err := unix.Open(n.Path(), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- fmt.Errorf("open netns %s: %w", n.Name, err)
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("setns %s: %w", n.Name, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// Listen listens inside the namespace.
func (n NetNS) Listen(network, address string) (net.Listener, error) {
	var ln net.Listener
	err := n.Do(func() (err error) {
		ln, err = net.Listen(network, address)
		return err
	})
	return ln, err
}

// DialContext dials from inside the namespace.
func (n NetNS) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	var c net.Conn
	err := n.Do(func() (err error) {
		var d net.Dialer
		c, err = d.DialContext(ctx, network, address)
		return err
	})
	return c, err
}

// Command is an exec.Cmd that runs name inside the namespace. nsenter only
// switches the network namespace and then execs name, so the process's PID
// is name's own.
func (n NetNS) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "nsenter", append([]string{"--net=" + n.Path(), "--", name}, args...)...)
}

func netnsExists(name string) bool {
	_, err := os.Stat(filepath.Join(netnsDir, name))
	return err == nil
}
