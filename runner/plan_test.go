package runner

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/config"
)

// snap is a small builder for snapshots in planner tests.
type snap struct{ s *Snapshot }

func newSnap() *snap {
	return &snap{&Snapshot{
		Committed: map[TP]Committed{}, Source: map[TP]Committed{}, Topics: map[string]int32{},
		LogStart: map[TP]int64{}, LogEnd: map[TP]int64{}, ForTime: map[TP]int64{},
	}}
}

// partition adds a partition with log bounds [start, end].
func (b *snap) partition(topic string, p int32, start, end int64) *snap {
	tp := TP{Topic: topic, Partition: p}
	if b.s.Topics[topic] <= p {
		b.s.Topics[topic] = p + 1
	}
	b.s.Partitions = append(b.s.Partitions, tp)
	b.s.LogStart[tp], b.s.LogEnd[tp] = start, end
	return b
}

func (b *snap) committed(topic string, p int32, off int64, md string) *snap {
	b.s.Committed[TP{Topic: topic, Partition: p}] = Committed{Offset: off, Metadata: md}
	return b
}

func (b *snap) forTime(topic string, p int32, off int64) *snap {
	b.s.ForTime[TP{Topic: topic, Partition: p}] = off
	return b
}

func target(t *testing.T, s string) config.Target {
	t.Helper()
	tg, err := config.ParseTarget(s)
	if err != nil {
		t.Fatal(err)
	}
	tg.Resolve(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	return tg
}

// mustPlan plans as run "r" (or id) and fails the test on an error.
func mustPlan(t *testing.T, s *Snapshot, tg config.Target, id ...runIdent) *Plan {
	t.Helper()
	ident := runIdent{RunID: "r", Plan: planDigest(tg, config.Scope{})}
	if len(id) > 0 {
		ident = id[0]
	}
	p, err := MakePlan(s, tg, ident)
	if err != nil {
		t.Fatalf("MakePlan: %v", err)
	}
	return p
}

func TestMakePlan(t *testing.T) {
	b := newSnap().partition("o", 0, 10, 100).committed("o", 0, 50, "").forTime("o", 0, 30).
		partition("o", 1, 0, 100).forTime("o", 1, -1)
	cases := []struct {
		to            string
		new0, new1    int64
		clamped0      bool
		note0, note1  string
		commit1       bool
		warningSubstr string
	}{
		{to: "earliest", new0: 10, new1: 0, commit1: true, note1: "no previous committed offset"},
		{to: "latest", new0: 100, new1: 100, commit1: true},
		{to: "offset:5", new0: 10, clamped0: true, note0: "clamped from 5 to log start 10", new1: 5, commit1: true, warningSubstr: "clamped"},
		{to: "offset:500", new0: 100, clamped0: true, new1: 100, commit1: true},
		{to: "time:2026-03-01T00:00:00Z", new0: 30, new1: 100, note1: "no message at or after", commit1: true, warningSubstr: "moved to the log end: 1 partition(s): o/1"},
		{to: "shift:-45", new0: 10, clamped0: true, commit1: false, warningSubstr: "no committed offset to shift from"},
		{to: "shift:+20", new0: 70, commit1: false},
	}
	for _, tc := range cases {
		t.Run(tc.to, func(t *testing.T) {
			p := mustPlan(t, b.s, target(t, tc.to))
			byPart := map[int32]int{}
			for i, rp := range p.Partitions {
				byPart[rp.Partition] = i
			}
			p0 := p.Partitions[byPart[0]]
			if p0.NewOffset != tc.new0 || p0.Clamped != tc.clamped0 || !strings.HasPrefix(p0.Note, tc.note0) {
				t.Errorf("partition 0: %+v", p0)
			}
			if *p0.Delta != 50-tc.new0 {
				t.Errorf("partition 0 delta %d", *p0.Delta)
			}
			i1, has1 := byPart[1]
			if has1 != tc.commit1 {
				t.Fatalf("partition 1 planned=%v, want %v", has1, tc.commit1)
			}
			if has1 {
				p1 := p.Partitions[i1]
				if p1.NewOffset != tc.new1 || !strings.HasPrefix(p1.Note, tc.note1) || p1.PreviousOffset != nil || p1.Delta != nil {
					t.Errorf("partition 1: %+v", p1)
				}
			}
			if tc.warningSubstr != "" && !strings.Contains(strings.Join(p.Warnings, "\n"), tc.warningSubstr) {
				t.Errorf("warnings %q lack %q", p.Warnings, tc.warningSubstr)
			}
		})
	}
}

func TestMakePlanLeavesThisRunsCommitsAlone(t *testing.T) {
	tg := target(t, "shift:-10")
	r7 := runIdent{RunID: "r7", Plan: planDigest(tg, config.Scope{})}
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	b := newSnap().partition("o", 0, 0, 100).committed("o", 0, 50, "").
		partition("o", 1, 0, 100).committed("o", 1, 50, "")
	whole := mustPlan(t, b.s, tg, r7)
	mine := commitMark{Version: metadataVersion, RunID: "r7", Plan: r7.Plan, Prev: ptr(int64(50)), Count: whole.Count, Set: whole.Set, At: at}.String()
	b.committed("o", 0, 40, mine)
	p := mustPlan(t, b.s, tg, r7)
	p0 := p.Partitions[0]
	if p.Commit[0] || p0.NewOffset != 40 || !p0.Applied {
		t.Errorf("partition 0 (already applied by r7) would be shifted again: %+v", p0)
	}
	// The earlier commit's previous offset is reported, not a zero delta.
	if p0.PreviousOffset == nil || *p0.PreviousOffset != 50 || p0.Delta == nil || *p0.Delta != 10 {
		t.Errorf("partition 0 does not report the original previous offset and delta: %+v", p0)
	}
	if !p.Commit[1] || p.Partitions[1].NewOffset != 40 || p.Partitions[1].Applied {
		t.Errorf("partition 1 (the rest of r7's commit) not shifted: %+v", p.Partitions[1])
	}
	if p.AlreadyApplied() || p.ToCommit() != 1 || p.Count != whole.Count || p.Set != whole.Set {
		t.Errorf("AlreadyApplied=%v ToCommit=%d n=%d set=%s", p.AlreadyApplied(), p.ToCommit(), p.Count, p.Set)
	}
	b.committed("o", 1, 40, mine)
	if p := mustPlan(t, b.s, tg, r7); !p.AlreadyApplied() {
		t.Error("every partition carries r7 but the plan is not AlreadyApplied")
	}
	// An older runner's mark (no digest, no previous offset) is still this
	// run's: never applied twice.
	b.committed("o", 1, 40, "kafka-replay run=r7 at=2026-03-01T10:00:00Z")
	if p := mustPlan(t, b.s, tg, r7); !p.AlreadyApplied() || p.Partitions[1].PreviousOffset != nil {
		t.Errorf("a version 1 mark of r7 is not recognised: %+v", p.Partitions[1])
	}
}

// TestSettlePrior: a run the group shows on some partitions moves nothing
// a second time (issue 25, class 1 and 6). The world: shift:-10 of o/0..2,
// committed 50 each when run r7 planned them all to 40.
func TestSettlePrior(t *testing.T) {
	tg := target(t, "shift:-10")
	r7 := runIdent{RunID: "r7", Plan: planDigest(tg, config.Scope{})}
	world := func() *snap {
		b := newSnap()
		for i := int32(0); i < 3; i++ {
			b.partition("o", i, 0, 100).committed("o", i, 50, "")
		}
		return b
	}
	whole := mustPlan(t, world().s, tg, r7)
	if whole.Count != 3 || whole.PriorMarks != 0 || whole.ToCommit() != 3 {
		t.Fatalf("first run: n=%d prior %d to commit %d", whole.Count, whole.PriorMarks, whole.ToCommit())
	}
	mine := commitMark{Version: metadataVersion, RunID: "r7", Plan: r7.Plan, Prev: ptr(int64(50)), Count: whole.Count, Set: whole.Set}.String()
	legacy := commitMark{Version: metadataVersion, RunID: "r7", Plan: r7.Plan, Prev: ptr(int64(50))}.String()
	type state struct {
		off int64
		md  string
	}
	for _, tc := range []struct {
		name      string
		now       []state // o/0..o/2, then o/3 if any
		commit    []bool
		unsettled int
		applied   bool   // AlreadyApplied
		left      string // o/3's LeftAlone
	}{
		{name: "complete", now: []state{{40, mine}, {40, mine}, {40, mine}}, commit: []bool{false, false, false}, applied: true},
		{name: "complete, a partition added since", now: []state{{40, mine}, {40, mine}, {40, mine}, {50, "consumer"}}, commit: []bool{false, false, false, false}, applied: true, left: "not part of run r7"},
		{name: "the rest of a partial commit", now: []state{{40, mine}, {50, ""}, {50, ""}}, commit: []bool{false, true, true}},
		{name: "an unmarked partition moved", now: []state{{40, mine}, {50, ""}, {55, "consumer"}}, commit: []bool{false, false, false}, unsettled: 2},
		{name: "a consumer committed over a marked partition", now: []state{{40, mine}, {40, mine}, {45, "consumer"}}, commit: []bool{false, false, false}, unsettled: 1},
		{name: "partial, and a partition added", now: []state{{40, mine}, {50, ""}, {50, ""}, {50, ""}}, commit: []bool{false, false, false, false}, unsettled: 3},
		{name: "an older runner's marks, partial", now: []state{{40, legacy}, {50, ""}, {50, ""}}, commit: []bool{false, false, false}, unsettled: 2},
		{name: "an older runner's marks, complete", now: []state{{40, legacy}, {40, legacy}, {40, legacy}}, commit: []bool{false, false, false}, applied: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newSnap()
			for i, st := range tc.now {
				b.partition("o", int32(i), 0, 100).committed("o", int32(i), st.off, st.md)
			}
			p := mustPlan(t, b.s, tg, r7)
			for i, want := range tc.commit {
				if p.Commit[i] != want {
					t.Errorf("o/%d: commit %t, want %t (%+v)", i, p.Commit[i], want, p.Partitions[i])
				}
			}
			if p.Unsettled != tc.unsettled || p.AlreadyApplied() != tc.applied {
				t.Errorf("unsettled %d, already applied %t; want %d, %t", p.Unsettled, p.AlreadyApplied(), tc.unsettled, tc.applied)
			}
			for i := range p.Partitions {
				rp := p.Partitions[i]
				if !rp.Applied && !p.Commit[i] && rp.LeftAlone == "" && !strings.Contains(rp.Error, "carries no commit of run r7") {
					t.Errorf("o/%d neither committed nor applied, and says %q", i, rp.Error)
				}
			}
			if len(tc.now) == 4 && !strings.Contains(p.Partitions[3].LeftAlone, tc.left) {
				t.Errorf("o/3 left alone %q, want %q", p.Partitions[3].LeftAlone, tc.left)
			}
		})
	}
}

