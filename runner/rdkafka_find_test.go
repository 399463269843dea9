//go:build linux

package runner_test

import (
	"runtime"
	"sync"
	"testing"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-replay/kafka-replay/runner"
	"github.com/kafka-replay/kafka-replay/runner/internal/rdkafkacheck"
)

// TestFindWrapperAgreesWithLibrdkafka runs random operations on librdkafka
// partition lists, including changes the wrapper cannot see (appends and
// deletions through other functions, sorting, copies, lists re-created at
// the same address), and compares every lookup with librdkafka's own
// search: the same element for lists without duplicates, a matching one
// with them. Both outside and inside the OffsetFetch handler's window,
// where the index answers (there without deleting or sorting, which the
// handler never does). Two threads at once: the wrapper's state is per
// thread.
func TestFindWrapperAgreesWithLibrdkafka(t *testing.T) {
	if !*runner.FindHintOn || !*runner.FindIndexOn {
		t.Fatalf("the wrapper is off (hint %v, index %v): its layout check failed or librdkafka is not %s", *runner.FindHintOn, *runner.FindIndexOn, runner.ReviewedLibrdkafka)
	}
	var wg sync.WaitGroup
	for worker := range 2 {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for seed := uint64(1); seed <= 150; seed++ {
				for _, c := range []struct{ dups, window bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
					s := seed*2 + uint64(worker)*1000
					if bad, first := rdkafkacheck.Random(s, 3000, c.dups, c.window); bad > 0 {
						t.Errorf("seed %d, duplicates %v, in the handler's window %v: %d disagreements; first: %s", s, c.dups, c.window, bad, first)
					}
				}
			}
		})
	}
	wg.Wait()
}

// TestLibrdkafkaVersionReviewed fails when confluent-kafka-go brings
// another librdkafka: rdkafka_find.c wraps rd_kafka_handle_OffsetFetch, an
// internal function, and its index relies on what that handler does to its
// list. Read the new version's handler (rdkafka_request.c) and its
// callers' use of rd_kafka_topic_partition_list_find, then update
// reviewedLibrdkafka.
func TestLibrdkafkaVersionReviewed(t *testing.T) {
	if _, v := kafka.LibraryVersion(); v != runner.ReviewedLibrdkafka {
		t.Fatalf("librdkafka is %s; rdkafka_find.c was reviewed against %s", v, runner.ReviewedLibrdkafka)
	}
}

// TestFindWrapperHandlers replays the two handlers' lookups at 10,000
// partitions and checks the answers and that the index and the hint, not
// librdkafka's linear search, gave them.
func TestFindWrapperHandlers(t *testing.T) {
	const n = 10000
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h0, i0, m0 := runner.FindCounts()
	if bad := rdkafkacheck.Handlers(n); bad != 0 {
		t.Fatalf("%d wrong answers", bad)
	}
	h, i, m := runner.FindCounts()
	t.Logf("hint %d, index %d, librdkafka %d", h-h0, i-i0, m-m0)
	// The build: n misses answered by the index; the in-order lookups: by
	// the index too (the list is still the one it built), or the hint.
	if i-i0+h-h0 < 2*n || m-m0 > 4 {
		t.Errorf("lookups: hint %d, index %d, librdkafka's search %d; want about %d by the index or hint", h-h0, i-i0, m-m0, 2*n)
	}
}

// TestFindWrapperOnARealRun checks that a real run's lookups go through the
// wrapper: the all-offsets read through the index, the commit's response
// through the hint. If a librdkafka upgrade moves these calls (or the link
// flags are lost) this fails, instead of the benchmark quietly slowing down.
func TestFindWrapperOnARealRun(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	t.Setenv("REPLAY_TERMINATION_MESSAGE_PATH", "")
	const topics, parts = 10, 200
	c, scope := scaleWorld(t, topics, parts, 10)
	h0, i0, m0 := runner.FindCounts()
	countedRun(t, c, "find", scope)
	h, i, m := runner.FindCounts()
	n := uint64(topics * parts)
	t.Logf("%d partitions: hint %d, index %d, librdkafka %d", n, h-h0, i-i0, m-m0)
	if i-i0 < n {
		t.Errorf("index answered %d lookups, want at least %d (the all-offsets read)", i-i0, n)
	}
	if h-h0 < n-1 { // the first lookup of a list is librdkafka's
		t.Errorf("hint answered %d lookups, want at least %d (the commit's response)", h-h0, n-1)
	}
	if m-m0 > n/10 {
		t.Errorf("librdkafka's search ran %d times, want few", m-m0)
	}
}
