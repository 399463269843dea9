// Package cluster runs a real single-node Kubernetes cluster for end-to-end
// tests and the full demo: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, containerd with runc and the CNI bridge, the kubelet and
// kube-proxy, all inside a network namespace it creates and removes.
//
// The control-plane and node binaries are built from the Go module proxy
// once (test/tools/build.sh) and cached by version; containerd, runc and the
// CNI plugins come from Debian's packages. Images never come from a
// registry: ImportImage loads archives into the cluster's containerd.
//
// Everything is torn down by PID, whatever happens: Stop (also registered
// with t.Cleanup by New), a signal handler for SIGINT/SIGTERM/SIGHUP, and,
// if the harness was killed outright, a sweep at the next Start of every
// cluster whose owner process is gone.
//
// It needs root (namespaces, mounts, containers), and this kind of machine's
// settings (cgroup v1, cgroupfs, no CAP_SYS_RESOURCE): see
// ../shared/notes/real-components.md.
package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/test/cachedir"
)

// KubeVersion is the Kubernetes version the binaries are built at; it must
// match test/tools/kube/go.mod.
const KubeVersion = "v1.37.2"

// Binaries the cluster runs, built by test/tools/build.sh.
var kubeBinaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kubectl", "kube-proxy"}

// Options configure a cluster. The zero value works.
type Options struct {
	// BinDir holds the Kubernetes and etcd binaries. Default: $KUBE_ASSETS,
	// else kube-<KubeVersion> under the cache root (test/cachedir). Missing binaries
	// are built there first (minutes, once).
	BinDir string
	// Dir is where the state directory is made (os.TempDir() by default).
	// The state directory itself is always new and uniquely named
	// (kafka-replay-cluster-*): teardown selects processes and mounts by
	// it, so it must never be a directory anything else uses.
	Dir string
	// NodeIP is the node's address inside the namespace (10.200.0.1). It
	// exists nowhere else.
	NodeIP string
	// PodCIDR (10.244.0.0/24) and ServiceCIDR (10.96.0.0/24).
	PodCIDR, ServiceCIDR string
	// NodeName (kafka-replay-e2e).
	NodeName string
	// NoKubeProxy leaves kube-proxy out; pods then cannot reach the API
	// through the kubernetes Service.
	NoKubeProxy bool
	// Scheme for Client (client-go's scheme by default).
	Scheme *runtime.Scheme
	// Logf reports progress (log.Printf by default).
	Logf func(format string, args ...any)
	// KeepDir keeps the state directory (logs, configs) after Stop.
	KeepDir bool
	// CleanSignalExit makes the process exit 0, not 128+signal, once the
	// harness has torn the cluster down on SIGINT, SIGTERM or SIGHUP: for
	// a process whose normal end is a signal (make dev-cluster, stopped by
	// ^C or make dev-cluster-down), so that make does not report the clean
	// teardown as "Error 143".
	CleanSignalExit bool
}

// Cluster is a running single-node cluster.
type Cluster struct {
	opts   Options
	dir    string
	binDir string
	ns     NetNS
	nodeIP string
	logf   func(string, ...any)

	mu       sync.Mutex
	procs    []*proc
	stopped  bool
	stopDone chan struct{} // closed when Stop has finished
	stopErr  error
	restCfg  *rest.Config
	crClient client.Client

	containerdSock string
	pauseImage     string
}

// New starts a cluster for a test and stops it when the test ends. It
// fails the test if the cluster does not come up.
func New(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	c, err := Start(ctx, opts)
	if c != nil {
		t.Cleanup(func() {
			if t.Failed() {
				c.DumpLogs(40)
			}
			if err := c.Stop(); err != nil {
				t.Errorf("stop cluster: %v", err)
			}
		})
	}
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	return c
}

