package runner

import (
	"strings"
	"testing"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// undone is one partition of an undone run: it moved from prev to n.
func undone(prev *int64, n int64, applied bool) report.Partition {
	return report.Partition{Topic: "o", Partition: 0, PreviousOffset: prev, NewOffset: n, Applied: applied}
}

// TestDecideUndo: every branch of the undo rules (docs/usage.md, "Undo"),
// with and without force.
func TestDecideUndo(t *testing.T) {
	p := func(v int64) *int64 { return &v }
	tests := []struct {
		name    string
		part    report.Partition
		c       *int64
		force   bool
		restore bool
		forced  bool
		reason  string // in LeftAlone
	}{
		{"not applied by the undone run", undone(p(100), 50, false), p(60), false, false, false, "not moved by the undone run"},
		{"not applied, forced: still alone", undone(p(100), 50, false), p(60), true, false, false, "not moved by the undone run"},
		{"not moved by it (n == p)", undone(p(100), 100, true), p(120), true, false, false, "not moved by the undone run (it stayed at 100)"},
		{"no previous offset", undone(nil, 50, true), p(50), false, false, false, "Kafka cannot commit \"no offset\""},
		{"no previous offset, forced: still alone", undone(nil, 50, true), p(50), true, false, false, "force does not change it"},
		{"already at its previous offset", undone(p(100), 50, true), p(100), false, false, false, "already at its previous offset 100"},
		{"already there, forced: nothing to do", undone(p(100), 50, true), p(100), true, false, false, "already at its previous offset 100"},
		// A rewind from 100 to 50.
		{"rewind, nothing consumed since (c == n)", undone(p(100), 50, true), p(50), false, true, false, ""},
		{"rewind, part re-consumed (n < c < p)", undone(p(100), 50, true), p(70), false, true, false, ""},
		{"rewind, just short of p", undone(p(100), 50, true), p(99), false, true, false, ""},
		{"rewind, consumed past p", undone(p(100), 50, true), p(130), false, false, false, "consumed past its previous offset 100 (now at 130); restoring would re-consume 30 messages"},
		{"rewind, consumed past p, forced", undone(p(100), 50, true), p(130), true, true, true, "consumed past its previous offset 100"},
		{"rewind, moved back by something else", undone(p(100), 50, true), p(40), false, false, false, "moved back since the replay by something else (now at 40, the replay set 50)"},
		{"rewind, moved back, forced", undone(p(100), 50, true), p(40), true, true, true, "moved back since the replay"},
		{"rewind, offset gone since", undone(p(100), 50, true), nil, false, false, false, "has no committed offset now"},
		{"rewind, offset gone, forced", undone(p(100), 50, true), nil, true, true, true, "has no committed offset now"},
		// A skip from 100 to 150.
		{"skip, nothing consumed since (c == n)", undone(p(100), 150, true), p(150), false, true, false, ""},
		{"skip, consumed since (c > n)", undone(p(100), 150, true), p(170), false, false, false, "consumed 150..169 since the replay; restoring would re-consume them; to get the 50 skipped messages back, replay offsets 100..149 by explicit offsets instead"},
		{"skip, consumed since, forced", undone(p(100), 150, true), p(170), true, true, true, "consumed 150..169"},
		{"skip, moved back by something else (p < c < n)", undone(p(100), 150, true), p(120), false, false, false, "moved back since the replay by something else (now at 120, the replay set 150)"},
		{"skip, moved back below p", undone(p(100), 150, true), p(90), false, false, false, "moved back since the replay by something else (now at 90"},
		{"skip, moved back, forced", undone(p(100), 150, true), p(120), true, true, true, "moved back since the replay"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decideUndo(tt.part, tt.c, tt.force)
			if d.Restore != tt.restore || d.Forced != tt.forced {
				t.Errorf("restore %t forced %t, want %t %t (%+v)", d.Restore, d.Forced, tt.restore, tt.forced, d)
			}
			if tt.reason == "" && d.LeftAlone != "" {
				t.Errorf("restored with a reason to leave it alone: %q", d.LeftAlone)
			}
			if !strings.Contains(d.LeftAlone, tt.reason) {
				t.Errorf("reason %q, want it to say %q", d.LeftAlone, tt.reason)
			}
		})
	}
}

