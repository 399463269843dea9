package chart

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kafka-replay/kafka-replay/launcher"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// TestLauncherWithChartRBAC runs the real launcher (launcher.Setup, as
// cmd/launcher wires it, with leader election on and the Options the chart's
// flags give) on envtest, authenticated as the chart's launcher
// ServiceAccount and authorised only by the chart's ClusterRole and Role.
// Then, as the Job controller and the kubelet would:
//
//   - a Job made from a runbook CronJob exactly as `kubectl create job
//     --from=cronjob/...` makes it finishes, and the launcher records its
//     outcome on it (the runbook labels are what the launcher looks for);
//   - a ReplayRequest in another namespace becomes a Job, which finishes, and
//     the request ends Succeeded with the result.
//
// So the chart's RBAC is enough for all of it (leases in the release
// namespace, Jobs, pods, events, requests and their status), and runbook Jobs
// are recognised.
func TestLauncherWithChartRBAC(t *testing.T) {
	cfg := controlPlane(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, warn := newClient(t, cfg)
	const ns = "kafka-replay-rbac"
	restrictedNamespace(ctx, t, admin, ns)

	values := writeValues(t, map[string]any{"runbooks": []any{map[string]any{
		"name": "rewind", "group": "orders", "target": "shift:-10",
		"kafka": map[string]any{"bootstrapServers": "kafka:9092"},
	}}})
	objs := render(t, "--values", values, "--namespace", ns)
	var launcherSA string
	for _, u := range objs {
		switch u.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "CronJob":
			u.SetNamespace(namespaceOf(u, ns))
			if err := admin.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()), fieldOwner, client.ForceOwnership); err != nil {
				t.Fatalf("%s/%s: %v", u.GetKind(), u.GetName(), err)
			}
			if u.GetKind() == "ServiceAccount" && strings.HasSuffix(u.GetName(), "-launcher") {
				launcherSA = u.GetName()
			}
		}
	}
	warn.take()
	if launcherSA == "" {
		t.Fatal("no launcher ServiceAccount rendered")
	}

	// The launcher, as its ServiceAccount.
	saCfg := rest.CopyConfig(cfg)
	saCfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":" + launcherSA}
	opts := launcherOptions(t, objs)
	opts.PodResultGrace = 2 * time.Second
	mgr, err := ctrl.NewManager(saCfg, ctrl.Options{
		Scheme:                        launcher.NewScheme(),
		Cache:                         launcher.CacheOptions(),
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionID:              "launcher.kafkareplay.dev",
		LeaderElectionNamespace:       ns,
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	mctx, stop := context.WithCancel(ctx)
	if err := launcher.Setup(mctx, mgr, opts, 2); err != nil {
		stop()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("launcher: %v", err)
		}
	}()
	select {
	case <-mgr.Elected():
	case err := <-done:
		t.Fatalf("launcher stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the launcher was not elected leader: can its ServiceAccount use Leases in the release namespace?")
	}

	// A runbook Job, as `kubectl create job --from=cronjob/...` makes it.
	var cj batchv1.CronJob
	if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: one(t, objs, "CronJob").GetName()}, &cj); err != nil {
		t.Fatal(err)
	}
	annotations := map[string]string{"cronjob.kubernetes.io/instantiate": "manual"}
	for k, v := range cj.Spec.JobTemplate.Annotations {
		annotations[k] = v
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: "rewind-manual", Labels: cj.Spec.JobTemplate.Labels, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID, Controller: ptr.To(true)}},
		},
		Spec: cj.Spec.JobTemplate.Spec,
	}
	// Runner pods use the chart's runner ServiceAccount.
	if err := admin.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	finishRunner(ctx, t, admin, job, testutil.Result("orders", report.ExitOK, 10, 10))
	eventuallyDo(t, 30*time.Second, "runbook Job recorded", func() error {
		var got batchv1.Job
		if err := admin.Get(ctx, client.ObjectKeyFromObject(job), &got); err != nil {
			return err
		}
		a := got.Annotations
		if a[v1alpha1.AnnotationOutcome] != v1alpha1.OutcomeSucceeded || a[v1alpha1.AnnotationReason] != string(report.ReasonApplied) || a[v1alpha1.AnnotationMessagesReconsumed] != "20" {
			return fmt.Errorf("annotations %v", a)
		}
		return nil
	})

	// A ReplayRequest in its own namespace.
	const reqNS = "kafka-replay-rbac-team"
	restrictedNamespace(ctx, t, admin, reqNS)
	rr := testutil.MakeRequest(reqNS, "rewind").Group("payments").ShiftBy(-5).Obj()
	if err := admin.Create(ctx, rr); err != nil {
		t.Fatal(err)
	}
	var rjob batchv1.Job
	eventuallyDo(t, 30*time.Second, "Job for the request", func() error {
		var cur v1alpha1.ReplayRequest
		if err := admin.Get(ctx, client.ObjectKeyFromObject(rr), &cur); err != nil {
			return err
		}
		if cur.Status.JobName == "" {
			return fmt.Errorf("status %+v", cur.Status)
		}
		return admin.Get(ctx, client.ObjectKey{Namespace: reqNS, Name: cur.Status.JobName}, &rjob)
	})
	if rjob.Spec.Template.Spec.Containers[0].Image != opts.RunnerImage {
		t.Errorf("request Job image %s, chart's runner image %s", rjob.Spec.Template.Spec.Containers[0].Image, opts.RunnerImage)
	}
	finishRunner(ctx, t, admin, &rjob, testutil.Result("payments", report.ExitOK, 5))
	eventuallyDo(t, 30*time.Second, "request Succeeded", func() error {
		var cur v1alpha1.ReplayRequest
		if err := admin.Get(ctx, client.ObjectKeyFromObject(rr), &cur); err != nil {
			return err
		}
		if cur.Status.Phase != v1alpha1.PhaseSucceeded || cur.Status.Result == nil || cur.Status.Result.Totals.MessagesToReconsume != 5 {
			return fmt.Errorf("status %+v", cur.Status)
		}
		return nil
	})
	// The launcher could write its events (events.k8s.io) about both.
	for _, o := range []struct{ ns, name string }{{reqNS, rr.Name}, {ns, job.Name}} {
		eventuallyDo(t, 30*time.Second, "Applied event about "+o.name, func() error {
			var list eventsv1.EventList
			if err := admin.List(ctx, &list, client.InNamespace(o.ns)); err != nil {
				return err
			}
			var seen []string
			for _, e := range list.Items {
				if e.Regarding.Name == o.name && e.Reason == string(report.ReasonApplied) {
					return nil
				}
				seen = append(seen, e.Regarding.Name+":"+e.Reason)
			}
			return fmt.Errorf("events %v", seen)
		})
	}
}

