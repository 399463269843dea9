package launcher

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

// TestEveryOutcomeReasonIsALabel: every reason the launcher finishes a
// request with is its own label value, not Other. It reads the launcher's
// source (every package under launcher/, wherever a file lives): each
// Outcome literal's Reason that names a constant, and each value of
// startFailures, must be a label of its own.
func TestEveryOutcomeReasonIsALabel(t *testing.T) {
	root := "."
	for {
		if _, err := os.Stat(filepath.Join(root, "api")); err == nil {
			if _, err := os.Stat(filepath.Join(root, "replay")); err == nil {
				break
			}
		}
		if abs, _ := filepath.Abs(root); abs == "/" {
			t.Fatal("launcher/ not found above the test's directory")
		}
		root = filepath.Join(root, "..")
	}
	fset := token.NewFileSet()
	var files []*ast.File
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err == nil {
			files = append(files, f)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every string constant, by name.
	consts := map[string]string{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if vs, ok := n.(*ast.ValueSpec); ok {
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							consts[name.Name], _ = strconv.Unquote(lit.Value)
						}
					}
				}
			}
			return true
		})
	}
	nameOf := func(e ast.Expr) string {
		switch e := e.(type) {
		case *ast.Ident:
			return e.Name
		case *ast.SelectorExpr:
			return e.Sel.Name
		}
		return ""
	}
	var used []string
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok || !strings.HasSuffix(nameOf(lit.Type), "Outcome") {
				return true
			}
			for _, el := range lit.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok && nameOf(kv.Key) == "Reason" {
					if v, ok := consts[nameOf(kv.Value)]; ok {
						used = append(used, v)
					}
				}
			}
			return true
		})
	}
	for _, r := range startFailures {
		used = append(used, r)
	}
	if len(used) < 10 {
		t.Fatalf("found only %d outcome reasons in the launcher's source: %v", len(used), used)
	}
	for _, r := range used {
		if got := state.ReasonLabel(r); got != r {
			t.Errorf("the launcher finishes requests with %q, which the metrics count as %q", r, got)
		}
	}
}
