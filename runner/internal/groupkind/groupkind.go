// Package groupkind finds out whether a group is a share group (KIP-932)
// or a streams group (KIP-1071), which the runner must never plan as a
// consumer group: a share group has start offsets, set through their own
// API, and a streams group has members and a topology librdkafka cannot
// see.
//
// librdkafka cannot tell: its DescribeConsumerGroups describes such a
// group as a classic group in state Dead with no members (Kafka answers
// GROUP_ID_NOT_FOUND, "not a classic group", and librdkafka reads that as
// a group that does not exist), and its ListConsumerGroups leaves them
// out. So the runner would plan a live share group as a new, empty
// consumer group. This package asks the group's coordinator directly, with
// franz-go's protocol messages: ShareGroupDescribe and StreamsGroupDescribe
// for the one group, two requests whatever the number of partitions or
// groups (ListGroups would list every group of every broker).
package groupkind

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kind is a kind of group, spelled as Kafka's ListGroups spells its types.
type Kind string

const (
	// Classic and Consumer are the consumer groups the runner resets:
	// the classic protocol's, and KIP-848's. This package does not tell
	// them apart (librdkafka does); it answers Consumer for both, and for a
	// group that does not exist.
	Consumer Kind = "consumer"
	// Share is a KIP-932 share group: its members share partitions and
	// acknowledge records one by one; it has a start offset per partition
	// (AlterShareGroupOffsets), no committed offsets.
	Share Kind = "share"
	// Streams is a KIP-1071 streams group: a Kafka Streams application on
	// the streams rebalance protocol. Its committed offsets are those of
	// its input topics and of its repartition topics.
	Streams Kind = "streams"
)

// Info is what the coordinator says of a share or streams group.
type Info struct {
	Kind Kind
	// State is the group's state (Empty, Stable, Assigning, ...).
	State string
	// Members are the live members' client IDs with their hosts.
	Members []string
	// SourceTopics and RepartitionTopics are a streams group's input
	// topics and the repartition topics its topology reads (internal
	// topics it writes and reads itself), sorted.
	SourceTopics, RepartitionTopics []string
	// InternalTopics are the internal topics of a streams group's
	// topology that kafka-streams-groups.sh --delete-all-internal-topics
	// deletes: its repartition topics and state changelogs that are no
	// source topic of the topology and whose names Kafka Streams makes
	// (InferredInternal), sorted.
	InternalTopics []string
}

// Describe tells whether group is a share group or a streams group, or
// neither (Kind Consumer). A broker that does not know these requests (a
// Kafka before 4.0, kfake for streams groups) or does not have the kind
// turned on has no group of that kind. Coordinator errors that pass are
// retried until ctx ends.
func Describe(ctx context.Context, cl *kgo.Client, group string) (Info, error) {
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		info, err := describeOnce(ctx, cl, group)
		if err == nil || !retriable(err) {
			return info, err
		}
		select {
		case <-ctx.Done():
			return Info{}, fmt.Errorf("find the kind of group %s: %w (last: %w)", group, context.Cause(ctx), err)
		case <-time.After(wait):
		}
	}
}

func describeOnce(ctx context.Context, cl *kgo.Client, group string) (Info, error) {
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKeys = []string{group}
	fr, err := fc.RequestWith(ctx, cl)
	if err != nil {
		return Info{}, err
	}
	if len(fr.Coordinators) != 1 {
		return Info{}, fmt.Errorf("find coordinator: %d answers for one group", len(fr.Coordinators))
	}
	c := fr.Coordinators[0]
	if err := kerr.ErrorForCode(c.ErrorCode); err != nil {
		return Info{}, fmt.Errorf("find coordinator: %w", err)
	}
	// kgo routes ShareGroupDescribe to the coordinator itself but not
	// StreamsGroupDescribe ("client is too old"): both go to the broker
	// FindCoordinator named.
	b := cl.Broker(int(c.NodeID))
	type answer struct {
		resp kmsg.Response
		err  error
	}
	share, streams := make(chan answer, 1), make(chan answer, 1)
	go func() {
		req := kmsg.NewPtrShareGroupDescribeRequest()
		req.GroupIDs = []string{group}
		r, err := b.Request(ctx, req)
		share <- answer{r, err}
	}()
	go func() {
		req := kmsg.NewPtrStreamsGroupDescribeRequest()
		req.Groups = []string{group}
		r, err := b.Request(ctx, req)
		streams <- answer{r, err}
	}()
	sa, ta := <-share, <-streams
	var sr *kmsg.ShareGroupDescribeResponse
	var tr *kmsg.StreamsGroupDescribeResponse
	if sa.err == nil {
		sr = sa.resp.(*kmsg.ShareGroupDescribeResponse)
	} else if !unsupported(sa.err) {
		return Info{}, fmt.Errorf("share group describe: %w", sa.err)
	}
	if ta.err == nil {
		tr = ta.resp.(*kmsg.StreamsGroupDescribeResponse)
	} else if !unsupported(ta.err) {
		return Info{}, fmt.Errorf("streams group describe: %w", ta.err)
	}
	return decide(group, sr, tr)
}

