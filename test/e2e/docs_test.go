package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/runner/report"
	"github.com/kafka-replay/kafka-replay/test/cluster"
	"github.com/kafka-replay/kafka-replay/test/devsample"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// The docs run as written: every shell block of the README, docs/usage.md
// and docs/kubectl-replay.md that can run on the dev cluster runs, in
// order, on the real cluster set up as `make dev-cluster` sets it up (the
// chart in the namespace every doc names, releaseNS; test/devsample's live
// consumer, credentials Secret and metrics scraper), from the repository's
// root as the working directory (charts/kafka-replay), and the documented
// `kubectl get rr` columns are the ones kubectl prints. The chart's NOTES
// run too (notesScript).
//
// Every fenced block of those files says its language, and every shell
// block (sh, bash, shell, console) carries a marker on the line above it:
//
//	<!-- e2e: run -->                  run here, after docSubstitutions
//	<!-- e2e: run later: <why> -->     run after every other block (a
//	                                   command that needs what a later section sets up)
//	<!-- e2e: run with argo: <where> --> run by TestArgoDocBlocks, with
//	                                   the argo CLI on the e2e's Argo
//	<!-- e2e: not run: <why> -->       cannot run here, and why
//
// A block without one fails TestDocBlocksAreMarked, in a second and without
// a cluster: nothing is skipped silently. A file the commands read (the
// runbook section's values-runbooks.yaml) is a block marked
// <!-- e2e: file -->, whose first line is a comment naming the file; it is
// written, after docSubstitutions, before the commands that follow it run.

// docFiles are the docs whose commands run, in the order they run.
var docFiles = []string{"README.md", "docs/usage.md", "docs/kubectl-replay.md"}

// strimziDocFile's commands run in TestStrimziSinkConnectorOverSCRAM, on
// the Strimzi objects its walk-through names; its blocks are held to the
// same rules (TestDocBlocksAreMarked).
const strimziDocFile = "docs/strimzi.md"

// docSubstitutions are the only changes made to a documented command: the
// docs' example host names become this cluster's Kafka. Longer first.
func docSubstitutions(bootstrap string) []string {
	return []string{
		"kafka-0.kafka:9092,kafka-1.kafka:9092", bootstrap,
		"kafka-0.kafka:9092", bootstrap,
	}
}

type docBlock struct {
	file, first string // where, and its first line, for messages
	line        int    // of the opening fence, 1-based
	run         bool
	// later is set for a block marked run later: it runs after every
	// other block.
	later bool
	// argo is set for a block marked run with argo: TestArgoDocBlocks
	// runs it, not TestDocsRunAsWritten.
	argo bool
	// write is the name of the file the block is written to, for a block
	// marked <!-- e2e: file -->.
	write string
	text  string
}

var (
	docMarker  = regexp.MustCompile(`^<!-- e2e: (run|run later: .+|run with argo: .+|not run: .+|file) -->$`)
	fileMarker = regexp.MustCompile(`^# ([A-Za-z0-9._-]+)$`)
	// shellLangs are the fence languages of commands.
	shellLangs = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}
)

