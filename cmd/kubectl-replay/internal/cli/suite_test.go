package cli_test

// The plugin against envtest (a real kube-apiserver and etcd) with the
// launcher running as its own RBAC-bound user, the way launcher's own suite
// runs it (launcher/testutil). Envtest has no kubelet and no Job
// controller: the tests play a runner Job's pod and its result.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"go.uber.org/zap/zapcore"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/cli"
	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/exit"
	"github.com/kafka-replay/kafka-replay/launcher"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

const (
	launcherUser = "kafka-replay-launcher"
	// operator may do everything the workflow needs; viewer only reads;
	// nobody has no rights at all. The tests impersonate them with
	// kubectl's own --as.
	operator = "alice@example.com"
	viewer   = "viewer@example.com"
	nobody   = "nobody@example.com"
)

var (
	envOnce    sync.Once
	envErr     error
	testEnv    *envtest.Environment
	launchCfg  *rest.Config
	k8s        client.Client // admin: plays the Job controller and the kubelet
	kubeconfig string        // admin's, for the plugin (which impersonates with --as)
	nsCounter  int
	nsMu       sync.Mutex
)

func TestMain(m *testing.M) {
	code := m.Run()
	if testEnv != nil {
		_ = testEnv.Stop()
	}
	if kubeconfig != "" {
		_ = os.RemoveAll(filepath.Dir(kubeconfig))
	}
	os.Exit(code)
}

func root() string { return filepath.Join("..", "..", "..", "..") }

// env starts the shared control plane once, or skips without one.
func env(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("envtest: skipped in -short mode")
	}
	dir := testutil.AssetsDir()
	if dir == "" {
		t.Skip("envtest: no kube-apiserver/etcd; run `make envtest-assets` or set KUBEBUILDER_ASSETS")
	}
	envOnce.Do(func() { envErr = startEnv(dir) })
	if envErr != nil {
		t.Fatalf("envtest: %v", envErr)
	}
}

func startEnv(dir string) error {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	testEnv = &envtest.Environment{
		BinaryAssetsDirectory: dir,
		CRDDirectoryPaths:     []string{filepath.Join(root(), "charts", "kafka-replay", "crds")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := testEnv.Start()
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 500, 1000
	if k8s, err = client.New(cfg, client.Options{Scheme: launcher.NewScheme()}); err != nil {
		return err
	}
	ctx := context.Background()
	lu, err := testEnv.AddUser(envtest.User{Name: launcherUser}, cfg)
	if err != nil {
		return err
	}
	launchCfg = lu.Config()
	launchCfg.QPS, launchCfg.Burst = 500, 1000
	if err := testutil.ApplyLauncherRBAC(ctx, k8s, filepath.Join(root(), "charts", "kafka-replay", "files", "rbac", "role.yaml"), launcherUser); err != nil {
		return err
	}
	admin, err := testEnv.AddUser(envtest.User{Name: "plugin-admin", Groups: []string{"system:masters"}}, cfg)
	if err != nil {
		return err
	}
	kc, err := admin.KubeConfig()
	if err != nil {
		return err
	}
	d, err := os.MkdirTemp("", "kubectl-replay-envtest-")
	if err != nil {
		return err
	}
	kubeconfig = filepath.Join(d, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return err
	}
	return grant(ctx)
}

// grant binds the operator and the viewer: the operator as the chart's
// docs ask (create, patch and read requests; read records and Jobs), the
// viewer read-only.
func grant(ctx context.Context) error {
	read := []string{"get", "list", "watch"}
	roles := map[string][]rbacv1.PolicyRule{
		operator: {
			{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"replayrequests"}, Verbs: append([]string{"create", "patch", "update", "approve"}, read...)},
			{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"replayrecords"}, Verbs: read},
			{APIGroups: []string{batchv1.GroupName}, Resources: []string{"jobs"}, Verbs: read},
		},
		viewer: {
			{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"replayrequests", "replayrecords"}, Verbs: read},
			{APIGroups: []string{batchv1.GroupName}, Resources: []string{"jobs"}, Verbs: read},
		},
	}
	for user, rules := range roles {
		name := "plugin-test-" + strings.Split(user, "@")[0]
		if err := k8s.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}); err != nil {
			return err
		}
		if err := k8s.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		}); err != nil {
			return err
		}
	}
	return nil
}