// Start brings a cluster up and waits until its node is Ready and the
// default service account exists. On error, whatever was started has been
// stopped again; the returned cluster (if any) is only for logs.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	t0 := time.Now()
	if opts.Logf == nil {
		opts.Logf = log.Printf
	}
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&opts.NodeIP, "10.200.0.1")
	def(&opts.PodCIDR, "10.244.0.0/24")
	def(&opts.ServiceCIDR, "10.96.0.0/24")
	def(&opts.NodeName, "kafka-replay-e2e")
	if opts.Scheme == nil {
		opts.Scheme = clientgoscheme.Scheme
	}
	logf := func(format string, args ...any) {
		opts.Logf("cluster: "+format, args...)
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("a real cluster needs root (network namespaces, mounts, containers)")
	}
	if err := checkHostTools(); err != nil {
		return nil, err
	}

	// Leftovers of a harness that was killed before it could clean up.
	sweepStale(logf)

	binDir, err := ensureBinaries(ctx, opts.BinDir, logf)
	if err != nil {
		return nil, err
	}

	dir, err := os.MkdirTemp(opts.Dir, stateDirPrefix)
	if err != nil {
		return nil, err
	}
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	c = &Cluster{
		opts: opts, dir: dir, binDir: binDir, nodeIP: opts.NodeIP, logf: logf,
		ns:             NetNS{Name: "kr-e2e-" + hex.EncodeToString(suffix)},
		containerdSock: filepath.Join(dir, "run", "containerd.sock"),
		stopDone:       make(chan struct{}),
		pauseImage:     "localhost/kafka-replay-pause:1",
	}
	for _, d := range []string{"logs", "run", "etc", "images", "pki"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return c, err
		}
	}
	if err := register(c); err != nil {
		return c, err
	}
	track(c)
	defer func() {
		if err != nil {
			c.DumpLogs(30)
			if serr := c.Stop(); serr != nil {
				logf("cleanup after failed start: %v", serr)
			}
		}
	}()

	logf("state in %s; network namespace %s, node IP %s", dir, c.ns.Name, c.nodeIP)
	if c.ns, err = createNetNS(ctx, c.ns.Name, c.nodeIP); err != nil {
		return c, err
	}

	svcIP, err := firstIP(opts.ServiceCIDR)
	if err != nil {
		return c, err
	}
	if _, err := newPKI(filepath.Join(dir, "pki"), opts.NodeName, net.ParseIP(c.nodeIP), svcIP); err != nil {
		return c, fmt.Errorf("certificates: %w", err)
	}
	runc, err := exec.LookPath("runc")
	if err != nil {
		return c, err
	}
	vals := configValues{
		Dir: dir, Socket: c.containerdSock, PauseImage: c.pauseImage, Runc: runc, CNIBin: cniBinDir,
		Bridge: "kr-cni0", NodeIP: c.nodeIP, NodeName: opts.NodeName, PodCIDR: opts.PodCIDR, ServiceCIDR: opts.ServiceCIDR,
		Server: "https://" + net.JoinHostPort(c.nodeIP, "6443"),
	}
	if err := writeConfigs(filepath.Join(dir, "etc"), vals); err != nil {
		return c, fmt.Errorf("configs: %w", err)
	}
	logf("certificates and configs written (%s)", since(t0))

	pauseTar := filepath.Join(dir, "images", "pause.tar")
	if err := BuildGoImage(ctx, "github.com/kafka-replay/kafka-replay/test/cluster/internal/pause", c.pauseImage, pauseTar); err != nil {
		return c, fmt.Errorf("pause image: %w", err)
	}

	// containerd first: the kubelet needs it, and images import meanwhile.
	if _, err := c.startProc("containerd", "containerd", "--config", filepath.Join(dir, "etc", "containerd.toml")); err != nil {
		return c, err
	}
	if err := c.waitFor(ctx, "containerd", 30*time.Second, func(ctx context.Context) error {
		return c.ctr(ctx, "version")
	}); err != nil {
		return c, err
	}
	if err := c.ImportImage(ctx, pauseTar); err != nil {
		return c, err
	}

	etc, pki := filepath.Join(dir, "etc"), filepath.Join(dir, "pki")
	if _, err := c.startProc("etcd", filepath.Join(binDir, "etcd"),
		"--name=default", "--data-dir="+filepath.Join(dir, "etcd-data"),
		"--listen-client-urls=http://127.0.0.1:2379", "--advertise-client-urls=http://127.0.0.1:2379",
		"--listen-peer-urls=http://127.0.0.1:2380", "--initial-advertise-peer-urls=http://127.0.0.1:2380",
		"--initial-cluster=default=http://127.0.0.1:2380", "--listen-metrics-urls=http://127.0.0.1:2381",
		// Test data: durability buys nothing and fsync costs seconds.
		"--unsafe-no-fsync", "--quota-backend-bytes=2147483648", "--log-level=warn"); err != nil {
		return c, err
	}
	if _, err := c.startProc("kube-apiserver", filepath.Join(binDir, "kube-apiserver"),
		// On the node IP, not loopback: kube-proxy sends the kubernetes
		// Service's traffic from pods to the advertised address.
		"--bind-address="+c.nodeIP, "--secure-port=6443", "--advertise-address="+c.nodeIP,
		"--etcd-servers=http://127.0.0.1:2379",
		"--client-ca-file="+pki+"/ca.crt", "--tls-cert-file="+pki+"/apiserver.crt", "--tls-private-key-file="+pki+"/apiserver.key",
		"--kubelet-client-certificate="+pki+"/apiserver-kubelet-client.crt", "--kubelet-client-key="+pki+"/apiserver-kubelet-client.key",
		"--kubelet-preferred-address-types=InternalIP",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+pki+"/sa.pub", "--service-account-signing-key-file="+pki+"/sa.key",
		"--service-cluster-ip-range="+opts.ServiceCIDR, "--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction", "--allow-privileged=true", "--profiling=false"); err != nil {
		return c, err
	}
	if c.restCfg, err = c.buildRestConfig(); err != nil {
		return c, err
	}
	if err := c.waitFor(ctx, "kube-apiserver /readyz", 3*time.Minute, c.readyz); err != nil {
		return c, err
	}

	if _, err := c.startProc("kube-controller-manager", filepath.Join(binDir, "kube-controller-manager"),
		"--kubeconfig="+etc+"/kube-controller-manager.kubeconfig",
		"--authentication-kubeconfig="+etc+"/kube-controller-manager.kubeconfig",
		"--authorization-kubeconfig="+etc+"/kube-controller-manager.kubeconfig",
		"--bind-address=127.0.0.1", "--secure-port=10257", "--leader-elect=false",
		"--service-account-private-key-file="+pki+"/sa.key", "--root-ca-file="+pki+"/ca.crt",
		"--use-service-account-credentials=true",
		"--cluster-signing-cert-file="+pki+"/ca.crt", "--cluster-signing-key-file="+pki+"/ca.key",
		"--controllers=*", "--profiling=false"); err != nil {
		return c, err
	}
	if _, err := c.startProc("kube-scheduler", filepath.Join(binDir, "kube-scheduler"),
		"--kubeconfig="+etc+"/kube-scheduler.kubeconfig",
		"--authentication-kubeconfig="+etc+"/kube-scheduler.kubeconfig",
		"--authorization-kubeconfig="+etc+"/kube-scheduler.kubeconfig",
		"--bind-address=127.0.0.1", "--secure-port=10259", "--leader-elect=false", "--profiling=false"); err != nil {
		return c, err
	}
	if _, err := c.startProc("kubelet", filepath.Join(binDir, "kubelet"),
		"--config="+etc+"/kubelet.yaml", "--kubeconfig="+etc+"/kubelet.kubeconfig",
		"--root-dir="+filepath.Join(dir, "kubelet"), "--cert-dir="+filepath.Join(dir, "kubelet", "pki"),
		"--node-ip="+c.nodeIP, "--hostname-override="+opts.NodeName, "--v=1",
		// The default -999 needs CAP_SYS_RESOURCE, which this machine lacks.
		"--oom-score-adj=0"); err != nil {
		return c, err
	}
	if !opts.NoKubeProxy {
		if _, err := c.startProc("kube-proxy", filepath.Join(binDir, "kube-proxy"), "--config="+etc+"/kube-proxy.yaml"); err != nil {
			return c, err
		}
	}

	cl, err := c.Client()
	if err != nil {
		return c, err
	}
	if err := c.waitFor(ctx, "node "+opts.NodeName+" Ready", 3*time.Minute, func(ctx context.Context) error {
		var node corev1.Node
		if err := cl.Get(ctx, client.ObjectKey{Name: opts.NodeName}, &node); err != nil {
			return err
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return errors.New("node not Ready yet")
	}); err != nil {
		return c, err
	}
	if err := c.waitFor(ctx, "default service account", time.Minute, func(ctx context.Context) error {
		return cl.Get(ctx, client.ObjectKey{Namespace: "default", Name: "default"}, &corev1.ServiceAccount{})
	}); err != nil {
		return c, err
	}
	logf("up in %s: node %s Ready at %s; kubeconfig %s", since(t0), opts.NodeName, c.nodeIP, c.Kubeconfig())
	return c, nil
}

