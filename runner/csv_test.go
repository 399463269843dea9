package runner_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/report"
)

// TestExportedPlanAppliesAsAFileTarget: a dry run's --export CSV, given
// back through --from-file, applies exactly the planned offsets; and the
// same CSV is refused for another group.
func TestExportedPlanAppliesAsAFileTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: needs the embedded Kafka cluster")
	}
	c := seeded(t)
	plan := run(t, c, "--group", group, "--topic", topic+":0,2", "--to-datetime", base.Add(30*time.Second).Format(time.RFC3339), "--dry-run", "--export").mustCode(t, report.ExitOK)
	const want = "billing,orders,0,30\nbilling,orders,2,30\n"
	if plan.stdout != want {
		t.Fatalf("--export wrote %q, want %q", plan.stdout, want)
	}
	if plan.result.Partitions[0].NewOffset != 30 {
		t.Fatalf("the result file is not the plan beside the CSV: %+v", plan.result.Partitions)
	}
	p := filepath.Join(t.TempDir(), "plan.csv")
	if err := os.WriteFile(p, []byte(plan.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	o := run(t, c, "--group", "other", "--from-file", p, "--export").mustCode(t, report.ExitInvalidInput)
	if o.stdout != "" {
		t.Errorf("a failed run wrote CSV: %q", o.stdout)
	}
	applied := run(t, c, "--group", group, "--from-file", p, "--output", "csv").mustCode(t, report.ExitOK)
	if applied.stdout != want {
		t.Errorf("the applied run's CSV is %q, want the plan's %q", applied.stdout, want)
	}
	assertMatchesKafka(t, c, applied.result)
	if got := offsetsOf(t, c, group); got["orders/0"] != 30 || got["orders/1"] != committed || got["orders/2"] != 30 {
		t.Errorf("committed %v, want 30 on partitions 0 and 2 and the rest left at %d", got, committed)
	}
}