// TestMakePlanRefusesARunIDReusedWithAnotherPlan: the same run ID with
// another target or scope is refused, wherever its commit is in the group.
func TestMakePlanRefusesARunIDReusedWithAnotherPlan(t *testing.T) {
	earliest := target(t, "earliest")
	applied := runIdent{RunID: "x", Plan: planDigest(earliest, config.Scope{})}
	md := commitMark{Version: metadataVersion, RunID: "x", Plan: applied.Plan, Prev: ptr(int64(50)), At: time.Now()}.String()
	// The earlier commit is on o/1, outside this plan's scope.
	b := newSnap().partition("o", 0, 0, 100).committed("o", 0, 50, "")
	b.committed("o", 1, 0, md)
	for _, tc := range []struct {
		name string
		id   runIdent
		tg   config.Target
	}{
		{"another target", runIdent{RunID: "x", Plan: planDigest(target(t, "latest"), config.Scope{})}, target(t, "latest")},
		{"another scope", runIdent{RunID: "x", Plan: planDigest(earliest, config.Scope{Topics: map[string][]int32{"o": {0}}})}, earliest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := MakePlan(b.s, tc.tg, tc.id)
			var ie *inputError
			if !errors.As(err, &ie) || config.FieldNamesFlags.Expand(ie.field) != "--run-id" || !strings.Contains(err.Error(), "another target or scope") {
				t.Fatalf("error %v, want a --run-id input error", err)
			}
		})
	}
	if _, err := MakePlan(b.s, earliest, applied); err != nil {
		t.Errorf("the same plan again: %v", err)
	}
}

