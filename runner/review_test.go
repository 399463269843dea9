package runner_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// saveResult writes a run's full result where a plan: or undo: target
// reads it, gzip-compressed if asked (as the launcher writes it).
func saveResult(t *testing.T, o outcome, compress bool) string {
	t.Helper()
	b := []byte(o.resultRaw)
	if compress {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		b = buf.Bytes()
	}
	p := filepath.Join(t.TempDir(), "input.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// commitOffsets commits one offset per partition as the consumers would.
func commitOffsets(t *testing.T, c *kafkatest.Cluster, offs map[int32]int64) {
	t.Helper()
	if err := c.Commit(testCtx(t), group, kafkatest.Offsets{topic: offs}, "consumer"); err != nil {
		t.Fatal(err)
	}
}

// TestPlanThenApplyExactly: a dry run's result, applied with plan:, commits
// exactly its offsets, with the plan's digest in the result, and a retry of
// the same run ID is AlreadyApplied.
func TestPlanThenApplyExactly(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	commitOffsets(t, c, map[int32]int64{1: 70})
	dry := run(t, c, "--group", group, "--topic", topic, "--to", "shift:-20", "--dry-run").mustCode(t, report.ExitOK)
	if dry.result.Plan == "" || dry.result.Plan != report.PlanDigest(group, dry.result.Target.Resolved, dry.result.Partitions) {
		t.Fatalf("dry run's plan digest %q, want PlanDigest of its partitions", dry.result.Plan)
	}
	plan := saveResult(t, dry, true)
	o := run(t, c, "--group", group, "--to", "plan:"+plan, "--run-id", "apply-1").mustCode(t, report.ExitOK)
	want := map[string]int64{"orders/0": 60, "orders/1": 50, "orders/2": 60, "orders/3": 60}
	if got := offsetsOf(t, c, group); !equalMaps(got, want) {
		t.Errorf("committed %v, want the plan's %v", got, want)
	}
	assertMatchesKafka(t, c, o.result)
	if o.result.Plan != dry.result.Plan || o.result.Target.Given != "plan:"+plan || o.result.Target.Resolved != "shift:-20" {
		t.Errorf("plan %q target %+v, want the dry run's plan %q and target", o.result.Plan, o.result.Target, dry.result.Plan)
	}
	// The retry finds its commit: the committed offsets are no longer the
	// plan's previous ones, and that is no staleness.
	retry := run(t, c, "--group", group, "--to", "plan:"+plan, "--run-id", "apply-1").mustCode(t, report.ExitOK)
	if retry.result.Reason != report.ReasonAlreadyApplied {
		t.Errorf("retry: %s, want AlreadyApplied", retry.result.Reason)
	}
	// Another run ID on the same plan: stale now, since it was relative.
	again := run(t, c, "--group", group, "--to", "plan:"+plan, "--run-id", "apply-2").mustCode(t, report.ExitRefused)
	if again.result.Reason != report.ReasonPlanStale || again.result.Totals.Failed != partitions {
		t.Errorf("a second apply: %s, totals %+v", again.result.Reason, again.result.Totals)
	}
}

// TestPlanStale: nothing is committed, and the partitions that differ are
// named, when a relative plan's group moved, a planned offset left the log,
// or a planned topic is gone.
func TestPlanStale(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	for _, tc := range []struct {
		name   string
		to     string
		change func(t *testing.T, c *kafkatest.Cluster)
		stale  string // the partition named
		says   string
	}{
		{"the group moved", "shift:-20", func(t *testing.T, c *kafkatest.Cluster) { commitOffsets(t, c, map[int32]int64{2: 85}) },
			"orders/2", "the committed offset is now 85, the plan started from 80"},
		{"records deleted past the planned offset", "offset:30", func(t *testing.T, c *kafkatest.Cluster) {
			if err := c.DeleteRecords(testCtx(t), topic, 3, 40); err != nil {
				t.Fatal(err)
			}
		}, "orders/3", "the planned offset 30 is no longer inside the log [40, 100]"},
		// An absolute plan holds through the consumers' moves, but not
		// through a committed offset that expired: the group's consumers
		// would start wherever auto.offset.reset says, which the plan and
		// the guards never weighed.
		{"a committed offset expired, absolute", "offset:30", func(t *testing.T, c *kafkatest.Cluster) {
			if err := c.DeleteCommitted(testCtx(t), group, topic, 1); err != nil {
				t.Fatal(err)
			}
		}, "orders/1", "the plan started from the committed offset 80; the group has none now"},
		{"a committed offset expired, relative", "shift:-20", func(t *testing.T, c *kafkatest.Cluster) {
			if err := c.DeleteCommitted(testCtx(t), group, topic, 1); err != nil {
				t.Fatal(err)
			}
		}, "orders/1", "the committed offset is now none, the plan started from 80"},
		{"the topic deleted", "earliest", func(t *testing.T, c *kafkatest.Cluster) {
			c.RequireFake(t)
			if err := c.Fake.DeleteTopic(topic); err != nil {
				t.Fatal(err)
			}
		}, "orders/0", "the partition no longer exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := seeded(t)
			dry := run(t, c, "--group", group, "--topic", topic, "--to", tc.to, "--dry-run").mustCode(t, report.ExitOK)
			plan := saveResult(t, dry, false)
			tc.change(t, c)
			before := offsetsOf(t, c, group)
			o := run(t, c, "--group", group, "--to", "plan:"+plan, "--run-id", "stale").mustCode(t, report.ExitRefused)
			if o.result.Reason != report.ReasonPlanStale || !strings.Contains(o.result.Error, tc.stale+" ("+tc.says) {
				t.Errorf("%s: %q, want PlanStale naming %s (%s)", o.result.Reason, o.result.Error, tc.stale, tc.says)
			}
			if got := offsetsOf(t, c, group); !equalMaps(got, before) {
				t.Errorf("offsets moved: %v, were %v", got, before)
			}
			// A dry run of the stale plan says the same.
			d := run(t, c, "--group", group, "--to", "plan:"+plan, "--dry-run").mustCode(t, report.ExitRefused)
			if d.result.Reason != report.ReasonPlanStale || d.result.Plan == "" {
				t.Errorf("dry run of a stale plan: %s plan %q", d.result.Reason, d.result.Plan)
			}
		})
	}
}

// TestPlanWithAnEditedTarget: a relative plan whose target.resolved was
// edited to an absolute one (which a plan: run no longer holds to the
// committed offsets it started from) is an edited plan, refused before
// anything is read from Kafka, not a plan applied over the group's moves.
func TestPlanWithAnEditedTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	dry := run(t, c, "--group", group, "--topic", topic, "--to", "shift:-20", "--dry-run").mustCode(t, report.ExitOK)
	edited, err := report.Decode([]byte(dry.resultRaw))
	if err != nil {
		t.Fatal(err)
	}
	edited.Target.Resolved = "offset:60"
	b, err := report.Marshal(edited)
	if err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(t.TempDir(), "input.json")
	if err := os.WriteFile(plan, b, 0o600); err != nil {
		t.Fatal(err)
	}
	// The consumers ran on since planning: the shift's plan is stale.
	commitOffsets(t, c, map[int32]int64{2: 85})
	before := offsetsOf(t, c, group)
	o := run(t, c, "--group", group, "--to", "plan:"+plan, "--run-id", "edited").mustCode(t, report.ExitInvalidInput)
	if !strings.Contains(o.result.Error, "do not match its plan digest") {
		t.Errorf("error %q, want the digest mismatch", o.result.Error)
	}
	if got := offsetsOf(t, c, group); !equalMaps(got, before) {
		t.Errorf("offsets moved: %v, were %v", got, before)
	}
}

