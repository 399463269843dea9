package runner

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/config"
)

func TestCommitMarkRoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	instant := time.Date(2026, 3, 1, 8, 0, 0, 123_000_000, time.UTC)
	// The launcher's run IDs are namespace/name/hash; any byte must survive.
	ids := []string{strings.Repeat("/", config.MaxRunIDLength), "job-uid-1", "shop/orders-rewind/0123456789abcdef", "a:b.c-d", "with space", "k=v run=forged", "100%", "ünï", strings.Repeat("n", 63) + "/" + strings.Repeat("m", 253) + "/0123456789abcdef"}
	for _, id := range ids {
		for _, m := range []commitMark{
			{Version: metadataVersion, RunID: id, Plan: "00112233aabbccdd", At: at},
			{Version: metadataVersion, RunID: id, Plan: "00112233aabbccdd", Prev: ptr(int64(0)), Time: &instant, At: at},
			{Version: metadataVersion, RunID: id, Plan: "00112233aabbccdd", Prev: ptr(int64(math.MaxInt64)), Count: 100_000, Set: "0123456789abcdef", At: at},
		} {
			md := m.String()
			if len(md) > maxMetadataBytes/4 {
				t.Errorf("%q: metadata is %d bytes, too close to Kafka's %d", id, len(md), maxMetadataBytes)
			}
			if strings.Count(md, " run=") != 1 {
				t.Errorf("%q: the run ID forged a field: %s", id, md)
			}
			got, ok := parseMark(md)
			if !ok || got.RunID != id || got.Plan != m.Plan || !got.At.Equal(at) || (m.Prev == nil) != (got.Prev == nil) || (m.Time == nil) != (got.Time == nil) {
				t.Fatalf("%s parsed as %+v, %v", md, got, ok)
			}
			if got.Count != m.Count || got.Set != m.Set {
				t.Errorf("%s: n=%d set=%q, want %d, %q", md, got.Count, got.Set, m.Count, m.Set)
			}
			if m.Time != nil && !got.Time.Equal(instant) {
				t.Errorf("time %s, want %s (milliseconds kept)", got.Time, instant)
			}
		}
	}
	v1, ok := parseMark("kafka-replay run=job-uid-1 at=2026-03-01T09:00:00Z")
	if !ok || v1.Version != 1 || v1.RunID != "job-uid-1" || v1.Plan != "" {
		t.Errorf("version 1 metadata parsed as %+v, %v", v1, ok)
	}
	for _, other := range []string{"", "consumer", "run=job-uid-1", "kafka-replay", "kafka-replayrun=x", "kafka-replay/2 run=x",
		"kafka-replay/2 run=x plan=p run=y at=2026-03-01T09:00:00Z", "kafka-replay/2 run=%zz plan=p", "kafka-replay/2 run=x plan=p prev=-1",
		"kafka-replay/1 run=x plan=p", "kafka-replay/x run=x plan=p", "kafka-replay/2  run=x plan=p"} {
		if m, ok := parseMark(other); ok {
			t.Errorf("%q parsed as %+v", other, m)
		}
	}
}

