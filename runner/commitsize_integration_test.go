package runner_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// bigCommit is a world whose commit exceeds Kafka's default limit on one
// commit request (1 MiB of records in __consumer_offsets): 2,000
// partitions, committed at 2, and the longest run ID a run may have, which
// every partition's mark carries.
const (
	bigTopic = "big"
	bigParts = 2000
)

var longRunID = strings.Repeat("r", config.MaxRunIDLength)

func bigCommitWorld(t *testing.T) (*kafkatest.Cluster, *kafkatest.Proxy) {
	t.Helper()
	c := kafkatest.New(t, 3)
	// Apache Kafka on a loaded machine takes a while to create 2,000
	// partitions.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := c.Seed(ctx, bigTopic, bigParts, 3, base, time.Second); err != nil {
		t.Fatal(err)
	}
	offs := kafkatest.Offsets{bigTopic: {}}
	for p := int32(0); p < bigParts; p++ {
		offs[bigTopic][p] = 2
	}
	if err := c.Commit(ctx, group, offs, "consumer"); err != nil {
		t.Fatal(err)
	}
	return c, kafkatest.NewProxy(t, c)
}

// commitRequests records the partitions of each OffsetCommit the proxy
// sees, in order.
type commitRequests struct {
	mu    sync.Mutex
	parts []int
}

func (r *commitRequests) see(req kmsg.Request) {
	if oc, ok := req.(*kmsg.OffsetCommitRequest); ok && oc.Group == group {
		n := 0
		for _, t := range oc.Topics {
			n += len(t.Partitions)
		}
		r.mu.Lock()
		r.parts = append(r.parts, n)
		r.mu.Unlock()
	}
}

// TestCommitLargerThanKafkasLimitIsSplit: a commit of 2,000 partitions
// whose marks carry a 512-character run ID (about 1.2 MB of records) is
// sent as several OffsetCommit requests, each within the limit, and every
// partition is applied and verified. In one request, Apache Kafka refuses
// it whole (UNKNOWN_SERVER_ERROR: the coordinator's batch is too large),
// and the run ends OutcomeUnknown.
func TestCommitLargerThanKafkasLimitIsSplit(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c, px := bigCommitWorld(t)
	var seen commitRequests
	px.SetHook(func(req kmsg.Request, answer kmsg.Response) kafkatest.Verdict {
		if answer == nil {
			seen.see(req)
		}
		return kafkatest.Pass
	})
	o := runCtx(t, context.Background(), nil, "--bootstrap-servers", px.Bootstrap(), "--group", group, "--topic", bigTopic,
		"--to", "shift:-1", "--run-id", longRunID, "--output", "json").mustCode(t, report.ExitOK)
	if o.result.Reason != report.ReasonApplied || o.result.Totals.Applied != bigParts {
		t.Fatalf("%s, %d applied: %s", o.result.Reason, o.result.Totals.Applied, o.result.Error)
	}
	total := 0
	for _, n := range seen.parts {
		total += n
	}
	if len(seen.parts) < 2 || total != bigParts {
		t.Fatalf("OffsetCommit requests of %v partitions: want at least two, %d partitions in all", seen.parts, bigParts)
	}
	t.Logf("OffsetCommit requests of %v partitions", seen.parts)
	assertMatchesKafka(t, c, o.result)
	for k, v := range offsetsOf(t, c, group) {
		if v != 1 {
			t.Errorf("%s at %d, want 1", k, v)
		}
	}
}

// TestCommitPartLostIsPartialAndTheRetryCompletesIt: the split commit's
// first part is applied, its later parts never reach the broker. The run
// says exactly that (PartiallyApplied, naming what is not applied), and
// the retry with the same run ID commits the rest, once: no partition is
// shifted twice.
func TestCommitPartLostIsPartialAndTheRetryCompletesIt(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c, px := bigCommitWorld(t)
	var seen commitRequests
	px.SetHook(func(req kmsg.Request, answer kmsg.Response) kafkatest.Verdict {
		if _, ok := req.(*kmsg.OffsetCommitRequest); !ok || answer != nil {
			return kafkatest.Pass
		}
		seen.see(req)
		seen.mu.Lock()
		defer seen.mu.Unlock()
		if len(seen.parts) > 1 {
			return kafkatest.Hold // never released
		}
		return kafkatest.Pass
	})
	args := []string{"--bootstrap-servers", px.Bootstrap(), "--group", group, "--topic", bigTopic,
		"--to", "shift:-1", "--run-id", longRunID, "--output", "json", "--timeout", "8s"}
	o := runCtx(t, context.Background(), nil, args...).mustCode(t, report.ExitPartiallyApplied)
	first := seen.parts[0]
	if o.result.Reason != report.ReasonPartiallyApplied || o.result.Totals.Applied != first {
		t.Fatalf("%s, %d applied, want %d (the first part): %s", o.result.Reason, o.result.Totals.Applied, first, o.result.Error)
	}
	if !strings.Contains(o.result.Error, "not at this run's commit") {
		t.Errorf("error does not name what is not applied: %s", o.result.Error)
	}
	moved := 0
	for _, v := range offsetsOf(t, c, group) {
		if v == 1 {
			moved++
		}
	}
	if moved != first {
		t.Fatalf("%d partitions moved, the result says %d", moved, first)
	}

	px.SetHook(nil)
	o = runCtx(t, context.Background(), nil, args...).mustCode(t, report.ExitOK)
	if o.result.Reason != report.ReasonApplied || o.result.Totals.Applied != bigParts {
		t.Fatalf("retry: %s, %d applied: %s", o.result.Reason, o.result.Totals.Applied, o.result.Error)
	}
	for k, v := range offsetsOf(t, c, group) {
		if v != 1 {
			t.Errorf("%s at %d, want 1: shifted once", k, v)
		}
	}
}
