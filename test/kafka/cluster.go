// Package kafkatest holds what every Kafka test (and the demo) shares: an
// embedded multi-broker Kafka cluster that speaks the real wire protocol
// (franz-go's kfake), seeding with timestamped records, an independent client
// to commit and read offsets, a live group member, and request counting.
//
// The independent client is franz-go, not librdkafka, so tests of the runner
// (which uses librdkafka) never check librdkafka against itself.
//
// Set KAFKA_REPLAY_TEST_APACHE to the directory of Apache Kafka's jars
// (make kafka-jars) to run the same tests on a real Apache Kafka KRaft
// cluster that the harness starts (apache.go), or KAFKA_REPLAY_TEST_BOOTSTRAP
// to run them against a cluster of your own; tests that need kfake's hooks
// (request counts, injected faults, SASL and TLS listeners) say so and are
// skipped there.
package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ExternalEnv names a real cluster to test against instead of kfake.
const ExternalEnv = "KAFKA_REPLAY_TEST_BOOTSTRAP"

// Cluster is a Kafka cluster for tests: embedded kfake by default.
type Cluster struct {
	// Fake is the embedded cluster; nil when testing an external one.
	Fake *kfake.Cluster
	// Apache is the Apache Kafka cluster under KAFKA_REPLAY_TEST_APACHE
	// (shared by the test binary when its TestMain uses RunShared).
	Apache     *Apache
	ownApache  bool // started for this Cluster alone: Close stops it
	bootstrap  []string
	clientOpts []kgo.Opt
	client     *kgo.Client
	admin      *kadm.Client

	countMu sync.Mutex
	counts  map[string]int
}

// Options configure a test cluster.
type Options struct {
	// Brokers is the number of embedded brokers.
	Brokers int
	// Fake are extra kfake options (SASL, TLS, ...), for the embedded cluster.
	Fake []kfake.Opt
	// Client are options for every helper client (credentials, TLS).
	Client []kgo.Opt
	// Apache, when set, starts an Apache Kafka cluster of these options for
	// this Cluster alone (Close stops it), whatever the environment says:
	// the end-to-end tests put one inside a test cluster's network
	// namespace. Brokers is then unused; the helper clients get the
	// cluster's own dialer.
	Apache *ApacheOptions
}

// Start starts an embedded cluster of brokers (or connects to the external
// one named by KAFKA_REPLAY_TEST_BOOTSTRAP). Extra kfake options apply only to
// the embedded cluster.
func Start(brokers int, opts ...kfake.Opt) (*Cluster, error) {
	return StartWith(Options{Brokers: brokers, Fake: opts})
}

// StartWith starts a cluster with full options.
func StartWith(o Options) (*Cluster, error) {
	c := &Cluster{counts: map[string]int{}, clientOpts: o.Client}
	if o.Apache != nil {
		if len(o.Fake) > 0 {
			return nil, errNeedsFake
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		a, err := StartApache(ctx, *o.Apache)
		cancel()
		if err != nil {
			return nil, err
		}
		c.Apache, c.ownApache, c.bootstrap = a, true, a.Bootstrap()
		c.clientOpts = append(a.ClientOpts(), c.clientOpts...)
	} else if ext := os.Getenv(ExternalEnv); ext != "" {
		c.bootstrap = strings.Split(ext, ",")
	} else if libs := os.Getenv(ApacheEnv); libs != "" {
		if len(o.Fake) > 0 {
			return nil, errNeedsFake
		}
		a, own, err := apacheFor(libs, o.Brokers)
		if err != nil {
			return nil, err
		}
		c.Apache, c.ownApache, c.bootstrap = a, own, a.Bootstrap()
	} else {
		fake, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(o.Brokers)}, o.Fake...)...)
		if err != nil {
			return nil, err
		}
		c.Fake = fake
		c.bootstrap = fake.ListenAddrs()
		c.observe()
	}
	cl, err := c.newClient(kgo.ClientID("kafkatest-admin"))
	if err != nil {
		c.Close()
		return nil, err
	}
	c.client, c.admin = cl, kadm.NewClient(cl)
	if c.Apache != nil && !c.ownApache {
		// A shared cluster still holds the topics and groups of the tests
		// before; every test starts from an empty cluster, as on kfake.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := c.empty(ctx); err != nil {
			c.Close()
			return nil, fmt.Errorf("empty the shared apache kafka cluster: %w", err)
		}
	}
	return c, nil
}

