package runner_test

import (
	"strings"
	"testing"

	"github.com/kafka-replay/kafka-replay/runner/report"
)

// TestEmitRecord: with --emit-record (REPLAY_EMIT_RECORD) stdout carries,
// after the table, exactly one intact record frame holding the whole
// result; without it, none.
func TestEmitRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	args := []string{"--group", group, "--topic", topic, "--to", "offset:5", "--run-id", "record"}
	o := run(t, c, args...).mustCode(t, report.ExitOK)
	if strings.Contains(o.stdout, report.FrameMarker) {
		t.Fatalf("a frame without --emit-record:\n%s", o.stdout)
	}
	t.Setenv("REPLAY_EMIT_RECORD", "true")
	o = run(t, c, args...).mustCode(t, report.ExitOK)
	frames, damaged, err := report.ReadFrames(strings.NewReader(o.stdout + o.stderr))
	if err != nil || damaged != 0 || len(frames) != 1 {
		t.Fatalf("%d frames, %d damaged, %v\n%s", len(frames), damaged, err, o.stdout)
	}
	f := frames[0]
	if f.RunID != o.result.RunID || f.Reason != o.result.Reason || len(f.Partitions) != partitions || f.Totals != o.result.Totals {
		t.Errorf("frame %+v does not match the result file %+v", f, o.result)
	}
	if !strings.HasPrefix(o.stdout, "GROUP "+group) {
		t.Errorf("the table no longer comes first:\n%s", o.stdout)
	}
}
