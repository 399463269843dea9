package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-replay/kafka-replay/runner/config"
)

// kafkaClient wraps one librdkafka admin client. Every call is a single
// batched admin request (librdkafka fans it out per broker at most), so the
// number of Kafka requests a run makes does not grow with partitions.
type kafkaClient struct {
	// The admin client is derived from a producer because only producers and
	// consumers can hand librdkafka's log lines to Go. Nothing is produced.
	producer *kafka.Producer
	admin    *kafka.AdminClient
	// rk is admin's librdkafka handle, for the calls the runner makes
	// through librdkafka's C API itself (rdkafka_admin.go); nil if
	// it could not be had, and those calls go through admin.
	rk       rdHandle
	log      *slog.Logger
	logs     chan kafka.LogEvent
	events   chan kafka.Event
	done     sync.WaitGroup
	released atomic.Bool
	// auth is cancelled, with an *authError as its cause, when the brokers
	// refuse the credentials; every request in flight then stops at once
	// instead of waiting out its timeout.
	auth       context.Context
	authFailed context.CancelCauseFunc
	// unreached is cancelled, with an *unreachableError as its cause, when
	// every broker failed to connect before Kafka ever answered (connect.go).
	unreached context.Context
	gaveUp    context.CancelCauseFunc
	connect   connectWatch
}

// clientID names the runner's connections in broker logs and quotas.
const clientID = "kafka-replay-runner"

func newKafkaClient(cfg *config.Config, log *slog.Logger) (*kafkaClient, error) {
	// librdkafka's log lines, for forwardLogs. Without a channel of ours,
	// confluent-kafka-go makes one of 10,000 slots (784 KB of Go heap, live
	// and scanned by every GC for the whole run) for the few dozen lines a
	// run logs; a full channel only makes its log poller wait for
	// forwardLogs, which never blocks. The library does not close a channel
	// it was given: Close does.
	logs := make(chan kafka.LogEvent, 64)
	cm := kafka.ConfigMap{
		"bootstrap.servers": cfg.BootstrapServers,
		"client.id":         clientID,
		// Route librdkafka's own log lines through our (redacting) logger
		// instead of letting the C library write to stderr directly.
		"go.logs.channel.enable": true,
		"go.logs.channel":        logs,
		"go.delivery.reports":    false,
		// The producer's Go channels default to a million slots each (24 MB
		// allocated up front); nothing is ever produced through them.
		"go.events.channel.size":  16,
		"go.produce.channel.size": 16,
		// A one-shot run has no use for KIP-714 client metrics; pushing
		// them costs two requests. The config directory can turn it back on.
		"enable.metrics.push": false,
	}
	for k, v := range cfg.KafkaProperties {
		cm[k] = v
	}
	producer, err := kafka.NewProducer(&cm)
	if err != nil {
		// librdkafka's message names the property; the redactor removes any
		// value it might quote.
		return nil, &inputError{config.Ref(config.FlagKafkaConfigDir), err.Error()}
	}
	admin, err := kafka.NewAdminClientFromProducer(producer)
	if err != nil {
		producer.Close()
		close(logs)
		return nil, err
	}
	k := &kafkaClient{producer: producer, admin: admin, rk: adminHandle(admin), log: log, logs: logs, events: producer.Events()}
	k.auth, k.authFailed = context.WithCancelCause(context.Background())
	k.unreached, k.gaveUp = context.WithCancelCause(context.Background())
	k.done.Add(2)
	go k.forwardLogs()
	go k.watchEvents()
	return k, nil
}

// authError is the brokers refusing the runner's credentials: a bad SASL
// password, a token that could not be had. Retrying with the same
// credentials cannot help, so it is invalid input (exit 2).
type authError struct{ err kafka.Error }

func (e *authError) Error() string {
	return "authentication failed: " + e.err.Error() + " (check the credentials in " + config.Ref(config.RefCredentials) + ")"
}

func (e *authError) Unwrap() error { return e.err }

