package chart

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// The Argo Workflows module whose CRDs the example is checked against. Its
// manifests are read as data; none of its code is built or linked.
const (
	argoModule  = "github.com/argoproj/argo-workflows/v4"
	argoVersion = "v4.0.5"
	// The "full" CRDs carry the whole OpenAPI schema, so the API server
	// checks every field of the WorkflowTemplate (the "minimal" ones accept
	// anything under spec).
	argoCRD = "manifests/base/crds/full/argoproj.io_workflowtemplates.yaml"
)

func argoExample(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "argo-workflowtemplate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeObjects(string(b))
	if err != nil || len(objs) != 1 || objs[0].GetKind() != "WorkflowTemplate" {
		t.Fatalf("docs/argo-workflowtemplate.yaml: want one WorkflowTemplate, got %d objects (%v)", len(objs), err)
	}
	return objs[0]
}

// argoTemplate is the part of an Argo template the contract test reads.
type argoTemplate struct {
	Name          string            `json:"name"`
	Container     *corev1.Container `json:"container"`
	Volumes       []corev1.Volume   `json:"volumes"`
	RetryStrategy *struct {
		Expression string `json:"expression"`
	} `json:"retryStrategy"`
	SecurityContext *corev1.PodSecurityContext `json:"securityContext"`
	Outputs         struct {
		Parameters []struct {
			Name      string `json:"name"`
			ValueFrom struct {
				Path string `json:"path"`
			} `json:"valueFrom"`
		} `json:"parameters"`
	} `json:"outputs"`
	Steps [][]struct {
		Name string `json:"name"`
		When string `json:"when"`
	} `json:"steps"`
}

// TestArgoTemplateContract checks the example against the runner's contract
// (no cluster, no helm): only REPLAY_* settings the runner knows, the result
// file on a writable emptyDir and exposed as the output parameter, the
// restricted security context, a retry only for the exit codes
// report.ExitCode.Retryable says a retry can fix, a branch for each of the
// codes that tell the user what to do, and a mutex per group.
func TestArgoTemplateContract(t *testing.T) {
	wt := argoExample(t)
	var spec struct {
		Templates       []argoTemplate `json:"templates"`
		Synchronization struct {
			Mutexes []struct {
				Name string `json:"name"`
			} `json:"mutexes"`
		} `json:"synchronization"`
	}
	b, err := json.Marshal(wt.Object["spec"])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	var runner, main *argoTemplate
	for i := range spec.Templates {
		switch spec.Templates[i].Name {
		case "kafka-replay-runner":
			runner = &spec.Templates[i]
		case "main":
			main = &spec.Templates[i]
		}
	}
	if runner == nil || runner.Container == nil || main == nil {
		t.Fatal("the example needs a main steps template and a kafka-replay-runner container template")
	}

	known := map[string]bool{}
	for _, n := range []string{config.EnvBootstrapServers, config.EnvGroup, config.EnvTopics, config.EnvTo, config.EnvDryRun,
		config.EnvKafkaConfigDir, config.EnvResultFile, config.EnvTerminationMessagePath, config.EnvRunID,
		config.EnvWaitForEmpty, config.EnvOutput, config.EnvTimeout, config.EnvAllowSkip, config.EnvMaxMessagesToReconsume} {
		known[n] = true
	}
	env := map[string]string{}
	for _, e := range runner.Container.Env {
		if !known[e.Name] {
			t.Errorf("env %s is not a runner setting (runner/config)", e.Name)
		}
		env[e.Name] = e.Value
	}
	for _, n := range []string{config.EnvBootstrapServers, config.EnvGroup, config.EnvTo, config.EnvRunID, config.EnvResultFile} {
		if env[n] == "" {
			t.Errorf("the runner step does not set %s", n)
		}
	}

	// The result file: where the runner writes it, on an emptyDir (the root
	// filesystem is read-only), exposed as the output parameter.
	resultFile := env[config.EnvResultFile]
	var onEmptyDir bool
	for _, m := range runner.Container.VolumeMounts {
		if strings.HasPrefix(resultFile, strings.TrimSuffix(m.MountPath, "/")+"/") && !m.ReadOnly {
			for _, v := range runner.Volumes {
				onEmptyDir = onEmptyDir || (v.Name == m.Name && v.EmptyDir != nil)
			}
		}
	}
	if !onEmptyDir {
		t.Errorf("%s=%s is not on a writable emptyDir mount", config.EnvResultFile, resultFile)
	}
	if len(runner.Outputs.Parameters) != 1 || runner.Outputs.Parameters[0].Name != "result" || runner.Outputs.Parameters[0].ValueFrom.Path != resultFile {
		t.Errorf("the output parameter must be `result` from %s: %+v", resultFile, runner.Outputs.Parameters)
	}

	checkRestrictedPod(t, "argo runner step", &corev1.PodSpec{SecurityContext: runner.SecurityContext, Containers: []corev1.Container{*runner.Container}})

	// Retries: exactly the retryable exit codes.
	var retryable []string
	for code := report.ExitInternal; code <= report.ExitInterrupted; code++ {
		if code.Retryable() {
			retryable = append(retryable, strconv.Itoa(int(code)))
		}
	}
	want := "asInt(lastRetry.exitCode) in [" + strings.Join(retryable, ", ") + "]"
	if runner.RetryStrategy == nil || runner.RetryStrategy.Expression != want {
		t.Errorf("retryStrategy.expression: want %q, got %+v", want, runner.RetryStrategy)
	}

	// Branches on the exit code after the replay step.
	var whens []string
	for _, group := range main.Steps {
		for _, s := range group {
			if s.When != "" {
				whens = append(whens, s.When)
			}
		}
	}
	for _, code := range []report.ExitCode{report.ExitOK, report.ExitInvalidInput, report.ExitGroupActive, report.ExitRefused} {
		w := "{{steps.replay.exitCode}} == " + strconv.Itoa(int(code))
		if !slices.Contains(whens, w) {
			t.Errorf("no step `when: %s` (%s)", w, report.ReasonForExitCode(code))
		}
	}
	re := regexp.MustCompile(`\{\{steps\.replay\.exitCode\}\} != 0`)
	if !slices.ContainsFunc(whens, re.MatchString) {
		t.Error("no step for the other failures")
	}
	// One replay of a group at a time: a workflow-level mutex keyed by the
	// group (the end-to-end suite shows a second workflow wait for it).
	if m := spec.Synchronization.Mutexes; len(m) != 1 || !strings.Contains(m[0].Name, "{{workflow.parameters.group}}") {
		t.Errorf("spec.synchronization.mutexes: want one mutex named after {{workflow.parameters.group}}, got %+v", m)
	}
	checkArgoReferences(t, wt)
}