// TestAbsolutePlanGuardsAgainstNow: an absolute plan applies while the
// consumers ran on since planning; the guards weigh the offsets of now.
func TestAbsolutePlanGuardsAgainstNow(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	dry := run(t, c, "--group", group, "--topic", topic, "--to", "offset:60", "--dry-run", "--max-messages-to-reconsume", "80").mustCode(t, report.ExitOK)
	plan := saveResult(t, dry, false)
	// The consumers moved: partition 0 back behind the plan, 1 far ahead.
	commitOffsets(t, c, map[int32]int64{0: 50, 1: 100})
	o := run(t, c, "--group", group, "--to", "plan:"+plan, "--run-id", "abs").mustCode(t, report.ExitRefused)
	if o.result.Reason != report.ReasonWouldSkipMessages || !strings.Contains(o.result.Error, "orders/0 by 10") {
		t.Errorf("%s: %q, want WouldSkipMessages naming orders/0", o.result.Reason, o.result.Error)
	}
	// Planned, it re-consumed 4 x 20; now 100-60 + 2 x (80-60) = 80 and
	// partition 0 moves forward: the limit counts what moves now.
	o = run(t, c, "--group", group, "--to", "plan:"+plan, "--run-id", "abs", "--allow-skip", "--max-messages-to-reconsume", "79").mustCode(t, report.ExitRefused)
	if o.result.Reason != report.ReasonLimitExceeded || !strings.Contains(o.result.Error, "would re-consume 80 message(s), more than the 79") {
		t.Errorf("%s: %q, want LimitExceeded at 80", o.result.Reason, o.result.Error)
	}
	run(t, c, "--group", group, "--to", "plan:"+plan, "--run-id", "abs", "--allow-skip", "--max-messages-to-reconsume", "80").mustCode(t, report.ExitOK)
	for k, v := range offsetsOf(t, c, group) {
		if v != 60 {
			t.Errorf("%s at %d, want the plan's 60", k, v)
		}
	}
}

