package runner

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// TestWriteCSV: --output csv (--export) writes the new offsets of what the
// run leaves the group at, in kafka-consumer-groups.sh's multi-group
// layout, and nothing for a run that did not end well.
func TestWriteCSV(t *testing.T) {
	prev := int64(9)
	plan := func() *report.Result {
		return &report.Result{Schema: report.Schema, Group: `odd,group "x"`, ExitCode: report.ExitOK, Reason: report.ReasonDryRun, DryRun: true,
			Partitions: []report.Partition{
				{Topic: "orders", Partition: 0, PreviousOffset: &prev, NewOffset: 5},
				{Topic: "orders", Partition: 1, NewOffset: 0, Note: "no previous committed offset"},
				{Topic: "orders", Partition: 2, PreviousOffset: &prev, NewOffset: 9, LeftAlone: "its consumers moved on"},
				{Topic: "payments", Partition: 10, PreviousOffset: &prev, NewOffset: 1 << 40, Applied: true},
			}}
	}
	// The group is quoted as Kafka's CSV writer quotes it; the partition an
	// undo leaves alone is not part of the plan.
	const want = "\"odd,group \"\"x\"\"\",orders,0,5\n\"odd,group \"\"x\"\"\",orders,1,0\n\"odd,group \"\"x\"\"\",payments,10,1099511627776\n"
	var b strings.Builder
	if err := writeCSV(&b, plan()); err != nil || b.String() != want {
		t.Fatalf("writeCSV = %q, %v; want %q", b.String(), err, want)
	}
	// It reads back, through the file: target, as the same offsets, for
	// the same group only.
	p := filepath.Join(t.TempDir(), "plan.csv")
	if err := os.WriteFile(p, []byte(want), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(config.EnvTerminationMessagePath, "")
	c, err := config.Load([]string{"--bootstrap-servers", "k:1", "--group", `odd,group "x"`, "--from-file", p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantOffs := []config.PartitionOffset{{Topic: "orders", Partition: 0, Offset: 5}, {Topic: "orders", Partition: 1, Offset: 0}, {Topic: "payments", Partition: 10, Offset: 1 << 40}}
	if !slices.Equal(c.Target.Offsets, wantOffs) {
		t.Errorf("read back as %+v, want %+v", c.Target.Offsets, wantOffs)
	}
	if _, err := config.Load([]string{"--bootstrap-servers", "k:1", "--group", "odd", "--from-file", p}, nil); !config.IsInvalidInput(err) || !strings.Contains(err.Error(), "line 1: group") {
		t.Errorf("another group's load: %v, want the rows refused", err)
	}

	for _, tc := range []struct {
		name string
		edit func(*report.Result)
	}{
		{"refused by a guard", func(r *report.Result) { r.ExitCode, r.Reason = report.ExitRefused, report.ReasonWouldSkipMessages }},
		{"partly applied", func(r *report.Result) {
			r.ExitCode, r.Reason, r.DryRun = report.ExitPartiallyApplied, report.ReasonPartiallyApplied, false
			r.Partitions[0].Error = "not committed"
		}},
		{"invalid input", func(r *report.Result) {
			r.ExitCode, r.Reason, r.Partitions = report.ExitInvalidInput, report.ReasonInvalidInput, []report.Partition{}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := plan()
			tc.edit(res)
			var b strings.Builder
			if err := writeCSV(&b, res); err != nil || b.Len() != 0 {
				t.Errorf("writeCSV = %q, %v; want nothing", b.String(), err)
			}
		})
	}
}

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("stdout closed") }

// A CSV that could not be written says so (emit logs it), rather than
// leaving a cut plan looking whole.
func TestWriteCSVReportsAFailedWrite(t *testing.T) {
	res := thousandPartitions()
	res.ExitCode = report.ExitOK
	if err := writeCSV(errWriter{}, res); err == nil {
		t.Error("a failed write was not reported")
	}
}