// undoTarget is an undo: target over parts, as Validate leaves it.
func undoTarget(force bool, parts ...report.Partition) config.Target {
	r := &report.Result{Schema: report.Schema, Group: "g", RunID: "undone", Reason: report.ReasonApplied, Partitions: parts}
	return config.Target{Kind: config.KindUndo, Given: "undo:/r.json", File: "/r.json", Result: r, Force: force}
}

func at(topic string, part int32, prev *int64, n int64, applied bool) report.Partition {
	return report.Partition{Topic: topic, Partition: part, PreviousOffset: prev, NewOffset: n, Applied: applied}
}

// TestPlanUndo: the rules applied to a snapshot: restores clamped into the
// log, left-alone partitions uncommitted at their committed offset, a gone
// partition left alone, a retry's own commits already applied, and only the
// rules' forward moves exempt from the skip guard.
func TestPlanUndo(t *testing.T) {
	p := func(v int64) *int64 { return &v }
	tg := undoTarget(false,
		at("o", 0, p(100), 50, true),  // rewind, c 70: restore 100 (forward, exempt)
		at("o", 1, p(100), 150, true), // skip, c 150: restore 100
		at("o", 2, p(100), 50, true),  // rewind, c 130: left alone
		at("o", 3, p(5), 50, true),    // rewind? no: skip from 5 to 50; c 50: restore 5, below log start 20
		at("o", 4, nil, 50, true),     // no previous: left alone
		at("gone", 0, p(1), 2, true),  // the topic is gone: left alone
		at("o", 5, p(100), 50, true),  // a retry: this run's commit in place
	)
	id := runIdent{RunID: "undo-1", Plan: planDigest(tg, config.Scope{})}
	b := newSnap()
	for i, c := range []int64{70, 150, 130, 50, 50, 60} {
		b.partition("o", int32(i), 20, 200).committed("o", int32(i), c, "consumer")
	}
	// The undone run's commit is still on o/1, vouching for the file.
	b.committed("o", 1, 150, undoneMark(tg.Result, "o", 1))
	// The run's earlier attempt committed o/5 (60 -> 100) only.
	b.committed("o", 5, 100, markOfPlan(id, mustPlan(t, b.s, tg, id), p(60)))
	pl, err := MakePlan(b.s, tg, id)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		commit, exempt, applied bool
		newOffset               int64
		left                    string
	}
	wants := []want{
		{true, true, false, 100, ""},
		{true, true, false, 100, ""},
		{false, false, false, 130, "consumed past its previous offset"},
		{true, true, false, 20, ""},
		{false, false, false, 50, "had no committed offset before"},
		{false, false, false, 0, "no longer exists"},
		{false, false, true, 100, ""},
	}
	for i, w := range wants {
		rp := pl.Partitions[i]
		if pl.Commit[i] != w.commit || pl.Exempt[i] != w.exempt || rp.Applied != w.applied || rp.NewOffset != w.newOffset || !strings.Contains(rp.LeftAlone, w.left) || (w.left == "") != (rp.LeftAlone == "") {
			t.Errorf("%s/%d: commit %t exempt %t %+v, want %+v", rp.Topic, rp.Partition, pl.Commit[i], pl.Exempt[i], rp, w)
		}
		if rp.LeftAlone != "" && rp.Delta != nil && *rp.Delta != 0 {
			t.Errorf("%s/%d left alone with delta %d, want 0", rp.Topic, rp.Partition, *rp.Delta)
		}
	}
	if rp := pl.Partitions[3]; !rp.Clamped || !strings.Contains(rp.Note, "clamped from 5 to log start 20") {
		t.Errorf("restore below the log start not clamped: %+v", rp)
	}
	if rp := pl.Partitions[0]; *rp.Delta != -30 {
		t.Errorf("the restore of a rewind moves 70 -> 100, delta %d, want -30", *rp.Delta)
	}
	if pl.AlreadyApplied() {
		t.Error("a plan with partitions to commit is not already applied")
	}
	// The skip guard: the rules' forward moves are exempt.
	if ref := judgePlan(pl, false, config.Limit{}); ref != nil {
		t.Errorf("an undo's own restores refused: %+v", ref)
	}
	// Forced, the rewind consumed past p is restored too; a forced forward
	// move is a skip like any other.
	forced := undoTarget(true, at("o", 0, p(100), 150, true), at("o", 1, p(100), 50, true))
	fb := newSnap().partition("o", 0, 0, 200).committed("o", 0, 170, "").partition("o", 1, 0, 200).committed("o", 1, 40, "")
	fp := mustPlan(t, fb.s, forced)
	if !fp.Commit[0] || !fp.Commit[1] || fp.Exempt[1] || !strings.HasPrefix(fp.Partitions[1].Note, report.NoteForced) {
		t.Errorf("forced: commit %v exempt %v notes %q, %q", fp.Commit, fp.Exempt, fp.Partitions[0].Note, fp.Partitions[1].Note)
	}
	ref := judgePlan(fp, false, config.Limit{})
	if ref == nil || ref.Reason != report.ReasonWouldSkipMessages || !strings.Contains(ref.Error, "o/1 by 60") {
		t.Errorf("a forced forward move: %+v, want WouldSkipMessages naming o/1", ref)
	}
}

