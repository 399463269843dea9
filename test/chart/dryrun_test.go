package chart

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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kafka-replay/kafka-replay/launcher"
	"github.com/kafka-replay/kafka-replay/test/cachedir"
)

// The control plane: one envtest (real kube-apiserver and etcd) for every
// test of the package that needs one, started on first use.
var (
	envOnce sync.Once
	testEnv *envtest.Environment
	envCfg  *rest.Config
	envErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if testEnv != nil {
		if err := testEnv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
	}
	os.Exit(code)
}

// kubeAssets finds kube-apiserver and etcd: $KUBEBUILDER_ASSETS, or the
// directory `make envtest-assets` builds them into.
func kubeAssets(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs kube-apiserver and etcd; skipped with -short (make test-chart runs it)")
	}
	dir, given := os.LookupEnv("KUBEBUILDER_ASSETS")
	if !given {
		dir = cachedir.Path("kube-v1.37.2")
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			// make sets KUBEBUILDER_ASSETS after building them: missing
			// there is a broken build, never a reason to skip.
			if given {
				t.Fatalf("no %s in KUBEBUILDER_ASSETS=%s", b, dir)
			}
			t.Skipf("no %s in %s: run `make envtest-assets` or `make test-chart` (KUBEBUILDER_ASSETS)", b, dir)
		}
	}
	return dir
}

// controlPlane starts envtest with the chart's CRDs and the ServiceMonitor
// CRD (test data: the chart never installs it) and returns its config.
func controlPlane(t *testing.T) *rest.Config {
	t.Helper()
	assets := kubeAssets(t)
	envOnce.Do(func() {
		testEnv = &envtest.Environment{
			BinaryAssetsDirectory: assets,
			CRDDirectoryPaths: []string{
				filepath.Join(chartDir(t), "crds"),
				testdata(t, "crds"),
			},
			ErrorIfCRDPathMissing: true,
		}
		envCfg, envErr = testEnv.Start()
		if envErr != nil {
			testEnv = nil
		}
	})
	if envErr != nil {
		t.Fatalf("starting envtest: %v", envErr)
	}
	return rest.CopyConfig(envCfg)
}

// warnings collects the API server's warnings (Pod Security "would violate"
// warnings, unknown or deprecated fields).
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}

// newClient returns a client whose warnings land in the returned collector.
func newClient(t *testing.T, cfg *rest.Config) (client.Client, *warnings) {
	t.Helper()
	w := &warnings{}
	cfg.WarningHandler = nil
	cfg.WarningHandlerWithContext = w
	c, err := client.New(cfg, client.Options{Scheme: launcher.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c, w
}

const fieldOwner = client.FieldOwner("kafka-replay-chart-test")

// dryRunApply server-side applies u with dryRun=All: the API server decodes
// it against the real schemas (built-in types, the CRDs), runs defaulting,
// validation and admission (Pod Security included), and stores nothing.
func dryRunApply(ctx context.Context, c client.Client, u *unstructured.Unstructured) error {
	return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()), client.DryRunAll, fieldOwner, client.ForceOwnership)
}

// restrictedNamespace creates a namespace that enforces (and warns and
// audits for) the restricted Pod Security Standard.
func restrictedNamespace(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
		"pod-security.kubernetes.io/warn":    "restricted",
		"pod-security.kubernetes.io/audit":   "restricted",
	}}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// TestServerSideDryRun applies every object the chart renders, with the