func TestPlanDigest(t *testing.T) {
	tg := func(s string) config.Target {
		t.Helper()
		x, err := config.ParseTarget(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	scope := func(entries ...string) config.Scope {
		s, err := config.ParseScope(entries)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ago := tg("ago:1h")
	agoLater := ago
	ago.Resolve(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	agoLater.Resolve(time.Date(2026, 3, 1, 9, 5, 0, 0, time.UTC))
	if planDigest(ago, config.Scope{}) != planDigest(agoLater, config.Scope{}) {
		t.Error("an ago: target resolved later has another digest: a retry would be refused")
	}
	digests := map[string]string{}
	for name, d := range map[string]string{
		"earliest":       planDigest(tg("earliest"), config.Scope{}),
		"latest":         planDigest(tg("latest"), config.Scope{}),
		"earliest/o":     planDigest(tg("earliest"), scope("o")),
		"earliest/o:0":   planDigest(tg("earliest"), scope("o:0")),
		"shift-1":        planDigest(tg("shift:-1"), config.Scope{}),
		"shift+1":        planDigest(tg("shift:+1"), config.Scope{}),
		"offset:1":       planDigest(tg("offset:1"), config.Scope{}),
		"ago:1h":         planDigest(ago, config.Scope{}),
		"ago:2h":         planDigest(tg("ago:2h"), config.Scope{}),
		"time":           planDigest(tg("time:2026-03-01T09:00:00Z"), config.Scope{}),
		"time+1ms":       planDigest(tg("time:2026-03-01T09:00:00.001Z"), config.Scope{}),
		"group:a":        planDigest(tg("group:a"), config.Scope{}),
		"group:b":        planDigest(tg("group:b"), config.Scope{}),
		"file 1":         planDigest(config.Target{Kind: config.KindFile, File: "/f", Offsets: []config.PartitionOffset{{Topic: "o", Partition: 0, Offset: 1}}}, config.Scope{}),
		"file 2":         planDigest(config.Target{Kind: config.KindFile, File: "/f", Offsets: []config.PartitionOffset{{Topic: "o", Partition: 0, Offset: 2}}}, config.Scope{}),
		"file 2 renamed": planDigest(config.Target{Kind: config.KindFile, File: "/g", Offsets: []config.PartitionOffset{{Topic: "o", Partition: 0, Offset: 2}}}, config.Scope{}),
	} {
		if len(d) != 16 {
			t.Errorf("%s: digest %q is not 16 hex digits", name, d)
		}
		digests[name] = d
	}
	if digests["file 2"] != digests["file 2 renamed"] {
		t.Error("a file's digest depends on its path, not only its entries")
	}
	delete(digests, "file 2 renamed")
	seen := map[string]string{}
	for name, d := range digests {
		if o, dup := seen[d]; dup {
			t.Errorf("%s and %s have the same digest", name, o)
		}
		seen[d] = name
	}
}

func TestFindPrior(t *testing.T) {
	id := runIdent{RunID: "r", Plan: "aaaaaaaaaaaaaaaa"}
	t1 := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Second)
	mark := func(runID, plan string, tm *time.Time) string {
		return commitMark{Version: metadataVersion, RunID: runID, Plan: plan, Time: tm, At: t1}.String()
	}
	a, b, c := TP{Topic: "o", Partition: 0}, TP{Topic: "o", Partition: 1}, TP{Topic: "o", Partition: 2}
	cases := []struct {
		name      string
		committed map[TP]Committed
		n         int
		time      *time.Time
		err       string
	}{
		{name: "nothing", committed: map[TP]Committed{a: {Metadata: "consumer"}}},
		{name: "another run", committed: map[TP]Committed{a: {Metadata: mark("s", "bbbbbbbbbbbbbbbb", nil)}}},
		{name: "this run, twice", committed: map[TP]Committed{a: {Metadata: mark("r", id.Plan, &t1)}, b: {Metadata: mark("r", id.Plan, &t1)}, c: {}}, n: 2, time: &t1},
		{name: "this run ID, another plan", committed: map[TP]Committed{a: {Metadata: mark("r", id.Plan, nil)}, b: {Metadata: mark("r", "bbbbbbbbbbbbbbbb", nil)}}, err: "another target or scope (target digest bbbbbbbbbbbbbbbb on o/1"},
		{name: "disagreeing instants", committed: map[TP]Committed{a: {Metadata: mark("r", id.Plan, &t1)}, b: {Metadata: mark("r", id.Plan, &t2)}}, err: "disagree"},
		{name: "newer runner", committed: map[TP]Committed{a: {Metadata: "kafka-replay/3 run=r plan=x at=2026-03-01T08:00:00Z"}}, err: "newer runner"},
		{name: "version 1", committed: map[TP]Committed{a: {Metadata: "kafka-replay run=r at=2026-03-01T08:00:00Z"}}, n: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := findPrior(tc.committed, id)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || p.Partitions != tc.n || (p.Time == nil) != (tc.time == nil) || (p.Time != nil && !p.Time.Equal(*tc.time)) {
				t.Errorf("got %+v, %v; want %d partitions, time %v", p, err, tc.n, tc.time)
			}
		})
	}
}

func TestLookupMillisRoundsUp(t *testing.T) {
	base := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	ms := base.UnixMilli()
	for _, tc := range []struct {
		t    time.Time
		want int64
	}{
		{base, ms},
		{base.Add(time.Nanosecond), ms + 1},
		{base.Add(999_999 * time.Nanosecond), ms + 1},
		{base.Add(time.Millisecond), ms + 1},
	} {
		if got := lookupMillis(tc.t); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.t.Format(time.RFC3339Nano), got, tc.want)
		}
	}
}