// TestPlanUndoNothingToCommit: every partition left alone is no failure and
// not "already applied".
func TestPlanUndoNothingToCommit(t *testing.T) {
	p := func(v int64) *int64 { return &v }
	tg := undoTarget(false, at("o", 0, p(100), 50, true))
	pl := mustPlan(t, newSnap().partition("o", 0, 0, 200).committed("o", 0, 150, "").s, tg)
	if pl.ToCommit() != 0 || pl.AlreadyApplied() || len(pl.Stale()) != 0 || judgePlan(pl, false, config.Limit{}) != nil {
		t.Errorf("plan %+v", pl)
	}
}

// planTarget is a plan: target over a dry run's parts.
func planTarget(resolved string, parts ...report.Partition) config.Target {
	r := &report.Result{Schema: report.Schema, Group: "g", DryRun: true, Reason: report.ReasonDryRun, Partitions: parts, Target: report.Target{Resolved: resolved}}
	r.Plan = report.PlanDigest("g", resolved, parts)
	return config.Target{Kind: config.KindPlan, Given: "plan:/p.json", File: "/p.json", Result: r}
}

// TestPlanFromFile: the planned offsets exactly; a relative plan is stale
// where the committed offset moved, any plan where the planned offset left
// the log or the partition is gone; an absolute plan reports the offsets of
// now; a retry's own commits are applied, never stale.
func TestPlanFromFile(t *testing.T) {
	p := func(v int64) *int64 { return &v }
	parts := []report.Partition{
		at("o", 0, p(80), 60, false),
		at("o", 1, p(80), 60, false),
		at("o", 2, p(80), 5, false),
		at("o", 3, nil, 60, false),
		at("gone", 0, p(1), 0, false),
		at("o", 4, p(80), 60, false),
	}
	b := func() *snap {
		return newSnap().partition("o", 0, 0, 100).committed("o", 0, 80, "").
			partition("o", 1, 0, 100).committed("o", 1, 90, "").
			partition("o", 2, 10, 100).committed("o", 2, 80, "").
			partition("o", 3, 0, 100).committed("o", 3, 70, "").
			partition("o", 4, 0, 100) // its committed offset expired
	}
	for _, tc := range []struct {
		resolved string
		stale    []string // substrings of each partition's Error, "" for none
	}{
		{"shift:-20", []string{"", "stale: the committed offset is now 90, the plan started from 80", "no longer inside the log [10, 100]", "the committed offset is now 70, the plan started from none", "no longer exists", "the committed offset is now none, the plan started from 80"}},
		{"time:2026-03-01T09:00:00Z", []string{"", "", "no longer inside the log [10, 100]", "", "no longer exists", "stale: the plan started from the committed offset 80; the group has none now"}},
	} {
		t.Run(tc.resolved, func(t *testing.T) {
			tg := planTarget(tc.resolved, parts...)
			pl := mustPlan(t, b().s, tg)
			for i, want := range tc.stale {
				rp := pl.Partitions[i]
				if (want == "") != (rp.Error == "") || !strings.Contains(rp.Error, want) || pl.Commit[i] != (want == "") {
					t.Errorf("%s/%d: error %q commit %t, want %q", rp.Topic, rp.Partition, rp.Error, pl.Commit[i], want)
				}
				if want == "" && rp.NewOffset != parts[i].NewOffset {
					t.Errorf("%s/%d: new offset %d, want the planned %d", rp.Topic, rp.Partition, rp.NewOffset, parts[i].NewOffset)
				}
			}
			// An absolute plan weighs the offsets of now: 90 -> 60.
			if rp := pl.Partitions[1]; tc.resolved[0] == 't' && (*rp.PreviousOffset != 90 || *rp.Delta != 30) {
				t.Errorf("absolute plan on a moved partition: %+v", rp)
			}
			ref := judgePlan(pl, false, config.Limit{})
			if ref == nil || ref.Reason != report.ReasonPlanStale || !strings.Contains(ref.Error, "gone/0 (the partition no longer exists)") {
				t.Errorf("refusal %+v, want PlanStale naming gone/0", ref)
			}
		})
	}
	// A retry after a crash mid-commit: the partitions this run committed
	// moved, and are applied, not stale.
	tg := planTarget("shift:-20", at("o", 0, p(80), 60, false), at("o", 1, p(80), 60, false))
	id := runIdent{RunID: "apply-1", Plan: planDigest(tg, config.Scope{})}
	s := newSnap().partition("o", 0, 0, 100).committed("o", 0, 80, "").partition("o", 1, 0, 100).committed("o", 1, 80, "").s
	mine := markOfPlan(id, mustPlan(t, s, tg, id), p(80))
	s.Committed[TP{Topic: "o", Partition: 0}] = Committed{Offset: 60, Metadata: mine}
	pl := mustPlan(t, s, tg, id)
	if !pl.Partitions[0].Applied || pl.Commit[0] || !pl.Commit[1] || len(pl.Stale()) != 0 {
		t.Errorf("retry: %+v commit %v", pl.Partitions, pl.Commit)
	}
	s.Committed[TP{Topic: "o", Partition: 1}] = Committed{Offset: 60, Metadata: mine}
	if pl := mustPlan(t, s, tg, id); !pl.AlreadyApplied() {
		t.Errorf("every partition carries this run's commit: %+v", pl.Partitions)
	}
	// A plan's left-alone partitions stay uncommitted, at the offset of now.
	tg = planTarget("undo:/r.json (2 partitions)", at("o", 0, p(80), 100, false), report.Partition{Topic: "o", Partition: 1, PreviousOffset: p(80), NewOffset: 80, Delta: p(0), LeftAlone: "consumed past"})
	s = newSnap().partition("o", 0, 0, 100).committed("o", 0, 80, "").partition("o", 1, 0, 100).committed("o", 1, 80, "").s
	pl = mustPlan(t, s, tg)
	if !pl.Commit[0] || !pl.Exempt[0] || pl.Commit[1] || pl.Partitions[1].LeftAlone == "" || judgePlan(pl, false, config.Limit{}) != nil {
		t.Errorf("an undo's plan: %+v commit %v exempt %v", pl.Partitions, pl.Commit, pl.Exempt)
	}
}

