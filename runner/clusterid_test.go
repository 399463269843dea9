package runner_test

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kafka-replay/kafka-replay/runner/config"
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

// A --list or --describe given the binding's cluster ID (kubectl replay
// groups --cluster passes the Job's REPLAY_CLUSTER_ID) is refused on any
// other cluster before any group is asked about, by flag or variable; on
// its own cluster it lists as without it.
func TestClusterIDMustMatchListing(t *testing.T) {
	c := seededWith(t, kfake.ClusterID("cluster-a"))
	const want = "--cluster-id: the servers reach Kafka cluster cluster-a, not cluster-b; nothing was read or committed"
	for _, args := range [][]string{{"--list"}, {"--describe", "--group", group}} {
		code, out, errOut := inspect(t, c, append(args, "--cluster-id", "cluster-b")...)
		if code != int(report.ExitInvalidInput) || !strings.Contains(errOut, want) || out != "" {
			t.Errorf("%v on another cluster: exit %d, stdout %q, stderr %q; want exit 2 with %q", args, code, out, errOut, want)
		}
		if g := inspectJSON(t, c, append(args, "--cluster-id", "cluster-a")...); len(g.Groups) == 0 || g.Groups[0].Group != group {
			t.Errorf("%v on its own cluster: %+v", args, g)
		}
	}
	t.Setenv(config.EnvClusterID, "cluster-b")
	if code, _, errOut := inspect(t, c, "--list"); code != int(report.ExitInvalidInput) || !strings.Contains(errOut, want) {
		t.Errorf("%s=cluster-b: exit %d, stderr %q; want exit 2 with %q", config.EnvClusterID, code, errOut, want)
	}
}
