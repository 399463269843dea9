package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kafka-replay/kafka-replay/test/cluster"
	"github.com/kafka-replay/kafka-replay/test/devsample"
)

// TestMain doubles as the stand-in for a running dev cluster: with
// DEV_CLUSTER_TEST_WAIT set it waits for SIGTERM, as `up` does.
func TestMain(m *testing.M) {
	if os.Getenv("DEV_CLUSTER_TEST_WAIT") != "" {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM)
		<-ch
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func noSweep(t *testing.T) *int {
	n := 0
	old := sweep
	sweep = func(func(string, ...any)) { n++ }
	t.Cleanup(func() { sweep = old })
	return &n
}

// files lists every file under dir, with its content.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		}
		return nil
	})
	return out
}

// `down` and `stop-consumer` touch nothing, and signal no one, unless the
// directory holds a dev-cluster state file naming a process.
func TestDownRefusesWhatIsNotADevClusterStateDir(t *testing.T) {
	swept := noSweep(t)
	mk := func(name string, content map[string]string) string {
		dir := filepath.Join(t.TempDir(), name)
		if err := os.MkdirAll(filepath.Join(dir, binDir), 0o755); err != nil {
			t.Fatal(err)
		}
		for f, c := range content {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	self, _ := json.Marshal(state{Kind: "something-else/v1", PID: os.Getpid(), Start: cluster.ProcessStart(os.Getpid())})
	noPID, _ := json.Marshal(state{Kind: stateKind})
	for name, dir := range map[string]string{
		"no state file":    mk("plain", map[string]string{shellFile: "#!/bin/sh\n", "kubeconfig": "x", "notes.txt": "mine"}),
		"another kind":     mk("other", map[string]string{stateFile: string(self), shellFile: "#!/bin/sh\n"}),
		"not JSON":         mk("garbage", map[string]string{stateFile: "{", shellFile: "#!/bin/sh\n"}),
		"no process named": mk("nopid", map[string]string{stateFile: string(noPID), shellFile: "#!/bin/sh\n"}),
		"a relative path":  "relative/dir",
		"a missing dir":    filepath.Join(t.TempDir(), "missing"),
	} {
		before := files(t, dir)
		if err := down(dir, t.Logf); err == nil {
			t.Errorf("%s: down went ahead", name)
		}
		if err := stopConsumer(dir); err == nil {
			t.Errorf("%s: stop-consumer went ahead", name)
		}
		if after := files(t, dir); len(after) != len(before) {
			t.Errorf("%s: files %v became %v", name, before, after)
		}
	}
	if *swept != 0 {
		t.Errorf("swept %d times for directories that are no dev cluster's", *swept)
	}
}

// With a live process, `down` sends it SIGTERM, returns once it has exited,
// and removes only the files `up` wrote.
func TestDownStopsTheRecordedProcessAndRemovesOnlyItsFiles(t *testing.T) {
	noSweep(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "DEV_CLUSTER_TEST_WAIT=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	// The helper is up once its start time can be read; its signal handler
	// may not be yet, so SIGTERM's default action (exit) is fine as well.
	start := cluster.ProcessStart(cmd.Process.Pid)
	if start == "" {
		t.Fatal("no start time for the helper")
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	for _, f := range []string{kubeconfig, filepath.Join(dir, shellFile), filepath.Join(dir, "user-notes.txt")} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, binDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/bin/true", filepath.Join(dir, binDir, "kubectl")); err != nil {
		t.Fatal(err)
	}
	if err := writeState(dir, state{Kind: stateKind, PID: cmd.Process.Pid, Start: start, Kubeconfig: kubeconfig}); err != nil {
		t.Fatal(err)
	}
	if err := down(dir, t.Logf); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		// Exit status 0 from the helper's handler, or death by SIGTERM
		// if it came before the handler was installed.
		t.Logf("the process exited: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("down returned, but the process is still running")
	}
	left := files(t, dir)
	if len(left) != 1 || left[filepath.Join(dir, "user-notes.txt")] != "x" {
		t.Errorf("left %v, want only the user's own file", left)
	}
	if _, err := os.Lstat(kubeconfig); !os.IsNotExist(err) {
		t.Errorf("the kubeconfig is still there: %v", err)
	}
}

// A state whose process is gone (killed outright): `down` sweeps what the
// harness left and removes the state; it signals nothing.
func TestDownAfterTheProcessDied(t *testing.T) {
	swept := noSweep(t)
	cmd := exec.Command("/bin/true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := writeState(dir, state{Kind: stateKind, PID: cmd.Process.Pid, Start: "1"}); err != nil {
		t.Fatal(err)
	}
	if err := down(dir, t.Logf); err != nil {
		t.Fatal(err)
	}
	if *swept != 1 {
		t.Errorf("swept %d times, want once", *swept)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the emptied state directory is still there: %v", err)
	}
}

// The shell script enters the namespace with KUBECONFIG and PATH set.
func TestShellScript(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "shell")
	// nsenter stands in as a program that prints what it got.
	fake := filepath.Join(dir, "fakebin")
	if err := os.MkdirAll(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fake, "nsenter"), []byte("#!/bin/sh\necho \"$@\"; echo \"$KUBECONFIG|$KAFKA_BOOTSTRAP|${PATH%%:*}\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte(shellScript("/var/run/netns/kr-e2e-abc", "/s/kube config", "/s/bin", "10.200.0.1:1,10.200.0.1:2")), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script, "kubectl", "get", "rr")
	cmd.Env = append(os.Environ(), "PATH="+fake+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := "--net=/var/run/netns/kr-e2e-abc -- kubectl get rr\n/s/kube config|10.200.0.1:1,10.200.0.1:2|/s/bin\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// The dev cluster installs the chart where the docs do, so that their
// commands run in it as written (issue 32, friction 3): each install command
// of the README and usage.md names the dev cluster's release and namespace.
func TestNamespaceMatchesDocs(t *testing.T) {
	install := regexp.MustCompile(`helm (?:install|upgrade) (\S+) charts/kafka-replay[^\n]*(?:\\\n[^\n]*)*?(?:--namespace|-n) (\S+)`)
	for _, doc := range []string{"../../README.md", "../../docs/usage.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		found := install.FindAllStringSubmatch(string(b), -1)
		if len(found) == 0 {
			t.Fatalf("%s: no helm install of the chart", doc)
		}
		for _, m := range found {
			if m[1] != release || m[2] != namespace {
				t.Errorf("%s installs release %s into %s; the dev cluster installs %s into %s", doc, m[1], m[2], release, namespace)
			}
		}
	}
}

// The docs' pause example runs on the dev cluster as written (issue 32,
// friction 10): the workload it names is the dev cluster's live consumer,
// a Deployment of the group it replays, and the manifest that makes it is
// YAML kubectl takes.
func TestPauseExampleMatchesTheLiveConsumer(t *testing.T) {
	b, err := os.ReadFile("../../docs/usage.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "### Pausing the consumers")
	if start < 0 {
		t.Fatal("docs/usage.md has no section Pausing the consumers")
	}
	example, _, closed := strings.Cut(doc[start:], "```\n")
	if !closed {
		t.Fatal("docs/usage.md: the section Pausing the consumers has no closed code block")
	}
	for _, want := range []string{"group: " + liveGroup, "{kind: Deployment, name: " + liveConsumer + "}"} {
		if !strings.Contains(example, want) {
			t.Errorf("the pause example does not name %q:\n%s", want, example)
		}
	}
	// A workload the dev cluster lacks would fail it (PauseFailed).
	if n := strings.Count(example, "{kind: "); n != 1 {
		t.Errorf("the pause example names %d workloads; the dev cluster has one:\n%s", n, example)
	}
	m := devsample.ConsumerManifest("10.200.0.1:9092")
	for _, want := range []string{"kind: Deployment", "name: " + liveConsumer, "namespace: " + appNamespace, "value: " + liveGroup, "fieldPath: metadata.name"} {
		if !strings.Contains(m, want) {
			t.Errorf("the consumer manifest lacks %q:\n%s", want, m)
		}
	}
	for _, doc := range strings.Split(m, "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil || obj["kind"] == nil {
			t.Errorf("not a manifest (%v):\n%s", err, doc)
		}
	}
	for _, doc := range strings.Split(devsample.ScraperManifest(), "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil || obj["kind"] == nil {
			t.Errorf("not a manifest (%v):\n%s", err, doc)
		}
	}
}

// The metrics command the banner prints is the one the README shows in a
// block the e2e runs (issue 32, friction 10: the metrics Service could not
// be reached from the dev shell), so the banner's command is proven too.
func TestReadmeShowsTheBannersMetricsCommand(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := "<!-- e2e: run -->\n```sh\n" + devsample.MetricsCommand() + "\n```\n"
	if !strings.Contains(string(b), want) {
		t.Errorf("README.md has no block marked <!-- e2e: run --> with the banner's metrics command:\n%s", want)
	}
}