// TestPlanFromFileUnmarked: in a group whose offsets carry no run ID (a
// share group's start offsets), a relative plan's partition found at its
// planned offset is applied, not stale, so a retry of an applied plan
// succeeds and moves nothing; one found elsewhere is still stale, and a
// group with run IDs still holds a plan to its previous offsets.
func TestPlanFromFileUnmarked(t *testing.T) {
	p := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name     string
		unmarked bool
		now      [3]int64
		applied  []bool
		commit   []bool
		stale    string // a partition's Error, "" for none stale
		done     bool   // AlreadyApplied
	}{
		{"every partition at its target", true, [3]int64{80, 80, 80}, []bool{true, true, true}, []bool{false, false, false}, "", true},
		{"one at its target, two still to move", true, [3]int64{80, 0, 0}, []bool{true, false, false}, []bool{false, true, true}, "", false},
		{"one moved elsewhere", true, [3]int64{80, 0, 40}, []bool{true, false, false}, []bool{false, true, false}, "the committed offset is now 40, the plan started from 0", false},
		{"with run IDs the position proves nothing", false, [3]int64{80, 80, 80}, []bool{false, false, false}, []bool{false, false, false}, "the committed offset is now 80, the plan started from 0", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The plan moves each partition from 0 to 80 (an undo of a
			// rewind from 80 to 0).
			pl := planTarget("undo:/r.json (3 partitions)",
				at("o", 0, p(0), 80, false), at("o", 1, p(0), 80, false), at("o", 2, p(0), 80, false))
			sn := newSnap()
			for i, o := range tc.now {
				sn = sn.partition("o", int32(i), 0, 100).committed("o", int32(i), o, "")
			}
			sn.s.Unmarked = tc.unmarked
			got := mustPlan(t, sn.s, pl)
			for i, rp := range got.Partitions {
				if rp.Applied != tc.applied[i] || got.Commit[i] != tc.commit[i] {
					t.Errorf("o/%d: applied %t commit %t, want %t %t (%+v)", i, rp.Applied, got.Commit[i], tc.applied[i], tc.commit[i], rp)
				}
				if rp.Applied && (rp.PreviousOffset == nil || *rp.PreviousOffset != 0 || rp.NewOffset != 80 || !strings.Contains(rp.Note, "already at the plan's new offset")) {
					t.Errorf("o/%d at its target reads %+v, want the plan's move 0 -> 80 and a note", i, rp)
				}
			}
			if st := got.Stale(); (tc.stale == "") != (len(st) == 0) || (tc.stale != "" && !strings.Contains(st[0].Error, tc.stale)) {
				t.Errorf("stale %+v, want %q", st, tc.stale)
			}
			if got.AlreadyApplied() != tc.done {
				t.Errorf("AlreadyApplied %t, want %t", got.AlreadyApplied(), tc.done)
			}
		})
	}
}

