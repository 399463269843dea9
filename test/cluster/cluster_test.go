package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// helperEnv makes the test binary a harness that brings a cluster up, starts
// a pod and then waits to be killed: the stale-sweep test's victim.
const helperEnv = "KAFKA_REPLAY_CLUSTER_HELPER"

// helperCleanEnv makes the helper ask for Options.CleanSignalExit, as
// make dev-cluster does.
const helperCleanEnv = "KAFKA_REPLAY_CLUSTER_HELPER_CLEAN_EXIT"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Exit(helper())
	}
	os.Exit(m.Run())
}

func helper() int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Logf: func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) },
		CleanSignalExit: os.Getenv(helperCleanEnv) == "1"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := runLongPod(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("READY %s %s\n", c.Dir(), c.NetNS().Name)
	select {} // until killed
}

func skipUnlessReal(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("real cluster: skipped under -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("real cluster needs root")
	}
}

// runLongPod starts a pod that runs until killed (the pause binary) and
// waits until it runs, so teardown has a live sandbox, container, shim,
// pod network namespace and mounts to remove.
func runLongPod(ctx context.Context, c *Cluster) error {
	cl, err := c.Client()
	if err != nil {
		return err
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "sleeper", Namespace: "default"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			Containers:                    []corev1.Container{{Name: "main", Image: c.pauseImage, ImagePullPolicy: corev1.PullNever}},
		},
	}
	if err := cl.Create(ctx, pod); err != nil {
		return err
	}
	return c.waitFor(ctx, "pod sleeper Running", 2*time.Minute, func(ctx context.Context) error {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return err
		}
		if pod.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s", pod.Status.Phase)
		}
		return nil
	})
}

// leftovers lists what a torn-down cluster must not leave behind.
func leftovers(t *testing.T, dir, netns string, bundles []bundle) []string {
	t.Helper()
	var out []string
	if netnsExists(netns) {
		out = append(out, "network namespace "+netns)
	}
	for _, b := range bundles {
		for _, pid := range []int{b.initPID, b.shimPID} {
			if pidAlive(pid, "") && (ppid(pid) == b.shimPID || pidAlive(pid, dir+"/")) {
				out = append(out, fmt.Sprintf("process %d of task %s", pid, shortID(b.id)))
			}
		}
		if b.cgroup != "" {
			if m, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup/*", b.cgroup)); len(m) > 0 {
				out = append(out, "cgroup "+strings.Join(m, " "))
			}
		}
		if b.netns != "" {
			if _, err := os.Stat(b.netns); err == nil {
				out = append(out, "pod network namespace "+b.netns)
			}
		}
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err == nil && pid != os.Getpid() && pidAlive(pid, dir+"/") {
			out = append(out, fmt.Sprintf("process %d names %s", pid, dir))
		}
	}
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	for _, line := range strings.Split(string(mi), "\n") {
		if strings.Contains(line, " "+dir+"/") || strings.Contains(line, " "+dir+" ") {
			out = append(out, "mount "+line)
		}
	}
	return out
}

// TestStopRemovesEverything: Stop with a live pod leaves no process, mount
// or namespace behind.
func TestStopRemovesEverything(t *testing.T) {
	skipUnlessReal(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Logf: t.Logf, KeepDir: true})
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(c.Dir())
	defer c.Stop() //nolint:errcheck // a second Stop is a no-op; the first is checked below
	if err := runLongPod(ctx, c); err != nil {
		c.DumpLogs(30)
		t.Fatal(err)
	}
	bundles := readBundles(c.Dir())
	if len(bundles) < 2 {
		t.Fatalf("want a sandbox and a container, found %d tasks", len(bundles))
	}
	t0 := time.Now()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Stop with a live pod: %s", time.Since(t0).Round(10*time.Millisecond))
	if l := leftovers(t, c.Dir(), c.NetNS().Name, bundles); len(l) > 0 {
		t.Fatalf("left behind:\n%s", strings.Join(l, "\n"))
	}
}

// startHelper runs the helper harness (a cluster with a live pod) in a
// child process and returns it with its state dir, namespace and tasks.
func startHelper(t *testing.T, env ...string) (*exec.Cmd, string, string, []bundle) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), helperEnv+"=1"), env...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Wait()
		t.Fatalf("helper: %v", err)
	}
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "READY" {
		t.Fatalf("helper said %q", line)
	}
	return cmd, f[1], f[2], readBundles(f[1])
}

// TestSweepAfterKill: a harness killed with SIGKILL (no cleanup at all) is
// swept by the next Start, here called directly.
func TestSweepAfterKill(t *testing.T) {
	skipUnlessReal(t)
	cmd, dir, netns, bundles := startHelper(t)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if _, err := os.Stat(filepath.Join(registryDir, netns+".json")); err != nil {
		t.Fatalf("no registry record for the killed harness: %v", err)
	}
	sweepStale(t.Logf)
	if l := leftovers(t, dir, netns, bundles); len(l) > 0 {
		t.Fatalf("left behind after the sweep:\n%s", strings.Join(l, "\n"))
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("state dir %s still there: %v", dir, err)
	}
}

// TestInterruptTearsDown: ^C (SIGINT) to a harness tears its cluster down
// completely before the process exits; nothing is left for a sweep.
func TestInterruptTearsDown(t *testing.T) {
	skipUnlessReal(t)
	cmd, dir, netns, bundles := startHelper(t)
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGINT) {
		t.Errorf("helper exit: %v, want status %d", err, 128+int(syscall.SIGINT))
	}
	assertTornDown(t, dir, netns, bundles, "SIGINT")
}

// TestCleanSignalExit: a harness with Options.CleanSignalExit, as make
// dev-cluster runs it, exits 0 once SIGTERM (what make dev-cluster-down
// sends) has torn its cluster down, so make does not end with "Error 143"
// after a clean teardown (issue 32, friction 10).
func TestCleanSignalExit(t *testing.T) {
	skipUnlessReal(t)
	cmd, dir, netns, bundles := startHelper(t, helperCleanEnv+"=1")
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("helper exit: %v, want status 0", err)
	}
	assertTornDown(t, dir, netns, bundles, "SIGTERM")
}

func assertTornDown(t *testing.T, dir, netns string, bundles []bundle, signal string) {
	t.Helper()
	if l := leftovers(t, dir, netns, bundles); len(l) > 0 {
		t.Fatalf("left behind after %s:\n%s", signal, strings.Join(l, "\n"))
	}
	if _, err := os.Stat(filepath.Join(registryDir, netns+".json")); !os.IsNotExist(err) {
		t.Errorf("registry record still there: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("state dir %s still there: %v", dir, err)
	}
}
