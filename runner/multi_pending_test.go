package runner

import (
	"slices"
	"strings"
	"testing"

	"github.com/kafka-replay/kafka-replay/runner/report"
)

// TestPendingOf: the result written before a group's commit keeps the
// groups before that failed (cut to their totals), names those at this
// run's commit in its error, holds the pending group whole, and says the
// rest are not attempted; its size does not grow with the groups that
// ended well.
func TestPendingOf(t *testing.T) {
	applied := func(g string) report.Result {
		r := report.Result{Group: g, Reason: report.ReasonApplied, Partitions: []report.Partition{{Topic: "t", NewOffset: 1, Applied: true}}}
		r.Summarize()
		return r
	}
	busy := report.Result{Group: "busy", ExitCode: report.ExitGroupActive, Reason: report.ReasonGroupActive, Error: "active",
		Partitions: []report.Partition{{Topic: "t"}}}
	busy.Summarize()
	pending := report.Result{Group: "now", ExitCode: report.ExitPartiallyApplied, Reason: report.ReasonOutcomeUnknown,
		Partitions: []report.Partition{{Topic: "t", Error: "outcome unknown"}}}
	pending.Summarize()
	whole := &report.MultiResult{Selected: []string{"a", "busy", "b", "now", "later"}, ContinueOnError: true,
		Groups: []report.Result{applied("a"), busy, applied("b")}}
	got := pendingOf(whole, &pending)
	var names []string
	for _, g := range got.Groups {
		names = append(names, g.Group)
	}
	if !slices.Equal(names, []string{"busy", "now"}) || !slices.Equal(got.NotAttempted, []string{"later"}) || !got.Truncated {
		t.Fatalf("groups %q, not attempted %q, truncated %v", names, got.NotAttempted, got.Truncated)
	}
	if got.ExitCode != report.ExitPartiallyApplied || !strings.Contains(got.Error, "at this run's commit: a, b") {
		t.Errorf("exit %d: %s", got.ExitCode, got.Error)
	}
	if len(got.Groups[0].Partitions) != 0 || got.Groups[0].Totals.Partitions != 1 || len(got.Groups[1].Partitions) != 1 {
		t.Errorf("busy cut to its totals, now whole: %+v", got.Groups)
	}
	if len(whole.Groups) != 3 || len(whole.Groups[1].Partitions) != 1 {
		t.Error("pendingOf changed the run so far")
	}
}
