package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestReadOffsetsCSV: a file: target takes the CSV of kafka-consumer-groups.sh
// --export, in both of its layouts, as Kafka writes it.
func TestReadOffsetsCSV(t *testing.T) {
	orders := []PartitionOffset{{"orders", 1, 0}, {"orders", 0, 42}}
	tests := []struct {
		name, content string
		want          []PartitionOffset
		group         rowGroup
	}{
		// Kafka 4.4's --export for one --group, byte for byte: its records,
		// then println's newline.
		{"one group, as exported", "orders,1,0\norders,0,42\n\n", orders, rowGroup{}},
		{"several groups, as exported", "billing,orders,1,0\nbilling,orders,0,42\n\n", orders, rowGroup{1, "billing"}},
		{"no final newline", "orders,1,0\norders,0,42", orders, rowGroup{}},
		{"CRLF", "orders,1,0\r\norders,0,42\r\n", orders, rowGroup{}},
		{"blank lines", "\norders,1,0\n\n\norders,0,42\n", orders, rowGroup{}},
		{"a header", "topic,partition,offset\norders,1,0\norders,0,42\n", orders, rowGroup{}},
		{"a header with the group", "group,topic,partition,offset\nbilling,orders,1,0\nbilling,orders,0,42\n", orders, rowGroup{2, "billing"}},
		{"a byte order mark", "\xef\xbb\xbforders,1,0\norders,0,42\n", orders, rowGroup{}},
		// A group with a comma or a quote is quoted, as Jackson quotes it.
		{"a quoted group", "\"a,b \"\"c\"\"\",orders,1,0\n", []PartitionOffset{{"orders", 1, 0}}, rowGroup{1, `a,b "c"`}},
		{"large numbers", "orders,2147483647,9223372036854775807\n", []PartitionOffset{{"orders", 2147483647, 9223372036854775807}}, rowGroup{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, "offsets.csv", tt.content)
			tg, err := ParseTarget("file:" + p)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(tg.Offsets, tt.want) {
				t.Errorf("offsets = %+v, want %+v", tg.Offsets, tt.want)
			}
			if tg.fileGroup != tt.group {
				t.Errorf("group = %+v, want %+v", tg.fileGroup, tt.group)
			}
			if tg.FileDigest != FileDigestOf([]byte(tt.content)) {
				t.Error("the digest is not of the file's bytes")
			}
		})
	}
}