// TestMakePlanRefusesAnEmptyPlan: a plan with nothing to do is an error that
// says why, not a success with no partitions.
func TestMakePlanRefusesAnEmptyPlan(t *testing.T) {
	b := newSnap().partition("o", 0, 0, 100).partition("o", 1, 0, 100)
	for _, tc := range []struct {
		to, msg string
		source  map[TP]Committed
	}{
		{to: "shift:-5", msg: "has none on the 2 partition(s) in scope"},
		{to: "group:archvie", msg: `source group "archvie" has no committed offsets`},
		{to: "group:src", msg: "no committed offset on any of the 2 partition(s)", source: map[TP]Committed{{Topic: "other", Partition: 0}: {Offset: 1}}},
	} {
		t.Run(tc.to, func(t *testing.T) {
			b.s.Source = tc.source
			tg := target(t, tc.to)
			_, err := MakePlan(b.s, tg, runIdent{RunID: "r", Plan: planDigest(tg, config.Scope{})})
			var ie *inputError
			if !errors.As(err, &ie) || config.FieldNamesFlags.Expand(ie.field) != "--to" || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %v, want a --to input error saying %q", err, tc.msg)
			}
		})
	}
}

// TestMakePlanNotes: the smaller anomalies are marked on their partition.
func TestMakePlanNotes(t *testing.T) {
	// Retention moved the log start past the committed offset of o/0; o/1
	// was committed beyond its log end (the topic was recreated).
	b := newSnap().partition("o", 0, 30, 100).committed("o", 0, 10, "").
		partition("o", 1, 0, 5).committed("o", 1, 70, "")
	p := mustPlan(t, b.s, target(t, "latest"))
	for i, want := range []string{"previous offset 10 was outside the log [30, 100]", "previous offset 70 was outside the log [0, 5]"} {
		if !strings.Contains(p.Partitions[i].Note, want) {
			t.Errorf("partition %d note %q lacks %q", i, p.Partitions[i].Note, want)
		}
	}
	if w := strings.Join(p.Warnings, "\n"); !strings.Contains(w, "committed offset outside the log") || !strings.Contains(w, "2 partition(s)") {
		t.Errorf("warnings %q", p.Warnings)
	}
}

