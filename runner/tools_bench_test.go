package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// BenchmarkCompareTools runs, on Apache Kafka (3 nodes), the same reset
// with three tools, each a whole process, in alternating rounds (runner,
// Kafka's tool, the franz-go tool, runner, ...): the group, committed at
// the log end of 10 or 100 topics of 100 partitions, is moved to the
// record at base+5s. Without Apache Kafka it runs on the embedded 3-broker
// cluster, without Kafka's tool.
//
//   - runner: this project's binary, --to-datetime (it plans, commits and
//     reads back); and again with --commit-mode Atomic.
//   - kafka-consumer-groups: Kafka's ConsumerGroupCommand --reset-offsets
//     --execute, one JVM per run with kafka-run-class.sh's default options,
//     as kafka-consumer-groups.sh starts it.
//   - franz-go: test/bench/franzseek, the steps of kcl's group seek with
//     franz-go's admin client (kcl itself is not served by the module proxy
//     this project reaches).
//   - runner-baseline: with BENCH_RUNNER_BASELINE set to another build of
//     the runner (the one before a change), that build, right after the
//     runner in each round: a change's before and after, paired.
//
// Every tool talks to the brokers through one pass-through proxy
// (kafkatest.Proxy), which counts the requests by kind. Before each run the
// group is committed at the log end again (not through the proxy), and
// after it every partition must be committed at 5. Per tool and size: the
// medians of wall time, CPU (user+system) and peak RSS of the process
// (test/bench/rusage), the mean requests by kind, and per round the other
// tools' wall and CPU over the runner's of the same round (paired medians,
// "x-runner"). One round before the measured ones warms the brokers up.
func BenchmarkCompareTools(b *testing.B) {
	libs := os.Getenv(kafkatest.ApacheEnv)
	baseline := os.Getenv("BENCH_RUNNER_BASELINE")
	b.Setenv("REPLAY_TERMINATION_MESSAGE_PATH", "")
	bin := b.TempDir()
	build := exec.Command("go", "build", "-o", bin+"/", "../test/bench/rusage", "../test/bench/franzseek")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build the benchmark's tools: %v\n%s", err, out)
	}
	rusage, franzseek := filepath.Join(bin, "rusage"), filepath.Join(bin, "franzseek")
	floorRun, _ := measure(b, rusage, "true")
	floor := floorRun.rssMiB
	java := "java"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java = filepath.Join(home, "bin", "java")
	}
	for _, size := range []struct {
		topics int
		parts  int32
	}{{10, 100}, {100, 100}} {
		n := size.topics * int(size.parts)
		b.Run(fmt.Sprintf("partitions=%d", n), func(b *testing.B) {
			c, scope := scaleWorld(b, size.topics, size.parts, 10)
			px := kafkatest.NewProxy(b, c)
			at := base.Add(5 * time.Second).Format("2006-01-02T15:04:05.000Z07:00")
			var topics []string
			for i := 1; i < len(scope); i += 2 {
				topics = append(topics, scope[i])
			}
			runner := func(bin string, extra ...string) func(round int) []string {
				return func(round int) []string {
					argv := append([]string{bin, "--bootstrap-servers", px.Bootstrap(), "--group", group,
						"--run-id", fmt.Sprintf("bench-%s%d", strings.Join(extra, ""), round), "--to-datetime", at}, scope...)
					return append(argv, extra...)
				}
			}
			type tool struct {
				name string
				argv func(round int) []string
			}
			tools := []tool{{"runner", runner(runnerBin)},
				// The same, committing in one transaction (Kafka's fence).
				{"runner-atomic", runner(runnerBin, "--commit-mode", "Atomic")}}
			if baseline != "" {
				tools = append(tools, tool{"runner-baseline", runner(baseline)})
			}
			if c.Apache != nil {
				tools = append(tools, tool{"kafka-consumer-groups", func(int) []string {
					argv := []string{java, "-Xmx256M", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
						"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15",
						"-Djava.awt.headless=true", "-cp", filepath.Join(libs, "*"), "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
						"--bootstrap-server", px.Bootstrap(), "--group", group, "--reset-offsets", "--to-datetime", at, "--execute"}
					return append(argv, scope...)
				}})
			}
			tools = append(tools, tool{"franz-go", func(int) []string {
				argv := []string{franzseek, "-brokers", px.Bootstrap(), "-group", group, "-to", at}
				for _, t := range topics {
					argv = append(argv, "-topic", t)
				}
				return argv
			}})
			runs := make([][]processFigures, len(tools))
			requests := make([]kafkatest.RequestCounts, len(tools))
			for i := range requests {
				requests[i] = kafkatest.RequestCounts{}
			}
			round := func(r int, keep bool) {
				for i, tool := range tools {
					resetGroup(b, c, topics, size.parts, 10)
					px.ResetRequests()
					f, output := measure(b, rusage, tool.argv(r)...)
					got := px.Requests()
					if err := checkGroup(c, n, 5); err != nil {
						b.Fatalf("%s: %v; its output:\n%s", tool.name, err, output)
					}
					if f.rssMiB <= floor {
						b.Fatalf("%s: peak RSS %.1f MiB is not above the wrapper's own %.1f MiB", tool.name, f.rssMiB, floor)
					}
					if !keep {
						continue
					}
					runs[i] = append(runs[i], f)
					for k, v := range got {
						requests[i][k] += v
					}
				}
			}
			round(-1, false)
			load := loadAverage(b)
			b.ResetTimer()
			for r := 0; b.Loop(); r++ {
				round(r, true)
			}
			b.StopTimer()
			b.ReportMetric(load, "loadavg-1m")
			b.ReportMetric(loadAverage(b), "loadavg-1m-end")
			for i, tool := range tools {
				med := medianFigures(runs[i])
				b.ReportMetric(med.wallMs, tool.name+"-wall-ms")
				b.ReportMetric(med.cpuMs, tool.name+"-cpu-ms")
				b.ReportMetric(med.rssMiB, tool.name+"-RSS-MiB")
				mean := map[string]float64{}
				for k, v := range requests[i] {
					mean[k] = float64(v) / float64(len(runs[i]))
				}
				b.ReportMetric(float64(requests[i].Total())/float64(len(runs[i])), tool.name+"-requests/op")
				if i > 0 {
					b.ReportMetric(pairedRatio(runs[i], runs[0], func(f processFigures) float64 { return f.wallMs }), tool.name+"-wall-x-runner")
					b.ReportMetric(pairedRatio(runs[i], runs[0], func(f processFigures) float64 { return f.cpuMs }), tool.name+"-cpu-x-runner")
				}
				b.Logf("%s: %.1f ms wall, %.1f ms CPU, %.1f MiB peak RSS, requests per run: %s", tool.name, med.wallMs, med.cpuMs, med.rssMiB, meanRequests(mean))
			}
		})
	}
}