// NetNS is the cluster's network namespace.
func (c *Cluster) NetNS() NetNS { return c.ns }

// NodeIP is the node's address, reachable from pods and from NetNS.
func (c *Cluster) NodeIP() string { return c.nodeIP }

// Dir is the state directory (logs under Dir()/logs).
func (c *Cluster) Dir() string { return c.dir }

// BinDir holds kubectl and the other Kubernetes binaries.
func (c *Cluster) BinDir() string { return c.binDir }

// Kubeconfig is the path of an admin (system:masters) kubeconfig. Its
// server address exists only inside NetNS: use it from Command.
func (c *Cluster) Kubeconfig() string { return filepath.Join(c.dir, "etc", "admin.kubeconfig") }

// RESTConfig is an admin config whose connections are made inside the
// namespace, usable from the test process.
func (c *Cluster) RESTConfig() *rest.Config { return rest.CopyConfig(c.restCfg) }

// Client is a controller-runtime client (admin) for the test process.
func (c *Cluster) Client() (client.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crClient != nil {
		return c.crClient, nil
	}
	if c.restCfg == nil {
		return nil, errors.New("cluster has no API server yet")
	}
	cl, err := client.New(rest.CopyConfig(c.restCfg), client.Options{Scheme: c.opts.Scheme})
	if err != nil {
		return nil, err
	}
	c.crClient = cl
	return cl, nil
}

