//go:build linux && !musl

package runner

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/internal/cmem"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// TestCommitKeepsNoCopy commits 2,000 partitions ten times through one
// client and checks that the C heap does not keep a copy of each commit's
// partitions: confluent-kafka-go v2.11.1's AlterConsumerGroupOffsets, which
// the runner does not call (internal/rdkafka's Commit), kept about 130
// bytes per partition per commit here (2.6 MB); Commit leaves about 15
// (librdkafka's own state).
func TestCommitKeepsNoCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	const parts, commits = 2000, 10
	c := kafkatest.New(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.Seed(ctx, "leak", parts, 1, time.Unix(1700000000, 0), time.Second); err != nil {
		t.Fatal(err)
	}
	k, err := newKafkaClient(&config.Config{BootstrapServers: c.Bootstrap()}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	offsets := make([]commitOffset, parts)
	for i := range offsets {
		offsets[i] = commitOffset{TP: TP{Topic: "leak", Partition: int32(i)}, Offset: 1, Metadata: fmt.Sprintf("m%d", i)}
	}
	commit := func() {
		if ans := k.alter(ctx, "leak-group", offsets); ans.Err != nil || len(ans.Failed) > 0 {
			t.Fatalf("commit: %v %v", ans.Err, ans.Failed)
		}
	}
	commit() // librdkafka's own caches and connections, once
	before := cmem.InUse()
	for range commits {
		commit()
	}
	grew := cmem.InUse() - before
	t.Logf("C heap grew %d bytes over %d commits of %d partitions", grew, commits, parts)
	if limit := int64(commits * parts * 50); grew > limit {
		t.Errorf("C heap grew %d bytes over %d commits of %d partitions (more than %d): a copy per commit is kept", grew, commits, parts, limit)
	}
}