// decide reads the two answers (nil where the broker does not know the
// request). GROUP_ID_NOT_FOUND is Kafka's answer both for a group that
// does not exist and for a group of another kind.
func decide(group string, share *kmsg.ShareGroupDescribeResponse, streams *kmsg.StreamsGroupDescribeResponse) (Info, error) {
	var found []Info
	if share != nil {
		if len(share.Groups) != 1 {
			return Info{}, fmt.Errorf("share group describe: %d answers for one group", len(share.Groups))
		}
		g := share.Groups[0]
		switch err := kerr.ErrorForCode(g.ErrorCode); {
		case err == nil:
			info := Info{Kind: Share, State: g.GroupState}
			for _, m := range g.Members {
				info.Members = append(info.Members, member(m.ClientID, m.ClientHost))
			}
			found = append(found, info)
		case notThisKind(err):
		default:
			return Info{}, fmt.Errorf("share group describe %s: %w%s", group, err, message(g.ErrorMessage))
		}
	}
	if streams != nil {
		if len(streams.Groups) != 1 {
			return Info{}, fmt.Errorf("streams group describe: %d answers for one group", len(streams.Groups))
		}
		g := streams.Groups[0]
		switch err := kerr.ErrorForCode(g.ErrorCode); {
		case err == nil:
			info := Info{Kind: Streams, State: g.State}
			for _, m := range g.Members {
				info.Members = append(info.Members, member(m.ClientID, m.ClientHost))
			}
			if t := g.Topology; t != nil {
				info.SourceTopics, info.RepartitionTopics = topologyTopics(t.Subtopologies)
				info.InternalTopics = internalTopics(group, t.Subtopologies)
			}
			found = append(found, info)
		case notThisKind(err):
		default:
			return Info{}, fmt.Errorf("streams group describe %s: %w%s", group, err, message(g.ErrorMessage))
		}
	}
	switch len(found) {
	case 0:
		return Info{Kind: Consumer}, nil
	case 1:
		return found[0], nil
	}
	// A group ID names one group: a coordinator that describes it as both
	// is not to be trusted with a reset.
	return Info{}, fmt.Errorf("the coordinator describes group %s both as a share group and as a streams group", group)
}

// topologyTopics are a streams topology's input topics: the source topics
// that no subtopology writes (a repartition topic is a source topic of the
// subtopology that reads it, and a sink of the one that writes it), and
// those repartition topics.
func topologyTopics(subs []kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology) (source, repartition []string) {
	rep := map[string]bool{}
	for _, s := range subs {
		for _, t := range s.RepartitionSourceTopics {
			rep[t.Topic] = true
		}
		for _, t := range s.RepartitionSinkTopics {
			rep[t] = true
		}
	}
	src := map[string]bool{}
	for _, s := range subs {
		for _, t := range s.SourceTopics {
			if !rep[t] {
				src[t] = true
			}
		}
	}
	return sorted(src), sorted(rep)
}

// internalTopics are the topology's topics that Kafka's tool deletes
// with --delete-all-internal-topics (StreamsGroupCommand, Kafka 4.4): the
// repartition source topics and the state changelog topics, less any
// topic a subtopology lists as a source topic, and only those named as
// Kafka Streams names the application's own internal topics: a topic the
// topology merely uses is never deleted.
func internalTopics(group string, subs []kmsg.StreamsGroupDescribeResponseGroupTopologySubtopology) []string {
	source := map[string]bool{}
	for _, s := range subs {
		for _, t := range s.SourceTopics {
			source[t] = true
		}
	}
	out := map[string]bool{}
	add := func(t string) {
		if !source[t] && InferredInternal(t, group) {
			out[t] = true
		}
	}
	for _, s := range subs {
		for _, t := range s.RepartitionSourceTopics {
			add(t.Topic)
		}
		for _, t := range s.StateChangelogTopics {
			add(t.Topic)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return sorted(out)
}

// fkJoinTopic matches the topics of a foreign-key join, whose names do not
// end as the others do.
var fkJoinTopic = regexp.MustCompile(`^.+-KTABLE-FK-JOIN-SUBSCRIPTION-(REGISTRATION|RESPONSE)-\d+-topic$`)

// InferredInternal reports whether topic is named as Kafka Streams names
// an internal topic of application (its application.id, the group):
// "<application>-" then a changelog, repartition or foreign-key join
// subscription topic's ending, as Kafka's tool infers them.
func InferredInternal(topic, application string) bool {
	if !strings.HasPrefix(topic, application+"-") {
		return false
	}
	for _, end := range []string{"-changelog", "-repartition", "-subscription-registration-topic", "-subscription-response-topic"} {
		if strings.HasSuffix(topic, end) {
			return true
		}
	}
	return fkJoinTopic.MatchString(topic)
}

func sorted(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func member(clientID, host string) string {
	if host = strings.TrimPrefix(host, "/"); host != "" {
		return clientID + "@" + host
	}
	return clientID
}

func message(m *string) string {
	if m == nil || *m == "" {
		return ""
	}
	return " (" + *m + ")"
}

// notThisKind is an answer that means "no group of this kind by that
// name": not found, or the kind not enabled on the cluster.
func notThisKind(err error) bool {
	return errors.Is(err, kerr.GroupIDNotFound) || errors.Is(err, kerr.UnsupportedVersion)
}

// unsupported is a request the broker does not take at all: it never
// advertised the API, or closed the connection on an unknown request key.
func unsupported(err error) bool {
	if errors.Is(err, kerr.UnsupportedVersion) {
		return true
	}
	return strings.Contains(err.Error(), "broker is too old")
}

func retriable(err error) bool {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Retriable
	}
	return kgo.IsRetryableBrokerErr(err)
}
