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
	"strings"
	"syscall"
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
	// Apache Kafka on a loaded machine creates 100 topics in minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
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

// TestRequestsDoNotGrowWithPartitions is the performance contract: up to
// 250 partitions per leader (maxPartitionsPerListOffsets), a run's Kafka
// requests depend on the number of brokers, not of partitions. Beyond,
// ListOffsets is split (TestSplitReadsCoverEveryPartition).
//
// It compares a run at 500 partitions with one at 100, so that it holds
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
	// kfake picks each partition's leader at random: 500 on 3 brokers put
	// about 167 on each, more than 250 on one hardly ever (8 deviations).
	large, largeScope := scaleWorld(t, 10, 50, 10)
	s := countedRun(t, small, "s", smallScope)
	l := countedRun(t, large, "l", largeScope)
	t.Logf("100 partitions: %d requests: %s", s.Total(), s)
	t.Logf("500 partitions: %d requests: %s", l.Total(), l)
	const brokers = 3
	// The kinds a run makes, with a bound for those the run determines:
	// describe (either API), the kind check (groupkind: one describe of
	// each other kind), committed offsets and their read-back, one commit,
	// and per partition leader the log start, log end and offsets-for-time
	// lookups.
	determined := map[string]int{
		"ConsumerGroupDescribe": 1, "DescribeGroups": 1, "OffsetFetch": 2, "OffsetCommit": 1,
		"ShareGroupDescribe": 1, "StreamsGroupDescribe": 1,
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
				t.Errorf("%s: %d requests, bound %d (100 partitions: %s; 500: %s)", kind, n, bound, s, l)
			}
		}
	}
	for kind, n := range l {
		if n > s[kind]+timingSlack[kind] {
			t.Errorf("%s grew with partitions: %d at 500, %d at 100 (slack %d)", kind, n, s[kind], timingSlack[kind])
		}
	}
}

// TestSplitReadsCoverEveryPartition runs past maxPartitionsPerListOffsets
// (250) on every leader: ListOffsets is split in five calls per leader and
// lookup, the reads of the group's offsets (franz-go, offsets.go) and the
// commit are not, and every partition is still planned, committed and
// verified.
func TestSplitReadsCoverEveryPartition(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	t.Setenv("REPLAY_TERMINATION_MESSAGE_PATH", "")
	const topics, parts = 3, 1100
	c, scope := scaleWorld(t, topics, parts, 10)
	c.RequireFake(t)
	got := countedRun(t, c, "split", scope)
	t.Logf("%d partitions: %d requests: %s", topics*parts, got.Total(), got)
	if got["OffsetCommit"] != 1 {
		t.Errorf("%d OffsetCommit requests: the commit must be one request", got["OffsetCommit"])
	}
	// The snapshot reads all of the group's offsets in one request, the
	// read-back the 3,300 committed partitions in one more.
	if got["OffsetFetch"] != 2 {
		t.Errorf("%d OffsetFetch requests, want 2", got["OffsetFetch"])
	}
	// Three lookups (log start, log end, time), each in calls of at most
	// 250 partitions of one leader: at least 14 calls (3,300 partitions),
	// at most one more per broker.
	const brokers, perCall = 3, 250
	least := (topics*parts + perCall - 1) / perCall
	if n := got["ListOffsets"]; n < 3*least || n > 3*(least+brokers) {
		t.Errorf("%d ListOffsets requests, want %d to %d", n, 3*least, 3*(least+brokers))
	}
	offs, err := c.Committed(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for topic, ps := range offs {
		for p, o := range ps {
			n++
			if o.Offset != 5 {
				t.Errorf("%s/%d committed at %d, want 5 (the record at base+5s)", topic, p, o.Offset)
			}
		}
	}
	if n != topics*parts {
		t.Errorf("%d partitions committed, want %d", n, topics*parts)
	}
}

// BenchmarkReplay runs the real runner process (plan and commit, a time
// target, 3 brokers) at 1,000 and 10,000 partitions, as the issue that set
// its goals measures it: per size, the medians of the runs' wall time, CPU
// time (user+system) and peak RSS (the process's VmHWM), and the mean Kafka
// requests by kind. The 10,000-partition run also reports its medians over
// the 1,000-partition ones (x1k), the scaling the goals bound. loadavg-1m is
// the machine's load when the size started: wall time on a loaded machine
// mostly measures the neighbours, CPU time holds better.
func BenchmarkReplay(b *testing.B) {
	b.Setenv("REPLAY_TERMINATION_MESSAGE_PATH", "")
	var small *processFigures
	for _, size := range []struct {
		topics int
		parts  int32
	}{{10, 100}, {100, 100}} {
		n := size.topics * int(size.parts)
		b.Run(fmt.Sprintf("partitions=%d", n), func(b *testing.B) {
			c, scope := scaleWorld(b, size.topics, size.parts, 10)
			c.RequireFake(b)
			load := loadAverage(b)
			var runs []processFigures
			totals := kafkatest.RequestCounts{}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				c.ResetRequests()
				runs = append(runs, benchProcess(b, c, fmt.Sprintf("bench-%d", i), scope))
				for k, v := range c.Requests() {
					totals[k] += v
				}
			}
			b.StopTimer()
			// After the loop: ResetTimer drops metrics reported before it.
			b.ReportMetric(load, "loadavg-1m")
			kinds := make([]string, 0, len(totals))
			for k := range totals {
				kinds = append(kinds, k)
			}
			sort.Strings(kinds)
			for _, k := range kinds {
				b.ReportMetric(float64(totals[k])/float64(len(runs)), k+"/op")
			}
			b.ReportMetric(float64(totals.Total())/float64(len(runs)), "requests/op")
			med := medianFigures(runs)
			b.ReportMetric(med.wallMs, "process-wall-ms")
			b.ReportMetric(med.cpuMs, "process-cpu-ms")
			b.ReportMetric(med.rssMiB, "peak-RSS-MiB")
			b.ReportMetric(med.kafkaCPUMs, "kafka-cpu-ms")
			switch {
			case n == 1000:
				small = &med
			case small != nil:
				b.ReportMetric(med.wallMs/small.wallMs, "wall-x1k")
				b.ReportMetric(med.cpuMs/small.cpuMs, "cpu-x1k")
				b.ReportMetric(med.rssMiB/small.rssMiB, "RSS-x1k")
			}
		})
	}
}

