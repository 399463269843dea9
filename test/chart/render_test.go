package chart

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kafka-replay/kafka-replay/launcher"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/runner/config"
)

func TestLint(t *testing.T) {
	for name, args := range map[string][]string{
		"defaults": nil,
		"all-on":   {"--values", testdata(t, "all-on.yaml")},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := helm(t, append([]string{"lint", "--strict", chartDir(t)}, args...)...)
			if err != nil {
				t.Fatal(err)
			}
			// --strict fails on warnings; INFO lines (a missing icon) are fine.
			for _, l := range strings.Split(out, "\n") {
				if strings.Contains(l, "[WARNING]") || strings.Contains(l, "[ERROR]") {
					t.Errorf("lint: %s", l)
				}
			}
		})
	}
}

// TestPackage: the packaged chart (what a chart repository serves) has the
// CRD and the generated RBAC rules, and renders like the directory.
func TestPackage(t *testing.T) {
	dir := t.TempDir()
	out, err := helm(t, "package", chartDir(t), "--destination", dir)
	if err != nil {
		t.Fatal(err)
	}
	tgz := filepath.Join(dir, "kafka-replay-0.1.0.tgz")
	if !strings.Contains(out, tgz) {
		t.Fatalf("helm package: %s", out)
	}
	fromDir, err := helm(t, renderArgs(t, "--include-crds")...)
	if err != nil {
		t.Fatal(err)
	}
	fromTgz, err := helm(t, "template", "kafka-replay", tgz, "--namespace", releaseNamespace, "--include-crds")
	if err != nil {
		t.Fatal(err)
	}
	if fromDir != fromTgz {
		t.Errorf("the packaged chart renders differently:\n%s", lineDiff(fromDir, fromTgz))
	}
	if !strings.Contains(fromTgz, "name: replayrequests.kafkareplay.dev") {
		t.Error("the package has no ReplayRequest CRD")
	}
}

