package state

import (
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kafka-replay/kafka-replay/runner/report"
)

func TestReasonLabel(t *testing.T) {
	tests := []struct{ reason, want string }{
		{string(report.ReasonApplied), "Applied"},
		{string(report.ReasonCredentialsNotBound), "CredentialsNotBound"},
		{ReasonOOMKilled, ReasonOOMKilled},
		{ReasonDeadlineExceeded, ReasonDeadlineExceeded},
		{"", ReasonOther},
		{"Applied2", ReasonOther},
		{"applied", ReasonOther},
		{"WhateverARunnerLabelledJobWrites", ReasonOther},
	}
	for _, tt := range tests {
		if got := ReasonLabel(tt.reason); got != tt.want {
			t.Errorf("ReasonLabel(%q) = %q, want %q", tt.reason, got, tt.want)
		}
	}
	// Every reason the runner writes is its own label.
	for _, r := range report.Reasons() {
		if ReasonLabel(string(r)) != string(r) {
			t.Errorf("runner reason %q is labelled %q", r, ReasonLabel(string(r)))
		}
	}
}

func TestCounterIncrement(t *testing.T) {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "test_total"})
	for _, n := range []int64{-1, math.MinInt64, 0, 5, math.MaxInt64} {
		inc := CounterIncrement(n)
		if inc < 0 || math.IsNaN(inc) || math.IsInf(inc, 0) {
			t.Errorf("CounterIncrement(%d) = %v", n, inc)
		}
		c.Add(inc) // panics on a negative value
	}
	if got := CounterIncrement(5); got != 5 {
		t.Errorf("CounterIncrement(5) = %v", got)
	}
}
