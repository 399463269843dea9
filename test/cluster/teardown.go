package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// registryDir lists every running cluster, so a harness killed before its
// cleanup (SIGKILL, a test binary's timeout panic) leaves enough behind for
// the next Start to sweep its processes, mounts and namespaces.
const registryDir = "/run/kafka-replay-cluster"

// stateDirPrefix starts the name of every state directory.
const stateDirPrefix = "kafka-replay-cluster-"

type record struct {
	OwnerPID   int    `json:"ownerPID"`
	OwnerStart string `json:"ownerStart"`
	Dir        string `json:"dir"`
	NetNS      string `json:"netns"`
	KeepDir    bool   `json:"keepDir"`
}

func register(c *Cluster) error {
	if err := os.MkdirAll(registryDir, 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(record{OwnerPID: os.Getpid(), OwnerStart: procStart(os.Getpid()), Dir: c.dir, NetNS: c.ns.Name, KeepDir: c.opts.KeepDir})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(registryDir, c.ns.Name+".json"), b, 0o644)
}

// procStart is pid's start time in clock ticks since boot: with the PID it
// identifies a process even after the PID is reused.
func procStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19] // field 22 of stat; fields after ")" start at field 3
}

// sweepStale tears down clusters whose owner process has gone.
func sweepStale(logf func(string, ...any)) {
	entries, _ := os.ReadDir(registryDir)
	for _, e := range entries {
		path := filepath.Join(registryDir, e.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var r record
		if json.Unmarshal(b, &r) != nil || r.NetNS == "" || r.Dir == "" {
			continue
		}
		if pidAlive(r.OwnerPID, "") && procStart(r.OwnerPID) == r.OwnerStart {
			continue // another live harness's cluster
		}
		logf("sweeping cluster %s left by dead process %d (%s)", r.NetNS, r.OwnerPID, r.Dir)
		if err := teardown(r.Dir, r.NetNS, nil, logf); err != nil {
			logf("sweep %s: %v", r.NetNS, err)
		}
		if !r.KeepDir {
			_ = os.RemoveAll(r.Dir)
		}
		_ = os.Remove(path)
	}
}

var (
	liveMu   sync.Mutex
	live     = map[*Cluster]bool{}
	sigsOnce sync.Once
)

// track registers c with the signal handler: ^C, SIGTERM or SIGHUP stop
// every live cluster before the process exits.
func track(c *Cluster) {
	liveMu.Lock()
	live[c] = true
	liveMu.Unlock()
	sigsOnce.Do(func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		go func() {
			s := <-ch
			liveMu.Lock()
			cs := make([]*Cluster, 0, len(live))
			for c := range live {
				cs = append(cs, c)
			}
			liveMu.Unlock()
			clean := len(cs) > 0
			for _, c := range cs {
				c.logf("%v: tearing down", s)
				if err := c.Stop(); err != nil || !c.opts.CleanSignalExit {
					clean = false
				}
			}
			if clean {
				os.Exit(0) // every cluster asked for it, and went cleanly
			}
			os.Exit(128 + int(s.(syscall.Signal)))
		}()
	})
}

// Stop tears the cluster down: every process it started, every container
// and shim, mounts, the pod network namespaces, the CNI bridge, KUBE-*
// iptables chains and the cluster's namespace. Calling it again is a no-op.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	if c.stopped {
		// Another caller (the signal handler, or a deferred Stop racing it)
		// is tearing down: wait for it, so that nobody returns, and perhaps
		// exits the process, half-way through.
		done := c.stopDone
		c.mu.Unlock()
		<-done
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.stopErr
	}
	c.stopped = true
	defer close(c.stopDone)
	procs := map[string]*proc{}
	for _, p := range c.procs {
		procs[p.name] = p
	}
	c.mu.Unlock()

	t0 := time.Now()
	c.logf("tearing down %s", c.ns.Name)
	err := teardown(c.dir, c.ns.Name, procs, c.logf)
	_ = os.Remove(filepath.Join(registryDir, c.ns.Name+".json"))
	liveMu.Lock()
	delete(live, c)
	liveMu.Unlock()
	if c.opts.KeepDir {
		c.logf("kept %s", c.dir)
	} else if rerr := os.RemoveAll(c.dir); rerr != nil {
		err = errors.Join(err, rerr)
	}
	c.logf("down in %s", since(t0))
	c.mu.Lock()
	c.stopErr = err
	c.mu.Unlock()
	return err
}

