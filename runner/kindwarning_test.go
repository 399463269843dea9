package runner_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kafka-replay/kafka-replay/runner/report"
)

// TestKindUncheckedWarnedOnce: a connection property the group-kind
// check cannot reproduce leaves the kind unchecked; the result warns of it
// once and the log says it once (it was logged where it arose and again
// with the plan's warnings).
func TestKindUncheckedWarnedOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	// Harmless to librdkafka on a plaintext connection; a TLS setting
	// the check does not translate.
	props := map[string]string{"ssl.sigalgs.list": "RSA-PSS+SHA256"}
	o := runProcess(t, c, props, "--group", group, "--topic", topic, "--to", "earliest", "--dry-run")
	if o.code != int(report.ExitOK) {
		t.Fatalf("exit %d\n%s", o.code, o.all())
	}
	const w = "the group's kind was not checked"
	var res report.Result
	if err := json.Unmarshal([]byte(o.result), &res); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, x := range res.Warnings {
		if strings.Contains(x, w) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the result warns %d time(s) that the kind was not checked, want 1: %q", n, res.Warnings)
	}
	if logged := strings.Count(o.stderr, w); logged != 1 {
		t.Errorf("logged %d time(s), want 1:\n%s", logged, o.stderr)
	}
}
