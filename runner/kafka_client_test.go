package runner

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/config"
)

// countLibrdkafka counts the log records forwarded from librdkafka.
type countLibrdkafka struct{ n *atomic.Int64 }

func (h countLibrdkafka) Enabled(context.Context, slog.Level) bool { return true }
func (h countLibrdkafka) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "librdkafka: ") {
		h.n.Add(1)
	}
	return nil
}
func (h countLibrdkafka) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countLibrdkafka) WithGroup(string) slog.Handler      { return h }

// librdkafka's log lines come to the runner's logger as events on the
// client's queue, more than 64 of them (the channel confluent-kafka-go's
// binding once had), whatever the properties say (log.queue=false would
// have librdkafka write them to stderr itself, unredacted), and Close
// returns. No Kafka is needed: the lines are librdkafka's configuration
// dump and its attempts at a closed port (the first burst is some 60
// lines, the next comes with a reconnect).
func TestClientForwardsEveryLogLineAndCloses(t *testing.T) {
	var n atomic.Int64
	cfg := &config.Config{BootstrapServers: "127.0.0.1:1", KafkaProperties: config.Properties{
		"debug":     "generic,broker,topic,metadata,feature,queue,msg,protocol,cgrp,security,fetch,interceptor,plugin,consumer,admin,eos,conf",
		"log.queue": "false",
	}}
	k, err := newKafkaClient(cfg, slog.New(countLibrdkafka{&n}))
	if err != nil {
		t.Fatal(err)
	}
	// A bound on waiting, not a measurement: the lines come within
	// milliseconds; a run that never gets them fails here.
	deadline := time.Now().Add(30 * time.Second)
	for n.Load() <= 64 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d librdkafka lines forwarded; the event queue is not drained, or not the log's", n.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	closed := make(chan struct{})
	go func() {
		k.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return")
	}
}
