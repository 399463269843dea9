// Package chart tests the Helm chart charts/kafka-replay: helm lint, helm
// template with the default values and with every option on, the values
// schema, the runbook Jobs against the launcher's own Job builder, and a
// server-side dry-run apply of every rendered object (and of the Argo
// WorkflowTemplate example) on a real kube-apiserver through envtest.
//
// helm is built once from the Go module proxy by test/tools/helm/build.sh
// (or taken from $HELM); envtest needs KUBEBUILDER_ASSETS (make
// envtest-assets). `make test-chart` sets both up. With -short only the tests
// that need neither run.
package chart

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Namespace the chart is rendered into.
const releaseNamespace = "kafka-replay-system"

var (
	rootOnce sync.Once
	rootDir  string
)

// repoRoot is the repository's top directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	rootOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		rootDir = filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	})
	if _, err := os.Stat(filepath.Join(rootDir, "go.mod")); err != nil {
		t.Fatalf("repository root not found at %s: %v", rootDir, err)
	}
	return rootDir
}

func chartDir(t testing.TB) string { return filepath.Join(repoRoot(t), "charts", "kafka-replay") }

func testdata(t testing.TB, name string) string {
	return filepath.Join(repoRoot(t), "test", "chart", "testdata", name)
}

var (
	helmOnce sync.Once
	helmPath string
	helmErr  error
)

// helmBinary returns $HELM, or builds helm once (cached by version under
// tools/ under the cache root, test/cachedir) with test/tools/helm/build.sh.
func helmBinary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs helm; skipped with -short (make test-chart runs it)")
	}
	helmOnce.Do(func() {
		if p := os.Getenv("HELM"); p != "" {
			helmPath = p
			return
		}
		cmd := exec.Command("bash", filepath.Join(repoRoot(t), "test", "tools", "helm", "build.sh"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			helmErr = fmt.Errorf("building helm: %w\n%s", err, stderr.String())
			return
		}
		helmPath = strings.TrimSpace(string(out))
	})
	if helmErr != nil {
		t.Fatal(helmErr)
	}
	return helmPath
}

// helm runs helm with args and returns its stdout; stderr goes into the error.
func helm(t testing.TB, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(helmBinary(t), args...)
	cmd.Dir = repoRoot(t)
	// No user configuration, repositories or plugins of whoever runs the test.
	home := t.TempDir()
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
		"HELM_PLUGINS="+filepath.Join(home, "plugins"),
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %w\n%s%s", strings.Join(args, " "), err, stderr.String(), stdout.String())
	}
	return stdout.String(), nil
}

// renderArgs are the arguments of `helm template` for the chart in
// releaseNamespace under the release name "kafka-replay".
func renderArgs(t testing.TB, extra ...string) []string {
	return append([]string{"template", "kafka-replay", chartDir(t), "--namespace", releaseNamespace}, extra...)
}

// render runs helm template and returns the rendered objects (without CRDs;
// pass --include-crds for those).
func render(t testing.TB, extra ...string) []*unstructured.Unstructured {
	t.Helper()
	out, err := helm(t, renderArgs(t, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeObjects(out)
	if err != nil {
		t.Fatalf("decoding helm template output: %v\n%s", err, out)
	}
	return objs
}

// writeValues writes a values file made from v and returns its path.
func writeValues(t testing.TB, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// decodeObjects splits a multi-document YAML stream into objects, skipping
// empty documents.
func decodeObjects(s string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(s), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
}

// byKind returns the objects of one kind.
func byKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// one returns the only object of a kind, or fails.
func one(t testing.TB, objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	got := byKind(objs, kind)
	if len(got) != 1 {
		t.Fatalf("want exactly one %s, got %d", kind, len(got))
	}
	return got[0]
}

// into converts an unstructured object into a typed one, strictly: a field
// the typed API does not know (a typo in a template) is an error.
func into(t testing.TB, u *unstructured.Unstructured, out any) {
	t.Helper()
	b, err := u.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, out); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

// kinds lists the objects as "Kind/name", for messages.
func kinds(objs []*unstructured.Unstructured) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.GetKind() + "/" + o.GetName()
	}
	return out
}

// lineDiff is a small diff of two texts, for readable failures: changed
// lines with "-" (want) and "+" (got), each run after the two lines before it.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	i, j := 0, 0
	lastShown := -1
	context := func() {
		for k := max(i-2, lastShown+1); k < i; k++ {
			fmt.Fprintf(&b, "  %s\n", w[k])
		}
	}
	for i < len(w) || j < len(g) {
		switch {
		case i < len(w) && j < len(g) && w[i] == g[j]:
			i++
			j++
		case j < len(g) && (i >= len(w) || !contains(w[i:], g[j])):
			context()
			fmt.Fprintf(&b, "+ %s\n", g[j])
			lastShown = i - 1
			j++
		default:
			context()
			fmt.Fprintf(&b, "- %s\n", w[i])
			lastShown = i
			i++
		}
	}
	return b.String()
}

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}
