package launcher_test

// The envtest suite: a real kube-apiserver and etcd (built from the Go module
// proxy by test/tools/build.sh), the generated CRD, and the launcher running
// as a user bound to the generated RBAC role, so the role is tested too.
// Envtest has no kubelet and no Job controller: tests that need a running or
// finished Job write the Job's and pod's status the way those would.

import (
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
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"go.uber.org/zap/zapcore"

	"github.com/kafka-replay/kafka-replay/launcher"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

const launcherUser = "kafka-replay-launcher"

var (
	envOnce   sync.Once
	envErr    error
	testEnv   *envtest.Environment
	adminCfg  *rest.Config
	userCfg   *rest.Config
	userObj   *envtest.AuthenticatedUser // for a kubeconfig file (benchmark)
	k8s       client.Client              // admin: plays the user, the Job controller and the kubelet
	nsCounter int
	nsMu      sync.Mutex
)

func TestMain(m *testing.M) {
	code := m.Run()
	if testEnv != nil {
		_ = testEnv.Stop()
	}
	os.Exit(code)
}

// assetsDir finds kube-apiserver and etcd: KUBEBUILDER_ASSETS, or the cache
// that `make envtest-assets` fills.
func assetsDir() string { return testutil.AssetsDir() }

// env starts the shared control plane once, or skips the test when it cannot.
func env(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("envtest: skipped in -short mode")
	}
	dir := assetsDir()
	if dir == "" {
		t.Skip("envtest: no kube-apiserver/etcd; run `make envtest-assets` or set KUBEBUILDER_ASSETS")
	}
	envOnce.Do(func() { envErr = startEnv(dir) })
	if envErr != nil {
		t.Fatalf("envtest: %v", envErr)
	}
}

func startEnv(dir string) error {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
	testEnv = &envtest.Environment{
		BinaryAssetsDirectory: dir,
		CRDDirectoryPaths:     []string{filepath.Join("..", "charts", "kafka-replay", "crds")},
		ErrorIfCRDPathMissing: true,
	}
	var err error
	if adminCfg, err = testEnv.Start(); err != nil {
		return err
	}
	adminCfg.QPS, adminCfg.Burst = 500, 1000
	if k8s, err = client.New(adminCfg, client.Options{Scheme: launcher.NewScheme()}); err != nil {
		return err
	}
	// The launcher runs as its own user, bound to the generated role only.
	user, err := testEnv.AddUser(envtest.User{Name: launcherUser}, adminCfg)
	if err != nil {
		return err
	}
	userObj = user
	userCfg = user.Config()
	userCfg.QPS, userCfg.Burst = 500, 1000
	return applyRBAC(context.Background())
}

func zapLevel() zapcore.Level {
	if os.Getenv("LAUNCHER_TEST_VERBOSE") != "" {
		return zapcore.DebugLevel
	}
	// Errors only: reconcile conflicts are normal and noisy.
	return zapcore.ErrorLevel
}

// applyRBAC applies charts/kafka-replay/files/rbac/role.yaml as generated and
// binds it to the launcher's user (the ClusterRole cluster-wide).
func applyRBAC(ctx context.Context) error {
	return testutil.ApplyLauncherRBAC(ctx, k8s, filepath.Join("..", "charts", "kafka-replay", "files", "rbac", "role.yaml"), launcherUser)
}

