package runner_test

// At most once per run ID, across time (issue 25, classes 1 and 6): a run
// the group shows anywhere moves nothing a second time, and a relative
// move whose run ID the group no longer shows says that the runner cannot
// tell a first run from a repeat.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// TestRunIDShownAnywhereMovesNothingAgain: shift:-10 moves every partition
// 80 -> 70; a consumer then commits 72 on orders/0. The same command again
// must not shift orders/0 to 62, nor anything else: the group still shows
// the run on the other partitions. So for a plan: of a shift, and an undo:
// (the consumer moved orders/0 to where its rules restore it again).
func TestRunIDShownAnywhereMovesNothingAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	for _, kind := range []string{"shift", "plan", "undo"} {
		t.Run(kind, func(t *testing.T) {
			commitAll(t, c, group, topic, partitions, committed)
			to, want := "shift:-10", int64(committed-10)
			switch kind {
			case "plan":
				to = "plan:" + saveResult(t, run(t, c, "--group", group, "--topic", topic, "--to", "shift:-10", "--dry-run").mustCode(t, report.ExitOK), false)
			case "undo":
				undone := run(t, c, "--group", group, "--topic", topic, "--to", "shift:-20", "--run-id", "undone-"+kind).mustCode(t, report.ExitOK)
				to, want = "undo:"+saveResult(t, undone, false), committed
			}
			args := []string{"--group", group, "--to", to, "--run-id", "once-" + kind}
			if kind == "shift" {
				args = append(args, "--topic", topic)
			}
			run(t, c, args...).mustCode(t, report.ExitOK)
			moved := want + 2
			if kind == "undo" {
				moved = want - 10 // where the undo rules would restore it again
			}
			if err := c.Commit(testCtx(t), group, kafkatest.Offsets{topic: {0: moved}}, ""); err != nil {
				t.Fatal(err)
			}
			o := run(t, c, args...).mustCode(t, report.ExitPartiallyApplied)
			for k, v := range offsetsOf(t, c, group) {
				if w := map[bool]int64{true: moved, false: want}[k == topic+"/0"]; v != w {
					t.Errorf("%s at %d, want %d: the run moved it again", k, v, w)
				}
			}
			if !strings.Contains(o.result.Error, "nothing was committed") || !strings.Contains(o.result.Error, topic+"/0") {
				t.Errorf("error %q does not say that nothing was committed, naming %s/0", o.result.Error, topic)
			}
			for _, p := range o.result.Partitions {
				if (p.Partition == 0) != (p.Error != "") || (p.Partition == 0) == p.Applied {
					t.Errorf("%d: applied %t error %q", p.Partition, p.Applied, p.Error)
				}
			}
			if o.result.Totals.Applied != partitions-1 || o.result.Totals.Failed != 1 {
				t.Errorf("totals %+v", o.result.Totals)
			}
		})
	}
}

// TestRunIDOverwrittenEverywhereSaysItCannotTell: once consumers have
// committed over a shift's marks on every partition, the group no longer
// shows the run: the same command again is a first run as far as the
// runner can see. It shifts (it cannot refuse every first run) and says
// that it cannot tell, in its result; a run ID the runner made up, or an
// absolute target, says nothing.
func TestRunIDOverwrittenEverywhereSaysItCannotTell(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	args := []string{"--group", group, "--topic", topic, "--to", "shift:-10", "--run-id", "overwritten"}
	first := run(t, c, args...).mustCode(t, report.ExitOK)
	if w := cannotTell(first.result); w == "" {
		t.Errorf("a first run with a run ID does not say that it cannot tell it from a repeat: %q", first.result.Warnings)
	}
	commitAll(t, c, group, topic, partitions, committed-8)
	again := run(t, c, args...).mustCode(t, report.ExitOK)
	if w := cannotTell(again.result); !strings.Contains(w, "moves the group a second time") {
		t.Errorf("warnings %q do not say that a repeat moves the group again", again.result.Warnings)
	}
	if !strings.Contains(again.stderr, "cannot tell") {
		t.Errorf("the log does not say it:\n%s", again.stderr)
	}
	for _, quiet := range [][]string{
		{"--group", group, "--topic", topic, "--to", "shift:-1"},
		{"--group", group, "--topic", topic, "--to", "earliest", "--run-id", "absolute"},
	} {
		if o := run(t, c, quiet...).mustCode(t, report.ExitOK); cannotTell(o.result) != "" {
			t.Errorf("%q: warns %q", quiet, o.result.Warnings)
		}
	}
}

