package runner_test

import (
	"context"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// txnCommit commits offset on every partition of topic for group in one
// transaction, as a non-member (generation -1, no member ID: librdkafka's
// rd_kafka_consumer_group_metadata_new), the way an Atomic run does.
func txnCommit(t *testing.T, c *kafkatest.Cluster, group string, offset int64) error {
	t.Helper()
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": c.Bootstrap(), "transactional.id": "proof." + group, "log_level": 3})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	go func() {
		for range p.Events() {
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := p.InitTransactions(ctx); err != nil {
		t.Fatalf("init: %v", err)
	}
	if err := p.BeginTransaction(); err != nil {
		t.Fatalf("begin: %v", err)
	}
	md, err := kafka.NewTestConsumerGroupMetadata(group)
	if err != nil {
		t.Fatal(err)
	}
	tps := make([]kafka.TopicPartition, partitions)
	for i := range tps {
		name, meta := topic, "proof"
		tps[i] = kafka.TopicPartition{Topic: &name, Partition: int32(i), Offset: kafka.Offset(offset), Metadata: &meta}
	}
	if err := p.SendOffsetsToTransaction(ctx, tps, md); err != nil {
		if aerr := p.AbortTransaction(ctx); aerr != nil {
			t.Logf("abort: %v", aerr)
		}
		return err
	}
	return p.CommitTransaction(ctx)
}

// waitState waits until group is in state.
func waitState(t *testing.T, c *kafkatest.Cluster, group, state string) {
	t.Helper()
	ctx := testCtx(t)
	for {
		g, err := c.Group(ctx, group)
		if err == nil && g.State == state {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("group %s never %s (last: %+v, %v)", group, state, g, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestCoordinatorOnANonMembersTransactionalCommit is what Apache Kafka
// 4.4's group coordinator does with the transactional commit of an Atomic
// run (OffsetMetadataManager.validateTransactionalOffsetCommit): it takes
// it for an empty classic group, an empty KIP-848 consumer group and a
// group that does not exist yet (which it creates, as a classic group);
// and, unlike the 3.x coordinator, it takes it from a group with a live
// member too, of either kind (ClassicGroup.validateOffsetCommit and
// ConsumerGroup.validateOffsetCommit let a transactional commit without
// member, instance and generation through). So the runner's own check is
// what keeps an Atomic run off a live group: it refuses both kinds, with
// nothing committed.
func TestCoordinatorOnANonMembersTransactionalCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	if c.Apache == nil {
		t.Skip("Apache Kafka's group coordinator's rules (kfake has no KIP-848 groups)")
	}
	member := func(t *testing.T, g, proto string) *kafkatest.Member {
		t.Helper()
		commitAll(t, c, g, topic, partitions, committed)
		m, err := c.JoinWith(testCtx(t), kafkatest.JoinOptions{Group: g, ClientID: g + "-worker", Topics: []string{topic}, Protocol: proto})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	// A transaction's offsets show once its markers are written, a moment
	// after CommitTransaction returns: read until they do.
	atOffset := func(t *testing.T, g string, want int64) {
		t.Helper()
		ctx := testCtx(t)
		for {
			got := offsetsOf(t, c, g)
			n := 0
			for _, v := range got {
				if v == want {
					n++
				}
			}
			if n == partitions && len(got) == partitions {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatalf("offsets %v, want %d on each of %d partitions", got, want, partitions)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	for _, proto := range []string{kafkatest.ProtocolClassic, kafkatest.ProtocolConsumer} {
		t.Run(proto+"/empty: taken", func(t *testing.T) {
			g := proto + "-empty"
			member(t, g, proto).Leave()
			waitState(t, c, g, "Empty")
			if err := txnCommit(t, c, g, 50); err != nil {
				t.Fatalf("refused: %v", err)
			}
			atOffset(t, g, 50)
		})
	}
	t.Run("a group that does not exist yet: taken", func(t *testing.T) {
		g := "not-yet"
		if info := groupOf(t, c, g); info.Type != "" {
			t.Fatalf("group exists: %+v", info)
		}
		if err := txnCommit(t, c, g, 50); err != nil {
			t.Fatalf("refused: %v", err)
		}
		atOffset(t, g, 50)
		if info := groupOf(t, c, g); info.Type != kafkatest.ProtocolClassic {
			t.Errorf("the coordinator made a group of type %q, want classic", info.Type)
		}
	})
	// Kafka 4.4's ConsumerGroup.validateOffsetCommit lets a transactional
	// commit with member epoch -1, no member ID and no instance ID through,
	// members or not (the 3.x coordinator refused it, UNKNOWN_MEMBER_ID), as
	// ClassicGroup.validateOffsetCommit always has.
	for _, proto := range []string{kafkatest.ProtocolConsumer, kafkatest.ProtocolClassic} {
		t.Run(proto+"/live: taken by the coordinator, refused by the runner", func(t *testing.T) {
			g := proto + "-live"
			m := member(t, g, proto)
			defer m.Leave()
			if err := txnCommit(t, c, g, 50); err != nil {
				t.Fatalf("the coordinator refused it (%v): Kafka's rule changed, and docs/usage.md says otherwise", err)
			}
			atOffset(t, g, 50)
			atomicRefused(t, c, g)
		})
	}
}

// atomicRefused runs an Atomic replay of a live group: refused (exit 3),
// nothing committed.
func atomicRefused(t *testing.T, c *kafkatest.Cluster, g string) {
	t.Helper()
	before := offsetsOf(t, c, g)
	o := run(t, c, "--group", g, "--topic", topic, "--to", "earliest", "--commit-mode", "Atomic").mustCode(t, report.ExitGroupActive)
	if got := offsetsOf(t, c, g); !equalMaps(got, before) {
		t.Errorf("offsets changed: %v → %v", before, got)
	}
	if o.result.Totals.Applied != 0 {
		t.Errorf("%d applied", o.result.Totals.Applied)
	}
}
