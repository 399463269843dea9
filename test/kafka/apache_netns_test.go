//go:build linux

package kafkatest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/test/cluster"
)

// TestApacheInNetworkNamespace: with Host and Network, the nodes run in
// that network namespace and listen only on Host there (every listening
// socket of the namespace is theirs, on Host); clients reach them through
// the Network's dialer, as the end-to-end tests' pods reach the node IP.
func TestApacheInNetworkNamespace(t *testing.T) {
	libs := apacheLibs(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a network namespace")
	}
	const host = "10.201.0.1" // exists only inside the namespace below
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	ns := cluster.NetNS{Name: "kr-kafkatest-" + hex.EncodeToString(suffix)}
	for _, args := range [][]string{
		{"netns", "add", ns.Name},
		{"-n", ns.Name, "link", "set", "lo", "up"},
		{"-n", ns.Name, "addr", "add", host + "/32", "dev", "lo"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		if args[0] == "netns" {
			t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns.Name).Run() })
		}
	}

	// One node, as the end-to-end tests run; the 3-node clusters of the
	// other tests build their voters and listeners from Host the same way.
	const nodes = 1
	c, err := StartWith(Options{Apache: &ApacheOptions{Libs: libs, Nodes: nodes, Host: host, Network: ns}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, b := range c.Apache.Bootstrap() {
		if h, _, _ := net.SplitHostPort(b); h != host {
			t.Errorf("bootstrap %s is not on %s", b, host)
		}
	}
	// The helper client dials into the namespace: a topic, a commit and
	// its read-back go through it.
	if err := c.Seed(ctx, "t", 2, 3, time.Unix(0, 0), time.Second); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(ctx, "g", Offsets{"t": {0: 2, 1: 1}}, "m"); err != nil {
		t.Fatal(err)
	}
	got, err := c.Committed(ctx, "g")
	if err != nil || got["t"][0].Offset != 2 || got["t"][1].Offset != 1 {
		t.Fatalf("committed %v, %v", got, err)
	}

	nsIno := inode(t, "/var/run/netns/"+ns.Name)
	for _, pid := range c.Apache.PIDs() {
		if ino := inode(t, fmt.Sprintf("/proc/%d/ns/net", pid)); ino != nsIno {
			t.Errorf("node process %d is not in namespace %s", pid, ns.Name)
		}
	}
	// Two listeners per node (clients, controller), all on host. The
	// namespace holds nothing else, so its listening sockets are the
	// nodes' own.
	addrs := listening(t, c.Apache.PIDs()[0])
	if len(addrs) != 2*nodes {
		t.Errorf("the node listens on %v, want %d sockets", addrs, 2*nodes)
	}
	for _, a := range addrs {
		if h, _, _ := net.SplitHostPort(a); h != host {
			t.Errorf("a node listens on %s, which is not %s", a, host)
		}
	}
	t.Logf("in %s the node listens on %v", ns.Name, addrs)
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// listening lists the listening TCP sockets of pid's network namespace
// (/proc/PID/net/tcp and tcp6, state 0A), IPv4-mapped IPv6 addresses
// shown as IPv4.
func listening(t *testing.T, pid int) []string {
	t.Helper()
	var out []string
	for _, f := range []string{"tcp", "tcp6"} {
		fh, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Scan() // header
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) < 4 || fs[3] != "0A" {
				continue
			}
			out = append(out, procAddr(t, fs[1]))
		}
		_ = fh.Close()
	}
	sort.Strings(out)
	return out
}

// procAddr decodes /proc/net/tcp's HEXIP:HEXPORT: the address is in the
// kernel's byte order, 32 bits at a time.
func procAddr(t *testing.T, s string) string {
	t.Helper()
	h, p, ok := strings.Cut(s, ":")
	raw, err := hex.DecodeString(h)
	port, perr := strconv.ParseUint(p, 16, 16)
	if !ok || err != nil || perr != nil || len(raw)%4 != 0 {
		t.Fatalf("socket address %q", s)
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		ip[i], ip[i+1], ip[i+2], ip[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	if v4 := ip.To4(); v4 != nil {
		ip = v4
	}
	return net.JoinHostPort(ip.String(), strconv.FormatUint(port, 10))
}
