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

// The client's log channel is ours and small (64 slots): a verbose
// librdkafka's lines still reach the logger, more than the channel holds,
// and Close still returns, which it would not if it did not close the
// channel the library leaves open. No Kafka is needed: the lines are
// librdkafka's configuration dump and its attempts at a closed port (the
// first burst is some 60 lines, the next comes with a reconnect).
func TestClientForwardsEveryLogLineAndCloses(t *testing.T) {
	var n atomic.Int64
	cfg := &config.Config{BootstrapServers: "127.0.0.1:1", KafkaProperties: config.Properties{
		"debug": "generic,broker,topic,metadata,feature,queue,msg,protocol,cgrp,security,fetch,interceptor,plugin,consumer,admin,eos,conf",
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
			t.Fatalf("only %d librdkafka lines forwarded; the log channel is not drained", n.Load())
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
		t.Fatal("Close did not return: the log channel was never closed")
	}
}