// docBlocks returns the blocks of file that are marked (every shell block
// must be, and a yaml block may be, as a file), in order; an error names
// every shell block without a marker and every fence without a language.
func docBlocks(root, file string) ([]docBlock, error) {
	b, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(b), "\n")
	var out []docBlock
	var bad []string
	for i := 0; i < len(lines); i++ {
		fence := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(fence, "```") {
			continue
		}
		lang, _, _ := strings.Cut(strings.TrimPrefix(fence, "```"), " ")
		indent, _, _ := strings.Cut(lines[i], "```") // the fence's indentation, as in a list item
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) != "```" {
			j++
		}
		var body []string
		for _, l := range lines[i+1 : min(j, len(lines))] {
			body = append(body, strings.TrimPrefix(l, indent))
		}
		blk := docBlock{file: file, line: i + 1, text: strings.Join(body, "\n") + "\n"}
		if len(body) > 0 {
			blk.first = body[0]
		}
		var m []string
		if i > 0 {
			m = docMarker.FindStringSubmatch(strings.TrimSpace(lines[i-1]))
		}
		switch {
		case lang == "":
			bad = append(bad, fmt.Sprintf("%s:%d: the block starting %q does not say its language (sh for commands, text for output)", file, i+1, blk.first))
		case m == nil && shellLangs[lang]:
			bad = append(bad, fmt.Sprintf("%s:%d: the block starting %q has no <!-- e2e: run --> or <!-- e2e: not run: why --> marker", file, i+1, blk.first))
		case m == nil:
			// Other blocks (YAML fragments, output) are read, not run.
		case m[1] == "file":
			f := fileMarker.FindStringSubmatch(blk.first)
			if f == nil {
				bad = append(bad, fmt.Sprintf("%s:%d: the block marked <!-- e2e: file --> starting %q does not name its file in a first line '# NAME'", file, i+1, blk.first))
				break
			}
			blk.write = f[1]
			out = append(out, blk)
		default:
			blk.run = m[1] == "run" || strings.HasPrefix(m[1], "run later: ") || strings.HasPrefix(m[1], "run with argo: ")
			blk.later = strings.HasPrefix(m[1], "run later: ")
			blk.argo = strings.HasPrefix(m[1], "run with argo: ")
			out = append(out, blk)
		}
		i = j
	}
	if len(bad) > 0 {
		return nil, errors.New(strings.Join(bad, "\n"))
	}
	return out, nil
}

// Every shell block of the docs is marked, and the runbook section's
// values file is written before the commands that read it: checked without
// a cluster, so that a doc edit fails in a second, not after the bring-up
// (issue 32: every command of the docs runs as written, or says why not).
func TestDocBlocksAreMarked(t *testing.T) {
	root, err := cluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	written := map[string]bool{}
	schema := requestSchema(t, root)
	for _, file := range append(docFiles, strimziDocFile) {
		blocks, err := docBlocks(root, file)
		if err != nil {
			t.Error(err)
			continue
		}
		for _, b := range blocks {
			if b.write != "" {
				written[b.write] = true
			}
			if b.write == "" {
				checkNamespaces(t, b)
				checkWaits(t, b.file, b.line+1, b.text)
			}
			if b.run {
				checkRequestServers(t, b, schema)
				// The shell reads it as the e2e will run it (quoting,
				// here-documents), without running it.
				check := exec.Command("sh", "-n")
				check.Stdin = strings.NewReader(b.text)
				if out, err := check.CombinedOutput(); err != nil {
					t.Errorf("%s:%d: the block starting %q is not a shell script: %v\n%s", b.file, b.line, b.first, err, out)
				}
			}
			for _, f := range regexp.MustCompile(`>\s*([A-Za-z0-9._-]+\.yaml)`).FindAllStringSubmatch(b.text, -1) {
				written[f[1]] = true // written by the commands themselves
			}
			for _, f := range regexp.MustCompile(`-f ([A-Za-z0-9._-]+\.yaml)`).FindAllStringSubmatch(b.text, -1) {
				if b.run && !written[f[1]] {
					t.Errorf("%s: %q reads %s, which no earlier <!-- e2e: file --> block writes", b.file, b.first, f[1])
				}
			}
		}
	}
	if !written["values-runbooks.yaml"] {
		t.Error("the runbook section's values-runbooks.yaml is not written")
	}
}

// kubectlCommand is a kubectl command in a shell line: at its start, or
// after a pipe, a list operator, a command substitution or a prompt; up to
// the next of those.
var kubectlCommand = regexp.MustCompile(`(?:^|[|;&(]\s*|\$ )(kubectl [^|;&()]*)`)

// clusterScoped are the kubectl commands that act on no namespace.
var clusterScoped = regexp.MustCompile(`^kubectl (create namespace|get crd|apply --server-side -f charts/kafka-replay/crds/)|--help`)

