package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/test/cachedir"
)

// What the end-to-end tests and the full demo put on the cluster: our own
// images, built from the Dockerfiles by images/build, and the Helm chart.

// Image tags images/build gives by default; the chart is pointed at them.
const (
	RunnerImage   = "localhost/kafka-replay-runner:dev"
	LauncherImage = "localhost/kafka-replay-launcher:dev"
)

// Images are image archives ready for ImportImage.
type Images struct {
	Runner, Launcher string
}

// BuildImages builds both images from Dockerfile.runner and
// Dockerfile.launcher with images/build (podman here) and saves them as
// docker-archives under outDir. With $KAFKA_REPLAY_E2E_IMAGES set to a
// directory that already holds kafka-replay-runner.tar and
// kafka-replay-launcher.tar, those are used instead.
func BuildImages(ctx context.Context, outDir string, logf func(string, ...any)) (Images, error) {
	if d := os.Getenv("KAFKA_REPLAY_E2E_IMAGES"); d != "" {
		outDir = d
		logf("images: using prebuilt archives in %s", d)
	} else {
		root, err := moduleRoot()
		if err != nil {
			return Images{}, err
		}
		t0 := time.Now()
		logf("images: building both images from the Dockerfiles (images/build; minutes the first time)...")
		cmd := exec.CommandContext(ctx, filepath.Join(root, "images", "build"), "--save", outDir)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "RUNNER_IMAGE="+RunnerImage, "LAUNCHER_IMAGE="+LauncherImage)
		cmd.Stdout = logWriter{logf}
		cmd.Stderr = logWriter{logf}
		if err := cmd.Run(); err != nil {
			return Images{}, fmt.Errorf("images/build: %w", err)
		}
		logf("images: built in %s", since(t0))
	}
	im := Images{Runner: filepath.Join(outDir, "kafka-replay-runner.tar"), Launcher: filepath.Join(outDir, "kafka-replay-launcher.tar")}
	for _, p := range []string{im.Runner, im.Launcher} {
		st, err := os.Stat(p)
		if err != nil {
			return im, err
		}
		logf("images: %s is %.1f MB", filepath.Base(p), float64(st.Size())/1e6)
	}
	return im, nil
}

