package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

// realisticResult is a realistic large run: topics × partitions with production-
// style topic names and offsets in the hundreds of millions.
func realisticResult(topics, partitions int) *Result {
	domains := []string{"payments", "orders", "inventory", "customer-profile", "shipping"}
	r := sampleResult()
	r.Partitions = make([]Partition, 0, topics*partitions)
	for t := 0; t < topics; t++ {
		name := fmt.Sprintf("prod.%s.entity-%02d-change-events.v%d", domains[t%len(domains)], t, 1+t%3)
		for p := 0; p < partitions; p++ {
			prev := int64(400_000_000 + t*1_000_003 + p*7_919)
			pp := part(name, int32(p), ptr(prev), prev-int64(1_000+p*13))
			pp.LogStartOffset = prev - 50_000_000
			pp.LogEndOffset = prev + 12_345
			r.Partitions = append(r.Partitions, pp)
		}
	}
	r.Summarize()
	return r
}

func frame(t *testing.T, r *Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteFrame(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func readFrames(t *testing.T, log string) ([]*Result, int) {
	t.Helper()
	rs, damaged, err := ReadFrames(strings.NewReader(log))
	if err != nil {
		t.Fatalf("ReadFrames: %v", err)
	}
	return rs, damaged
}

func TestFrameRoundTripTenThousandPartitions(t *testing.T) {
	r := realisticResult(100, 100)
	f := frame(t, r)
	lines := strings.Split(strings.TrimSuffix(f, "\n"), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, FrameMarker) {
			t.Fatalf("line %d does not start with the marker: %q", i+1, l)
		}
		if len(l) > 200 {
			t.Fatalf("line %d is %d bytes; frame lines must stay short", i+1, len(l))
		}
	}
	js, _ := Marshal(r)
	t.Logf("10,000 partitions: indented JSON %d bytes, frame %d bytes in %d lines", len(js), len(f), len(lines))

	got, damaged := readFrames(t, f)
	if damaged != 0 || len(got) != 1 {
		t.Fatalf("got %d results, %d damaged; want 1, 0", len(got), damaged)
	}
	if !reflect.DeepEqual(got[0], r) {
		t.Error("the round trip changed the result")
	}
}

// interleave puts other output between frame lines, the way the runner's
// stderr logs mix with its stdout in one pod log.
func interleave(f string, every int, other func(i int) string) string {
	var b strings.Builder
	for i, l := range strings.SplitAfter(f, "\n") {
		if l == "" {
			continue
		}
		if i%every == 0 {
			b.WriteString(other(i))
		}
		b.WriteString(l)
	}
	return b.String()
}

func TestReadFramesSkipsOtherOutput(t *testing.T) {
	r := realisticResult(3, 40)
	f := frame(t, r)
	cases := []struct {
		name string
		log  string
	}{
		{"alone", f},
		{"log lines around", "time=... level=INFO msg=\"planning\"\nGROUP orders TARGET ...\n" + f + "level=INFO msg=done\n"},
		{"log lines between frame lines", interleave(f, 3, func(i int) string {
			// Including lines that look like base64 and lines that mention
			// the marker in passing.
			return fmt.Sprintf("level=WARN msg=\"broker slow\" n=%d\nQUJDREVGR0g=\nnot a kafka-replay/record line\n", i)
		})},
		{"an overlong line between frame lines", interleave(f, 7, func(int) string { return strings.Repeat("x", 100_000) + "\n" })},
		{"kubectl --timestamps", prefixLines(f, "2026-12-01T08:00:00.123456789Z ")},
		{"CRI log file", prefixLines(f, "2026-12-01T08:00:00.123456789Z stdout F ")},
		{"CRLF", strings.ReplaceAll(f, "\n", "\r\n")},
		{"no final newline", strings.TrimSuffix(f, "\n")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, damaged := readFrames(t, c.log)
			if damaged != 0 || len(got) != 1 {
				t.Fatalf("got %d results, %d damaged; want 1, 0", len(got), damaged)
			}
			if !reflect.DeepEqual(got[0], r) {
				t.Error("the result read back differs from the one written")
			}
		})
	}
}

func prefixLines(s, prefix string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	return b.String()
}