// TestGuards: a forward move is refused by default, and with its figures;
// the limit holds; both in a dry run too, which still carries the plan.
func TestGuards(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	for _, tc := range []struct {
		name   string
		args   []string
		reason report.Reason
		says   string
	}{
		{"latest skips", []string{"--to", "latest"}, report.ReasonWouldSkipMessages, "would skip 80 message(s) the consumers never handled, moving 4 partition(s) ahead of the committed offset: orders/0 by 20, orders/1 by 20, orders/2 by 20, orders/3 by 20; nothing was committed; to skip them anyway set --allow-skip"},
		{"a forward shift skips", []string{"--to", "shift:+5"}, report.ReasonWouldSkipMessages, "orders/3 by 5"},
		{"over the limit", []string{"--to", "shift:-30", "--max-messages-to-reconsume", "100"}, report.ReasonLimitExceeded, "would re-consume 120 message(s), more than the 100 --max-messages-to-reconsume allows"},
	} {
		for _, dry := range []bool{false, true} {
			name := tc.name
			args := append([]string{"--group", group, "--topic", topic, "--run-id", "guard-" + strings.ReplaceAll(name, " ", "-")}, tc.args...)
			if dry {
				name += "/dry run"
				args = append(args, "--dry-run")
			}
			t.Run(name, func(t *testing.T) {
				o := run(t, c, args...).mustCode(t, report.ExitRefused)
				if o.result.Reason != tc.reason || !strings.Contains(o.result.Error, tc.says) {
					t.Errorf("%s: %q, want %s saying %q", o.result.Reason, o.result.Error, tc.reason, tc.says)
				}
				if o.result.Totals.Failed != partitions || len(o.result.Partitions) != partitions {
					t.Errorf("the partitions at fault are not marked: totals %+v", o.result.Totals)
				}
				if dry && o.result.Plan == "" {
					t.Error("a refused dry run has no plan digest")
				}
				if !strings.Contains(o.stdout, "REFUSED: "+string(tc.reason)+" (nothing committed)") {
					t.Errorf("the table does not say refused:\n%s", o.stdout)
				}
				if o.termination == nil || o.termination.Reason != tc.reason {
					t.Errorf("termination message %+v", o.termination)
				}
				for k, v := range offsetsOf(t, c, group) {
					if v != committed {
						t.Errorf("%s moved to %d", k, v)
					}
				}
			})
		}
	}
	// Allowed, the same moves apply; the limit holds at its figure.
	run(t, c, "--group", group, "--topic", topic, "--to", "shift:-25", "--max-messages-to-reconsume", "100", "--run-id", "at-limit").mustCode(t, report.ExitOK)
	run(t, c, "--group", group, "--topic", topic, "--to", "latest", "--allow-skip", "--run-id", "skip-ok").mustCode(t, report.ExitOK)
	for k, v := range offsetsOf(t, c, group) {
		if v != records {
			t.Errorf("%s at %d, want the log end", k, v)
		}
	}
}

