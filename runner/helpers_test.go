package runner_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kafka-replay/kafka-replay/runner"
	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// The seeded world most tests share: topic "orders", 4 partitions, 100
// records each, record i stamped base+i seconds; group "billing" has
// committed offset 80 everywhere.
const (
	topic      = "orders"
	partitions = 4
	records    = 100
	group      = "billing"
	committed  = 80
)

var base = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func seeded(t *testing.T) *kafkatest.Cluster {
	t.Helper()
	return seededWith(t)
}

// seededWith is seeded, with kfake options for the embedded cluster.
func seededWith(t *testing.T, opts ...kfake.Opt) *kafkatest.Cluster {
	t.Helper()
	c := kafkatest.New(t, 3, opts...)
	ctx := testCtx(t)
	if err := c.Seed(ctx, topic, partitions, records, base, time.Second); err != nil {
		t.Fatalf("seed: %v", err)
	}
	commitAll(t, c, group, topic, partitions, committed)
	return c
}

// assertUnchanged fails the test for each partition of the group that is
// no longer at the offset seeded committed it at.
func assertUnchanged(t *testing.T, c *kafkatest.Cluster) {
	t.Helper()
	for k, v := range offsetsOf(t, c, group) {
		if v != committed {
			t.Errorf("%s changed to %d", k, v)
		}
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func commitAll(t *testing.T, c *kafkatest.Cluster, group, topic string, parts int32, off int64) {
	t.Helper()
	offs := kafkatest.Offsets{topic: {}}
	for p := int32(0); p < parts; p++ {
		offs[topic][p] = off
	}
	if err := c.Commit(testCtx(t), group, offs, "consumer"); err != nil {
		t.Fatalf("commit: %v", err)
	}
}

// outcome is everything one runner invocation produced.
type outcome struct {
	code        int
	stdout      string
	stderr      string
	result      *report.Result // from the result file
	termination *report.Result // from the termination message
	termRaw     string
	resultRaw   string
}

// run invokes the runner in-process, with a result file and a termination
// message file, and decodes both.
func run(t *testing.T, c *kafkatest.Cluster, args ...string) outcome {
	t.Helper()
	return runCtx(t, context.Background(), c, args...)
}

func runCtx(t *testing.T, ctx context.Context, c *kafkatest.Cluster, args ...string) outcome {
	t.Helper()
	dir := t.TempDir()
	resultFile := filepath.Join(dir, "result.json")
	termFile := filepath.Join(dir, "termination-log")
	t.Setenv("REPLAY_TERMINATION_MESSAGE_PATH", termFile)
	full := []string{"--result-file", resultFile}
	if !slices.Contains(args, "--timeout") {
		full = append(full, "--timeout", "20s")
	}
	if c != nil {
		full = append(full, "--bootstrap-servers", c.Bootstrap())
	}
	full = append(full, args...)
	var stdout, stderr bytes.Buffer
	code := runner.Main(ctx, full, &stdout, &stderr)
	o := outcome{code: code, stdout: stdout.String(), stderr: stderr.String()}
	o.result, o.resultRaw = decodeFile(t, resultFile)
	o.termination, o.termRaw = decodeFile(t, termFile)
	if o.result == nil {
		t.Fatalf("no result file written (exit %d)\nstderr:\n%s", code, o.stderr)
	}
	if report.ExitCode(code) != o.result.ExitCode {
		t.Fatalf("exit code %d but result says %d", code, o.result.ExitCode)
	}
	return o
}

func decodeFile(t *testing.T, path string) (*report.Result, string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, ""
	}
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.Decode(b)
	if err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return r, string(b)
}

// mustCode fails the test unless the run exited with want.
func (o outcome) mustCode(t *testing.T, want report.ExitCode) outcome {
	t.Helper()
	if o.code != int(want) {
		t.Fatalf("exit code %d, want %d\nerror: %s\nstderr:\n%s\nstdout:\n%s", o.code, want, o.result.Error, o.stderr, o.stdout)
	}
	return o
}

// committedOf reads a group's offsets with the independent (franz-go) client.
func committedOf(t *testing.T, c *kafkatest.Cluster, group string) map[string]map[int32]kafkatest.CommittedOffset {
	t.Helper()
	offs, err := c.Committed(testCtx(t), group)
	if err != nil {
		t.Fatalf("read committed offsets: %v", err)
	}
	return offs
}

// offsetsOf flattens committed offsets to "topic/partition" → offset.
func offsetsOf(t *testing.T, c *kafkatest.Cluster, group string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for tp, ps := range committedOf(t, c, group) {
		for p, o := range ps {
			out[fmt.Sprintf("%s/%d", tp, p)] = o.Offset
		}
	}
	return out
}

// assertMatchesKafka checks that every partition the result reports as
// committed is what an independent client reads back, with this run's
// metadata.
func assertMatchesKafka(t *testing.T, c *kafkatest.Cluster, res *report.Result) {
	t.Helper()
	got := committedOf(t, c, res.Group)
	if len(res.Partitions) == 0 {
		t.Fatal("result lists no partitions")
	}
	for _, p := range res.Partitions {
		co, ok := got[p.Topic][p.Partition]
		if !ok {
			t.Errorf("%s/%d: not committed", p.Topic, p.Partition)
			continue
		}
		if co.Offset != p.NewOffset {
			t.Errorf("%s/%d: committed %d, result says %d", p.Topic, p.Partition, co.Offset, p.NewOffset)
		}
		if !strings.Contains(co.Metadata, "run="+res.RunID) {
			t.Errorf("%s/%d: metadata %q lacks run=%s", p.Topic, p.Partition, co.Metadata, res.RunID)
		}
		if p.PreviousOffset != nil && (p.Delta == nil || *p.Delta != *p.PreviousOffset-p.NewOffset) {
			t.Errorf("%s/%d: delta %v != previous %d - new %d", p.Topic, p.Partition, p.Delta, *p.PreviousOffset, p.NewOffset)
		}
	}
}

// newOffsets maps "topic/partition" → new offset in a result.
func newOffsets(res *report.Result) map[string]int64 {
	out := map[string]int64{}
	for _, p := range res.Partitions {
		out[fmt.Sprintf("%s/%d", p.Topic, p.Partition)] = p.NewOffset
	}
	return out
}

func equalMaps(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

var runnerBin string

// TestMain builds the runner binary once, for the tests that need a real
// process (signals, stdout/stderr of the whole program, peak memory). Under
// KAFKA_REPLAY_TEST_APACHE all tests share one 3-node Apache Kafka cluster
// that each test finds empty.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // unit tests only: no binary needed
	}
	run := func() int { return kafkatest.RunShared(m, 3) } // one Apache Kafka for all tests
	dir, err := os.MkdirTemp("", "kafka-replay-runner-bin")
	if err != nil {
		panic(err)
	}
	code := func() int {
		defer func() { _ = os.RemoveAll(dir) }()
		runnerBin = filepath.Join(dir, "runner")
		// Built as Dockerfile.runner builds it, so that the tests and
		// make bench run the binary the image ships.
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", runnerBin, "../cmd/runner")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build runner:", err)
			return 1
		}
		return run()
	}()
	os.Exit(code)
}