// Command runs name inside the namespace with KUBECONFIG set and the
// cluster's binaries (kubectl) first in PATH.
func (c *Cluster) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := c.ns.Command(ctx, name, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig(), "PATH="+c.binDir+":"+os.Getenv("PATH"))
	return cmd
}

// Kubectl runs kubectl in the namespace and returns its combined output.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) (string, error) {
	out, err := c.Command(ctx, filepath.Join(c.binDir, "kubectl"), args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// ImportImage loads an image archive (OCI, or docker-archive as `podman
// save` writes it) into the cluster's containerd, where pods with
// imagePullPolicy IfNotPresent or Never find it.
func (c *Cluster) ImportImage(ctx context.Context, archivePath string) error {
	t0 := time.Now()
	if err := c.ctr(ctx, "images", "import", archivePath); err != nil {
		return fmt.Errorf("import %s: %w", archivePath, err)
	}
	c.logf("imported %s (%s)", filepath.Base(archivePath), since(t0))
	return nil
}

// TagImage gives an image the node holds another name too (ctr images
// tag), for a pod spec that names it so: nothing is pulled.
func (c *Cluster) TagImage(ctx context.Context, src, dst string) error {
	if err := c.ctr(ctx, "images", "tag", "--force", src, dst); err != nil {
		return fmt.Errorf("tag %s as %s: %w", src, dst, err)
	}
	return nil
}

func (c *Cluster) ctr(ctx context.Context, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ctr", append([]string{"--address", c.containerdSock, "--namespace", "k8s.io"}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (c *Cluster) buildRestConfig() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig())
	if err != nil {
		return nil, err
	}
	cfg.Dial = c.ns.DialContext
	cfg.QPS, cfg.Burst = 100, 200
	return cfg, nil
}

func (c *Cluster) readyz(ctx context.Context) error {
	rc, err := rest.HTTPClientFor(c.restCfg)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.restCfg.Host+"/readyz", nil)
	if err != nil {
		return err
	}
	resp, err := rc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("readyz: %s", resp.Status)
	}
	return nil
}

