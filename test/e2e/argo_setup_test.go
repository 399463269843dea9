package e2e

import (
	"context"
	"encoding/json"
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

	"github.com/kafka-replay/kafka-replay/test/cluster"
)

// Argo Workflows on the e2e cluster: its full CRDs (server-side applied, as
// its own cluster install does), the real workflow-controller as a process
// with the cluster's admin kubeconfig inside the cluster's network namespace,
// and the real argoexec in an image imported into the node's containerd, so
// every workflow pod runs argoexec's init and wait containers and the
// emissary in the step's own container on the real kubelet; the docs' argo
// commands run with the real argo CLI (TestArgoDocBlocks). The binaries come
// from test/tools/argo/build.sh (Argo Workflows' module on the Go module
// proxy, built once and cached).

const (
	argoVersion = "v4.0.5" // test/tools/argo/build.sh's ARGO_VERSION
	argoModule  = "github.com/argoproj/argo-workflows/v4"
	argoNS      = "argo"
	// Images imported into the node, never pulled.
	argoexecImage = "localhost/kafka-replay-e2e-argoexec:" + argoVersion
	// A shell for the template's report steps (its notify-image parameter):
	// Debian's static busybox.
	argoShellImage = "localhost/kafka-replay-e2e-shell:1"
)

type argoEnv struct {
	*flowEnv
	sa         string // the workflows' ServiceAccount (docs/usage.md's)
	controller *exec.Cmd
	exited     chan struct{} // closed when the controller process has ended
	logPath    string
}

var (
	argo     *argoEnv
	argoErr  error
	argoOnce sync.Once
)

// needArgo returns the flow environment with Argo installed and the docs'
// WorkflowTemplate applied in namespace argo (the first caller pays: ~1 min
// with cached binaries; the first build on a machine takes several).
func needArgo(t *testing.T) *argoEnv {
	t.Helper()
	f := needFlow(t)
	argoOnce.Do(func() { argo, argoErr = setupArgo(f) })
	if argoErr != nil {
		t.Fatalf("set up Argo Workflows: %v", argoErr)
	}
	select {
	case <-argo.exited:
		t.Fatalf("workflow-controller has exited: see %s", argo.logPath)
	default:
	}
	t.Cleanup(func() {
		if t.Failed() {
			argo.dumpControllerLog(60)
		}
	})
	return argo
}

