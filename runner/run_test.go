package runner_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

func TestTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: needs the embedded Kafka cluster")
	}
	plus2 := time.FixedZone("", 2*3600)
	cases := []struct {
		name  string
		to    string
		setup func(t *testing.T, c *kafkatest.Cluster)
		want  func(p int32) int64
		// skip is set for targets ahead of the committed offset somewhere,
		// which need --allow-skip.
		skip bool
	}{
		{name: "earliest", to: "earliest", want: func(int32) int64 { return 0 }},
		{name: "latest", to: "latest", skip: true, want: func(int32) int64 { return records }},
		{name: "time with an offset zone", to: "time:" + base.Add(30*time.Second).In(plus2).Format(time.RFC3339), want: func(int32) int64 { return 30 }},
		{name: "time between records", to: "time:" + base.Add(30*time.Second+time.Millisecond).Format(time.RFC3339Nano), want: func(int32) int64 { return 31 }},
		{name: "time in unix ms", to: "time:" + strconv.FormatInt(base.Add(42*time.Second).UnixMilli(), 10), want: func(int32) int64 { return 42 }},
		{name: "offset", to: "offset:55", want: func(int32) int64 { return 55 }},
		{name: "shift back", to: "shift:-30", want: func(int32) int64 { return committed - 30 }},
		{name: "shift forward", to: "shift:+7", skip: true, want: func(int32) int64 { return committed + 7 }},
		{name: "file", to: "file:" + offsetsFile(t, map[int32]int64{0: 1, 1: 2, 2: 3, 3: 99}), skip: true, want: func(p int32) int64 { return []int64{1, 2, 3, 99}[p] }},
		{
			name: "copy from another group", to: "group:archive",
			setup: func(t *testing.T, c *kafkatest.Cluster) {
				if err := c.Commit(testCtx(t), "archive", kafkatest.Offsets{topic: {0: 10, 1: 11, 2: 12, 3: 13}}, ""); err != nil {
					t.Fatal(err)
				}
			},
			want: func(p int32) int64 { return 10 + int64(p) },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := seeded(t)
			if tc.setup != nil {
				tc.setup(t, c)
			}
			args := []string{"--group", group, "--to", tc.to, "--run-id", "run-" + strings.ReplaceAll(tc.name, " ", "-")}
			if !strings.HasPrefix(tc.to, "file:") {
				args = append(args, "--topic", topic)
			}
			if tc.skip {
				args = append(args, "--allow-skip")
			}
			o := run(t, c, args...).mustCode(t, report.ExitOK)
			if o.result.Reason != report.ReasonApplied {
				t.Errorf("reason %s, want Applied", o.result.Reason)
			}
			if len(o.result.Partitions) != partitions {
				t.Fatalf("%d partitions in result, want %d", len(o.result.Partitions), partitions)
			}
			for _, p := range o.result.Partitions {
				if want := tc.want(p.Partition); p.NewOffset != want {
					t.Errorf("%s/%d: new offset %d, want %d", p.Topic, p.Partition, p.NewOffset, want)
				}
				if p.PreviousOffset == nil || *p.PreviousOffset != committed {
					t.Errorf("%s/%d: previous %v, want %d", p.Topic, p.Partition, p.PreviousOffset, committed)
				}
			}
			assertMatchesKafka(t, c, o.result)
			// The termination message carries the same outcome, compactly.
			if o.termination == nil || o.termination.Totals != o.result.Totals || len(o.termRaw) > report.MaxTerminationMessageBytes {
				t.Errorf("termination message %q does not match the result totals %+v", o.termRaw, o.result.Totals)
			}
		})
	}
}