// watchEvents reads the client's events: librdkafka reports a refused
// authentication only there, while the request waiting on that broker
// just times out ("Local: Timed out"). The channel must be drained anyway.
func (k *kafkaClient) watchEvents() {
	defer k.done.Done()
	defer func() {
		if v := recover(); v != nil {
			recordPanic(v) // Main makes the run an InternalError
			for range k.events {
				// Keep draining: librdkafka must never block on its queue.
			}
		}
	}()
	for ev := range k.events {
		switch e := ev.(type) {
		case kafka.Error:
			if e.Code() == kafka.ErrAuthentication {
				k.authFailed(&authError{e})
			}
			if u := k.connect.observe(e); u != nil {
				k.gaveUp(u)
			}
		case kafka.OAuthBearerTokenRefresh:
			// librdkafka asks the application for a token unless it can get
			// one itself; a one-shot runner has none to give.
			msg := "OAUTHBEARER needs a token the runner cannot make; set sasl.oauthbearer.method=oidc with its token endpoint"
			_ = k.producer.SetOAuthBearerTokenFailure(msg)
			k.authFailed(&authError{kafka.NewError(kafka.ErrAuthentication, msg, false)})
		}
	}
}

func (k *kafkaClient) forwardLogs() {
	defer k.done.Done()
	defer func() {
		if v := recover(); v != nil {
			recordPanic(v) // Main makes the run an InternalError
			for range k.logs {
				// Keep draining: librdkafka must never block on its log queue.
			}
		}
	}()
	for ev := range k.logs {
		if k.released.Load() {
			continue // drain, but the caller's writers are no longer ours
		}
		// syslog levels: 0-3 are errors, 4 warnings; the rest is debug noise.
		lvl := slog.LevelDebug
		switch {
		case ev.Level <= 3:
			lvl = slog.LevelError
		case ev.Level == 4:
			lvl = slog.LevelWarn
		}
		k.log.Log(context.Background(), lvl, "librdkafka: "+ev.Message, "tag", ev.Tag)
	}
}

func (k *kafkaClient) Close() {
	k.admin.Close()
	// Closes the event channel, and returns once the library's log poller
	// has stopped: nothing sends on k.logs any more.
	k.producer.Close()
	close(k.logs)
	k.done.Wait()
	k.authFailed(nil)
	k.gaveUp(nil)
}

// Release lets go of the client without waiting for its teardown, which
// waits out the Go pollers' 100 ms poll timeouts: pure latency for a one-shot
// process whose result is known. Log lines that arrive afterwards are dropped.
func (k *kafkaClient) Release() {
	k.released.Store(true)
	go func() {
		// The result may already be written; a panic here must still not
		// crash the process (exit 2) after it.
		defer func() {
			if v := recover(); v != nil {
				recordPanic(v)
			}
		}()
		k.Close()
	}()
}

// attemptTimeout bounds one attempt, so that a request lost to a dead broker
// is retried instead of eating the whole --timeout.
const attemptTimeout = 15 * time.Second

