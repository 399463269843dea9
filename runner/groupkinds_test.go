package runner_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// TestStreamsGroupReset: a streams group (KIP-1071) with a live
// streams-protocol member is refused (exit 3, naming it) and planned in a
// dry run; once empty (waited for, or left) its input topics' committed
// offsets move as kafka-streams-groups.sh --reset-offsets moves them, run
// ID and undo included, a topic outside its topology is refused, and the
// result warns about the local state and the internal topics. Before the
// kind check the runner planned it as a new consumer group (librdkafka
// sees no member in it). kfake has no streams groups.
func TestStreamsGroupReset(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	if c.Apache == nil {
		t.Skip("kfake has no streams groups")
	}
	g := "streams-reset"
	join := func(t *testing.T) *kafkatest.Member {
		t.Helper()
		m, err := c.JoinStreams(testCtx(t), g, g+"-app", topic)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	// The application ran and committed on its input topic.
	join(t).Leave()
	commitAll(t, c, g, topic, partitions, committed)
	m := join(t)
	t.Run("live: refused, and planned in a dry run", func(t *testing.T) {
		o := run(t, c, "--group", g, "--topic", topic, "--to", "earliest").mustCode(t, report.ExitGroupActive)
		if !strings.Contains(o.result.Error, g+"-app") || o.result.GroupType != "Streams" {
			t.Errorf("error %q does not name the member, or groupType %q", o.result.Error, o.result.GroupType)
		}
		o = run(t, c, "--group", g, "--to", "earliest", "--dry-run").mustCode(t, report.ExitOK)
		if len(o.result.Partitions) != partitions || !hasWarning(o.result, "the group is active") || !hasWarning(o.result, "local state") {
			t.Errorf("dry run: %d partitions, warnings %q", len(o.result.Partitions), o.result.Warnings)
		}
		if got := offsetsOf(t, c, g); got[topic+"/0"] != committed {
			t.Errorf("offsets changed: %v", got)
		}
	})
	t.Run("--wait-for-empty applies once the member leaves", func(t *testing.T) {
		o := runWaiting(t, c, m.Leave, "--group", g, "--topic", topic, "--to", "earliest", "--wait-for-empty", "2m").mustCode(t, report.ExitOK)
		if got := offsetsOf(t, c, g); got[topic+"/0"] != 0 || got[topic+"/3"] != 0 {
			t.Errorf("offsets %v, want 0\n%s", got, o.resultRaw)
		}
	})
	m.Leave()
	var moved outcome
	t.Run("empty: every input topic without --topic, then undone", func(t *testing.T) {
		moved = run(t, c, "--group", g, "--to", "offset:40", "--allow-skip", "--run-id", "streams-40").mustCode(t, report.ExitOK)
		if moved.result.Totals.Applied != partitions || !hasWarning(moved.result, "local state") {
			t.Fatalf("%d applied, warnings %q", moved.result.Totals.Applied, moved.result.Warnings)
		}
		assertMatchesKafka(t, c, moved.result)
		// A retry is recognised by its run ID.
		if o := run(t, c, "--group", g, "--to", "offset:40", "--allow-skip", "--run-id", "streams-40").mustCode(t, report.ExitOK); !o.result.AlreadyApplied {
			t.Errorf("retry: %s", o.result.Reason)
		}
		o := run(t, c, "--group", g, "--to", "undo:"+saveResult(t, moved, false)).mustCode(t, report.ExitOK)
		if got := offsetsOf(t, c, g); got[topic+"/0"] != 0 || got[topic+"/3"] != 0 || o.result.Totals.Applied != partitions {
			t.Errorf("undo: offsets %v, want 0\n%s", got, o.resultRaw)
		}
	})
	// An Atomic commit (TxnOffsetCommit under the group's transactional
	// ID) on an empty streams group: the coordinator takes it as it takes
	// a plain one, its retry is recognised, and the group stays a streams
	// group (checked below).
	t.Run("empty: an Atomic commit, then retried", func(t *testing.T) {
		args := []string{"--group", g, "--topic", topic, "--to", "offset:25", "--allow-skip", "--run-id", "streams-atomic", "--commit-mode", "Atomic"}
		o := run(t, c, args...).mustCode(t, report.ExitOK)
		if o.result.CommitMode != config.CommitModeAtomic || o.result.Totals.Applied != partitions || o.result.GroupType != "Streams" {
			t.Fatalf("mode %q, %d applied, groupType %q\n%s", o.result.CommitMode, o.result.Totals.Applied, o.result.GroupType, o.resultRaw)
		}
		assertMatchesKafka(t, c, o.result)
		if got := offsetsOf(t, c, g); got[topic+"/0"] != 25 || got[topic+"/3"] != 25 {
			t.Errorf("offsets %v, want 25", got)
		}
		if again := run(t, c, args...).mustCode(t, report.ExitOK); !again.result.AlreadyApplied {
			t.Errorf("retry: %s", again.result.Reason)
		}
	})
	t.Run("empty: a topic outside the topology is refused", func(t *testing.T) {
		other := "not-an-input"
		if err := c.CreateTopic(testCtx(t), other, 1); err != nil {
			t.Fatal(err)
		}
		before := offsetsOf(t, c, g)
		o := run(t, c, "--group", g, "--topic", other, "--to", "earliest").mustCode(t, report.ExitInvalidInput)
		for _, want := range []string{"--topic", other, "not an input topic", "reads " + topic} {
			if !strings.Contains(o.result.Error, want) {
				t.Errorf("error %q does not say %q", o.result.Error, want)
			}
		}
		if got := offsetsOf(t, c, g); !equalMaps(got, before) {
			t.Errorf("offsets changed: %v → %v", before, got)
		}
	})
	if kind, err := c.Kind(testCtx(t), g); err != nil || kind != kafkatest.KindStreams {
		t.Errorf("the group is now %q (%v), want still a streams group", kind, err)
	}
}

// TestStreamsGroupAgreesWithKafkasTool asks kafka-streams-groups.sh
// --reset-offsets --dry-run (Kafka 4.4's StreamsGroupCommand) and the
// runner's dry run the same questions about one empty streams group, by
// --input-topic and --all-input-topics (the runner: --topic, and no
// topic), and wants the same new offset on every partition.
func TestStreamsGroupAgreesWithKafkasTool(t *testing.T) {
	libs := os.Getenv(kafkatest.ApacheEnv)
	if testing.Short() || libs == "" {
		t.Skip("needs Apache Kafka's tools (" + kafkatest.ApacheEnv + ")")
	}
	c := seeded(t)
	g := "streams-oracle"
	m, err := c.JoinStreams(testCtx(t), g, g+"-app", topic)
	if err != nil {
		t.Fatal(err)
	}
	m.Leave()
	commitAll(t, c, g, topic, partitions, committed)
	for _, tc := range []struct {
		runner, tool []string
	}{
		{[]string{"--to", "earliest"}, []string{"--to-earliest"}},
		{[]string{"--to", "latest"}, []string{"--to-latest"}},
		{[]string{"--to", "time:2026-03-01T09:00:50Z"}, []string{"--to-datetime", "2026-03-01T09:00:50.000"}},
		{[]string{"--to", "time:2027-01-01T00:00:00Z"}, []string{"--to-datetime", "2027-01-01T00:00:00.000"}},
		{[]string{"--to", "offset:42"}, []string{"--to-offset", "42"}},
		{[]string{"--to", "shift:-30"}, []string{"--shift-by", "-30"}},
	} {
		for _, scope := range [][2][]string{
			{{"--topic", topic}, {"--input-topic", topic}},
			{nil, {"--all-input-topics"}},
		} {
			t.Run(strings.Join(append(scope[1], tc.tool...), " "), func(t *testing.T) {
				args := append([]string{"--bootstrap-server", c.Bootstrap(), "--group", g, "--reset-offsets", "--dry-run"}, scope[1]...)
				code, out := groupTool(t, libs, streamsGroupCommand, append(args, tc.tool...)...)
				if code != 0 {
					t.Fatalf("Kafka's tool: exit %d\n%s", code, out)
				}
				want := toolPlan(t, out, g)
				o := run(t, c, append(append([]string{"--group", g, "--dry-run", "--allow-skip"}, scope[0]...), tc.runner...)...).mustCode(t, report.ExitOK)
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
}

// TestGroupTypeStated: --group-type states the kind the group must be.
// Every kind of group Kafka 4.4 has (kfake: classic and share), and a
// group that does not exist, is refused under every other stated kind
// before anything is planned (exit 2, UnsupportedGroupKind, naming
// --group-type and both kinds, offsets or start offsets unchanged), live
// too, where the refusal comes before any wait; under its own kind and
// under Auto it is planned and applied, and the result names the kind
// found.
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
		return startOffsetsOf(t, c, g)
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
			if o.result.Reason != report.ReasonUnsupportedGroupKind || len(o.result.Partitions) != 0 || o.result.GroupType != k.name {
				t.Errorf("%v: reason %s, %d partitions planned, groupType %q (want %q)", args, o.result.Reason, len(o.result.Partitions), o.result.GroupType, k.name)
			}
			if after := state(t, g, k.name); !equalMaps(after, before) {
				t.Errorf("%v: %v → %v", args, before, after)
			}
		}
		for _, s := range stated {
			made := s == "Classic" || s == "Consumer" // a reset makes a group of these kinds
			mismatch := s != k.name && (k.name != "" || !made)
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
		if k.name == "" {
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

// TestStreamsGroupDeletesInternalTopics: --delete-all-internal-topics on
// two streams groups with the same topology, one reset by Kafka 4.4's
// kafka-streams-groups.sh --reset-offsets --execute
// --delete-all-internal-topics, the other by the runner: the same offsets,
// and the same topics gone and kept (the topology's changelogs and
// repartition topic go; the input topic, and a topic named like an
// internal one that the topology does not name, stay). The runner's dry
// run lists the topics and deletes none; its retry deletes nothing; on a
// consumer group the setting is refused, naming it.
func TestStreamsGroupDeletesInternalTopics(t *testing.T) {
	libs := os.Getenv(kafkatest.ApacheEnv)
	if testing.Short() || libs == "" {
		t.Skip("needs Apache Kafka's tools (" + kafkatest.ApacheEnv + ")")
	}
	c := seeded(t)
	ctx := testCtx(t)
	internal, decoy := streamsInternal, streamsDecoy
	setup := func(t *testing.T, g string) { setupStreamsApp(t, c, g) }
	left := func(t *testing.T, g string) []string { return internalLeft(t, c, g) }
	tool, runner := "streams-del-tool", "streams-del-runner"
	setup(t, tool)
	setup(t, runner)

	code, out := groupTool(t, libs, streamsGroupCommand, "--bootstrap-server", c.Bootstrap(), "--group", tool, "--reset-offsets", "--to-earliest", "--all-input-topics", "--execute", "--delete-all-internal-topics")
	if code != 0 {
		t.Fatalf("Kafka's tool: exit %d\n%s", code, out)
	}

	args := []string{"--group", runner, "--to", "earliest", "--delete-all-internal-topics", "--run-id", "delete-internal"}
	dry := run(t, c, append(args, "--dry-run")...).mustCode(t, report.ExitOK)
	var planned []string
	for _, s := range internal {
		planned = append(planned, runner+s)
	}
	if it := dry.result.InternalTopics; it == nil || !slices.Equal(it.Planned, planned) || len(it.Deleted) != 0 {
		t.Fatalf("dry run: internal topics %+v, want %q planned and none deleted", dry.result.InternalTopics, planned)
	}
	if got := left(t, runner); len(got) != len(internal)+1 {
		t.Fatalf("the dry run deleted topics: %q left", got)
	}

	o := run(t, c, args...).mustCode(t, report.ExitOK)
	if it := o.result.InternalTopics; it == nil || !slices.Equal(it.Deleted, planned) {
		t.Fatalf("internal topics %+v, want %q deleted\n%s", o.result.InternalTopics, planned, o.resultRaw)
	}
	assertMatchesKafka(t, c, o.result)
	// The topics go as Kafka's tool has them go; deletion takes a moment
	// to show in the metadata.
	for {
		byTool, byRunner := left(t, tool), left(t, runner)
		if slices.Equal(byTool, byRunner) && slices.Equal(byRunner, []string{decoy}) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("left after Kafka's tool %q, after the runner %q; want only %q", byTool, byRunner, decoy)
		case <-time.After(200 * time.Millisecond):
		}
	}
	toolOffsets, runnerOffsets := offsetsOf(t, c, tool), offsetsOf(t, c, runner)
	if !equalMaps(toolOffsets, runnerOffsets) {
		t.Errorf("offsets: Kafka's tool %v, the runner %v", toolOffsets, runnerOffsets)
	}

	// A retry moves nothing and deletes nothing: the application may have
	// run and built its topics again since.
	again := run(t, c, args...).mustCode(t, report.ExitOK)
	if !again.result.AlreadyApplied || again.result.InternalTopics == nil || len(again.result.InternalTopics.Deleted) != 0 || !hasWarning(again.result, "not done by a retry") {
		t.Errorf("retry: already applied %v, internal topics %+v, warnings %q", again.result.AlreadyApplied, again.result.InternalTopics, again.result.Warnings)
	}

	// A consumer group has no topology to name its internal topics.
	o = run(t, c, "--group", group, "--topic", topic, "--to", "earliest", "--delete-all-internal-topics").mustCode(t, report.ExitInvalidInput)
	if !strings.Contains(o.result.Error, "--delete-all-internal-topics") || !strings.Contains(o.result.Error, "not a streams group") {
		t.Errorf("on a consumer group: %q", o.result.Error)
	}
}

// The internal topics (after the group's name) of the topology
// setupStreamsApp describes, and a topic named like one that it does not
// name.
var (
	streamsInternal = []string{"-agg-changelog", "-rekey-repartition", "-store-changelog"}
	streamsDecoy    = "-other-changelog"
)

// setupStreamsApp makes streams group g as a Kafka Streams application
// that re-keys the input topic into a repartition topic and aggregates it
// describes it, creates its internal topics and the decoy, and commits on
// the input topic once the member has left.
func setupStreamsApp(t *testing.T, c *kafkatest.Cluster, g string) {
	t.Helper()
	ctx := testCtx(t)
	for _, s := range append(slices.Clone(streamsInternal), streamsDecoy) {
		if err := c.CreateTopic(ctx, g+s, partitions); err != nil {
			t.Fatal(err)
		}
	}
	// The repartition topic is a repartition source, not a source topic,
	// of the subtopology that reads it. A changelog's partition count is
	// the broker's to derive.
	changelog := func(topic string) kmsg.TopicInfo { return kmsg.TopicInfo{Topic: topic} }
	repartition := func(topic string) kmsg.TopicInfo { return kmsg.TopicInfo{Topic: topic, NumPartitions: partitions} }
	m, err := c.JoinStreamsTopology(ctx, g, g+"-app", []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{
		{SubtopologyID: "0", SourceTopics: []string{topic}, RepartitionSinkTopics: []string{g + "-rekey-repartition"}, StateChangelogTopics: []kmsg.TopicInfo{changelog(g + "-store-changelog")}},
		{SubtopologyID: "1", RepartitionSourceTopics: []kmsg.TopicInfo{repartition(g + "-rekey-repartition")}, StateChangelogTopics: []kmsg.TopicInfo{changelog(g + "-agg-changelog")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	m.Leave()
	commitAll(t, c, g, topic, partitions, committed)
}

// internalLeft are the internal topics and the decoy of g's topology that
// exist, by their suffixes.
func internalLeft(t *testing.T, c *kafkatest.Cluster, g string) []string {
	t.Helper()
	all, err := c.Topics(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range append(slices.Clone(streamsInternal), streamsDecoy) {
		if all[g+s] {
			out = append(out, s)
		}
	}
	return out
}

// TestStreamsGroupPlanDeletesInternalTopics: a dry run with
// --delete-all-internal-topics lists the topics in its plan, whose digest
// binds them (it differs from the digest of the same plan without them),
// and that plan applied with plan: deletes exactly those, as Kafka's tool
// deletes them for a group of the same topology. The plan is refused
// without the flag and the flag without such a plan; a plan whose list
// was edited (the input topic added) is refused with nothing deleted; and
// a plan made before the application was deployed again with another
// topology (one more changelog) is PlanStale, with nothing committed or
// deleted.
func TestStreamsGroupPlanDeletesInternalTopics(t *testing.T) {
	libs := os.Getenv(kafkatest.ApacheEnv)
	if testing.Short() || libs == "" {
		t.Skip("needs Apache Kafka's tools (" + kafkatest.ApacheEnv + ")")
	}
	c := seeded(t)
	ctx := testCtx(t)
	tool, g := "streams-plan-tool", "streams-plan-runner"
	setupStreamsApp(t, c, tool)
	setupStreamsApp(t, c, g)
	var planned []string
	for _, s := range streamsInternal {
		planned = append(planned, g+s)
	}

	base := []string{"--group", g, "--to", "earliest", "--dry-run"}
	keeping := run(t, c, base...).mustCode(t, report.ExitOK)
	deleting := run(t, c, append(base, "--delete-all-internal-topics")...).mustCode(t, report.ExitOK)
	if it := deleting.result.InternalTopics; it == nil || !slices.Equal(it.Planned, planned) {
		t.Fatalf("the plan's internal topics %+v, want %q", deleting.result.InternalTopics, planned)
	}
	if deleting.result.Plan == keeping.result.Plan || deleting.result.Plan != deleting.result.Digest() {
		t.Fatalf("digests: keeping %s, deleting %s (recomputed %s): the deletion is not bound", keeping.result.Plan, deleting.result.Plan, deleting.result.Digest())
	}
	if !hasWarning(deleting.result, "cannot recreate deleted topics") {
		t.Errorf("the plan does not say an undo cannot bring the topics back: %q", deleting.result.Warnings)
	}
	plan, keepPlan := saveResult(t, deleting, true), saveResult(t, keeping, false)

	for name, args := range map[string][]string{
		"the plan without the flag":       {"--group", g, "--to", "plan:" + plan},
		"the flag with a plan without it": {"--group", g, "--to", "plan:" + keepPlan, "--delete-all-internal-topics"},
	} {
		o := run(t, c, args...).mustCode(t, report.ExitInvalidInput)
		if !strings.Contains(o.result.Error, "--delete-all-internal-topics") {
			t.Errorf("%s: %q does not name the flag", name, o.result.Error)
		}
	}
	// An edited list: the input topic added, the digest kept.
	var edited report.Result
	if err := json.Unmarshal([]byte(deleting.resultRaw), &edited); err != nil {
		t.Fatal(err)
	}
	edited.InternalTopics.Planned = append(edited.InternalTopics.Planned, topic)
	b, err := json.Marshal(&edited)
	if err != nil {
		t.Fatal(err)
	}
	o := run(t, c, "--group", g, "--to", "plan:"+writeTemp(t, b), "--delete-all-internal-topics").mustCode(t, report.ExitInvalidInput)
	if !strings.Contains(o.result.Error, "do not match its plan digest") {
		t.Errorf("an edited list: %q", o.result.Error)
	}
	if all, err := c.Topics(ctx); err != nil || !all[topic] || len(internalLeft(t, c, g)) != len(streamsInternal)+1 {
		t.Fatalf("refused runs deleted topics: %v, %q left", err, internalLeft(t, c, g))
	}

	code, out := groupTool(t, libs, streamsGroupCommand, "--bootstrap-server", c.Bootstrap(), "--group", tool, "--reset-offsets", "--to-earliest", "--all-input-topics", "--execute", "--delete-all-internal-topics")
	if code != 0 {
		t.Fatalf("Kafka's tool: exit %d\n%s", code, out)
	}
	applied := run(t, c, "--group", g, "--to", "plan:"+plan, "--delete-all-internal-topics", "--run-id", "apply-deleting").mustCode(t, report.ExitOK)
	if it := applied.result.InternalTopics; it == nil || !slices.Equal(it.Planned, planned) || !slices.Equal(it.Deleted, planned) || applied.result.Plan != deleting.result.Plan {
		t.Fatalf("applied: internal topics %+v, plan %s; want %q deleted under plan %s", applied.result.InternalTopics, applied.result.Plan, planned, deleting.result.Plan)
	}
	assertMatchesKafka(t, c, applied.result)
	for {
		byTool, byRunner := internalLeft(t, c, tool), internalLeft(t, c, g)
		if slices.Equal(byTool, byRunner) && slices.Equal(byRunner, []string{streamsDecoy}) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("left after Kafka's tool %q, after the plan %q; want only %q", byTool, byRunner, streamsDecoy)
		case <-time.After(200 * time.Millisecond):
		}
	}
	if a, b := offsetsOf(t, c, tool), offsetsOf(t, c, g); !equalMaps(a, b) {
		t.Errorf("offsets: Kafka's tool %v, the plan %v", a, b)
	}

	// Stale: planned, then the application is deployed again with another
	// topology (one more changelog). Kafka 4.4 refuses a topology update
	// of an existing streams group ("Topology updates are not supported
	// yet"), so the group is deleted and made again under the same name,
	// with the same committed offsets: only the internal topics differ.
	stale := "streams-plan-stale"
	setupStreamsApp(t, c, stale)
	dry := run(t, c, "--group", stale, "--to", "earliest", "--dry-run", "--delete-all-internal-topics").mustCode(t, report.ExitOK)
	before := offsetsOf(t, c, stale)
	if err := c.DeleteGroup(ctx, stale); err != nil {
		t.Fatal(err)
	}
	m, err := c.JoinStreamsTopology(ctx, stale, stale+"-app", []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{
		{SubtopologyID: "0", SourceTopics: []string{topic}, RepartitionSinkTopics: []string{stale + "-rekey-repartition"}, StateChangelogTopics: []kmsg.TopicInfo{{Topic: stale + "-store-changelog"}}},
		{SubtopologyID: "1", RepartitionSourceTopics: []kmsg.TopicInfo{{Topic: stale + "-rekey-repartition", NumPartitions: partitions}}, StateChangelogTopics: []kmsg.TopicInfo{{Topic: stale + "-agg-changelog"}}},
		{SubtopologyID: "2", SourceTopics: []string{topic}, StateChangelogTopics: []kmsg.TopicInfo{{Topic: stale + "-count-changelog"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	m.Leave()
	commitAll(t, c, stale, topic, partitions, committed)
	o = run(t, c, "--group", stale, "--to", "plan:"+saveResult(t, dry, false), "--delete-all-internal-topics").mustCode(t, report.ExitRefused)
	if o.result.Reason != report.ReasonPlanStale || !strings.Contains(o.result.Error, stale+"-count-changelog") || !strings.Contains(o.result.Error, "nothing was committed or deleted") {
		t.Errorf("a plan of the old topology: %s %q, want PlanStale naming the new changelog", o.result.Reason, o.result.Error)
	}
	if got := offsetsOf(t, c, stale); !equalMaps(got, before) {
		t.Errorf("a stale plan moved offsets: %v, were %v", got, before)
	}
	if got := internalLeft(t, c, stale); len(got) != len(streamsInternal)+1 {
		t.Errorf("a stale plan deleted topics: %q left", got)
	}
}

func writeTemp(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
