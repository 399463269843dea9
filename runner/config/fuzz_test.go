package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var fuzzStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{
		"earliest", "latest", " LATEST ", "earliest:foo",
		"time:2026-03-01T09:30:00Z", "time:2026-03-01T09:30:00+02:00", "time:2026-03-01T09:30:00.123456789-05:30",
		"time:2026-03-01T09:30:00", "time:1772357400123", "time:0", "time:1772357400", "time:20260301", "time:253402300799999", "time:253402300800000",
		"time:9223372036854775807", "time:1969-12-31T23:59:59Z", "time:2026-03-01t09:30:00z",
		"ago:2h", "ago:1ns", "ago:-1h", "ago:2562047h", "ago:0",
		"offset:0", "offset:-1", "offset:+5", "offset:9223372036854775807",
		"shift:+100", "shift:-100", "shift:0", "shift:100", "shift:-9223372036854775808",
		"group:other", "group: x", "group:a\x00b", "group:" + strings.Repeat("g", 300),
		"file:[]", `file:[{"topic":"orders","partition":0,"offset":1}]`,
		`file:[{"topic":"orders","partition":0,"offset":1},{"topic":"orders","partition":0,"offset":2}]`,
		`file:[{"topic":"..","partition":0,"offset":1}]`, `file:[{"topic":"a","partition":0,"offset":1,"x":1}]`,
		`file:[{"topic":"a","partition":0,"offset":null}]`, `file:[{"topic":"a","partition":0}]`, `file:[{"topic":"a","partition":0,"Offset":1}]`,
		`file:[{"topic":"a","partition":0,"offset":1,"offset":2}]`, `file:[{"topic":"a","partition":0,"offset":1}] []`, `file:[{"topic":"a","partition":0,"offset":1e2}]`,
		"file:orders,0,5\norders,1,7\n\n", "file:g,orders,0,5\n", "file:topic,partition,offset\norders,0,5", "file:orders,0,5\norders,0,6",
		"file:orders,0\n", "file:\"o\"\"x\",0,5", "file:\xef\xbb\xbforders,0,5\r\n", "file:orders,-1,5", "file:orders,0,+5",
		"", ":", "unknown:1", "time", "TIME:0",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// A file target's argument is used as the file's content, so the
		// fuzzer explores the file format without opening arbitrary paths
		// (a FIFO or a device would block).
		in := s
		if kind, arg, ok := strings.Cut(strings.TrimSpace(s), ":"); ok && strings.EqualFold(kind, string(KindFile)) && arg != "" {
			p := filepath.Join(t.TempDir(), "offsets.json")
			if err := os.WriteFile(p, []byte(arg), 0o600); err != nil {
				t.Fatal(err)
			}
			in = "file:" + p
		}
		tg, err := ParseTarget(in)
		if tg.Given != in {
			t.Fatalf("Given = %q, want %q", tg.Given, in)
		}
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		_, arg, _ := strings.Cut(strings.TrimSpace(in), ":")
		switch tg.Kind {
		case KindEarliest, KindLatest:
			if !strings.EqualFold(strings.TrimSpace(in), string(tg.Kind)) {
				t.Fatalf("%q parsed as %s", in, tg.Kind)
			}
		case KindTime:
			if ms := tg.Time.UnixMilli(); ms < 0 || ms > maxTimeMillis {
				t.Fatalf("%q: time %v outside [1970, 9999]", in, tg.Time)
			}
			if allDigits.MatchString(arg) && (tg.Time.Before(minPlausibleTime) || !tg.Time.Before(maxPlausibleTime)) {
				t.Fatalf("%q: implausible Unix milliseconds accepted as %v", in, tg.Time)
			}
			if !allDigits.MatchString(arg) {
				// Accepted only with a zone: RFC3339 itself requires one.
				zoned, err := time.Parse(time.RFC3339Nano, arg)
				if err != nil || !zoned.Equal(tg.Time) {
					t.Fatalf("%q accepted, but it is not an RFC3339 time with a zone (%v)", in, err)
				}
				if zonelessTime.MatchString(arg) {
					t.Fatalf("%q accepted though it has no zone", in)
				}
				if _, off := tg.Time.Zone(); time.Duration(max(off, -off))*time.Second > MaxZoneOffset {
					t.Fatalf("%q accepted with a zone offset beyond ±18:00", in)
				}
			}
		case KindAgo:
			if tg.Ago <= 0 {
				t.Fatalf("%q: ago %v is not positive", in, tg.Ago)
			}
		case KindOffset:
			if tg.Offset < 0 {
				t.Fatalf("%q: negative offset %d", in, tg.Offset)
			}
		case KindShift:
			if tg.Shift == 0 {
				t.Fatalf("%q: zero shift accepted", in)
			}
			if arg[0] != '+' && arg[0] != '-' {
				t.Fatalf("%q: shift without a sign accepted", in)
			}
		case KindFile:
			if err := ValidateOffsets(tg.Offsets, "fuzz"); err != nil {
				t.Fatalf("%q: accepted offsets that do not validate: %v", in, err)
			}
			return // the canonical form of a file target is descriptive only
		case KindPlan, KindUndo:
			if tg.Result == nil || tg.FileDigest == "" {
				t.Fatalf("%q: a result file target without its result or digest", in)
			}
			return // its file is the target; its canonical form describes it
		case KindGroup:
			if err := ValidateGroup(tg.Group); err != nil || tg.Group == "" {
				t.Fatalf("%q: accepted group %q: %v", in, tg.Group, err)
			}
		default:
			t.Fatalf("%q: unknown kind %q accepted", in, tg.Kind)
		}

		tg.Resolve(fuzzStart)
		if tg.IsTime() {
			if ms := tg.Time.UnixMilli(); ms < 0 {
				t.Fatalf("%q resolved to %v, before 1970", in, tg.Time)
			}
			// The result records the time as JSON.
			if _, err := json.Marshal(tg.Time); err != nil {
				t.Fatalf("%q: resolved time %v cannot be encoded: %v", in, tg.Time, err)
			}
		}
		canon := tg.Canonical()
		re, err := ParseTarget(canon)
		if err != nil {
			t.Fatalf("%q: canonical form %q does not parse: %v", in, canon, err)
		}
		wantKind := tg.Kind
		if wantKind == KindAgo {
			wantKind = KindTime
		}
		if re.Kind != wantKind || !re.Time.Equal(tg.Time) || re.Offset != tg.Offset || re.Shift != tg.Shift || re.Group != tg.Group {
			t.Fatalf("%q: canonical %q means %+v, want %+v", in, canon, re, tg)
		}
		if again := re.Canonical(); again != canon {
			t.Fatalf("%q: canonical form is not stable: %q then %q", in, canon, again)
		}
	})
}

