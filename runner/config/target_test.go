package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/report"
)

// writeFile writes content to name inside a fresh temporary directory and
// returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustTime(t *testing.T, layout, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(layout, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func TestParseTargetValid(t *testing.T) {
	offsets := []PartitionOffset{
		{Topic: "orders", Partition: 0, Offset: 10},
		{Topic: "orders", Partition: 1, Offset: 0},
		{Topic: "payments.v2", Partition: 3, Offset: 1 << 40},
	}
	js, err := json.Marshal(offsets)
	if err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, "offsets.json", string(js))

	zulu := mustTime(t, time.RFC3339, "2026-03-01T09:30:00Z")
	plus2 := mustTime(t, time.RFC3339, "2026-03-01T09:30:00+02:00")
	nano := mustTime(t, time.RFC3339Nano, "2026-03-01T09:30:00.123456789-05:30")
	const ms = int64(1772357400123)

	tests := []struct {
		in   string
		want Target
	}{
		{"earliest", Target{Kind: KindEarliest}},
		{"latest", Target{Kind: KindLatest}},
		{"  latest  ", Target{Kind: KindLatest}},
		{"EARLIEST", Target{Kind: KindEarliest}},
		{"time:2026-03-01T09:30:00Z", Target{Kind: KindTime, Time: zulu}},
		{"time:2026-03-01T09:30:00+02:00", Target{Kind: KindTime, Time: plus2}},
		{"time:2026-03-01T09:30:00.123456789-05:30", Target{Kind: KindTime, Time: nano}},
		{"time:" + strconv.FormatInt(ms, 10), Target{Kind: KindTime, Time: time.UnixMilli(ms).UTC()}},
		{"time:946684800000", Target{Kind: KindTime, Time: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{"ago:2h", Target{Kind: KindAgo, Ago: 2 * time.Hour}},
		{"ago:90m30s", Target{Kind: KindAgo, Ago: 90*time.Minute + 30*time.Second}},
		{"offset:0", Target{Kind: KindOffset, Offset: 0}},
		{"offset:9223372036854775807", Target{Kind: KindOffset, Offset: 1<<63 - 1}},
		{"shift:+100", Target{Kind: KindShift, Shift: 100}},
		{"shift:-100", Target{Kind: KindShift, Shift: -100}},
		{"shift:-9223372036854775808", Target{Kind: KindShift, Shift: -1 << 63}},
		{"file:" + file, Target{Kind: KindFile, File: file, Offsets: offsets, FileDigest: FileDigestOf(js)}},
		{"group:orders-consumer", Target{Kind: KindGroup, Group: "orders-consumer"}},
		{"group:with:colon", Target{Kind: KindGroup, Group: "with:colon"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTarget(tt.in)
			if err != nil {
				t.Fatalf("ParseTarget(%q): %v", tt.in, err)
			}
			if got.Given != tt.in {
				t.Errorf("Given = %q, want the input %q", got.Given, tt.in)
			}
			tt.want.Given = tt.in
			// time.Time carries a location; compare instants separately.
			if !got.Time.Equal(tt.want.Time) {
				t.Errorf("Time = %v, want %v", got.Time, tt.want.Time)
			}
			got.Time, tt.want.Time = time.Time{}, time.Time{}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseTarget(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseTargetTimeKeepsOffset(t *testing.T) {
	got, err := ParseTarget("time:2026-03-01T09:30:00+02:00")
	if err != nil {
		t.Fatal(err)
	}
	if got.Time.UTC().Hour() != 7 {
		t.Errorf("09:30+02:00 is %v in UTC, want 07:30", got.Time.UTC())
	}
	if !got.IsTime() {
		t.Error("IsTime() = false for a time target")
	}
}

func TestParseTargetInvalid(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "does-not-exist.json")
	malformed := writeFile(t, "malformed.json", `[{"topic":"orders","partition":0,"offset":1}`)
	notList := writeFile(t, "object.json", `{"topic":"orders","partition":0,"offset":1}`)
	negOffset := writeFile(t, "neg.json", `[{"topic":"orders","partition":0,"offset":-5}]`)
	negPartition := writeFile(t, "negp.json", `[{"topic":"orders","partition":-1,"offset":5}]`)
	dup := writeFile(t, "dup.json", `[{"topic":"orders","partition":2,"offset":5},{"topic":"orders","partition":2,"offset":7}]`)
	badTopic := writeFile(t, "badtopic.json", `[{"topic":"orders/eu","partition":0,"offset":5}]`)
	unknownField := writeFile(t, "unknown.json", `[{"topic":"orders","partition":0,"offset":5,"metadata":"x"}]`)
	empty := writeFile(t, "empty.json", `[]`)
	stringOffset := writeFile(t, "stroff.json", `[{"topic":"orders","partition":0,"offset":"5"}]`)

	tests := []struct {
		in       string
		wantMsgs []string // each must appear in the error
	}{
		{"", []string{"empty"}},
		{"   ", []string{"empty"}},
		{"earliest:foo", []string{"takes no argument"}},
		{"latest:", []string{"takes no argument"}},
		{"beginning", []string{"unknown target"}},
		{"timestamp:123", []string{"unknown target kind", "timestamp"}},
		// A value without its kind is named as the target it would be
		// (issue 32, friction 11).
		{"2026-12-03T17:23:00Z", []string{"unknown target kind", "did you mean time:2026-12-03T17:23:00Z?"}},
		{"2026-12-03T17:23:00+01:00", []string{"did you mean time:2026-12-03T17:23:00+01:00?"}},
		{"5m", []string{"unknown target", "did you mean ago:5m?"}},
		{"-100", []string{"did you mean shift:-100?"}},
		{"42", []string{"did you mean offset:42?"}},
		{"time:", []string{"needs an argument"}},
		{"time", []string{"needs an argument"}},
		{"time:2026-03-01T09:30:00", []string{"zone"}},
		{"time:2026-03-01T09:30", []string{"zone"}},
		{"time:2026-03-01 09:30:00", []string{"zone"}},
		{"time:2026-03-01T09:30:00.5", []string{"zone"}},
		{"time:2026-03-01", []string{"zone"}},
		{"time:yesterday", []string{"RFC3339"}},
		{"time:2026-03-01T09:30:00+25:00", []string{"RFC3339"}},
		{"time:1969-12-31T23:59:59Z", []string{"before 1970"}},
		{"time:-1000", []string{"RFC3339"}},
		{"time:99999999999999999999", []string{"out of range"}},
		{"time:253402300800000", []string{"outside the plausible years"}}, // year 10000
		{"ago:", []string{"needs an argument"}},
		{"ago:2", []string{"Go duration"}},
		{"ago:two hours", []string{"Go duration"}},
		{"ago:-1h", []string{"positive"}},
		{"ago:0s", []string{"positive"}},
		{"offset:-1", []string{"≥ 0"}},
		{"offset:abc", []string{"whole number"}},
		{"offset:1.5", []string{"whole number"}},
		{"offset:9223372036854775808", []string{"whole number"}},
		{"shift:0", []string{"shift:"}},
		{"shift:+0", []string{"must not be 0"}},
		{"shift:-0", []string{"must not be 0"}},
		{"shift:100", []string{"explicit sign"}},
		{"shift:+", []string{"signed whole number"}},
		{"shift:+1e3", []string{"signed whole number"}},
		{"shift:+9223372036854775808", []string{"signed whole number"}},
		{"file:", []string{"needs an argument"}},
		{"file:" + missing, []string{"file:", "no such file"}},
		{"file:" + dir, []string{"file:"}},
		{"file:" + malformed, []string{"malformed.json", "JSON list"}},
		{"file:" + notList, []string{"JSON list"}},
		{"file:" + negOffset, []string{"entry 0", "offset -5 is negative"}},
		{"file:" + negPartition, []string{"entry 0", "partition -1 is negative"}},
		{"file:" + dup, []string{"entry 0 and entry 1", "orders/2"}},
		{"file:" + badTopic, []string{"entry 0", "topic"}},
		{"file:" + unknownField, []string{"unknown field", "metadata"}},
		{"file:" + empty, []string{"lists no partitions"}},
		{"file:" + stringOffset, []string{"entry 0 (orders/0)", "offset is a string"}},
		{"group:", []string{"needs an argument"}},
		{"group: padded", []string{"group:", "spaces"}},
		{"group:a\tb", []string{"group:", "control character"}},
		{"group:" + strings.Repeat("g", 256), []string{"group:", "256 bytes"}},
	}
	for _, tt := range tests {
		name := tt.in
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) {
			got, err := ParseTarget(tt.in)
			if err == nil {
				t.Fatalf("ParseTarget(%q) = %+v, want an error", tt.in, got)
			}
			for _, m := range tt.wantMsgs {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("ParseTarget(%q) error %q does not mention %q", tt.in, err, m)
				}
			}
			if got.Given != tt.in {
				t.Errorf("Given = %q on error, want the input %q", got.Given, tt.in)
			}
		})
	}
}

func TestParseTargetRefusesOversizedFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: large on paper, nothing written.
	if err := f.Truncate(MaxTargetFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = ParseTarget("file:" + p)
	if err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("oversized file: err = %v, want a size error", err)
	}
}

func TestResolve(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 987654321, time.FixedZone("CET", 3600))

	ago, err := ParseTarget("ago:2h30m")
	if err != nil {
		t.Fatal(err)
	}
	ago.Resolve(start)
	want := start.Add(-150 * time.Minute).Truncate(time.Millisecond)
	if !ago.Time.Equal(want) {
		t.Errorf("ago:2h30m from %v resolved to %v, want %v", start, ago.Time, want)
	}
	if ago.Time.Location() != time.UTC {
		t.Errorf("resolved time is in %v, want UTC", ago.Time.Location())
	}
	if ago.Time.Nanosecond()%int(time.Millisecond) != 0 {
		t.Errorf("resolved time %v has sub-millisecond precision, which Kafka cannot use", ago.Time)
	}
	if !ago.IsTime() {
		t.Error("IsTime() = false for an ago target")
	}

	// Resolving twice against the same start is stable; a later start moves it.
	first := ago.Time
	ago.Resolve(start)
	if !ago.Time.Equal(first) {
		t.Errorf("second Resolve moved the time from %v to %v", first, ago.Time)
	}
	ago.Resolve(start.Add(time.Hour))
	if got := ago.Time.Sub(first); got != time.Hour {
		t.Errorf("Resolve an hour later moved the time by %v, want 1h", got)
	}

	// Other kinds are left alone.
	for _, in := range []string{"earliest", "latest", "offset:5", "shift:-3", "group:other", "time:2026-01-01T00:00:00Z"} {
		tg, err := ParseTarget(in)
		if err != nil {
			t.Fatal(err)
		}
		before := tg
		tg.Resolve(start)
		if !reflect.DeepEqual(tg, before) {
			t.Errorf("Resolve changed %q: %+v -> %+v", in, before, tg)
		}
		if wantIsTime := tg.Kind == KindTime; tg.IsTime() != wantIsTime {
			t.Errorf("%q: IsTime() = %v", in, tg.IsTime())
		}
	}
}