// checkArgoReferences does what Argo's own validation does for references
// (its code is not linked here): every {{workflow.parameters.x}} is a
// workflow argument, every {{inputs.parameters.x}} an input of its template,
// every {{steps.s....}} an earlier step of the same steps template, and
// every step calls a template that exists with the parameters it declares.
func checkArgoReferences(t *testing.T, wt *unstructured.Unstructured) {
	t.Helper()
	var spec struct {
		Arguments struct {
			Parameters []struct {
				Name string `json:"name"`
			} `json:"parameters"`
		} `json:"arguments"`
		Entrypoint string            `json:"entrypoint"`
		Templates  []json.RawMessage `json:"templates"`
	}
	b, err := json.Marshal(wt.Object["spec"])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	workflowParams := map[string]bool{}
	for _, p := range spec.Arguments.Parameters {
		workflowParams[p.Name] = true
	}
	type step struct {
		Name      string `json:"name"`
		Template  string `json:"template"`
		When      string `json:"when"`
		Arguments struct {
			Parameters []struct {
				Name string `json:"name"`
			} `json:"parameters"`
		} `json:"arguments"`
	}
	type tmpl struct {
		Name   string `json:"name"`
		Inputs struct {
			Parameters []struct {
				Name string `json:"name"`
			} `json:"parameters"`
		} `json:"inputs"`
		Steps [][]step `json:"steps"`
	}
	templates := map[string]tmpl{}
	raw := map[string]string{}
	for _, r := range spec.Templates {
		var tp tmpl
		if err := json.Unmarshal(r, &tp); err != nil {
			t.Fatal(err)
		}
		templates[tp.Name] = tp
		raw[tp.Name] = string(r)
	}
	if _, ok := templates[spec.Entrypoint]; !ok {
		t.Errorf("entrypoint %q is not a template", spec.Entrypoint)
	}
	ref := regexp.MustCompile(`\{\{\s*([a-z]+)\.([A-Za-z0-9_.-]+?)\s*\}\}`)
	for name, tp := range templates {
		inputs := map[string]bool{}
		for _, p := range tp.Inputs.Parameters {
			inputs[p.Name] = true
		}
		seenSteps := map[string]bool{}
		for _, group := range tp.Steps {
			for _, s := range group {
				called, ok := templates[s.Template]
				if !ok {
					t.Errorf("step %s calls unknown template %q", s.Name, s.Template)
					continue
				}
				var want, got []string
				for _, p := range called.Inputs.Parameters {
					want = append(want, p.Name)
				}
				for _, p := range s.Arguments.Parameters {
					got = append(got, p.Name)
				}
				slices.Sort(want)
				slices.Sort(got)
				if !slices.Equal(want, got) {
					t.Errorf("step %s passes %v to %s, which takes %v", s.Name, got, s.Template, want)
				}
			}
			// Steps of a group may refer only to earlier groups.
			for _, s := range group {
				sb, _ := json.Marshal(s)
				for _, m := range ref.FindAllStringSubmatch(string(sb), -1) {
					if m[1] == "steps" && !seenSteps[strings.SplitN(m[2], ".", 2)[0]] {
						t.Errorf("step %s refers to {{steps.%s}} before that step ran", s.Name, m[2])
					}
				}
			}
			for _, s := range group {
				seenSteps[s.Name] = true
			}
		}
		for _, m := range ref.FindAllStringSubmatch(raw[name], -1) {
			switch m[1] {
			case "workflow":
				if p, ok := strings.CutPrefix(m[2], "parameters."); ok && !workflowParams[p] {
					t.Errorf("template %s uses undeclared {{workflow.parameters.%s}}", name, p)
				} else if !ok && m[2] != "uid" && m[2] != "name" && m[2] != "namespace" {
					t.Errorf("template %s uses {{workflow.%s}}", name, m[2])
				}
			case "inputs":
				if p, ok := strings.CutPrefix(m[2], "parameters."); !ok || !inputs[p] {
					t.Errorf("template %s uses {{inputs.%s}}, not one of its inputs", name, m[2])
				}
			case "steps":
				if len(tp.Steps) == 0 {
					t.Errorf("template %s refers to {{steps.%s}} outside a steps template", name, m[2])
				}
			default:
				t.Errorf("template %s: unknown reference {{%s.%s}}", name, m[1], m[2])
			}
		}
	}
}

