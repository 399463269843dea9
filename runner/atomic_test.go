package runner_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// requestKinds records the kinds of request a proxy passes, in order.
type requestKinds struct {
	mu    sync.Mutex
	kinds []string
}

func (r *requestKinds) see(req kmsg.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kinds = append(r.kinds, kmsg.NameForKey(req.Key()))
}

func (r *requestKinds) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.kinds...)
}

// TestAtomicCommitIsOneTransaction: --commit-mode Atomic initialises the
// group's transactional ID before reading anything, commits the offsets
// in a transaction with the run's marks, and reads them back as applied;
// the result says Atomic. The retry finds the run's commit.
func TestAtomicCommitIsOneTransaction(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	px := kafkatest.NewProxy(t, c)
	var seen requestKinds
	px.SetHook(func(req kmsg.Request, answer kmsg.Response) kafkatest.Verdict {
		if answer == nil {
			seen.see(req)
		}
		return kafkatest.Pass
	})
	args := []string{"--bootstrap-servers", px.Bootstrap(), "--group", group, "--topic", topic, "--to", "shift:-10", "--run-id", "atomic", "--commit-mode", "Atomic"}
	o := runCtx(t, context.Background(), nil, args...).mustCode(t, report.ExitOK)
	if o.result.Reason != report.ReasonApplied || o.result.CommitMode != config.CommitModeAtomic {
		t.Fatalf("%s, mode %q: %s", o.result.Reason, o.result.CommitMode, o.result.Error)
	}
	assertMatchesKafka(t, c, o.result)
	for k, v := range offsetsOf(t, c, group) {
		if v != committed-10 {
			t.Errorf("%s at %d, want %d", k, v, committed-10)
		}
	}
	kinds := seen.list()
	first := func(kind string) int {
		for i, k := range kinds {
			if k == kind {
				return i
			}
		}
		t.Fatalf("no %s request: %v", kind, kinds)
		return -1
	}
	if first("InitProducerID") > first("OffsetFetch") {
		t.Errorf("the snapshot was read before the transactional ID was initialised: %v", kinds)
	}
	for _, k := range []string{"AddOffsetsToTxn", "TxnOffsetCommit", "EndTxn"} {
		first(k)
	}
	for _, k := range kinds {
		if k == "OffsetCommit" {
			t.Errorf("an OffsetCommit in an Atomic run: %v", kinds)
		}
	}
	o = runCtx(t, context.Background(), nil, args...).mustCode(t, report.ExitOK)
	if o.result.Reason != report.ReasonAlreadyApplied {
		t.Fatalf("retry: %s: %s", o.result.Reason, o.result.Error)
	}
	if !strings.Contains(committedOf(t, c, group)[topic][0].Metadata, "run=atomic") {
		t.Errorf("metadata %q", committedOf(t, c, group)[topic][0].Metadata)
	}
}

// TestTwoAtomicReplaysOfOneGroupOneCommits: two runners replay one group
// at the same time, one a process reaching the cluster through a proxy,
// the other in this process through the brokers' own addresses (two
// bootstrap lists the launcher's queue would take for two clusters). The
// first has initialised the group's transactional ID and planned when the
// second starts; the second fences it and commits. The first then ends
// Superseded (exit 8), having committed nothing, and says what fenced it.
func TestTwoAtomicReplaysOfOneGroupOneCommits(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	px := kafkatest.NewProxy(t, c)
	reached, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	px.SetHook(func(req kmsg.Request, answer kmsg.Response) kafkatest.Verdict {
		if _, ok := req.(*kmsg.AddOffsetsToTxnRequest); ok && answer == nil {
			once.Do(func() { close(reached) })
			<-release // the first runner's transaction waits here
		}
		return kafkatest.Pass
	})
	first := make(chan proc, 1)
	go func() {
		first <- runBinary(t, runnerBin, nil, "--bootstrap-servers", px.Bootstrap(), "--group", group, "--topic", topic,
			"--to", "shift:-5", "--run-id", "first", "--commit-mode", "Atomic", "--timeout", "60s")
	}()
	select {
	case <-reached:
	case <-testCtx(t).Done():
		close(release)
		t.Fatal("the first runner never began its transaction")
	}
	second := runCtx(t, context.Background(), c, "--group", group, "--topic", topic, "--to", "shift:-10", "--run-id", "second", "--commit-mode", "Atomic")
	close(release)
	p := <-first
	second.mustCode(t, report.ExitOK)
	if second.result.Reason != report.ReasonApplied {
		t.Fatalf("second: %s: %s", second.result.Reason, second.result.Error)
	}
	if p.result == nil {
		t.Fatalf("first: no result: %v\n%s", p.state, p.stderr)
	}
	if p.state.ExitCode() != int(report.ExitSuperseded) || p.result.Reason != report.ReasonSuperseded || p.result.Totals.Applied != 0 {
		t.Fatalf("first: exit %d, %s, %d applied: %s\n%s", p.state.ExitCode(), p.result.Reason, p.result.Totals.Applied, p.result.Error, p.stderr)
	}
	for _, want := range []string{config.TransactionalID(group), "nothing was committed", "run second"} {
		if !strings.Contains(p.result.Error, want) {
			t.Errorf("first: error does not say %q: %s", want, p.result.Error)
		}
	}
	// Exactly the second's commit.
	for tp, o := range committedOf(t, c, group)[topic] {
		if o.Offset != committed-10 || !strings.Contains(o.Metadata, "run=second") {
			t.Errorf("%s/%d at %d (%q), want %d by run second", topic, tp, o.Offset, o.Metadata, committed-10)
		}
	}
}

// TestAtomicCrashBeforeTheCommitIsSettledByTheRetry: the runner dies (an
// unrecoverable runtime error) with its offsets sent in its transaction
// and the transaction not committed. Nothing shows; the retry with the
// same run ID fences the dead one's transaction (Kafka aborts it), reads
// the offsets as they were, and applies the replay once.
func TestAtomicCrashBeforeTheCommitIsSettledByTheRetry(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	args := []string{"--bootstrap-servers", c.Bootstrap(), "--group", group, "--topic", topic, "--to", "shift:-10", "--run-id", "crashed", "--commit-mode", "Atomic"}
	p := runBinary(t, crashRunner(t), []string{"REPLAY_TEST_CRASH_AT=sent", "REPLAY_TEST_CRASH_MODE=fatal"}, args...)
	if p.state.Success() || !strings.Contains(p.stderr, "fatal error") {
		t.Fatalf("the runner did not die at the hook: %v\n%s", p.state, p.stderr)
	}
	// What it left before the commit: the pending outcome, never a success.
	if p.result != nil && p.result.ExitCode == report.ExitOK {
		t.Fatalf("the dead runner's result says %s", p.result.Reason)
	}
	assertUnchanged(t, c)
	o := runCtx(t, context.Background(), nil, args...).mustCode(t, report.ExitOK)
	if o.result.Reason != report.ReasonApplied || o.result.Totals.Applied != partitions {
		t.Fatalf("retry: %s, %d applied: %s", o.result.Reason, o.result.Totals.Applied, o.result.Error)
	}
	for k, v := range offsetsOf(t, c, group) {
		if v != committed-10 {
			t.Errorf("%s at %d, want %d: applied once", k, v, committed-10)
		}
	}
	o = runCtx(t, context.Background(), nil, args...).mustCode(t, report.ExitOK)
	if o.result.Reason != report.ReasonAlreadyApplied {
		t.Fatalf("second retry: %s: %s", o.result.Reason, o.result.Error)
	}
}

// TestAtomicWithoutTheACL: a Kafka user without the ACLs on the group's
// transactional ID (the broker answers InitProducerId with
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED, made here by the proxy). Atomic
// refuses, naming the ACLs it needs, with nothing committed; Auto commits
// Plain, and its result says so.
func TestAtomicWithoutTheACL(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	px := kafkatest.NewProxy(t, c)
	px.SetHook(func(req kmsg.Request, answer kmsg.Response) kafkatest.Verdict {
		if r, ok := answer.(*kmsg.InitProducerIDResponse); ok {
			r.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
			r.ProducerID, r.ProducerEpoch = -1, -1
		}
		return kafkatest.Pass
	})
	args := []string{"--bootstrap-servers", px.Bootstrap(), "--group", group, "--topic", topic, "--to", "shift:-10", "--run-id", "acl"}
	o := runCtx(t, context.Background(), nil, append(args, "--commit-mode", "Atomic")...).mustCode(t, report.ExitInvalidInput)
	for _, want := range []string{"--commit-mode", "WRITE and DESCRIBE on TransactionalId " + config.TransactionalID(group), "nothing was committed"} {
		if !strings.Contains(o.result.Error, want) {
			t.Errorf("error does not say %q: %s", want, o.result.Error)
		}
	}
	assertUnchanged(t, c)
	o = runCtx(t, context.Background(), nil, append(args, "--commit-mode", "Auto")...).mustCode(t, report.ExitOK)
	if o.result.CommitMode != config.CommitModePlain || o.result.Reason != report.ReasonApplied {
		t.Fatalf("Auto: mode %q, %s: %s", o.result.CommitMode, o.result.Reason, o.result.Error)
	}
	if !slices.ContainsFunc(o.result.Warnings, func(w string) bool { return strings.Contains(w, "committing Plain") }) {
		t.Errorf("Auto does not say it committed Plain: %v", o.result.Warnings)
	}
	assertMatchesKafka(t, c, o.result)
}