func setupArgo(f *flowEnv) (*argoEnv, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	t0 := time.Now()
	bin, err := argoBinaries(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kafka-replay-e2e-argo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	for _, im := range []struct{ ref, from, to string }{
		{argoexecImage, filepath.Join(bin, "argoexec"), "bin/argoexec"},
		{argoShellImage, "/bin/busybox", "bin/sh"},
	} {
		archive, err := podmanImage(ctx, dir, im.ref, im.from, im.to)
		if err != nil {
			return nil, err
		}
		if err := f.c.ImportImage(ctx, archive); err != nil {
			return nil, err
		}
	}

	modDir, err := goModDir(ctx, argoModule+"@"+argoVersion)
	if err != nil {
		return nil, err
	}
	crds, err := filepath.Glob(filepath.Join(modDir, "manifests", "base", "crds", "full", "argoproj.io_*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(crds) == 0 {
		return nil, fmt.Errorf("no Argo CRDs in %s", modDir)
	}
	t1 := time.Now()
	args := []string{"apply", "--server-side", "--field-manager", "kafka-replay-e2e"}
	for _, p := range crds {
		args = append(args, "-f", p)
	}
	if _, err := f.c.Kubectl(ctx, args...); err != nil {
		return nil, err
	}
	// argoproj.io_workflows.yaml defines workflows.argoproj.io.
	wait := []string{"wait", "--for=condition=Established", "--timeout=5m"}
	for _, p := range crds {
		group, plural, _ := strings.Cut(strings.TrimSuffix(filepath.Base(p), ".yaml"), "_")
		wait = append(wait, "crd/"+plural+"."+group)
	}
	if _, err := f.c.Kubectl(ctx, wait...); err != nil {
		return nil, err
	}
	log.Printf("e2e: Argo's %d full CRDs applied and established (%s)", len(crds), time.Since(t1).Round(10*time.Millisecond))

	root, err := cluster.ModuleRoot()
	if err != nil {
		return nil, err
	}
	if _, err := f.c.Kubectl(ctx, "create", "namespace", argoNS); err != nil && !strings.Contains(err.Error(), "AlreadyExists") {
		return nil, err
	}
	// The ServiceAccount, its executor Role and the WorkflowTemplate, with
	// the commands docs/usage.md gives.
	cmds, sa, err := argoDocCommands(root)
	if err != nil {
		return nil, err
	}
	for _, args := range cmds {
		for i, a := range args {
			if a == "docs/argo-workflowtemplate.yaml" {
				args[i] = filepath.Join(root, a)
			}
		}
		if _, err := f.c.Kubectl(ctx, args...); err != nil {
			return nil, fmt.Errorf("docs/usage.md's command: %w", err)
		}
	}

	// The controller's configuration: the defaults (the executor image is a
	// flag below). It refuses to start without the ConfigMap.
	if _, err := f.c.Kubectl(ctx, "-n", argoNS, "create", "configmap", "workflow-controller-configmap"); err != nil && !strings.Contains(err.Error(), "AlreadyExists") {
		return nil, err
	}

	a := &argoEnv{flowEnv: f, sa: sa, exited: make(chan struct{}), logPath: filepath.Join(f.c.Dir(), "logs", "workflow-controller.log")}
	if err := a.startController(filepath.Join(bin, "workflow-controller")); err != nil {
		return nil, err
	}
	if err := a.waitHealthy(ctx); err != nil {
		a.dumpControllerLog(40)
		a.stop()
		return nil, err
	}
	log.Printf("e2e: Argo Workflows %s controller running, executor image %s (setup %s)", argoVersion, argoexecImage, time.Since(t0).Round(10*time.Millisecond))
	return a, nil
}

// argoDocCommands reads the Argo section of docs/usage.md and returns its
// `kubectl -n argo create serviceaccount|role|rolebinding` and `kubectl -n
// argo apply -f docs/argo-workflowtemplate.yaml` commands as kubectl
// arguments (they quote nothing), and the ServiceAccount its `argo submit`
// passes. The Secret command is left out: the template's Secret is optional
// and kfake needs no credentials.
func argoDocCommands(root string) ([][]string, string, error) {
	b, err := os.ReadFile(filepath.Join(root, "docs", "usage.md"))
	if err != nil {
		return nil, "", err
	}
	text := string(b)
	start := strings.Index(text, "## 3. An Argo Workflows step")
	if start < 0 {
		return nil, "", errors.New("docs/usage.md has no Argo section")
	}
	text = text[start:]
	if end := strings.Index(text[3:], "\n## "); end >= 0 {
		text = text[:end+3]
	}
	var cmds [][]string
	sa := ""
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 4 && f[0] == "kubectl" && f[1] == "-n" && f[2] == argoNS && f[3] == "create" &&
			(f[4] == "serviceaccount" || f[4] == "role" || f[4] == "rolebinding"):
			cmds = append(cmds, f[1:])
		case len(f) == 6 && f[0] == "kubectl" && f[3] == "apply" && f[5] == "docs/argo-workflowtemplate.yaml":
			cmds = append(cmds, f[1:])
		case len(f) > 3 && f[0] == "argo" && f[3] == "submit":
			for i := range f[:len(f)-1] {
				if f[i] == "--serviceaccount" {
					sa = f[i+1]
				}
			}
		}
	}
	if len(cmds) != 4 || sa == "" {
		return nil, "", fmt.Errorf("docs/usage.md's Argo section: want the serviceaccount, role, rolebinding and apply commands and an argo submit --serviceaccount, got %q and %q", cmds, sa)
	}
	return cmds, sa, nil
}

// startController runs workflow-controller inside the cluster's network
// namespace, where the API server's address is: namespaced to argo, the
// executor image the imported argoexec (the emissary executor is Argo's
// only one), no leader election (one instance).
func (a *argoEnv) startController(bin string) error {
	if err := os.MkdirAll(filepath.Dir(a.logPath), 0o755); err != nil {
		return err
	}
	logf, err := os.Create(a.logPath)
	if err != nil {
		return err
	}
	// Not tied to a context: it runs until stop (TestMain), and the
	// cluster's teardown ends anything left in its namespace.
	cmd := a.c.Command(context.Background(), bin,
		"--kubeconfig", a.c.Kubeconfig(), "--namespace", argoNS, "--namespaced",
		"--executor-image", argoexecImage, "--executor-image-pull-policy", "IfNotPresent",
		"--loglevel", "info")
	cmd.Env = append(cmd.Env, "LEADER_ELECTION_DISABLE=true")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	a.controller = cmd
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(a.exited)
	}()
	return nil
}