// TestUndoRewind: a rewind undone. The consumers re-consumed part of it:
// the partitions between the replay's offset and their previous one go
// back (a forward move that is no skip), one consumed past it is left
// alone with the reason, and force restores it.
func TestUndoRewind(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	replay := run(t, c, "--group", group, "--topic", topic, "--to", "shift:-30", "--run-id", "rewind").mustCode(t, report.ExitOK)
	undoFile := saveResult(t, replay, true)
	// After the replay, at 50: partition 1 re-consumed to 65, 2 went on
	// past its previous 80 to 90; 0 and 3 did not consume.
	commitOffsets(t, c, map[int32]int64{1: 65, 2: 90})

	dry := run(t, c, "--group", group, "--to", "undo:"+undoFile, "--dry-run").mustCode(t, report.ExitOK)
	o := run(t, c, "--group", group, "--to", "undo:"+undoFile, "--run-id", "undo-rewind").mustCode(t, report.ExitOK)
	want := map[string]int64{"orders/0": 80, "orders/1": 80, "orders/2": 90, "orders/3": 80}
	if got := offsetsOf(t, c, group); !equalMaps(got, want) {
		t.Errorf("committed %v, want %v", got, want)
	}
	if !equalMaps(newOffsets(dry.result), newOffsets(o.result)) || dry.result.Plan != report.PlanDigest(group, o.result.Target.Resolved, o.result.Partitions) {
		t.Errorf("the dry run planned %v (%s), the undo did %v", newOffsets(dry.result), dry.result.Plan, newOffsets(o.result))
	}
	if o.result.Totals.LeftAlone != 1 || o.result.Totals.Applied != 3 || o.result.Totals.Failed != 0 {
		t.Errorf("totals %+v", o.result.Totals)
	}
	for _, p := range o.result.Partitions {
		left := p.Partition == 2
		if left != (p.LeftAlone != "") || left == p.Applied {
			t.Errorf("%d: applied %t left alone %q", p.Partition, p.Applied, p.LeftAlone)
		}
		if left && (!strings.Contains(p.LeftAlone, "restoring would re-consume 10 messages") || p.NewOffset != 90 || *p.Delta != 0) {
			t.Errorf("left alone: %+v", p)
		}
	}
	// The table says which and why.
	if !strings.Contains(o.stdout, "LEFT ALONE: consumed past its previous offset 80") || !strings.Contains(o.stdout, ", 1 left alone") {
		t.Errorf("the table does not show the partition left alone:\n%s", o.stdout)
	}
	if !strings.Contains(dry.stdout, "PLAN "+dry.result.Plan) {
		t.Errorf("the dry run's table does not show its plan digest:\n%s", dry.stdout)
	}
	// Forced: the undo of the same run restores partition 2 too.
	f := run(t, c, "--group", group, "--to", "undo:"+undoFile, "--run-id", "undo-forced", "--force").mustCode(t, report.ExitOK)
	if got := offsetsOf(t, c, group); got["orders/2"] != 80 || f.result.Totals.Applied != 1 {
		t.Errorf("forced undo: %v, totals %+v", got, f.result.Totals)
	}
	// Nothing left to undo: exit 0 with a warning, the dry run too.
	nd := run(t, c, "--group", group, "--to", "undo:"+undoFile, "--dry-run").mustCode(t, report.ExitOK)
	if !strings.Contains(strings.Join(nd.result.Warnings, " "), "nothing to undo") {
		t.Errorf("the dry run of an undo with nothing to do: warnings %q", nd.result.Warnings)
	}
	n := run(t, c, "--group", group, "--to", "undo:"+undoFile, "--run-id", "undo-nothing").mustCode(t, report.ExitOK)
	if n.result.Totals.LeftAlone != partitions || !strings.Contains(strings.Join(n.result.Warnings, " "), "nothing to undo") {
		t.Errorf("an undo with nothing to do: totals %+v warnings %q", n.result.Totals, n.result.Warnings)
	}
}

// TestUndoSkip: a skip undone. A partition not consumed since goes back
// (the skipped messages handed back, counted against the limit); one that
// consumed on is left alone with the exact offsets to replay.
func TestUndoSkip(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	skip := run(t, c, "--group", group, "--topic", topic, "--to", "shift:+10", "--allow-skip", "--run-id", "skip").mustCode(t, report.ExitOK)
	undoFile := saveResult(t, skip, false)
	commitOffsets(t, c, map[int32]int64{0: 95})
	// Handing back 3 x 10 messages is over a limit of 20.
	o := run(t, c, "--group", group, "--to", "undo:"+undoFile, "--max-messages-to-reconsume", "20").mustCode(t, report.ExitRefused)
	if o.result.Reason != report.ReasonLimitExceeded {
		t.Errorf("%s %q, want LimitExceeded", o.result.Reason, o.result.Error)
	}
	o = run(t, c, "--group", group, "--to", "undo:"+undoFile, "--max-messages-to-reconsume", "30").mustCode(t, report.ExitOK)
	want := map[string]int64{"orders/0": 95, "orders/1": 80, "orders/2": 80, "orders/3": 80}
	if got := offsetsOf(t, c, group); !equalMaps(got, want) {
		t.Errorf("committed %v, want %v", got, want)
	}
	p0 := o.result.Partitions[0]
	if !strings.Contains(p0.LeftAlone, "consumed 90..94 since the replay") || !strings.Contains(p0.LeftAlone, "replay offsets 80..89") {
		t.Errorf("partition 0 left alone: %q", p0.LeftAlone)
	}
	if o.result.Totals.MessagesToReconsume != 30 {
		t.Errorf("totals %+v, want 30 messages handed back", o.result.Totals)
	}
}