func TestMakePlanShiftOverflowStaysOnItsSide(t *testing.T) {
	b := newSnap().partition("o", 0, 5, 100).committed("o", 0, 50, "")
	for _, tc := range []struct {
		shift int64
		want  int64
		note  string
	}{
		{math.MaxInt64, 100, "shift +9223372036854775807 overflows; clamped to log end 100"},
		{math.MinInt64, 5, "clamped from -9223372036854775758 to log start 5"},
	} {
		p := mustPlan(t, b.s, config.Target{Kind: config.KindShift, Shift: tc.shift})
		got := p.Partitions[0]
		if got.NewOffset != tc.want || !got.Clamped || got.Note != tc.note {
			t.Errorf("shift %+d: %+v, want offset %d, clamped, note %q", tc.shift, got, tc.want, tc.note)
		}
		if !strings.Contains(strings.Join(p.Warnings, " "), "clamped") {
			t.Errorf("shift %+d: warnings %q do not mention the clamp", tc.shift, p.Warnings)
		}
	}
}

func TestMakePlanCopiesFromSourceGroup(t *testing.T) {
	b := newSnap().partition("o", 0, 0, 100).committed("o", 0, 90, "").partition("o", 1, 0, 100)
	b.s.Source[TP{Topic: "o", Partition: 0}] = Committed{Offset: 12}
	p := mustPlan(t, b.s, target(t, "group:src"))
	if len(p.Partitions) != 1 || p.Partitions[0].NewOffset != 12 {
		t.Fatalf("plan %+v", p.Partitions)
	}
	if !strings.Contains(strings.Join(p.Warnings, " "), "source group src") {
		t.Errorf("warnings %q", p.Warnings)
	}
}

