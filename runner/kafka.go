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
	"github.com/kafka-replay/kafka-replay/runner/internal/rdkafka"
)

// kafkaClient is the runner's Kafka client (internal/rdkafka). Every call
// is a single batched admin request (librdkafka fans it out per broker at
// most), so the number of Kafka requests a run makes does not grow with
// partitions.
type kafkaClient struct {
	rd       *rdkafka.Client
	log      *slog.Logger
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
	props := map[string]string{
		"bootstrap.servers": cfg.BootstrapServers,
		"client.id":         clientID,
		// A one-shot run has no use for KIP-714 client metrics; pushing
		// them costs two requests. The config directory can turn it back on.
		"enable.metrics.push": "false",
	}
	for k, v := range cfg.KafkaProperties {
		props[k] = v
	}
	// Whatever the properties say: librdkafka's log lines come to the
	// client's event queue, and so through our (redacting) logger, never
	// to stderr unredacted; and log ends are high watermarks, as an admin
	// client reads them (the client is a consumer, whose default would be
	// the last stable offset).
	props["log.queue"] = "true"
	props["isolation.level"] = "read_uncommitted"
	k := &kafkaClient{log: log}
	k.auth, k.authFailed = context.WithCancelCause(context.Background())
	k.unreached, k.gaveUp = context.WithCancelCause(context.Background())
	rd, err := rdkafka.New(props, rdkafka.Handlers{Log: k.logLine, Error: k.errorEvent, TokenRefresh: k.noToken,
		Panic: recordPanic}) // Main makes the run an InternalError
	if err != nil {
		k.authFailed(nil)
		k.gaveUp(nil)
		// librdkafka's message names the property; the redactor removes any
		// value it might quote.
		return nil, &inputError{config.Ref(config.FlagKafkaConfigDir), err.Error()}
	}
	k.rd = rd
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

// errorEvent takes the client's error events: librdkafka reports a
// refused authentication only there, while the request waiting on that
// broker just times out ("Local: Timed out").
func (k *kafkaClient) errorEvent(e kafka.Error) {
	if e.Code() == kafka.ErrAuthentication {
		k.authFailed(&authError{e})
	}
	if u := k.connect.observe(e); u != nil {
		k.gaveUp(u)
	}
}

// noToken answers librdkafka's request for an OAUTHBEARER token, which it
// makes unless it can get one itself: a one-shot runner has none to give.
func (k *kafkaClient) noToken() string {
	msg := "OAUTHBEARER needs a token the runner cannot make; set sasl.oauthbearer.method=oidc with its token endpoint"
	k.authFailed(&authError{kafka.NewError(kafka.ErrAuthentication, msg, false)})
	return msg
}

// logLine forwards one of librdkafka's log lines to the run's log.
func (k *kafkaClient) logLine(level int, tag, message string) {
	if k.released.Load() {
		return // the caller's writers are no longer ours
	}
	// syslog levels: 0-3 are errors, 4 warnings; the rest is debug noise.
	lvl := slog.LevelDebug
	switch {
	case level <= 3:
		lvl = slog.LevelError
	case level == 4:
		lvl = slog.LevelWarn
	}
	k.log.Log(context.Background(), lvl, "librdkafka: "+message, "tag", tag)
}

func (k *kafkaClient) Close() {
	k.rd.Close()
	k.authFailed(nil)
	k.gaveUp(nil)
}

// Release lets go of the client without waiting for its teardown, which
// waits out librdkafka's threads: pure latency for a one-shot process whose
// result is known. Log lines that arrive afterwards are dropped.
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
		kafka.ErrNotCoordinator, kafka.ErrLeaderNotAvailable, kafka.ErrNotLeaderForPartition,
		// A read of stable offsets while a transaction's offsets wait for
		// its markers (an Atomic run's read-back, right after its commit).
		kafka.ErrUnstableOffsetCommit:
		return true
	}
	return false
}

// groupActiveError means the group had live members when it mattered;
// waited is how long the run waited for it to empty (--wait-for-empty),
// if it did.
type groupActiveError struct {
	info   GroupInfo
	waited time.Duration
}

func (e *groupActiveError) Error() string {
	if e.waited > 0 {
		// The wait was asked for: advising it would read as if it had
		// not been. Say that it waited, how long, and who stayed.
		return fmt.Sprintf("group is still active after waiting %s for it to empty (%s); stop those consumers, or wait longer (%s)",
			e.waited, e.info.Describe(), config.Ref(config.FlagWaitForEmpty))
	}
	return "group is active (" + e.info.Describe() + "); stop its consumers first, or use " + config.Ref(config.RefWait)
}