// TestUndoRefusesWhatItCannotUndo: the undo file of a dry run, of another
// group, or with topics, is an invalid input; nothing moves.
func TestUndoRefusesWhatItCannotUndo(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	dry := run(t, c, "--group", group, "--topic", topic, "--to", "shift:-5", "--dry-run").mustCode(t, report.ExitOK)
	real := run(t, c, "--group", group, "--topic", topic, "--to", "shift:-5", "--run-id", "r").mustCode(t, report.ExitOK)
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--group", group, "--to", "undo:" + saveResult(t, dry, false)}, "is a dry run's result"},
		{[]string{"--group", "other", "--to", "undo:" + saveResult(t, real, false)}, `is a run of group "billing", not of "other"`},
		{[]string{"--group", group, "--to", "undo:" + saveResult(t, real, false), "--topic", topic}, "conflicts with --to undo:"},
		{[]string{"--group", "other", "--to", "plan:" + saveResult(t, dry, false)}, `is a plan of group "billing", not of "other"`},
	} {
		o := run(t, c, tc.args...).mustCode(t, report.ExitInvalidInput)
		if !strings.Contains(o.result.Error, tc.says) {
			t.Errorf("%q, want %q", o.result.Error, tc.says)
		}
	}
	if got := offsetsOf(t, c, group); got["orders/0"] != committed-5 {
		t.Errorf("offsets moved: %v", got)
	}
}

// TestFileDigestUnderTheLauncher: under the launcher's names, an input file
// whose bytes are not the digest's is refused naming REPLAY_FILE_DIGEST.
func TestFileDigestUnderTheLauncher(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	dry := run(t, c, "--group", group, "--topic", topic, "--to", "shift:-5", "--dry-run").mustCode(t, report.ExitOK)
	plan := saveResult(t, dry, true)
	b, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	digest := config.FileDigestOf(b)
	// A tenant rewrote the ConfigMap: same plan, other bytes.
	tampered := saveResult(t, dry, false)
	t.Setenv(config.EnvFieldNames, "spec")
	o := run(t, c, "--group", group, "--to", "plan:"+tampered, "--file-digest", digest).mustCode(t, report.ExitInvalidInput)
	if !strings.Contains(o.result.Error, "REPLAY_FILE_DIGEST: plan's file") {
		t.Errorf("%q, want it to name REPLAY_FILE_DIGEST", o.result.Error)
	}
	run(t, c, "--group", group, "--to", "plan:"+plan, "--file-digest", digest, "--run-id", "digest-ok").mustCode(t, report.ExitOK)
}