// checkNamespaces: every kubectl command of a block says which namespace
// it acts in (-n, or -A), or acts on none, or applies manifests that name
// theirs (issue 32, frictions 3 and 7: a command that relies on the
// reader's current namespace works for the writer and no one else).
func checkNamespaces(t *testing.T, b docBlock) {
	t.Helper()
	text := heredoc.ReplaceAllStringFunc(b.text, func(h string) string {
		body := heredoc.FindStringSubmatch(h)[1]
		for _, doc := range strings.Split(body, "\n---\n") {
			var obj struct {
				Kind     string
				Metadata struct{ Namespace string }
			}
			if err := yaml.Unmarshal([]byte(doc), &obj); err == nil && obj.Kind != "" && obj.Kind != "Namespace" && obj.Metadata.Namespace == "" {
				t.Errorf("%s:%d: the %s in the block starting %q names no namespace", b.file, b.line, obj.Kind, b.first)
			}
		}
		return "<<'EOF'\n"
	})
	text = strings.ReplaceAll(text, "\\\n", " ")
	for _, line := range strings.Split(text, "\n") {
		if c, _, _ := strings.Cut(line, "#"); strings.TrimSpace(c) == "" {
			continue
		}
		for _, m := range kubectlCommand.FindAllStringSubmatch(line, -1) {
			cmd := " " + strings.TrimSpace(m[1]) + " "
			switch {
			case strings.Contains(cmd, " -n ") || strings.Contains(cmd, " -n=") || strings.Contains(cmd, " --namespace") ||
				strings.Contains(cmd, " -A ") || strings.Contains(cmd, " --all-namespaces"):
			case clusterScoped.MatchString(strings.TrimSpace(m[1])):
			case regexp.MustCompile(` (apply|create) (-f|--filename) `).MatchString(cmd):
				// The manifests name their namespace (checked above for a
				// here-document; a file is written by an earlier block).
			default:
				t.Errorf("%s:%d: %q names no namespace (-n NAMESPACE, or -A)", b.file, b.line, strings.TrimSpace(m[1]))
			}
		}
	}
}

// heredoc is a quoted here-document, as the docs write manifests.
var heredoc = regexp.MustCompile(`(?s)<<'EOF'\n(.*?)\nEOF\n`)

// checkRequestServers: a ReplayRequest a block writes in a here-document
// names, once the example servers are substituted with a list of several,
// exactly that list (a YAML flow mapping, {bootstrapServers: ...}, would
// split it at its commas), and only fields the CRD's schema has.
func checkRequestServers(t *testing.T, b docBlock, schema map[string]any) {
	t.Helper()
	const servers = "10.0.0.1:9092,10.0.0.1:9093,10.0.0.1:9094"
	text := strings.NewReplacer(docSubstitutions(servers)...).Replace(b.text)
	for _, m := range heredoc.FindAllStringSubmatch(text, -1) {
		for _, doc := range strings.Split(m[1], "\n---\n") {
			var rr struct {
				Kind string
				Spec struct {
					Kafka struct {
						BootstrapServers string `json:"bootstrapServers"`
					}
				}
			}
			if err := yaml.Unmarshal([]byte(doc), &rr); err != nil {
				t.Errorf("%s:%d: the manifest in the block starting %q: %v", b.file, b.line, b.first, err)
				continue
			}
			if rr.Kind != "ReplayRequest" {
				continue
			}
			if rr.Spec.Kafka.BootstrapServers != servers {
				t.Errorf("%s:%d: the request in the block starting %q names the servers %q once substituted, not %q", b.file, b.line, b.first, rr.Spec.Kafka.BootstrapServers, servers)
			}
			var obj map[string]any
			_ = yaml.Unmarshal([]byte(doc), &obj)
			for _, f := range unknownFields("spec", obj["spec"], schema["spec"]) {
				t.Errorf("%s:%d: the request in the block starting %q sets %s, which the CRD does not have", b.file, b.line, b.first, f)
			}
		}
	}
}

// requestSchema is the properties of the ReplayRequest CRD's schema.
func requestSchema(t *testing.T, root string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "charts", "kafka-replay", "crds", "kafkareplay.dev_replayrequests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				}
			}
		}
	}
	if err := yaml.Unmarshal(b, &crd); err != nil || len(crd.Spec.Versions) == 0 {
		t.Fatalf("the ReplayRequest CRD: %v", err)
	}
	props, _ := crd.Spec.Versions[0].Schema.OpenAPIV3Schema["properties"].(map[string]any)
	return props
}