func TestRenderDefaults(t *testing.T) {
	objs := render(t)
	got := kinds(objs)
	want := []string{
		"PodDisruptionBudget/kafka-replay-launcher",
		"ServiceAccount/kafka-replay-launcher",
		"ServiceAccount/kafka-replay-runner",
		"ClusterRole/kafka-replay-launcher",
		"ClusterRole/kafka-replay-metrics-reader",
		"ClusterRole/kafka-replay-approver",
		"ClusterRoleBinding/kafka-replay-launcher",
		"Role/kafka-replay-launcher",
		"RoleBinding/kafka-replay-launcher",
		"Service/kafka-replay-launcher-metrics",
		"Deployment/kafka-replay-launcher",
		"ValidatingAdmissionPolicy/kafka-replay-requests",
		"ValidatingAdmissionPolicyBinding/kafka-replay-requests",
		"ValidatingAdmissionPolicy/kafka-replay-launcher-jobs",
		"ValidatingAdmissionPolicyBinding/kafka-replay-launcher-jobs",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("default objects:\n got %v\nwant %v", got, want)
	}
	for _, o := range objs {
		if o.GetNamespace() != "" && o.GetNamespace() != releaseNamespace {
			t.Errorf("%s/%s in namespace %q, want %q", o.GetKind(), o.GetName(), o.GetNamespace(), releaseNamespace)
		}
		l := o.GetLabels()
		for _, k := range []string{"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/version", "app.kubernetes.io/managed-by", "helm.sh/chart", "app.kubernetes.io/component"} {
			if l[k] == "" {
				t.Errorf("%s/%s has no %s label", o.GetKind(), o.GetName(), k)
			}
		}
	}

	var dep appsv1.Deployment
	into(t, one(t, objs, "Deployment"), &dep)
	checkLauncherDeployment(t, &dep)
	args := dep.Spec.Template.Spec.Containers[0].Args
	for _, a := range []string{"--leader-elect=true", "--leader-election-namespace=" + releaseNamespace, "--runner-image=ghcr.io/kafka-replay/runner:0.1.0", "--runner-image-pull-policy=IfNotPresent", "--history-limit=10", "--backoff-limit=2", "--active-deadline=600s"} {
		if !slices.Contains(args, a) {
			t.Errorf("launcher args %v lack %s", args, a)
		}
	}
	if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--runner-service-account") }) {
		t.Errorf("by default runner pods of requests use their namespace's default ServiceAccount; args: %v", args)
	}
	if got := dep.Spec.Template.Spec.Containers[0].Image; got != "ghcr.io/kafka-replay/launcher:0.1.0" {
		t.Errorf("launcher image %s", got)
	}

	for _, sa := range byKind(objs, "ServiceAccount") {
		var s corev1.ServiceAccount
		into(t, sa, &s)
		if strings.HasSuffix(s.Name, "-runner") && (s.AutomountServiceAccountToken == nil || *s.AutomountServiceAccountToken) {
			t.Errorf("runner ServiceAccount must set automountServiceAccountToken: false")
		}
	}
	checkRBAC(t, objs)
	checkMetricsReader(t, objs, "kafka-replay")

	// The chart's runner defaults are the launcher's: a runbook Job and a
	// request's Job get the same resources and retry budget.
	var values struct {
		Runner struct {
			Resources             corev1.ResourceRequirements `json:"resources"`
			BackoffLimit          int32                       `json:"backoffLimit"`
			ActiveDeadlineSeconds int64                       `json:"activeDeadlineSeconds"`
		} `json:"runner"`
	}
	b, err := os.ReadFile(chartDir(t) + "/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &values); err != nil {
		t.Fatal(err)
	}
	def := launcher.DefaultOptions()
	// The values reach the launcher as flags; the defaults agree so that a
	// launcher run without the chart behaves the same.
	if opts := launcherOptions(t, objs); !apiequality.Semantic.DeepEqual(opts.Resources, values.Runner.Resources) {
		t.Errorf("the Deployment's runner resource flags give %v, values runner.resources are %v", opts.Resources, values.Runner.Resources)
	}
	if !apiequality.Semantic.DeepEqual(values.Runner.Resources, def.Resources) {
		t.Errorf("values runner.resources %v differ from the launcher's defaults %v", values.Runner.Resources, def.Resources)
	}
	if values.Runner.BackoffLimit != def.BackoffLimit {
		t.Errorf("runner.backoffLimit %d, launcher default %d", values.Runner.BackoffLimit, def.BackoffLimit)
	}
	if values.Runner.ActiveDeadlineSeconds != int64(def.ActiveDeadline.Seconds()) {
		t.Errorf("runner.activeDeadlineSeconds %d, launcher default %s", values.Runner.ActiveDeadlineSeconds, def.ActiveDeadline)
	}
}

// checkLauncherDeployment checks the launcher's pod: restricted security
// context, its own token, probes on the health endpoints, resources.
func checkLauncherDeployment(t *testing.T, dep *appsv1.Deployment) {
	t.Helper()
	ps := dep.Spec.Template.Spec
	if ps.AutomountServiceAccountToken == nil || !*ps.AutomountServiceAccountToken {
		t.Error("the launcher needs its ServiceAccount token")
	}
	checkRestrictedPod(t, "launcher", &ps)
	c := ps.Containers[0]
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.LivenessProbe.HTTPGet.Port.String() != "health" {
		t.Errorf("liveness probe %+v", c.LivenessProbe)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe %+v", c.ReadinessProbe)
	}
	if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("launcher resources %+v", c.Resources)
	}
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--metrics-bind-address=:"); ok && v != itoa(ports["metrics"]) {
			t.Errorf("metrics port %d, flag %s", ports["metrics"], a)
		}
		if v, ok := strings.CutPrefix(a, "--health-probe-bind-address=:"); ok && v != itoa(ports["health"]) {
			t.Errorf("health port %d, flag %s", ports["health"], a)
		}
	}
}

func itoa(i int32) string { b, _ := json.Marshal(i); return string(b) }

