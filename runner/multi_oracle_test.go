package runner_test

import (
	"bytes"
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/runner"
	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// TestOracleManyGroups: over several groups, the runner plans and applies
// what Kafka 4.4's kafka-consumer-groups.sh --reset-offsets plans for the
// same --group list, or --all-groups, group by group.
func TestOracleManyGroups(t *testing.T) {
	libs := os.Getenv(kafkatest.ApacheEnv)
	if testing.Short() || libs == "" {
		t.Skip("needs Apache Kafka's jars and a broker: KAFKA_REPLAY_TEST_APACHE (make test-runner sets it)")
	}
	c := kafkatest.New(t, 1)
	w := &oracleWorld{cluster: c, bootstrap: c.Bootstrap(), dir: t.TempDir(), t0: time.Now().Add(-time.Hour).Truncate(time.Second)}
	w.tool = startConsumerGroupTool(t, libs)
	ctx := testCtx(t)
	const mg = "many"
	if err := c.Seed(ctx, mg, 3, 10, w.t0, time.Second); err != nil {
		t.Fatal(err)
	}
	// Three groups at different places, one on two partitions only.
	groups := map[string]kafkatest.Offsets{
		"mg-a": {mg: {0: 8, 1: 8, 2: 8}},
		"mg-b": {mg: {0: 2, 1: 9, 2: 5}},
		"mg-c": {mg: {0: 10, 1: 7}},
	}
	for g, offs := range groups {
		if err := c.Commit(ctx, g, offs, "consumer"); err != nil {
			t.Fatal(err)
		}
	}
	names := []string{"mg-a", "mg-b", "mg-c"}
	at := w.t0.Add(4500 * time.Millisecond).UTC().Format("2006-01-02T15:04:05.000Z07:00")

	for _, tc := range []struct {
		name          string
		select_       []string // both tools' flags that choose the groups
		scope, target []string
	}{
		{"three groups to-datetime", []string{"--group", "mg-a", "--group", "mg-b", "--group", "mg-c"}, []string{"--topic", mg}, []string{"--to-datetime", at}},
		{"three groups to-earliest", []string{"--group", "mg-c", "--group", "mg-a", "--group", "mg-b"}, []string{"--topic", mg}, []string{"--to-earliest"}},
		{"all groups shift-by", []string{"--all-groups"}, scopeAll, []string{"--shift-by", "-2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kafka, out, ok := w.kafkaPlans(t, oracleCase{groups: names, selectGroups: tc.select_, scope: tc.scope, target: tc.target})
			if !ok {
				t.Fatalf("Kafka's tool: %s", out)
			}
			args := append([]string{"--bootstrap-servers", w.bootstrap, "--dry-run", "--allow-skip", "--output", "json", "--timeout", "30s"}, tc.select_...)
			if !slices.Equal(tc.scope, scopeAll) {
				args = append(args, tc.scope...)
			}
			args = append(args, tc.target...)
			var stdout, stderr bytes.Buffer
			code := runner.Main(context.Background(), args, &stdout, &stderr)
			res, err := report.DecodeMulti(stdout.Bytes())
			if err != nil || code != 0 {
				t.Fatalf("runner %q: exit %d (%v)\n%s\n%s", args, code, err, stdout.String(), stderr.String())
			}
			if got := slices.Sorted(slices.Values(res.Selected)); !slices.Equal(got, names) {
				t.Fatalf("runner selected %q, want %q", res.Selected, names)
			}
			for _, g := range res.Groups {
				p := plan{}
				for _, part := range g.Partitions {
					p[tp{part.Topic, part.Partition}] = part.NewOffset
				}
				if d := planDiff(kafka[g.Group], p); d != "" {
					t.Errorf("group %s: %s", g.Group, d)
				}
			}
		})
	}

	// Applied: each group committed where Kafka's tool plans it.
	kafka, out, ok := w.kafkaPlans(t, oracleCase{groups: names, scope: []string{"--topic", mg}, target: []string{"--to-offset", "3"}})
	if !ok {
		t.Fatalf("Kafka's tool: %s", out)
	}
	o := runGroups(t, c, "--group", "mg-a", "--group", "mg-b", "--group", "mg-c", "--topic", mg, "--to", "offset:3", "--run-id", "oracle-many", "--allow-skip")
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.result.Error)
	}
	for _, g := range names {
		got := plan{}
		for topic, ps := range committedOf(t, c, g) {
			for p, co := range ps {
				got[tp{topic, p}] = co.Offset
			}
		}
		if d := planDiff(kafka[g], got); d != "" {
			t.Errorf("group %s committed: %s", g, d)
		}
	}
}