func offsetsFile(t *testing.T, offs map[int32]int64) string {
	t.Helper()
	var list []map[string]any
	for p := int32(0); p < partitions; p++ {
		if o, ok := offs[p]; ok {
			list = append(list, map[string]any{"topic": topic, "partition": p, "offset": o})
		}
	}
	b, _ := json.Marshal(list)
	path := filepath.Join(t.TempDir(), "offsets.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAgoResolvedOnceAndRecorded(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	// Records one a second, ending now: ago:40s must land 40 records back.
	c := kafkatest.New(t, 3)
	now := time.Now().Truncate(time.Second)
	start := now.Add(-records * time.Second)
	if err := c.Seed(testCtx(t), topic, 2, records, start, time.Second); err != nil {
		t.Fatal(err)
	}
	commitAll(t, c, group, topic, 2, records)
	o := run(t, c, "--group", group, "--topic", topic, "--to", "ago:40s").mustCode(t, report.ExitOK)
	rt := o.result.Target.Time
	if rt == nil || o.result.Target.Given != "ago:40s" || !strings.HasPrefix(o.result.Target.Resolved, "time:") {
		t.Fatalf("target not recorded as given and resolved: %+v", o.result.Target)
	}
	if d := o.result.StartedAt.Sub(*rt); d < 40*time.Second || d > 41*time.Second {
		t.Errorf("resolved time is %s before the start, want 40s", d)
	}
	// The offset must be exactly the first record at or after the resolved time.
	want := int64((rt.Sub(start) + time.Second - 1) / time.Second)
	for _, p := range o.result.Partitions {
		if p.NewOffset != want {
			t.Errorf("%s/%d: new offset %d, want %d for %s", p.Topic, p.Partition, p.NewOffset, want, rt)
		}
	}
	assertMatchesKafka(t, c, o.result)
}

func TestPartitionSubsetLeavesOthersAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	o := run(t, c, "--group", group, "--topic", topic+":1,3", "--to", "earliest").mustCode(t, report.ExitOK)
	if got := newOffsets(o.result); !equalMaps(got, map[string]int64{"orders/1": 0, "orders/3": 0}) {
		t.Fatalf("result partitions %v", got)
	}
	want := map[string]int64{"orders/0": committed, "orders/1": 0, "orders/2": committed, "orders/3": 0}
	if got := offsetsOf(t, c, group); !equalMaps(got, want) {
		t.Fatalf("committed %v, want %v", got, want)
	}
}