// checkRestrictedPod checks what the restricted Pod Security Standard asks of
// a pod (the server-side dry-run test has the API server check it too).
func checkRestrictedPod(t *testing.T, what string, ps *corev1.PodSpec) {
	t.Helper()
	psc := ps.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: pod security context %+v", what, psc)
	}
	if len(ps.Containers) != 1 {
		t.Fatalf("%s: %d containers", what, len(ps.Containers))
	}
	sc := ps.Containers[0].SecurityContext
	switch {
	case sc == nil:
		t.Errorf("%s: no container security context", what)
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Errorf("%s: allowPrivilegeEscalation must be false", what)
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Errorf("%s: readOnlyRootFilesystem must be true", what)
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
		t.Errorf("%s: capabilities %+v, want drop ALL", what, sc.Capabilities)
	case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Errorf("%s: container seccomp %+v", what, sc.SeccompProfile)
	}
	if ps.HostNetwork || ps.HostPID || ps.HostIPC {
		t.Errorf("%s: host namespaces", what)
	}
}

// launcherRole is the launcher's ClusterRole or Role (the chart also has a
// ClusterRole for whoever reads /metrics).
func launcherRole(t *testing.T, objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, o := range byKind(objs, kind) {
		if strings.HasSuffix(o.GetName(), "-launcher") {
			out = append(out, o)
		}
	}
	if len(out) != 1 {
		t.Fatalf("want exactly one launcher %s, got %v", kind, kinds(out))
	}
	return out[0]
}

// checkMetricsReader: with metrics.secure, a ClusterRole that lets a
// scraper GET /metrics and nothing else.
func checkMetricsReader(t *testing.T, objs []*unstructured.Unstructured, fullname string) {
	t.Helper()
	for _, o := range byKind(objs, "ClusterRole") {
		if o.GetName() != fullname+"-metrics-reader" {
			continue
		}
		var r rbacv1.ClusterRole
		into(t, o, &r)
		want := []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}
		if !apiequality.Semantic.DeepEqual(r.Rules, want) {
			t.Errorf("metrics reader rules %+v, want %+v", r.Rules, want)
		}
		return
	}
	t.Errorf("no ClusterRole %s-metrics-reader", fullname)
}

// checkRBAC: the ClusterRole and Role carry exactly the rules generated from
// the launcher's +kubebuilder:rbac markers, and nothing reaches Secrets or
// uses a wildcard.
func checkRBAC(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	b, err := os.ReadFile(chartDir(t) + "/files/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	generated, err := decodeObjects(string(b))
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"ClusterRole", "Role"} {
		var want, got rbacv1.ClusterRole
		for _, g := range byKind(generated, kind) {
			var r rbacv1.ClusterRole
			into(t, g, &r)
			want.Rules = append(want.Rules, r.Rules...)
		}
		into(t, launcherRole(t, objs, kind), &got)
		if !apiequality.Semantic.DeepEqual(want.Rules, got.Rules) {
			t.Errorf("%s rules differ from files/rbac/role.yaml:\n got %+v\nwant %+v", kind, got.Rules, want.Rules)
		}
		for _, r := range got.Rules {
			for _, res := range r.Resources {
				if res == "secrets" || res == "*" {
					t.Errorf("%s grants %v on %s", kind, r.Verbs, res)
				}
			}
			if slices.Contains(r.Verbs, "*") || slices.Contains(r.APIGroups, "*") {
				t.Errorf("%s has a wildcard rule %+v", kind, r)
			}
			if kind == "Role" && !slices.Equal(r.APIGroups, []string{"coordination.k8s.io"}) {
				t.Errorf("the namespaced Role is for leader election only; it has %+v", r)
			}
		}
	}
	for _, kind := range []string{"ClusterRoleBinding", "RoleBinding"} {
		var rb rbacv1.RoleBinding
		into(t, one(t, objs, kind), &rb)
		if len(rb.Subjects) != 1 || rb.Subjects[0].Kind != "ServiceAccount" || !strings.HasSuffix(rb.Subjects[0].Name, "launcher") || rb.Subjects[0].Namespace != releaseNamespace {
			t.Errorf("%s subjects %+v", kind, rb.Subjects)
		}
	}
}