// markOfPlan is the commit metadata a run that commits plan p (the whole
// of it) leaves on a partition whose committed offset was prev.
func markOfPlan(id runIdent, p *Plan, prev *int64) string {
	return commitMark{Version: metadataVersion, RunID: id.RunID, Plan: id.Plan, Prev: prev, Count: p.Count, Set: p.Set}.String()
}

// undoneMark is the commit metadata the run of result r left on one of
// its partitions.
func undoneMark(r *report.Result, topic string, part int32) string {
	var es []setEntry
	var prev *int64
	for _, p := range r.Partitions {
		if p.Applied {
			es = append(es, setEntry{TP{Topic: p.Topic, Partition: p.Partition}, p.PreviousOffset, p.NewOffset})
			if p.Topic == topic && p.Partition == part {
				prev = p.PreviousOffset
			}
		}
	}
	return commitMark{Version: metadataVersion, RunID: r.RunID, Plan: "0123456789abcdef", Prev: prev, Count: len(es), Set: setDigest(es)}.String()
}

// TestUndoChecksTheUndoneRunsCommit (issue 25, class 5): an undo: file's
// previous offsets are what it restores and what makes its forward moves
// no skips; the group's commit metadata of the undone run vouches for
// them, and an edited file is refused or, where the group no longer
// records the run, its forward moves are skips.
func TestUndoChecksTheUndoneRunsCommit(t *testing.T) {
	p := func(v int64) *int64 { return &v }
	// A rewind 100 -> 50 of o/0 and o/1; the consumers have since
	// committed 70 on o/0, and nothing on o/1.
	orig := undoTarget(false, at("o", 0, p(100), 50, true), at("o", 1, p(100), 50, true))
	mark := undoneMark(orig.Result, "o", 1)
	world := func(md1 string) *Snapshot {
		return newSnap().partition("o", 0, 0, 200).committed("o", 0, 70, "consumer").
			partition("o", 1, 0, 200).committed("o", 1, 50, md1).s
	}
	edited := undoTarget(false, at("o", 0, p(160), 50, true), at("o", 1, p(100), 50, true))
	for _, tc := range []struct {
		name   string
		tg     config.Target
		s      *Snapshot
		exempt bool   // o/0's forward move
		err    string // MakePlan's
	}{
		{name: "vouched for by the run's commit", tg: orig, s: world(mark), exempt: true},
		{name: "no commit of the run left", tg: orig, s: world("consumer")},
		{name: "the file's previous offset edited where the run's mark is", tg: undoTarget(false, at("o", 0, p(100), 50, true), at("o", 1, p(130), 50, true)), s: world(mark), err: "o/1: the file says previousOffset 130 and newOffset 50, the group's commit of run undone there says 100 and 50"},
		{name: "edited where the mark is gone", tg: edited, s: world(mark), err: "are not the commit of run undone"},
		{name: "edited, and no commit of the run left", tg: edited, s: world("consumer")},
		{name: "a partition the file leaves out", tg: undoTarget(false, at("o", 0, p(100), 50, true)), s: world(mark), err: "records run undone's commit on o/1, which the file does not list"},
		{name: "an older runner's mark", tg: orig, s: world(commitMark{Version: metadataVersion, RunID: "undone", Plan: "0123456789abcdef", Prev: p(100)}.String())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := runIdent{RunID: "the-undo", Plan: planDigest(tc.tg, config.Scope{})}
			pl, err := MakePlan(tc.s, tc.tg, id)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "nothing was committed") {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !pl.Commit[0] || pl.Exempt[0] != tc.exempt || strings.HasPrefix(pl.Partitions[0].Note, report.NoteUnverified) == tc.exempt {
				t.Errorf("o/0: commit %t exempt %t note %q, want exempt %t", pl.Commit[0], pl.Exempt[0], pl.Partitions[0].Note, tc.exempt)
			}
			ref := judgePlan(pl, false, config.Limit{})
			if tc.exempt != (ref == nil) || (ref != nil && ref.Reason != report.ReasonWouldSkipMessages) {
				t.Errorf("guards: %+v", ref)
			}
		})
	}
}