func TestReadFramesCountsDamage(t *testing.T) {
	r := realisticResult(2, 50)
	f := frame(t, r)
	lines := strings.SplitAfter(f, "\n")
	lines = lines[:len(lines)-1] // the empty string after the last newline
	n := len(lines)
	if n < 6 {
		t.Fatalf("frame has only %d lines; the cases need a longer one", n)
	}
	without := func(i int) string { return strings.Join(append(append([]string{}, lines[:i]...), lines[i+1:]...), "") }
	with := func(i int, l string) string {
		c := append([]string{}, lines...)
		c[i] = l
		return strings.Join(c, "")
	}
	// flip changes one base64 character of line i to another valid one, so
	// only the checksum can notice.
	flip := func(i int) string {
		l := lines[i]
		j := len(l) - 10
		ch := byte('A')
		if l[j] == 'A' {
			ch = 'B'
		}
		return with(i, l[:j]+string(ch)+l[j+1:])
	}
	swapped := append([]string{}, lines...)
	swapped[2], swapped[3] = swapped[3], swapped[2]
	header := lines[0]
	size := fmt.Sprintf("bytes=%d", jsonLen(t, header))

	cases := []struct {
		name        string
		log         string
		wantResults int
		wantDamaged int
	}{
		{"cut in the middle", strings.Join(lines[:n/2], ""), 0, 1},
		{"cut before the end line", strings.Join(lines[:n-1], ""), 0, 1},
		{"beginning missing", strings.Join(lines[n/2:], ""), 0, 1},
		{"a body line missing", without(2), 0, 1},
		{"the last body line missing", without(n - 2), 0, 1},
		{"two body lines swapped", strings.Join(swapped, ""), 0, 1},
		{"a body character changed", flip(2), 0, 1},
		{"a body line duplicated", with(2, lines[2]+lines[2]), 0, 1},
		{"header announces fewer bytes", with(0, strings.Replace(header, size, "bytes=100", 1)), 0, 1},
		{"header announces another schema", with(0, strings.Replace(header, Schema, "kafkareplay.dev/result/v9", 1)), 0, 1},
		{"header announces more than the bound", with(0, strings.Replace(header, size, fmt.Sprintf("bytes=%d", MaxFrameBytes+1), 1)), 0, 1},
		{"end checksum differs", with(n-1, FrameMarker+"end sha256="+strings.Repeat("0", 64)+"\n"), 0, 1},
		{"a cut frame then an intact one", strings.Join(lines[:n/2], "") + f, 1, 1},
		{"an intact frame then a cut one", f + strings.Join(lines[:n/2], ""), 1, 1},
		{"the same log read twice", f + f, 2, 0},
		{"no frame at all", "level=INFO msg=hello\n", 0, 0},
		{"empty log", "", 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, damaged := readFrames(t, c.log)
			if len(got) != c.wantResults || damaged != c.wantDamaged {
				t.Fatalf("got %d results, %d damaged; want %d, %d", len(got), damaged, c.wantResults, c.wantDamaged)
			}
			for _, g := range got {
				if !reflect.DeepEqual(g, r) {
					t.Error("an intact frame decoded to another result")
				}
			}
		})
	}
}

// jsonLen is the bytes= a frame header announces.
func jsonLen(t *testing.T, header string) int {
	t.Helper()
	for _, f := range strings.Fields(header) {
		if v, ok := strings.CutPrefix(f, "bytes="); ok {
			var n int
			_, _ = fmt.Sscan(v, &n)
			return n
		}
	}
	t.Fatal("no bytes= in the header")
	return 0
}

// A reader that fails mid-log (the API server closed the stream) still yields
// what was read before, and the error.
func TestReadFramesReaderError(t *testing.T) {
	r := sampleResult()
	f := frame(t, r)
	boom := errors.New("stream closed")
	got, damaged, err := ReadFrames(io.MultiReader(strings.NewReader(f+f[:len(f)/2]), &failingReader{boom}))
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	if len(got) != 1 || damaged != 1 {
		t.Fatalf("got %d results, %d damaged; want 1, 1", len(got), damaged)
	}
}

type failingReader struct{ err error }

func (f *failingReader) Read([]byte) (int, error) { return 0, f.err }

// WriteFrame writes the frame in one Write, so output written to the same
// stream before and after never lands inside it.
func TestWriteFrameSingleWrite(t *testing.T) {
	w := &countingWriter{}
	if err := WriteFrame(w, realisticResult(10, 100)); err != nil {
		t.Fatal(err)
	}
	if w.writes != 1 {
		t.Errorf("WriteFrame made %d writes, want 1", w.writes)
	}
}

type countingWriter struct{ writes int }

func (c *countingWriter) Write(p []byte) (int, error) { c.writes++; return len(p), nil }

func BenchmarkFrameTenThousandPartitions(b *testing.B) {
	r := realisticResult(100, 100)
	r.FinishedAt = time.Date(2026, 3, 1, 9, 31, 0, 0, time.UTC)
	for b.Loop() {
		var buf bytes.Buffer
		if err := WriteFrame(&buf, r); err != nil {
			b.Fatal(err)
		}
		if rs, _, err := ReadFrames(&buf); err != nil || len(rs) != 1 {
			b.Fatal(err)
		}
	}
}

func TestIsFrameLine(t *testing.T) {
	f := frame(t, sampleResult())
	for _, l := range strings.Split(strings.TrimSuffix(f, "\n"), "\n") {
		if !IsFrameLine(l) {
			t.Fatalf("%q is not taken for a frame line", l)
		}
	}
	if IsFrameLine("level=INFO msg=committed partitions=3") {
		t.Fatal("a log line is taken for a frame line")
	}
}