func TestResolveScope(t *testing.T) {
	s := &Snapshot{
		Topics: map[string]int32{"a": 3, "b": 2},
		Committed: map[TP]Committed{
			{Topic: "a", Partition: 1}: {}, {Topic: "gone", Partition: 0}: {},
		},
	}
	scope := func(entries ...string) config.Scope {
		sc, err := config.ParseScope(entries)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	got, _, err := resolveScope(s, scope("b", "a:2"), config.Target{Kind: config.KindEarliest})
	if err != nil || len(got) != 3 || got[0] != (TP{Topic: "a", Partition: 2}) || got[2] != (TP{Topic: "b", Partition: 1}) {
		t.Errorf("explicit scope: %v %v", got, err)
	}
	got, warnings, err := resolveScope(s, config.Scope{}, config.Target{Kind: config.KindEarliest})
	if err != nil || len(got) != 1 || got[0] != (TP{Topic: "a", Partition: 1}) || len(warnings) != 1 || !strings.Contains(warnings[0], `"gone"`) {
		t.Errorf("empty scope: %v %q %v", got, warnings, err)
	}
	for _, bad := range []config.Scope{scope("c"), scope("a:3")} {
		_, _, err := resolveScope(s, bad, config.Target{Kind: config.KindEarliest})
		var ie *inputError
		if !errors.As(err, &ie) || config.FieldNamesFlags.Expand(ie.field) != "--topic" {
			t.Errorf("%v: error %v does not name --topic", bad, err)
		}
	}
	file := config.Target{Kind: config.KindFile, Offsets: []config.PartitionOffset{{Topic: "b", Partition: 2}}}
	if _, _, err := resolveScope(s, config.Scope{}, file); err == nil || !strings.Contains(config.FieldNamesFlags.Expand(err.Error()), "--to file:") {
		t.Errorf("file partition out of range: %v", err)
	}
}

// TestCheckPartitionCounts: topics described with fewer partitions than
// the committed offsets on them show are refused, whichever group's
// offsets show it, naming the partitions in order; offsets of topics not
// described, and within the counts, pass.
func TestCheckPartitionCounts(t *testing.T) {
	offs := func(tps ...TP) map[TP]Committed {
		m := map[TP]Committed{}
		for _, tp := range tps {
			m[tp] = Committed{Offset: 1}
		}
		return m
	}
	a := func(p int32) TP { return TP{Topic: "a", Partition: p} }
	b := func(p int32) TP { return TP{Topic: "b", Partition: p} }
	earliest := config.Target{Kind: config.KindEarliest}
	copyFrom := config.Target{Kind: config.KindGroup, Group: "src"}
	cases := []struct {
		name   string
		s      Snapshot
		target config.Target
		want   string // "" for none
	}{
		{"within the counts", Snapshot{Topics: map[string]int32{"a": 3}, Committed: offs(a(0), a(2))}, earliest, ""},
		{"topic not described", Snapshot{Topics: map[string]int32{"a": 3}, Committed: offs(b(7))}, earliest, ""},
		{"no offsets", Snapshot{Topics: map[string]int32{"a": 3}}, earliest, ""},
		{"the last partition left out", Snapshot{Topics: map[string]int32{"a": 3}, Committed: offs(a(0), a(3))}, earliest,
			`topic "a" with 3 partition(s), but offsets on a/3 (the group);`},
		{"several, in order", Snapshot{Topics: map[string]int32{"a": 1, "b": 2}, Committed: offs(b(9), a(2), a(1), b(2))}, earliest,
			`topic "a" with 1, topic "b" with 2 partition(s), but offsets on a/1 (the group), a/2 (the group), b/2 (the group), b/9 (the group);`},
		{"the source group's", Snapshot{Topics: map[string]int32{"a": 2}, Committed: offs(a(0)), Source: offs(a(4))}, copyFrom,
			`but offsets on a/4 (source group src);`},
		{"a source group only counts for group:", Snapshot{Topics: map[string]int32{"a": 2}, Source: offs(a(4))}, earliest, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkPartitionCounts(&c.s, c.target)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want %q in it", err, c.want)
			case err != nil && (!strings.Contains(err.Error(), "nothing was planned; retry") || config.IsInvalidInput(err)):
				t.Fatalf("not a retryable Kafka error: %v", err)
			}
		})
	}
	// Many: the first maxNamed, and how many more.
	many := map[TP]Committed{}
	for p := range int32(maxNamed + 5) {
		many[a(p+1)] = Committed{}
	}
	if err := checkPartitionCounts(&Snapshot{Topics: map[string]int32{"a": 1}, Committed: many}, earliest); err == nil || !strings.Contains(err.Error(), "a/10 (the group) and 5 more;") {
		t.Errorf("many: %v", err)
	}
}

