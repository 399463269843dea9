package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kafka-replay/kafka-replay/test/cluster"
)

// The chart's NOTES run as written: notesScript turns what `helm install`
// printed into the commands it tells the reader to type, in order, with
// only the placeholders a reader fills in filled in.

// notesPlaceholders are what a reader types for the NOTES' placeholders;
// a line with any other <placeholder> fails notesScript.
var notesPlaceholders = map[string]string{
	"<job>":   `"$job"`, // the runbook Job the NOTES' create job line started
	"<group>": "orders-service",
}

// notesSkipped are placeholders of commands that cannot run as they are
// here, and why.
var notesSkipped = map[string]string{
	"<status.plan.digest>": "approves a request with approval: Manual; the NOTES' sample request is a dry run, which has no plan to approve",
}

var (
	notesPlaceholder = regexp.MustCompile(`<[a-z][a-zA-Z.-]*>`)
	// A runbook's start, `kubectl ... create job --from=cronjob/X NAME`:
	// the Job's name is kept in $job for the lines that follow it.
	notesCreateJob = regexp.MustCompile(`^(kubectl .* create job --from=\S+) (.+)$`)
)

// notesCommandIndent is how far the NOTES indent a command; prose is
// indented less.
const notesCommandIndent = "     "

// notesScript returns the shell script of notes' commands: every indented
// line that starts with kubectl, and the sample request's heredoc through
// its EOF (unindented, so the heredoc ends). skipped lists the commands
// left out, with why; any other line indented as a command is an error.
func notesScript(notes string) (script string, skipped []string, err error) {
	lines := strings.Split(notes, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		indent := lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], " "))]
		switch {
		case strings.HasPrefix(line, "cat <<'EOF'"):
			out = append(out, line)
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "EOF"; i++ {
				out = append(out, strings.TrimPrefix(lines[i], indent))
			}
			if i == len(lines) {
				return "", nil, fmt.Errorf("the heredoc starting %q has no EOF", line)
			}
			out = append(out, "EOF")
		case strings.HasPrefix(line, "kubectl "):
			if why := skippedBecause(line); why != "" {
				skipped = append(skipped, line+": "+why)
				continue
			}
			if m := notesCreateJob.FindStringSubmatch(line); m != nil {
				line = fmt.Sprintf("job=%s; %s \"$job\"", m[2], m[1])
			}
			for p, v := range notesPlaceholders {
				line = strings.ReplaceAll(line, p, v)
			}
			if p := notesPlaceholder.FindString(line); p != "" {
				return "", nil, fmt.Errorf("NOTES line %q has the placeholder %s, which the test does not know how to fill", line, p)
			}
			out = append(out, line)
		case strings.HasPrefix(lines[i], notesCommandIndent) && line != "" && !strings.HasPrefix(line, "#"):
			// Indented as the commands are, but not one this test runs: a
			// new kind of command would otherwise go untried.
			return "", nil, fmt.Errorf("NOTES line %q is indented as a command but is neither kubectl nor the sample's heredoc, which the test does not know how to run", line)
		}
	}
	return strings.Join(out, "\n") + "\n", skipped, nil
}

func skippedBecause(line string) string {
	for p, why := range notesSkipped {
		if strings.Contains(line, p) {
			return why
		}
	}
	return ""
}

// TestNotesScript: without a cluster, the commands are taken as the NOTES
// print them: the heredoc whole and unindented, a runbook's Job name kept
// for the lines after it, the approval line left out with its reason, and
// a placeholder the test cannot fill a failure, not a guess.
func TestNotesScript(t *testing.T) {
	notes := `1. Check:

     kubectl -n ns rollout status deployment/x

2. Apply:

     cat <<'EOF' | kubectl apply -f -
     kind: ReplayRequest
     spec:
       group: g
     EOF

     kubectl -n ns annotate rr r kafkareplay.dev/approve=<status.plan.digest>
     kubectl -n ns create job --from=cronjob/x-rb rb-$(date +%s)
     kubectl -n ns wait job/<job> --for=jsonpath='{.x}' --timeout=10m   # waits
   prose with ` + "`kubectl create job --from=cronjob/<fullname>-<name> <job-name>`" + `
     kubectl -n ns get jobs -l kafkareplay.dev/group=<group>
`
	script, skipped, err := notesScript(notes)
	if err != nil {
		t.Fatal(err)
	}
	want := `kubectl -n ns rollout status deployment/x
cat <<'EOF' | kubectl apply -f -
kind: ReplayRequest
spec:
  group: g
EOF
job=rb-$(date +%s); kubectl -n ns create job --from=cronjob/x-rb "$job"
kubectl -n ns wait job/"$job" --for=jsonpath='{.x}' --timeout=10m   # waits
kubectl -n ns get jobs -l kafkareplay.dev/group=orders-service
`
	if script != want {
		t.Errorf("script:\n%s\nwant:\n%s", script, want)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0], "approval: Manual") {
		t.Errorf("skipped: %q", skipped)
	}
	if _, _, err := notesScript("     kubectl get rr <name>\n"); err == nil || !strings.Contains(err.Error(), "<name>") {
		t.Errorf("an unknown placeholder: %v", err)
	}
	if _, _, err := notesScript("   prose\n     helm upgrade r chart --reuse-values\n"); err == nil || !strings.Contains(err.Error(), "helm upgrade") {
		t.Errorf("a command other than kubectl: %v", err)
	}
}

// Every command the chart's NOTES print names its namespace (-n, or -A for
// a listing over all), and no wait of theirs hangs on a failure: checked
// on the template, without helm (issue 32, friction 3: the first command a
// reader typed ran in the wrong one; friction 2: its wait hung).
func TestNotesCommandsNameTheirNamespace(t *testing.T) {
	root, err := cluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "charts", "kafka-replay", "templates", "NOTES.txt"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "kubectl ") || strings.HasPrefix(line, "kubectl apply -f -") {
			continue // the sample's apply reads a manifest that names its namespace
		}
		n++
		if !strings.HasPrefix(line, "kubectl -n {{ $ns }} ") && !strings.Contains(line+" ", " -A ") {
			t.Errorf("NOTES: %q names no namespace", line)
		}
	}
	if n < 10 {
		t.Errorf("NOTES: %d kubectl commands; the template has more", n)
	}
	checkWaits(t, "charts/kafka-replay/templates/NOTES.txt", 1, string(b))
	if !strings.Contains(string(b), "  namespace: {{ $ns }}\n") {
		t.Error("NOTES: the sample request names no namespace")
	}
}
