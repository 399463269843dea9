package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-replay/kafka-replay/runner/config"
)

// An Atomic commit (--commit-mode Atomic, or Auto where allowed) goes
// through a Kafka transaction of its own producer, whose transactional.id
// is config.TransactionalID(group):
//
//   - InitTransactions, before the snapshot, fences every other producer
//     of that ID on the cluster, however it was addressed: another replay
//     of the group that has not committed yet can no longer commit, and a
//     transaction a crashed replay left open is aborted (or, if it was
//     committing, completed) first, so the snapshot reads settled offsets
//     (reads ask for stable offsets);
//   - the offsets go in TxnOffsetCommit requests (SendOffsetsToTransaction
//     with the group's metadata of a non-member: generation -1, no member
//     ID, librdkafka's rd_kafka_consumer_group_metadata_new), in parts of
//     at most commitBatchBytes, with the same commit metadata (marks) as a
//     plain commit;
//   - the group is described once more, and the transaction aborted if it
//     has members now: a classic group's coordinator takes a non-member's
//     transactional commit even from a group with members;
//   - CommitTransaction shows every offset at once, or none.
//
// A runner fenced by another ends Superseded, with nothing committed.

// txnCommitter is the transactional producer of an Atomic run: a
// confluent-kafka-go Producer of its own, beside the run's client, with
// the same properties and the transactional ID.
type txnCommitter struct {
	p    *kafka.Producer
	id   string
	log  *slog.Logger
	logs chan kafka.LogEvent
	done sync.WaitGroup
}

// newTxnProducer makes the producer; its log lines go through the run's
// (redacting) logger, as the client's do.
func newTxnProducer(cfg *config.Config, k *kafkaClient, id string) (*txnCommitter, error) {
	t := &txnCommitter{id: id, log: k.log, logs: make(chan kafka.LogEvent, 64)}
	cm := kafka.ConfigMap{}
	for key, v := range cfg.KafkaProperties {
		cm[key] = v
	}
	for key, v := range map[string]any{
		"bootstrap.servers":       cfg.BootstrapServers,
		"client.id":               clientID,
		"enable.metrics.push":     false,
		"transactional.id":        id,
		"transaction.timeout.ms":  txnTimeout(cfg.Timeout),
		"go.logs.channel.enable":  true,
		"go.logs.channel":         t.logs,
		"go.delivery.reports":     false,
		"go.events.channel.size":  16,
		"go.produce.channel.size": 16,
	} {
		cm[key] = v
	}
	p, err := kafka.NewProducer(&cm)
	if err != nil {
		return nil, &inputError{config.Ref(config.FlagKafkaConfigDir), err.Error()}
	}
	t.p = p
	t.done.Add(2)
	go func() {
		defer t.done.Done()
		for ev := range t.logs {
			k.logLine(ev.Level, ev.Tag, ev.Message)
		}
	}()
	go func() {
		defer t.done.Done()
		for range p.Events() {
			// Drained: librdkafka must never block on its queue.
		}
	}()
	return t, nil
}

// Release closes the producer without waiting for its teardown.
func (t *txnCommitter) Release() {
	go func() {
		defer func() {
			if v := recover(); v != nil {
				recordPanic(v)
			}
		}()
		t.p.Close()
		close(t.logs)
		t.done.Wait()
	}()
}

// txnACLError is the Kafka user not being allowed to use the
// transactional ID.
type txnACLError struct {
	id  string
	err error
}

func (e *txnACLError) Error() string {
	return fmt.Sprintf("the Kafka user may not use transactional ID %s (%s): an Atomic commit needs the ACLs WRITE and DESCRIBE on TransactionalId %s (kafka-acls.sh --add --allow-principal User:<user> --operation Write --operation Describe --transactional-id %s); nothing was committed", e.id, errString(e.err), e.id, e.id)
}

func (e *txnACLError) Unwrap() error { return e.err }

// txnTimeout is the transaction.timeout.ms of an Atomic run: long enough
// for its commit (--timeout), within the brokers' default
// transaction.max.timeout.ms (15 minutes). A transaction left open by a
// crash is aborted after it, or by the next replay's InitTransactions.
func txnTimeout(timeout time.Duration) int {
	return int(min(max(timeout, time.Minute), 15*time.Minute) / time.Millisecond)
}

// startTxn makes the transactional producer and initialises it: from here
// on, any other replay of the group on this cluster is fenced.
func startTxn(ctx context.Context, cfg *config.Config, k *kafkaClient) (*txnCommitter, error) {
	id := config.TransactionalID(cfg.Group)
	t, err := newTxnProducer(cfg, k, id)
	if err != nil {
		return nil, err
	}
	ictx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	err = txnCall(ictx, func() error { return t.p.InitTransactions(ictx) })
	if err == nil {
		return t, nil
	}
	t.Release()
	var ke kafka.Error
	if errors.As(err, &ke) && (ke.Code() == kafka.ErrTransactionalIDAuthorizationFailed || ke.Code() == kafka.ErrClusterAuthorizationFailed) {
		return nil, &txnACLError{id, err}
	}
	if ctxErr := context.Cause(ctx); ctxErr != nil {
		err = fmt.Errorf("%w (%w)", err, ctxErr)
	}
	return nil, fmt.Errorf("initialise transactional ID %s: %w", id, err)
}