// Import loads both images into the cluster.
func (c *Cluster) Import(ctx context.Context, im Images) error {
	for _, p := range []string{im.Runner, im.Launcher} {
		if err := c.ImportImage(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// BuildAndImport builds both images into a temporary directory (see
// BuildImages), imports them into the cluster and removes the archives.
func (c *Cluster) BuildAndImport(ctx context.Context, logf func(string, ...any)) error {
	dir, err := os.MkdirTemp("", "kafka-replay-images-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	im, err := BuildImages(ctx, dir, logf)
	if err != nil {
		return err
	}
	return c.Import(ctx, im)
}

// Helm finds helm: $HELM, else the Makefile's cached build
// (tools/helm-v3.22.0 under the cache root, test/cachedir), else PATH.
func Helm() (string, error) {
	if h := os.Getenv("HELM"); h != "" {
		return h, nil
	}
	p := cachedir.Path("tools", "helm-v3.22.0")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if p, err := exec.LookPath("helm"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("helm not found: run `make helm` or set HELM")
}

// InstallChart installs charts/kafka-replay as release into namespace with
// the images pointed at the local tags (pullPolicy IfNotPresent: they are
// imported, never pulled), plus extra `--set`/`--values` arguments, and
// waits for the launcher to be ready.
func (c *Cluster) InstallChart(ctx context.Context, release, namespace string, extra ...string) error {
	helm, err := Helm()
	if err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	repo := func(ref string) (string, string) {
		i := strings.LastIndex(ref, ":")
		return ref[:i], ref[i+1:]
	}
	lr, lt := repo(LauncherImage)
	rr, rt := repo(RunnerImage)
	// No --wait: helm would wait out its whole timeout on a launcher that
	// crash-loops; waitLauncher fails at once and shows why.
	args := []string{"upgrade", "--install", release, filepath.Join(root, "charts", "kafka-replay"),
		"--namespace", namespace, "--create-namespace",
		"--set", "launcher.image.repository=" + lr, "--set", "launcher.image.tag=" + lt,
		"--set", "launcher.image.pullPolicy=IfNotPresent",
		"--set", "runner.image.repository=" + rr, "--set", "runner.image.tag=" + rt,
		"--set", "runner.image.pullPolicy=IfNotPresent",
	}
	args = append(args, extra...)
	t0 := time.Now()
	cmd := c.Command(ctx, helm, args...)
	// helm keeps its cache and config under the state dir, not $HOME.
	cmd.Env = append(cmd.Env, "HELM_CACHE_HOME="+filepath.Join(c.dir, "helm", "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(c.dir, "helm", "config"), "HELM_DATA_HOME="+filepath.Join(c.dir, "helm", "data"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	if err := c.waitLauncher(ctx, namespace); err != nil {
		// What kept the launcher from becoming ready.
		diag, _ := c.Kubectl(ctx, "-n", namespace, "get", "deploy,pods,events", "-o", "wide")
		logs, _ := c.Kubectl(ctx, "-n", namespace, "logs", "-l", "app.kubernetes.io/component=launcher", "--tail=30", "--all-containers")
		prev, _ := c.Kubectl(ctx, "-n", namespace, "logs", "-l", "app.kubernetes.io/component=launcher", "--tail=30", "--all-containers", "--previous")
		return fmt.Errorf("chart installed, but the launcher is not ready: %w\n%s\nlauncher logs:\n%s\nprevious container:\n%s", err, diag, logs, prev)
	}
	c.logf("chart installed as %s in %s, launcher ready (%s)", release, namespace, since(t0))
	return nil
}

// waitLauncher waits until the launcher Deployment is available, and fails
// as soon as a launcher container crash-loops or cannot start.
func (c *Cluster) waitLauncher(ctx context.Context, namespace string) error {
	cl, err := c.Client()
	if err != nil {
		return err
	}
	sel := client.MatchingLabels{"app.kubernetes.io/component": "launcher"}
	return c.waitFor(ctx, "launcher Deployment available", 3*time.Minute, func(ctx context.Context) error {
		var pods corev1.PodList
		if err := cl.List(ctx, &pods, client.InNamespace(namespace), sel); err != nil {
			return err
		}
		for _, p := range pods.Items {
			for _, cs := range p.Status.ContainerStatuses {
				if w := cs.State.Waiting; w != nil && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
					return stopWaiting{fmt.Errorf("pod %s: %s: %s", p.Name, w.Reason, w.Message)}
				}
				if cs.RestartCount >= 2 {
					return stopWaiting{fmt.Errorf("pod %s restarted %d times", p.Name, cs.RestartCount)}
				}
			}
		}
		var deps appsv1.DeploymentList
		if err := cl.List(ctx, &deps, client.InNamespace(namespace), sel); err != nil {
			return err
		}
		if len(deps.Items) == 0 {
			return errors.New("no launcher Deployment")
		}
		for _, d := range deps.Items {
			want := int32(1)
			if d.Spec.Replicas != nil {
				want = *d.Spec.Replicas
			}
			if d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas < want || d.Status.AvailableReplicas < want {
				return fmt.Errorf("deployment %s: %d/%d available", d.Name, d.Status.AvailableReplicas, want)
			}
		}
		return nil
	})
}

// KafkaListen is a kfake.ListenFn: brokers listen on the node IP inside the
// cluster's namespace, where pods reach them (the CNI routes the node IP)
// and nothing outside the namespace can.
func (c *Cluster) KafkaListen(network, address string) (net.Listener, error) {
	_, port, err := net.SplitHostPort(address)
	if err != nil {
		port = "0"
	}
	return c.ns.Listen(network, net.JoinHostPort(c.nodeIP, port))
}

// KafkaDial is a kgo.Dialer for clients in the test process that talk to
// brokers listening inside the namespace.
func (c *Cluster) KafkaDial(ctx context.Context, network, host string) (net.Conn, error) {
	return c.ns.DialContext(ctx, network, host)
}