// unknownFields lists the paths of v that schema (an OpenAPI schema) has
// no property for.
func unknownFields(path string, v, schema any) []string {
	s, _ := schema.(map[string]any)
	var out []string
	switch v := v.(type) {
	case map[string]any:
		props, ok := s["properties"].(map[string]any)
		if !ok {
			return nil // a map or preserved fields: anything goes
		}
		for k, vv := range v {
			p, ok := props[k]
			if !ok {
				out = append(out, path+"."+k)
				continue
			}
			out = append(out, unknownFields(path+"."+k, vv, p)...)
		}
	case []any:
		for _, vv := range v {
			out = append(out, unknownFields(path+"[]", vv, s["items"])...)
		}
	}
	return out
}

// The docs' second topic, payments, in TestDocsRunAsWritten and
// TestArgoDocBlocks (seedPayments).
const (
	paymentsParts   = 3
	paymentsPerPart = 50
)

func TestDocsRunAsWritten(t *testing.T) {
	root, err := cluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	f := needFlow(t)
	var blocks []docBlock
	for _, file := range docFiles {
		b, err := docBlocks(root, file)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, b...)
	}
	// Every block's waits are bounded by their own --timeout; this bounds
	// the whole on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	// The walk-through's second topic.
	if err := seedPayments(ctx, f); err != nil {
		t.Fatal(err)
	}
	sub := strings.NewReplacer(docSubstitutions(f.kafka.Bootstrap())...)
	dir := t.TempDir() // the walk-through writes its request file in the working directory
	env := docEnv(t, ctx, f, root, dir)
	var later []docBlock
	for _, b := range blocks {
		if b.later {
			later = append(later, b)
			continue
		}
		if b.write != "" {
			if err := os.WriteFile(filepath.Join(dir, b.write), []byte(sub.Replace(b.text)), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: wrote %s as documented", b.file, b.write)
			continue
		}
		if !b.run || b.argo {
			t.Logf("%s: not run here, as marked: %s", b.file, b.first)
			continue
		}
		script := sub.Replace(b.text)
		cmd := f.c.Command(ctx, "sh", "-ec", script)
		cmd.Env = append(cmd.Env, env...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		t.Logf("%s: ran %q:\n%s", b.file, b.first, out)
		if err != nil {
			t.Fatalf("%s: the documented commands starting %q failed: %v\n%s", b.file, b.first, err, out)
		}
	}

	// The many-groups section's request applied both groups once
	// approved, and its undo undid both: each group's own request
	// succeeded (TestManyGroupsApprovedThenUndone reads the offsets).
	for _, name := range []string{"incident-42", "incident-42-undo"} {
		var rr v1alpha1.ReplayRequest
		if err := f.cl.Get(ctx, client.ObjectKey{Namespace: "shop", Name: name}, &rr); err != nil {
			t.Fatalf("the documented request over several groups %s: %v", name, err)
		}
		if rr.Status.Phase != v1alpha1.PhaseSucceeded || len(rr.Status.Groups) != 2 {
			t.Fatalf("the documented request over several groups %s: phase %s, groups %+v: %s", name, rr.Status.Phase, rr.Status.Groups, rr.Status.Message)
		}
		for _, g := range rr.Status.Groups {
			if g.Phase != v1alpha1.GroupPhase(v1alpha1.PhaseSucceeded) {
				t.Errorf("%s: group %s is %s %s", name, g.Group, g.Phase, g.Reason)
			}
		}
	}

	// The runbook the section started succeeded: the documented wait
	// returned on its recorded outcome, in the namespace the docs name.
	var jobs batchv1.JobList
	if err := f.cl.List(ctx, &jobs, client.InNamespace(releaseNS), client.MatchingLabels{"kafkareplay.dev/runbook": "orders-rewind-1h"}); err != nil || len(jobs.Items) != 1 {
		t.Fatalf("runbook Jobs of orders-rewind-1h in %s: %d, %v; want the one the docs started", releaseNS, len(jobs.Items), err)
	}
	if a := jobs.Items[0].Annotations; a[v1alpha1.AnnotationOutcome] != v1alpha1.OutcomeSucceeded {
		t.Fatalf("the documented runbook Job %s: outcome %q, reason %q", jobs.Items[0].Name, a[v1alpha1.AnnotationOutcome], a[v1alpha1.AnnotationReason])
	}

	// The blocks that need what a later section set up (the README's
	// runbook start needs the runbook usage.md's section installs), then
	// the runbook Jobs they started, to their recorded outcome.
	for _, b := range later {
		script := sub.Replace(b.text)
		cmd := f.c.Command(ctx, "sh", "-ec", script)
		cmd.Env = append(cmd.Env, env...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		t.Logf("%s: ran later %q:\n%s", b.file, b.first, out)
		if err != nil {
			t.Fatalf("%s: the documented commands starting %q failed: %v\n%s", b.file, b.first, err, out)
		}
	}
	if len(later) > 0 {
		if _, err := f.c.Kubectl(ctx, "-n", releaseNS, "wait", "job", "-l", "kafkareplay.dev/runbook=orders-rewind-1h",
			`--for=jsonpath={.metadata.annotations.kafkareplay\.dev/outcome}`, "--timeout=5m"); err != nil {
			t.Fatal(err)
		}
		if err := f.cl.List(ctx, &jobs, client.InNamespace(releaseNS), client.MatchingLabels{"kafkareplay.dev/runbook": "orders-rewind-1h"}); err != nil || len(jobs.Items) != 2 {
			t.Fatalf("runbook Jobs of orders-rewind-1h in %s: %d, %v; want usage.md's and the README's", releaseNS, len(jobs.Items), err)
		}
		for _, j := range jobs.Items {
			if a := j.Annotations; a[v1alpha1.AnnotationOutcome] != v1alpha1.OutcomeSucceeded {
				t.Fatalf("the documented runbook Job %s: outcome %q, reason %q", j.Name, a[v1alpha1.AnnotationOutcome], a[v1alpha1.AnnotationReason])
			}
		}
	}

	// The documented waits return on every outcome (condition=Finished),
	// so they do not fail a block on their own: the requests they waited
	// for succeeded.
	for _, r := range []client.ObjectKey{{Namespace: "shop", Name: "orders-rewind"}, {Namespace: "billing", Name: "billing-rewind-100"}, {Namespace: "shop", Name: "orders-rewind-reviewed"}} {
		var rr v1alpha1.ReplayRequest
		if err := f.cl.Get(ctx, r, &rr); err != nil || rr.Status.Phase != v1alpha1.PhaseSucceeded {
			t.Errorf("the documented request %s: phase %q (%s), %v", r, rr.Status.Phase, rr.Status.Message, err)
		}
	}

	// The review walk-through, run last, moved orders-service to its log
	// start; the NOTES' sample below is a dry run to an hour ago, written
	// for the group where the other walk-throughs leave it, and would
	// refuse to skip ahead: undo the review, as a reader done with it would.
	undoReview := f.c.Command(ctx, "kubectl-replay", "undo", "orders-rewind-reviewed", "-n", "shop", "--wait", "--timeout", "5m")
	undoReview.Env = append(undoReview.Env, env...)
	if out, err := undoReview.CombinedOutput(); err != nil {
		t.Fatalf("undo of the review walk-through: %v\n%s", err, out)
	}

	// kubectl replay groups, as documented, described the group the
	// walk-through replayed, with the lag Kafka has, and left no pod.
	groupsJSON := f.c.Command(ctx, "kubectl-replay", "groups", "-n", "shop", "--bootstrap-servers", f.kafka.Bootstrap(), "--describe", "--group", "orders-service", "-o", "json")
	groupsJSON.Env = append(groupsJSON.Env, env...)
	out, err := groupsJSON.Output()
	if err != nil {
		t.Fatalf("kubectl replay groups -o json: %v\n%s", err, out)
	}
	listing, err := report.DecodeGroups(out)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := listing.Find("orders-service")
	if !ok || len(g.Partitions) == 0 {
		t.Fatalf("kubectl replay groups: no partitions of orders-service in %s", out)
	}
	committedNow, err := f.kafka.Committed(ctx, "orders-service")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range g.Partitions {
		if p.CurrentOffset == nil || *p.CurrentOffset != committedNow[p.Topic][p.Partition].Offset || p.Lag == nil || p.LogEndOffset == nil || *p.Lag != *p.LogEndOffset-*p.CurrentOffset {
			t.Errorf("kubectl replay groups: %s/%d reads %+v; the group has committed %d", p.Topic, p.Partition, p, committedNow[p.Topic][p.Partition].Offset)
		}
	}
	left, err := f.c.Kubectl(ctx, "get", "pods", "-A", "-l", "app.kubernetes.io/component=groups", "-o", "name")
	if err != nil || strings.TrimSpace(left) != "" {
		t.Errorf("kubectl replay groups left pods behind: %q, %v", left, err)
	}

	// The documented kubectl get rr columns are kubectl's.
	doc, err := os.ReadFile(filepath.Join(root, "docs", "usage.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for _, l := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(l, "NAME ") && strings.Contains(l, " TARGET ") && strings.Contains(l, " PHASE ") {
			want = strings.Join(strings.Fields(l), " ")
			break
		}
	}
	got, err := f.c.Kubectl(ctx, "-n", "shop", "get", "rr", "orders-rewind-dry")
	if err != nil {
		t.Fatal(err)
	}
	if header := strings.Join(strings.Fields(strings.SplitN(got, "\n", 2)[0]), " "); want == "" || header != want {
		t.Fatalf("docs/usage.md documents the columns %q; kubectl get rr prints %q", want, header)
	}

	// The chart's NOTES, as helm prints them for this release (its
	// runbooks included), run as written: only the sample request's
	// example servers become this cluster's Kafka, and the placeholders a
	// reader fills in are filled in (notesScript).
	notesCmd := f.c.Command(ctx, "helm", "get", "notes", release, "-n", releaseNS)
	notesCmd.Env = append(notesCmd.Env, env...)
	notes, err := notesCmd.Output()
	if err != nil {
		t.Fatalf("helm get notes: %v", err)
	}
	script, skipped, err := notesScript(string(notes))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range skipped {
		t.Logf("NOTES: not run here: %s", s)
	}
	script = strings.ReplaceAll(script, "bootstrapServers: kafka:9092", "bootstrapServers: "+f.kafka.Bootstrap())
	run := f.c.Command(ctx, "sh", "-ec", script)
	run.Env = append(run.Env, env...)
	run.Dir = dir
	out, err = run.CombinedOutput()
	t.Logf("NOTES: ran:\n%s\n%s", script, out)
	if err != nil {
		t.Fatalf("the chart's NOTES commands failed: %v\n%s", err, out)
	}
	var sample v1alpha1.ReplayRequest
	if err := f.cl.Get(ctx, client.ObjectKey{Namespace: releaseNS, Name: "orders-rewind"}, &sample); err != nil || sample.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("the NOTES' sample request: phase %q (%s), %v", sample.Status.Phase, sample.Status.Message, err)
	}
}

// docTools is the environment documented commands run in, as the dev
// cluster's shell sets it: helm, kubectl replay and the runner (built as
// `make build` builds them, devsample.BuildTools) on PATH beside kubectl,
// and helm's own directories in a temporary home. helm's path goes to
// *helm.
func docTools(t *testing.T, ctx context.Context, f *flowEnv, root string, helm *string) []string {
	t.Helper()
	h, err := cluster.Helm()
	if err != nil {
		t.Fatal(err)
	}
	*helm = h
	bin, home := t.TempDir(), t.TempDir()
	if err := os.Symlink(h, filepath.Join(bin, "helm")); err != nil {
		t.Fatal(err)
	}
	if err := devsample.BuildTools(ctx, bin); err != nil {
		t.Fatal(err)
	}
	return []string{"PATH=" + bin + ":" + f.c.BinDir() + ":" + os.Getenv("PATH"),
		"HELM_CACHE_HOME=" + filepath.Join(home, "cache"), "HELM_CONFIG_HOME=" + filepath.Join(home, "config"), "HELM_DATA_HOME=" + filepath.Join(home, "data")}
}

// docEnv prepares what the documented commands assume besides the cluster:
// the repository's root as the working directory (the tests run the
// commands in dir, where the walk-through writes its files, with the
// chart linked in), helm and kubectl replay on PATH beside kubectl, and
// what `make dev-cluster` adds (test/devsample): the Kafka credentials
// Secret the runbook section names, the metrics scraper, the live
// consumer of group billing, the Deployment the pause example pauses, and
// the idle group audit.
// The runbook section's helm upgrade replaces the chart's runbooks, so the
// release is rolled back to its values when the test ends.
func docEnv(t *testing.T, ctx context.Context, f *flowEnv, root, dir string) []string {
	t.Helper()
	if err := os.Symlink(filepath.Join(root, "charts"), filepath.Join(dir, "charts")); err != nil {
		t.Fatal(err)
	}
	helm := ""
	env := docTools(t, ctx, f, root, &helm)
	// Group billing committed where its consumer starts, as the dev
	// cluster's seed commits it: the pause example's shift has offsets to
	// shift from whenever it runs, however far the consumer has read.
	start := kafkatest.Offsets{topic: {}}
	for p := int32(0); p < parts; p++ {
		start[topic][p] = perPart
	}
	if err := f.kafka.Commit(ctx, devsample.LiveGroup, start, "consumer"); err != nil {
		t.Fatal(err)
	}
	// Group audit, the dev cluster's idle group (no members), committed
	// at the end of payments as the dev cluster's seed commits it: the
	// README's runner examples plan, apply and undo it, and
	// docs/kubectl-replay.md's many-groups request names it.
	end := kafkatest.Offsets{"payments": {}}
	for p := int32(0); p < paymentsParts; p++ {
		end["payments"][p] = paymentsPerPart
	}
	if err := f.kafka.Commit(ctx, devsample.IdleGroup, end, "consumer"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // the consumer leaves group billing; the namespace goes
		if _, err := f.c.Kubectl(context.Background(), "delete", "namespace", devsample.AppNamespace, "--wait=false", "--ignore-not-found"); err != nil {
			t.Errorf("delete namespace %s: %v", devsample.AppNamespace, err)
		}
	})
	if err := devsample.Setup(ctx, f.c, f.kafka, t.Logf); err != nil {
		t.Fatal(err)
	}
	history, err := f.c.Command(ctx, helm, "history", release, "-n", releaseNS, "--max", "1", "-o", "json").Output()
	if err != nil {
		t.Fatalf("helm history: %v", err)
	}
	var revs []struct{ Revision int }
	if err := json.Unmarshal(history, &revs); err != nil || len(revs) != 1 {
		t.Fatalf("helm history %s: %v", history, err)
	}
	t.Cleanup(func() {
		cmd := f.c.Command(context.Background(), helm, "rollback", release, fmt.Sprint(revs[0].Revision), "-n", releaseNS, "--wait")
		cmd.Env = append(cmd.Env, env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("helm rollback to revision %d: %v\n%s", revs[0].Revision, err, out)
		}
	})
	return env
}