func cannotTell(r *report.Result) string {
	for _, w := range r.Warnings {
		if strings.Contains(w, "cannot tell") {
			return w
		}
	}
	return ""
}

// TestRetryAfterPartialCommitFinishesTheRest: a commit that took on some
// partitions only (exit 5) is finished by the retry with its run ID, since
// the partitions without its mark are still where it found them; one that
// moved in between stops the retry from committing anything.
func TestRetryAfterPartialCommitFinishesTheRest(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	c.RequireFake(t)
	for _, moved := range []bool{false, true} {
		t.Run(fmt.Sprintf("moved=%t", moved), func(t *testing.T) {
			commitAll(t, c, group, topic, partitions, committed)
			id := fmt.Sprintf("partial-%t", moved)
			args := []string{"--group", group, "--topic", topic, "--to", "shift:-10", "--run-id", id}
			f := c.Fake.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetCommit}, Topic: topic, Partitions: []int32{2, 3}, Err: kerr.OffsetMetadataTooLarge, Count: -1})
			run(t, c, args...).mustCode(t, report.ExitPartiallyApplied)
			f.Remove()
			want := map[string]int64{"orders/0": 70, "orders/1": 70, "orders/2": 70, "orders/3": 70}
			if moved {
				if err := c.Commit(testCtx(t), group, kafkatest.Offsets{topic: {3: 85}}, "consumer"); err != nil {
					t.Fatal(err)
				}
				want["orders/2"], want["orders/3"] = 80, 85
				run(t, c, args...).mustCode(t, report.ExitPartiallyApplied)
			} else {
				o := run(t, c, args...).mustCode(t, report.ExitOK)
				if o.result.Reason != report.ReasonApplied || o.result.Totals.Applied != partitions {
					t.Errorf("retry: %s %+v", o.result.Reason, o.result.Totals)
				}
			}
			if got := offsetsOf(t, c, group); !equalMaps(got, want) {
				t.Fatalf("offsets %v, want %v", got, want)
			}
		})
	}
	// An older runner's marks say nothing of the rest of the commit: the
	// retry moves nothing it cannot vouch for.
	commitAll(t, c, group, topic, partitions, committed)
	if err := c.Commit(testCtx(t), group, kafkatest.Offsets{topic: {0: 70, 1: 70}}, "kafka-replay run=r1 at=2026-03-01T10:00:00Z"); err != nil {
		t.Fatal(err)
	}
	run(t, c, "--group", group, "--topic", topic, "--to", "shift:-10", "--run-id", "r1").mustCode(t, report.ExitPartiallyApplied)
	if got, want := offsetsOf(t, c, group), map[string]int64{"orders/0": 70, "orders/1": 70, "orders/2": 80, "orders/3": 80}; !equalMaps(got, want) {
		t.Fatalf("offsets %v, want %v", got, want)
	}
}

// TestFinishedRunIgnoresWhatCameLater: after a run succeeded, partitions
// are added to its topic, or the group starts committing another topic.
// The same run ID again is AlreadyApplied and commits none of them.
func TestFinishedRunIgnoresWhatCameLater(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	ctx := testCtx(t)
	first := run(t, c, "--group", group, "--topic", topic, "--to", "earliest", "--run-id", "grown").mustCode(t, report.ExitOK)
	if first.result.Totals.Applied != partitions {
		t.Fatalf("first run: %+v", first.result.Totals)
	}
	if err := c.AddPartitions(ctx, topic, partitions+2); err != nil {
		t.Fatal(err)
	}
	o := run(t, c, "--group", group, "--topic", topic, "--to", "earliest", "--run-id", "grown").mustCode(t, report.ExitOK)
	if o.result.Reason != report.ReasonAlreadyApplied || o.result.Totals.Applied != partitions || o.result.Totals.LeftAlone != 2 {
		t.Errorf("%s, totals %+v", o.result.Reason, o.result.Totals)
	}
	for p, off := range committedOf(t, c, group)[topic] {
		if p >= partitions {
			t.Errorf("added partition %d committed at %d", p, off.Offset)
		}
	}

	// Every committed topic: the scope grows with the group's commits.
	if err := c.Seed(ctx, "payments", 2, 10, base, 0); err != nil {
		t.Fatal(err)
	}
	all := []string{"--group", "ledger", "--to", "earliest", "--run-id", "grown-all"}
	if err := c.Commit(ctx, "ledger", kafkatest.Offsets{topic: {0: 50, 1: 50}}, ""); err != nil {
		t.Fatal(err)
	}
	run(t, c, all...).mustCode(t, report.ExitOK)
	if err := c.Commit(ctx, "ledger", kafkatest.Offsets{"payments": {0: 5, 1: 5}}, ""); err != nil {
		t.Fatal(err)
	}
	o = run(t, c, all...).mustCode(t, report.ExitOK)
	if o.result.Reason != report.ReasonAlreadyApplied || o.result.Totals.LeftAlone != 2 {
		t.Errorf("%s, totals %+v", o.result.Reason, o.result.Totals)
	}
	for p, off := range committedOf(t, c, "ledger")["payments"] {
		if off.Offset != 5 {
			t.Errorf("payments/%d moved to %d", p, off.Offset)
		}
	}
}