func TestRenderAllOn(t *testing.T) {
	objs := render(t, "--values", testdata(t, "all-on.yaml"))
	counts := map[string]int{}
	for _, o := range objs {
		counts[o.GetKind()]++
	}
	for kind, n := range map[string]int{
		"Deployment": 1, "PodDisruptionBudget": 1, "ServiceAccount": 2, "ClusterRole": 3, "ClusterRoleBinding": 1,
		"Role": 1, "RoleBinding": 1, "Service": 1, "ServiceMonitor": 1, "NetworkPolicy": 2, "CronJob": 5,
	} {
		if counts[kind] != n {
			t.Errorf("%d %s, want %d (all: %v)", counts[kind], kind, n, kinds(objs))
		}
	}
	for _, o := range objs {
		if o.GetLabels()["team"] != "streaming" {
			t.Errorf("%s/%s lacks commonLabels", o.GetKind(), o.GetName())
		}
	}
	var dep appsv1.Deployment
	into(t, one(t, objs, "Deployment"), &dep)
	checkLauncherDeployment(t, &dep)
	args := dep.Spec.Template.Spec.Containers[0].Args
	for _, a := range []string{"--runner-service-account=replay-runner", "--runner-image=localhost/kafka-replay-runner:dev", "--runner-image-pull-policy=Never", "--zap-stacktrace-level=panic", "--workers=8", "--kube-api-qps=50.5", "--kube-api-burst=120", "--allowed-runner-images=localhost/kafka-replay-runner:,mirror.internal/kafka-replay/"} {
		if !slices.Contains(args, a) {
			t.Errorf("launcher args %v lack %s", args, a)
		}
	}
	if c := dep.Spec.Template.Spec.Containers[0]; c.Image != "localhost/kafka-replay-launcher:dev" || c.ImagePullPolicy != corev1.PullNever {
		t.Errorf("launcher image %s %s", c.Image, c.ImagePullPolicy)
	}
	checkRBAC(t, objs)
	checkMetricsReader(t, objs, "kr")

	for _, cj := range byKind(objs, "CronJob") {
		var c batchv1.CronJob
		into(t, cj, &c)
		if c.Spec.Suspend == nil || !*c.Spec.Suspend {
			t.Errorf("CronJob %s is not suspended", c.Name)
		}
		ps := c.Spec.JobTemplate.Spec.Template.Spec
		checkRestrictedPod(t, "runbook "+c.Name, &ps)
		if ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken {
			t.Errorf("runbook %s mounts a ServiceAccount token", c.Name)
		}
		if ps.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("runbook %s restartPolicy %s", c.Name, ps.RestartPolicy)
		}
		for _, e := range ps.Containers[0].Env {
			if !strings.HasPrefix(e.Name, config.EnvPrefix+"_") {
				t.Errorf("runbook %s env %s is not a runner setting", c.Name, e.Name)
			}
		}
	}
	pdb := one(t, objs, "PodDisruptionBudget")
	if _, ok, _ := unstructured.NestedFieldNoCopy(pdb.Object, "spec", "maxUnavailable"); ok {
		t.Error("minAvailable set: the PodDisruptionBudget must not also have maxUnavailable")
	}
}

