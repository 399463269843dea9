package testutil

// Helpers for tests that run the launcher on envtest (a real kube-apiserver
// and etcd, no kubelet, no Job controller): the launcher's own suite and
// the kubectl plugin's. They play the parts envtest lacks: the kubelet's
// pods/log, a runner pod's termination, the Job controller's finish.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kafka-replay/kafka-replay/runner/report"
	"github.com/kafka-replay/kafka-replay/test/cachedir"
)

// AssetsDir finds kube-apiserver and etcd: KUBEBUILDER_ASSETS, or the cache
// that `make envtest-assets` fills; "" when neither has them.
func AssetsDir() string {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d
	}
	d := cachedir.Path("kube-v1.37.2")
	if _, err := os.Stat(filepath.Join(d, "kube-apiserver")); err == nil {
		return d
	}
	return ""
}

// ApplyLauncherRBAC creates the ClusterRoles of the generated role file
// (charts/kafka-replay/files/rbac/role.yaml) and binds each to user
// cluster-wide, so the launcher runs with exactly the rights the chart
// gives it. The Lease Role is left out: leader election is off in tests.
func ApplyLauncherRBAC(ctx context.Context, c client.Client, roleFile, user string) error {
	f, err := os.Open(roleFile)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var cr rbacv1.ClusterRole
		if err := dec.Decode(&cr); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if cr.Kind != "ClusterRole" {
			continue
		}
		if err := c.Create(ctx, &cr); err != nil {
			return err
		}
		if err := c.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: cr.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: cr.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		}); err != nil {
			return err
		}
	}
}

// RunnerLogs stands in for pods/log, which envtest lacks (no kubelet): it
// serves, per pod, a log made the way the runner makes it, its own log
// lines around a frame from the runner's frame writer (report.WriteFrame).
// It is a launcher.FullLogFetcher. The end-to-end suite reads real pods'
// logs.
type RunnerLogs struct {
	mu   sync.Mutex
	logs map[string]string // namespace/pod → log
}

// NewRunnerLogs makes an empty RunnerLogs.
func NewRunnerLogs() *RunnerLogs { return &RunnerLogs{logs: map[string]string{}} }

// Put stores a pod's log: log lines, then (if r is set) the frame.
func (l *RunnerLogs) Put(ns, pod string, r *report.Result) error {
	var b bytes.Buffer
	b.WriteString("time=2026-03-01T09:30:00Z level=INFO msg=starting\n")
	if r != nil {
		if err := report.WriteFrame(&b, r); err != nil {
			return err
		}
	}
	b.WriteString("time=2026-03-01T09:30:01Z level=INFO msg=done\n")
	l.mu.Lock()
	defer l.mu.Unlock()
	l.logs[ns+"/"+pod] = b.String()
	return nil
}

// PutText stores a pod's log as it is (a list runner's JSON on stdout).
func (l *RunnerLogs) PutText(ns, pod, log string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.logs[ns+"/"+pod] = log
}

// Get is a pod's stored log, or the API server's not-found words.
func (l *RunnerLogs) Get(ns, pod string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.logs[ns+"/"+pod]
	if !ok {
		return "", fmt.Errorf("pods %q not found", pod)
	}
	return s, nil
}

// Tail is the end of a pod's log, at most limit bytes.
func (l *RunnerLogs) Tail(_ context.Context, ns, pod, _ string, _, limit int64) (string, error) {
	s, err := l.Get(ns, pod)
	if int64(len(s)) > limit {
		s = s[int64(len(s))-limit:]
	}
	return s, err
}

// Full reads a pod's whole log, at most limit bytes.
func (l *RunnerLogs) Full(_ context.Context, ns, pod, _ string, limit int64) (io.ReadCloser, error) {
	s, err := l.Get(ns, pod)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(io.LimitReader(strings.NewReader(s), limit)), nil
}

