package launcher

import (
	"testing"

	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

func TestUnitObserveOutcome(t *testing.T) {
	before := promtest.ToFloat64(requestsTotal.WithLabelValues(v1alpha1.OutcomeSucceeded, "Applied"))
	reconsumed := promtest.ToFloat64(messagesReconsumed)
	observeOutcome(record.Outcome{Succeeded: true, Reason: "Applied", Result: testutil.Result("g", report.ExitOK, 40, 2), FinishedAt: t0}, t0.Add(-30e9))
	if got := promtest.ToFloat64(requestsTotal.WithLabelValues(v1alpha1.OutcomeSucceeded, "Applied")); got != before+1 {
		t.Fatalf("requests_total = %v, want %v", got, before+1)
	}
	if got := promtest.ToFloat64(messagesReconsumed); got != reconsumed+42 {
		t.Fatalf("messages_reconsumed_total = %v, want +42", got)
	}
	// A dry run re-consumes nothing.
	dry := testutil.Result("g", report.ExitOK, 5)
	dry.DryRun = true
	observeOutcome(record.Outcome{Succeeded: true, Reason: "DryRun", Result: dry}, t0)
	if got := promtest.ToFloat64(messagesReconsumed); got != reconsumed+42 {
		t.Fatalf("dry run counted: %v", got)
	}
	if n := promtest.CollectAndCount(requestDuration); n == 0 {
		t.Fatal("no duration observed")
	}
}

func TestUnitBearerToken(t *testing.T) {
	for _, c := range []struct {
		header, token string
		ok            bool
	}{
		{"Bearer abc.def", "abc.def", true},
		{"bearer abc", "abc", true},
		{"  Bearer   abc  ", "abc", true},
		{"", "", false},
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"Basic dXNlcjpwYXNz", "", false},
		{"Bearer a b", "", false},
		{"Bearerabc", "", false},
	} {
		if token, ok := bearerToken(c.header); token != c.token || ok != c.ok {
			t.Errorf("bearerToken(%q) = %q, %v; want %q, %v", c.header, token, ok, c.token, c.ok)
		}
	}
}