// TestCommitMarkEncoding pins the metadata's bytes, which older runners and
// the launcher read: String is appended by hand, and must write exactly
// the version 2 format (escapes in upper-case hex, milliseconds kept, UTC).
func TestCommitMarkEncoding(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.FixedZone("CET", 3600))
	instant := time.Date(2026, 3, 1, 8, 0, 0, 123_000_000, time.UTC)
	for _, tc := range []struct {
		m    commitMark
		want string
	}{
		{commitMark{RunID: "job-uid-1", Plan: "00112233aabbccdd", At: at},
			"kafka-replay/2 run=job-uid-1 plan=00112233aabbccdd at=2026-03-01T08:00:00Z"},
		{commitMark{RunID: "shop/orders:0.x_y~", Plan: "p", Prev: ptr(int64(0)), Time: &instant, At: at},
			"kafka-replay/2 run=shop/orders:0.x_y%7E plan=p prev=0 time=2026-03-01T08:00:00.123Z at=2026-03-01T08:00:00Z"},
		{commitMark{RunID: "with space=100%", Plan: "p", Prev: ptr(int64(9_000_000_000)), At: instant},
			"kafka-replay/2 run=with%20space%3D100%25 plan=p prev=9000000000 at=2026-03-01T08:00:00.123Z"},
		{commitMark{RunID: "ünï\x00\xff", Plan: "p", At: at},
			"kafka-replay/2 run=%C3%BCn%C3%AF%00%FF plan=p at=2026-03-01T08:00:00Z"},
		// A run ID longer than the stack buffer.
		{commitMark{RunID: strings.Repeat("%", 100), Plan: "p", At: at},
			"kafka-replay/2 run=" + strings.Repeat("%25", 100) + " plan=p at=2026-03-01T08:00:00Z"},
	} {
		if got := tc.m.String(); got != tc.want {
			t.Errorf("%+v:\n got %s\nwant %s", tc.m, got, tc.want)
		}
		if got := escapeValue(tc.m.RunID); !strings.Contains(tc.want, " run="+got+" ") {
			t.Errorf("escapeValue(%q) = %q, not the run field of %s", tc.m.RunID, got, tc.want)
		}
	}
}

// TestCommitMarkStringAllocatesOnce: a commit makes one mark per partition,
// and only the string itself is allocated (the builder it replaced
// allocated every doubling of its buffer).
func TestCommitMarkStringAllocatesOnce(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	// The longest run ID the launcher makes: namespace/name/hash.
	for _, id := range []string{"shop/orders-rewind/0123456789abcdef", strings.Repeat("n", 63) + "/" + strings.Repeat("m", 253) + "/0123456789abcdef"} {
		m := commitMark{RunID: id, Plan: "00112233aabbccdd", Prev: ptr(int64(123456)), Time: &at, At: at}
		if n := testing.AllocsPerRun(100, func() { _ = m.String() }); n != 1 {
			t.Errorf("String allocates %v times for a run ID of %d bytes, want 1", n, len(id))
		}
	}
}

// TestParseMarkFields: the fields are cut one at a time; what strings.Split
// made of them before still holds: an empty field (a trailing or double
// space) and a key given twice, known or not, make the mark invalid, also
// past the keys checked without a map.
func TestParseMarkFields(t *testing.T) {
	const good = "kafka-replay/2 run=r plan=p at=2026-03-01T09:00:00Z"
	unknown := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, " x%d=1", i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		md   string
		want bool
	}{
		{good, true},
		{good + " ", false},
		{good + "  x=1", false},
		{good + " x=1 y=2", true},
		{good + " x=1 x=2", false},
		{good + " x=1 y", false},
		{good + unknown(20), true},
		{good + unknown(20) + " x3=1", false},  // within the first eight keys
		{good + unknown(20) + " x19=1", false}, // past them
		{good + unknown(20) + " run=z", false},
		{"kafka-replay/2", false},
		{"kafka-replay/2 ", false},
		// n= and set= come together, n at least 1.
		{good + " n=2 set=0123456789abcdef", true},
		{good + " n=2", false},
		{good + " set=0123456789abcdef", false},
		{good + " n=0 set=0123456789abcdef", false},
		{good + " n=-1 set=0123456789abcdef", false},
		{good + " n=x set=0123456789abcdef", false},
		// A time only Go's parser takes is no time (config.ParseRFC3339).
		{"kafka-replay/2 run=r plan=p at=2026-03-01T09:00:00+18:00", true},
		{"kafka-replay/2 run=r plan=p at=2026-03-01T09:00:00+24:00", false},
		{"kafka-replay/2 run=r plan=p at=2026-03-01T09:00:00Z time=2026-03-01T08:00:00-18:30", false},
	} {
		if _, ok := parseMark(tc.md); ok != tc.want {
			t.Errorf("parseMark(%q) ok = %v, want %v", tc.md, ok, tc.want)
		}
	}
}

// TestParseMarkManyKeys: a mark of many distinct keys (a forged one, as
// long as Kafka keeps) is valid, its known fields read, whatever follows.
func TestParseMarkManyKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString("kafka-replay/2 run=r plan=p")
	for i := 0; b.Len() < maxMetadataBytes-8; i++ {
		fmt.Fprintf(&b, " %x=", i)
	}
	md := b.String()
	m, ok := parseMark(md)
	if !ok || m.RunID != "r" || m.Plan != "p" {
		t.Fatalf("a mark of %d distinct keys parsed as %+v, %v", strings.Count(md, " "), m, ok)
	}
	if _, ok := parseMark(md + " 1=x"); ok {
		t.Error("a key repeated after a thousand others was not seen")
	}
}