// waitFor polls check until it passes, a component exits, or timeout.
func (c *Cluster) waitFor(ctx context.Context, what string, timeout time.Duration, check func(context.Context) error) error {
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		last = check(cctx)
		ccancel()
		if last == nil {
			c.logf("ready: %s (%s)", what, since(t0))
			return nil
		}
		var sw stopWaiting
		if errors.As(last, &sw) {
			return fmt.Errorf("waiting for %s: %w", what, sw.err)
		}
		c.mu.Lock()
		procs := append([]*proc(nil), c.procs...)
		c.mu.Unlock()
		for _, p := range procs {
			if done, err := p.exited(); done {
				if err == nil {
					err = errors.New("exit status 0")
				}
				return fmt.Errorf("waiting for %s: %s exited (%w); see %s", what, p.name, err, filepath.Join(c.dir, "logs", p.name+".log"))
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last: %w)", what, ctx.Err(), last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// stopWaiting, returned by a waitFor check, ends the wait at once: what is
// awaited cannot happen any more.
type stopWaiting struct{ err error }

func (s stopWaiting) Error() string { return s.err.Error() }
func (s stopWaiting) Unwrap() error { return s.err }

// DumpLogs writes the last lines of every component's log to Logf.
func (c *Cluster) DumpLogs(lines int) {
	entries, _ := os.ReadDir(filepath.Join(c.dir, "logs"))
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(c.dir, "logs", e.Name()))
		if err != nil || len(b) == 0 {
			continue
		}
		ls := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		if len(ls) > lines {
			ls = ls[len(ls)-lines:]
		}
		c.logf("--- last %d lines of %s:\n%s", len(ls), e.Name(), strings.Join(ls, "\n"))
	}
}

func checkHostTools() error {
	var missing []string
	for _, t := range []string{"ip", "nsenter", "containerd", "containerd-shim-runc-v2", "ctr", "runc", "iptables", "conntrack", "go"} {
		if _, err := exec.LookPath(t); err != nil {
			missing = append(missing, t)
		}
	}
	if _, err := os.Stat(filepath.Join(cniBinDir, "bridge")); err != nil {
		missing = append(missing, cniBinDir+"/bridge")
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %s: apt-get install -y containerd runc containernetworking-plugins conntrack iptables iproute2 util-linux (see .ci/run)", strings.Join(missing, ", "))
	}
	return nil
}

// cniBinDir is where Debian's containernetworking-plugins installs.
const cniBinDir = "/usr/lib/cni"

// ensureBinaries returns the binary directory, building what is missing.
func ensureBinaries(ctx context.Context, dir string, logf func(string, ...any)) (string, error) {
	if dir == "" {
		dir = os.Getenv("KUBE_ASSETS")
	}
	if dir == "" {
		dir = cachedir.Path("kube-" + KubeVersion)
	}
	var missing []string
	for _, b := range kubeBinaries {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			missing = append(missing, b)
		}
	}
	if len(missing) == 0 {
		return dir, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	t0 := time.Now()
	logf("building %s %s into %s (first run only; several minutes)...", strings.Join(missing, ", "), KubeVersion, dir)
	cmd := exec.CommandContext(ctx, filepath.Join(root, "test", "tools", "build.sh"), kubeBinaries...)
	cmd.Env = append(os.Environ(), "KUBE_VERSION="+KubeVersion, "KUBE_ASSETS_DIR="+dir)
	cmd.Stderr = logWriter{logf}
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build cluster binaries: %w", err)
	}
	logf("binaries built in %s", since(t0))
	return dir, nil
}

// logWriter passes a subprocess's progress lines to logf.
type logWriter struct{ logf func(string, ...any) }

func (w logWriter) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w.logf("%s", l)
	}
	return len(p), nil
}

func firstIP(cidr string) (net.IP, error) {
	_, n, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil, err
	}
	ip := n.IP.To4()
	if ip == nil {
		return nil, fmt.Errorf("%s: only IPv4 is supported", cidr)
	}
	out := make(net.IP, 4)
	copy(out, ip)
	out[3]++
	return out, nil
}

func since(t time.Time) string { return time.Since(t).Round(10 * time.Millisecond).String() }
