package render

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kafka-replay/kafka-replay/runner/report"
)

// PlanRow is one partition of a plan, as `kubectl replay plan -o json`
// prints it.
type PlanRow struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Committed is the group's committed offset when planned; null when it
	// had none.
	Committed *int64 `json:"committed"`
	// New is the offset the plan moves it to.
	New int64 `json:"new"`
	// Delta is committed minus new: positive is re-consumed, negative
	// skipped; null without a committed offset.
	Delta *int64 `json:"delta"`
	// Note and LeftAlone are the runner's words on the partition.
	Note      string `json:"note,omitempty"`
	LeftAlone string `json:"leftAlone,omitempty"`
	Error     string `json:"error,omitempty"`
}

// PlanTotals are a plan's totals.
type PlanTotals struct {
	Partitions          int   `json:"partitions"`
	MessagesToReconsume int64 `json:"messagesToReconsume"`
	MessagesSkipped     int64 `json:"messagesSkipped"`
	NoPreviousOffset    int   `json:"noPreviousOffset,omitempty"`
	LeftAlone           int   `json:"leftAlone,omitempty"`
}

// PlanRows turns partitions into rows sorted by the largest move first
// (|delta|, then topic and partition; partitions without a delta last),
// and sums them. The totals count the messages of every partition's
// planned move (report.Partition.Messages), as the runner's dry-run totals
// do.
func PlanRows(parts []report.Partition) ([]PlanRow, PlanTotals) {
	rows := make([]PlanRow, 0, len(parts))
	var tot PlanTotals
	for _, p := range parts {
		rows = append(rows, PlanRow{Topic: p.Topic, Partition: p.Partition, Committed: p.PreviousOffset, New: p.NewOffset, Delta: p.Delta, Note: p.Note, LeftAlone: p.LeftAlone, Error: p.Error})
		tot.Partitions++
		switch {
		case p.LeftAlone != "":
			tot.LeftAlone++
		case p.Delta == nil:
			tot.NoPreviousOffset++
		default:
			again, skip := p.Messages()
			tot.MessagesToReconsume = report.AddCounts(tot.MessagesToReconsume, again)
			tot.MessagesSkipped = report.AddCounts(tot.MessagesSkipped, skip)
		}
	}
	slices.SortStableFunc(rows, func(a, b PlanRow) int {
		if c := cmp.Compare(absOr(b.Delta), absOr(a.Delta)); c != 0 {
			return c
		}
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return cmp.Compare(a.Partition, b.Partition)
	})
	return rows, tot
}

// absOr is |d|, and -1 for no delta so that those sort last.
func absOr(d *int64) int64 {
	switch {
	case d == nil:
		return -1
	case *d < 0:
		return -*d
	}
	return *d
}

// Offset prints an offset, "-" for none.
func Offset(o *int64) string {
	if o == nil {
		return "-"
	}
	return strconv.FormatInt(*o, 10)
}

// Delta prints a delta with its sign: +N re-consumed, -N skipped.
func Delta(p Palette, d *int64) string {
	switch {
	case d == nil:
		return "-"
	case *d > 0:
		return p.Yellow(fmt.Sprintf("+%d", *d))
	case *d < 0:
		return p.Red(strconv.FormatInt(*d, 10))
	}
	return "0"
}

// PlanTable is the plan as a table, largest move first, with a totals
// line.
func PlanTable(p Palette, rows []PlanRow, tot PlanTotals) string {
	t := Table{
		Header: []string{"TOPIC", "PARTITION", "COMMITTED", "NEW", "DELTA", "NOTE"},
		Right:  []bool{false, true, true, true, true, false},
	}
	for _, r := range rows {
		note := oneLine(r.Note)
		if r.LeftAlone != "" {
			note = "left alone: " + oneLine(r.LeftAlone)
		}
		if r.Error != "" {
			note = p.Red(oneLine(r.Error))
		}
		t.Rows = append(t.Rows, []string{Clean(r.Topic), strconv.Itoa(int(r.Partition)), Offset(r.Committed), strconv.FormatInt(r.New, 10), Delta(p, r.Delta), note})
	}
	var b strings.Builder
	b.WriteString(t.String())
	fmt.Fprintf(&b, "%s %d partitions: %s messages re-consumed, %s skipped", p.Bold("total"), tot.Partitions, p.Yellow(strconv.FormatInt(tot.MessagesToReconsume, 10)), skipped(p, tot.MessagesSkipped))
	if tot.NoPreviousOffset > 0 {
		fmt.Fprintf(&b, ", %d never committed", tot.NoPreviousOffset)
	}
	if tot.LeftAlone > 0 {
		fmt.Fprintf(&b, ", %d left alone", tot.LeftAlone)
	}
	b.WriteString("\n")
	return b.String()
}

func skipped(p Palette, n int64) string {
	s := strconv.FormatInt(n, 10)
	if n > 0 {
		return p.Red(s)
	}
	return s
}