// argoCRDPath finds the WorkflowTemplate CRD in the Argo Workflows module,
// downloading the module through the Go module proxy on first use (into the
// module cache; about 12 MB).
func argoCRDPath(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", argoModule+"@"+argoVersion)
	cmd.Dir = t.TempDir() // outside this module: its go.mod is not touched
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download %s@%s: %v\n%s%s", argoModule, argoVersion, err, stderr.String(), out)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download %s@%s: %v %s\n%s", argoModule, argoVersion, err, mod.Error, out)
	}
	p := filepath.Join(mod.Dir, filepath.FromSlash(argoCRD))
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestArgoWorkflowTemplateDryRun installs Argo's full WorkflowTemplate CRD,
// taken as data from the Argo Workflows Go module, into envtest and
// server-side dry-run applies docs/argo-workflowtemplate.yaml. A copy with a
// misspelt field must be refused, which shows the schema really is checked.
func TestArgoWorkflowTemplateDryRun(t *testing.T) {
	cfg := controlPlane(t)
	crdPath := argoCRDPath(t)
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{crdPath}, ErrorIfPathMissing: true}); err != nil {
		t.Fatalf("installing %s: %v", crdPath, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, warn := newClient(t, cfg)
	const ns = "argo"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}

	wt := argoExample(t)
	wt.SetNamespace(ns)
	if err := dryRunApply(ctx, c, wt); err != nil {
		t.Fatalf("docs/argo-workflowtemplate.yaml refused: %v", err)
	}
	if w := warn.take(); len(w) > 0 {
		t.Errorf("API server warnings: %q", w)
	}

	bad := wt.DeepCopy()
	templates, _, _ := unstructured.NestedSlice(bad.Object, "spec", "templates")
	for _, tpl := range templates {
		m := tpl.(map[string]any)
		if m["name"] == "kafka-replay-runner" {
			m["retryStrategy"].(map[string]any)["limitt"] = "2"
		}
	}
	if err := unstructured.SetNestedSlice(bad.Object, templates, "spec", "templates"); err != nil {
		t.Fatal(err)
	}
	err := dryRunApply(ctx, c, bad)
	if err == nil || !strings.Contains(err.Error(), "limitt") {
		b, _ := yaml.Marshal(bad.Object["spec"])
		t.Errorf("a WorkflowTemplate with a misspelt field was not refused (is the CRD's schema checked?): %v\n%s", err, b)
	}
	warn.take()
}