// errNeedsFake: kfake options (SASL, TLS, listeners) have no counterpart on
// the Apache cluster the harness starts.
var errNeedsFake = errors.New("kafkatest: kfake options (SASL, TLS, listeners) need the embedded cluster")

// New starts a cluster for one test and closes it when the test ends.
func New(t testing.TB, brokers int, opts ...kfake.Opt) *Cluster {
	t.Helper()
	return NewWith(t, Options{Brokers: brokers, Fake: opts})
}

// NewWith is New with full options.
func NewWith(t testing.TB, o Options) *Cluster {
	t.Helper()
	c, err := StartWith(o)
	if errors.Is(err, errNeedsFake) {
		t.Skipf("needs the embedded cluster's own listeners (%d kfake options); %s selects Apache Kafka", len(o.Fake), ApacheEnv)
	}
	if err != nil {
		t.Fatalf("start kafka: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func (c *Cluster) newClient(opts ...kgo.Opt) (*kgo.Client, error) {
	all := append([]kgo.Opt{kgo.SeedBrokers(c.bootstrap...)}, c.clientOpts...)
	return kgo.NewClient(append(all, opts...)...)
}

// Close stops the cluster and the helper client.
func (c *Cluster) Close() {
	if c.client != nil {
		c.client.Close()
	}
	if c.Fake != nil {
		c.Fake.Close()
	}
	if c.ownApache {
		c.Apache.Stop()
	}
}

// Bootstrap is the comma-separated bootstrap list.
func (c *Cluster) Bootstrap() string { return strings.Join(c.bootstrap, ",") }

// RequireFake skips tests that need kfake's hooks when running against an
// external cluster, where those hooks do not exist.
func (c *Cluster) RequireFake(t testing.TB) {
	t.Helper()
	if c.Fake == nil {
		t.Skipf("needs the embedded cluster's control hooks; this run is on a real Kafka (%s or %s)", ApacheEnv, ExternalEnv)
	}
}

// observe counts every request by kind. The observer never handles a
// request, so the cluster serves it as usual.
func (c *Cluster) observe() {
	c.Fake.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.Fake.KeepControl()
		c.countMu.Lock()
		c.counts[kmsg.NameForKey(req.Key())]++
		c.countMu.Unlock()
		return nil, nil, false
	})
}

// RequestCounts is a snapshot of requests served, by kind.
type RequestCounts map[string]int

// Total sums all kinds.
func (rc RequestCounts) Total() int {
	n := 0
	for _, v := range rc {
		n += v
	}
	return n
}

// String lists kinds alphabetically, for logs and benchmark reports.
func (rc RequestCounts) String() string {
	keys := make([]string, 0, len(rc))
	for k := range rc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, rc[k])
	}
	return strings.Join(parts, " ")
}

