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
// It returns each row's offset, its line, and, for the four-column form,
// the group each row names; the caller checks those against the group
// being repositioned, which this parser does not know.
func decodeOffsetsCSV(b []byte) (offs []PartitionOffset, lines []int, groups []rowGroup, err error) {
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1 // checked here, to say what was expected
	r.ReuseRecord = true
	var columns []string
	firstLine := 0
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, nil, nil, fmt.Errorf("line %d, column %d: %v; want %s", pe.Line, pe.Column, pe.Err, csvShape)
		}
		if err != nil {
			return nil, nil, nil, err
		}
		line, _ := r.FieldPos(0)
		if columns == nil {
			switch len(rec) {
			case len(csvColumnsNoGroup):
				columns = csvColumnsNoGroup
			case len(csvColumnsWithGroup):
				columns = csvColumnsWithGroup
			default:
				return nil, nil, nil, fmt.Errorf("line %d has %d field(s); want %s", line, len(rec), csvShape)
			}
			firstLine = line
			if slices.Equal(rec, columns) {
				continue // a header
			}
		} else if len(rec) != len(columns) {
			return nil, nil, nil, fmt.Errorf("line %d has %d field(s), but line %d has %d (%s): every line has the same fields", line, len(rec), firstLine, len(columns), strings.Join(columns, ","))
		}
		if len(columns) == len(csvColumnsWithGroup) {
			if err := ValidateGroup(rec[0]); err != nil {
				return nil, nil, nil, fmt.Errorf("line %d: group %w", line, err)
			}
			groups = append(groups, rowGroup{line: line, group: rec[0]})
			rec = rec[1:]
		}
		o := PartitionOffset{Topic: rec[0]}
		p, err := csvNumber(rec[1], 32)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("line %d: partition %w", line, err)
		}
		o.Partition = int32(p)
		if o.Offset, err = csvNumber(rec[2], 64); err != nil {
			return nil, nil, nil, fmt.Errorf("line %d: offset %w", line, err)
		}
		offs = append(offs, o)
		lines = append(lines, line)
	}
	return offs, lines, groups, nil
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

// checkRowGroups refuses a CSV offsets file with rows of a group other than
// the one being repositioned. Kafka's tool would apply only the rows of its
// --group and ignore the others; a file that holds another group's offsets
// is more likely the wrong file, so the runner refuses it, naming the first
// such row.
func checkRowGroups(rows []rowGroup, group string) error {
	var first *rowGroup
	n := 0
	for i := range rows {
		if rows[i].group != group {
			if first == nil {
				first = &rows[i]
			}
			n++
		}
	}
	if first == nil {
		return nil
	}
	more := ""
	if n > 1 {
		more = fmt.Sprintf(" (and %d more row(s) of other groups)", n-1)
	}
	return fmt.Errorf("line %d: group %q is not the group being repositioned, %q%s: the file may hold that group's rows only", first.line, first.group, group, more)
}