// TestJudgePlan: the guards on the partitions a run commits.
func TestJudgePlan(t *testing.T) {
	p := func(v int64) *int64 { return &v }
	mk := func(deltas ...*int64) *Plan {
		pl := &Plan{}
		for i, d := range deltas {
			rp := report.Partition{Topic: "o", Partition: int32(i), Delta: d, NewOffset: 100, LogEndOffset: 1000}
			if d != nil {
				rp.PreviousOffset = p(100 + *d)
			}
			pl.add(rp, true, false)
		}
		return pl
	}
	none := config.Limit{}
	bounds := func(pl *Plan, start, end int64) *Plan {
		for i := range pl.Partitions {
			pl.Partitions[i].LogStartOffset, pl.Partitions[i].LogEndOffset = start, end
		}
		return pl
	}
	tests := []struct {
		name   string
		plan   *Plan
		skip   bool
		limit  config.Limit
		reason report.Reason
		says   string
	}{
		{"a rewind", mk(p(10), p(20)), false, none, "", ""},
		{"no previous offset is no skip", mk(nil), false, none, "", ""},
		{"a skip", mk(p(10), p(-5)), false, none, report.ReasonWouldSkipMessages, "would skip 5 message(s) the consumers never handled, moving 1 partition(s) ahead of the committed offset: o/1 by 5"},
		{"a skip, allowed", mk(p(-5)), true, none, "", ""},
		{"many skips are counted", mk(p(-1), p(-1), p(-1), p(-1), p(-1), p(-1), p(-1)), false, none, report.ReasonWouldSkipMessages, "o/4 by 1 and 2 more"},
		{"within the limit", mk(p(10), p(20)), false, config.Limit{N: 30, IsSet: true}, "", ""},
		{"over the limit", mk(p(10), p(21)), false, config.Limit{N: 30, IsSet: true}, report.ReasonLimitExceeded, "would re-consume 31 message(s), more than the 30"},
		{"a limit of 0", mk(p(1)), false, config.Limit{N: 0, IsSet: true}, report.ReasonLimitExceeded, "more than the 0"},
		{"a skip before the limit", mk(p(-1), p(50)), false, config.Limit{N: 1, IsSet: true}, report.ReasonWouldSkipMessages, "o/0 by 1"},
		// Only messages still in the log count: a committed offset below
		// the log start (retention deleted what it points at) or past the
		// log end moves over fewer, or none.
		{"ahead from below the log start, to it", bounds(mk(p(-70)), 100, 1000), false, none, "", ""},
		{"ahead from below the log start, past it", bounds(mk(p(-70)), 90, 1000), false, none, report.ReasonWouldSkipMessages, "o/0 by 10"},
		{"back from past the log end", bounds(mk(p(500)), 0, 120), false, config.Limit{N: 20, IsSet: true}, "", ""},
		{"back from past the log end, over the limit", bounds(mk(p(500)), 0, 121), false, config.Limit{N: 20, IsSet: true}, report.ReasonLimitExceeded, "would re-consume 21 message(s), more than the 20"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref := judgePlan(tt.plan, tt.skip, tt.limit)
			if tt.reason == "" {
				if ref != nil {
					t.Errorf("refused: %+v", ref)
				}
				return
			}
			if ref == nil || ref.Reason != tt.reason || !strings.Contains(config.FieldNamesFlags.Expand(ref.Error), tt.says) {
				t.Fatalf("refusal %+v, want %s saying %q", ref, tt.reason, tt.says)
			}
			faults := 0
			for _, rp := range tt.plan.Partitions {
				if rp.Error != "" {
					faults++
				}
			}
			if faults == 0 {
				t.Error("no partition at fault carries an error")
			}
		})
	}
	// Messages are counted against the log: a committed offset below the
	// log start or past its end moves over nothing there, and the sum
	// saturates rather than wrap around under a limit.
	const maxInt = int64(^uint64(0) >> 1)
	outside := func(prev, next, start, end int64) *Plan {
		pl := &Plan{}
		pl.add(report.Partition{Topic: "o", PreviousOffset: p(prev), NewOffset: next, Delta: p(prev - next), LogStartOffset: start, LogEndOffset: end}, true, false)
		return pl
	}
	for _, tc := range []struct {
		name   string
		plan   *Plan
		limit  config.Limit
		reason report.Reason
	}{
		{"earliest from below the log start", outside(5, 40, 40, 100), none, ""},
		{"latest from below the log start skips the log", outside(5, 100, 40, 100), none, report.ReasonWouldSkipMessages},
		{"latest from past the log end", outside(500, 100, 0, 100), config.Limit{N: 0, IsSet: true}, ""},
		{"a rewind from past the log end counts the log", outside(500, 90, 0, 100), config.Limit{N: 10, IsSet: true}, ""},
		{"a rewind from past the log end, over the limit", outside(500, 89, 0, 100), config.Limit{N: 10, IsSet: true}, report.ReasonLimitExceeded},
		{"near the largest offset", func() *Plan {
			pl := &Plan{}
			for i := range 3 {
				pl.add(report.Partition{Topic: "o", Partition: int32(i), PreviousOffset: p(maxInt - 5), NewOffset: 0, Delta: p(maxInt - 5), LogEndOffset: maxInt - 5}, true, false)
			}
			return pl
		}(), config.Limit{N: 10, IsSet: true}, report.ReasonLimitExceeded},
	} {
		ref := judgePlan(tc.plan, false, tc.limit)
		switch {
		case tc.reason == "" && ref != nil:
			t.Errorf("%s: refused: %+v", tc.name, ref)
		case tc.reason != "" && (ref == nil || ref.Reason != tc.reason):
			t.Errorf("%s: refusal %+v, want %s", tc.name, ref, tc.reason)
		case ref != nil && strings.Contains(ref.Error, " -"):
			t.Errorf("%s: a negative count: %s", tc.name, ref.Error)
		}
	}

	// Partitions not committed (already applied, left alone) are not weighed.
	pl := mk(p(-5))
	pl.Commit[0] = false
	pl.Partitions[0].Applied = true
	if ref := judgePlan(pl, false, config.Limit{N: 0, IsSet: true}); ref != nil {
		t.Errorf("an already applied partition refused: %+v", ref)
	}
}