func newNamespace(t testing.TB) string {
	t.Helper()
	nsMu.Lock()
	nsCounter++
	name := fmt.Sprintf("p%d-%s", nsCounter, strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")))
	nsMu.Unlock()
	if len(name) > 50 {
		name = strings.TrimRight(name[:50], "-")
	}
	name = strings.ReplaceAll(name, "_", "-")
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

// startLauncher runs the launcher for the test, watching only ns, with
// logs standing in for the runner pods' logs.
func startLauncher(t testing.TB, ns string, logs *testutil.RunnerLogs) {
	t.Helper()
	opts := launcher.DefaultOptions()
	opts.RunnerImage = "kafka-replay/runner:test"
	opts.Logs = logs
	opts.PodResultGrace = 2 * time.Second
	opts.HistoryLimit = 0
	opts.WatchNamespaces = []string{ns}
	var log testutil.SyncBuffer
	m, err := testutil.StartManager(launchCfg, ctrl.Options{
		Scheme: launcher.NewScheme(),
		Cache:  launcher.CacheOptions(opts.WatchNamespaces...),
		Logger: zap.New(zap.WriteTo(&log), zap.Level(zapcore.InfoLevel)),
	}, func(ctx context.Context, mgr ctrl.Manager) error { return launcher.Setup(ctx, mgr, opts, 2) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Stop(30 * time.Second); err != nil {
			t.Errorf("launcher: %v", err)
		}
		if t.Failed() {
			t.Logf("the launcher's log:\n%s", log.String())
		}
	})
}

// result is what one invocation of the plugin did.
type result struct {
	code        exit.Code
	out, errOut string
}

// plugin runs `kubectl replay args...` in-process against envtest as user.
func plugin(t testing.TB, ns, user string, args ...string) result {
	t.Helper()
	return pluginCtx(context.Background(), t, ns, user, args...)
}

// pluginCtx is plugin until ctx ends, as a Ctrl-C ends it.
func pluginCtx(ctx context.Context, t testing.TB, ns, user string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	all := append(append([]string{}, args...), "--kubeconfig", kubeconfig, "--namespace", ns)
	if user != "" {
		all = append(all, "--as", user)
	}
	code := cli.Run(ctx, all, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return result{code: code, out: out.String(), errOut: errOut.String()}
}

// eventually retries f until it returns nil or the timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func getRR(t testing.TB, ns, name string) *v1alpha1.ReplayRequest {
	t.Helper()
	var rr v1alpha1.ReplayRequest
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &rr); err != nil {
		t.Fatalf("get request %s: %v", name, err)
	}
	return &rr
}

// waitJob waits for the launcher to create the request's Job.
func waitJob(t testing.TB, ns, name string) *batchv1.Job {
	t.Helper()
	var job batchv1.Job
	eventually(t, 30*time.Second, "Job of "+name, func() error {
		var rr v1alpha1.ReplayRequest
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &rr); err != nil {
			return err
		}
		if rr.Status.JobName == "" {
			return fmt.Errorf("no jobName; status %+v", rr.Status)
		}
		return k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: rr.Status.JobName}, &job)
	})
	return &job
}

// runJob plays the runner Job's one attempt ending with r, and the Job
// controller finishing it.
func runJob(t testing.TB, logs *testutil.RunnerLogs, job *batchv1.Job, r *report.Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := testutil.Attempt(ctx, k8s, logs, job, job.Name+"-0", int32(r.ExitCode), r, time.Now()); err != nil {
		t.Fatal(err)
	}
	fail := ""
	if r.ExitCode != report.ExitOK {
		fail = "PodFailurePolicy"
	}
	if err := testutil.FinishJob(ctx, k8s, job, fail); err != nil {
		t.Fatal(err)
	}
}

// runResult is a runner result of group over orders' partitions with
// these deltas, as the runner reports them (log 0..2000, prev 1000).
func runResult(group string, code report.ExitCode, deltas ...int64) *report.Result {
	r := testutil.Result(group, code, deltas...)
	r.Target = report.Target{Given: "shift:-100", Resolved: "shift:-100"}
	return r
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func keyOf(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }
