package runner_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// TestCommitAppliedAfterItsConnectionDroppedIsUnknown: every OffsetCommit
// loses its connection before the broker sees it, and the broker applies
// them once the runner has read back and seen nothing move. That is no
// "nothing changed" (exit 4): the runner cannot know, and says so
// (OutcomeUnknown, exit 5). The retry with the same run ID settles it: it
// finds the late commit and moves nothing again (a shift never shifts
// twice).
func TestCommitAppliedAfterItsConnectionDroppedIsUnknown(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	px := kafkatest.NewProxy(t, c)
	var held atomic.Int32
	px.SetHook(func(req kmsg.Request, answer kmsg.Response) kafkatest.Verdict {
		if r, ok := req.(*kmsg.OffsetCommitRequest); ok && r.Group == group {
			held.Add(1)
			return kafkatest.Hold
		}
		return kafkatest.Pass
	})
	args := []string{"--bootstrap-servers", px.Bootstrap(), "--group", group, "--topic", topic, "--to", "shift:-10", "--run-id", "late", "--timeout", "8s"}
	o := runCtx(t, context.Background(), nil, args...).mustCode(t, report.ExitPartiallyApplied)
	if o.result.Reason != report.ReasonOutcomeUnknown || !strings.Contains(o.result.Error, "retry with the same run ID") || o.result.Totals.Applied != 0 {
		t.Fatalf("reason %s, applied %d: %s", o.result.Reason, o.result.Totals.Applied, o.result.Error)
	}
	if strings.Contains(o.result.Error, "nothing changed") || strings.Contains(o.stderr, "nothing was changed") {
		t.Fatalf("claims nothing changed: %s", o.result.Error)
	}
	if held.Load() == 0 {
		t.Fatal("no OffsetCommit reached the proxy")
	}
	// The broker applies what it got, late.
	px.SetHook(nil)
	if n, err := px.Release(); err != nil || n == 0 {
		t.Fatalf("release: %d, %v", n, err)
	}
	for k, v := range offsetsOf(t, c, group) {
		if v != committed-10 {
			t.Fatalf("%s at %d after the late commit, want %d", k, v, committed-10)
		}
	}
	// The retry finds it, and shifts nothing a second time.
	o = runCtx(t, context.Background(), nil, args...).mustCode(t, report.ExitOK)
	if o.result.Reason != report.ReasonAlreadyApplied {
		t.Fatalf("retry: %s: %s", o.result.Reason, o.result.Error)
	}
	for k, v := range offsetsOf(t, c, group) {
		if v != committed-10 {
			t.Errorf("%s at %d after the retry, want %d", k, v, committed-10)
		}
	}
}

// TestCommitStillUnappliedIsSettledByTheRetry: the same lost commit, never
// applied: the outcome is unknown all the same, and the retry with the
// same run ID commits it, once.
func TestCommitStillUnappliedIsSettledByTheRetry(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	px := kafkatest.NewProxy(t, c)
	px.SetHook(func(req kmsg.Request, answer kmsg.Response) kafkatest.Verdict {
		if _, ok := req.(*kmsg.OffsetCommitRequest); ok {
			return kafkatest.Hold
		}
		return kafkatest.Pass
	})
	args := []string{"--bootstrap-servers", px.Bootstrap(), "--group", group, "--topic", topic, "--to", "shift:-10", "--run-id", "lost", "--timeout", "8s"}
	o := runCtx(t, context.Background(), nil, args...).mustCode(t, report.ExitPartiallyApplied)
	if o.result.Reason != report.ReasonOutcomeUnknown {
		t.Fatalf("reason %s: %s", o.result.Reason, o.result.Error)
	}
	px.SetHook(nil)
	o = runCtx(t, context.Background(), nil, args...).mustCode(t, report.ExitOK)
	if o.result.Reason != report.ReasonApplied {
		t.Fatalf("retry: %s: %s", o.result.Reason, o.result.Error)
	}
	assertMatchesKafka(t, c, o.result)
	// A partition elsewhere is explained by what the retry saw of it (a
	// log start moved by the broker's retention clamped it once).
	seen := map[string]report.Partition{}
	for _, p := range o.result.Partitions {
		seen[fmt.Sprintf("%s/%d", p.Topic, p.Partition)] = p
	}
	for k, v := range offsetsOf(t, c, group) {
		if v != committed-10 {
			p := seen[k]
			t.Errorf("%s at %d, want %d; the retry saw log [%d, %d], note %q", k, v, committed-10, p.LogStartOffset, p.LogEndOffset, p.Note)
		}
	}
}

// TestCommitAppliedButUnansweredIsApplied: the broker applies the commit
// and its answer is lost with the connection; the read-back shows this
// run's commit, so the run is Applied, whatever the commit answered.
func TestCommitAppliedButUnansweredIsApplied(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	px := kafkatest.NewProxy(t, c)
	px.SetHook(func(req kmsg.Request, answer kmsg.Response) kafkatest.Verdict {
		if _, ok := req.(*kmsg.OffsetCommitRequest); ok && answer != nil {
			return kafkatest.Drop
		}
		return kafkatest.Pass
	})
	o := runCtx(t, context.Background(), nil, "--bootstrap-servers", px.Bootstrap(), "--group", group, "--topic", topic, "--to", "shift:-10", "--run-id", "dropped", "--timeout", "8s").mustCode(t, report.ExitOK)
	if o.result.Reason != report.ReasonApplied {
		t.Fatalf("reason %s: %s", o.result.Reason, o.result.Error)
	}
	assertMatchesKafka(t, c, o.result)
}