// TestPlanRetryAfterAPartialCommit: a plan: run whose commit took on some
// partitions only (exit 5) is retried with its run ID: the partitions it
// committed are applied, not stale, and the rest are committed.
func TestPlanRetryAfterAPartialCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	c.RequireFake(t)
	for _, kind := range []string{"plan", "undo"} {
		t.Run(kind, func(t *testing.T) {
			commitAll(t, c, group, topic, partitions, committed)
			var file string
			if kind == "plan" {
				file = saveResult(t, run(t, c, "--group", group, "--topic", topic, "--to", "shift:-20", "--dry-run").mustCode(t, report.ExitOK), true)
			} else {
				file = saveResult(t, run(t, c, "--group", group, "--topic", topic, "--to", "shift:-20", "--run-id", "to-undo").mustCode(t, report.ExitOK), true)
			}
			f := c.Fake.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetCommit}, Topic: topic, Partitions: []int32{1, 2}, Err: kerr.OffsetMetadataTooLarge, Count: -1})
			id := "retry-" + kind
			run(t, c, "--group", group, "--to", kind+":"+file, "--run-id", id).mustCode(t, report.ExitPartiallyApplied)
			f.Remove()
			o := run(t, c, "--group", group, "--to", kind+":"+file, "--run-id", id).mustCode(t, report.ExitOK)
			if o.result.Reason != report.ReasonApplied || o.result.Totals.Applied != partitions {
				t.Errorf("retry: %s totals %+v", o.result.Reason, o.result.Totals)
			}
			for _, p := range o.result.Partitions {
				earlier := p.Partition == 0 || p.Partition == 3
				if earlier != strings.Contains(p.Note, "already applied by this run ID") {
					t.Errorf("%d: note %q", p.Partition, p.Note)
				}
			}
			want := int64(60)
			if kind == "undo" {
				want = committed
			}
			for k, v := range offsetsOf(t, c, group) {
				if v != want {
					t.Errorf("%s at %d, want %d", k, v, want)
				}
			}
			if a := run(t, c, "--group", group, "--to", kind+":"+file, "--run-id", id).mustCode(t, report.ExitOK); a.result.Reason != report.ReasonAlreadyApplied {
				t.Errorf("third attempt: %s, want AlreadyApplied", a.result.Reason)
			}
		})
	}
}

// TestPlanGroupMovesBetweenTheReadAndTheCommit: the plan was still good
// when the runner read the group, then a member joined before the commit.
// The broker refuses the commit and the read-back proves nothing moved:
// exit 3, and the plan can be applied once the group is empty again.
func TestPlanGroupMovesBetweenTheReadAndTheCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	c.RequireFake(t)
	plan := saveResult(t, run(t, c, "--group", group, "--topic", topic, "--to", "shift:-20", "--dry-run").mustCode(t, report.ExitOK), true)
	var joined atomic.Bool
	var member *kafkatest.Member
	var joinErr error
	var once sync.Once
	c.Fake.ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.Fake.KeepControl()
		r := req.(*kmsg.OffsetCommitRequest)
		if r.Group != group || r.Generation != -1 || joined.Load() {
			return nil, nil, false
		}
		once.Do(func() {
			c.Fake.SleepControl(func() {
				member, joinErr = c.Join(context.Background(), group, "late-consumer", topic)
				joined.Store(true)
			})
		})
		return nil, nil, false
	})
	o := run(t, c, "--group", group, "--to", "plan:"+plan, "--run-id", "race")
	if joinErr != nil {
		t.Fatal(joinErr)
	}
	if member != nil {
		defer member.Leave()
	}
	if o.code != int(report.ExitGroupActive) {
		t.Fatalf("exit %d (%s: %s), want 3", o.code, o.result.Reason, o.result.Error)
	}
	for k, v := range offsetsOf(t, c, group) {
		if v != committed {
			t.Errorf("%s moved to %d", k, v)
		}
	}
}

// TestTwoRunnersApplyOnePlan: two runners with one run ID apply the same
// plan at once; between them the plan is applied once, and neither reports
// more than it did.
func TestTwoRunnersApplyOnePlan(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	plan := saveResult(t, run(t, c, "--group", group, "--topic", topic, "--to", "shift:-20", "--dry-run").mustCode(t, report.ExitOK), false)
	var wg sync.WaitGroup
	codes := make([]int, 2)
	results := make([]*report.Result, 2)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := runProcess(t, c, nil, "--group", group, "--to", "plan:"+plan, "--run-id", "twice")
			codes[i] = o.code
			if r, err := report.Decode([]byte(o.result)); err == nil {
				results[i] = r
			}
		}()
	}
	wg.Wait()
	for i, code := range codes {
		if results[i] == nil {
			t.Fatalf("runner %d: no result (exit %d)", i, code)
		}
		// Each either applied, found it applied, or lost the race to the
		// other and says so; none may find the plan stale from the other's
		// commit, which carries the same run ID.
		if results[i].Reason == report.ReasonPlanStale {
			t.Errorf("runner %d: PlanStale from its twin's commit: %s", i, results[i].Error)
		}
	}
	for k, v := range offsetsOf(t, c, group) {
		if v != 60 {
			t.Errorf("%s at %d, want the plan's 60", k, v)
		}
	}
}

