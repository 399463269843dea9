package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/render"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// The create --wait transcript in docs/kubectl-replay.md is what the
// display draws for the state it shows, line for line (issue 32, friction
// 7a: the transcript kept an approval hint without -n after the display
// had been fixed), and every kubectl replay hint in the docs' output
// blocks names its namespace.
func TestDocsTranscriptIsTheDisplay(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "kubectl-replay.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	expires := metav1.NewTime(time.Date(2026, 3, 2, 9, 30, 14, 0, time.UTC))
	rr := &v1alpha1.ReplayRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "orders-rewind", Namespace: "shop"},
		Spec:       v1alpha1.ReplayRequestSpec{Group: "orders-service", Approval: v1alpha1.ApprovalManual},
		Status: v1alpha1.ReplayRequestStatus{
			Phase: v1alpha1.PhaseAwaitingApproval,
			Plan: &v1alpha1.PlanSummary{Digest: "01449e2dec61d69c", ExpiresAt: &expires,
				Totals: v1alpha1.ResultTotals{Partitions: 3, MessagesToReconsume: 420}},
			Conditions: []metav1.Condition{
				{Type: v1alpha1.ConditionAccepted, Status: metav1.ConditionTrue, Reason: "Accepted", Message: "target resolved to time:2026-03-01T07:30:00Z"},
				{Type: v1alpha1.ConditionRunning, Status: metav1.ConditionFalse, Reason: "Finished", Message: "the planning Job has finished"},
				{Type: v1alpha1.ConditionAwaitingApproval, Status: metav1.ConditionTrue, Reason: "PlanReady", Message: "plan ready"},
			},
		},
	}
	for _, l := range Lines(render.Palette{}, rr, 14*time.Second) {
		if !strings.Contains(doc, "\n"+l+"\n") {
			t.Errorf("docs/kubectl-replay.md's create --wait transcript lacks the display's line\n%s", l)
		}
	}
	for _, file := range []string{"README.md", "docs/usage.md", "docs/kubectl-replay.md", "docs/groups.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", file))
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range outputHintsWithoutNamespace(string(b)) {
			t.Errorf("%s: %s", file, bad)
		}
	}
}

// replayHint is a kubectl replay VERB NAME in printed output, up to the
// end of the command (a parenthesis, comma or the line's end).
var replayHint = regexp.MustCompile(`kubectl replay (approve|reject|plan|undo|describe) [a-z0-9][a-z0-9.-]*[^(),\n]*`)

// outputHintsWithoutNamespace returns the kubectl replay hints in the
// output blocks (console, text) of a Markdown document that name no
// namespace: a reader who copies one runs it in their own current
// namespace, not the request's.
func outputHintsWithoutNamespace(doc string) []string {
	var bad []string
	in, output := false, false
	for i, line := range strings.Split(doc, "\n") {
		if fence := strings.TrimSpace(line); strings.HasPrefix(fence, "```") {
			if in {
				in = false
				continue
			}
			in = true
			lang := strings.TrimPrefix(fence, "```")
			output = lang == "console" || lang == "text"
			continue
		}
		if !in || !output {
			continue
		}
		for _, h := range replayHint.FindAllString(line, -1) {
			if s := " " + h + " "; !strings.Contains(s, " -n ") && !strings.Contains(s, " -A ") && !strings.Contains(s, " --namespace") {
				bad = append(bad, fmt.Sprintf("line %d: %s names no namespace (-n)", i+1, strings.TrimSpace(h)))
			}
		}
	}
	return bad
}

func TestOutputHintsWithoutNamespace(t *testing.T) {
	doc := "```sh\nkubectl replay approve a\n```\n" + // a command block: checkNamespaces' business
		"```text\n" +
		"  … approval  waiting: kubectl replay approve orders-rewind (or reject orders-rewind --reason ...)\n" +
		"  … approval  waiting: kubectl replay approve orders-rewind -n shop (or kubectl replay reject orders-rewind -n shop --reason ...)\n" +
		"undo with: kubectl replay undo r -A\n" +
		"```\n"
	got := outputHintsWithoutNamespace(doc)
	if len(got) != 1 || !strings.HasPrefix(got[0], "line 5: kubectl replay approve orders-rewind ") {
		t.Errorf("got %q, want only line 5's approve hint", got)
	}
}