// measure runs argv under test/bench/rusage: the process's own wall time,
// CPU and peak RSS.
func measure(b *testing.B, rusage string, argv ...string) (processFigures, string) {
	b.Helper()
	out := filepath.Join(b.TempDir(), "rusage")
	cmd := exec.Command(rusage, append([]string{"-o", out}, argv...)...)
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, output.String())
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	var wallUs, userUs, sysUs, rssKiB float64
	if _, err := fmt.Sscanf(string(raw), "%f %f %f %f", &wallUs, &userUs, &sysUs, &rssKiB); err != nil {
		b.Fatalf("rusage wrote %q: %v", raw, err)
	}
	return processFigures{wallMs: wallUs / 1000, cpuMs: (userUs + sysUs) / 1000, rssMiB: rssKiB / 1024}, output.String()
}

// resetGroup commits the group at off on every partition, directly (not
// through the proxy), so that every tool's run moves the same offsets.
func resetGroup(b *testing.B, c *kafkatest.Cluster, topics []string, parts int32, off int64) {
	b.Helper()
	offs := kafkatest.Offsets{}
	for _, t := range topics {
		offs[t] = map[int32]int64{}
		for p := int32(0); p < parts; p++ {
			offs[t][p] = off
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.Commit(ctx, group, offs, ""); err != nil {
		b.Fatal(err)
	}
}

// checkGroup says how the group differs from all n partitions committed
// at want.
func checkGroup(c *kafkatest.Cluster, n int, want int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	offs, err := c.Committed(ctx, group)
	if err != nil {
		return err
	}
	got := 0
	for t, ps := range offs {
		for p, o := range ps {
			if o.Offset != want {
				return fmt.Errorf("%s/%d committed at %d, want %d", t, p, o.Offset, want)
			}
			got++
		}
	}
	if got != n {
		return fmt.Errorf("%d partitions committed, want %d", got, n)
	}
	return nil
}

// pairedRatio is the median over rounds of a's figure over b's in the same
// round: the machine's drift from one round to the next cancels out.
func pairedRatio(a, b []processFigures, get func(processFigures) float64) float64 {
	v := make([]float64, 0, len(a))
	for i := range a {
		v = append(v, get(a[i])/get(b[i]))
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func meanRequests(m map[string]float64) string {
	keys := make([]string, 0, len(m))
	total := 0.0
	for k, v := range m {
		keys = append(keys, k)
		total += v
	}
	sort.Strings(keys)
	parts := []string{fmt.Sprintf("%.1f:", total)}
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.1f", k, m[k]))
	}
	return strings.Join(parts, " ")
}