// TestPlanAndUndoRetryAfterACrashMidCommit: a runner that crashes right
// after its commit of a relative plan: (or an undo:) leaves the group moved
// and its result saying "outcome unknown"; the retry with the same run ID
// finds its own commit on every partition and is AlreadyApplied, although
// the committed offsets are no longer the plan's previous ones.
func TestPlanAndUndoRetryAfterACrashMidCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	bin := crashRunner(t)
	for _, kind := range []string{"plan", "undo"} {
		t.Run(kind, func(t *testing.T) {
			c := seeded(t)
			var file string
			want := int64(60)
			if kind == "plan" {
				file = saveResult(t, run(t, c, "--group", group, "--topic", topic, "--to", "shift:-20", "--dry-run").mustCode(t, report.ExitOK), true)
			} else {
				file = saveResult(t, run(t, c, "--group", group, "--topic", topic, "--to", "shift:-20", "--run-id", "to-undo").mustCode(t, report.ExitOK), true)
				want = committed
			}
			args := []string{"--bootstrap-servers", c.Bootstrap(), "--group", group, "--to", kind + ":" + file, "--run-id", "crash-" + kind}
			p := runBinary(t, bin, []string{"REPLAY_TEST_CRASH_AT=committed"}, args...)
			if code := p.state.ExitCode(); code != int(report.ExitInternal) || p.result == nil || !strings.Contains(p.result.Error, "offsets may have changed") {
				t.Fatalf("crash: exit %d, result %+v\n%s", code, p.result, p.stderr)
			}
			for k, v := range offsetsOf(t, c, group) {
				if v != want {
					t.Fatalf("%s at %d after the crash, want the commit's %d", k, v, want)
				}
			}
			again := runBinary(t, runnerBin, nil, args...)
			if again.state.ExitCode() != 0 || again.result == nil || again.result.Reason != report.ReasonAlreadyApplied {
				t.Fatalf("retry: exit %d, result %+v\n%s", again.state.ExitCode(), again.result, again.stderr)
			}
			if kind == "undo" && again.result.Totals.LeftAlone != 0 {
				t.Errorf("the retry took its own restores for partitions already at their previous offset: %+v", again.result.Totals)
			}
		})
	}
}

// TestPlanOfAnUndoIsRelative: an undo planned by a dry run and applied with
// plan: is stale once a partition's committed offset moved in between, and
// applies exactly otherwise, its forward moves no skips.
func TestPlanOfAnUndoIsRelative(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	undoFile := saveResult(t, run(t, c, "--group", group, "--topic", topic, "--to", "shift:-30", "--run-id", "rewind").mustCode(t, report.ExitOK), false)
	commitOffsets(t, c, map[int32]int64{1: 65})
	plan := saveResult(t, run(t, c, "--group", group, "--to", "undo:"+undoFile, "--dry-run").mustCode(t, report.ExitOK), true)
	commitOffsets(t, c, map[int32]int64{3: 55})
	o := run(t, c, "--group", group, "--to", "plan:"+plan, "--run-id", "undo-plan").mustCode(t, report.ExitRefused)
	if o.result.Reason != report.ReasonPlanStale || !strings.Contains(o.result.Error, "orders/3 (the committed offset is now 55, the plan started from 50)") {
		t.Errorf("%s: %q, want PlanStale naming orders/3", o.result.Reason, o.result.Error)
	}
	commitOffsets(t, c, map[int32]int64{3: 50})
	o = run(t, c, "--group", group, "--to", "plan:"+plan, "--run-id", "undo-plan").mustCode(t, report.ExitOK)
	want := map[string]int64{"orders/0": 80, "orders/1": 80, "orders/2": 80, "orders/3": 80}
	if got := offsetsOf(t, c, group); !equalMaps(got, want) {
		t.Errorf("committed %v, want %v", got, want)
	}
	if o.result.Target.Resolved == "" || !strings.HasPrefix(o.result.Target.Resolved, "undo:") {
		t.Errorf("resolved target %q, want the plan's undo:", o.result.Target.Resolved)
	}
}