func TestEmptyScopeMeansEveryCommittedTopic(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	if err := c.Seed(testCtx(t), "payments", 2, 10, base, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := c.Seed(testCtx(t), "unrelated", 2, 10, base, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(testCtx(t), group, kafkatest.Offsets{"payments": {0: 5}}, ""); err != nil {
		t.Fatal(err)
	}
	o := run(t, c, "--group", group, "--to", "earliest").mustCode(t, report.ExitOK)
	want := map[string]int64{"orders/0": 0, "orders/1": 0, "orders/2": 0, "orders/3": 0, "payments/0": 0}
	if got := newOffsets(o.result); !equalMaps(got, want) {
		t.Fatalf("result %v, want %v (payments/1 and unrelated were never committed)", got, want)
	}
	assertMatchesKafka(t, c, o.result)
}

func TestClamping(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	// Retention removed the first 20 records of partition 0.
	if err := c.DeleteRecords(testCtx(t), topic, 0, 20); err != nil {
		t.Fatal(err)
	}
	o := run(t, c, "--group", group, "--topic", topic, "--to", "offset:10").mustCode(t, report.ExitOK)
	for _, p := range o.result.Partitions {
		switch p.Partition {
		case 0:
			if p.NewOffset != 20 || !p.Clamped || p.LogStartOffset != 20 || !strings.Contains(p.Note, "log start") {
				t.Errorf("partition 0 not clamped to the log start: %+v", p)
			}
		default:
			if p.NewOffset != 10 || p.Clamped {
				t.Errorf("partition %d: %+v", p.Partition, p)
			}
		}
	}
	if o.result.Totals.Clamped != 1 || len(o.result.Warnings) == 0 || !strings.Contains(o.result.Warnings[0], "orders/0") {
		t.Errorf("clamp not summarised: totals %+v warnings %q", o.result.Totals, o.result.Warnings)
	}
	if !strings.Contains(o.stderr, "clamped") {
		t.Errorf("clamp warning not logged:\n%s", o.stderr)
	}
	assertMatchesKafka(t, c, o.result)

	o = run(t, c, "--group", group, "--topic", topic, "--to", "offset:1000", "--run-id", "past-end", "--allow-skip").mustCode(t, report.ExitOK)
	for _, p := range o.result.Partitions {
		if p.NewOffset != records || !p.Clamped || !strings.Contains(p.Note, "log end") {
			t.Errorf("%d: not clamped to the log end: %+v", p.Partition, p)
		}
	}
	o = run(t, c, "--group", group, "--topic", topic, "--to", "shift:-500", "--run-id", "shift-below").mustCode(t, report.ExitOK)
	for _, p := range o.result.Partitions {
		if p.NewOffset != p.LogStartOffset || !p.Clamped {
			t.Errorf("%d: shift below the log start not clamped: %+v", p.Partition, p)
		}
	}
	assertMatchesKafka(t, c, o.result)
}

func TestTimeAfterLastMessageFallsBackToLogEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	after := base.Add(time.Hour).Format(time.RFC3339)
	o := run(t, c, "--group", group, "--topic", topic, "--to", "time:"+after, "--allow-skip").mustCode(t, report.ExitOK)
	for _, p := range o.result.Partitions {
		if p.NewOffset != records || !strings.Contains(p.Note, "no message at or after") {
			t.Errorf("%d: %+v", p.Partition, p)
		}
	}
	if len(o.result.Warnings) != 1 || !strings.Contains(o.result.Warnings[0], "4 partition(s)") {
		t.Errorf("warnings %q", o.result.Warnings)
	}
	assertMatchesKafka(t, c, o.result)
}

func TestGroupThatNeverCommitted(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	o := run(t, c, "--group", "fresh", "--topic", topic, "--to", "offset:5").mustCode(t, report.ExitOK)
	for _, p := range o.result.Partitions {
		if p.PreviousOffset != nil || p.Delta != nil || p.NewOffset != 5 || p.Note != "no previous committed offset" {
			t.Errorf("%d: %+v", p.Partition, p)
		}
	}
	if o.result.Totals.NoPreviousOffset != partitions {
		t.Errorf("totals %+v", o.result.Totals)
	}
	// The JSON says null, not 0, for an offset that never existed.
	if !strings.Contains(o.resultRaw, `"previousOffset": null`) {
		t.Errorf("previousOffset not null in JSON:\n%s", o.resultRaw)
	}
	assertMatchesKafka(t, c, o.result)

	// Shifting needs a committed offset: with none anywhere in scope there
	// is nothing to do, which is an error that says so, not a success.
	o = run(t, c, "--group", "fresh2", "--topic", topic, "--to", "shift:-5").mustCode(t, report.ExitInvalidInput)
	if !strings.Contains(o.result.Error, "shift: moves from the committed offset, and the group has none") {
		t.Errorf("shift of a never-committed group: %q", o.result.Error)
	}
	if !strings.Contains(o.resultRaw, `"partitions": []`) {
		t.Errorf("a result with no partitions does not say []:\n%s", o.resultRaw)
	}
	if got := offsetsOf(t, c, "fresh2"); len(got) != 0 {
		t.Errorf("committed %v", got)
	}
	// With no topics named there is nothing to reposition: invalid input.
	o = run(t, c, "--group", "fresh3", "--to", "earliest").mustCode(t, report.ExitInvalidInput)
	if !strings.Contains(o.result.Error, "--topic") {
		t.Errorf("error %q does not name --topic", o.result.Error)
	}
}

func TestActiveGroupIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	m, err := c.Join(testCtx(t), group, "billing-worker-7", topic)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Leave()
	before := offsetsOf(t, c, group)
	c.ResetRequests()
	o := run(t, c, "--group", group, "--topic", topic, "--to", "earliest").mustCode(t, report.ExitGroupActive)
	if o.result.Reason != report.ReasonGroupActive {
		t.Errorf("reason %s", o.result.Reason)
	}
	for _, want := range []string{"1 member", "billing-worker-7", "--wait-for-empty"} {
		if !strings.Contains(o.result.Error, want) {
			t.Errorf("error %q lacks %q", o.result.Error, want)
		}
	}
	if got := offsetsOf(t, c, group); !equalMaps(got, before) {
		t.Errorf("offsets changed: %v → %v", before, got)
	}
	if n := c.Requests()["OffsetCommit"]; n > 0 && c.Fake != nil {
		// The member's own commits are disabled, so any commit is ours.
		t.Errorf("%d OffsetCommit requests sent to an active group", n)
	}
}