// TestSchemaRejects: values.schema.json refuses bad values before anything
// renders, with a message that points at the value.
func TestSchemaRejects(t *testing.T) {
	good := map[string]any{
		"name": "rb", "group": "orders", "target": "ago:1h",
		"kafka": map[string]any{"bootstrapServers": "kafka:9092"},
	}
	runbook := func(mut func(map[string]any)) map[string]any {
		rb := map[string]any{}
		for k, v := range good {
			rb[k] = v
		}
		mut(rb)
		return map[string]any{"runbooks": []any{rb}}
	}
	cases := []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"unknown top-level key", map[string]any{"launchr": map[string]any{}}, "launchr"},
		{"unknown launcher key", map[string]any{"launcher": map[string]any{"replica": 2}}, "replica"},
		{"bad pull policy", map[string]any{"runner": map[string]any{"image": map[string]any{"pullPolicy": "Sometimes"}}}, "/runner/image/pullPolicy"},
		{"negative history", map[string]any{"launcher": map[string]any{"historyLimit": -1}}, "/launcher/historyLimit"},
		{"string replicas", map[string]any{"launcher": map[string]any{"replicas": "two"}}, "/launcher/replicas"},
		{"bad log level", map[string]any{"launcher": map[string]any{"logging": map[string]any{"level": "loud"}}}, "/launcher/logging/level"},
		{"bad digest", map[string]any{"launcher": map[string]any{"image": map[string]any{"digest": "md5:abc"}}}, "/launcher/image/digest"},
		{"allowed image with a comma", map[string]any{"runner": map[string]any{"allowedImages": []any{"a/,b/"}}}, "/runner/allowedImages/0"},
		{"bad quantity", map[string]any{"runner": map[string]any{"resources": map[string]any{"limits": map[string]any{"memory": "lots"}}}}, "/runner/resources/limits/memory"},
		{"runbook without group", runbook(func(rb map[string]any) { delete(rb, "group") }), "group"},
		{"runbook unknown key", runbook(func(rb map[string]any) { rb["traget"] = "earliest" }), "traget"},
		{"runbook bad name", runbook(func(rb map[string]any) { rb["name"] = "Orders_Rewind" }), "/runbooks/0/name"},
		{"runbook bad target kind", runbook(func(rb map[string]any) { rb["target"] = "yesterday" }), "/runbooks/0/target"},
		{"runbook time without zone", runbook(func(rb map[string]any) { rb["target"] = "time:2026-03-01T09:30:00" }), "/runbooks/0/target"},
		{"runbook shift without sign", runbook(func(rb map[string]any) { rb["target"] = "shift:100" }), "/runbooks/0/target"},
		{"runbook shift by zero", runbook(func(rb map[string]any) { rb["target"] = "shift:-0" }), "/runbooks/0/target"},
		{"runbook file target", runbook(func(rb map[string]any) { rb["target"] = "file:/x.json" }), "/runbooks/0/target"},
		{"runbook bootstrap without port", runbook(func(rb map[string]any) {
			rb["kafka"] = map[string]any{"bootstrapServers": "kafka"}
		}), "/runbooks/0/kafka/bootstrapServers"},
		{"runbook secretRef namespace", runbook(func(rb map[string]any) {
			rb["kafka"] = map[string]any{"bootstrapServers": "kafka:9092", "secretRef": map[string]any{"name": "s", "namespace": "other"}}
		}), "namespace"},
		{"runbook bad topic", runbook(func(rb map[string]any) { rb["topics"] = []any{map[string]any{"name": "orders/eu"}} }), "/runbooks/0/topics/0/name"},
		{"runbook negative partition", runbook(func(rb map[string]any) {
			rb["topics"] = []any{map[string]any{"name": "orders", "partitions": []any{-1}}}
		}), "/runbooks/0/topics/0/partitions/0"},
		{"runbook wait with fraction", runbook(func(rb map[string]any) { rb["waitForEmpty"] = "1.5m" }), "/runbooks/0/waitForEmpty"},
		{"runbook group with newline", runbook(func(rb map[string]any) { rb["group"] = "orders\nx" }), "/runbooks/0/group"},
		{"runbook lower-case commit mode", runbook(func(rb map[string]any) { rb["commitMode"] = "atomic" }), "/runbooks/0/commitMode"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := helm(t, renderArgs(t, "--values", writeValues(t, tc.values))...)
			if err == nil {
				t.Fatalf("values %v were accepted", tc.values)
			}
			if !strings.Contains(err.Error(), "schema") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error does not name %q:\n%v", tc.want, err)
			}
		})
	}

	// Checks the templates make beyond the schema.
	for name, tc := range map[string]struct {
		values map[string]any
		want   string
	}{
		"duplicate runbook": {map[string]any{"runbooks": []any{good, good}}, `"rb" is used twice`},
		"CronJob name too long": {map[string]any{"runbooks": []any{map[string]any{
			"name": strings.Repeat("r", 40), "group": "g", "target": "earliest", "kafka": map[string]any{"bootstrapServers": "k:1"},
		}}}, "longer than 52"},
		"runbook copies its own group": {map[string]any{"runbooks": []any{map[string]any{
			"name": "self", "group": "g", "target": "group:g", "kafka": map[string]any{"bootstrapServers": "k:1"},
		}}}, "copies the group being moved"},
		"runbook to latest without allowSkip": {map[string]any{"runbooks": []any{map[string]any{
			"name": "skip", "group": "g", "target": "latest", "kafka": map[string]any{"bootstrapServers": "k:1"},
		}}}, `runbooks[skip]: target "latest" moves the group past messages its consumers never handled; set allowSkip: true`},
		"runbook shifting forward without allowSkip": {map[string]any{"runbooks": []any{map[string]any{
			"name": "skip", "group": "g", "target": "shift:+5", "kafka": map[string]any{"bootstrapServers": "k:1"},
		}}}, "set allowSkip: true"},
		"ServiceMonitor without Service": {map[string]any{"metrics": map[string]any{
			"service": map[string]any{"enabled": false}, "serviceMonitor": map[string]any{"enabled": true},
		}}, "needs metrics.service.enabled"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := helm(t, renderArgs(t, "--values", writeValues(t, tc.values))...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error with %q, got %v", tc.want, err)
			}
		})
	}
}