// default values and with every option on, as a server-side dry run on a real
// kube-apiserver, in a namespace that enforces the restricted Pod Security
// Standard, and requires no error and no warning. It then does the same for
// the Job that `kubectl create job --from=cronjob/<runbook>` makes from each
// runbook, and for a pod of that Job (so Pod Security is enforced on the pod
// itself, not only warned about for its template).
func TestServerSideDryRun(t *testing.T) {
	cfg := controlPlane(t)
	helmBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, warn := newClient(t, cfg)
	restrictedNamespace(ctx, t, c, releaseNamespace)

	for name, args := range map[string][]string{
		"defaults": nil,
		"all-on":   {"--values", testdata(t, "all-on.yaml")},
	} {
		t.Run(name, func(t *testing.T) {
			objs := render(t, args...)
			if len(objs) == 0 {
				t.Fatal("nothing rendered")
			}
			for _, u := range objs {
				if err := dryRunApply(ctx, c, u); err != nil {
					t.Errorf("%s/%s: %v", u.GetKind(), u.GetName(), err)
				}
				if w := warn.take(); len(w) > 0 {
					t.Errorf("%s/%s: API server warnings: %q", u.GetKind(), u.GetName(), w)
				}
			}

			for _, u := range byKind(objs, "CronJob") {
				var cj batchv1.CronJob
				into(t, u, &cj)
				job := &batchv1.Job{
					TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
					ObjectMeta: metav1.ObjectMeta{
						Name:        cj.Name + "-manual",
						Namespace:   cj.Namespace,
						Labels:      cj.Spec.JobTemplate.Labels,
						Annotations: cj.Spec.JobTemplate.Annotations,
					},
					Spec: cj.Spec.JobTemplate.Spec,
				}
				if err := applyTyped(ctx, c, job); err != nil {
					t.Errorf("Job from CronJob %s: %v", cj.Name, err)
				}
				if w := warn.take(); len(w) > 0 {
					t.Errorf("Job from CronJob %s: API server warnings: %q", cj.Name, w)
				}

				// A pod as the Job controller makes it. The ServiceAccount
				// admission plugin wants its ServiceAccount to exist.
				pod := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{
						Name:      cj.Name + "-manual-abcde",
						Namespace: cj.Namespace,
						Labels: func() map[string]string {
							l := map[string]string{
								batchv1.ControllerUidLabel: "0b6c1a52-4c1e-4f51-9d5e-1b2c3d4e5f60",
								batchv1.JobNameLabel:       job.Name,
							}
							for k, v := range cj.Spec.JobTemplate.Spec.Template.Labels {
								l[k] = v
							}
							return l
						}(),
					},
					Spec: cj.Spec.JobTemplate.Spec.Template.Spec,
				}
				if sa := pod.Spec.ServiceAccountName; sa != "" {
					err := c.Create(ctx, &corev1.ServiceAccount{
						ObjectMeta:                   metav1.ObjectMeta{Name: sa, Namespace: pod.Namespace},
						AutomountServiceAccountToken: ptr.To(false),
					})
					if err != nil && !apierrors.IsAlreadyExists(err) {
						t.Fatal(err)
					}
				}
				if err := c.Create(ctx, pod, client.DryRunAll); err != nil {
					t.Errorf("runner pod of runbook %s refused: %v", cj.Name, err)
				}
				if w := warn.take(); len(w) > 0 {
					t.Errorf("runner pod of runbook %s: API server warnings: %q", cj.Name, w)
				}
			}
		})
	}

	// The check has teeth: a runner pod that breaks the restricted standard
	// is refused in this namespace.
	bad := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "not-restricted", Namespace: releaseNamespace},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: ptr.To(false),
			Containers:                   []corev1.Container{{Name: "runner", Image: "runner"}},
		},
	}
	if err := c.Create(ctx, bad, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "PodSecurity") {
		t.Errorf("a pod without a security context was not refused by Pod Security: %v", err)
	}
	warn.take()
}

// applyTyped dry-run applies a typed object through its unstructured form.
func applyTyped(ctx context.Context, c client.Client, obj runtime.Object) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: m}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	return dryRunApply(ctx, c, u)
}