// TestRelativePlan: only the targets known to be absolute let the committed
// offsets move between plan and apply.
func TestRelativePlan(t *testing.T) {
	for resolved, want := range map[string]bool{
		"earliest": false, "latest": false, "time:2026-03-01T09:00:00Z": false, "offset:5": false,
		"file:/x.json (2 partitions)": false, "group:other": false,
		"shift:-5": true, "undo:/in.json.gz (3 partitions)": true, "": true, "latest:x": true, "something": true,
	} {
		if got := relativePlan(resolved); got != want {
			t.Errorf("relativePlan(%q) = %t, want %t", resolved, got, want)
		}
	}
}

// TestPlanUndoClampsAboveTheLogEnd: a previous offset past the log end now
// (the topic was recreated, say) is restored to the log end, with a note.
func TestPlanUndoClampsAboveTheLogEnd(t *testing.T) {
	p := func(v int64) *int64 { return &v }
	tg := undoTarget(false, at("o", 0, p(500), 50, true))
	pl := mustPlan(t, newSnap().partition("o", 0, 0, 200).committed("o", 0, 50, "").s, tg)
	rp := pl.Partitions[0]
	if !pl.Commit[0] || rp.NewOffset != 200 || !rp.Clamped || !strings.Contains(rp.Note, "clamped from 500 to log end 200") {
		t.Errorf("restore above the log end: commit %t %+v", pl.Commit[0], rp)
	}
}

