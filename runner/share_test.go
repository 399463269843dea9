package runner_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// TestShareGroupReset: a share group (KIP-932) with a real share consumer
// is refused while the consumer is in it (its plan still shown in a dry
// run), and once empty its start offsets are set to each target, read back
// by an independent client; the targets that need a run ID, and a run
// without topics, are refused by name. Before the kind check the runner
// planned it as a new consumer group and sent it a commit (refused by
// Kafka, exit 4, retryable).
func TestShareGroupReset(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	g := "share-reset"
	starts := func(t *testing.T) map[string]int64 { t.Helper(); return startOffsetsOf(t, c, g) }
	m, err := c.JoinShare(testCtx(t), g, g+"-worker", topic)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("live: refused, and planned in a dry run", func(t *testing.T) {
		// The live member has the start offsets of its partitions set
		// in its own time (all of them, -1 on Apache Kafka): wait until
		// every partition has one, so that a change seen below is the
		// runner's, not the member's. The bound is not a measurement.
		before := starts(t)
		for deadline := time.Now().Add(time.Minute); len(before) < partitions; before = starts(t) {
			if time.Now().After(deadline) {
				t.Fatalf("the live member's start offsets never covered the topic: %v", before)
			}
			time.Sleep(50 * time.Millisecond)
		}
		o := run(t, c, "--group", g, "--topic", topic, "--to", "earliest").mustCode(t, report.ExitGroupActive)
		if !strings.Contains(o.result.Error, g+"-worker") {
			t.Errorf("error %q does not name the member", o.result.Error)
		}
		o = run(t, c, "--group", g, "--topic", topic, "--to", "earliest", "--dry-run").mustCode(t, report.ExitOK)
		if len(o.result.Partitions) != partitions || !hasWarning(o.result, "the group is active") || !hasWarning(o.result, "share group") {
			t.Errorf("dry run: %d partitions, warnings %q", len(o.result.Partitions), o.result.Warnings)
		}
		if got := starts(t); !equalMaps(got, before) {
			t.Errorf("start offsets changed: %v → %v", before, got)
		}
	})
	t.Run("--wait-for-empty applies once the member leaves", func(t *testing.T) {
		o := runWaiting(t, c, m.Leave, "--group", g, "--topic", topic, "--to", "offset:5", "--allow-skip", "--wait-for-empty", "2m").mustCode(t, report.ExitOK)
		if got := starts(t); got[topic+"/0"] != 5 || got[topic+"/3"] != 5 {
			t.Errorf("start offsets %v, want 5\n%s", got, o.resultRaw)
		}
	})
	m.Leave() // the wait's member, if that test failed before it left
	for _, tc := range []struct {
		args []string
		want int64
	}{
		{[]string{"--to", "offset:10", "--allow-skip"}, 10},
		{[]string{"--to", "earliest"}, 0},
		{[]string{"--to", "time:" + base.Add(50e9).Format("2006-01-02T15:04:05Z"), "--allow-skip"}, 50},
		{[]string{"--to", "latest", "--allow-skip"}, records},
	} {
		t.Run("empty: "+strings.Join(tc.args, " "), func(t *testing.T) {
			before := starts(t)
			o := run(t, c, append([]string{"--group", g, "--topic", topic}, tc.args...)...).mustCode(t, report.ExitOK)
			if o.result.Reason != report.ReasonApplied || o.result.Totals.Applied != partitions {
				t.Errorf("%s, %d applied\n%s", o.result.Reason, o.result.Totals.Applied, o.resultRaw)
			}
			got := starts(t)
			for p := 0; p < partitions; p++ {
				k := fmt.Sprintf("%s/%d", topic, p)
				if got[k] != tc.want {
					t.Errorf("%s: start offset %d, want %d (all: %v)", k, got[k], tc.want, got)
				}
			}
			for _, p := range o.result.Partitions {
				k := fmt.Sprintf("%s/%d", p.Topic, p.Partition)
				if b, ok := before[k]; ok && b >= 0 && (p.PreviousOffset == nil || *p.PreviousOffset != b) {
					t.Errorf("%s: previous offset %v in the result, the group had %d", k, p.PreviousOffset, b)
				}
			}
		})
	}
	// AlterShareGroupOffsets has no transactional form: Atomic is refused,
	// Auto sets them Plain and says so.
	t.Run("empty: --commit-mode Atomic refused, Auto is Plain", func(t *testing.T) {
		before := starts(t)
		o := run(t, c, "--group", g, "--topic", topic, "--to", "earliest", "--commit-mode", "Atomic").mustCode(t, report.ExitInvalidInput)
		if !strings.Contains(o.result.Error, "--commit-mode") || !strings.Contains(o.result.Error, "share group") {
			t.Errorf("error %q", o.result.Error)
		}
		if got := starts(t); !equalMaps(got, before) {
			t.Errorf("start offsets changed: %v → %v", before, got)
		}
		o = run(t, c, "--group", g, "--topic", topic, "--to", "earliest", "--commit-mode", "Auto").mustCode(t, report.ExitOK)
		if o.result.CommitMode != "Plain" || !hasWarning(o.result, "AlterShareGroupOffsets has no transactional form") {
			t.Errorf("Auto: mode %q, warnings %q", o.result.CommitMode, o.result.Warnings)
		}
	})
	for _, tc := range []struct {
		name, field string
		args        []string
	}{
		{"a target that needs a run ID", "--to", []string{"--topic", topic, "--to", "shift:-5"}},
		{"no topics", "--topic", []string{"--to", "earliest"}},
	} {
		t.Run("refused: "+tc.name, func(t *testing.T) {
			before := starts(t)
			o := run(t, c, append([]string{"--group", g}, tc.args...)...).mustCode(t, report.ExitInvalidInput)
			if !strings.Contains(o.result.Error, tc.field) || !strings.Contains(o.result.Error, "share group") {
				t.Errorf("error %q does not name %s and the kind", o.result.Error, tc.field)
			}
			if got := starts(t); !equalMaps(got, before) {
				t.Errorf("start offsets changed: %v → %v", before, got)
			}
		})
	}
	if kind, err := c.Kind(testCtx(t), g); err != nil || kind != kafkatest.KindShare {
		t.Errorf("the group is now %q (%v), want still a share group", kind, err)
	}
}

