package launcher

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

// Metrics, registered next to controller-runtime's own on its /metrics
// endpoint. Each finished replay, from a request or a runbook Job, is counted
// once: when its outcome is first recorded.
var (
	requestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kafkareplay_requests_total",
		Help: "Finished replays by outcome (Succeeded, Failed) and reason (Applied, GroupActive, ...).",
	}, []string{"outcome", "reason"})

	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kafkareplay_request_duration_seconds",
		Help:    "Time from a replay's start (request creation, or runbook Job start) to its recorded outcome.",
		Buckets: []float64{1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600},
	}, []string{"outcome"})

	messagesReconsumed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kafkareplay_messages_reconsumed_total",
		Help: "Messages that consumer groups were set to consume again (dry runs excluded).",
	})

	messagesSkipped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kafkareplay_messages_skipped_total",
		Help: "Messages that consumer groups were moved past without consuming (dry runs excluded).",
	})
)

func init() {
	metrics.Registry.MustRegister(requestsTotal, requestDuration, messagesReconsumed, messagesSkipped)
}

// observeOutcome counts one finished replay.
func observeOutcome(o record.Outcome, started time.Time) {
	// Label values from fixed sets only (metriclabels.go).
	outcome := state.OutcomeLabel(o.Succeeded)
	requestsTotal.WithLabelValues(outcome, state.ReasonLabel(o.Reason)).Inc()
	if !started.IsZero() {
		end := o.FinishedAt
		if end.IsZero() {
			end = time.Now()
		}
		requestDuration.WithLabelValues(outcome).Observe(end.Sub(started).Seconds())
	}
	if r := o.Result; r != nil && !r.DryRun && !r.AlreadyApplied && o.Succeeded {
		messagesReconsumed.Add(state.CounterIncrement(r.Totals.MessagesToReconsume))
		messagesSkipped.Add(state.CounterIncrement(r.Totals.MessagesSkipped))
	}
}
