// Package build checks the Makefile itself: that every target builds each
// tool it uses before its first use, whatever the cache holds.
//
// Such a bug hides on any machine where an earlier run left the tool in the
// cache (CI reuses the machine's caches), so the check reads `make -n`
// against an empty cache root, where make prints every build it would run.
package build

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// tool is something the build fetches or builds into the cache root.
type tool struct {
	name string
	// build matches a line of `make -n` that builds it.
	build *regexp.Regexp
	// uses are what a line that needs the tool contains, with ROOT standing
	// for the cache root.
	uses []string
}

// tools is every tool the Makefile keeps under CACHE_DIR. A line naming the
// cache root that none of them accounts for fails the test, so a new tool
// cannot be added without being checked here.
var tools = []tool{
	{"golangci-lint", regexp.MustCompile(`go install github\.com/golangci/golangci-lint/v2/cmd/golangci-lint@`), []string{"ROOT/tools/golangci-lint-"}},
	{"controller-gen", regexp.MustCompile(`go install sigs\.k8s\.io/controller-tools/cmd/controller-gen@`), []string{"ROOT/tools/controller-gen-"}},
	{"helm", regexp.MustCompile(`test/tools/helm/build\.sh`), []string{"ROOT/tools/helm-"}},
	{"krew", regexp.MustCompile(`go install sigs\.k8s\.io/krew/cmd/krew@`), []string{"ROOT/tools/krew-"}},
	// envtest needs etcd and kube-apiserver; the real cluster needs the rest too.
	{"envtest assets", regexp.MustCompile(`test/tools/build\.sh .*\betcd\b.*\bkube-apiserver\b`), []string{"KUBEBUILDER_ASSETS=ROOT/kube-"}},
	{"cluster binaries", regexp.MustCompile(`test/tools/build\.sh .*\bkubelet\b`), []string{"KUBE_ASSETS=ROOT/kube-"}},
	{"argo binaries", regexp.MustCompile(`test/tools/argo/build\.sh`), []string{"ARGO_BIN_DIR=ROOT/tools/argo-"}},
	// Apache Kafka's jars (and Maven's own repository) for the tests on a real broker.
	{"kafka jars", regexp.MustCompile(`dependency:copy-dependencies`), []string{"ROOT/kafka-", "ROOT/m2"}},
}

// problem is a line of `make -n` that breaks the rule.
type problem struct {
	line int
	text string
	why  string
}

// checkOrder reads the lines make would run for one target with an empty
// cache root, and says where a tool is used before it is built, or where
// the cache root is named by something no tool accounts for.
func checkOrder(lines []string, root string, tools []tool) []problem {
	built := map[string]bool{}
	var out []problem
	for i, l := range lines {
		if !strings.Contains(l, root) {
			for _, t := range tools {
				if t.build.MatchString(l) {
					built[t.name] = true
				}
			}
			continue
		}
		accounted := strings.HasPrefix(l, "mkdir -p "+root)
		for _, t := range tools {
			if t.build.MatchString(l) {
				built[t.name] = true
				accounted = true
			}
		}
		for _, t := range tools {
			for _, u := range t.uses {
				if !strings.Contains(l, strings.ReplaceAll(u, "ROOT", root)) {
					continue
				}
				accounted = true
				if !built[t.name] {
					out = append(out, problem{i + 1, l, t.name + " used before any line builds it"})
				}
			}
		}
		if !accounted {
			out = append(out, problem{i + 1, l, "names the cache root, but no tool in build_test.go's table accounts for it"})
		}
	}
	return out
}

// emptyCache makes an empty home directory and names the cache root in it,
// the Makefile's default there.
func emptyCache(t *testing.T) (home, root string) {
	home = t.TempDir()
	return home, filepath.Join(home, ".cache", "kafka-replay")
}

// dryRun is `make -n target` in dir with an empty cache root.
func dryRun(t *testing.T, dir, makefile, target, home, root string) []string {
	t.Helper()
	args := []string{"-n", "--no-print-directory", "-C", dir}
	if makefile != "" {
		args = append(args, "-f", makefile)
	}
	cmd := exec.Command("make", append(args, target, "CACHE_DIR="+root)...)
	// Nothing from the caller's environment may point the tools elsewhere.
	env := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "CACHE_DIR", "KAFKA_REPLAY_CACHE_DIR", "TOOLS", "HELM", "KREW", "CONTROLLER_GEN", "KUBE_ASSETS", "KUBEBUILDER_ASSETS", "ARGO_BIN_DIR", "MAKEFLAGS", "MFLAGS", "MAKELEVEL":
			continue
		}
		env = append(env, kv)
	}
	// HOME too: a Makefile that ignored CACHE_DIR would still find an
	// empty cache at its default under HOME.
	env = append(env, "HOME="+home)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n %s: %v\n%s", target, err, out)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

func repoRoot(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// helpTargets are the Makefile's documented targets (those with ## text).
func helpTargets(t *testing.T, makefile string) []string {
	t.Helper()
	b, err := os.ReadFile(makefile)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^([a-zA-Z0-9_-]+):[^=].*##`)
	var ts []string
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		ts = append(ts, m[1])
	}
	return ts
}

// TestToolsBuiltBeforeUse runs `make -n` for every documented target alone,
// with an empty cache root, and checks that each tool's build comes before
// the first line that uses it. MAKEFILE_UNDER_TEST checks another Makefile
// (an older one, say) against the same rule.
func TestToolsBuiltBeforeUse(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make: %v", err)
	}
	dir := repoRoot(t)
	targets := helpTargets(t, filepath.Join(dir, "Makefile"))
	for _, must := range []string{"test", "e2e", "demo", "dev-cluster", "bench", "test-plugin", "test-chart", "test-envtest"} {
		if !contains(targets, must) {
			t.Fatalf("target %s is not among the Makefile's documented targets %v", must, targets)
		}
	}
	for _, target := range targets {
		t.Run(target, func(t *testing.T) {
			home, root := emptyCache(t)
			lines := dryRun(t, dir, os.Getenv("MAKEFILE_UNDER_TEST"), target, home, root)
			for _, p := range checkOrder(lines, root, tools) {
				t.Errorf("make -n %s, line %d: %s\n\t%s", target, p.line, p.why, p.text)
			}
		})
	}
}

// TestCheckOrderCatchesLateDefinition proves the check fails on the bug it
// exists for: a rule whose tool prerequisite is defined further down the
// Makefile, so the prerequisite expands to nothing (issue 23's helm).
func TestCheckOrderCatchesLateDefinition(t *testing.T) {
	home, root := emptyCache(t)
	mk := filepath.Join("testdata", "late-definition.mk")
	for _, tc := range []struct {
		target string
		want   []string
	}{
		{"test-plugin", []string{"helm used before any line builds it"}},
		{"test", []string{"helm used before any line builds it"}},
		{"test-chart", nil},
		{"unknown-tool", []string{"names the cache root, but no tool in build_test.go's table accounts for it"}},
	} {
		t.Run(tc.target, func(t *testing.T) {
			ps := checkOrder(dryRun(t, ".", mk, tc.target, home, root), root, tools)
			var got []string
			for _, p := range ps {
				got = append(got, p.why)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("problems = %q, want %q", got, tc.want)
			}
		})
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
