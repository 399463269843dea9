package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/internal/groupkind"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// --list and --describe are read-only: they list the cluster's groups, or
// describe some, as kafka-consumer-groups.sh --list and --describe do, and
// write report.Groups (json) or a table. They run on franz-go's admin
// client (kadm), which batches what librdkafka's admin API asks group by
// group: one ListGroups per broker, one describe and one OffsetFetch per
// coordinator for all its groups (KIP-709), one ListOffsets per leader.

// inspectMain serves a --list or a --describe: exit 0 with the listing,
// 2 on invalid input, 4 when Kafka could not be asked.
func inspectMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	in, err := config.LoadInspect(args, stderr)
	if errors.Is(err, config.ErrHelp) {
		return int(report.ExitOK)
	}
	red := (*config.Redactor)(nil)
	if in != nil {
		red = in.Conn.KafkaProperties.Redactor().WithNames(in.Conn.FieldNames)
	}
	log := slog.New(newRedactingHandler(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}), red))
	if err != nil {
		log.Error("invalid input", "reason", report.ReasonInvalidInput, "error", err)
		return int(report.ExitInvalidInput)
	}
	opts, err := groupkind.ClientOptions(clientID, in.Conn.BootstrapServers, in.Conn.KafkaProperties)
	if err != nil {
		log.Error("invalid input", "reason", report.ReasonInvalidInput, "error", fmt.Errorf("%s: %w", config.FlagKafkaConfigDir, err))
		return int(report.ExitInvalidInput)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		log.Error("invalid input", "reason", report.ReasonInvalidInput, "error", err)
		return int(report.ExitInvalidInput)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, in.Conn.Timeout)
	defer cancel()
	if want := in.Conn.ClusterID; want != "" {
		// Before any group is asked about, as a run checks it.
		m, err := kadm.NewClient(cl).BrokerMetadata(ctx)
		if err != nil {
			log.Error("could not read the cluster ID", "reason", report.ReasonKafkaError, "error", err)
			return int(report.ExitKafkaError)
		}
		if err := checkSameCluster(m.Cluster, want); err != nil {
			log.Error("invalid input", "reason", report.ReasonInvalidInput, "error", err)
			return int(report.ExitInvalidInput)
		}
	}
	groups, err := listGroups(ctx, cl, in)
	if err != nil {
		log.Error("could not list the groups", "reason", report.ReasonKafkaError, "error", err)
		return int(report.ExitKafkaError)
	}
	// The result file and the termination message first, as a run writes
	// its result: a launcher-made Job (REPLAY_LIST) is read from them.
	if _, err := writePlaces(in.Conn, func() ([]byte, error) { return report.MarshalGroups(groups) },
		func(limit int) ([]byte, error) { return report.CompactGroups(groups, limit) }); err != nil {
		log.Error("could not write the listing", "reason", report.ReasonInternalError, "error", err)
		return int(report.ExitInternal)
	}
	if in.Output == config.OutputJSON {
		err = report.EncodeGroups(stdout, groups)
	} else {
		err = report.WriteGroupsTable(stdout, groups)
	}
	if err != nil {
		log.Error("could not write the listing", "error", err)
		return int(report.ExitInternal)
	}
	return int(report.ExitOK)
}

// seenGroup is what the cluster said of one group, before it is shaped
// into a report.Group (shapeGroup).
type seenGroup struct {
	name, kind, protocolType, state string
	members                         []seenMember
	// committed is nil when the offsets were not read.
	committed map[config.TopicPartition]int64
	// topics are topics known without a partition (a streams topology).
	topics []string
	err    error
}

type seenMember struct {
	id, instance, client, host string
	assigned                   map[string][]int32
}