func TestGroupInfo(t *testing.T) {
	g := GroupInfo{State: "Stable", Members: []Member{{ClientID: "w", Host: "/10.0.0.1"}, {ClientID: "w", Host: "/10.0.0.1"}, {ClientID: "x"}}}
	if !g.Active() || g.Describe() != "state Stable, 3 member(s): w@10.0.0.1 (×2), x" {
		t.Errorf("%v %q", g.Active(), g.Describe())
	}
	for _, state := range []string{"Empty", "Dead", ""} {
		if (GroupInfo{State: state}).Active() {
			t.Errorf("%q group reported active", state)
		}
	}
	if !(GroupInfo{State: "PreparingRebalance"}).Active() {
		t.Error("a rebalancing group is active")
	}
}

func TestByLeaderGroupsPartitionsPerBroker(t *testing.T) {
	a0, a1, b0, c0 := TP{Topic: "a", Partition: 0}, TP{Topic: "a", Partition: 1}, TP{Topic: "b", Partition: 0}, TP{Topic: "c", Partition: 0}
	shards := byLeader([]TP{a0, a1, b0, c0}, map[TP]int32{a0: 1, a1: 2, b0: 1})
	if len(shards) != 3 || len(shards[0]) != 2 || shards[0][1] != b0 || shards[1][0] != a1 || shards[2][0] != c0 {
		t.Errorf("shards %v: want [a/0 b/0] [a/1] [c/0 (no leader)]", shards)
	}
	if got := byLeader(nil, nil); len(got) != 0 {
		t.Errorf("no partitions gave %v", got)
	}
}

// BenchmarkMakePlan plans 10,000 partitions (100 topics of 100) whose
// committed offsets carry an earlier run's mark, as a large group's second
// replay does: findPrior and the plan parse every mark. Per op: the whole
// plan.
func BenchmarkMakePlan(b *testing.B) {
	tg, err := config.ParseTarget("time:2026-03-01T09:00:05Z")
	if err != nil {
		b.Fatal(err)
	}
	earlier := commitMark{Version: metadataVersion, RunID: "earlier", Plan: "00112233aabbccdd", Prev: ptr(int64(10)), Time: &tg.Time, At: tg.Time}.String()
	s := newSnap()
	for i := range 10000 {
		topic, p := fmt.Sprintf("t%03d", i/100), int32(i%100)
		s.partition(topic, p, 0, 10).committed(topic, p, 10, earlier).forTime(topic, p, 5)
	}
	id := runIdent{RunID: "bench", Plan: planDigest(tg, config.Scope{})}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MakePlan(s.s, tg, id); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPartitionNames: a summary names the first few partitions and counts
// the rest, naming only those it lists, in the words the warnings and
// refusals always used.
func TestPartitionNames(t *testing.T) {
	for _, tc := range []struct {
		keep, n    int
		list, summ string
	}{
		{5, 1, "o/0", "1 partition(s): o/0"},
		{5, 5, "o/0, o/1, o/2, o/3, o/4", "5 partition(s): o/0, o/1, o/2, o/3, o/4"},
		{5, 6, "o/0, o/1, o/2, o/3, o/4 and 1 more", "6 partition(s): o/0, o/1, o/2, o/3, o/4 and 1 more"},
		{2, 10000, "o/0, o/1 and 9998 more", "10000 partition(s): o/0, o/1 and 9998 more"},
	} {
		l, named := newNames(tc.keep), 0
		for i := range tc.n {
			l.add(func() string { named++; return fmt.Sprintf("o/%d", i) })
		}
		if l.list() != tc.list || l.summary() != tc.summ || l.n != tc.n {
			t.Errorf("keep %d of %d: list %q, summary %q, n %d", tc.keep, tc.n, l.list(), l.summary(), l.n)
		}
		if named != min(tc.n, tc.keep) {
			t.Errorf("keep %d of %d: %d names made", tc.keep, tc.n, named)
		}
	}
}