// schemaDefs reads values.schema.json.
func schemaDefs(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(chartDir(t) + "/values.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s["definitions"].(map[string]any)
}

func prop(def map[string]any, path ...string) map[string]any {
	for _, p := range path {
		def = def["properties"].(map[string]any)[p].(map[string]any)
	}
	return def
}

// TestSchemaPatternsAgreeWithRunner: the schema's patterns for a runbook's
// target, group and bootstrap servers accept exactly what the runner's own
// parsers accept, on a table of samples, so a runbook that renders never
// fails later with exit code 2 for its shape. (file: targets are refused on
// purpose: a runbook has no file to point at.) Needs no helm.
func TestSchemaPatternsAgreeWithRunner(t *testing.T) {
	rb := schemaDefs(t)["runbook"].(map[string]any)
	target := prop(rb, "target")
	targetRE := regexp.MustCompile(target["pattern"].(string))
	zeroRE := regexp.MustCompile(target["not"].(map[string]any)["pattern"].(string))
	accepts := func(s string) bool { return targetRE.MatchString(s) && !zeroRE.MatchString(s) }
	for _, s := range []string{
		"earliest", "latest", "time:2026-03-01T09:30:00Z", "time:2026-03-01T09:30:00+01:00", "time:2026-03-01T09:30:00.123-05:30",
		"time:1767225600000", "ago:1h", "ago:90m", "ago:1h30m", "ago:1.5h", "ago:250ms", "offset:0", "offset:123",
		"shift:-100", "shift:+5", "group:other", "group:other group",
		"", "Earliest ", "time:2026-03-01T09:30:00", "time:yesterday", "ago:", "ago:-1h", "ago:0s", "ago:1d",
		"offset:-1", "offset:x", "shift:100", "shift:+0", "shift:-0", "group:", "group: lead", "file:/x.json", "plan:/x.json", "undo:/x.json",
		"earliest:1", "to:earliest",
	} {
		tg, err := config.ParseTarget(s)
		runner := err == nil && tg.Kind != config.KindFile
		// The runner also takes EARLIEST and surrounding spaces; the
		// schema is stricter on purpose, never looser.
		if accepts(s) && !runner {
			t.Errorf("schema accepts target %q, the runner refuses it: %v", s, err)
		}
		if !accepts(s) && runner && s == strings.TrimSpace(s) && s == strings.ToLower(s) {
			t.Errorf("schema refuses target %q, which the runner accepts", s)
		}
	}

	groupRE := regexp.MustCompile(prop(rb, "group")["pattern"].(string))
	for _, g := range []string{"orders", "orders-service.v2", "a b", "ünïcode", "x", " lead", "trail ", "new\nline", "tab\tin", "\x7f"} {
		runner := config.ValidateGroup(g) == nil
		if groupRE.MatchString(g) != runner {
			t.Errorf("group %q: schema %v, runner %v", g, groupRE.MatchString(g), runner)
		}
	}

	// The commit modes are the runner's, spelled as it spells them.
	var modes []string
	for _, m := range prop(rb, "commitMode")["enum"].([]any) {
		modes = append(modes, m.(string))
	}
	if !slices.Equal(modes, config.CommitModes) {
		t.Errorf("runbook commitMode enum %q, the runner's %q", modes, config.CommitModes)
	}

	bootRE := regexp.MustCompile(prop(rb, "kafka", "bootstrapServers")["pattern"].(string))
	for _, s := range []string{"kafka:9092", "a:1,b:2", "a:1, b:2", "SSL://k:9093", "SASL_SSL://k:9093", "[::1]:9092", "10.0.0.1:9092",
		"kafka", "kafka:0", "kafka:65536", "kafka:x", ":9092", "a b:1", "k:1,"} {
		runner := config.ValidateBootstrapServers(s) == nil
		if bootRE.MatchString(s) && !runner {
			t.Errorf("schema accepts bootstrap %q, the runner refuses it", s)
		}
		if !bootRE.MatchString(s) && runner && !strings.HasSuffix(s, ",") {
			t.Errorf("schema refuses bootstrap %q, which the runner accepts", s)
		}
	}
}

// TestGroupLabelMatchesLauncher: the chart's kafka-replay.labelValue gives
// the same kafkareplay.dev/group label as v1alpha1.LabelValue, so that
// `kubectl get jobs -l kafkareplay.dev/group=...` finds runbook Jobs and
// request Jobs alike.
func TestGroupLabelMatchesLauncher(t *testing.T) {
	groups := []string{
		"orders", "orders-service.v2", "Orders_Service", "a", "9", strings.Repeat("g", 63),
		strings.Repeat("g", 64), "billing consumers/v2", "-leading-dash", "trailing.", "ünïcode", "a:b", "x y",
		strings.Repeat("long group name ", 15) + "end",
	}
	var runbooks []any
	for i, g := range groups {
		runbooks = append(runbooks, map[string]any{
			"name": "rb" + itoa(int32(i)), "group": g, "target": "earliest",
			"kafka": map[string]any{"bootstrapServers": "kafka:9092"},
		})
	}
	objs := render(t, "--values", writeValues(t, map[string]any{"runbooks": runbooks}))
	cjs := byKind(objs, "CronJob")
	if len(cjs) != len(groups) {
		t.Fatalf("%d CronJobs for %d runbooks", len(cjs), len(groups))
	}
	for i, u := range cjs {
		var cj batchv1.CronJob
		into(t, u, &cj)
		want := v1alpha1.LabelValue(groups[i])
		for what, l := range map[string]map[string]string{"job": cj.Spec.JobTemplate.Labels, "pod": cj.Spec.JobTemplate.Spec.Template.Labels} {
			if got := l[v1alpha1.LabelGroup]; got != want {
				t.Errorf("group %q: %s label %q, launcher %q", groups[i], what, got, want)
			}
		}
		if got := cj.Spec.JobTemplate.Annotations[v1alpha1.AnnotationGroup]; got != groups[i] {
			t.Errorf("group annotation %q, want %q", got, groups[i])
		}
	}
}
