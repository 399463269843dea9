package runner

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/kafka-replay/kafka-replay/runner/config"
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
	if err := writeTable(&w, res); err != nil {
		t.Fatal(err)
	}
	if w.bytes < 1000*20 {
		t.Fatalf("the table is %d bytes: not every partition was written", w.bytes)
	}
	// 64 KiB at a time: about one write per 1,000 rows, whatever the width.
	if limit := w.bytes/(64<<10) + 2; w.calls > limit {
		t.Errorf("%d writes for %d bytes; want at most %d", w.calls, w.bytes, limit)
	}
}

// tableAsTabwriterPrintsIt is the table part of writeTable's output as it
// was printed before writePartitions: each row through fmt.Fprintf and
// text/tabwriter. It is the oracle the hand-aligned table must match.
func tableAsTabwriterPrintsIt(ps []report.Partition) string {
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
	var want strings.Builder
	tw := tabwriter.NewWriter(&want, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "TOPIC\tPARTITION\tPREVIOUS\tNEW\tDELTA\tLOG-START\tLOG-END\tNOTE")
	for _, p := range ps {
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
	return want.String()
}

// tablePart cuts writeTable's output down to the table: after the GROUP
// line, before the TOTAL line.
func tablePart(res *report.Result) string {
	var got strings.Builder
	_ = writeTable(&got, res) // a strings.Builder takes every write
	_, table, _ := strings.Cut(got.String(), "\n")
	table, _, _ = strings.Cut(table, "TOTAL ")
	return table
}

// The table is aligned by hand (writePartitions): it must read exactly as
// fmt.Fprintf through text/tabwriter printed it, byte for byte, including
// the notes tabwriter reads as more than text (a tab, a line break), which
// go through tabwriter itself.
func TestTableReadsAsTabwriterPrintedIt(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	cases := map[string][]report.Partition{
		"every kind of cell": {
			{Topic: "orders", Partition: 0, PreviousOffset: i64(10), NewOffset: 5, Delta: i64(5), LogEndOffset: 10},
			{Topic: "orders", Partition: 12345, PreviousOffset: nil, NewOffset: 0, Delta: nil, LogStartOffset: 3, LogEndOffset: 9, Note: "no previous offset"},
			{Topic: "a-much-longer-topic.name_x", Partition: 7, PreviousOffset: i64(0), NewOffset: 99, Delta: i64(-99), LogEndOffset: 1 << 40, Error: "commit failed", Note: "clamped…"},
			{Topic: "t", Partition: 2147483647, PreviousOffset: i64(-1), NewOffset: -2, Delta: i64(0), LogStartOffset: -9223372036854775808, LogEndOffset: 9223372036854775807, LeftAlone: "moved since"},
		},
		"narrow cells under wide headers": {{Topic: "a", Partition: 1, NewOffset: 2}},
		"a non-ASCII topic":               {{Topic: "ünïcødé", NewOffset: 1}, {Topic: "x", NewOffset: 22}},
		"a tab in a note":                 {{Topic: "a", Note: "left\tright"}, {Topic: "bbbbbbbbbbbb", Note: "x"}},
		"a line break in an error":        {{Topic: "a", Error: "line one\nline two"}, {Topic: "bbbbbbbbbbbb", PreviousOffset: i64(123456789)}},
		"tabwriter's escape byte":         {{Topic: "a", Note: "\xffescaped\xff"}, {Topic: "bb"}},
		"a vertical tab and a form feed":  {{Topic: "a", LeftAlone: "v\vf\fx"}, {Topic: "bb"}},
	}
	for name, ps := range cases {
		t.Run(name, func(t *testing.T) {
			res := &report.Result{Schema: report.Schema, Group: "g", RunID: "r", Partitions: ps}
			if got, want := tablePart(res), tableAsTabwriterPrintsIt(ps); got != want {
				t.Errorf("table differs from tabwriter's:\ngot:\n%q\nwant:\n%q", got, want)
			}
		})
	}
	// And many random tables, from a fixed seed.
	rng := rand.New(rand.NewPCG(15, 1000))
	pick := func(ss ...string) string { return ss[rng.IntN(len(ss))] }
	for n := range 300 {
		var ps []report.Partition
		for range rng.IntN(12) {
			p := report.Partition{
				Topic:     pick("a", "orders", "t_0.9-x", "ütf", strings.Repeat("w", rng.IntN(40))),
				Partition: rng.Int32N(1 << rng.IntN(31)), NewOffset: rng.Int64N(1<<rng.IntN(62)) - 1<<20,
				LogStartOffset: rng.Int64N(1 << rng.IntN(62)), LogEndOffset: rng.Int64N(1 << rng.IntN(62)),
				Note: pick("", "", "a note", "ünïcode note", "tab\tnote", "nl\nnote"), Error: pick("", "", "", "failed"),
				LeftAlone: pick("", "", "", "moved"),
			}
			if rng.IntN(3) > 0 {
				p.PreviousOffset, p.Delta = i64(rng.Int64N(1<<40)-1<<30), i64(rng.Int64N(1<<40)-1<<39)
			}
			ps = append(ps, p)
		}
		res := &report.Result{Schema: report.Schema, Group: "g", RunID: "r", Partitions: ps}
		if len(ps) == 0 {
			continue
		}
		if got, want := tablePart(res), tableAsTabwriterPrintsIt(ps); got != want {
			t.Fatalf("random table %d differs from tabwriter's:\ngot:\n%q\nwant:\n%q", n, got, want)
		}
	}
}

// emit encodes the indented JSON only for what writes it (stdout in JSON, a
// result file): with a table and a result file, the file still holds the
// whole result and stdout the table; with JSON, stdout is the document; the
// termination message is written in every case.
func TestEmitWritesEveryOutputAsked(t *testing.T) {
	for _, tc := range []struct {
		name       string
		output     string
		resultFile bool
	}{
		{"table only", config.OutputTable, false},
		{"table and a result file", config.OutputTable, true},
		{"json only", config.OutputJSON, false},
		{"json and a result file", config.OutputJSON, true},
		{"csv and a result file", config.OutputCSV, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := &config.Config{Output: tc.output, TerminationMessagePath: filepath.Join(dir, "termination-log")}
			if tc.resultFile {
				cfg.ResultFile = filepath.Join(dir, "result.json")
			}
			res := thousandPartitions()
			res.Summarize()
			want, err := report.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			var stdout strings.Builder
			emit(cfg, res, &stdout, slog.New(slog.DiscardHandler), nil)
			switch {
			case tc.output == config.OutputJSON:
				if stdout.String() != string(want) {
					t.Errorf("stdout is not the result document (%d bytes, want %d)", stdout.Len(), len(want))
				}
			case tc.output == config.OutputCSV:
				if lines := strings.Split(stdout.String(), "\n"); len(lines) != 1001 || lines[0] != "g,t000,0,5" {
					t.Errorf("stdout is not the plan's CSV (%d lines):\n%.300s", len(lines), stdout.String())
				}
			case !strings.HasPrefix(stdout.String(), "GROUP g ") || !strings.Contains(stdout.String(), "\nTOTAL 1000 partition(s)"):
				t.Errorf("stdout is not the table:\n%.300s", stdout.String())
			}
			if tc.resultFile {
				got, err := os.ReadFile(cfg.ResultFile)
				if err != nil || string(got) != string(want) {
					t.Errorf("result file: %d bytes (%v), want the %d-byte document", len(got), err, len(want))
				}
			}
			term, err := os.ReadFile(cfg.TerminationMessagePath)
			if err != nil || len(term) == 0 || len(term) > report.MaxTerminationMessageBytes {
				t.Errorf("termination message: %d bytes (%v)", len(term), err)
			}
		})
	}
}

// TestResultIsNeverRenamedOverWhatIsNotAFile: a result file path that is a
// link to a device, or the device itself, is written in place; renaming a
// temporary file over it would replace the link or, as root, the device.
func TestResultIsNeverRenamedOverWhatIsNotAFile(t *testing.T) {
	link := filepath.Join(t.TempDir(), "stdout")
	if err := os.Symlink("/dev/null", link); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(link, []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", st, err)
	}
	if err := writeFileAtomic(t.TempDir(), []byte("{}\n")); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Fatalf("a directory: %v", err)
	}
}
