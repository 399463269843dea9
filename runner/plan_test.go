package runner

import (
	"errors"
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
			p := MakePlan(b.s, target(t, tc.to), "r")
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
	b := newSnap().partition("o", 0, 0, 100).committed("o", 0, 40, "kafka-replay run=r7 at=2026-03-01T10:00:00Z").
		partition("o", 1, 0, 100).committed("o", 1, 50, "kafka-replay run=other at=2026-03-01T10:00:00Z")
	p := MakePlan(b.s, target(t, "shift:-10"), "r7")
	if p.Commit[0] || p.Partitions[0].NewOffset != 40 || *p.Partitions[0].Delta != 0 {
		t.Errorf("partition 0 (already applied by r7) would be shifted again: %+v", p.Partitions[0])
	}
	if !p.Commit[1] || p.Partitions[1].NewOffset != 40 {
		t.Errorf("partition 1 (another run's commit) not shifted: %+v", p.Partitions[1])
	}
	if p.AlreadyApplied() || p.ToCommit() != 1 {
		t.Errorf("AlreadyApplied=%v ToCommit=%d", p.AlreadyApplied(), p.ToCommit())
	}
	b.committed("o", 1, 40, "kafka-replay run=r7 at=2026-03-01T10:00:00Z")
	if p := MakePlan(b.s, target(t, "shift:-10"), "r7"); !p.AlreadyApplied() {
		t.Error("every partition carries r7 but the plan is not AlreadyApplied")
	}
}

func TestMakePlanShiftOverflowStaysOnItsSide(t *testing.T) {
	b := newSnap().partition("o", 0, 5, 100).committed("o", 0, 50, "")
	tg := config.Target{Kind: config.KindShift, Shift: math.MaxInt64}
	if p := MakePlan(b.s, tg, "r"); p.Partitions[0].NewOffset != 100 {
		t.Errorf("+MaxInt64 shift went to %d, want the log end", p.Partitions[0].NewOffset)
	}
	tg.Shift = math.MinInt64
	if p := MakePlan(b.s, tg, "r"); p.Partitions[0].NewOffset != 5 {
		t.Errorf("MinInt64 shift went to %d, want the log start", p.Partitions[0].NewOffset)
	}
}

func TestMakePlanCopiesFromSourceGroup(t *testing.T) {
	b := newSnap().partition("o", 0, 0, 100).committed("o", 0, 90, "").partition("o", 1, 0, 100)
	b.s.Source[TP{Topic: "o", Partition: 0}] = Committed{Offset: 12}
	p := MakePlan(b.s, target(t, "group:src"), "r")
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
			{Topic: "a", Partition: 1}: {}, {Topic: "gone", Partition: 0}: {}, {Topic: "b", Partition: 5}: {},
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
	if err != nil || len(got) != 1 || got[0] != (TP{Topic: "a", Partition: 1}) || len(warnings) != 2 {
		t.Errorf("empty scope: %v %q %v", got, warnings, err)
	}
	for _, bad := range []config.Scope{scope("c"), scope("a:3")} {
		_, _, err := resolveScope(s, bad, config.Target{Kind: config.KindEarliest})
		var ie *inputError
		if !errors.As(err, &ie) || ie.field != "--topic" {
			t.Errorf("%v: error %v does not name --topic", bad, err)
		}
	}
	file := config.Target{Kind: config.KindFile, Offsets: []config.PartitionOffset{{Topic: "b", Partition: 2}}}
	if _, _, err := resolveScope(s, config.Scope{}, file); err == nil || !strings.Contains(err.Error(), "--to file:") {
		t.Errorf("file partition out of range: %v", err)
	}
}

func TestCommitMetadataRoundTrip(t *testing.T) {
	md := commitMetadata("job-uid-1", time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	if got := metadataRunID(md); got != "job-uid-1" {
		t.Errorf("run ID %q from %q", got, md)
	}
	for _, other := range []string{"", "consumer", "run=job-uid-1", "kafka-replay", "kafka-replayrun=x"} {
		if got := metadataRunID(other); got != "" {
			t.Errorf("%q parsed as run %q", other, got)
		}
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