// listGroups asks the cluster about the groups in (all for a --list and
// --all-groups).
func listGroups(ctx context.Context, cl *kgo.Client, in *config.Inspect) (report.Groups, error) {
	adm := kadm.NewClient(cl)
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return report.Groups{}, fmt.Errorf("list groups: %w", err)
	}
	names := in.Groups
	if len(names) == 0 {
		names = listed.Groups()
	}
	seen := make(map[string]*seenGroup, len(names))
	var classic, consumer, share, withOffsets []string
	for _, n := range names {
		l, ok := listed[n]
		g := &seenGroup{name: n, state: "Dead"}
		seen[n] = g
		if !ok {
			continue // never existed, or gone: nothing to describe
		}
		g.kind, g.protocolType, g.state = groupKind(l.GroupType), l.ProtocolType, l.State
		switch g.kind {
		case config.GroupTypeConsumer:
			consumer = append(consumer, n)
		case config.GroupTypeShare:
			share = append(share, n)
		case config.GroupTypeStreams:
			describeStreams(ctx, cl, g)
		default:
			classic = append(classic, n)
		}
		if g.kind != config.GroupTypeShare {
			withOffsets = append(withOffsets, n) // a share group has start offsets, not commits
		}
	}
	if err := describeClassic(ctx, adm, classic, seen); err != nil {
		return report.Groups{}, err
	}
	if err := describeConsumer(ctx, adm, consumer, seen); err != nil {
		return report.Groups{}, err
	}
	if err := describeShare(ctx, adm, share, seen); err != nil {
		return report.Groups{}, err
	}
	if len(withOffsets) > 0 {
		for n, r := range adm.FetchManyOffsets(ctx, withOffsets...) {
			g := seen[n]
			if g == nil {
				continue
			}
			if r.Err != nil {
				g.err = errors.Join(g.err, fmt.Errorf("committed offsets: %w", r.Err))
				continue
			}
			g.committed = map[config.TopicPartition]int64{}
			r.Fetched.Each(func(o kadm.OffsetResponse) {
				if o.Err == nil && o.At >= 0 {
					g.committed[config.TopicPartition{Topic: o.Topic, Partition: o.Partition}] = o.At
				}
			})
		}
	}
	var ends map[config.TopicPartition]int64
	if in.Describe {
		if ends, err = logEnds(ctx, adm, seen); err != nil {
			return report.Groups{}, err
		}
	}
	out := report.Groups{Describe: in.Describe}
	for _, n := range names {
		out.Groups = append(out.Groups, shapeGroup(seen[n], ends, in.Describe))
	}
	return out, nil
}

// groupKind spells ListGroups' type as --group-type does; a broker before
// KIP-848 (and kfake) lists no type, and has classic groups only.
func groupKind(t string) string {
	switch t {
	case "consumer":
		return config.GroupTypeConsumer
	case "share":
		return config.GroupTypeShare
	case "streams":
		return config.GroupTypeStreams
	}
	return config.GroupTypeClassic
}

func describeClassic(ctx context.Context, adm *kadm.Client, names []string, seen map[string]*seenGroup) error {
	if len(names) == 0 {
		return nil
	}
	d, err := adm.DescribeGroups(ctx, names...)
	if err != nil && !partial(err) {
		return fmt.Errorf("describe groups: %w", err)
	}
	for _, n := range names {
		g, dg := seen[n], d[n]
		if dg.Group == "" {
			g.err = errors.New("not described: its coordinator did not answer")
			continue
		}
		if dg.Err != nil {
			g.err = dg.Err
			continue
		}
		g.state, g.protocolType = dg.State, dg.ProtocolType
		for _, m := range dg.Members {
			sm := seenMember{id: m.MemberID, instance: deref(m.InstanceID), client: m.ClientID, host: m.ClientHost, assigned: map[string][]int32{}}
			if a, ok := m.Assigned.AsConsumer(); ok {
				for _, t := range a.Topics {
					sm.assigned[t.Topic] = append(sm.assigned[t.Topic], t.Partitions...)
				}
			}
			g.members = append(g.members, sm)
		}
	}
	return nil
}

func describeConsumer(ctx context.Context, adm *kadm.Client, names []string, seen map[string]*seenGroup) error {
	if len(names) == 0 {
		return nil
	}
	d, err := adm.DescribeConsumerGroups(ctx, names...)
	if err != nil && !partial(err) {
		return fmt.Errorf("describe consumer groups: %w", err)
	}
	for _, n := range names {
		g, dg := seen[n], d[n]
		if dg.Group == "" {
			g.err = errors.New("not described: its coordinator did not answer")
			continue
		}
		if dg.Err != nil {
			g.err = dg.Err
			continue
		}
		g.state = dg.State
		for _, m := range dg.Members {
			g.members = append(g.members, seenMember{id: m.MemberID, instance: deref(m.InstanceID), client: m.ClientID, host: m.ClientHost, assigned: topicsSet(m.Assignment)})
		}
	}
	return nil
}

func describeShare(ctx context.Context, adm *kadm.Client, names []string, seen map[string]*seenGroup) error {
	if len(names) == 0 {
		return nil
	}
	d, err := adm.DescribeShareGroups(ctx, names...)
	if err != nil && !partial(err) {
		return fmt.Errorf("describe share groups: %w", err)
	}
	for _, n := range names {
		g, dg := seen[n], d[n]
		if dg.GroupID == "" {
			g.err = errors.New("not described: its coordinator did not answer")
			continue
		}
		if dg.Err != nil {
			g.err = dg.Err
			continue
		}
		g.state = dg.GroupState
		for _, m := range dg.Members {
			g.members = append(g.members, seenMember{id: m.MemberID, client: m.ClientID, host: m.ClientHost, assigned: topicsSet(m.Assignment)})
		}
	}
	return nil
}