// bundle is one containerd task (a sandbox or a container) as its state
// directory describes it.
type bundle struct {
	id, dir     string
	initPID     int
	shimPID     int
	shimAddress string
	netns       string // sandboxes: the pod's network namespace
	cgroup      string // cgroupsPath, e.g. /k8s.io/<id>
}

func readBundles(dir string) []bundle {
	root := filepath.Join(dir, "containerd", "state", "io.containerd.runtime.v2.task", "k8s.io")
	entries, _ := os.ReadDir(root)
	var out []bundle
	for _, e := range entries {
		bd := filepath.Join(root, e.Name())
		b := bundle{id: e.Name(), dir: bd, initPID: readPID(filepath.Join(bd, "init.pid")), shimPID: readPID(filepath.Join(bd, "shim.pid"))}
		if a, err := os.ReadFile(filepath.Join(bd, "address")); err == nil {
			b.shimAddress = strings.TrimSpace(string(a))
		}
		var spec struct {
			Linux struct {
				Namespaces  []struct{ Type, Path string } `json:"namespaces"`
				CgroupsPath string                        `json:"cgroupsPath"`
			} `json:"linux"`
		}
		if cb, err := os.ReadFile(filepath.Join(bd, "config.json")); err == nil && json.Unmarshal(cb, &spec) == nil {
			b.cgroup = spec.Linux.CgroupsPath
			for _, ns := range spec.Linux.Namespaces {
				if ns.Type == "network" && strings.HasPrefix(ns.Path, netnsDir+"/cni-") {
					b.netns = ns.Path
				}
			}
		}
		out = append(out, b)
	}
	return out
}