func TestResolveBeforeEpochClampsToEpoch(t *testing.T) {
	// A negative timestamp means something else to Kafka (-1 latest, -2
	// earliest), so an ago that reaches before 1970 must stop at the epoch.
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	tg, err := ParseTarget("ago:2000000h") // about 228 years
	if err != nil {
		t.Fatal(err)
	}
	tg.Resolve(start)
	if ms := tg.Time.UnixMilli(); ms != 0 {
		t.Errorf("ago:2000000h from %v resolved to %v (%d ms), want the Unix epoch", start, tg.Time, ms)
	}
	re, err := ParseTarget(tg.Canonical())
	if err != nil {
		t.Fatalf("canonical form %q of a clamped ago does not parse: %v", tg.Canonical(), err)
	}
	if !re.Time.Equal(tg.Time) {
		t.Errorf("canonical %q re-parsed to %v, want %v", tg.Canonical(), re.Time, tg.Time)
	}
}

func TestCanonical(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	file := writeFile(t, "o.json", `[{"topic":"a","partition":0,"offset":1},{"topic":"a","partition":1,"offset":2}]`)
	tests := []struct {
		in, want string
	}{
		{"earliest", "earliest"},
		{"LATEST", "latest"},
		{"time:2026-03-01T09:30:00+02:00", "time:2026-03-01T07:30:00Z"},
		{"time:2026-03-01T09:30:00.250-01:00", "time:2026-03-01T10:30:00.25Z"},
		{"time:1772357400123", "time:" + time.UnixMilli(1772357400123).UTC().Format(time.RFC3339Nano)},
		{"ago:2h", "time:2026-03-01T10:00:00Z"},
		{"ago:1ms", "time:2026-03-01T11:59:59.999Z"},
		{"offset:42", "offset:42"},
		{"offset:+42", "offset:42"},
		{"shift:+7", "shift:+7"},
		{"shift:-7", "shift:-7"},
		{"group:source", "group:source"},
		{"file:" + file, "file:" + file + " (2 partitions)"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			tg, err := ParseTarget(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			tg.Resolve(start)
			got := tg.Canonical()
			if got != tt.want {
				t.Errorf("Canonical() = %q, want %q", got, tt.want)
			}
			if tg.Kind == KindFile {
				return
			}
			// The canonical form is itself a valid target meaning the same.
			re, err := ParseTarget(got)
			if err != nil {
				t.Fatalf("canonical %q does not parse: %v", got, err)
			}
			wantKind := tg.Kind
			if wantKind == KindAgo {
				wantKind = KindTime
			}
			if re.Kind != wantKind || !re.Time.Equal(tg.Time) || re.Offset != tg.Offset || re.Shift != tg.Shift || re.Group != tg.Group {
				t.Errorf("canonical %q re-parsed to %+v, want the same target as %+v", got, re, tg)
			}
		})
	}
}