// waitFor is a kubectl wait's --for value (quoted or not, the flag's
// "--for=" or "--for " form).
var waitFor = regexp.MustCompile(`--for[= ]((?:'[^']*'|"[^"]*"|[^\s'"])+)`)

// waitTarget is the kind a kubectl wait names (rr/NAME, job NAME, ...).
var waitTarget = regexp.MustCompile(`\bwait\b.*?\s(rr|replayrequests?(?:\.kafkareplay\.dev)?|jobs?(?:\.batch)?)(?:/|\s)`)

// hangingWait says why a kubectl wait command waits out its timeout when
// what it waits on fails, or "" when it returns either way (issue 32,
// friction 2: the documented wait hung on a failed run). kubectl wait ANDs
// its --for conditions and has no OR, so a ReplayRequest's wait returns on
// failure only for condition=Finished, True on every final outcome; a
// Job's, only for the launcher's outcome annotation (condition=Complete
// is never set on a failed Job).
func hangingWait(cmd string) string {
	if !regexp.MustCompile(`^kubectl\s(.*\s)?wait\s`).MatchString(cmd) {
		return ""
	}
	t := waitTarget.FindStringSubmatch(cmd)
	if t == nil {
		return ""
	}
	kind := "ReplayRequest"
	if strings.HasPrefix(t[1], "job") {
		kind = "Job"
	}
	fors := waitFor.FindAllStringSubmatch(cmd, -1)
	if len(fors) == 0 {
		return "waits on a " + kind + " with no --for"
	}
	for _, f := range fors {
		v := strings.NewReplacer("'", "", `"`, "").Replace(f[1])
		switch {
		case v == "delete" || v == "create":
		case kind == "ReplayRequest" && regexp.MustCompile(`(?i)^condition=Finished(=True)?$`).MatchString(v):
		case kind == "Job" && strings.Contains(v, `kafkareplay\.dev/outcome`) && !strings.Contains(v, "}="):
			// Present on every finished runbook Job, whatever its outcome.
		case kind == "ReplayRequest":
			return fmt.Sprintf("waits for %s alone, which a failed request never reaches: wait for condition=Finished and read its REASON (or, for a plan, kubectl replay plan NAME --wait)", v)
		default:
			return fmt.Sprintf("waits for %s alone, which a failed Job never reaches: wait for the kafkareplay.dev/outcome annotation", v)
		}
	}
	return ""
}

