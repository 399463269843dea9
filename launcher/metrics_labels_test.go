package launcher

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// Any Job labelled as a runner can write a result: its reason does not
// become a label value of its own, and its negative totals do not panic
// the counters.
func TestUnitObserveOutcomeFromAForgedResult(t *testing.T) {
	other := promtest.ToFloat64(requestsTotal.WithLabelValues(v1alpha1.OutcomeSucceeded, state.ReasonOther))
	reconsumed, skipped := promtest.ToFloat64(messagesReconsumed), promtest.ToFloat64(messagesSkipped)
	forged := testutil.Result("g", report.ExitOK, 5)
	forged.Totals.MessagesToReconsume, forged.Totals.MessagesSkipped = -1000, -1
	observeOutcome(record.Outcome{Succeeded: true, Reason: "Reason-x7f3a9", Result: forged}, t0)
	if got := promtest.ToFloat64(requestsTotal.WithLabelValues(v1alpha1.OutcomeSucceeded, state.ReasonOther)); got != other+1 {
		t.Errorf("requests_total{reason=Other} = %v, want %v", got, other+1)
	}
	if n := promtest.CollectAndCount(requestsTotal); n == 0 {
		t.Fatal("nothing collected")
	}
	if got := promtest.ToFloat64(messagesReconsumed); got != reconsumed {
		t.Errorf("messages_reconsumed_total moved by a negative total: %v, was %v", got, reconsumed)
	}
	if got := promtest.ToFloat64(messagesSkipped); got != skipped {
		t.Errorf("messages_skipped_total moved by a negative total: %v, was %v", got, skipped)
	}
	// No series carries the forged reason.
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(requestsTotal)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == "Reason-x7f3a9" {
					t.Errorf("a series carries the forged reason: %v", m)
				}
			}
		}
	}
}
