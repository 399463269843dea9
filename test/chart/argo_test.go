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
	Inputs          struct {
		Parameters []argoParam `json:"parameters"`
		Artifacts  []struct {
			Name     string `json:"name"`
			Path     string `json:"path"`
			Optional bool   `json:"optional"`
		} `json:"artifacts"`
	} `json:"inputs"`
	Outputs struct {
		Parameters []struct {
			Name      string `json:"name"`
			ValueFrom struct {
				Path string `json:"path"`
			} `json:"valueFrom"`
		} `json:"parameters"`
	} `json:"outputs"`
	Suspend *struct{}    `json:"suspend"`
	Steps   [][]argoStep `json:"steps"`
}

type argoParam struct {
	Name    string   `json:"name"`
	Value   *string  `json:"value"`
	Default *string  `json:"default"`
	Enum    []string `json:"enum"`
}

type argoStep struct {
	Name      string `json:"name"`
	Template  string `json:"template"`
	When      string `json:"when"`
	Arguments struct {
		Parameters []argoParam `json:"parameters"`
		Artifacts  []struct {
			Name string `json:"name"`
			Raw  *struct {
				Data string `json:"data"`
			} `json:"raw"`
		} `json:"artifacts"`
	} `json:"arguments"`
}

// param is the value the step passes for the parameter name ("" and false
// when it passes none).
func (s argoStep) param(name string) (string, bool) {
	for _, p := range s.Arguments.Parameters {
		if p.Name == name && p.Value != nil {
			return *p.Value, true
		}
	}
	return "", false
}

