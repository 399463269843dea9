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

// TestGuardsCountMessagesThatExist: the guards and the totals count the
// messages of the log between the committed offset and the target, never
// offsets outside it, and never overflow.
func TestGuardsCountMessagesThatExist(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	t.Run("committed near the largest offset", func(t *testing.T) {
		// Each partition's move was about 2^63: their sum wrapped around
		// to a negative count, which the limit let through.
		c := seeded(t)
		commitAll(t, c, group, topic, partitions, math.MaxInt64-1)
		o := run(t, c, "--group", group, "--topic", topic, "--to", "earliest", "--max-messages-to-reconsume", "10", "--dry-run")
		o.mustCode(t, report.ExitRefused)
		if o.result.Reason != report.ReasonLimitExceeded || o.result.Totals.MessagesToReconsume != partitions*records {
			t.Fatalf("%s, %d to re-consume (want %d, the log): %s", o.result.Reason, o.result.Totals.MessagesToReconsume, partitions*records, o.result.Error)
		}
		o = run(t, c, "--group", group, "--topic", topic, "--to", "earliest", "--max-messages-to-reconsume", "400", "--run-id", "near-max")
		o.mustCode(t, report.ExitOK)
		if o.result.Totals.MessagesToReconsume != partitions*records {
			t.Fatalf("%d re-consumed, want %d", o.result.Totals.MessagesToReconsume, partitions*records)
		}
		assertMatchesKafka(t, c, o.result)
	})
	t.Run("committed below the log start", func(t *testing.T) {
		// Records 0-49 are deleted; the group is still at 10. Neither
		// earliest nor shift:-1 passes over a message that exists.
		c := seeded(t)
		for p := int32(0); p < partitions; p++ {
			if err := c.DeleteRecords(testCtx(t), topic, p, 50); err != nil {
				t.Fatal(err)
			}
		}
		commitAll(t, c, group, topic, partitions, 10)
		for _, to := range []string{"earliest", "shift:-1"} {
			o := run(t, c, "--group", group, "--topic", topic, "--to", to, "--max-messages-to-reconsume", "0", "--dry-run")
			o.mustCode(t, report.ExitOK)
			if tt := o.result.Totals; tt.MessagesSkipped != 0 || tt.MessagesToReconsume != 0 {
				t.Fatalf("%s: totals %+v, want nothing skipped or re-consumed", to, tt)
			}
		}
		// latest does skip the log's 50 messages, and says so.
		o := run(t, c, "--group", group, "--topic", topic, "--to", "latest", "--dry-run")
		o.mustCode(t, report.ExitRefused)
		if o.result.Reason != report.ReasonWouldSkipMessages || o.result.Totals.MessagesSkipped != partitions*50 {
			t.Fatalf("latest: %s, %d skipped: %s", o.result.Reason, o.result.Totals.MessagesSkipped, o.result.Error)
		}
		o = run(t, c, "--group", group, "--topic", topic, "--to", "earliest", "--run-id", "below-start")
		o.mustCode(t, report.ExitOK)
		assertMatchesKafka(t, c, o.result)
	})
	t.Run("committed past the log end", func(t *testing.T) {
		// The group is at 500 of a 100-record log: offset:90 re-consumes
		// the log's 10 messages, not 410 that were never written.
		c := seeded(t)
		commitAll(t, c, group, topic, partitions, 500)
		o := run(t, c, "--group", group, "--topic", topic, "--to", "offset:90", "--max-messages-to-reconsume", "40", "--run-id", "past-end")
		o.mustCode(t, report.ExitOK)
		if o.result.Totals.MessagesToReconsume != partitions*10 {
			t.Fatalf("%d re-consumed, want %d", o.result.Totals.MessagesToReconsume, partitions*10)
		}
		assertMatchesKafka(t, c, o.result)
	})
}