// txnCall runs one transactional call of librdkafka's, again while it fails
// with an error librdkafka calls retriable, within ctx.
func txnCall(ctx context.Context, op func() error) error {
	backoff := 100 * time.Millisecond
	for {
		err := op()
		var ke kafka.Error
		if err == nil || !errors.As(err, &ke) || !ke.IsRetriable() {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// fencedError returns err if it says that another producer of the
// transactional ID fenced this one.
func fencedError(err error) error {
	var ke kafka.Error
	if errors.As(err, &ke) {
		switch ke.Code() {
		case kafka.ErrFenced, kafka.ErrProducerFenced, kafka.ErrInvalidProducerEpoch:
			return err
		}
	}
	return nil
}

// commit commits offsets for group in one transaction, and says what
// Kafka answered (which verifyCommit weighs against the read-back) and
// whether another replay fenced it. Until CommitTransaction is called
// nothing can show: a failure before it aborts the transaction (or leaves
// it to be aborted by the coordinator), so the answer says that the
// commit was refused, not that it may have applied.
func (t *txnCommitter) commit(ctx context.Context, k *kafkaClient, group string, offsets []commitOffset) (ans commitAnswer, fenced error) {
	p := t.p
	md, err := kafka.NewTestConsumerGroupMetadata(group)
	if err != nil {
		return commitAnswer{Err: err}, nil
	}
	if err := p.BeginTransaction(); err != nil {
		return commitAnswer{Err: err}, fencedError(err)
	}
	refused := func(err error) (commitAnswer, error) {
		if fencedError(err) == nil {
			// A fenced producer cannot abort; the coordinator already did.
			if aerr := p.AbortTransaction(ctx); aerr != nil {
				t.log.Warn("could not abort the transaction; the coordinator aborts it after transaction.timeout.ms, or the next replay of the group does", "error", errString(aerr))
			}
		}
		return commitAnswer{Err: err}, fencedError(err)
	}
	for _, part := range splitCommit(group, offsets, commitBatchBytes) {
		tps := make([]kafka.TopicPartition, len(part))
		for i, o := range part {
			topic, m := o.TP.Topic, o.Metadata
			tps[i] = kafka.TopicPartition{Topic: &topic, Partition: o.TP.Partition, Offset: kafka.Offset(o.Offset), Metadata: &m}
		}
		if err := txnCall(ctx, func() error { return p.SendOffsetsToTransaction(ctx, tps, md) }); err != nil {
			return refused(err)
		}
	}
	hook(hookSent)
	// A member that joined since the snapshot: a classic group's
	// coordinator would take this commit all the same.
	g, err := k.describeGroup(ctx, group)
	switch {
	case err != nil:
		return refused(fmt.Errorf("describe the group before committing the transaction: %w", err))
	case g.Active():
		return refused(&groupActiveError{info: g})
	}
	err = txnCall(ctx, func() error { return p.CommitTransaction(ctx) })
	var ke kafka.Error
	switch {
	case err == nil:
		return commitAnswer{}, nil
	case errors.As(err, &ke) && ke.TxnRequiresAbort():
		return refused(err)
	}
	// The EndTxn may have been written: the read-back decides.
	return commitAnswer{Err: err, Unanswered: true}, fencedError(err)
}

// supersededError says what fenced an Atomic run, as far as Kafka tells:
// its answer, and the run whose commit the group shows now, if any.
func (t *txnCommitter) supersededError(fenced error, group string, after map[TP]Committed, id runIdent) string {
	others := map[string]bool{}
	for _, c := range after {
		if m, ok := parseMark(c.Metadata); ok && m.RunID != id.RunID {
			others[m.RunID] = true
		}
	}
	shows := "it shows no other replay's commit yet"
	if len(others) > 0 {
		// Sorted: the same group shows the same message, and the runs it
		// names beyond maxNamed are not a draw of map order.
		ids := slices.Sorted(maps.Keys(others))
		if len(ids) > maxNamed {
			ids = append(ids[:maxNamed], "…")
		}
		shows = "it shows the commit of run " + strings.Join(ids, ", ")
	}
	return fmt.Sprintf("superseded: another replay of group %s initialised its transactional ID %s on this cluster after this run did, and Kafka fenced this run (%s; Kafka does not say which client it was: a launcher, a shell, a workflow). Kafka aborted this run's transaction and the read-back shows none of its offsets: nothing was committed; %s. Read the group's offsets before replaying again: a retry would fence the other replay in turn", group, t.id, errString(fenced), shows)
}
