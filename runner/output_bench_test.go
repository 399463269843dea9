package runner

import (
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// thousandPartitions is a result of the benchmark's shape: 10 topics of
// 100 partitions, all applied.
func thousandPartitions() *report.Result {
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	res := &report.Result{Schema: report.Schema, Group: "g", RunID: "bench-1",
		Target:    report.Target{Given: "time:2024-01-01T00:00:05Z", Resolved: "time:2024-01-01T00:00:05Z"},
		Reason:    report.ReasonApplied,
		StartedAt: start, FinishedAt: start.Add(30 * time.Millisecond)}
	for i := range 1000 {
		prev, delta := int64(10), int64(5)
		res.Partitions = append(res.Partitions, report.Partition{Topic: fmt.Sprintf("t%03d", i/100), Partition: int32(i % 100),
			PreviousOffset: &prev, NewOffset: 5, Delta: &delta, LogEndOffset: 10, Applied: true})
	}
	return res
}

// BenchmarkEmit is the result's writing at 1,000 partitions, as a runner
// outside a pod writes it: the table to stdout, no result file, no
// termination message.
func BenchmarkEmit(b *testing.B) {
	cfg := &config.Config{Output: config.OutputTable}
	red := config.Properties{"sasl.password": "s3cr3t-value"}.Redactor().WithNames(config.FieldNamesFlags)
	log := slog.New(slog.DiscardHandler)
	for b.Loop() {
		res := thousandPartitions()
		res.Summarize()
		emit(cfg, res, io.Discard, log, red)
	}
}
