package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/runner"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// scaleWorld seeds topics × partitions, each partition with perPart records
// one second apart from base, and commits the group at the log end.
func scaleWorld(tb testing.TB, topics int, parts int32, perPart int) (*kafkatest.Cluster, []string) {
	tb.Helper()
	c := kafkatest.New(tb, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var args []string
	offs := kafkatest.Offsets{}
	for i := 0; i < topics; i++ {
		name := fmt.Sprintf("t%03d", i)
		if err := c.Seed(ctx, name, parts, perPart, base, time.Second); err != nil {
			tb.Fatal(err)
		}
		offs[name] = map[int32]int64{}
		for p := int32(0); p < parts; p++ {
			offs[name][p] = int64(perPart)
		}
		args = append(args, "--topic", name)
	}
	if err := c.Commit(ctx, group, offs, ""); err != nil {
		tb.Fatal(err)
	}
	return c, args
}

// countedRun runs the runner once and returns the Kafka requests it made.
func countedRun(tb testing.TB, c *kafkatest.Cluster, runID string, scope []string) kafkatest.RequestCounts {
	tb.Helper()
	c.ResetRequests()
	args := append([]string{"--bootstrap-servers", c.Bootstrap(), "--group", group, "--run-id", runID,
		"--to", "time:" + base.Add(5*time.Second).Format(time.RFC3339)}, scope...)
	if code := runner.Main(context.Background(), args, io.Discard, io.Discard); code != 0 {
		tb.Fatalf("runner exit %d", code)
	}
	return c.Requests()
}

// TestRequestsDoNotGrowWithPartitions is the performance contract: a run's
// Kafka requests depend on the number of brokers, not of partitions.
//
// It compares a run at 1,000 partitions with one at 100, so that it holds
// on a loaded machine too. Some kinds depend on librdkafka's timing, not on
// the runner: it re-queries a coordinator that is slow to answer
// (FindCoordinator), refreshes metadata on its own schedule (Metadata) and
// reconnects a connection that timed out (ApiVersions). Those get a fixed
// slack over the small run and no absolute bound; every other kind is
// exactly determined by the run and must not grow at all.
func TestRequestsDoNotGrowWithPartitions(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	t.Setenv("REPLAY_TERMINATION_MESSAGE_PATH", "")
	small, smallScope := scaleWorld(t, 10, 10, 10)
	small.RequireFake(t)
	large, largeScope := scaleWorld(t, 10, 100, 10)
	s := countedRun(t, small, "s", smallScope)
	l := countedRun(t, large, "l", largeScope)
	t.Logf("100 partitions:  %d requests: %s", s.Total(), s)
	t.Logf("1000 partitions: %d requests: %s", l.Total(), l)
	const brokers = 3
	// The kinds a run makes, with a bound for those the run determines:
	// describe (either API), committed offsets and their read-back, one
	// commit, and per partition leader the log start, log end and
	// offsets-for-time lookups.
	determined := map[string]int{
		"ConsumerGroupDescribe": 1, "DescribeGroups": 1, "OffsetFetch": 2, "OffsetCommit": 1,
		"ListOffsets": 3 * brokers,
	}
	timingSlack := map[string]int{"Metadata": 4, "FindCoordinator": 4, "ApiVersions": brokers}
	for _, counts := range []kafkatest.RequestCounts{s, l} {
		for kind, n := range counts {
			_, timing := timingSlack[kind]
			bound, known := determined[kind]
			switch {
			case !known && !timing:
				t.Errorf("unexpected request kind %s (%d)", kind, n)
			case known && n > bound:
				t.Errorf("%s: %d requests, bound %d (100 partitions: %s; 1000: %s)", kind, n, bound, s, l)
			}
		}
	}
	for kind, n := range l {
		if n > s[kind]+timingSlack[kind] {
			t.Errorf("%s grew with partitions: %d at 1000, %d at 100 (slack %d)", kind, n, s[kind], timingSlack[kind])
		}
	}
}

// BenchmarkReplay plans and commits a time target for 1,000 and 10,000
// partitions on a 3-broker cluster, reporting requests by kind per run and
// the peak RSS of a real runner process.
func BenchmarkReplay(b *testing.B) {
	b.Setenv("REPLAY_TERMINATION_MESSAGE_PATH", "")
	for _, size := range []struct {
		topics int
		parts  int32
	}{{10, 100}, {100, 100}} {
		n := size.topics * int(size.parts)
		b.Run(fmt.Sprintf("partitions=%d", n), func(b *testing.B) {
			c, scope := scaleWorld(b, size.topics, size.parts, 10)
			c.RequireFake(b)
			totals := kafkatest.RequestCounts{}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				for k, v := range countedRun(b, c, fmt.Sprintf("bench-%d", i), scope) {
					totals[k] += v
				}
			}
			b.StopTimer()
			kinds := make([]string, 0, len(totals))
			for k := range totals {
				kinds = append(kinds, k)
			}
			sort.Strings(kinds)
			for _, k := range kinds {
				b.ReportMetric(float64(totals[k])/float64(b.N), k+"/op")
			}
			b.ReportMetric(float64(totals.Total())/float64(b.N), "requests/op")
			b.ReportMetric(peakRSS(b, c, scope), "peak-RSS-MiB")
		})
	}
}

// peakRSS runs the real runner binary once and returns the peak resident
// memory it reports on its last log line (VmHWM). The child's rusage cannot
// be used: Go starts children with vfork, so their ru_maxrss includes this
// test process, kfake's whole cluster and all.
func peakRSS(b *testing.B, c *kafkatest.Cluster, scope []string) float64 {
	b.Helper()
	args := append([]string{"--bootstrap-servers", c.Bootstrap(), "--group", group, "--run-id", "rss",
		"--to", "time:" + base.Add(5*time.Second).Format(time.RFC3339)}, scope...)
	cmd := exec.Command(runnerBin, args...)
	cmd.Env = append(os.Environ(), "REPLAY_TERMINATION_MESSAGE_PATH=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("runner: %v\n%s", err, stderr.String())
	}
	b.ReportMetric(float64(time.Since(start).Milliseconds()), "process-wall-ms")
	// CPU time is the figure that holds on a busy machine, where wall time
	// mostly measures the neighbours.
	b.ReportMetric(float64((cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Milliseconds()), "process-cpu-ms")
	m := regexp.MustCompile(`peakRSSKiB=(\d+)`).FindStringSubmatch(stderr.String())
	if m == nil {
		b.Fatalf("no peakRSSKiB in the runner's log:\n%s", stderr.String())
	}
	kib, _ := strconv.ParseFloat(m[1], 64)
	return kib / 1024
}
