package runner_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// TestShareGroupAgreesWithKafkasTool asks kafka-share-groups.sh
// --reset-offsets --dry-run (Kafka 4.4's ShareGroupCommand) and the
// runner's dry run the same questions about one empty share group, and
// wants the same new start offset on every partition. Apache Kafka only.
func TestShareGroupAgreesWithKafkasTool(t *testing.T) {
	libs := os.Getenv(kafkatest.ApacheEnv)
	if testing.Short() || libs == "" {
		t.Skip("needs Apache Kafka's tools (" + kafkatest.ApacheEnv + ")")
	}
	c := seeded(t)
	g := "share-oracle"
	m, err := c.JoinShare(testCtx(t), g, g+"-worker", topic)
	if err != nil {
		t.Fatal(err)
	}
	m.Leave()
	run(t, c, "--group", g, "--topic", topic, "--to", "offset:10", "--allow-skip").mustCode(t, report.ExitOK)
	for _, tc := range []struct {
		runner, tool []string
	}{
		{[]string{"--to", "earliest"}, []string{"--to-earliest"}},
		{[]string{"--to", "latest"}, []string{"--to-latest"}},
		{[]string{"--to", "time:2026-03-01T09:00:50Z"}, []string{"--to-datetime", "2026-03-01T09:00:50.000"}},
		{[]string{"--to", "time:2026-03-01T09:00:50.5Z"}, []string{"--to-datetime", "2026-03-01T09:00:50.500"}},
		{[]string{"--to", "time:2027-01-01T00:00:00Z"}, []string{"--to-datetime", "2027-01-01T00:00:00.000"}},
		{[]string{"--to", "offset:42"}, []string{"--to-offset", "42"}},
	} {
		t.Run(strings.Join(tc.tool, " "), func(t *testing.T) {
			code, out := groupTool(t, libs, shareGroupCommand, append([]string{"--bootstrap-server", c.Bootstrap(), "--group", g, "--topic", topic, "--reset-offsets", "--dry-run"}, tc.tool...)...)
			if code != 0 && strings.Contains(out, "is not a recognized option") {
				t.Skipf("Kafka's tool does not take %s (KIP-1323):\n%s", tc.tool[0], out)
			}
			if code != 0 {
				t.Fatalf("Kafka's tool: exit %d\n%s", code, out)
			}
			want := toolPlan(t, out, g)
			o := run(t, c, append([]string{"--group", g, "--topic", topic, "--dry-run", "--allow-skip"}, tc.runner...)...).mustCode(t, report.ExitOK)
			got := map[string]int64{}
			for _, p := range o.result.Partitions {
				got[fmt.Sprintf("%s/%d", p.Topic, p.Partition)] = p.NewOffset
			}
			if !equalMaps(got, want) {
				t.Errorf("the runner plans %v, Kafka's tool %v\n%s", got, want, out)
			}
		})
	}
}

// The main classes of kafka-share-groups.sh and kafka-streams-groups.sh.
const (
	shareGroupCommand   = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"
	streamsGroupCommand = "org.apache.kafka.tools.streams.StreamsGroupCommand"
)

// groupTool runs one of Kafka's group tools (a JVM per question: the tests
// ask a handful) in UTC, as the times they ask about are written.
func groupTool(t *testing.T, libs, class string, args ...string) (int, string) {
	t.Helper()
	java := "java"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java = filepath.Join(home, "bin", "java")
	}
	cmd := exec.Command(java, append([]string{"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Duser.timezone=UTC",
		"-cp", filepath.Join(libs, "*"), class}, args...)...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatalf("run Kafka's tool: %v", err)
	}
	return 0, string(out)
}

// toolPlan reads the tool's table: a row per partition, GROUP TOPIC
// PARTITION NEW-OFFSET.
func toolPlan(t *testing.T, out, group string) map[string]int64 {
	t.Helper()
	plan := map[string]int64{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[0] != group {
			continue
		}
		p, err1 := strconv.Atoi(f[2])
		o, err2 := strconv.ParseInt(f[len(f)-1], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("Kafka's tool: unexpected row %q", line)
		}
		plan[fmt.Sprintf("%s/%d", f[1], p)] = o
	}
	if len(plan) == 0 {
		t.Fatalf("Kafka's tool planned nothing:\n%s", out)
	}
	return plan
}