// startOffsetsOf reads a share group's start offsets with the independent
// (franz-go) client, as "topic/partition" → offset.
func startOffsetsOf(t *testing.T, c *kafkatest.Cluster, g string) map[string]int64 {
	t.Helper()
	s, err := c.ShareStartOffsets(testCtx(t), g)
	if err != nil {
		t.Fatalf("read start offsets: %v", err)
	}
	return s
}

func hasWarning(r *report.Result, part string) bool {
	for _, w := range r.Warnings {
		if strings.Contains(w, part) {
			return true
		}
	}
	return false
}

// TestShareGroupPlanApplyUndo: a share group through the steps a request
// with approval, and its undo, take (launcher/internal/runnerjob gives the runner the
// same targets): a dry run's plan, applied with plan: (and again: an
// absolute plan sets the same offsets); an undo: of that run, whose
// forward restore needs --allow-skip because no run ID in the group vouches
// for the file's previous offsets, and whose retry finds nothing to undo;
// and a file of a consumer group refused on the share group.
func TestShareGroupPlanApplyUndo(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	g := "share-plan"
	m, err := c.JoinShare(testCtx(t), g, g+"-worker", topic)
	if err != nil {
		t.Fatal(err)
	}
	m.Leave()
	starts := func(t *testing.T) map[string]int64 { t.Helper(); return startOffsetsOf(t, c, g) }
	all := func(t *testing.T, want int64) {
		t.Helper()
		got := starts(t)
		for p := 0; p < partitions; p++ {
			if k := fmt.Sprintf("%s/%d", topic, p); got[k] != want {
				t.Errorf("%s: start offset %d, want %d (all: %v)", k, got[k], want, got)
			}
		}
	}
	run(t, c, "--group", g, "--topic", topic, "--to", "offset:80", "--allow-skip").mustCode(t, report.ExitOK)
	all(t, 80)

	dry := run(t, c, "--group", g, "--topic", topic, "--to", "earliest", "--dry-run").mustCode(t, report.ExitOK)
	if dry.result.GroupType != "Share" || dry.result.Plan == "" {
		t.Fatalf("dry run: groupType %q, plan %q", dry.result.GroupType, dry.result.Plan)
	}
	all(t, 80)
	plan := saveResult(t, dry, false)
	var applied outcome
	for i := range 2 {
		applied = run(t, c, "--group", g, "--to", "plan:"+plan, "--run-id", "share-approved").mustCode(t, report.ExitOK)
		if applied.result.Plan != dry.result.Plan || applied.result.Totals.Applied != partitions || applied.result.GroupType != "Share" {
			t.Errorf("apply %d: plan %q (approved %q), %d applied, groupType %q", i+1, applied.result.Plan, dry.result.Plan, applied.result.Totals.Applied, applied.result.GroupType)
		}
		all(t, 0)
	}
	// The second apply started where the first had put the group: its
	// undo has nothing to restore.
	undone := saveResult(t, applied, false)
	o := run(t, c, "--group", g, "--to", "undo:"+undone).mustCode(t, report.ExitOK)
	if !hasWarning(o.result, "nothing to undo") {
		t.Errorf("undo of the second apply (0 to 0): warnings %q", o.result.Warnings)
	}
	all(t, 0)

	// An undo of a run that moved the group from 80 to 0.
	run(t, c, "--group", g, "--topic", topic, "--to", "offset:80", "--allow-skip").mustCode(t, report.ExitOK)
	rewind := run(t, c, "--group", g, "--topic", topic, "--to", "earliest").mustCode(t, report.ExitOK)
	all(t, 0)
	file := saveResult(t, rewind, false)
	o = run(t, c, "--group", g, "--to", "undo:"+file).mustCode(t, report.ExitRefused)
	if o.result.Reason != report.ReasonWouldSkipMessages {
		t.Errorf("undo without --allow-skip: %s: %s", o.result.Reason, o.result.Error)
	}
	all(t, 0)
	// The undo approved as a plan (Manual approval), applied, then
	// retried: the retry finds every partition at the plan's new offset,
	// which is success with nothing moved, not a stale plan.
	undoPlan := saveResult(t, run(t, c, "--group", g, "--to", "undo:"+file, "--allow-skip", "--dry-run").mustCode(t, report.ExitOK), false)
	all(t, 0)
	for i := range 2 {
		o = run(t, c, "--group", g, "--to", "plan:"+undoPlan, "--allow-skip", "--run-id", "share-undo").mustCode(t, report.ExitOK)
		wantReason := []report.Reason{report.ReasonApplied, report.ReasonAlreadyApplied}[i]
		if o.result.Reason != wantReason || o.result.Totals.Applied != partitions || o.result.GroupType != "Share" {
			t.Errorf("undo's plan, attempt %d: %s (want %s), %d applied, groupType %q\n%s", i+1, o.result.Reason, wantReason, o.result.Totals.Applied, o.result.GroupType, o.resultRaw)
		}
		for _, p := range o.result.Partitions {
			if p.PreviousOffset == nil || *p.PreviousOffset != 0 || p.NewOffset != 80 {
				t.Errorf("undo's plan, attempt %d: %s/%d reads %v -> %d, want the plan's 0 -> 80", i+1, p.Topic, p.Partition, p.PreviousOffset, p.NewOffset)
			}
		}
		all(t, 80)
	}
	// The undo itself, retried after its plan applied it, finds every
	// partition back at its previous offset.
	o = run(t, c, "--group", g, "--to", "undo:"+file, "--allow-skip").mustCode(t, report.ExitOK)
	if !hasWarning(o.result, "nothing to undo") {
		t.Errorf("undo retried: warnings %q", o.result.Warnings)
	}
	all(t, 80)

	// The same plan, as if made when the group was a consumer group: the
	// digest does not cover the kind, the kind check refuses it.
	forged := strings.Replace(dry.resultRaw, `"groupType": "Share"`, `"groupType": "Classic"`, 1)
	if forged == dry.resultRaw {
		t.Fatalf("no groupType in the plan:\n%s", dry.resultRaw)
	}
	dry.resultRaw = forged
	o = run(t, c, "--group", g, "--to", "plan:"+saveResult(t, dry, false)).mustCode(t, report.ExitInvalidInput)
	if !strings.Contains(o.result.Error, "plan of a Classic group") || !strings.Contains(o.result.Error, "now a Share group") {
		t.Errorf("error %q", o.result.Error)
	}
	all(t, 80)
}