// TestHelmInstall installs the chart for real with helm into the envtest API
// server (every option on) and checks what NOTES.txt tells the user. There is
// no kubelet, so nothing runs; what is checked is that helm can create every
// object, and that the notes name this release's objects.
func TestHelmInstall(t *testing.T) {
	cfg := controlPlane(t)
	kc := adminKubeconfig(t, cfg, "helm")
	// The release's admission policies are cluster-wide unless scoped, and
	// the API server keeps enforcing them a moment after helm uninstall
	// deletes them, the validating one sometimes after the mutating one:
	// unscoped, that refused the next test's requests in other namespaces
	// (TestLauncherWithChartRBAC: "requested-by ... set by the API
	// server"). Scoped to this test's namespace, they judge only its own.
	const ns, scope = "kafka-replay-install", "kafka-replay-install-test"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, _ := newClient(t, cfg)
	scopedNamespace(ctx, t, admin, ns, scope)
	out, err := helm(t, "install", "kafka-replay", chartDir(t), "--kubeconfig", kc, "--namespace", ns,
		"--values", testdata(t, "all-on.yaml"), "--set-string", "admissionPolicies.namespaceSelector.matchLabels."+scope+"=true", "--timeout", "60s")
	if err != nil {
		t.Fatal(err)
	}
	_, notes, ok := strings.Cut(out, "NOTES:")
	if !ok {
		t.Fatalf("no NOTES in:\n%s", out)
	}
	for _, want := range []string{
		"kubectl -n " + ns + " rollout status deployment/kr-launcher",
		"kind: ReplayRequest",
		"kubectl -n " + ns + " get rr",
		// Waits that return on failure too: a request's Finished condition,
		// a runbook Job's recorded outcome (condition=Complete would wait
		// out its timeout on a failed Job).
		"wait rr/orders-rewind --for=condition=Finished",
		"wait job/<job> --for=jsonpath='{.metadata.annotations.kafkareplay\\.dev/outcome}'",
		"kubectl -n " + ns + " create job --from=cronjob/kr-orders-rewind-1h orders-rewind-1h-$(date +%s)",
		"--from=cronjob/kr-to-a-time",
		"-l kafkareplay.dev/runner=true",
		"docs/usage.md",
		"bind the ClusterRole kr-approver",
		"kubectl -n " + ns + " annotate rr orders-rewind kafkareplay.dev/approve=",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("NOTES lack %q:\n%s", want, notes)
		}
	}

	// The sample request in NOTES is accepted by the real CRD schema.
	start := strings.Index(notes, "apiVersion: kafkareplay.dev/v1alpha1")
	end := strings.Index(notes[max(start, 0):], "EOF\n")
	if start < 0 || end < 0 {
		t.Fatalf("no sample request in NOTES:\n%s", notes)
	}
	var lines []string
	for _, l := range strings.Split(notes[start:start+end], "\n") {
		lines = append(lines, strings.TrimPrefix(l, "     "))
	}
	objs, err := decodeObjects(strings.Join(lines, "\n"))
	if err != nil || len(objs) != 1 {
		t.Fatalf("sample request in NOTES does not decode: %v", err)
	}
	objs[0].SetNamespace(ns)
	// The API server enforces the chart's admission policies a moment after
	// helm creates them, and not all at once: until the mutating policy is
	// enforced, the validating one refuses the requester it did not stamp.
	eventuallyDo(t, time.Minute, "the sample request in NOTES", func() error {
		return dryRunApply(ctx, admin, objs[0])
	})

	if out, err := helm(t, "status", "kafka-replay", "--kubeconfig", kc, "--namespace", ns); err != nil || !strings.Contains(out, "STATUS: deployed") {
		t.Errorf("helm status: %v\n%s", err, out)
	}
	if _, err := helm(t, "uninstall", "kafka-replay", "--kubeconfig", kc, "--namespace", ns, "--timeout", "60s"); err != nil {
		t.Error(err)
	}
}

// adminKubeconfig writes a kubeconfig for a new cluster-admin user of the
// envtest control plane, for tools that run as separate processes.
func adminKubeconfig(t *testing.T, cfg *rest.Config, name string) string {
	t.Helper()
	user, err := testEnv.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	return kc
}