// Requests returns the request counts since the last ResetRequests.
func (c *Cluster) Requests() RequestCounts {
	c.countMu.Lock()
	defer c.countMu.Unlock()
	out := RequestCounts{}
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

// ResetRequests zeroes the request counts.
func (c *Cluster) ResetRequests() {
	c.countMu.Lock()
	c.counts = map[string]int{}
	c.countMu.Unlock()
}

// CreateTopic creates a topic with the given partitions.
// It returns once every broker knows the topic and a leader for each
// partition: a real broker learns of a new topic from the metadata log a
// moment after the controller has created it, and a test must not see that
// moment as a missing topic.
//
// The topic keeps its records however old their timestamps (retention.ms
// -1, KeepsRecords): tests seed records stamped months ago, which a
// broker's time retention (7 days by default, checked every 5 minutes)
// deletes in the middle of a test, moving the log start to the log end.
// Set on the topic, it holds on any broker, an external one too.
func (c *Cluster) CreateTopic(ctx context.Context, topic string, partitions int32) error {
	resp, err := c.admin.CreateTopic(ctx, partitions, 1, map[string]*string{retentionMs: &keepForever}, topic)
	if err != nil {
		return err
	}
	if resp.Err != nil {
		return resp.Err
	}
	return c.waitTopics(ctx, func(known map[string]int32) bool { return known[topic] == partitions })
}

// retentionMs is the topic setting of time retention; keepForever turns it
// off.
const retentionMs = "retention.ms"

var keepForever = "-1"

// KeepsRecords says whether the cluster keeps topic's records however old
// their timestamps: its retention.ms, as the broker resolves it, is -1.
func (c *Cluster) KeepsRecords(ctx context.Context, topic string) error {
	rcs, err := c.admin.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		return err
	}
	rc, err := rcs.On(topic, nil)
	if err != nil {
		return err
	}
	if rc.Err != nil {
		return rc.Err
	}
	for _, cfg := range rc.Configs {
		if cfg.Key == retentionMs {
			if v := cfg.MaybeValue(); v != keepForever {
				return fmt.Errorf("topic %s: %s is %q (%s): records stamped long ago are deleted at the next retention check", topic, retentionMs, v, cfg.Source)
			}
			return nil
		}
	}
	return fmt.Errorf("topic %s: no %s in its configuration", topic, retentionMs)
}

// waitTopics waits until done accepts what every broker reports: topic →
// partitions with a leader (a topic is absent while a broker reports an
// error for it).
func (c *Cluster) waitTopics(ctx context.Context, done func(map[string]int32) bool) error {
	for {
		ids, err := brokerIDs(ctx, c.client)
		if err != nil {
			return err
		}
		all := true
		var last map[string]int32
		var lastID int32
		for _, id := range ids {
			known, err := c.brokerTopics(ctx, id)
			if err != nil {
				return err
			}
			if !done(known) {
				all, last, lastID = false, known, id
				break
			}
		}
		if all {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("brokers disagree on the topics (broker %d knows %v): %w", lastID, last, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// brokerTopics asks one broker which non-internal topics it knows, with
// how many of their partitions have a leader.
func (c *Cluster) brokerTopics(ctx context.Context, broker int32) (map[string]int32, error) {
	req := kmsg.NewPtrMetadataRequest() // nil Topics: all of them
	resp, err := req.RequestWith(ctx, c.client.Broker(int(broker)))
	if err != nil {
		return nil, fmt.Errorf("metadata from broker %d: %w", broker, err)
	}
	out := map[string]int32{}
	for _, t := range resp.Topics {
		if t.Topic == nil || t.IsInternal || t.ErrorCode != 0 {
			continue
		}
		led := int32(0)
		for _, p := range t.Partitions {
			if p.ErrorCode == 0 && p.Leader >= 0 {
				led++
			}
		}
		out[*t.Topic] = led
	}
	return out, nil
}

// AddPartitions grows topic to total partitions, and returns once every
// broker knows them (as CreateTopic).
func (c *Cluster) AddPartitions(ctx context.Context, topic string, total int) error {
	resp, err := c.admin.UpdatePartitions(ctx, total, topic)
	if err != nil {
		return err
	}
	if err := resp.Error(); err != nil {
		return err
	}
	return c.waitTopics(ctx, func(known map[string]int32) bool { return known[topic] == int32(total) })
}

// Seed creates topic with partitions and produces perPartition records to
// each, record i of every partition stamped base + i*step. It returns the
// timestamp of record i, so tests can aim at exact offsets.
func (c *Cluster) Seed(ctx context.Context, topic string, partitions int32, perPartition int, base time.Time, step time.Duration) error {
	if err := c.CreateTopic(ctx, topic, partitions); err != nil {
		return fmt.Errorf("create %s: %w", topic, err)
	}
	if perPartition == 0 {
		return nil
	}
	prod, err := c.newClient(kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0), kgo.MaxBufferedRecords(1<<20))
	if err != nil {
		return err
	}
	defer prod.Close()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for p := int32(0); p < partitions; p++ {
		for i := 0; i < perPartition; i++ {
			wg.Add(1)
			r := &kgo.Record{
				Partition: p,
				Key:       []byte(fmt.Sprintf("k%d", i)),
				Value:     []byte(fmt.Sprintf("%s/%d/%d", topic, p, i)),
				Timestamp: base.Add(time.Duration(i) * step),
			}
			prod.Produce(ctx, r, func(_ *kgo.Record, err error) {
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
				wg.Done()
			})
		}
	}
	wg.Wait()
	return firstErr
}

// Offsets are per-partition offsets keyed by topic then partition.
type Offsets map[string]map[int32]int64

// Commit commits offsets for group, as an admin commit with metadata.
func (c *Cluster) Commit(ctx context.Context, group string, offs Offsets, metadata string) error {
	var os kadm.Offsets
	for t, ps := range offs {
		for p, o := range ps {
			os.Add(kadm.Offset{Topic: t, Partition: p, At: o, LeaderEpoch: -1, Metadata: metadata})
		}
	}
	resp, err := c.admin.CommitOffsets(ctx, group, os)
	if err != nil {
		return err
	}
	return resp.Error()
}

// CommittedOffset is one committed offset as the independent client sees it.
type CommittedOffset struct {
	Offset   int64
	Metadata string
}

// Committed reads a group's committed offsets with the independent client.
func (c *Cluster) Committed(ctx context.Context, group string) (map[string]map[int32]CommittedOffset, error) {
	out := map[string]map[int32]CommittedOffset{}
	resp, err := c.admin.FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return out, nil // a group that never committed
	}
	if err != nil {
		return nil, err
	}
	if err := resp.Error(); err != nil {
		return nil, err
	}
	resp.Each(func(o kadm.OffsetResponse) {
		if out[o.Topic] == nil {
			out[o.Topic] = map[int32]CommittedOffset{}
		}
		out[o.Topic][o.Partition] = CommittedOffset{Offset: o.At, Metadata: o.Metadata}
	})
	return out, nil
}

// DeleteCommitted deletes a group's committed offsets of some partitions
// of topic, as offset retention does when they expire.
func (c *Cluster) DeleteCommitted(ctx context.Context, group, topic string, partitions ...int32) error {
	resp, err := c.admin.DeleteOffsets(ctx, group, kadm.TopicsSet{topic: partitionSet(partitions)})
	if err != nil {
		return err
	}
	return resp.Error()
}

func partitionSet(ps []int32) map[int32]struct{} {
	m := make(map[int32]struct{}, len(ps))
	for _, p := range ps {
		m[p] = struct{}{}
	}
	return m
}

// DeleteRecords moves a partition's log start forward, as retention would.
func (c *Cluster) DeleteRecords(ctx context.Context, topic string, partition int32, before int64) error {
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: topic, Partition: partition, At: before})
	resp, err := c.admin.DeleteRecords(ctx, os)
	if err != nil {
		return err
	}
	return resp.Error()
}