// describeStreams asks a streams group's coordinator for its members and
// topology: one request per streams group, as kadm has no batched form.
func describeStreams(ctx context.Context, cl *kgo.Client, g *seenGroup) {
	info, err := groupkind.Describe(ctx, cl, g.name)
	if err != nil {
		g.err = err
		return
	}
	g.state = info.State
	g.topics = append(slices.Clone(info.SourceTopics), info.RepartitionTopics...)
	for _, m := range info.Members {
		// groupkind names a member clientID@host.
		client, host, _ := strings.Cut(m, "@")
		g.members = append(g.members, seenMember{client: client, host: host})
	}
}

// logEnds reads the high watermark of every partition the groups commit
// or are assigned: one Metadata and one ListOffsets per leader.
func logEnds(ctx context.Context, adm *kadm.Client, seen map[string]*seenGroup) (map[config.TopicPartition]int64, error) {
	topics := map[string]bool{}
	for _, g := range seen {
		for tp := range g.committed {
			topics[tp.Topic] = true
		}
		for _, m := range g.members {
			for t := range m.assigned {
				topics[t] = true
			}
		}
	}
	if len(topics) == 0 {
		return nil, nil
	}
	names := make([]string, 0, len(topics))
	for t := range topics {
		names = append(names, t)
	}
	sort.Strings(names)
	listed, err := adm.ListEndOffsets(ctx, names...)
	if err != nil && !partial(err) {
		return nil, fmt.Errorf("list log end offsets: %w", err)
	}
	ends := map[config.TopicPartition]int64{}
	listed.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset >= 0 {
			ends[config.TopicPartition{Topic: o.Topic, Partition: o.Partition}] = o.Offset
		}
	})
	return ends, nil
}

// partial says whether err is some brokers failing while others answered:
// the groups and partitions of the others are still listed, and the
// failed ones say so (unknown offsets, a group's error).
func partial(err error) bool {
	var se *kadm.ShardErrors
	return errors.As(err, &se) && !se.AllFailed
}

func topicsSet(s kadm.TopicsSet) map[string][]int32 {
	out := map[string][]int32{}
	for t, ps := range s {
		for p := range ps {
			out[t] = append(out[t], p)
		}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// shapeGroup turns what the cluster said of a group into its report:
// topics from the commits, the assignment and the topology; for a
// describe, a row per committed or assigned partition with its member.
func shapeGroup(g *seenGroup, ends map[config.TopicPartition]int64, describe bool) report.Group {
	out := report.Group{Group: g.name, GroupType: g.kind, ProtocolType: g.protocolType, State: g.state, MemberCount: len(g.members), Topics: []string{}}
	if g.err != nil {
		out.Error = g.err.Error()
	}
	owner := map[config.TopicPartition]*seenMember{}
	parts := map[config.TopicPartition]bool{}
	topics := map[string]bool{}
	for _, t := range g.topics {
		topics[t] = true
	}
	committed := map[string]bool{}
	for tp := range g.committed {
		parts[tp], topics[tp.Topic], committed[tp.Topic] = true, true, true
	}
	for t := range committed {
		out.Committed = append(out.Committed, t)
	}
	sort.Strings(out.Committed)
	for i := range g.members {
		m := &g.members[i]
		n := 0
		for t, ps := range m.assigned {
			topics[t] = true
			for _, p := range ps {
				tp := config.TopicPartition{Topic: t, Partition: p}
				owner[tp], parts[tp] = m, true
				n++
			}
		}
		if describe {
			out.Members = append(out.Members, report.GroupMember{MemberID: m.id, InstanceID: m.instance, ClientID: m.client, Host: m.host, Partitions: n})
		}
	}
	for t := range topics {
		out.Topics = append(out.Topics, t)
	}
	sort.Strings(out.Topics)
	if !describe {
		return out
	}
	slices.SortFunc(out.Members, func(a, b report.GroupMember) int {
		return strings.Compare(a.ClientID+"\x00"+a.MemberID, b.ClientID+"\x00"+b.MemberID)
	})
	for tp := range parts {
		row := report.GroupPartition{Topic: tp.Topic, Partition: tp.Partition}
		if o, ok := g.committed[tp]; ok {
			row.CurrentOffset = &o
		}
		if e, ok := ends[tp]; ok {
			row.LogEndOffset = &e
		}
		row.Lag = report.Lag(row.CurrentOffset, row.LogEndOffset)
		if m := owner[tp]; m != nil {
			row.MemberID, row.ClientID, row.Host = m.id, m.client, m.host
		}
		out.Partitions = append(out.Partitions, row)
	}
	slices.SortFunc(out.Partitions, func(a, b report.GroupPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	return out
}
