package exit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docs/kubectl-replay.md lists exactly the codes --help prints.
func TestDocsListTheExitCodes(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "kubectl-replay.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	const marker = "<!-- exit codes: kept equal to cmd/kubectl-replay/internal/exit by its test -->\n```text\n"
	i := strings.Index(doc, marker)
	if i < 0 {
		t.Fatalf("docs/kubectl-replay.md has no exit code block after %q", marker)
	}
	block, _, closed := strings.Cut(doc[i+len(marker):], "```")
	if !closed {
		t.Fatal("docs/kubectl-replay.md: the exit code block is not closed")
	}
	if block != Table() {
		t.Errorf("docs/kubectl-replay.md's exit codes:\n%s\n--help's:\n%s", block, Table())
	}
}

func TestCodes(t *testing.T) {
	seen := map[Code]bool{}
	for _, c := range Codes() {
		if seen[c] {
			t.Errorf("code %d twice", c)
		}
		seen[c] = true
	}
	if CodeOf(nil) != OK || CodeOf(errors.New("x")) != APIError {
		t.Error("CodeOf of nil or a plain error")
	}
	wrapped := With(Usage, Errorf(NotFound, "gone"))
	if CodeOf(wrapped) != NotFound {
		t.Errorf("With replaced an existing code: %d", CodeOf(wrapped))
	}
	if CodeOf(With(Forbidden, errors.New("no"))) != Forbidden || With(Usage, nil) != nil {
		t.Error("With")
	}
}
