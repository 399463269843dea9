package runner_test

import (
	"strings"
	"testing"

	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// TestStreamsGroupRefused: a streams group (KIP-1071) is never moved
// through the consumer-group offset APIs, live or empty, planned or
// applied, with a topic or without. librdkafka describes it as a group
// that does not exist, so before the kind check the runner planned it as a
// new consumer group: it committed to an empty streams group's topics as a
// consumer group's (exit 0), and sent a live one a commit that Kafka
// refused (exit 3). kfake has no streams groups.
func TestStreamsGroupRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	refused := func(t *testing.T, g, kind, member string) {
		t.Helper()
		before := offsetsOf(t, c, g)
		for _, args := range [][]string{
			{"--topic", topic, "--to", "earliest"},
			{"--topic", topic, "--to", "earliest", "--dry-run"},
			{"--to", "shift:-5"}, // no scope: the group's own committed topics
			{"--topic", topic, "--to", "latest", "--wait-for-empty", "1m"},
		} {
			o := run(t, c, append([]string{"--group", g}, args...)...).mustCode(t, report.ExitInvalidInput)
			if o.result.Reason != report.ReasonUnsupportedGroupKind {
				t.Errorf("%v: reason %s, want %s: %s", args, o.result.Reason, report.ReasonUnsupportedGroupKind, o.result.Error)
			}
			if want := "is a " + kind + " group"; !strings.Contains(o.result.Error, want) || !strings.Contains(o.result.Error, member) {
				t.Errorf("%v: error %q does not say %q or name the member %q", args, o.result.Error, want, member)
			}
			if len(o.result.Partitions) != 0 {
				t.Errorf("%v: a plan for a %s group: %+v", args, kind, o.result.Partitions)
			}
		}
		if got := offsetsOf(t, c, g); !equalMaps(got, before) {
			t.Errorf("offsets changed: %v → %v", before, got)
		}
	}

	t.Run("streams group", func(t *testing.T) {
		if c.Apache == nil {
			t.Skip("kfake has no streams groups")
		}
		g := "kinds-streams"
		// The application ran and committed on its input topic.
		m, err := c.JoinStreams(testCtx(t), g, g+"-app", topic)
		if err != nil {
			t.Fatal(err)
		}
		m.Leave()
		commitAll(t, c, g, topic, partitions, committed)
		m, err = c.JoinStreams(testCtx(t), g, g+"-app", topic)
		if err != nil {
			t.Fatal(err)
		}
		t.Run("live", func(t *testing.T) { refused(t, g, kafkatest.KindStreams, g+"-app") })
		m.Leave()
		t.Run("empty", func(t *testing.T) { refused(t, g, kafkatest.KindStreams, "--input-topic "+topic) })
		if got := offsetsOf(t, c, g); got[topic+"/0"] != committed || len(got) != partitions {
			t.Errorf("the streams group's offsets %v, want %d on each partition", got, committed)
		}
	})
}
