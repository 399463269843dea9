package cli

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The plugin links what it reads requests and records with (launcher/replay,
// the API types, controller-runtime's client), not the launcher: package
// launcher brings controller-runtime's manager, cache and metrics server,
// which made the binary 51 MB stripped (30 MB without them).
func TestPluginDoesNotLinkTheLauncher(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/kafka-replay/kafka-replay/cmd/kubectl-replay").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 100 || !slices.Contains(deps, "github.com/kafka-replay/kafka-replay/launcher/replay") {
		t.Fatalf("go list -deps gave %d packages, without launcher/replay: %v", len(deps), deps)
	}
	for _, banned := range []string{
		"github.com/kafka-replay/kafka-replay/launcher",
		"sigs.k8s.io/controller-runtime/pkg/manager",
		"sigs.k8s.io/controller-runtime/pkg/cache",
		"sigs.k8s.io/controller-runtime/pkg/metrics/server",
	} {
		if slices.Contains(deps, banned) {
			t.Errorf("the plugin links %s", banned)
		}
	}
}