// processFigures is what one runner process cost.
type processFigures struct {
	wallMs, cpuMs, rssMiB float64
	// kafkaCPUMs is the CPU this test process (the embedded Kafka serving
	// the run, mostly) used while the runner ran: the part of the machine's
	// work that is not the runner's.
	kafkaCPUMs float64
}

// medianFigures takes each figure's median on its own.
func medianFigures(runs []processFigures) processFigures {
	median := func(get func(processFigures) float64) float64 {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = get(r)
		}
		sort.Float64s(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return processFigures{
		wallMs:     median(func(f processFigures) float64 { return f.wallMs }),
		cpuMs:      median(func(f processFigures) float64 { return f.cpuMs }),
		rssMiB:     median(func(f processFigures) float64 { return f.rssMiB }),
		kafkaCPUMs: median(func(f processFigures) float64 { return f.kafkaCPUMs }),
	}
}

// benchProcess runs the real runner binary once. Its peak memory is the VmHWM
// it reports on its last log line: the child's rusage cannot be used, since
// Go starts children with vfork, so their ru_maxrss includes this test
// process, kfake's whole cluster and all.
func benchProcess(b *testing.B, c *kafkatest.Cluster, runID string, scope []string) processFigures {
	b.Helper()
	return benchArgs(b, append([]string{"--bootstrap-servers", c.Bootstrap(), "--group", group, "--run-id", runID,
		"--to", "time:" + base.Add(5*time.Second).Format(time.RFC3339)}, scope...))
}

// benchArgs runs the real runner binary once with args (see benchProcess).
func benchArgs(b *testing.B, args []string) processFigures {
	b.Helper()
	// BENCH_WRAP runs the runner under a profiler, say
	// BENCH_WRAP='perf record -g -o /tmp/perf.data --' (make bench-profile).
	wrap := strings.Fields(os.Getenv("BENCH_WRAP"))
	cmd := exec.Command(runnerBin, args...)
	if len(wrap) > 0 {
		cmd = exec.Command(wrap[0], append(append(wrap[1:], runnerBin), args...)...)
	}
	cmd.Env = append(os.Environ(), "REPLAY_TERMINATION_MESSAGE_PATH=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("runner: %v\n%s", err, stderr.String())
	}
	wall := time.Since(start)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	self := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) * time.Nanosecond
	m := regexp.MustCompile(`peakRSSKiB=(\d+)`).FindStringSubmatch(stderr.String())
	if m == nil {
		b.Fatalf("no peakRSSKiB in the runner's log:\n%s", stderr.String())
	}
	kib, _ := strconv.ParseFloat(m[1], 64)
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return processFigures{
		wallMs:     float64(wall.Microseconds()) / 1000,
		cpuMs:      float64(cpu.Microseconds()) / 1000,
		rssMiB:     kib / 1024,
		kafkaCPUMs: float64(self.Microseconds()) / 1000,
	}
}

// loadAverage is the machine's one-minute load average, so that a figure
// can be read against how busy the machine was.
func loadAverage(b *testing.B) float64 {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(raw))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		b.Logf("loadavg: %v", err)
		return -1
	}
	return v
}