// Attempt plays the Job controller and the kubelet for one attempt of a
// runner Job: a pod that ran on a node and terminated at at with code, the
// compact result as its termination message and the full one framed in
// its log.
func Attempt(ctx context.Context, c client.Client, logs *RunnerLogs, job *batchv1.Job, name string, code int32, r *report.Result, at time.Time) error {
	pod := PodFor(job, name)
	pod.Spec.NodeName = "node-1" // ran somewhere: its kubelet has its log
	if err := c.Create(ctx, pod); err != nil {
		return fmt.Errorf("create pod %s: %w", name, err)
	}
	msg := ""
	if r != nil {
		msg = Compact(r)
	}
	if err := logs.Put(job.Namespace, name, r); err != nil {
		return err
	}
	Terminated(pod, code, msg, at)
	return c.Status().Update(ctx, pod)
}

// FinishJob plays the Job controller marking a Job finished: Complete, or
// Failed with failReason, with its ended attempts counted in status (failed,
// succeeded) as the Job controller counts them. It retries on conflicts with
// the launcher's own writes until ctx ends.
func FinishJob(ctx context.Context, c client.Client, job *batchv1.Job, failReason string) error {
	for {
		var cur batchv1.Job
		err := c.Get(ctx, client.ObjectKeyFromObject(job), &cur)
		if err == nil {
			if failReason == "" {
				Complete(&cur, time.Now())
			} else {
				Fail(&cur, failReason, time.Now())
			}
			// The Job controller counts every attempt whose pod ended
			// before it marks the Job finished: the launcher judges by
			// those counts whether its cache has all the attempts.
			var pods corev1.PodList
			if err = c.List(ctx, &pods, client.InNamespace(cur.Namespace), client.MatchingLabels{batchv1.ControllerUidLabel: string(cur.UID)}); err != nil {
				return fmt.Errorf("list pods of Job %s: %w", job.Name, err)
			}
			var failed, succeeded int32
			for _, p := range pods.Items {
				switch p.Status.Phase {
				case corev1.PodFailed:
					failed++
				case corev1.PodSucceeded:
					succeeded++
				}
			}
			cur.Status.Failed, cur.Status.Succeeded = max(cur.Status.Failed, failed), max(cur.Status.Succeeded, succeeded)
			if err = c.Status().Update(ctx, &cur); err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("finish Job %s: %w (last: %w)", job.Name, ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Manager is a controller manager started for a test.
type Manager struct {
	cancel context.CancelFunc
	done   chan error
}

// StartManager starts a manager the way cmd/launcher does (no metrics or
// probe listeners, no leader election) as the user of cfg, lets setup add
// its controllers (launcher.Setup), and waits for its cache to sync. Stop
// it with Stop.
func StartManager(cfg *rest.Config, opts ctrl.Options, setup func(context.Context, ctrl.Manager) error) (*Manager, error) {
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	opts.HealthProbeBindAddress = "0"
	opts.Controller = config.Controller{SkipNameValidation: ptr.To(true)}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := setup(ctx, mgr); err != nil {
		cancel()
		return nil, err
	}
	m := &Manager{cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		cancel()
		return nil, errors.New("cache did not sync")
	}
	return m, nil
}

// Stop stops the manager and waits for it, at most timeout.
func (m *Manager) Stop(timeout time.Duration) error {
	m.cancel()
	select {
	case err := <-m.done:
		return err
	case <-time.After(timeout):
		return fmt.Errorf("manager did not stop within %s", timeout)
	}
}

// ConsumerPodTemplate is a consumer workload's pod template, labelled
// app=<app>.
func ConsumerPodTemplate(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "consumer", Image: "consumer:test"}}},
	}
}

// Deployment is a consumer Deployment with replicas (envtest has no
// Deployment controller: it only stores the object and its scale).
func Deployment(ns, name string, replicas int32, labels map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: ConsumerPodTemplate(name),
		},
	}
}

// SyncBuffer is a bytes.Buffer safe for the concurrent writes of a logger
// and the reads of a test that prints it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