// teardown works from the state directory alone, so it serves Stop and the
// sweep of a dead harness's cluster alike. procs, when known, are this
// process's children, which it must also reap.
func teardown(dir, nsName string, procs map[string]*proc, logf func(string, ...any)) error {
	// dir selects processes to kill and mounts to remove: only ever a
	// uniquely named state directory that Start made.
	if !filepath.IsAbs(dir) || !strings.HasPrefix(filepath.Base(filepath.Clean(dir)), stateDirPrefix) || nsName == "" {
		return fmt.Errorf("refusing to tear down state dir %q, namespace %q", dir, nsName)
	}
	dir = filepath.Clean(dir)
	var errs []error
	sock := filepath.Join(dir, "run", "containerd.sock")
	bundles := readBundles(dir) // before anything deletes them
	podNetns := map[string]bool{}
	for _, b := range bundles {
		if b.netns != "" {
			podNetns[b.netns] = true
		}
	}
	var inodes []uint64 // every namespace whose processes are all ours
	if ino, ok := nsInode(filepath.Join(netnsDir, nsName)); ok {
		inodes = append(inodes, ino)
	}
	for p := range podNetns {
		if ino, ok := nsInode(p); ok {
			inodes = append(inodes, ino)
		}
	}

	stop := func(name string, grace time.Duration) {
		var done <-chan struct{}
		pid := readPID(filepath.Join(dir, "run", name+".pid"))
		// Every component's command line names a path inside the state
		// dir; the slash keeps ...-12 from matching ...-123.
		verify := dir + "/"
		if p := procs[name]; p != nil {
			pid, done, verify = p.cmd.Process.Pid, p.done, ""
		}
		t0 := time.Now()
		if stopPID(pid, verify, grace, done) {
			logf("stopped %s (pid %d, %s)", name, pid, since(t0))
		}
	}
	// The kubelet first, so nothing restarts containers; etcd last. The
	// state is thrown away, so a graceful stop buys nothing: the API server
	// would wait out its in-cluster watches (10 s and more) for no one.
	for _, n := range []string{"kubelet", "kube-proxy", "kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"} {
		stop(n, 2*time.Second)
	}

	// Containers: SIGKILL each init process, but only while its parent is
	// the task's shim, which proves the PID is still that container.
	killed := 0
	for _, b := range bundles {
		if b.initPID > 0 && b.shimPID > 0 && pidAlive(b.initPID, "") && ppid(b.initPID) == b.shimPID {
			_ = syscall.Kill(b.initPID, syscall.SIGKILL)
			killed++
		}
	}
	if killed > 0 {
		logf("killed %d container processes", killed)
		waitGone(bundles, 5*time.Second)
	}
	// With containerd still up, delete the tasks: each shim then unmounts
	// its rootfs and exits by itself.
	if p := procs["containerd"]; (p != nil && !isDone(p)) || (p == nil && pidAlive(readPID(filepath.Join(dir, "run", "containerd.pid")), dir+"/")) {
		t0 := time.Now()
		for _, b := range bundles {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_ = exec.CommandContext(ctx, "ctr", "--address", sock, "--namespace", "k8s.io", "tasks", "delete", "--force", b.id).Run()
			cancel()
		}
		if len(bundles) > 0 {
			logf("deleted %d containerd tasks (%s)", len(bundles), since(t0))
		}
	}
	stop("containerd", 10*time.Second)
	for _, b := range bundles {
		if stopPID(b.shimPID, sock, 2*time.Second, nil) {
			logf("stopped shim %d (%s)", b.shimPID, shortID(b.id))
		}
		if a, ok := strings.CutPrefix(b.shimAddress, "unix://"); ok && strings.HasPrefix(a, "/run/containerd/s/") {
			_ = os.Remove(a)
		}
	}

	// Whatever is left: any process still in the cluster's namespace or a
	// pod's, and any whose command line names the state directory.
	if n := killLeftovers(dir, inodes); n > 0 {
		logf("killed %d leftover processes", n)
	}

	// A shim that was killed leaves its container's cgroups behind.
	if n := removeCgroups(bundles); n > 0 {
		logf("removed %d leftover container cgroups", n)
	}

	if n, err := unmountUnder(dir); err != nil {
		errs = append(errs, err)
	} else if n > 0 {
		logf("unmounted %d mounts under %s", n, dir)
	}
	for p := range podNetns {
		if out, err := exec.Command("ip", "netns", "del", filepath.Base(p)).CombinedOutput(); err != nil && netnsExists(filepath.Base(p)) {
			errs = append(errs, fmt.Errorf("ip netns del %s: %w: %s", p, err, out))
		}
	}
	if len(podNetns) > 0 {
		logf("deleted %d pod network namespaces", len(podNetns))
	}
	if netnsExists(nsName) {
		ns := NetNS{Name: nsName}
		flushKubeChains(ns)
		_ = exec.Command("ip", "-n", nsName, "link", "del", "kr-cni0").Run()
		if out, err := exec.Command("ip", "netns", "del", nsName).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("ip netns del %s: %w: %s", nsName, err, out))
		} else {
			logf("deleted network namespace %s (with its bridge and iptables chains)", nsName)
		}
	}
	return errors.Join(errs...)
}

