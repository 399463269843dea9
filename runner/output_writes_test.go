package runner

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"

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

// The table's rows are built by hand (appendOptInt): they must read exactly
// as the fmt.Fprintf they replace printed them, cell by cell, through the
// same tabwriter.
func TestTableRowsReadAsFprintfPrintedThem(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	res := &report.Result{Schema: report.Schema, Group: "g", RunID: "r", Reason: report.ReasonApplied}
	res.Partitions = []report.Partition{
		{Topic: "orders", Partition: 0, PreviousOffset: i64(10), NewOffset: 5, Delta: i64(5), LogEndOffset: 10},
		{Topic: "orders", Partition: 12345, PreviousOffset: nil, NewOffset: 0, Delta: nil, LogStartOffset: 3, LogEndOffset: 9, Note: "no previous offset"},
		{Topic: "a-much-longer-topic.name_x", Partition: 7, PreviousOffset: i64(0), NewOffset: 99, Delta: i64(-99), LogEndOffset: 1 << 40, Error: "commit failed", Note: "clamped…"},
		{Topic: "t", Partition: 2147483647, PreviousOffset: i64(-1), NewOffset: -2, Delta: i64(0), LogStartOffset: -9223372036854775808, LogEndOffset: 9223372036854775807, LeftAlone: "moved since"},
	}
	var got strings.Builder
	writeTable(&got, res)

	var want strings.Builder
	signedOld := func(p *int64) string {
		if p == nil {
			return "-"
		}
		if *p > 0 {
			return "+" + strconv.FormatInt(*p, 10)
		}
		return strconv.FormatInt(*p, 10)
	}
	optOld := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatInt(*p, 10)
	}
	tw := tabwriter.NewWriter(&want, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "TOPIC\tPARTITION\tPREVIOUS\tNEW\tDELTA\tLOG-START\tLOG-END\tNOTE")
	for _, p := range res.Partitions {
		note := p.Note
		if p.LeftAlone != "" {
			note = strings.TrimSpace("LEFT ALONE: " + p.LeftAlone + " " + note)
		}
		if p.Error != "" {
			note = strings.TrimSpace("ERROR: " + p.Error + " " + note)
		}
		_, _ = fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%d\t%d\t%s\n", p.Topic, p.Partition, optOld(p.PreviousOffset), p.NewOffset, signedOld(p.Delta), p.LogStartOffset, p.LogEndOffset, note)
	}
	_ = tw.Flush()
	// The table proper: after the GROUP line, before the TOTAL line.
	_, table, _ := strings.Cut(got.String(), "\n")
	table, _, _ = strings.Cut(table, "TOTAL ")
	if table != want.String() {
		t.Errorf("table rows differ from fmt's:\ngot:\n%s\nwant:\n%s", table, want.String())
	}
}