func (k *kafkaClient) describeGroup(ctx context.Context, group string) (GroupInfo, error) {
	return retry(ctx, k, "describe group", func(ctx context.Context) (GroupInfo, error) {
		d, err := k.rd.DescribeGroup(ctx, group)
		if err != nil {
			return GroupInfo{}, err
		}
		switch d.Err.Code() {
		case kafka.ErrNoError:
		case kafka.ErrGroupIDNotFound:
			return GroupInfo{State: "Dead"}, nil // never existed: safe to create
		default:
			return GroupInfo{}, d.Err
		}
		info := GroupInfo{State: groupState(d.State), Type: groupType(d.Type)}
		if info.State == "Dead" {
			info.Type = "" // no group: the type is a default
		}
		for _, m := range d.Members {
			info.Members = append(info.Members, Member{ClientID: m.ClientID, ConsumerID: m.ConsumerID, Host: m.Host})
		}
		return info, nil
	})
}

// groupType names librdkafka's group protocol as --group-type does.
func groupType(t kafka.ConsumerGroupType) string {
	switch t {
	case kafka.ConsumerGroupTypeClassic:
		return config.GroupTypeClassic
	case kafka.ConsumerGroupTypeConsumer:
		return config.GroupTypeConsumer
	}
	return ""
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
	return retry(ctx, k, "describe topics", func(ctx context.Context) (topicInfo, error) {
		return k.describeTopicsOnce(ctx, topics)
	})
}

// describeTopicsOnce is one attempt of describeTopics's.
func (k *kafkaClient) describeTopicsOnce(ctx context.Context, topics []string) (topicInfo, error) {
	descs, err := k.rd.DescribeTopics(ctx, topics)
	if err != nil {
		return topicInfo{}, err
	}
	out := topicInfo{Partitions: make(map[string]int32, len(descs)), Leaders: map[TP]int32{}}
	answered := make(map[string]bool, len(descs))
	first := make(map[string][]rdkafka.Partition, len(descs))
	for _, d := range descs {
		answered[d.Name] = true
		if _, seen := first[d.Name]; !seen {
			first[d.Name] = d.Partitions
		}
		switch d.Err.Code() {
		case kafka.ErrNoError:
			out.Partitions[d.Name] = int32(len(d.Partitions))
			for _, p := range d.Partitions {
				if p.Leader >= 0 {
					out.Leaders[TP{Topic: d.Name, Partition: p.ID}] = p.Leader
				}
			}
		case kafka.ErrUnknownTopicOrPart:
			// absent from the map: the planner names it
		default:
			return topicInfo{}, fmt.Errorf("topic %s: %w", d.Name, d.Err)
		}
	}
	err = checkTopicsAnswered(topics, answered, out.Partitions, func(t string) []int32 {
		ids := make([]int32, len(first[t]))
		for i, p := range first[t] {
			ids[i] = p.ID
		}
		return ids
	})
	if err != nil {
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
	return retry(ctx, k, what, func(ctx context.Context) ([]tpOffset, error) {
		got, err := k.listOffsetsOnce(ctx, what, asked, spec)
		if err == nil {
			err = checkOffsets(got, spec)
		}
		return got, err
	})
}

// listOffsetsOnce is one call of listOffsets's, of asked (sorted).
func (k *kafkaClient) listOffsetsOnce(ctx context.Context, what string, asked []TP, spec kafka.OffsetSpec) ([]tpOffset, error) {
	offsets, err := k.rd.ListOffsets(ctx, what, asked, spec)
	if err != nil {
		return nil, err
	}
	got := make([]tpOffset, len(asked))
	for i, tp := range asked {
		got[i] = tpOffset{tp, offsets[i]}
	}
	return got, nil
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
// the list's own order, which makes librdkafka's linear search of the
// response's partitions about 10% cheaper than a random order.
func (k *kafkaClient) alter(ctx context.Context, group string, offsets []commitOffset) commitAnswer {
	var ans commitAnswer
	ans.Failed, ans.Err = retry(ctx, k, "commit offsets", func(ctx context.Context) (map[TP]error, error) {
		failed, err := k.alterOnce(ctx, group, offsets)
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
	case kafka.ErrInvalidArg, // the request was never made (internal/rdkafka)
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

// alterOnce is one attempt of alter's: the partitions' errors, or the
// commit's.
func (k *kafkaClient) alterOnce(ctx context.Context, group string, offsets []commitOffset) (map[TP]error, error) {
	failed := map[TP]error{}
	err := k.rd.Commit(ctx, group, len(offsets), func(i int) (TP, int64, string) {
		return offsets[i].TP, offsets[i].Offset, offsets[i].Metadata
	}, func(tp TP, code kafka.ErrorCode) { failed[tp] = kafka.NewError(code, "", false) })
	if err != nil {
		return nil, err
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

// clusterID is the ID of the Kafka cluster the client is connected to,
// from Metadata (which librdkafka has read by the time the topics are
// described); empty if the brokers give none.
func (k *kafkaClient) clusterID(ctx context.Context) string {
	return k.rd.ClusterID(ctx)
}

// errString renders an error on one line.
func errString(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", " ")
}