// rawArtifact is the raw data the step passes for the artifact name.
func (s argoStep) rawArtifact(name string) (string, bool) {
	for _, a := range s.Arguments.Artifacts {
		if a.Name == name && a.Raw != nil {
			return a.Raw.Data, true
		}
	}
	return "", false
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
		Arguments struct {
			Parameters []argoParam `json:"parameters"`
		} `json:"arguments"`
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
	templates := map[string]*argoTemplate{}
	for i := range spec.Templates {
		templates[spec.Templates[i].Name] = &spec.Templates[i]
	}
	runner, main, outcome := templates["kafka-replay-runner"], templates["main"], templates["outcome"]
	if runner == nil || runner.Container == nil || main == nil || outcome == nil {
		t.Fatal("the example needs a main steps template, an outcome steps template and a kafka-replay-runner container template")
	}

	known := map[string]bool{}
	for _, n := range []string{config.EnvBootstrapServers, config.EnvGroup, config.EnvTopics, config.EnvTo, config.EnvDryRun,
		config.EnvKafkaConfigDir, config.EnvKafkaSecretDir, config.EnvResultFile, config.EnvTerminationMessagePath, config.EnvRunID,
		config.EnvWaitForEmpty, config.EnvOutput, config.EnvTimeout, config.EnvAllowSkip, config.EnvMaxMessagesToReconsume,
		config.EnvForce, config.EnvCommitMode, config.EnvGroupType} {
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

	// Branches on the exit code: the outcome template, which every replay
	// step hands its exit code and result to.
	var whens []string
	for _, group := range outcome.Steps {
		for _, s := range group {
			if s.When != "" {
				whens = append(whens, s.When)
			}
		}
	}
	for _, code := range []report.ExitCode{report.ExitOK, report.ExitInvalidInput, report.ExitGroupActive, report.ExitRefused, report.ExitSuperseded} {
		w := "{{inputs.parameters.exit-code}} == " + strconv.Itoa(int(code))
		if !slices.Contains(whens, w) {
			t.Errorf("outcome: no step `when: %s` (%s)", w, report.ReasonForExitCode(code))
		}
	}
	re := regexp.MustCompile(`\{\{inputs\.parameters\.exit-code\}\} != 0`)
	if !slices.ContainsFunc(whens, re.MatchString) {
		t.Error("outcome: no step for the other failures")
	}
	// The commit-mode parameter offers the runner's modes, and no other.
	if i := slices.IndexFunc(spec.Arguments.Parameters, func(p argoParam) bool { return p.Name == "commit-mode" }); i < 0 ||
		env[config.EnvCommitMode] != "{{workflow.parameters.commit-mode}}" ||
		!slices.Equal(slices.Sorted(slices.Values(spec.Arguments.Parameters[i].Enum)), slices.Sorted(slices.Values(config.CommitModes))) {
		t.Errorf("want a commit-mode parameter with the runner's modes %v, passed as %s", config.CommitModes, config.EnvCommitMode)
	}
	checkArgoInputFiles(t, spec.Arguments.Parameters, templates)
	checkArgoKafkaDirs(t, spec.Arguments.Parameters, templates)
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
	type tmpl struct {
		Name   string `json:"name"`
		Inputs struct {
			Parameters []argoParam `json:"parameters"`
			Artifacts  []struct {
				Name     string `json:"name"`
				Optional bool   `json:"optional"`
			} `json:"artifacts"`
		} `json:"inputs"`
		Steps [][]argoStep `json:"steps"`
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
	// Argo's expression templates, {{=...}}, and the names they use.
	expr := regexp.MustCompile(`\{\{=.*?\}\}`)
	exprSteps := regexp.MustCompile(`\bsteps\.([A-Za-z0-9_-]+)\.`)
	exprParams := regexp.MustCompile(`\bworkflow\.parameters(?:\.([A-Za-z0-9_]+)|\['([A-Za-z0-9_.-]+)'\])`)
	exprInputs := regexp.MustCompile(`\binputs\.parameters(?:\.([A-Za-z0-9_]+)|\['([A-Za-z0-9_.-]+)'\])`)
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
				// Every parameter passed is declared; every one declared
				// without a default is passed. The same for artifacts, where
				// only an optional one may be left out.
				declared, passed := map[string]bool{}, map[string]bool{}
				for _, p := range s.Arguments.Parameters {
					passed[p.Name] = true
				}
				for _, p := range called.Inputs.Parameters {
					declared[p.Name] = true
					if p.Default == nil && p.Value == nil && !passed[p.Name] {
						t.Errorf("step %s does not pass %s to %s, which has no default for it", s.Name, p.Name, s.Template)
					}
				}
				for _, p := range s.Arguments.Parameters {
					if !declared[p.Name] {
						t.Errorf("step %s passes %s to %s, which does not take it", s.Name, p.Name, s.Template)
					}
				}
				declaredArt, passedArt := map[string]bool{}, map[string]bool{}
				for _, a := range s.Arguments.Artifacts {
					passedArt[a.Name] = true
				}
				for _, a := range called.Inputs.Artifacts {
					declaredArt[a.Name] = true
					if !a.Optional && !passedArt[a.Name] {
						t.Errorf("step %s does not pass the artifact %s to %s", s.Name, a.Name, s.Template)
					}
				}
				for _, a := range s.Arguments.Artifacts {
					if !declaredArt[a.Name] {
						t.Errorf("step %s passes the artifact %s to %s, which does not take it", s.Name, a.Name, s.Template)
					}
				}
			}
			// Steps of a group may refer only to earlier groups, in a
			// {{steps...}} reference or inside an {{=expression}}.
			for _, s := range group {
				sb, _ := json.Marshal(s)
				for _, m := range ref.FindAllStringSubmatch(string(sb), -1) {
					if m[1] == "steps" && !seenSteps[strings.SplitN(m[2], ".", 2)[0]] {
						t.Errorf("step %s refers to {{steps.%s}} before that step ran", s.Name, m[2])
					}
				}
				for _, e := range expr.FindAllString(string(sb), -1) {
					for _, m := range exprSteps.FindAllStringSubmatch(e, -1) {
						if !seenSteps[m[1]] {
							t.Errorf("step %s's expression %s refers to step %s before it ran", s.Name, e, m[1])
						}
					}
				}
			}
			for _, s := range group {
				seenSteps[s.Name] = true
			}
		}
		for _, e := range expr.FindAllString(raw[name], -1) {
			for _, m := range exprParams.FindAllStringSubmatch(e, -1) {
				if p := m[1] + m[2]; !workflowParams[p] {
					t.Errorf("template %s: expression %s uses undeclared workflow parameter %s", name, e, p)
				}
			}
			for _, m := range exprInputs.FindAllStringSubmatch(e, -1) {
				if p := m[1] + m[2]; !inputs[p] {
					t.Errorf("template %s: expression %s uses %s, not one of its inputs", name, e, p)
				}
			}
			if exprSteps.MatchString(e) && len(tp.Steps) == 0 {
				t.Errorf("template %s: expression %s refers to steps outside a steps template", name, e)
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

// argoInputMaxBytes bounds a plan or undo-of file in the Argo template.
const argoInputMaxBytes = 262144

// checkArgoInputFiles checks the paths that hand the runner a file: the
// workflow parameters plan and undo-of (beside target, each optional at
// submit), delivered through the runner template's input artifact as a
// plan: or undo: target at the artifact's path; and the review entrypoint:
// a dry run, a suspended step with the plan's digest, then exactly that
// plan applied, each outcome through the outcome template.
func checkArgoInputFiles(t *testing.T, params []argoParam, templates map[string]*argoTemplate) {
	t.Helper()
	byName := map[string]argoParam{}
	for _, p := range params {
		byName[p.Name] = p
	}
	// Exactly one of these is set at submit, so none may be required.
	for _, n := range []string{"target", "plan", "undo-of"} {
		if p, ok := byName[n]; !ok || p.Value == nil || *p.Value != "" {
			t.Errorf("workflow parameter %s: want one with value \"\" (exactly one of target, plan and undo-of is set), got %+v", n, p)
		}
	}

	runner := templates["kafka-replay-runner"]
	inputs := map[string]string{}
	for _, p := range runner.Inputs.Parameters {
		if p.Default == nil {
			t.Errorf("runner input %s has no default: a workflow of the user's own calling the template without arguments needs one", p.Name)
			continue
		}
		inputs[p.Name] = *p.Default
	}
	for in, wp := range map[string]string{"to": "target", "topics": "topics", "dry-run": "dry-run"} {
		if inputs[in] != "{{workflow.parameters."+wp+"}}" {
			t.Errorf("runner input %s: default %q, want {{workflow.parameters.%s}}", in, inputs[in], wp)
		}
	}
	env := map[string]string{}
	for _, e := range runner.Container.Env {
		env[e.Name] = e.Value
	}
	for n, in := range map[string]string{config.EnvTo: "to", config.EnvTopics: "topics", config.EnvDryRun: "dry-run"} {
		if env[n] != "{{inputs.parameters."+in+"}}" {
			t.Errorf("runner env %s=%q, want {{inputs.parameters.%s}}", n, env[n], in)
		}
	}
	if env[config.EnvForce] != "{{workflow.parameters.force}}" {
		t.Errorf("runner env %s=%q, want {{workflow.parameters.force}}", config.EnvForce, env[config.EnvForce])
	}
	if p := byName["force"]; p.Value == nil || *p.Value != "false" {
		t.Errorf("workflow parameter force: want default \"false\", got %+v", p)
	}
	// The input file: an optional artifact (a target resolved now passes
	// none, or an empty one) at a path of its own, read-only to the runner,
	// away from its result file and its config directory.
	path := ""
	for _, a := range runner.Inputs.Artifacts {
		if a.Name == "input" {
			path = a.Path
			if !a.Optional {
				t.Error("runner input artifact input must be optional")
			}
		}
	}
	if !filepath.IsAbs(path) {
		t.Fatalf("runner input artifact input: path %q, want an absolute path", path)
	}
	for _, m := range runner.Container.VolumeMounts {
		if strings.HasPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/") {
			t.Errorf("input artifact path %s is under the volume mount %s: Argo would copy it into that volume", path, m.MountPath)
		}
	}
	planTarget, undoTarget := string(config.KindPlan)+":"+path, string(config.KindUndo)+":"+path

	// main: the replay chooses its target from the one parameter set, the
	// file from plan or undo-of, and hands its outcome on.
	main := templates["main"]
	if len(main.Steps) != 2 || len(main.Steps[0]) != 1 || len(main.Steps[1]) != 1 {
		t.Fatalf("main: want the replay step, then the outcome step; got %+v", main.Steps)
	}
	replay := main.Steps[0][0]
	to, _ := replay.param("to")
	// The size bound: a file above it is refused (exit 2) before the runner
	// reads anything, since a Workflow Argo can no longer store still runs
	// its runner pod (docs/usage.md, How large a plan fits).
	bound := "len(workflow.parameters.plan) + len(workflow.parameters['undo-of']) > " + strconv.Itoa(argoInputMaxBytes)
	for _, want := range []string{"'" + planTarget + "'", "'" + undoTarget + "'", "workflow.parameters.target", "workflow.parameters.plan", "workflow.parameters['undo-of']", "set exactly one of", bound} {
		if !strings.Contains(to, want) {
			t.Errorf("main: the replay's to %q does not contain %q", to, want)
		}
	}
	if !strings.HasPrefix(to, "{{=") || !strings.HasSuffix(to, "}}") {
		t.Errorf("main: the replay's to is not one Argo expression: %q", to)
	}
	if d, _ := replay.rawArtifact("input"); d != "{{workflow.parameters.plan}}{{workflow.parameters.undo-of}}" {
		t.Errorf("main: the replay's input artifact %q, want the raw data of plan and undo-of", d)
	}
	checkOutcomeStep(t, "main", main.Steps[1][0], "replay", "")

	// review: plan (a dry run), approve (suspended, with the digest), apply
	// exactly the plan, outcome; a refused plan goes to the outcome at once.
	review := templates["review"]
	if review == nil {
		t.Fatal("no review template")
	}
	var names [][]string
	for _, g := range review.Steps {
		var n []string
		for _, s := range g {
			n = append(n, s.Name)
		}
		names = append(names, n)
	}
	if !slices.EqualFunc(names, [][]string{{"plan"}, {"plan-failed", "approve"}, {"replay"}, {"outcome"}}, slices.Equal[[]string]) {
		t.Fatalf("review steps %v, want [[plan] [plan-failed approve] [replay] [outcome]]", names)
	}
	plan, planFailed, approve, apply := review.Steps[0][0], review.Steps[1][0], review.Steps[1][1], review.Steps[2][0]
	if plan.Template != "kafka-replay-runner" || apply.Template != "kafka-replay-runner" {
		t.Errorf("review: plan and replay must call the runner, got %s and %s", plan.Template, apply.Template)
	}
	if d, _ := plan.param("dry-run"); d != "true" {
		t.Errorf("review: the plan step's dry-run is %q, want true", d)
	}
	if p, _ := plan.param("to"); p != to {
		t.Errorf("review: the plan step's to %q differs from main's %q", p, to)
	}
	ok0 := "{{steps.plan.exitCode}} == 0"
	for _, s := range []argoStep{approve, apply, review.Steps[3][0]} {
		if s.When != ok0 {
			t.Errorf("review: step %s runs when %q, want %q (only after a plan)", s.Name, s.When, ok0)
		}
	}
	checkOutcomeStep(t, "review", planFailed, "plan", "{{steps.plan.exitCode}} != 0")
	checkOutcomeStep(t, "review", review.Steps[3][0], "replay", ok0)
	if a := templates[approve.Template]; a == nil || a.Suspend == nil {
		t.Errorf("review: approve calls %q, not a suspend template", approve.Template)
	}
	if d, _ := approve.param("digest"); d != "{{=jsonpath(steps.plan.outputs.parameters.result, '$.plan')}}" {
		t.Errorf("review: approve's digest %q is not the plan's result.plan", d)
	}
	// Exactly the plan: the dry run's result as the file, plan: its target,
	// no scope of its own (the file is the scope), a real run.
	for n, want := range map[string]string{"topics": "", "dry-run": "false"} {
		if v, ok := apply.param(n); !ok || v != want {
			t.Errorf("review: the replay's %s is %q, want %q", n, v, want)
		}
	}
	applyTo, _ := apply.param("to")
	for _, want := range []string{"len(steps.plan.outputs.parameters.result) > " + strconv.Itoa(argoInputMaxBytes), ": '" + planTarget + "'}}"} {
		if !strings.Contains(applyTo, want) {
			t.Errorf("review: the replay's to %q does not contain %q", applyTo, want)
		}
	}
	// Both sentences the bound gives the runner are refused as targets,
	// whole: no colon, so the runner quotes them rather than a "kind".
	for _, e := range []string{to, applyTo} {
		for _, m := range regexp.MustCompile(`'([^']*)'`).FindAllStringSubmatch(e, -1) {
			if strings.Contains(m[1], " ") && strings.Contains(m[1], ":") {
				t.Errorf("the sentence %q has a colon: the runner would read it as a target kind", m[1])
			}
		}
	}
	if d, _ := apply.rawArtifact("input"); d != "{{steps.plan.outputs.parameters.result}}" {
		t.Errorf("review: the replay's input artifact %q, want the plan step's result", d)
	}
}

// checkOutcomeStep: the step hands the outcome template the exit code and
// result of step from, running when want.
func checkOutcomeStep(t *testing.T, where string, s argoStep, from, when string) {
	t.Helper()
	if s.Template != "outcome" || s.When != when {
		t.Errorf("%s: step %s calls %s when %q, want outcome when %q", where, s.Name, s.Template, s.When, when)
	}
	if v, _ := s.param("exit-code"); v != "{{steps."+from+".exitCode}}" {
		t.Errorf("%s: step %s's exit-code %q, want {{steps.%s.exitCode}}", where, s.Name, v, from)
	}
	if v, _ := s.param("result"); v != "{{steps."+from+".outputs.parameters.result}}" {
		t.Errorf("%s: step %s's result %q, want {{steps.%s.outputs.parameters.result}}", where, s.Name, v, from)
	}
}

// argoChoice matches the template's way of giving the runner an object
// only when its parameter names one: {{=workflow.parameters['p'] != ” ?
// A : B}}, A and B each a quoted string or the parameter itself.
var argoChoice = regexp.MustCompile(`^\{\{=workflow\.parameters\['([a-z-]+)'\] != '' \? ('[^']*'|workflow\.parameters\['[a-z-]+'\]) : ('[^']*')\}\}$`)

// evalArgoChoice evaluates an argoChoice expression for the parameter's
// value v: what Argo substitutes. ok is false for any other expression.
func evalArgoChoice(expr, param, v string) (string, bool) {
	m := argoChoice.FindStringSubmatch(expr)
	if m == nil || m[1] != param {
		return "", false
	}
	pick := m[3]
	if v != "" {
		pick = m[2]
	}
	if pick == "workflow.parameters['"+param+"']" {
		return v, true
	}
	if strings.HasPrefix(pick, "workflow.") {
		return "", false // another parameter
	}
	return strings.Trim(pick, "'"), true
}

// checkArgoKafkaDirs checks issue 10's rule on the Argo path: the
// kafka-secret parameter's Secret reaches the runner only as its secret
// directory (REPLAY_KAFKA_SECRET_DIR, where the runner reads the
// credentials' binding, bootstrap.servers), never as its config
// directory, from which whoever submits could not bind it; the kafka-config
// parameter's ConfigMap only as the config directory. With a parameter
// empty (its default) the runner gets no such directory at all: an empty
// secret directory is refused as unbound, so an unset variable is the only
// way to run without credentials.
func checkArgoKafkaDirs(t *testing.T, params []argoParam, templates map[string]*argoTemplate) {
	t.Helper()
	for _, n := range []string{"kafka-secret", "kafka-config"} {
		found := false
		for _, p := range params {
			if p.Name == n {
				found = true
				if p.Value == nil || *p.Value != "" {
					t.Errorf("workflow parameter %s: want default \"\" (none), got %v", n, p.Value)
				}
			}
		}
		if !found {
			t.Errorf("no workflow parameter %s", n)
		}
	}
	runner := templates["kafka-replay-runner"]
	env := map[string]string{}
	for _, e := range runner.Container.Env {
		env[e.Name] = e.Value
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range runner.Container.VolumeMounts {
		mounts[m.Name] = m
	}
	const name = "orders-credentials" // any name a submitter gives
	for _, c := range []struct {
		param, env string
		object     func(corev1.Volume) (string, *bool)
	}{
		{"kafka-secret", config.EnvKafkaSecretDir, func(v corev1.Volume) (string, *bool) {
			if v.Secret == nil {
				return "", nil
			}
			return v.Secret.SecretName, v.Secret.Optional
		}},
		{"kafka-config", config.EnvKafkaConfigDir, func(v corev1.Volume) (string, *bool) {
			if v.ConfigMap == nil {
				return "", nil
			}
			return v.ConfigMap.Name, v.ConfigMap.Optional
		}},
	} {
		// Exactly one volume names the parameter's object, of the right kind.
		var dirs []string
		for _, v := range runner.Volumes {
			b, _ := json.Marshal(v)
			if !strings.Contains(string(b), "'"+c.param+"'") && !strings.Contains(string(b), "parameters."+c.param) {
				continue
			}
			obj, optional := c.object(v)
			got, ok := evalArgoChoice(obj, c.param, name)
			if !ok || got != name {
				t.Errorf("volume %s: %q does not name the %s parameter's object (it gives %q for %q)", v.Name, obj, c.param, got, name)
				continue
			}
			if none, _ := evalArgoChoice(obj, c.param, ""); none == "" {
				t.Errorf("volume %s: without %s it names no object (%q): the pod would be refused", v.Name, c.param, obj)
			}
			// A Secret that does not exist is an empty, unbound secret
			// directory (exit 2); the pod must start to say so.
			if optional == nil || !*optional {
				t.Errorf("volume %s: want optional: true", v.Name)
			}
			m, ok := mounts[v.Name]
			if !ok || !m.ReadOnly || m.SubPath != "" {
				t.Errorf("volume %s: want one read-only mount of the whole volume, got %+v", v.Name, m)
				continue
			}
			dirs = append(dirs, m.MountPath)
		}
		if len(dirs) != 1 {
			t.Errorf("%s: want exactly one volume with its object, mounted, got mounts %q", c.param, dirs)
			continue
		}
		dir := dirs[0]
		// The variable names that mount when the parameter is set, and is
		// empty when it is not.
		if got, ok := evalArgoChoice(env[c.env], c.param, name); !ok || got != dir {
			t.Errorf("%s=%q: with %s set want %s, got %q", c.env, env[c.env], c.param, dir, got)
		}
		if got, ok := evalArgoChoice(env[c.env], c.param, ""); !ok || got != "" {
			t.Errorf("%s=%q: without %s want empty (no directory), got %q", c.env, env[c.env], c.param, got)
		}
		// No other variable reaches that directory, or the parameter.
		for _, e := range runner.Container.Env {
			if e.Name == c.env {
				continue
			}
			if reachesDir(e.Value, dir) || strings.Contains(e.Value, "'"+c.param+"'") || strings.Contains(e.Value, "parameters."+c.param) {
				t.Errorf("%s=%q reaches the %s parameter's object, which only %s may", e.Name, e.Value, c.param, c.env)
			}
		}
	}
	// The directories apart: neither inside the other.
	sd, _ := evalArgoChoice(env[config.EnvKafkaSecretDir], "kafka-secret", name)
	cd, _ := evalArgoChoice(env[config.EnvKafkaConfigDir], "kafka-config", name)
	if sd == "" || cd == "" || strings.HasPrefix(sd+"/", cd+"/") || strings.HasPrefix(cd+"/", sd+"/") {
		t.Errorf("secret directory %q and config directory %q must be two directories, neither inside the other", sd, cd)
	}
	// No other template mounts either object.
	for n, tp := range templates {
		if n == "kafka-replay-runner" {
			continue
		}
		b, _ := json.Marshal(tp)
		for _, p := range []string{"kafka-secret", "kafka-config"} {
			if strings.Contains(string(b), "'"+p+"'") || strings.Contains(string(b), "parameters."+p) {
				t.Errorf("template %s uses the %s parameter; only the runner's directories may", n, p)
			}
		}
	}
}

// reachesDir: the value (a path, or a path quoted in an expression) is dir
// or a path inside it.
func reachesDir(v, dir string) bool {
	return v == dir || strings.HasPrefix(v, dir+"/") || strings.Contains(v, "'"+dir+"'") || strings.Contains(v, "'"+dir+"/")
}