// namespaceOf keeps cluster-scoped objects cluster-scoped.
func namespaceOf(u *unstructured.Unstructured, ns string) string {
	switch u.GetKind() {
	case "ClusterRole", "ClusterRoleBinding":
		return ""
	}
	return ns
}

// finishRunner plays the Job controller and the kubelet: one pod of the Job,
// its runner container exited with the result's code and its compact result
// as termination message, then the Job finished accordingly.
func finishRunner(ctx context.Context, t *testing.T, c client.Client, job *batchv1.Job, r *report.Result) {
	t.Helper()
	if sa := job.Spec.Template.Spec.ServiceAccountName; sa != "" {
		var got corev1.ServiceAccount
		if err := c.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: sa}, &got); err != nil {
			t.Fatalf("runner ServiceAccount %s: %v", sa, err)
		}
	}
	pod := testutil.PodFor(job, job.Name+"-0")
	if pod.Spec.ServiceAccountName == "" {
		// No ServiceAccount controller in envtest to make "default".
		if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: "default"}}); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatalf("runner pod: %v", err)
	}
	testutil.Terminated(pod, int32(r.ExitCode), testutil.Compact(r), time.Now())
	if err := c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	eventuallyDo(t, 10*time.Second, "finish Job", func() error {
		var cur batchv1.Job
		if err := c.Get(ctx, client.ObjectKeyFromObject(job), &cur); err != nil {
			return err
		}
		if r.ExitCode == report.ExitOK {
			testutil.Complete(&cur, time.Now())
		} else {
			testutil.Fail(&cur, batchv1.JobReasonPodFailurePolicy, time.Now())
		}
		return c.Status().Update(ctx, &cur)
	})
}