// newNamespace makes a fresh namespace per test (envtest cannot delete them).
func newNamespace(t testing.TB, labels map[string]string) string {
	t.Helper()
	nsMu.Lock()
	nsCounter++
	name := fmt.Sprintf("t%d-%s", nsCounter, strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")))
	nsMu.Unlock()
	if len(name) > 50 {
		name = strings.TrimRight(name[:50], "-")
	}
	name = strings.ReplaceAll(name, "_", "-")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return name
}

// running is a launcher started for one test.
type running struct {
	cancel  context.CancelFunc
	done    chan error
	logs    *testutil.SyncBuffer
	stopped bool
}

// stop stops the launcher and waits for it, as a pod's termination would.
func (r *running) stop(t testing.TB) {
	t.Helper()
	if r.stopped {
		return
	}
	r.stopped = true
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("launcher: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("launcher did not stop; its log:\n%s", r.logs.String())
	}
}

// fakeLogs stands in for the kubelet's pods/log, which envtest lacks.
type fakeLogs struct{}

func (fakeLogs) Tail(_ context.Context, _, pod, _ string, _, _ int64) (string, error) {
	return "planning group\n" + pod + ": committed and verified\n", nil
}

func testOptions() launcher.Options {
	o := launcher.DefaultOptions()
	o.RunnerImage = "kafka-replay/runner:test"
	o.Logs = fakeLogs{}
	o.PodResultGrace = 2 * time.Second
	o.HistoryLimit = 0
	return o
}

// startLauncher runs the launcher the way cmd/launcher does (same cache
// options, same Setup), as the RBAC-bound user, until the test ends or stop.
func startLauncher(t testing.TB, opts launcher.Options, workers int) *running {
	t.Helper()
	logs := &testutil.SyncBuffer{}
	mgr, err := ctrl.NewManager(userCfg, ctrl.Options{
		Scheme:                 launcher.NewScheme(),
		Cache:                  launcher.CacheOptions(opts.WatchNamespaces...),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 zap.New(zap.WriteTo(logs), zap.Level(zapcore.Level(-2))),
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := launcher.Setup(ctx, mgr, opts, workers); err != nil {
		cancel()
		t.Fatal(err)
	}
	r := &running{cancel: cancel, done: make(chan error, 1), logs: logs}
	go func() { r.done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	t.Cleanup(func() { r.stop(t) })
	return r
}

// eventually retries f until it returns nil or the timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for {
		if err = f(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func create(t testing.TB, obj client.Object) {
	t.Helper()
	if err := k8s.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

func getRR(t testing.TB, rr *v1alpha1.ReplayRequest) *v1alpha1.ReplayRequest {
	t.Helper()
	var got v1alpha1.ReplayRequest
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(rr), &got); err != nil {
		t.Fatalf("get request: %v", err)
	}
	return &got
}

// waitJob waits until the launcher has created the request's Job and returns
// it.
func waitJob(t testing.TB, rr *v1alpha1.ReplayRequest) *batchv1.Job {
	t.Helper()
	var job batchv1.Job
	eventually(t, 20*time.Second, "Job for "+rr.Name, func() error {
		cur := getRR(t, rr)
		if cur.Status.JobName == "" {
			return fmt.Errorf("no jobName yet; status %+v", cur.Status)
		}
		return k8s.Get(context.Background(), types.NamespacedName{Namespace: rr.Namespace, Name: cur.Status.JobName}, &job)
	})
	return &job
}

// waitPhase waits for a request's phase.
func waitPhase(t testing.TB, rr *v1alpha1.ReplayRequest, phase v1alpha1.Phase) *v1alpha1.ReplayRequest {
	t.Helper()
	var cur *v1alpha1.ReplayRequest
	eventually(t, 20*time.Second, fmt.Sprintf("%s %s", rr.Name, phase), func() error {
		cur = getRR(t, rr)
		if cur.Status.Phase != phase {
			return fmt.Errorf("phase %q, status %+v", cur.Status.Phase, cur.Status)
		}
		return nil
	})
	return cur
}

// runPod plays the Job controller and the kubelet: it makes the Job's pod,
// marks the Job started, and terminates the pod with an exit code and a
// termination message.
func runPod(t testing.TB, job *batchv1.Job, attempt int, code int32, msg string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	pod := testutil.PodFor(job, fmt.Sprintf("%s-%d", job.Name, attempt))
	create(t, pod)
	testutil.Terminated(pod, code, msg, time.Now())
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatalf("pod status: %v", err)
	}
	return pod
}

// finishJob plays the Job controller marking a Job finished: Complete, or
// Failed with reason.
func finishJob(t testing.TB, job *batchv1.Job, failReason string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := testutil.FinishJob(ctx, k8s, job, failReason); err != nil {
		t.Fatal(err)
	}
}

// eventsFor lists the events about an object (events.k8s.io).
func eventsFor(t testing.TB, ns, name string) []eventsv1.Event {
	t.Helper()
	var list eventsv1.EventList
	if err := k8s.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// waitEvent waits for an event about an object (events are sent
// asynchronously, in batches).
func waitEvent(t testing.TB, ns, name, reason string) {
	t.Helper()
	eventually(t, 10*time.Second, "event "+reason+" for "+name, func() error {
		if evs := eventsFor(t, ns, name); !hasEvent(evs, reason) {
			return fmt.Errorf("events %+v", evs)
		}
		return nil
	})
}

func hasEvent(evs []eventsv1.Event, reason string) bool {
	for _, e := range evs {
		if e.Reason == reason {
			return true
		}
	}
	return false
}

func jobsOf(t testing.TB, ns string, sel map[string]string) []batchv1.Job {
	t.Helper()
	var list batchv1.JobList
	if err := k8s.List(context.Background(), &list, client.InNamespace(ns), client.MatchingLabels(sel)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}
