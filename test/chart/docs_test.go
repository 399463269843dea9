package chart

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func usageDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "usage.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// between returns the text after the first start and before the next end.
func between(t *testing.T, s, start, end string) string {
	t.Helper()
	_, rest, ok := strings.Cut(s, start)
	if !ok {
		t.Fatalf("docs/usage.md has no %q", start)
	}
	body, _, ok := strings.Cut(rest, end)
	if !ok {
		t.Fatalf("docs/usage.md: no %q after %q", end, start)
	}
	return body
}

// TestUsageExamples: the copy-paste examples of docs/usage.md work. The
// sample ReplayRequest, and the same request with each documented target, are
// accepted by the real CRD on envtest (server-side dry run); the runbook
// values render, and each runbook's start command names a CronJob that the
// chart makes.
func TestUsageExamples(t *testing.T) {
	doc := usageDoc(t)
	cfg := controlPlane(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, warn := newClient(t, cfg)
	sample := between(t, doc, "cat > orders-rewind-dry.yaml <<'EOF'\n", "\nEOF\n")
	objs, err := decodeObjects(sample)
	if err != nil || len(objs) != 1 || objs[0].GetKind() != "ReplayRequest" {
		t.Fatalf("the sample request does not decode: %v", err)
	}
	rr := objs[0]
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: rr.GetNamespace()}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := dryRunApply(ctx, c, rr); err != nil {
		t.Errorf("the sample request is refused: %v", err)
	}

	// Every documented target, in place of the sample's.
	targets := between(t, doc, "Every target kind (set exactly one):\n\n```yaml\n", "```")
	var examples []string
	for _, line := range strings.Split(targets, "\n") {
		code := strings.TrimRight(strings.SplitN(line, "#", 2)[0], " ")
		switch {
		case strings.HasPrefix(code, "target:"):
			examples = append(examples, code)
		case strings.HasPrefix(code, " ") && len(examples) > 0:
			examples[len(examples)-1] += "\n" + code
		}
	}
	if len(examples) != 8 {
		t.Fatalf("want the 8 target kinds, found %d: %q", len(examples), examples)
	}
	for _, ex := range examples {
		var tg struct {
			Target map[string]any `json:"target"`
		}
		if err := yaml.Unmarshal([]byte(ex), &tg); err != nil || len(tg.Target) != 1 {
			t.Errorf("target example %q: %v", ex, err)
			continue
		}
		u := rr.DeepCopy()
		spec := u.Object["spec"].(map[string]any)
		spec["target"] = tg.Target
		_, offsets := tg.Target["offsets"]
		_, undo := tg.Target["undoOf"]
		if offsets || undo {
			// Their partitions come from the offsets, or from the undone
			// request's record: topics must be empty.
			delete(spec, "topics")
		}
		if err := dryRunApply(ctx, c, u); err != nil {
			t.Errorf("the sample request with %s is refused: %v", ex, err)
		}
	}
	if w := warn.take(); len(w) > 0 {
		t.Errorf("API server warnings: %q", w)
	}

	// The runbook values render, and the commands name their CronJobs.
	values := between(t, doc, "# values-runbooks.yaml\n", "```")
	p := filepath.Join(t.TempDir(), "values-runbooks.yaml")
	if err := os.WriteFile(p, []byte(values), 0o600); err != nil {
		t.Fatal(err)
	}
	rendered := render(t, "--values", p)
	names := map[string]bool{}
	for _, u := range byKind(rendered, "CronJob") {
		var cj batchv1.CronJob
		into(t, u, &cj)
		names[cj.Name] = true
	}
	for _, m := range regexp.MustCompile(`--from=cronjob/([a-z0-9-]+)`).FindAllStringSubmatch(doc, -1) {
		if !names[m[1]] {
			t.Errorf("docs/usage.md starts cronjob/%s; the chart with its example values makes %v", m[1], names)
		}
	}
	checkNoDeadRefs(t, doc, rendered)
}

// checkNoDeadRefs: the deployment name the docs use exists.
func checkNoDeadRefs(t *testing.T, doc string, rendered []*unstructured.Unstructured) {
	t.Helper()
	deps := map[string]bool{}
	for _, u := range byKind(rendered, "Deployment") {
		deps[u.GetName()] = true
	}
	for _, m := range regexp.MustCompile(`deploy(?:ment)?/([a-z0-9-]+)`).FindAllStringSubmatch(doc, -1) {
		if strings.HasPrefix(m[1], "kafka-replay") && !deps[m[1]] {
			t.Errorf("docs/usage.md names deployment/%s; the chart makes %v", m[1], deps)
		}
	}
}
