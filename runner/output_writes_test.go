package runner

import (
	"testing"

	"github.com/kafka-replay/kafka-replay/runner/report"
)

// countingWriter counts the Write calls it gets.
type countingWriter struct{ calls, bytes int }

func (w *countingWriter) Write(b []byte) (int, error) {
	w.calls++
	w.bytes += len(b)
	return len(b), nil
}

// The table goes to stdout in a few large writes, not one per cell: written
// through unbuffered, 1,000 partitions were some 18,000 system calls.
func TestTableIsWrittenInFewWrites(t *testing.T) {
	res := &report.Result{Schema: report.Schema, Group: "g", RunID: "r"}
	for i := range 1000 {
		prev := int64(i)
		res.Partitions = append(res.Partitions, report.Partition{Topic: "orders", Partition: int32(i), PreviousOffset: &prev, NewOffset: 2 * prev, Delta: &prev})
	}
	var w countingWriter
	writeTable(&w, res)
	if w.bytes < 1000*20 {
		t.Fatalf("the table is %d bytes: not every partition was written", w.bytes)
	}
	// 64 KiB at a time: about one write per 1,000 rows, whatever the width.
	if limit := w.bytes/(64<<10) + 2; w.calls > limit {
		t.Errorf("%d writes for %d bytes; want at most %d", w.calls, w.bytes, limit)
	}
}