// eventuallyDo retries f until it returns nil or the timeout passes.
func eventuallyDo(t *testing.T, timeout time.Duration, what string, f func() error) {
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
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLauncherBinaryWithChartArgs builds cmd/launcher and runs it with exactly
// the arguments the chart's Deployment gives it, against envtest: it must
// accept every flag, win leader election in the release namespace, and serve
// the paths the chart's probes and metrics Service use (/healthz, /readyz on
// the health port, /metrics on the metrics port).
func TestLauncherBinaryWithChartArgs(t *testing.T) {
	cfg := controlPlane(t)
	helmBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, _ := newClient(t, cfg)
	const ns = "kafka-replay-binary"
	restrictedNamespace(ctx, t, admin, ns)

	kc := adminKubeconfig(t, cfg, "launcher-binary")
	bin := filepath.Join(t.TempDir(), "launcher")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/launcher")
	build.Dir = repoRoot(t)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/launcher: %v\n%s", err, out)
	}

	metricsPort, healthPort := freePort(t), freePort(t)
	objs := render(t, "--namespace", ns,
		"--set", "launcher.ports.metrics="+strconv.Itoa(metricsPort),
		"--set", "launcher.ports.health="+strconv.Itoa(healthPort))
	var dep appsv1.Deployment
	into(t, one(t, objs, "Deployment"), &dep)
	c := dep.Spec.Template.Spec.Containers[0]

	logs := &lockedBuffer{}
	cmd := exec.Command(bin, c.Args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kc)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			t.Logf("launcher exited: %v", err)
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			t.Logf("launcher killed: %v", <-exited)
		}
		if t.Failed() {
			t.Logf("launcher log:\n%s", logs.String())
		}
	}()

	// /metrics is HTTPS for callers the API server authenticates and
	// authorises: a scraper bound to the chart's metrics-reader ClusterRole.
	scraper, stranger := serviceAccountToken(ctx, t, admin, ns, "scraper"), serviceAccountToken(ctx, t, admin, ns, "stranger")
	for _, u := range objs {
		if u.GetKind() == "ClusterRole" && strings.HasSuffix(u.GetName(), "-metrics-reader") {
			if err := admin.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()), fieldOwner, client.ForceOwnership); err != nil {
				t.Fatal(err)
			}
			crb := &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: ns + "-scraper"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: u.GetName()},
				Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "scraper", Namespace: ns}},
			}
			if err := admin.Create(ctx, crb); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
		}
	}
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // the self-signed certificate
	probe := func(port int, path string) (int, string, error) {
		scheme, hc := "http", http.DefaultClient
		if port == metricsPort {
			scheme, hc = "https", insecure
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s://127.0.0.1:%d%s", scheme, port, path), nil)
		if port == metricsPort {
			req.Header.Set("Authorization", "Bearer "+scraper)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	for _, p := range []struct {
		port int
		path string
	}{{healthPort, c.LivenessProbe.HTTPGet.Path}, {healthPort, c.ReadinessProbe.HTTPGet.Path}, {metricsPort, "/metrics"}} {
		eventuallyDo(t, 60*time.Second, fmt.Sprintf("GET :%d%s", p.port, p.path), func() error {
			select {
			case err := <-exited:
				exited <- err
				return fmt.Errorf("the launcher exited: %w\n%s", err, logs.String())
			default:
			}
			code, body, err := probe(p.port, p.path)
			if err != nil {
				return err
			}
			if code != http.StatusOK {
				return fmt.Errorf("status %d: %s", code, body)
			}
			if p.path == "/metrics" && !strings.Contains(body, "controller_runtime_") {
				return fmt.Errorf("no controller-runtime metrics in /metrics")
			}
			return nil
		})
	}
	// Without a token, or with one the API server does not authorise for
	// GET /metrics, nothing; in plain HTTP, nothing either.
	for what, token := range map[string]string{"no token": "", "a token without the metrics-reader role": stranger, "a token that is not one": "not-a-token"} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", metricsPort), nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := insecure.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		// 401 or 403; controller-runtime answers 500 to a token the API
		// server cannot review. Never the metrics.
		if resp.StatusCode == http.StatusOK || strings.Contains(string(b), "controller_runtime_") {
			t.Errorf("GET /metrics with %s: %d\n%s", what, resp.StatusCode, b)
		}
	}
	if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)); err == nil {
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if strings.Contains(string(b), "controller_runtime_") {
			t.Error("/metrics answered in plain HTTP")
		}
	}

	// It leads through a Lease in the release namespace, named as the chart says.
	eventuallyDo(t, 60*time.Second, "leader election Lease", func() error {
		var lease coordinationv1.Lease
		if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "launcher.kafkareplay.dev"}, &lease); err != nil {
			return err
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			return fmt.Errorf("no holder")
		}
		return nil
	})
	if strings.Contains(logs.String(), "flag provided but not defined") {
		t.Errorf("the launcher refused a flag:\n%s", logs.String())
	}
}

// serviceAccountToken creates a ServiceAccount and returns a token of it
// (a TokenRequest), as a scraper in a pod would have.
func serviceAccountToken(ctx context.Context, t *testing.T, admin client.Client, ns, name string) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := admin.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	if err := admin.SubResource("token").Create(ctx, sa, tr); err != nil {
		t.Fatalf("token of %s/%s: %v", ns, name, err)
	}
	return tr.Status.Token
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// lockedBuffer is a bytes.Buffer that a process writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