// waitHealthy polls the controller's /healthz (port 6060 inside the
// namespace) until it answers 200, or fails as soon as the process exits.
func (a *argoEnv) waitHealthy(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return a.c.NetNS().DialContext(ctx, network, "127.0.0.1:6060")
		},
	}}
	var last error
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://workflow-controller/healthz", nil)
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("healthz: %s", resp.Status)
		}
		last = err
		select {
		case <-a.exited:
			return fmt.Errorf("workflow-controller exited (log: %s)", a.logPath)
		case <-ctx.Done():
			return fmt.Errorf("workflow-controller not healthy: %w (last: %w)", ctx.Err(), last)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// stop ends the controller by its PID and waits for it.
func (a *argoEnv) stop() {
	if a == nil || a.controller == nil || a.controller.Process == nil {
		return
	}
	select {
	case <-a.exited:
		return
	default:
	}
	_ = a.controller.Process.Signal(os.Interrupt)
	select {
	case <-a.exited:
	case <-time.After(30 * time.Second):
		_ = a.controller.Process.Kill()
		<-a.exited
	}
}

func (a *argoEnv) dumpControllerLog(lines int) {
	b, err := os.ReadFile(a.logPath)
	if err != nil {
		return
	}
	ls := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	log.Printf("--- last %d lines of %s:\n%s", len(ls), a.logPath, strings.Join(ls, "\n"))
}

// argoBinaries returns the directory with workflow-controller, argoexec
// and the argo CLI (TestArgoDocBlocks): $ARGO_BIN_DIR, else what
// test/tools/argo/build.sh prints (it builds them the first time, then
// finds them cached).
func argoBinaries(ctx context.Context) (string, error) {
	if d := os.Getenv("ARGO_BIN_DIR"); d != "" {
		return d, nil
	}
	root, err := cluster.ModuleRoot()
	if err != nil {
		return "", err
	}
	t0 := time.Now()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "test", "tools", "argo", "build.sh"))
	cmd.Env = append(os.Environ(), "ARGO_VERSION="+argoVersion)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("test/tools/argo/build.sh: %w", err)
	}
	dir := strings.TrimSpace(string(out))
	if d := time.Since(t0); d > 10*time.Second {
		log.Printf("e2e: Argo binaries built in %s", d.Round(time.Second))
	}
	return dir, nil
}

// podmanImage builds a single-file image with podman (FROM scratch, so
// nothing is pulled and no container runs) that holds from at /to, with
// /bin on PATH, and saves it as a docker-archive for ImportImage.
func podmanImage(ctx context.Context, dir, ref, from, to string) (string, error) {
	name := strings.NewReplacer("/", "_", ":", "_").Replace(ref)
	ctxDir := filepath.Join(dir, name)
	if err := os.MkdirAll(ctxDir, 0o755); err != nil {
		return "", err
	}
	data, err := os.ReadFile(from)
	if err != nil {
		return "", fmt.Errorf("%w (/bin/busybox: apt-get install busybox-static, as .ci/run does)", err)
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "file"), data, 0o755); err != nil {
		return "", err
	}
	containerfile := "FROM scratch\n" +
		"COPY file /" + to + "\n" +
		"ENV PATH=/bin\n" +
		`ENTRYPOINT ["/` + to + `"]` + "\n"
	if err := os.WriteFile(filepath.Join(ctxDir, "Containerfile"), []byte(containerfile), 0o644); err != nil {
		return "", err
	}
	podman := []string{}
	if d := os.Getenv("PODMAN_STORAGE_DRIVER"); d != "" {
		podman = append(podman, "--storage-driver", d)
	}
	run := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "podman", append(podman, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("podman %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := run("build", "--quiet", "-f", filepath.Join(ctxDir, "Containerfile"), "-t", ref, ctxDir); err != nil {
		return "", err
	}
	archive := filepath.Join(dir, name+".tar")
	if err := run("save", "--format", "docker-archive", "-o", archive, ref); err != nil {
		return "", err
	}
	return archive, nil
}

// goModDir downloads a module through the Go module proxy (into the module
// cache, checked against the checksum database) and returns its directory.
func goModDir(ctx context.Context, modVersion string) (string, error) {
	tmp, err := os.MkdirTemp("", "kafka-replay-gomod-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", modVersion)
	cmd.Dir = tmp // outside this module: its go.mod is not touched
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	var mod struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &mod); err != nil || jerr != nil || mod.Dir == "" {
		return "", errors.Join(fmt.Errorf("go mod download %s: %s", modVersion, mod.Error), err, jerr)
	}
	return mod.Dir, nil
}

// TestArgoDocCommands (no cluster): the commands the Argo scenarios take from
// docs/usage.md are all there.
func TestArgoDocCommands(t *testing.T) {
	root, err := cluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmds, sa, err := argoDocCommands(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cmds {
		got = append(got, strings.Join(c, " "))
	}
	t.Logf("serviceaccount %s; commands: %q", sa, got)
	if !strings.HasPrefix(got[0], "-n argo create serviceaccount "+sa) || !strings.HasSuffix(got[3], "apply -f docs/argo-workflowtemplate.yaml") {
		t.Errorf("commands %q, serviceaccount %q", got, sa)
	}
}