func TestValidateOffsets(t *testing.T) {
	if err := ValidateOffsets([]PartitionOffset{{"a", 0, 0}, {"a", 1, 0}, {"b", 0, 5}}, "here"); err != nil {
		t.Errorf("valid offsets rejected: %v", err)
	}
	err := ValidateOffsets([]PartitionOffset{{"a", 0, 0}, {"b", 1, 0}, {"a", 0, 3}}, "here")
	if err == nil || !strings.HasPrefix(err.Error(), "here: ") || !strings.Contains(err.Error(), "entry 0 and entry 2") {
		t.Errorf("duplicate error = %v, want it to start with the location and name entries 0 and 2", err)
	}
	if err := ValidateOffsets(nil, "here"); err == nil {
		t.Error("no offsets accepted")
	}
}

// TestParseTimeRefusesImplausibleDigits: a digit string is Unix
// milliseconds, and the usual mistakes (seconds from date +%s, a YYYYMMDD
// date) would otherwise land in 1970, which means earliest.
func TestParseTimeRefusesImplausibleDigits(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"1772355630", []string{"1970-01-21", "looks like Unix seconds", "date +%s", "append 000", "time:2026-03-01T09:00:30Z"}},
		{"20260301", []string{"looks like a date (YYYYMMDD)", "time:2026-03-01T00:00:00Z"}},
		{"1772355630000000", []string{"looks like Unix microseconds", "time:2026-03-01T09:00:30Z"}},
		{"1772355630000000000", []string{"looks like Unix nanoseconds", "time:2026-03-01T09:00:30Z"}},
		{"0", []string{"1970-01-01T00:00:00Z", "plausible years 2000 to 2099", "RFC3339"}},
		{"946684799999", []string{"1999-12-31T23:59:59.999Z", "plausible"}},
		{"4102444800000", []string{"2100-01-01T00:00:00Z", "plausible"}},
		{"99999999999999999999", []string{"out of range"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTime(tt.in)
			if err == nil {
				t.Fatalf("ParseTime(%q) = %v, want an error", tt.in, got)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	// The edges of the range are accepted.
	for _, in := range []string{"946684800000", "4102444799999", "1772355630000"} {
		if _, err := ParseTime(in); err != nil {
			t.Errorf("ParseTime(%q): %v", in, err)
		}
	}
	// An RFC3339 time says what it means and is not held to the range.
	if _, err := ParseTime("1999-12-31T23:59:59Z"); err != nil {
		t.Errorf("RFC3339 before 2000 refused: %v", err)
	}
}

// TestReadOffsetsFileIsStrict: a loosely read offsets file moves offsets
// nobody asked for (a missing or null offset becomes 0, the log start).
func TestReadOffsetsFileIsStrict(t *testing.T) {
	tests := []struct {
		name, content string
		want          []string // each must appear in the error
	}{
		{"null offset", `[{"topic":"orders","partition":0,"offset":null}]`, []string{"entry 0 (orders/0)", "offset is null, not a whole number"}},
		{"missing offset", `[{"topic":"orders","partition":0,"offset":1},{"topic":"orders","partition":1}]`, []string{"entry 1 (orders/1)", "offset is missing"}},
		{"missing partition", `[{"topic":"orders","offset":5}]`, []string{`entry 0 (topic "orders")`, "partition is missing"}},
		{"missing topic", `[{"partition":0,"offset":5}]`, []string{"entry 0:", "topic is missing"}},
		{"key in another case", `[{"topic":"orders","partition":0,"Offset":5}]`, []string{"entry 0 (orders/0)", `unknown field "Offset"`, `did you mean "offset"`}},
		{"unknown key", `[{"topic":"orders","partition":0,"offset":5,"metadata":"x"}]`, []string{"entry 0 (orders/0)", `unknown field "metadata"`}},
		{"duplicate key", `[{"topic":"orders","partition":0,"offset":5,"offset":7}]`, []string{"entry 0 (orders/0)", `"offset" is given twice`}},
		{"duplicate topic key", `[{"topic":"a","topic":"b","partition":0,"offset":5}]`, []string{`entry 0 (topic "a")`, `"topic" is given twice`}},
		{"duplicate partition", `[{"topic":"orders","partition":2,"offset":5},{"topic":"orders","partition":2,"offset":7}]`, []string{"entry 0 and entry 1", "orders/2"}},
		{"second list", `[{"topic":"orders","partition":0,"offset":5}] [{"topic":"orders","partition":0,"offset":0}]`, []string{"a list after the list", "exactly one list"}},
		{"trailing garbage", `[{"topic":"orders","partition":0,"offset":5}] x`, []string{"after the list"}},
		{"trailing object", `[{"topic":"orders","partition":0,"offset":5}]{}`, []string{"an object after the list"}},
		{"offset as a string", `[{"topic":"orders","partition":0,"offset":"5"}]`, []string{"offset is a string"}},
		{"fractional offset", `[{"topic":"orders","partition":0,"offset":5.0}]`, []string{"offset 5.0 is not a whole number"}},
		{"exponent offset", `[{"topic":"orders","partition":0,"offset":1e3}]`, []string{"offset 1e3 is not a whole number"}},
		{"partition over int32", `[{"topic":"orders","partition":2147483648,"offset":5}]`, []string{"partition 2147483648 is not a whole number of at most 32 bits"}},
		{"topic as a number", `[{"topic":7,"partition":0,"offset":5}]`, []string{"topic is a number, not a string"}},
		{"entry not an object", `[{"topic":"orders","partition":0,"offset":5}, 3]`, []string{"entry 1", "is a number, not an object"}},
		{"nested value", `[{"topic":"orders","partition":{"n":0},"offset":5}]`, []string{"partition is an object"}},
		{"object at top", `{"topic":"orders","partition":0,"offset":1}`, []string{"JSON list", "starts with an object"}},
		{"unterminated", `[{"topic":"orders","partition":0,"offset":1}`, []string{"JSON list"}},
		{"empty file", ``, []string{"is empty"}},
		{"empty list", `[]`, []string{"lists no partitions"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, "offsets.json", tt.content)
			offs, err := ReadOffsetsFile(p)
			if err == nil {
				t.Fatalf("accepted %s as %+v", tt.content, offs)
			}
			if !strings.HasPrefix(err.Error(), "file: "+p) {
				t.Errorf("error %q does not start with the file's name", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	// What the format allows: any key order, whitespace, a trailing newline.
	p := writeFile(t, "ok.json", "[\n  {\"offset\": 9, \"partition\": 1, \"topic\": \"orders\"},\n  {\"topic\":\"orders\",\"partition\":0,\"offset\":0}\n]\n")
	offs, err := ReadOffsetsFile(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []PartitionOffset{{"orders", 1, 9}, {"orders", 0, 0}}
	if !slices.Equal(offs, want) {
		t.Errorf("got %+v, want %+v", offs, want)
	}
}

// TestZoneOffsetsBeyondEighteenHoursAreRefused: Go's RFC3339 parser takes
// any two-digit zone hour and minute; a time: target, the result files a
// plan: or undo: target reads, and (in package runner) commit metadata take
// only real offsets, -18:00 to +18:00 with minutes below 60.
func TestZoneOffsetsBeyondEighteenHoursAreRefused(t *testing.T) {
	for _, tc := range []struct {
		zone string
		ok   bool
	}{
		{"Z", true}, {"+00:00", true}, {"-00:00", true}, {"+18:00", true}, {"-18:00", true},
		{"+14:00", true}, {"-09:30", true}, {"+05:45", true}, {"+17:59", true},
		{"+24:00", false}, {"-24:00", false}, {"+18:01", false}, {"-18:01", false},
		{"+23:59", false}, {"+19:00", false}, {"+00:60", false}, {"-01:99", false}, {"+17:60", false},
	} {
		s := "2026-01-01T00:00:03" + tc.zone
		_, err := ParseTarget("time:" + s)
		if (err == nil) != tc.ok {
			t.Errorf("time:%s: error %v, want ok=%v", s, err, tc.ok)
		}
		_, goErr := time.Parse(time.RFC3339, s)
		if err != nil && goErr == nil && !strings.Contains(err.Error(), "not a zone offset") {
			t.Errorf("time:%s: error %q does not say the zone offset is wrong", s, err)
		}
		if _, err := ParseRFC3339(s); (err == nil) != tc.ok {
			t.Errorf("ParseRFC3339(%s): error %v, want ok=%v", s, err, tc.ok)
		}
		// A result file's times come through JSON; the minutes were
		// normalised by then (+00:60 is +01:00), the range is checked.
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			continue // Go refuses it itself
		}
		_, off := tm.Zone()
		beyond := off > 18*3600 || off < -18*3600
		if got := CheckZone(tm) != nil; got != beyond {
			t.Errorf("CheckZone(%s) refused=%v, want %v", s, got, beyond)
		}
		js := fmt.Sprintf(`{"schema":%q,"group":"g","runId":"r","target":{"given":"time:%s","resolved":"time:%s","time":%q},"dryRun":true,"alreadyApplied":false,"exitCode":0,"reason":"DryRun","partitions":[{"topic":"t","partition":0,"previousOffset":1,"newOffset":0,"delta":1,"logStartOffset":0,"logEndOffset":5,"applied":false}],"totals":{"partitions":1,"applied":0,"messagesToReconsume":1,"messagesSkipped":0},"startedAt":"2026-01-01T00:00:00Z","finishedAt":"2026-01-01T00:00:00Z"}`, report.Schema, s, s, s)
		_, err = DecodeResultFile([]byte(js))
		if (err != nil) != beyond {
			t.Errorf("result file with target.time %s: error %v, want refused=%v", s, err, beyond)
		}
	}
}