// checkWaits: no documented kubectl wait on a request or a Job hangs when
// it fails; file:line of each that does.
func checkWaits(t *testing.T, file string, firstLine int, text string) {
	t.Helper()
	for _, bad := range hangingWaits(text) {
		t.Errorf("%s:%d: %q %s", file, firstLine+bad.offset, bad.cmd, bad.why)
	}
}

type badWait struct {
	offset   int // lines after the first
	cmd, why string
}

// hangingWaits finds the hanging waits in shell text: comments are not
// commands, and a line continued with a backslash is one command.
func hangingWaits(text string) []badWait {
	var out []badWait
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		start, line := i, lines[i]
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + " " + lines[i]
		}
		if c := strings.TrimSpace(line); strings.HasPrefix(c, "#") {
			continue
		}
		if k := strings.Index(line, " #"); k >= 0 {
			line = line[:k]
		}
		line = strings.TrimSpace(line) // NOTES indents its commands
		for _, m := range kubectlCommand.FindAllStringSubmatch(line, -1) {
			if why := hangingWait(strings.TrimSpace(m[1])); why != "" {
				out = append(out, badWait{offset: start, cmd: strings.TrimSpace(m[1]), why: why})
			}
		}
	}
	return out
}

// The wait checker refuses each wait that a failure never ends, and only
// those, naming the line of the command.
func TestHangingWaits(t *testing.T) {
	for _, c := range []struct {
		text string
		bad  []int // offsets of the lines refused
	}{
		{"kubectl -n shop wait rr/orders-rewind --for=condition=Succeeded --timeout=10m\n", []int{0}},
		{"kubectl -n shop wait rr/orders-rewind --for=condition=Finished --timeout=10m\n", nil},
		{"kubectl wait --for=condition=finished=true replayrequest/x -n shop\n", nil},
		{"kubectl -n shop get rr\nkubectl -n shop wait rr/orders-review --for=condition=AwaitingApproval --timeout=5m\n", []int{1}},
		{"kubectl -n shop wait rr/incident-42 --for=jsonpath='{.status.phase}'=AwaitingApproval --timeout=5m\n", []int{0}},
		{"kubectl -n shop wait \\\n  rr/x --for=jsonpath='{.status.phase}'=Succeeded\n", []int{0}},
		{"kubectl -n demo wait --for=condition=Succeeded replayrequest/billing-rewind --timeout=3m\n", []int{0}},
		{"kubectl -n kafka-replay-system wait job/$job --for=condition=Complete --timeout=10m\n", []int{0}},
		{"kubectl -n kafka-replay-system wait job -l kafkareplay.dev/runbook=r --for=condition=Complete\n", []int{0}},
		{"kubectl -n kafka-replay-system wait job/$job --for=jsonpath='{.metadata.annotations.kafkareplay\\.dev/outcome}' --timeout=10m\n", nil},
		{"kubectl -n kafka-replay-system wait job/$job --for=jsonpath='{.metadata.annotations.kafkareplay\\.dev/outcome}'=Succeeded\n", []int{0}},
		{"# (condition=Complete would wait out the timeout on a failed Job)\n", nil},
		{"kubectl -n shop wait rr/x --for=delete --timeout=1m\n", nil},
		{"kubectl -n billing wait pod -l app=billing --for=condition=Ready\n", nil},
		{"true && kubectl -n shop wait rr/a --for=condition=Running   # comment\n", []int{0}},
		{"     kubectl -n {{ $ns }} wait rr/orders-rewind --for=condition=Succeeded --timeout=10m   # NOTES\n", []int{0}},
	} {
		var got []int
		for _, b := range hangingWaits(c.text) {
			got = append(got, b.offset)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.bad) {
			t.Errorf("%q: refused lines %v, want %v", c.text, got, c.bad)
		}
	}
}