// Member is a live consumer group member: a real client that joined the
// group and heartbeats until Leave.
type Member struct {
	client *kgo.Client
	// leave, if set, leaves the group before the client closes (a
	// streams member's own heartbeats).
	leave func()
	once  sync.Once
}

// The two consumer group protocols of Kafka 4: the classic one
// (JoinGroup, SyncGroup, Heartbeat) and KIP-848's (ConsumerGroupHeartbeat,
// the broker assigns), whose groups have type "consumer".
const (
	ProtocolClassic  = "classic"
	ProtocolConsumer = "consumer"
)

// JoinOptions describe a member.
type JoinOptions struct {
	Group, ClientID string
	Topics          []string
	// Protocol is ProtocolClassic (the default) or ProtocolConsumer.
	Protocol string
	// InstanceID makes the member static (KIP-345): when it closes it does
	// not leave, and keeps its place until its session expires.
	InstanceID string
}

// Join starts a classic consumer in group on topics and waits until the
// group is stable with it as a member.
func (c *Cluster) Join(ctx context.Context, group, clientID string, topics ...string) (*Member, error) {
	return c.JoinWith(ctx, JoinOptions{Group: group, ClientID: clientID, Topics: topics})
}

// JoinWith starts a member and waits until the group is stable, of the
// member's protocol, with the member in it.
func (c *Cluster) JoinWith(ctx context.Context, o JoinOptions) (*Member, error) {
	if o.Protocol == "" {
		o.Protocol = ProtocolClassic
	}
	opts := []kgo.Opt{kgo.ConsumerGroup(o.Group), kgo.ConsumeTopics(o.Topics...),
		kgo.ClientID(o.ClientID), kgo.DisableAutoCommit(), kgo.SessionTimeout(6 * time.Second), kgo.HeartbeatInterval(500 * time.Millisecond)}
	switch o.Protocol {
	case ProtocolClassic:
	case ProtocolConsumer:
		// The broker assigns; its group.consumer.* settings set the
		// session and heartbeat.
		opts = append(opts, kgo.ServerSideBalancer())
	default:
		return nil, fmt.Errorf("unknown group protocol %q", o.Protocol)
	}
	if o.InstanceID != "" {
		opts = append(opts, kgo.InstanceID(o.InstanceID))
	}
	cl, err := c.newClient(opts...)
	if err != nil {
		return nil, err
	}
	m := &Member{client: cl}
	// Polling drives the join; run it until the member leaves.
	go func() {
		for {
			fs := cl.PollFetches(context.Background())
			if fs.IsClientClosed() {
				return
			}
		}
	}()
	for {
		g, err := c.Group(ctx, o.Group)
		if err == nil && g.State == "Stable" && g.Type == o.Protocol && g.HasMember(o.ClientID) {
			return m, nil
		}
		select {
		case <-ctx.Done():
			cl.Close()
			return nil, fmt.Errorf("member %s did not join %s (%s): %w (last: %+v, %w)", o.ClientID, o.Group, o.Protocol, ctx.Err(), g, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Leave closes the member: a dynamic member leaves the group at once, a
// static one keeps its place until its session expires.
// Leaving twice is leaving once.
func (m *Member) Leave() {
	m.once.Do(func() {
		if m.leave != nil {
			m.leave()
		}
		m.client.Close()
	})
}

// GroupInfo is a group as the independent client sees it.
type GroupInfo struct {
	// Type is "classic" or "consumer" ("" when the group does not exist).
	Type  string
	State string
	// Members are the members' client IDs.
	Members []string
}

// HasMember says whether a member with this client ID is in the group.
func (g GroupInfo) HasMember(clientID string) bool {
	for _, m := range g.Members {
		if m == clientID {
			return true
		}
	}
	return false
}

// Group lists and describes a group with the API of its type: a consumer
// group through ConsumerGroupDescribe, a classic one through
// DescribeGroups. A group that does not exist has no type.
func (c *Cluster) Group(ctx context.Context, group string) (GroupInfo, error) {
	listed, err := c.admin.ListGroups(ctx)
	if err != nil {
		return GroupInfo{}, err
	}
	l, ok := listed[group]
	if !ok {
		return GroupInfo{State: "Dead"}, nil
	}
	g := GroupInfo{Type: l.GroupType, State: l.State}
	if g.Type == "" {
		g.Type = ProtocolClassic // brokers before KIP-848 (and kfake) have no types
	}
	if g.Type == ProtocolConsumer {
		var d kadm.DescribedConsumerGroups
		if d, err = c.admin.DescribeConsumerGroups(ctx, group); err == nil {
			g.State, err = d[group].State, d[group].Err
			for _, m := range d[group].Members {
				g.Members = append(g.Members, m.ClientID)
			}
		}
	} else {
		var d kadm.DescribedGroups
		if d, err = c.admin.DescribeGroups(ctx, group); err == nil {
			g.State, err = d[group].State, d[group].Err
			for _, m := range d[group].Members {
				g.Members = append(g.Members, m.ClientID)
			}
		}
	}
	if err != nil {
		return GroupInfo{}, err
	}
	return g, nil
}

// GroupState describes a group with the independent client.
func (c *Cluster) GroupState(ctx context.Context, group string) (string, int, error) {
	groups, err := c.admin.DescribeGroups(ctx, group)
	if err != nil {
		return "", 0, err
	}
	g := groups[group]
	return g.State, len(g.Members), g.Err
}
