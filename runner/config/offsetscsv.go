package config

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// csvShape is the CSV form of a file target, in the words of errors.
const csvShape = "CSV lines topic,partition,offset or group,topic,partition,offset (kafka-consumer-groups.sh --export)"

// The two CSV layouts kafka-consumer-groups.sh writes with --export: without
// the group for one --group, with it for several. It reads either with
// --from-file, as the runner does.
var (
	csvColumnsNoGroup   = []string{fieldTopic, fieldPartition, fieldOffset}
	csvColumnsWithGroup = []string{fieldGroup, fieldTopic, fieldPartition, fieldOffset}
)

// fieldGroup is the group column of a CSV offsets file.
const fieldGroup = "group"

// decodeOffsetsCSV parses the CSV of kafka-consumer-groups.sh --export, as
// strictly as DecodeOffsets parses JSON: every row has the same three or
// four fields (quoted as RFC 4180 quotes them), numbers are whole numbers
// with no padding, and an error names the line and the field. Blank lines
// are skipped (Kafka's own export ends with one). A first line that names
// the columns exactly is a header, and is skipped; Kafka writes none.
//
// In the four-column form every row names the same group: Kafka's tool
// writes several groups' rows into one file (--all-groups, or --group
// given twice) and applies a group's own rows only, but a file that moves
// one group's offsets should say nothing about another's, and such a file
// is likelier the wrong file. It returns that group, and the line that
// first names it; the caller checks it against the group being
// repositioned, which this parser does not know.
//
// It returns each row's offset and its line.
func decodeOffsetsCSV(b []byte) (offs []PartitionOffset, lines []int, group rowGroup, err error) {
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1 // checked here, to say what was expected
	r.ReuseRecord = true
	var columns []string
	firstLine := 0
	fail := func(format string, a ...any) ([]PartitionOffset, []int, rowGroup, error) {
		return nil, nil, rowGroup{}, fmt.Errorf(format, a...)
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return fail("line %d, column %d: %v; want %s", pe.Line, pe.Column, pe.Err, csvShape)
		}
		if err != nil {
			return fail("%w", err)
		}
		line, _ := r.FieldPos(0)
		if columns == nil {
			switch len(rec) {
			case len(csvColumnsNoGroup):
				columns = csvColumnsNoGroup
			case len(csvColumnsWithGroup):
				columns = csvColumnsWithGroup
			default:
				return fail("line %d has %d field(s); want %s", line, len(rec), csvShape)
			}
			firstLine = line
			if slices.Equal(rec, columns) {
				continue // a header
			}
		} else if len(rec) != len(columns) {
			return fail("line %d has %d field(s), but line %d has %d (%s): every line has the same fields", line, len(rec), firstLine, len(columns), strings.Join(columns, ","))
		}
		if len(columns) == len(csvColumnsWithGroup) {
			switch err := ValidateGroup(rec[0]); {
			case err != nil:
				return fail("line %d: group %w", line, err)
			case group.line == 0:
				group = rowGroup{line: line, group: rec[0]}
			case rec[0] != group.group:
				return fail("line %d: group %q is not line %d's %q: the file may hold one group's rows", line, rec[0], group.line, group.group)
			}
			rec = rec[1:]
		}
		o := PartitionOffset{Topic: rec[0]}
		p, err := csvNumber(rec[1], 32)
		if err != nil {
			return fail("line %d: partition %w", line, err)
		}
		o.Partition = int32(p)
		if o.Offset, err = csvNumber(rec[2], 64); err != nil {
			return fail("line %d: offset %w", line, err)
		}
		offs = append(offs, o)
		lines = append(lines, line)
	}
	return offs, lines, group, nil
}

// csvNumber reads a whole number that fits in bits, written as Kafka writes
// one: digits, with a minus sign if negative (which validateOffsets then
// refuses by name). Not " 5", not "+5", not "5.0", not empty.
func csvNumber(s string, bits int) (int64, error) {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return 0, fmt.Errorf("%s is not a whole number of at most %d bits", s, bits)
	}
	return n, nil
}

// check refuses the group column of a CSV offsets file (if it has one)
// that is not the group being repositioned.
func (g rowGroup) check(group string) error {
	if g.line == 0 || g.group == group {
		return nil
	}
	return fmt.Errorf("line %d: group %q is not the group being repositioned, %q: the file holds another group's offsets", g.line, g.group, group)
}