// TestUndoOfAnEditedFile (issue 25, class 5): the undo: file of a rewind
// 80 -> 60, its orders/0 previousOffset edited to 95. Where the group still
// records the rewind's commit the undo is refused; where consumers have
// committed over all of it, the forward move to 95 is a skip, refused
// without --allow-skip. The unedited file, in the same state, needs it too
// (nothing vouches for it any more), and not while a partition still
// carries the rewind's commit; so does a plan of it, which cannot be edited
// into one whose move is not weighed.
func TestUndoOfAnEditedFile(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	rewind := run(t, c, "--group", group, "--topic", topic, "--to", "shift:-20", "--run-id", "edited-rewind").mustCode(t, report.ExitOK)
	genuine := saveResult(t, rewind, false)
	var r report.Result
	if err := json.Unmarshal([]byte(rewind.resultRaw), &r); err != nil {
		t.Fatal(err)
	}
	for i := range r.Partitions {
		if r.Partitions[i].Partition == 0 {
			v := int64(95)
			r.Partitions[i].PreviousOffset = &v
		}
	}
	b, _ := json.Marshal(&r)
	edited := filepath.Join(t.TempDir(), "edited.json")
	if err := os.WriteFile(edited, b, 0o600); err != nil {
		t.Fatal(err)
	}
	unchanged := func() {
		t.Helper()
		if got := offsetsOf(t, c, group); got["orders/0"] > committed {
			t.Fatalf("orders/0 moved to %d, past the %d the rewind found", got["orders/0"], committed)
		}
	}
	// The rewind's commit is on every partition: the file contradicts it.
	o := run(t, c, "--group", group, "--to", "undo:"+edited, "--run-id", "undo-edited-1").mustCode(t, report.ExitInvalidInput)
	if !strings.Contains(o.result.Error, "orders/0: the file says previousOffset 95") {
		t.Errorf("error %q", o.result.Error)
	}
	unchanged()
	// A consumer committed over orders/0: the others still vouch for it.
	commitOffsets(t, c, map[int32]int64{0: 62})
	o = run(t, c, "--group", group, "--to", "undo:"+edited, "--run-id", "undo-edited-2").mustCode(t, report.ExitInvalidInput)
	if !strings.Contains(o.result.Error, "are not the commit of run edited-rewind") {
		t.Errorf("error %q", o.result.Error)
	}
	unchanged()
	run(t, c, "--group", group, "--to", "undo:"+genuine, "--run-id", "undo-genuine-dry", "--dry-run").mustCode(t, report.ExitOK)
	// Consumers committed over every partition: nothing vouches for a
	// previous offset, and a forward move past it is a skip.
	commitOffsets(t, c, map[int32]int64{0: 62, 1: 62, 2: 62, 3: 62})
	for _, file := range []string{edited, genuine} {
		o = run(t, c, "--group", group, "--to", "undo:"+file, "--run-id", "undo-unvouched").mustCode(t, report.ExitRefused)
		if o.result.Reason != report.ReasonWouldSkipMessages || !strings.Contains(o.result.Error, "orders/0 by") {
			t.Errorf("%s: %s %q", file, o.result.Reason, o.result.Error)
		}
		unchanged()
	}
	// Its plan keeps the move weighed, and cannot be edited into one that
	// is not: the note that says so is part of the plan's digest.
	dry := run(t, c, "--group", group, "--to", "undo:"+genuine, "--dry-run", "--allow-skip").mustCode(t, report.ExitOK)
	var pr report.Result
	if err := json.Unmarshal([]byte(dry.resultRaw), &pr); err != nil {
		t.Fatal(err)
	}
	for i := range pr.Partitions {
		note := pr.Partitions[i].Note
		if !strings.HasPrefix(note, report.NoteUnverified) {
			t.Fatalf("%d: note %q", pr.Partitions[i].Partition, note)
		}
		pr.Partitions[i].Note = note[strings.Index(note, "; ")+2:]
	}
	b, _ = json.Marshal(&pr)
	unweighed := filepath.Join(t.TempDir(), "unweighed.json")
	if err := os.WriteFile(unweighed, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if o = run(t, c, "--group", group, "--to", "plan:"+unweighed, "--run-id", "undo-plan-edited").mustCode(t, report.ExitInvalidInput); !strings.Contains(o.result.Error, "plan digest") {
		t.Errorf("an edited plan of the undo: %q", o.result.Error)
	}
	if o = run(t, c, "--group", group, "--to", "plan:"+saveResult(t, dry, false), "--run-id", "undo-plan").mustCode(t, report.ExitRefused); o.result.Reason != report.ReasonWouldSkipMessages {
		t.Errorf("the plan of the undo: %s", o.result.Reason)
	}
	unchanged()
	o = run(t, c, "--group", group, "--to", "undo:"+genuine, "--run-id", "undo-allowed", "--allow-skip").mustCode(t, report.ExitOK)
	if got := offsetsOf(t, c, group); got["orders/0"] != committed {
		t.Errorf("orders/0 at %d, want %d", got["orders/0"], committed)
	}
}

// TestPlanFromAnotherCluster (issue 25, class 10): a dry run's plan made on
// cluster A does not apply on cluster B, whose topic and group have the
// same names; nor does an undo: of a run on A. Every result names its
// cluster, and a plan that names none is refused. Two clusters need kfake
// (each with its own cluster ID); on any Kafka, a plan whose clusterId
// names another cluster stands for one made there.
func TestPlanFromAnotherCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	a := seeded(t)
	dry := run(t, a, "--group", group, "--topic", topic, "--to", "time:"+base.Add(10*time.Second).Format(time.RFC3339), "--dry-run").mustCode(t, report.ExitOK)
	clusterA := dry.result.ClusterID
	if clusterA == "" {
		t.Fatal("the plan names no cluster")
	}
	plan := saveResult(t, dry, false)
	withCluster := func(id string) string {
		var r report.Result
		if err := json.Unmarshal([]byte(dry.resultRaw), &r); err != nil {
			t.Fatal(err)
		}
		r.ClusterID = id
		raw, _ := json.Marshal(&r)
		p := filepath.Join(t.TempDir(), "plan.json")
		if err := os.WriteFile(p, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unmoved := func(c *kafkatest.Cluster, what string) {
		t.Helper()
		for k, v := range offsetsOf(t, c, group) {
			if v != committed {
				t.Errorf("%s: %s moved to %d", what, k, v)
			}
		}
	}
	// Planned elsewhere, or without its cluster (an older runner's plan):
	// refused, nothing moved.
	for file, want := range map[string]string{
		withCluster("elsewhere"): "was made on Kafka cluster elsewhere, and this is cluster " + clusterA,
		withCluster(""):          "does not say which Kafka cluster",
	} {
		if o := run(t, a, "--group", group, "--to", "plan:"+file, "--run-id", "forged").mustCode(t, report.ExitInvalidInput); !strings.Contains(o.result.Error, want) {
			t.Errorf("error %q, want %q", o.result.Error, want)
		}
		unmoved(a, "a refused plan")
	}

	run(t, a, "--group", group, "--to", "plan:"+plan, "--run-id", "on-a-plan").mustCode(t, report.ExitOK)

	// Two clusters with the same names, each its own ID.
	if a.Fake == nil {
		return
	}
	a, b := seededWith(t, kfake.ClusterID("cluster-a")), seededWith(t, kfake.ClusterID("cluster-b"))
	plan = saveResult(t, run(t, a, "--group", group, "--topic", topic, "--to", "time:"+base.Add(10*time.Second).Format(time.RFC3339), "--dry-run").mustCode(t, report.ExitOK), false)
	undo := saveResult(t, run(t, a, "--group", group, "--topic", topic, "--to", "shift:-5", "--run-id", "on-a").mustCode(t, report.ExitOK), true)
	for _, to := range []string{"plan:" + plan, "undo:" + undo} {
		o := run(t, b, "--group", group, "--to", to, "--run-id", "on-b").mustCode(t, report.ExitInvalidInput)
		if !strings.Contains(o.result.Error, "was made on Kafka cluster cluster-a, and this is cluster cluster-b") || o.result.ClusterID != "cluster-b" {
			t.Errorf("%s: cluster %q, error %q", to[:4], o.result.ClusterID, o.result.Error)
		}
		unmoved(b, "cluster B")
	}
}
