package launcher_test

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// The launcher's packages and whom each may import (launcher/README.md,
// "Packages"): data flows one way, from the controller down to the pure
// rooms, the API types and the runner's contract. A package not listed
// here fails the test until it is given its place.
var mayImport = map[string][]string{
	"launcher":                    {"launcher/api/v1alpha1", "launcher/replay", "launcher/internal/state", "launcher/internal/record", "launcher/internal/grouplock", "launcher/internal/knative", "launcher/internal/consumers", "launcher/internal/lifecycle", "launcher/internal/approval", "launcher/internal/strimzi", "launcher/clusterref", "launcher/internal/runnerjob", "launcher/internal/undo", "launcher/internal/fanout", "runner/config", "runner/report"},
	"launcher/internal/approval":  {"launcher/api/v1alpha1", "launcher/internal/state"},
	"launcher/internal/consumers": {"launcher/api/v1alpha1", "launcher/internal/state"},
	"launcher/internal/fanout":    {"launcher/api/v1alpha1", "launcher/replay", "launcher/internal/state", "runner/report"},
	"launcher/internal/grouplock": {"launcher/api/v1alpha1", "launcher/replay", "launcher/internal/state", "runner/config"},
	"launcher/internal/knative":   {"launcher/api/v1alpha1", "launcher/replay", "launcher/internal/state", "runner/config"},
	"launcher/internal/lifecycle": {"launcher/api/v1alpha1", "launcher/internal/state"},
	"launcher/internal/record":    {"launcher/api/v1alpha1", "launcher/replay", "launcher/internal/state", "runner/report"},
	"launcher/internal/runnerjob": {"launcher/api/v1alpha1", "launcher/replay", "launcher/internal/state", "runner/config", "runner/report"},
	"launcher/internal/strimzi":   {"launcher/api/v1alpha1", "launcher/replay", "launcher/internal/state", "runner/config"},
	"launcher/internal/undo":      {"launcher/api/v1alpha1", "launcher/replay", "launcher/internal/state", "launcher/internal/record", "launcher/internal/runnerjob", "runner/report"},
	"launcher/internal/state":     {"launcher/api/v1alpha1", "runner/report"},
	"launcher/replay":             {"launcher/api/v1alpha1", "runner/report"},
	"launcher/clusterref":         {"launcher/api/v1alpha1", "launcher/internal/strimzi", "runner/config"},
	"launcher/api/v1alpha1":       {},
	"launcher/testutil":           {"launcher/api/v1alpha1", "runner/report", "test/cachedir"},
}

// TestUnitPackageImports checks every launcher package's imports of this
// module (not its tests') against mayImport, with go list.
func TestUnitPackageImports(t *testing.T) {
	const module = "github.com/kafka-replay/kafka-replay/"
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", "./...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		seen++
		name := strings.TrimPrefix(p.ImportPath, module)
		allowed, ok := mayImport[name]
		if !ok {
			t.Errorf("package %s has no place in the launcher's package diagram (mayImport, launcher/README.md)", name)
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(imp, module)
			ok := false
			for _, a := range allowed {
				ok = ok || a == dep
			}
			if !ok {
				t.Errorf("%s imports %s, which the package diagram does not allow", name, dep)
			}
		}
	}
	if seen < len(mayImport) {
		t.Errorf("go list saw %d packages, fewer than the %d the diagram names", seen, len(mayImport))
	}
}
