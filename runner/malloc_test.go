//go:build !musl

package runner_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/kafka-replay/kafka-replay/runner"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// TestOneMallocArena: after a run, whose librdkafka threads all malloc'd,
// the process has one glibc malloc arena (or at most MALLOC_ARENA_MAX when
// that is set). A cap set too late (it was a Go init once) leaves the
// arenas threads had already made: malloc_info counted 5 at 10,000
// partitions, about 4 MiB of peak RSS.
func TestOneMallocArena(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	run(t, seeded(t), "--group", group, "--topic", topic, "--to", "earliest", "--dry-run").mustCode(t, report.ExitOK)
	want := 1
	if v, set := os.LookupEnv("MALLOC_ARENA_MAX"); set {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("MALLOC_ARENA_MAX=%q", v)
		}
		want = n
	}
	n := runner.MallocArenas()
	if n < 1 || n > want {
		t.Errorf("%d malloc arenas after a run, want 1 to %d", n, want)
	}
}