// TestReadOffsetsCSVIsStrict: every bad row is refused, and the error names
// its line and field, as for the JSON form.
func TestReadOffsetsCSVIsStrict(t *testing.T) {
	tests := []struct {
		name, content string
		want          []string
	}{
		{"two fields", "orders,1\n", []string{"line 1 has 2 field(s)", "topic,partition,offset"}},
		{"five fields", "g,orders,1,0,7\n", []string{"line 1 has 5 field(s)"}},
		{"a short row", "orders,1,0\norders,2\n", []string{"line 2 has 2 field(s), but line 1 has 3 (topic,partition,offset)"}},
		{"a long row", "orders,1,0\n\ng,orders,2,0\n", []string{"line 3 has 4 field(s), but line 1 has 3"}},
		{"partition not a number", "orders,1,0\norders,x,0\n", []string{"line 2: partition \"x\" is not a whole number"}},
		{"offset not a number", "orders,1,zero\n", []string{"line 1: offset \"zero\" is not a whole number"}},
		{"empty offset", "orders,1,\n", []string{"line 1: offset \"\" is not a whole number"}},
		{"padded offset", "orders,1, 5\n", []string{"line 1: offset \" 5\" is not a whole number"}},
		{"signed offset", "orders,1,+5\n", []string{"line 1: offset \"+5\" is not a whole number"}},
		{"fractional offset", "orders,1,5.0\n", []string{"line 1: offset \"5.0\" is not a whole number"}},
		{"partition over int32", "orders,2147483648,0\n", []string{"line 1: partition 2147483648 is not a whole number of at most 32 bits"}},
		{"offset over int64", "orders,0,9223372036854775808\n", []string{"line 1: offset 9223372036854775808 is not a whole number of at most 64 bits"}},
		{"negative offset", "orders,0,5\norders,1,-1\n", []string{"line 2: offset -1 is negative"}},
		{"negative partition", "orders,-1,5\n", []string{"line 1: partition -1 is negative"}},
		{"bad topic", "orders,0,5\n\nor/ders,1,5\n", []string{"line 3: topic:", "may contain only"}},
		{"padded topic", " orders,0,5\n", []string{"line 1: topic:", "may contain only"}},
		{"a partition twice", "orders,0,5\norders,1,5\norders,0,7\n", []string{"line 1 and line 3 both name orders/0"}},
		{"empty group", ",orders,0,5\n", []string{"line 1: group is empty"}},
		{"padded group", "g ,orders,0,5\n", []string{"line 1: group", "spaces"}},
		{"a bare quote", "ord\"ers,0,5\n", []string{"line 1, column 4", "bare \"", "topic,partition,offset"}},
		{"an open quote", "orders,0,5\n\"orders,1,5\n", []string{"line 2", "quote"}},
		{"a header alone", "topic,partition,offset\n", []string{"lists no partitions"}},
		{"a header in another order", "partition,topic,offset\n0,orders,5\n", []string{"line 1: partition \"topic\" is not a whole number"}},
		{"a header twice", "topic,partition,offset\ntopic,partition,offset\n", []string{"line 2: partition \"partition\" is not a whole number"}},
		{"blank", " \n\n", []string{"is empty", "JSON list", "CSV"}},
		{"a semicolon", "orders;0;5\n", []string{"line 1 has 1 field(s)"}},
		// Kafka's export of several groups; the runner moves one.
		{"two groups", "billing,orders,0,5\nbilling,orders,1,5\n\nshipping,orders,0,7\n", []string{`line 4: group "shipping" is not line 1's "billing": the file may hold one group's rows`}},
		{"a group differing in case", "billing,orders,0,5\nBilling,orders,1,5\n", []string{`line 2: group "Billing" is not line 1's "billing"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, "offsets.csv", tt.content)
			tg, err := ParseTarget("file:" + p)
			if err == nil {
				t.Fatalf("accepted %q as %+v", tt.content, tg.Offsets)
			}
			if !strings.HasPrefix(err.Error(), "file: "+p+": ") {
				t.Errorf("error %q does not start with the file's name", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestOffsetsCSVOfAnotherGroup: Kafka's tool applies a file's rows of its
// --group and ignores the others; the runner refuses a file of another
// group, naming the line, because it is likelier the wrong file than a
// deliberate selection.
func TestOffsetsCSVOfAnotherGroup(t *testing.T) {
	clearEnv(t)
	tests := []struct {
		name, content string
		want          []string // empty: accepted
	}{
		{"its own rows", "billing,orders,0,5\nbilling,orders,1,5\n", nil},
		{"no group column", "orders,0,5\n", nil},
		{"another group's rows", "group,topic,partition,offset\nshipping,orders,0,5\nshipping,orders,1,5\n", []string{
			"--to file: (REPLAY_TO): file:", `line 2: group "shipping" is not the group being repositioned, "billing"`}},
		{"a group that differs in case", "Billing,orders,0,5\n", []string{`line 1: group "Billing"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, "offsets.csv", tt.content)
			c, err := load(t, "--bootstrap-servers", "k:1", "--group", "billing", "--to", "file:"+p)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if len(c.Target.Offsets) == 0 {
					t.Error("no offsets read")
				}
				return
			}
			var es Errors
			if !errors.As(err, &es) || len(es) != 1 || es[0].Flag != RefOffsetsFile {
				t.Fatalf("err = %v, want one error about the file target", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	// Through --from-file, the error names --from-file.
	p := writeFile(t, "offsets.csv", "shipping,orders,0,5\n")
	_, err := load(t, "--bootstrap-servers", "k:1", "--group", "billing", "--from-file", p)
	if err == nil || !strings.HasPrefix(err.Error(), "--from-file: file:"+p+" line 1: group") {
		t.Errorf("err = %v, want it to name --from-file and line 1", err)
	}
}

// TestExportIsOutputCSV: --export, kafka-consumer-groups.sh's name, is
// --output csv (REPLAY_OUTPUT=csv), and one output is chosen once.
func TestExportIsOutputCSV(t *testing.T) {
	clearEnv(t)
	if c := mustLoad(t, args("--export")...); c.Output != OutputCSV {
		t.Errorf("--export: output %q, want csv", c.Output)
	}
	if c := mustLoad(t, args("--output", "csv")...); c.Output != OutputCSV {
		t.Errorf("--output csv: output %q", c.Output)
	}
	if c := mustLoad(t, args("--export=false")...); c.Output != OutputTable {
		t.Errorf("--export=false: output %q, want the default table", c.Output)
	}
	t.Setenv(EnvOutput, "json")
	if c := mustLoad(t, args("--export")...); c.Output != OutputCSV {
		t.Errorf("--export over REPLAY_OUTPUT=json: output %q, want csv (a flag wins)", c.Output)
	}
	_, err := load(t, args("--output", "json", "--export")...)
	if err == nil || !strings.Contains(err.Error(), `conflicting flags: --output "json", --export`) {
		t.Errorf("--output json --export: %v, want a conflict naming both", err)
	}
	// The record frame would be a bad row in the CSV.
	_, err = load(t, args("--export", "--emit-record")...)
	if err == nil || !strings.HasPrefix(err.Error(), "--emit-record (REPLAY_EMIT_RECORD): writes its frame to stdout, which --output csv keeps") {
		t.Errorf("--export --emit-record: %v, want it refused", err)
	}
}
