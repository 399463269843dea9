package runner_test

import (
	"strings"
	"testing"

	"github.com/kafka-replay/kafka-replay/runner/report"
)

// A run given --cluster-id is refused on any other cluster, in either
// commit mode, before it fences or commits anything; on its own cluster it
// runs as without it.
func TestClusterIDMustMatch(t *testing.T) {
	c := seeded(t)
	id := run(t, c, "--group", group, "--topic", topic, "--to", "earliest", "--dry-run").mustCode(t, report.ExitOK).result.ClusterID
	if id == "" {
		t.Fatal("the cluster gives no ID")
	}
	for _, mode := range []string{"Plain", "Atomic"} {
		o := run(t, c, "--group", group, "--topic", topic, "--to", "earliest", "--commit-mode", mode, "--cluster-id", "other-"+id).mustCode(t, report.ExitInvalidInput)
		if want := "--cluster-id: the servers reach Kafka cluster " + id + ", not other-" + id; !strings.Contains(o.result.Error, want) {
			t.Errorf("%s: error %q, want %q", mode, o.result.Error, want)
		}
		assertUnchanged(t, c)
	}
	run(t, c, "--group", group, "--topic", topic, "--to", "earliest", "--cluster-id", id).mustCode(t, report.ExitOK)
	for k, v := range offsetsOf(t, c, group) {
		if v != 0 {
			t.Errorf("%s at %d, want 0", k, v)
		}
	}
}