func isDone(p *proc) bool {
	d, _ := p.exited()
	return d
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func waitGone(bundles []bundle, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		alive := false
		for _, b := range bundles {
			if b.initPID > 0 && pidAlive(b.initPID, "") && ppid(b.initPID) == b.shimPID {
				alive = true
			}
		}
		if !alive {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func nsInode(path string) (uint64, bool) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, false
	}
	return st.Ino, true
}

// killLeftovers SIGKILLs every process in one of the namespaces (by inode)
// or whose command line contains dir, and waits for them to go.
func killLeftovers(dir string, inodes []uint64) int {
	self := os.Getpid()
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || pid == 1 {
			continue
		}
		hit := pidAlive(pid, dir+"/")
		if !hit {
			var st unix.Stat_t
			if unix.Stat(fmt.Sprintf("/proc/%d/ns/net", pid), &st) == nil {
				for _, ino := range inodes {
					if st.Ino == ino && pidAlive(pid, "") {
						hit = true
					}
				}
			}
		}
		if hit {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			pids = append(pids, pid)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for pidAlive(pid, "") && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	return len(pids)
}

// unmountUnder lazily unmounts every mount point below dir, deepest first.
func unmountUnder(dir string) (int, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMount(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			points = append(points, mp)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(points)))
	n := 0
	var errs []error
	for _, mp := range points {
		if err := unix.Unmount(mp, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("umount %s: %w", mp, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// unescapeMount decodes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// flushKubeChains removes the kubelet's and kube-proxy's KUBE-* chains (and
// the rules that jump to them) inside the cluster's namespace. Deleting the
// namespace drops them too; doing it explicitly keeps a namespace that
// cannot be deleted (a process still holds it) clean.
func flushKubeChains(ns NetNS) {
	for _, ipt := range []string{"iptables", "ip6tables"} {
		for _, table := range []string{"filter", "nat", "mangle"} {
			out, err := ns.Command(context.Background(), ipt, "-w", "-t", table, "-S").Output()
			if err != nil {
				continue
			}
			var chains []string
			for _, line := range strings.Split(string(out), "\n") {
				f := splitRule(line)
				switch {
				case len(f) >= 2 && f[0] == "-N" && strings.HasPrefix(f[1], "KUBE-"):
					chains = append(chains, f[1])
				case len(f) >= 2 && f[0] == "-A" && !strings.HasPrefix(f[1], "KUBE-") && strings.Contains(line, " -j KUBE-"):
					args := append([]string{"-w", "-t", table, "-D"}, f[1:]...)
					_ = ns.Command(context.Background(), ipt, args...).Run()
				}
			}
			for _, op := range []string{"-F", "-X"} {
				for _, ch := range chains {
					_ = ns.Command(context.Background(), ipt, "-w", "-t", table, op, ch).Run()
				}
			}
		}
	}
}

// splitRule splits an `iptables -S` line into arguments, keeping quoted
// comments whole.
func splitRule(line string) []string {
	var out []string
	var cur strings.Builder
	inQuote, have := false, false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case ch == '"':
			inQuote, have = !inQuote, true
		case ch == ' ' && !inQuote:
			if have {
				out = append(out, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(ch)
			have = true
		}
	}
	if have {
		out = append(out, cur.String())
	}
	return out
}

// removeCgroups removes the (empty, now) cgroup of every task in every
// cgroup v1 hierarchy and the v2 one. A process that was just killed can
// hold its cgroup for a moment while it exits, so failures are retried
// briefly.
func removeCgroups(bundles []bundle) int {
	roots, _ := filepath.Glob("/sys/fs/cgroup/*")
	roots = append(roots, "/sys/fs/cgroup")
	var dirs []string
	for _, b := range bundles {
		cg := filepath.Clean("/" + b.cgroup)
		// Only a task's own leaf, never a shared parent such as /k8s.io.
		if b.cgroup == "" || filepath.Base(cg) != b.id {
			continue
		}
		for _, r := range roots {
			if d := filepath.Join(r, cg); dirExists(d) {
				dirs = append(dirs, d)
			}
		}
	}
	n := 0
	deadline := time.Now().Add(5 * time.Second)
	for len(dirs) > 0 {
		var busy []string
		for _, d := range dirs {
			if err := unix.Rmdir(d); err == nil || errors.Is(err, unix.ENOENT) {
				n++
			} else {
				busy = append(busy, d)
			}
		}
		dirs = busy
		if len(dirs) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return n
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