func FuzzParseScope(f *testing.F) {
	for _, s := range []string{
		"orders", "orders:0,1,2 payments", "orders:0-3,7", "orders:3-1", "orders:", ":1", ".", "..", "...",
		"orders:1 orders", "orders orders:1", "orders:2,2,1", "orders:-1", "orders:+1", "orders:1-", "orders:1-2-3",
		"orders:2147483647", "orders:2147483646-2147483647", "orders:0-99999", "orders:0-100000", "orders:0x1",
		strings.Repeat("t", 249), strings.Repeat("t", 250), "a/b", "ö", "orders:1,,2", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// As REPLAY_TOPICS: entries separated by whitespace.
		var entries TopicList
		if err := entries.Decode(s); err != nil {
			t.Fatal(err)
		}
		sc, err := ParseScope(entries)
		if err != nil {
			if !sc.Empty() {
				t.Fatalf("%q: failed parse returned scope %v", s, sc.Topics)
			}
			return
		}
		for topic, parts := range sc.Topics {
			if err := ValidateTopic(topic); err != nil {
				t.Fatalf("%q: accepted topic %q: %v", s, topic, err)
			}
			if parts != nil && len(parts) == 0 {
				t.Fatalf("%q: topic %q has an empty, non-nil partition list", s, topic)
			}
			for i, p := range parts {
				if p < 0 {
					t.Fatalf("%q: negative partition %d", s, p)
				}
				if i > 0 && parts[i-1] >= p {
					t.Fatalf("%q: partitions of %q not sorted and unique: %v", s, topic, parts)
				}
				if !sc.Contains(TopicPartition{topic, p}) {
					t.Fatalf("%q: Contains(%s/%d) = false for a listed partition", s, topic, p)
				}
			}
			if parts != nil && parts[0] > 0 && sc.Contains(TopicPartition{topic, parts[0] - 1}) {
				t.Fatalf("%q: Contains(%s/%d) = true for an unlisted partition", s, topic, parts[0]-1)
			}
		}
		// Every topic named in the input is in the scope.
		for _, e := range entries {
			topic, _, _ := strings.Cut(e, ":")
			if _, ok := sc.Topics[topic]; !ok {
				t.Fatalf("%q: topic %q of entry %q missing from %v", s, topic, e, sc.Topics)
			}
		}
		str := sc.String()
		var again TopicList
		if err := again.Decode(str); err != nil {
			t.Fatal(err)
		}
		re, err := ParseScope(again)
		if err != nil {
			t.Fatalf("%q: String() %q does not re-parse: %v", s, str, err)
		}
		if !reflect.DeepEqual(re.Topics, sc.Topics) {
			t.Fatalf("%q: String() %q re-parsed to %v, want %v", s, str, re.Topics, sc.Topics)
		}
	})
}
