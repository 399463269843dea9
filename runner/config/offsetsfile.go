package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ReadOffsetsFile reads and validates a file target.
func ReadOffsetsFile(path string) ([]PartitionOffset, error) {
	b, err := readTargetFile(KindFile, path)
	if err != nil {
		return nil, err
	}
	f, err := decodeOffsetsFile(b, "file: "+path)
	return f.offsets, err
}

// offsetsFile is a file target's content, validated.
type offsetsFile struct {
	offsets []PartitionOffset
	// group is the group column of a CSV that has one: Config.Validate
	// checks it against the group being repositioned.
	group rowGroup
}

// rowGroup is the group a CSV's rows name, and the first line that does;
// line 0 for a file without a group column.
type rowGroup struct {
	line  int
	group string
}

// decodeOffsetsFile reads a file target's bytes in either form: the JSON
// list, or the CSV that kafka-consumer-groups.sh --reset-offsets --export
// writes and --from-file reads. The form is told by the first character:
// JSON starts with '[' (or '{', which is refused as JSON, not as a CSV), and
// no topic name starts with either. where names the file in errors.
func decodeOffsetsFile(b []byte, where string) (offsetsFile, error) {
	b = bytes.TrimPrefix(b, utf8BOM)
	var f offsetsFile
	var err error
	label := func(i int) string { return fmt.Sprintf("entry %d", i) }
	switch trimmed := bytes.TrimSpace(b); {
	case len(trimmed) == 0:
		return f, fmt.Errorf("%s: is empty; want %s, or %s", where, jsonShape, csvShape)
	case trimmed[0] == '[' || trimmed[0] == '{':
		f.offsets, err = DecodeOffsets(bytes.NewReader(b))
	default:
		var lines []int
		f.offsets, lines, f.group, err = decodeOffsetsCSV(b)
		label = func(i int) string { return fmt.Sprintf("line %d", lines[i]) }
	}
	if err != nil {
		return f, fmt.Errorf("%s: %w", where, err)
	}
	return f, validateOffsets(f.offsets, where, label)
}

// utf8BOM is what some spreadsheets put before a CSV's first byte.
var utf8BOM = []byte("\xef\xbb\xbf")

// jsonShape is the JSON form of a file target.
const jsonShape = `a JSON list of {"topic": "<name>", "partition": <N>, "offset": <N>}`

// The fields of an offsets file entry, in the order they are reported
// missing.
const (
	fieldTopic     = "topic"
	fieldPartition = "partition"
	fieldOffset    = "offset"
)

// DecodeOffsets parses an offsets file strictly. encoding/json's ordinary
// decoding is too forgiving for a file that moves offsets: a missing or null
// "offset" would silently become 0 (the start of the log), keys match
// case-insensitively, a duplicate key keeps its last value and text after the
// list is never read. Here every entry must have exactly the three fields,
// spelled exactly, each once, with a value of the right type, and nothing may
// follow the list. Errors name the entry (its index, and its partition once
// known).
func DecodeOffsets(r io.Reader) ([]PartitionOffset, error) {
	const shape = jsonShape
	dec := json.NewDecoder(r)
	dec.UseNumber()
	tok, err := dec.Token()
	switch {
	case errors.Is(err, io.EOF):
		return nil, errors.New("is empty; want " + shape)
	case err != nil:
		return nil, fmt.Errorf("is not %s: %w", shape, err)
	case tok != json.Delim('['):
		return nil, fmt.Errorf("is not %s: it starts with %s", shape, describeToken(tok))
	}
	var offs []PartitionOffset
	for i := 0; dec.More(); i++ {
		o, got, err := decodeEntry(dec)
		if err != nil {
			return nil, fmt.Errorf("entry %d%s: %w", i, entryLabel(o, got), err)
		}
		offs = append(offs, o)
	}
	if _, err := dec.Token(); err != nil { // the closing ]
		return nil, fmt.Errorf("is not %s: %w", shape, err)
	}
	if tok, err := dec.Token(); !errors.Is(err, io.EOF) {
		what := "more text"
		if err == nil {
			what = describeToken(tok)
		}
		return nil, fmt.Errorf("has %s after the list; the file must hold exactly one list", what)
	}
	return offs, nil
}

// decodeEntry reads one {"topic","partition","offset"} object. It returns the
// fields read so far even on error, so the error can name the partition.
func decodeEntry(dec *json.Decoder) (PartitionOffset, map[string]bool, error) {
	var o PartitionOffset
	got := map[string]bool{}
	tok, err := dec.Token()
	if err != nil {
		return o, got, err
	}
	if tok != json.Delim('{') {
		return o, got, fmt.Errorf("is %s, not an object", describeToken(tok))
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return o, got, err
		}
		key, _ := tok.(string) // the decoder only yields strings as object keys
		switch key {
		case fieldTopic, fieldPartition, fieldOffset:
		default:
			hint := ""
			for _, f := range []string{fieldTopic, fieldPartition, fieldOffset} {
				if strings.EqualFold(key, f) {
					hint = fmt.Sprintf(" (did you mean %q? names are case-sensitive)", f)
				}
			}
			return o, got, fmt.Errorf("unknown field %q%s; the fields are topic, partition and offset", key, hint)
		}
		if got[key] {
			return o, got, fmt.Errorf("%q is given twice", key)
		}
		val, err := dec.Token()
		if err != nil {
			return o, got, err
		}
		switch key {
		case fieldTopic:
			s, ok := val.(string)
			if !ok {
				return o, got, fmt.Errorf("topic is %s, not a string", describeToken(val))
			}
			o.Topic = s
		case fieldPartition:
			n, err := wholeNumber(val, 32)
			if err != nil {
				return o, got, fmt.Errorf("partition %w", err)
			}
			o.Partition = int32(n)
		case fieldOffset:
			n, err := wholeNumber(val, 64)
			if err != nil {
				return o, got, fmt.Errorf("offset %w", err)
			}
			o.Offset = n
		}
		got[key] = true
	}
	if _, err := dec.Token(); err != nil { // the closing }
		return o, got, err
	}
	for _, f := range []string{fieldTopic, fieldPartition, fieldOffset} {
		if !got[f] {
			return o, got, fmt.Errorf("%s is missing; every entry needs topic, partition and offset", f)
		}
	}
	return o, got, nil
}

// wholeNumber accepts a JSON integer literal that fits in bits: not 1.0, not
// 1e3, not a quoted number, not null.
func wholeNumber(tok json.Token, bits int) (int64, error) {
	num, ok := tok.(json.Number)
	if !ok {
		return 0, fmt.Errorf("is %s, not a whole number", describeToken(tok))
	}
	n, err := strconv.ParseInt(string(num), 10, bits)
	if err != nil {
		return 0, fmt.Errorf("%s is not a whole number of at most %d bits", num, bits)
	}
	return n, nil
}

// entryLabel names an entry by its partition once the entry has said which.
func entryLabel(o PartitionOffset, got map[string]bool) string {
	switch {
	case got[fieldTopic] && got[fieldPartition]:
		return fmt.Sprintf(" (%s/%d)", o.Topic, o.Partition)
	case got[fieldTopic]:
		return fmt.Sprintf(" (topic %q)", o.Topic)
	default:
		return ""
	}
}

func describeToken(tok json.Token) string {
	switch v := tok.(type) {
	case nil:
		return "null"
	case json.Delim:
		switch v {
		case '{':
			return "an object"
		case '[':
			return "a list"
		}
		return fmt.Sprintf("%q", string(v))
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	default:
		return fmt.Sprintf("%v", v)
	}
}