func TestWaitForEmptySucceedsOnceTheConsumerLeaves(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	m, err := c.Join(testCtx(t), group, "billing-worker-1", topic)
	if err != nil {
		t.Fatal(err)
	}
	left := make(chan time.Time, 1)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		m.Leave()
		left <- time.Now()
	}()
	o := run(t, c, "--group", group, "--topic", topic, "--to", "earliest", "--wait-for-empty", "30s").mustCode(t, report.ExitOK)
	leftAt := <-left
	if o.result.FinishedAt.Before(leftAt) {
		t.Errorf("finished at %s, before the consumer left at %s", o.result.FinishedAt, leftAt)
	}
	if !strings.Contains(o.stderr, "waiting for the group to become empty") {
		t.Errorf("no progress shown while waiting:\n%s", o.stderr)
	}
	assertMatchesKafka(t, c, o.result)

	// A bounded wait that runs out fails as GroupActive with nothing changed.
	m2, err := c.Join(testCtx(t), group, "billing-worker-2", topic)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Leave()
	before := offsetsOf(t, c, group)
	o = run(t, c, "--group", group, "--topic", topic, "--to", "latest", "--wait-for-empty", "1s").mustCode(t, report.ExitGroupActive)
	if got := offsetsOf(t, c, group); !equalMaps(got, before) {
		t.Errorf("offsets changed after a timed-out wait")
	}
	// It says that it waited, how long, and which member stayed; not to
	// use the wait it used (issue 32, friction 4).
	for _, want := range []string{"after waiting 1s", "billing-worker-2", "wait longer (--wait-for-empty)"} {
		if !strings.Contains(o.result.Error, want) {
			t.Errorf("error %q lacks %q", o.result.Error, want)
		}
	}
	if strings.Contains(o.result.Error, "or use --wait-for-empty") {
		t.Errorf("error %q advises the wait it used", o.result.Error)
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	before := committedOf(t, c, group)
	c.ResetRequests()
	o := run(t, c, "--group", group, "--topic", topic, "--to", "earliest", "--dry-run", "--output", "json").mustCode(t, report.ExitOK)
	if !o.result.DryRun || o.result.Reason != report.ReasonDryRun || o.result.Totals.MessagesToReconsume != partitions*committed {
		t.Errorf("dry run result %+v", o.result)
	}
	after := committedOf(t, c, group)
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("dry run changed offsets or metadata: %v → %v", before, after)
	}
	if c.Fake != nil && c.Requests()["OffsetCommit"] != 0 {
		t.Errorf("dry run sent OffsetCommit: %s", c.Requests())
	}
	// --output json prints exactly the result document.
	stdoutRes, err := report.Decode([]byte(o.stdout))
	if err != nil || stdoutRes.Totals != o.result.Totals {
		t.Errorf("stdout is not the JSON result: %v\n%s", err, o.stdout)
	}
	// The log names one plan digest, the result's, if any: the digest of
	// the target and scope is called that (issue 32, friction 5: the log
	// and the table printed two different "plan" digests).
	for _, l := range strings.Split(o.stderr, "\n") {
		for _, f := range strings.Fields(l) {
			if v, ok := strings.CutPrefix(f, "plan="); ok && v != o.result.Plan {
				t.Errorf("the log's plan=%s is not the plan %s:\n%s", v, o.result.Plan, l)
			}
		}
	}
	if !strings.Contains(o.stderr, "targetDigest=") {
		t.Errorf("the starting line has no targetDigest:\n%s", o.stderr)
	}
}

func TestRetriedRunDoesNotApplyTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	args := []string{"--group", group, "--topic", topic, "--to", "shift:-10", "--run-id", "job-uid-1234"}
	first := run(t, c, args...).mustCode(t, report.ExitOK)
	if first.result.AlreadyApplied || first.result.Totals.MessagesToReconsume != 10*partitions {
		t.Fatalf("first run %+v", first.result)
	}
	second := run(t, c, args...).mustCode(t, report.ExitOK)
	if !second.result.AlreadyApplied || second.result.Reason != report.ReasonAlreadyApplied {
		t.Fatalf("second run not recognised as already applied: %+v", second.result)
	}
	for k, v := range offsetsOf(t, c, group) {
		if v != committed-10 {
			t.Errorf("%s at %d: shifted more than once", k, v)
		}
	}
	// A different run ID is a new replay and shifts again.
	run(t, c, "--group", group, "--topic", topic, "--to", "shift:-10", "--run-id", "job-uid-5678").mustCode(t, report.ExitOK)
	for k, v := range offsetsOf(t, c, group) {
		if v != committed-20 {
			t.Errorf("%s at %d after a second, distinct replay", k, v)
		}
	}
}