// TestCheckCluster: a plan: is refused on any cluster but its own, and
// without one; an undo: file without one is let through (its run's commit
// metadata vouches for it), with another one refused.
func TestCheckCluster(t *testing.T) {
	file := func(kind config.TargetKind, cluster string) config.Target {
		return config.Target{Kind: kind, Result: &report.Result{ClusterID: cluster}}
	}
	for _, tc := range []struct {
		t       config.Target
		cluster string
		err     string
	}{
		{file(config.KindPlan, "a"), "a", ""},
		{file(config.KindPlan, "a"), "b", "was made on Kafka cluster a, and this is cluster b"},
		{file(config.KindPlan, "a"), "", "this is cluster one that gives no cluster ID"},
		{file(config.KindPlan, ""), "b", "does not say which Kafka cluster"},
		{file(config.KindPlan, ""), "", ""},
		{file(config.KindUndo, "a"), "a", ""},
		{file(config.KindUndo, "a"), "b", "was made on Kafka cluster a"},
		{file(config.KindUndo, ""), "b", ""},
		{config.Target{Kind: config.KindShift}, "b", ""},
	} {
		err := checkCluster(tc.t, tc.cluster)
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s on %q: %v, want %q", tc.t.Kind, tc.cluster, err, tc.err)
		}
	}
}
