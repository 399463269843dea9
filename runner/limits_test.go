package runner_test

import (
	"math"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/report"
)

// TestLongestDurationsRunNormally: --timeout and --wait-for-empty as long
// as a duration goes (their sum once wrapped around to a deadline already
// passed: exit 4 at once, with no cause named) run like any other.
func TestLongestDurationsRunNormally(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	longest := time.Duration(math.MaxInt64).String()
	for _, args := range [][]string{
		{"--timeout", longest, "--wait-for-empty", longest},
		{"--timeout", longest, "--wait-for-empty", "1ns"},
		{"--timeout", "1h", "--wait-for-empty", longest},
	} {
		o := run(t, c, append([]string{"--group", group, "--topic", topic, "--to", "earliest", "--dry-run"}, args...)...)
		o.mustCode(t, report.ExitOK)
		if o.result.Reason != report.ReasonDryRun || len(o.result.Partitions) != partitions {
			t.Fatalf("%v: %s with %d partitions", args, o.result.Reason, len(o.result.Partitions))
		}
	}
	// And a real run, which commits within them.
	o := run(t, c, "--group", group, "--topic", topic, "--to", "earliest", "--run-id", "longest", "--timeout", longest, "--wait-for-empty", longest)
	o.mustCode(t, report.ExitOK)
	assertMatchesKafka(t, c, o.result)
}
