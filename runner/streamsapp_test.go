package runner_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// A real Kafka Streams application (test/kafka/streamsapp, kafka-streams
// 4.4 from Maven, compiled with javac by `make kafka-streams-app`) counts
// the seeded topic's records by value: map, groupByKey through the
// repartition topic <app>-rekey-repartition, count into the store
// "counts" (<app>-counts-changelog), to an output topic.

const streamsAppOutput = "counts"

// streamsApp skips the test unless Apache Kafka's tools and the
// application are there, and gives the application's directory and the
// tools' classpath.
func streamsApp(t *testing.T) (dir, libs string) {
	t.Helper()
	libs, dir = os.Getenv(kafkatest.ApacheEnv), os.Getenv(kafkatest.StreamsAppEnv)
	if testing.Short() || libs == "" || dir == "" {
		t.Skip("needs Apache Kafka (" + kafkatest.ApacheEnv + ") and the Kafka Streams application (" + kafkatest.StreamsAppEnv + ", make kafka-streams-app)")
	}
	return dir, libs
}

// startApp starts application id on protocol and waits until it has
// processed every seeded record (its committed offsets on the input topic
// are at the log end); the test kills it if it is still running at the end.
func startApp(t *testing.T, ctx context.Context, c *kafkatest.Cluster, dir, id, protocol string) *kafkatest.StreamsApp {
	t.Helper()
	app, err := c.StartStreamsApp(kafkatest.StreamsAppOptions{Dir: dir, ApplicationID: id, Input: topic, Output: streamsAppOutput, Protocol: protocol, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(app.Kill)
	if err := app.WaitRunning(ctx); err != nil {
		t.Fatal(err)
	}
	waitCommitted(t, ctx, c, id, records, app)
	return app
}

// waitCommitted waits until group g has committed offset n on every
// partition of the input topic, and has caught up with its repartition
// topic (committed at the log end of each partition that has records):
// then the application has nothing left to process, and its committed
// offsets hold still while it runs.
func waitCommitted(t *testing.T, ctx context.Context, c *kafkatest.Cluster, g string, n int64, app *kafkatest.StreamsApp) {
	t.Helper()
	repartition := g + "-rekey-repartition"
	for {
		got := offsetsOf(t, c, g)
		done := true
		for p := range partitions {
			done = done && got[fmt.Sprintf("%s/%d", topic, p)] == n
		}
		var ends map[int32]int64
		if done {
			var err error
			if ends, err = c.LogEnds(ctx, repartition); err != nil {
				t.Fatal(err)
			}
			for p, end := range ends {
				done = done && (end == 0 || got[fmt.Sprintf("%s/%d", repartition, p)] == end)
			}
		}
		if done {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("group %s committed %v, want %d on every partition of %s and the log ends %v of %s\n%s", g, got, n, topic, ends, repartition, app.Output())
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// ownTopics are the topics named <g>-..., by their suffix, sorted.
func ownTopics(t *testing.T, ctx context.Context, c *kafkatest.Cluster, g string) []string {
	t.Helper()
	all, err := c.Topics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for name := range all {
		if s, ok := strings.CutPrefix(name, g+"-"); ok {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// byApp keys a group's offsets by topic without the application's
// prefix, so that two applications of the same topology compare.
func byApp(offs map[string]int64, g string) map[string]int64 {
	out := map[string]int64{}
	for k, v := range offs {
		out[strings.TrimPrefix(k, g+"-")] = v
	}
	return out
}

// TestKafkaStreamsApplication: two instances (application IDs) of a real
// Kafka Streams application on the streams protocol. While one runs, the
// runner refuses to reset its group (exit 3, GroupActive, the kind
// Streams) and its dry run plans and warns. Once both have stopped
// (closed, leaving their groups), the runner's dry run plans what
// kafka-streams-groups.sh --reset-offsets --all-input-topics --dry-run
// plans (the input topic: the repartition topic's offsets are left, with
// a warning), and named with --topic the repartition topic is planned as
// --input-topic plans it; then one group is
// reset by Kafka's tool with --execute --delete-all-internal-topics and
// the other by the runner with --delete-all-internal-topics: the same
// offsets, the same internal topics deleted (the repartition topic and the
// changelog), the input and output topics kept. The application, restarted
// with a new state directory, processes the input again from the start.
func TestKafkaStreamsApplication(t *testing.T) {
	dir, libs := streamsApp(t)
	c := seeded(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := c.CreateTopic(ctx, streamsAppOutput, partitions); err != nil {
		t.Fatal(err)
	}
	tool, g := "streams-app-tool", "streams-app-runner"
	toolApp := startApp(t, ctx, c, dir, tool, kafkatest.StreamsProtocol)
	app := startApp(t, ctx, c, dir, g, kafkatest.StreamsProtocol)
	internal := []string{"counts-changelog", "rekey-repartition"}
	if got := ownTopics(t, ctx, c, g); !slices.Equal(got, internal) {
		t.Fatalf("the application's own topics %q, want %q", got, internal)
	}

	before := offsetsOf(t, c, g)
	live := run(t, c, "--group", g, "--to", "earliest").mustCode(t, report.ExitGroupActive)
	if live.result.GroupType != "Streams" || live.result.Reason != report.ReasonGroupActive {
		t.Errorf("a live application: kind %q, reason %s, want Streams and GroupActive", live.result.GroupType, live.result.Reason)
	}
	dry := run(t, c, "--group", g, "--to", "earliest", "--dry-run").mustCode(t, report.ExitOK)
	if !hasWarning(dry.result, "the group is active") || !hasWarning(dry.result, "local state too") {
		t.Errorf("a live application's dry run warns %q", dry.result.Warnings)
	}
	if got := offsetsOf(t, c, g); !equalMaps(got, before) {
		t.Fatalf("refused and dry runs moved offsets: %v, were %v", got, before)
	}

	for _, a := range []*kafkatest.StreamsApp{toolApp, app} {
		if err := a.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	}

	// Kafka's tool, read-only, as the oracle of the plan.
	code, out := groupTool(t, libs, streamsGroupCommand, "--bootstrap-server", c.Bootstrap(), "--group", g, "--reset-offsets", "--to-earliest", "--all-input-topics", "--dry-run")
	if code != 0 {
		t.Fatalf("Kafka's tool: exit %d\n%s", code, out)
	}
	want := toolPlan(t, out, g)
	plan := run(t, c, "--group", g, "--to", "earliest", "--dry-run", "--delete-all-internal-topics").mustCode(t, report.ExitOK)
	got := map[string]int64{}
	for _, p := range plan.result.Partitions {
		got[fmt.Sprintf("%s/%d", p.Topic, p.Partition)] = p.NewOffset
	}
	if !equalMaps(got, want) {
		t.Errorf("the runner plans %v, Kafka's tool %v\n%s", got, want, out)
	}
	for k := range got {
		if strings.HasPrefix(k, g+"-rekey-repartition/") {
			t.Errorf("the plan moves the repartition topic, which --all-input-topics leaves: %v", got)
			break
		}
	}
	if !hasWarning(plan.result, "left out: the group's committed offsets on its repartition topics "+g+"-rekey-repartition") {
		t.Errorf("the plan does not say the repartition topic's offsets are left: %q", plan.result.Warnings)
	}
	// Named, the repartition topic is planned as --input-topic plans it.
	code, out = groupTool(t, libs, streamsGroupCommand, "--bootstrap-server", c.Bootstrap(), "--group", g, "--reset-offsets", "--to-earliest", "--input-topic", g+"-rekey-repartition", "--dry-run")
	if code != 0 {
		t.Fatalf("Kafka's tool, --input-topic of the repartition topic: exit %d\n%s", code, out)
	}
	want = toolPlan(t, out, g)
	named := run(t, c, "--group", g, "--topic", g+"-rekey-repartition", "--to", "earliest", "--dry-run").mustCode(t, report.ExitOK)
	got = map[string]int64{}
	for _, p := range named.result.Partitions {
		got[fmt.Sprintf("%s/%d", p.Topic, p.Partition)] = p.NewOffset
	}
	if len(want) == 0 || !equalMaps(got, want) {
		t.Errorf("the repartition topic named: the runner plans %v, Kafka's tool %v\n%s", got, want, out)
	}
	if !hasWarning(named.result, "--input-topic moves them") {
		t.Errorf("the repartition topic named: warnings %q", named.result.Warnings)
	}
	var planned []string
	for _, s := range internal {
		planned = append(planned, g+"-"+s)
	}
	if it := plan.result.InternalTopics; it == nil || !slices.Equal(it.Planned, planned) {
		t.Errorf("the plan deletes %+v, want %q", plan.result.InternalTopics, planned)
	}

	code, out = groupTool(t, libs, streamsGroupCommand, "--bootstrap-server", c.Bootstrap(), "--group", tool, "--reset-offsets", "--to-earliest", "--all-input-topics", "--execute", "--delete-all-internal-topics")
	if code != 0 {
		t.Fatalf("Kafka's tool: exit %d\n%s", code, out)
	}
	o := run(t, c, "--group", g, "--to", "earliest", "--delete-all-internal-topics", "--run-id", "streams-app-reset").mustCode(t, report.ExitOK)
	if it := o.result.InternalTopics; it == nil || !slices.Equal(it.Deleted, planned) {
		t.Errorf("deleted %+v, want %q", o.result.InternalTopics, planned)
	}
	assertMatchesKafka(t, c, o.result)
	if a, b := byApp(offsetsOf(t, c, tool), tool), byApp(offsetsOf(t, c, g), g); !equalMaps(a, b) {
		t.Errorf("offsets after Kafka's tool %v, after the runner %v", a, b)
	}
	for {
		byTool, byRunner := ownTopics(t, ctx, c, tool), ownTopics(t, ctx, c, g)
		if slices.Equal(byTool, byRunner) && len(byRunner) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("left after Kafka's tool %q, after the runner %q; want none", byTool, byRunner)
		case <-time.After(200 * time.Millisecond):
		}
	}
	if all, err := c.Topics(ctx); err != nil || !all[topic] || !all[streamsAppOutput] {
		t.Fatalf("the input or output topic is gone (%v): %v", err, all)
	}

	// The reset takes: the application, with its local state reset (a new
	// state directory), processes the input again from the start.
	again := startApp(t, ctx, c, dir, g, kafkatest.StreamsProtocol)
	if err := again.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestKafkaStreamsApplicationClassic: the same application on the classic
// protocol is a classic consumer group named after its application.id.
// While it runs the runner refuses it (exit 3); once it has stopped, a
// dry run recognises it by its commits on its repartition topic and warns
// that its local state must be reset too; stated Streams it is refused
// (a classic group), and --delete-all-internal-topics is refused (no
// streams group's topology names its internal topics).
func TestKafkaStreamsApplicationClassic(t *testing.T) {
	dir, _ := streamsApp(t)
	c := seeded(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := c.CreateTopic(ctx, streamsAppOutput, partitions); err != nil {
		t.Fatal(err)
	}
	g := "streams-app-classic"
	app := startApp(t, ctx, c, dir, g, kafkatest.ClassicProtocol)
	live := run(t, c, "--group", g, "--topic", topic, "--to", "earliest").mustCode(t, report.ExitGroupActive)
	if live.result.GroupType != "Classic" {
		t.Errorf("a live classic application: kind %q, want Classic", live.result.GroupType)
	}
	if err := app.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	dry := run(t, c, "--group", g, "--topic", topic, "--to", "earliest", "--dry-run").mustCode(t, report.ExitOK)
	if !hasWarning(dry.result, "looks like a Kafka Streams application on the classic protocol (it commits on "+g+"-rekey-repartition") {
		t.Errorf("not recognised: warnings %q", dry.result.Warnings)
	}
	o := run(t, c, "--group", g, "--topic", topic, "--to", "earliest", "--group-type", "Streams").mustCode(t, report.ExitInvalidInput)
	if o.result.Reason != report.ReasonUnsupportedGroupKind || !strings.Contains(o.result.Error, "is a Classic group, not a Streams group") {
		t.Errorf("stated Streams: %s %q", o.result.Reason, o.result.Error)
	}
	o = run(t, c, "--group", g, "--topic", topic, "--to", "earliest", "--delete-all-internal-topics").mustCode(t, report.ExitInvalidInput)
	if !strings.Contains(o.result.Error, "not a streams group") {
		t.Errorf("deleting a classic application's internal topics: %q", o.result.Error)
	}
	applied := run(t, c, "--group", g, "--topic", topic, "--to", "earliest").mustCode(t, report.ExitOK)
	assertMatchesKafka(t, c, applied.result)
	if !hasWarning(applied.result, "looks like a Kafka Streams application") {
		t.Errorf("the reset does not warn: %q", applied.result.Warnings)
	}
}
