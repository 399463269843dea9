package record

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kafka-replay/kafka-replay/runner/report"
)

// The log tail for status is the runner's own lines: a frame, thousands of
// lines of base64 at the end of the log, is left out, and the tail stays
// bounded in lines and in bytes per line.
func TestUnitTailWithoutFrames(t *testing.T) {
	var log bytes.Buffer
	for i := range 50 {
		log.WriteString("level=INFO msg=step n=" + string(rune('a'+i%26)) + "\n")
	}
	log.WriteString(strings.Repeat("x", 10_000) + "\n")
	if err := report.WriteFrame(&log, manyPartitions(10, 100, 0)); err != nil {
		t.Fatal(err)
	}
	log.WriteString("level=INFO msg=done")

	w := &tailWriter{lines: 5, lineBytes: 100}
	// In pieces, as a stream arrives.
	b := log.Bytes()
	for len(b) > 0 {
		n := min(777, len(b))
		if _, err := w.Write(b[:n]); err != nil {
			t.Fatal(err)
		}
		b = b[n:]
	}
	got := w.String()
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 5 || lines[4] != "level=INFO msg=done" || lines[3] != strings.Repeat("x", 100) || strings.Contains(got, report.FrameMarker) {
		t.Fatalf("tail = %q", got)
	}
	if s := WithoutFrameLines(log.String()); strings.Contains(s, report.FrameMarker) || !strings.HasSuffix(s, "msg=done\n") || strings.Count(s, "\n") != 52 {
		t.Fatalf("WithoutFrameLines kept %d lines, ending %q", strings.Count(s, "\n"), s[max(0, len(s)-40):])
	}
}