// TestPlanAndUndoRequestsDoNotGrowWithPartitions: applying a plan and
// undoing a run read the file's partitions the way every run reads its
// scope: their Kafka requests depend on the brokers, not the partitions
// (500 against 100; up to 250 per leader, as TestRequestsDoNotGrowWithPartitions).
func TestPlanAndUndoRequestsDoNotGrowWithPartitions(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	const brokers = 3
	counts := func(parts int32) map[string]kafkatest.RequestCounts {
		c, scope := scaleWorld(t, 10, parts, 10)
		c.RequireFake(t)
		dry := run(t, c, append([]string{"--group", group, "--to", "shift:-5", "--dry-run"}, scope...)...).mustCode(t, report.ExitOK)
		plan := saveResult(t, dry, true)
		out := map[string]kafkatest.RequestCounts{}
		c.ResetRequests()
		applied := run(t, c, "--group", group, "--to", "plan:"+plan, "--run-id", "apply").mustCode(t, report.ExitOK)
		out["plan"] = c.Requests()
		undo := saveResult(t, applied, true)
		c.ResetRequests()
		run(t, c, "--group", group, "--to", "undo:"+undo, "--run-id", "undo").mustCode(t, report.ExitOK)
		out["undo"] = c.Requests()
		return out
	}
	small, large := counts(10), counts(50)
	// Log start and log end per leader; no time lookup.
	determined := map[string]int{"ConsumerGroupDescribe": 1, "DescribeGroups": 1, "OffsetFetch": 2, "OffsetCommit": 1, "ShareGroupDescribe": 1, "StreamsGroupDescribe": 1, "ListOffsets": 2 * brokers}
	timingSlack := map[string]int{"Metadata": 4, "FindCoordinator": 4, "ApiVersions": brokers}
	for _, kind := range []string{"plan", "undo"} {
		s, l := small[kind], large[kind]
		t.Logf("%s: 100 partitions %s; 500 partitions %s", kind, s, l)
		for k, n := range l {
			_, timing := timingSlack[k]
			bound, known := determined[k]
			switch {
			case !known && !timing:
				t.Errorf("%s: unexpected request kind %s (%d)", kind, k, n)
			case known && n > bound:
				t.Errorf("%s: %s: %d requests, bound %d", kind, k, n, bound)
			}
			if n > s[k]+timingSlack[k] {
				t.Errorf("%s: %s grew with partitions: %d at 500, %d at 100", kind, k, n, s[k])
			}
		}
	}
}

// TestUndoOfAnUndoSkips: an undo's forward move is no skip because the
// messages it passes over were handled before the run it undoes. Not so
// when that run is itself an undo that handed a skip's messages back: its
// previous offsets are where the skip had put the group, and moving there
// again passes over messages the consumers never handled. It takes
// --allow-skip, like the skip did.
func TestUndoOfAnUndoSkips(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	skip := run(t, c, "--group", group, "--topic", topic, "--to", "shift:+10", "--allow-skip", "--run-id", "skip").mustCode(t, report.ExitOK)
	undo := run(t, c, "--group", group, "--to", "undo:"+saveResult(t, skip, false), "--run-id", "undo-skip").mustCode(t, report.ExitOK)
	undoFile := saveResult(t, undo, false)
	// The skipped messages handed back: partition 0 handles 80..84 of them.
	commitOffsets(t, c, map[int32]int64{0: 85})
	before := offsetsOf(t, c, group)
	o := run(t, c, "--group", group, "--to", "undo:"+undoFile, "--run-id", "redo").mustCode(t, report.ExitRefused)
	if o.result.Reason != report.ReasonWouldSkipMessages {
		t.Errorf("%s %q, want WouldSkipMessages", o.result.Reason, o.result.Error)
	}
	if got := offsetsOf(t, c, group); !equalMaps(got, before) {
		t.Errorf("offsets moved: %v, were %v", got, before)
	}
	// Its plan, made with --allow-skip, is a skip when applied too.
	plan := saveResult(t, run(t, c, "--group", group, "--to", "undo:"+undoFile, "--dry-run", "--allow-skip").mustCode(t, report.ExitOK), false)
	if o := run(t, c, "--group", group, "--to", "plan:"+plan, "--run-id", "redo-plan").mustCode(t, report.ExitRefused); o.result.Reason != report.ReasonWouldSkipMessages {
		t.Errorf("the plan applied: %s %q, want WouldSkipMessages", o.result.Reason, o.result.Error)
	}
	run(t, c, "--group", group, "--to", "undo:"+undoFile, "--run-id", "redo", "--allow-skip").mustCode(t, report.ExitOK)
	want := map[string]int64{"orders/0": 90, "orders/1": 90, "orders/2": 90, "orders/3": 90}
	if got := offsetsOf(t, c, group); !equalMaps(got, want) {
		t.Errorf("committed %v, want %v", got, want)
	}
}