// retry runs op with bounded exponential backoff until it succeeds, fails
// with a non-retriable error, the credentials are refused, or ctx ends.
func retry[T any](ctx context.Context, k *kafkaClient, what string, op func(context.Context) (T, error)) (T, error) {
	log := k.log
	backoff := 100 * time.Millisecond
	const maxBackoff = 3 * time.Second
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, attemptTimeout)
		stop := context.AfterFunc(k.auth, cancel)
		stopUnreached := context.AfterFunc(k.unreached, cancel)
		v, err := op(actx)
		stop()
		stopUnreached()
		cancel()
		if err == nil {
			k.connect.answer()
			return v, nil
		}
		// Whatever the request failed with, refused credentials are the
		// cause (its own error is most likely a timeout).
		var ae *authError
		if errors.As(context.Cause(k.auth), &ae) {
			return v, fmt.Errorf("%s: %w", what, ae)
		}
		// Likewise a Kafka that was never reached: the connections' causes
		// say more than the request's timeout.
		var ue *unreachableError
		if errors.As(context.Cause(k.unreached), &ue) {
			return v, fmt.Errorf("%s: %w", what, ue)
		}
		if !retriable(err) {
			return v, fmt.Errorf("%s: %w", what, err)
		}
		if ctx.Err() != nil {
			return v, fmt.Errorf("%s: %w (gave up: %w)", what, err, context.Cause(ctx))
		}
		// Full jitter, so parallel runners do not retry in lockstep.
		sleep := time.Duration(rand.Int64N(int64(backoff))) + backoff/2
		log.Warn("kafka request failed, retrying", "request", what, "attempt", attempt, "error", err.Error(), "backoff", sleep.Round(time.Millisecond).String())
		select {
		case <-ctx.Done():
			return v, fmt.Errorf("%s: %w (gave up: %w)", what, err, context.Cause(ctx))
		case <-time.After(sleep):
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

func retriable(err error) bool {
	var ke kafka.Error
	if !errors.As(err, &ke) {
		return false
	}
	if ke.IsRetriable() || ke.IsTimeout() {
		return true
	}
	switch ke.Code() {
	case kafka.ErrTransport, kafka.ErrAllBrokersDown, kafka.ErrTimedOut, kafka.ErrRequestTimedOut,
		kafka.ErrNetworkException, kafka.ErrCoordinatorLoadInProgress, kafka.ErrCoordinatorNotAvailable,
		kafka.ErrNotCoordinator, kafka.ErrLeaderNotAvailable, kafka.ErrNotLeaderForPartition:
		return true
	}
	return false
}

// groupActiveError means the group had live members when it mattered.
type groupActiveError struct{ info GroupInfo }

func (e *groupActiveError) Error() string {
	return "group is active (" + e.info.Describe() + "); stop its consumers first, or use " + config.Ref(config.RefWait)
}

func (k *kafkaClient) describeGroup(ctx context.Context, group string) (GroupInfo, error) {
	return retry(ctx, k, "describe group", func(ctx context.Context) (GroupInfo, error) {
		res, err := k.admin.DescribeConsumerGroups(ctx, []string{group}, kafka.SetAdminRequestTimeout(requestTimeout(ctx)))
		if err != nil {
			return GroupInfo{}, err
		}
		if len(res.ConsumerGroupDescriptions) != 1 {
			return GroupInfo{}, fmt.Errorf("describe group: got %d descriptions", len(res.ConsumerGroupDescriptions))
		}
		d := res.ConsumerGroupDescriptions[0]
		switch d.Error.Code() {
		case kafka.ErrNoError:
		case kafka.ErrGroupIDNotFound:
			return GroupInfo{State: "Dead"}, nil // never existed: safe to create
		default:
			return GroupInfo{}, d.Error
		}
		info := GroupInfo{State: groupState(d.State)}
		for _, m := range d.Members {
			info.Members = append(info.Members, Member{ClientID: m.ClientID, ConsumerID: m.ConsumerID, Host: m.Host})
		}
		return info, nil
	})
}

// groupState spells librdkafka's state names the way Kafka's tools do.
func groupState(s kafka.ConsumerGroupState) string {
	switch s {
	case kafka.ConsumerGroupStateEmpty:
		return "Empty"
	case kafka.ConsumerGroupStateDead:
		return "Dead"
	case kafka.ConsumerGroupStateStable:
		return "Stable"
	case kafka.ConsumerGroupStatePreparingRebalance:
		return "PreparingRebalance"
	case kafka.ConsumerGroupStateCompletingRebalance:
		return "CompletingRebalance"
	case kafka.ConsumerGroupStateUnknown:
		return "Unknown"
	}
	return s.String()
}

// committed lists a group's committed offsets: all of them when tps is nil
// (one request), else those of tps, in one request where librdkafka's
// handling of the response is linear (rdkafka_find.c), else in calls of at
// most maxPartitionsPerCall partitions, concurrently (see there).
func (k *kafkaClient) committed(ctx context.Context, group string, tps []TP) (map[TP]Committed, error) {
	if tps == nil {
		return k.committedCall(ctx, group, nil)
	}
	parts := chunk(tps, offsetFetchLimit())
	if len(parts) == 1 {
		return k.committedCall(ctx, group, parts[0])
	}
	out := make(map[TP]Committed, len(tps))
	var mu sync.Mutex
	g, gctx := newGroup(ctx)
	for _, part := range parts {
		g.Go(func() error {
			m, err := k.committedCall(gctx, group, part)
			mu.Lock()
			defer mu.Unlock()
			for tp, c := range m {
				out[tp] = c
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// committedCall is one ListConsumerGroupOffsets call: all of the group's
// offsets when tps is nil.
func (k *kafkaClient) committedCall(ctx context.Context, group string, tps []TP) (map[TP]Committed, error) {
	call := k.committedAdmin
	if k.rk != nil {
		call = func(ctx context.Context, group string, tps []TP) (map[TP]Committed, error) {
			return committedDirect(ctx, k.rk, group, tps)
		}
	}
	return retry(ctx, k, "list committed offsets of "+group, func(ctx context.Context) (map[TP]Committed, error) {
		out, err := call(ctx, group, tps)
		var ke kafka.Error
		if errors.As(err, &ke) && ke.Code() == kafka.ErrGroupIDNotFound {
			// Newer brokers say so instead of listing nothing: a group
			// that never committed has no offsets.
			return map[TP]Committed{}, nil
		}
		return out, err
	})
}

// committedAdmin is one call of committedCall's through confluent-kafka-go's
// AdminClient.ListConsumerGroupOffsets: for a client whose librdkafka
// handle could not be had (see committedDirect).
func (k *kafkaClient) committedAdmin(ctx context.Context, group string, tps []TP) (map[TP]Committed, error) {
	req := kafka.ConsumerGroupTopicPartitions{Group: group, Partitions: toKafkaTPs(tps)}
	// Stable offsets only: a transactional commit still pending would
	// otherwise be read as the previous offset and then overwritten.
	res, err := k.admin.ListConsumerGroupOffsets(ctx, []kafka.ConsumerGroupTopicPartitions{req},
		kafka.SetAdminRequestTimeout(requestTimeout(ctx)), kafka.SetAdminRequireStableOffsets(true))
	if err != nil {
		return nil, err
	}
	n := 0
	for _, g := range res.ConsumerGroupsTopicPartitions {
		n += len(g.Partitions)
	}
	out := make(map[TP]Committed, n)
	for _, g := range res.ConsumerGroupsTopicPartitions {
		for _, p := range g.Partitions {
			if p.Error != nil {
				return nil, fmt.Errorf("%s/%d: %w", *p.Topic, p.Partition, p.Error)
			}
			if p.Offset < 0 { // OffsetInvalid: asked for, never committed
				continue
			}
			c := Committed{Offset: int64(p.Offset)}
			if p.Metadata != nil {
				c.Metadata = *p.Metadata
			}
			out[TP{Topic: *p.Topic, Partition: p.Partition}] = c
		}
	}
	return out, nil
}

// topicInfo is what the runner needs of topic metadata.
type topicInfo struct {
	// Partitions is each existing topic's partition count.
	Partitions map[string]int32
	// Leaders is each partition's leader broker, where known.
	Leaders map[TP]int32
}

// describeTopics returns the partition count and leaders of each topic that
// exists; unknown topics are absent.
func (k *kafkaClient) describeTopics(ctx context.Context, topics []string) (topicInfo, error) {
	if len(topics) == 0 {
		return topicInfo{Partitions: map[string]int32{}, Leaders: map[TP]int32{}}, nil
	}
	call := k.describeTopicsAdmin
	if k.rk != nil {
		call = func(ctx context.Context, topics []string) (topicInfo, error) {
			return describeTopicsDirect(ctx, k.rk, topics)
		}
	}
	return retry(ctx, k, "describe topics", func(ctx context.Context) (topicInfo, error) {
		return call(ctx, topics)
	})
}

// describeTopicsAdmin is one call of describeTopics's through
// confluent-kafka-go's AdminClient.DescribeTopics: for a client whose
// librdkafka handle could not be had (see describeTopicsDirect).
func (k *kafkaClient) describeTopicsAdmin(ctx context.Context, topics []string) (topicInfo, error) {
	res, err := k.admin.DescribeTopics(ctx, kafka.NewTopicCollectionOfTopicNames(topics),
		kafka.SetAdminRequestTimeout(requestTimeout(ctx)))
	if err != nil {
		return topicInfo{}, err
	}
	out := topicInfo{Partitions: map[string]int32{}, Leaders: map[TP]int32{}}
	answered := map[string]bool{}
	ids := map[string][]int32{}
	for _, d := range res.TopicDescriptions {
		answered[d.Name] = true
		for _, p := range d.Partitions {
			ids[d.Name] = append(ids[d.Name], int32(p.Partition))
		}
		switch d.Error.Code() {
		case kafka.ErrNoError:
			out.Partitions[d.Name] = int32(len(d.Partitions))
			for _, p := range d.Partitions {
				if p.Leader != nil {
					out.Leaders[TP{Topic: d.Name, Partition: int32(p.Partition)}] = int32(p.Leader.ID)
				}
			}
		case kafka.ErrUnknownTopicOrPart:
			// absent from the map: the planner names it
		default:
			return topicInfo{}, fmt.Errorf("topic %s: %w", d.Name, d.Error)
		}
	}
	if err := checkTopicsAnswered(topics, answered, out.Partitions, func(t string) []int32 { return ids[t] }); err != nil {
		return topicInfo{}, err
	}
	return out, nil
}

// listOffsetsByLeader resolves one offset spec for partitions split by
// leader (see byLeader): the leaders concurrently, each leader's partitions
// in calls of at most maxPartitionsPerListOffsets, listOffsetsInFlight of
// them at a time. The bound on calls in flight keeps the C lists librdkafka
// builds for a call (about 1 KiB per partition) from all being alive at
// once; more would buy nothing, since librdkafka parses every response on
// its one main thread.
func (k *kafkaClient) listOffsetsByLeader(ctx context.Context, what string, leaders [][]TP, spec kafka.OffsetSpec) (map[TP]int64, error) {
	n := 0
	for _, tps := range leaders {
		n += len(tps)
	}
	// Sized once, and filled by every call directly: a map per call,
	// merged, was a tenth of the Go heap's allocations at 10,000 partitions.
	out := make(map[TP]int64, n)
	var mu sync.Mutex
	g, gctx := newGroup(ctx)
	for _, tps := range leaders {
		parts := chunk(tps, maxPartitionsPerListOffsets)
		next := make(chan []TP, len(parts))
		for _, p := range parts {
			next <- p
		}
		close(next)
		for range min(listOffsetsInFlight, len(parts)) {
			g.Go(func() error {
				for part := range next {
					got, err := k.listOffsets(gctx, what, part, spec)
					if err != nil {
						return err
					}
					mu.Lock()
					for _, o := range got {
						out[o.tp] = o.offset
					}
					mu.Unlock()
				}
				return nil
			})
		}
	}
	return out, g.Wait()
}

// tpOffset is one partition's answer to a ListOffsets call.
type tpOffset struct {
	tp     TP
	offset int64
}

// listOffsets resolves one offset spec for every partition in a single
// batched call (one ListOffsets request per partition leader). The answer
// has exactly tps's partitions, sorted (see listOffsetsByLeader).
func (k *kafkaClient) listOffsets(ctx context.Context, what string, tps []TP, spec kafka.OffsetSpec) ([]tpOffset, error) {
	asked := slices.Clone(tps)
	sortTPs(asked)
	call := k.listOffsetsAdmin
	if k.rk != nil {
		call = func(ctx context.Context, what string, asked []TP, spec kafka.OffsetSpec) ([]tpOffset, error) {
			return listOffsetsDirect(ctx, k.rk, what, asked, spec)
		}
	}
	return retry(ctx, k, what, func(ctx context.Context) ([]tpOffset, error) {
		got, err := call(ctx, what, asked, spec)
		if err == nil {
			err = checkOffsets(got, spec)
		}
		return got, err
	})
}

// checkOffsets refuses offsets no broker answers: a log bound below 0, or
// for a time anything below 0 but -1 (no message at or after it). The one
// a mangled answer leaves is OFFSET_INVALID (-1001): librdkafka fills
// every partition of a call with it and replaces it with the partition's
// answer, so a partition the answer left out keeps it, without an error.
func checkOffsets(got []tpOffset, spec kafka.OffsetSpec) error {
	lowest := int64(0)
	if spec >= 0 { // a timestamp
		lowest = -1
	}
	for _, o := range got {
		switch {
		case o.offset == int64(kafka.OffsetInvalid):
			return fmt.Errorf("no answer for %s", o.tp)
		case o.offset < lowest:
			return fmt.Errorf("%s answered with offset %d, which no broker answers", o.tp, o.offset)
		}
	}
	return nil
}

// checkTopicsAnswered refuses a DescribeTopics answer that left out a
// topic asked for (a topic that does not exist is answered, with an
// error), or whose partitions of a topic are not exactly 0 to its count
// minus 1: either would plan from partitions that are not the topic's.
// ids(topic) lists a topic's partitions as answered.
func checkTopicsAnswered(asked []string, answered map[string]bool, partitions map[string]int32, ids func(topic string) []int32) error {
	for _, t := range asked {
		if !answered[t] {
			return fmt.Errorf("no answer for topic %q", t)
		}
	}
	for t, n := range partitions {
		seen := make([]bool, n)
		for _, id := range ids(t) {
			if id < 0 || id >= n || seen[id] {
				return fmt.Errorf("topic %q is answered with %d partitions, but partition %d is not one of 0-%d once", t, n, id, n-1)
			}
			seen[id] = true
		}
	}
	return nil
}

// listOffsetsAdmin is one call of listOffsetsDirect's, through
// confluent-kafka-go's AdminClient.ListOffsets: for a client whose
// librdkafka handle could not be had. asked is sorted; the answer is
// checked by sorting it too, which needs no map.
func (k *kafkaClient) listOffsetsAdmin(ctx context.Context, what string, asked []TP, spec kafka.OffsetSpec) ([]tpOffset, error) {
	req := make(map[kafka.TopicPartition]kafka.OffsetSpec, len(asked))
	var topic *string
	for i := range asked {
		if topic == nil || *topic != asked[i].Topic {
			// One name per topic, not a copy per partition:
			// confluent-kafka-go copies it to C for each anyway.
			topic = &asked[i].Topic
		}
		req[kafka.TopicPartition{Topic: topic, Partition: asked[i].Partition}] = spec
	}
	res, err := k.admin.ListOffsets(ctx, req, kafka.SetAdminRequestTimeout(requestTimeout(ctx)))
	if err != nil {
		return nil, err
	}
	got := make([]tpOffset, 0, len(res.ResultInfos))
	for ktp, info := range res.ResultInfos {
		tp := TP{Topic: *ktp.Topic, Partition: ktp.Partition}
		if info.Error.Code() != kafka.ErrNoError {
			return nil, fmt.Errorf("%s: %w", tp, info.Error)
		}
		got = append(got, tpOffset{tp, int64(info.Offset)})
	}
	slices.SortFunc(got, func(a, b tpOffset) int { return compareTPs(a.tp, b.tp) })
	for i, tp := range asked {
		if i >= len(got) || got[i].tp != tp {
			return nil, fmt.Errorf("%s: no answer for %s", what, tp)
		}
	}
	if len(got) != len(asked) {
		return nil, fmt.Errorf("%s: an answer for %s, which was not asked for", what, got[len(asked)].tp)
	}
	return got, nil
}

// commitOffset is one offset to commit, with its metadata.
type commitOffset struct {
	TP       TP
	Offset   int64
	Metadata string
}

// alter commits offsets (one part of a commit, see commitParts) for the
// group in one OffsetCommit request and returns what the broker answered:
// the per-partition errors of the last attempt, or an error of the whole
// commit, and whether any attempt went unanswered (see mayHaveApplied). None of it says what was committed: an
// earlier attempt may have been applied, even after the last one was
// answered. Only a read-back does, and only of that moment.
//
// offsets come in the plan's (sorted) order and are passed on in it: the
// request librdkafka writes, and so the response it searches, are then in
// the list's own order, which is what lets rdkafka_find.c's hint answer
// each of the response's lookups at once (without the wrapper, it makes
// librdkafka's linear search about 10% cheaper than a random order).
func (k *kafkaClient) alter(ctx context.Context, group string, offsets []commitOffset) commitAnswer {
	call := k.alterAdmin
	if k.rk != nil {
		call = func(ctx context.Context, group string, offsets []commitOffset) (map[TP]error, error) {
			return alterDirect(ctx, k.rk, group, offsets)
		}
	}
	var ans commitAnswer
	ans.Failed, ans.Err = retry(ctx, k, "commit offsets", func(ctx context.Context) (map[TP]error, error) {
		failed, err := call(ctx, group, offsets)
		if err != nil {
			ans.Unanswered = ans.Unanswered || mayHaveApplied(err)
			return nil, err
		}
		for _, e := range failed {
			if mayHaveApplied(e) {
				ans.Unanswered = true
				break
			}
		}
		// If every partition failed with the same retriable error (the
		// coordinator moved, say), the whole commit can be retried: the
		// offsets are absolute, so committing them twice is harmless.
		if len(failed) == len(offsets) {
			for _, e := range failed {
				if retriable(e) {
					return nil, e
				}
				break
			}
		}
		return failed, nil
	})
	return ans
}

// mayHaveApplied reports whether a commit attempt that failed with err may
// still have been written, or be written later: anything but a broker's
// answer that proves it was refused before the coordinator wrote it. A
// lost connection, a timeout or a cancelled wait leave the request with a
// broker that may apply it after the read-back; COORDINATOR_NOT_AVAILABLE,
// NOT_COORDINATOR and REQUEST_TIMED_OUT are also what a coordinator
// answers when its write was appended but not replicated in time, which a
// later coordinator replays.
func mayHaveApplied(err error) bool {
	var ke kafka.Error
	if !errors.As(err, &ke) {
		return true
	}
	switch ke.Code() {
	case kafka.ErrInvalidArg, // the request was never made (rdkafka_admin.go)
		// The coordinator's checks before it writes anything.
		kafka.ErrGroupAuthorizationFailed, kafka.ErrTopicAuthorizationFailed, kafka.ErrInvalidGroupID,
		kafka.ErrUnknownTopicOrPart, kafka.ErrUnknownTopicID, kafka.ErrOffsetMetadataTooLarge,
		kafka.ErrInvalidCommitOffsetSize, kafka.ErrCoordinatorLoadInProgress, kafka.ErrGroupIDNotFound,
		kafka.ErrUnsupportedVersion, kafka.ErrInvalidRequest, kafka.ErrGroupMaxSizeReached:
		return false
	}
	// The group's members refusing it (isGroupActiveErr) is a check too.
	return !isGroupActiveErr(err)
}

// alterAdmin is one attempt of alter's through confluent-kafka-go's
// AdminClient.AlterConsumerGroupOffsets: for a client whose librdkafka
// handle could not be had (see alterDirect). confluent-kafka-go v2.11.1
// keeps a C copy of the partitions per call until the process ends.
func (k *kafkaClient) alterAdmin(ctx context.Context, group string, offsets []commitOffset) (map[TP]error, error) {
	parts := make([]kafka.TopicPartition, len(offsets))
	for i, o := range offsets {
		topic, md := o.TP.Topic, o.Metadata
		parts[i] = kafka.TopicPartition{Topic: &topic, Partition: o.TP.Partition, Offset: kafka.Offset(o.Offset), Metadata: &md}
	}
	res, err := k.admin.AlterConsumerGroupOffsets(ctx,
		[]kafka.ConsumerGroupTopicPartitions{{Group: group, Partitions: parts}},
		kafka.SetAdminRequestTimeout(requestTimeout(ctx)))
	if err != nil {
		return nil, err
	}
	failed := map[TP]error{}
	for _, g := range res.ConsumerGroupsTopicPartitions {
		for _, p := range g.Partitions {
			if p.Error != nil {
				failed[TP{Topic: *p.Topic, Partition: p.Partition}] = p.Error
			}
		}
	}
	return failed, nil
}

// isGroupActiveErr recognises the broker refusing an admin commit because
// consumers joined the group after it was described.
func isGroupActiveErr(err error) bool {
	var ke kafka.Error
	if !errors.As(err, &ke) {
		return false
	}
	switch ke.Code() {
	case kafka.ErrUnknownMemberID, kafka.ErrIllegalGeneration, kafka.ErrRebalanceInProgress,
		// The same refusal from a KIP-848 (consumer protocol) group.
		kafka.ErrStaleMemberEpoch, kafka.ErrFencedMemberEpoch, kafka.ErrNonEmptyGroup:
		return true
	}
	return false
}

// requestTimeout gives each admin request the time left in ctx (librdkafka
// otherwise applies its own, shorter default).
func requestTimeout(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		if d := time.Until(dl); d > 0 {
			return d
		}
		return time.Millisecond
	}
	return 60 * time.Second
}

// clusterID is the ID of the Kafka cluster the client is connected to,
// from Metadata (which librdkafka has read by the time the topics are
// described); empty if the brokers give none.
func (k *kafkaClient) clusterID(ctx context.Context) string {
	timeout := requestTimeout(ctx)
	if k.rk != nil {
		return clusterIDDirect(k.rk, timeout)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id, _ := k.admin.ClusterID(cctx)
	return id
}

func toKafkaTPs(tps []TP) []kafka.TopicPartition {
	if tps == nil {
		return nil
	}
	out := make([]kafka.TopicPartition, len(tps))
	for i, tp := range tps {
		topic := tp.Topic
		out[i] = kafka.TopicPartition{Topic: &topic, Partition: tp.Partition}
	}
	return out
}

// errString renders an error on one line.
func errString(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", " ")
}
