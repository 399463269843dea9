package runner_test

import (
	"strings"
	"testing"
	"time"

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

// TestGroupTypeStated: --group-type states the kind the group must be.
// Every kind of group Kafka 4.4 has (kfake: classic and share), and a
// group that does not exist, is refused under every other stated kind
// before anything is planned (exit 2, naming --group-type and both kinds,
// offsets or start offsets unchanged), live too, where the refusal comes
// before any wait; under its own kind and under Auto it is planned, and
// the result names the kind found. A streams group stated as such is
// still refused as one (UnsupportedGroupKind).
func TestGroupTypeStated(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	type kind struct {
		name string // the kind, as --group-type names it; "" for no group
		// join makes the group of this kind live; its func makes it empty.
		join func(t *testing.T, g string) (leave func())
	}
	member := func(proto string) func(t *testing.T, g string) func() {
		return func(t *testing.T, g string) func() {
			m, err := c.JoinWith(testCtx(t), kafkatest.JoinOptions{Group: g, ClientID: g + "-worker", Topics: []string{topic}, Protocol: proto})
			if err != nil {
				t.Fatal(err)
			}
			return m.Leave
		}
	}
	kinds := []kind{
		{name: "", join: nil},
		{name: "Classic", join: member(kafkatest.ProtocolClassic)},
		{name: "Share", join: func(t *testing.T, g string) func() {
			m, err := c.JoinShare(testCtx(t), g, g+"-worker", topic)
			if err != nil {
				t.Fatal(err)
			}
			return m.Leave
		}},
	}
	if c.Apache != nil {
		kinds = append(kinds,
			kind{name: "Consumer", join: member(kafkatest.ProtocolConsumer)},
			kind{name: "Streams", join: func(t *testing.T, g string) func() {
				m, err := c.JoinStreams(testCtx(t), g, g+"-worker", topic)
				if err != nil {
					t.Fatal(err)
				}
				return m.Leave
			}})
	}
	// state is the group's offsets, or a share group's start offsets.
	state := func(t *testing.T, g, kind string) map[string]int64 {
		t.Helper()
		if kind != "Share" {
			return offsetsOf(t, c, g)
		}
		s, err := c.ShareStartOffsets(testCtx(t), g)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	stated := []string{"Classic", "Consumer", "Share", "Streams"}
	for _, k := range kinds {
		g := "stated-" + strings.ToLower(k.name)
		if k.name == "" {
			g = "stated-none"
		}
		var live func()
		if k.join != nil {
			// The group is made of its kind by a member; its offsets are
			// committed while it is empty, and a member joins again.
			k.join(t, g)()
			if k.name != "Share" {
				commitAll(t, c, g, topic, partitions, committed)
			}
			live = k.join(t, g)
			if k.name == "Share" {
				// The member sets the start offsets in its own time: wait
				// until it has, so that a change seen is the runner's.
				// The bound is not a measurement.
				for deadline := time.Now().Add(time.Minute); len(state(t, g, k.name)) < partitions; {
					if time.Now().After(deadline) {
						t.Fatalf("the share member never set the start offsets: %v", state(t, g, k.name))
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		}
		refused := func(t *testing.T, s string, args ...string) {
			t.Helper()
			before := state(t, g, k.name)
			o := run(t, c, append([]string{"--group", g, "--topic", topic, "--group-type", s}, args...)...).mustCode(t, report.ExitInvalidInput)
			want := []string{"--group-type", s, "group " + g, "nothing was planned or changed"}
			if k.name != "" {
				want = append(want, "is a "+k.name+" group")
			} else {
				want = append(want, "does not exist")
			}
			for _, w := range want {
				if !strings.Contains(o.result.Error, w) {
					t.Errorf("%v: error %q does not say %q", args, o.result.Error, w)
				}
			}
			if o.result.Reason != report.ReasonInvalidInput || len(o.result.Partitions) != 0 || o.result.GroupType != k.name {
				t.Errorf("%v: reason %s, %d partitions planned, groupType %q (want %q)", args, o.result.Reason, len(o.result.Partitions), o.result.GroupType, k.name)
			}
			if after := state(t, g, k.name); !equalMaps(after, before) {
				t.Errorf("%v: %v → %v", args, before, after)
			}
		}
		for _, s := range stated {
			mismatch := s != k.name && !(k.name == "" && (s == "Classic" || s == "Consumer"))
			name := k.name
			if name == "" {
				name = "none"
			}
			t.Run(name+"/stated "+s, func(t *testing.T) {
				switch {
				case mismatch && live != nil:
					// Refused at once, not after waiting for the members.
					refused(t, s, "--to", "earliest", "--wait-for-empty", "5m")
				case mismatch:
					refused(t, s, "--to", "earliest", "--dry-run")
					refused(t, s, "--to", "earliest")
				case s == "Streams":
					o := run(t, c, "--group", g, "--topic", topic, "--group-type", s, "--to", "earliest", "--dry-run").mustCode(t, report.ExitInvalidInput)
					if o.result.Reason != report.ReasonUnsupportedGroupKind || o.result.GroupType != s {
						t.Errorf("reason %s, groupType %q: %s", o.result.Reason, o.result.GroupType, o.result.Error)
					}
				default:
					o := run(t, c, "--group", g, "--topic", topic, "--group-type", s, "--to", "earliest", "--dry-run").mustCode(t, report.ExitOK)
					if o.result.GroupType != k.name || len(o.result.Partitions) != partitions {
						t.Errorf("groupType %q, want %q; %d partitions\n%s", o.result.GroupType, k.name, len(o.result.Partitions), o.resultRaw)
					}
				}
			})
		}
		if live != nil {
			live()
		}
		if k.name == "" || k.name == "Streams" {
			continue
		}
		t.Run(k.name+"/empty: stated and Auto apply, the result names the kind", func(t *testing.T) {
			for _, s := range []string{"Auto", k.name} {
				for _, args := range [][]string{{"--dry-run"}, {}} {
					o := run(t, c, append([]string{"--group", g, "--topic", topic, "--group-type", s, "--to", "earliest"}, args...)...).mustCode(t, report.ExitOK)
					if o.result.GroupType != k.name {
						t.Errorf("--group-type %s %v: groupType %q, want %q", s, args, o.result.GroupType, k.name)
					}
				}
				for p, o := range state(t, g, k.name) {
					if o != 0 {
						t.Errorf("--group-type %s: %s at %d, want 0", s, p, o)
					}
				}
			}
		})
	}
}
