package launcher_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kafka-replay/kafka-replay/test/cachedir"
)

// controllerGen finds controller-gen v0.23.0: CONTROLLER_GEN, or where
// `make generate` caches it.
func controllerGen() string {
	if p := os.Getenv("CONTROLLER_GEN"); p != "" {
		return p
	}
	p := cachedir.Path("tools", "controller-gen-v0.23.0")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return ""
}

// The generated files in the repository are what controller-gen makes from
// the current sources: deepcopy, the CRD in the chart, the RBAC role. Run
// `make generate` when this fails.
func TestGeneratedFilesAreUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs controller-gen; skipped in -short mode")
	}
	cg := controllerGen()
	if cg == "" {
		t.Skip("controller-gen not built; `make generate` or set CONTROLLER_GEN")
	}
	out := t.TempDir()
	cmd := exec.Command(filepath.Join("..", "test", "tools", "generate.sh"), cg, out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generate.sh: %v\n%s", err, b)
	}
	files := []string{
		"launcher/api/v1alpha1/zz_generated.deepcopy.go",
		"charts/kafka-replay/crds/kafkareplay.dev_replayrequests.yaml",
		"charts/kafka-replay/crds/kafkareplay.dev_replayrecords.yaml",
		"charts/kafka-replay/files/rbac/role.yaml",
	}
	for _, f := range files {
		want, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatalf("controller-gen made no %s: %v", f, err)
		}
		got, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run `make generate`", f)
		}
	}
	// Nothing else appeared: a new generated file must be checked in and
	// listed above.
	var extra []string
	_ = filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			rel, _ := filepath.Rel(out, p)
			known := false
			for _, f := range files {
				known = known || f == rel
			}
			if !known {
				extra = append(extra, rel)
			}
		}
		return nil
	})
	if len(extra) > 0 {
		t.Errorf("controller-gen made files the test does not check: %v", extra)
	}
}
