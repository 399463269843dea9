package kafkatest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The two other kinds of group Kafka 4.x has beside consumer groups, as
// ListGroups spells their types.
const (
	KindShare   = "share"
	KindStreams = "streams"
)

// JoinShare starts a share consumer (KIP-932) in group on topics and
// waits until the group lists it as a member. Kafka 4.2 and later have
// share groups on by default; kfake has them too.
func (c *Cluster) JoinShare(ctx context.Context, group, clientID string, topics ...string) (*Member, error) {
	cl, err := c.newClient(kgo.ShareGroup(group), kgo.ConsumeTopics(topics...), kgo.ClientID(clientID))
	if err != nil {
		return nil, err
	}
	m := &Member{client: cl}
	go func() {
		for {
			if cl.PollFetches(context.Background()).IsClientClosed() {
				return
			}
		}
	}()
	for {
		req := kmsg.NewPtrShareGroupDescribeRequest()
		req.GroupIDs = []string{group}
		resp, err := req.RequestWith(ctx, c.client)
		if err == nil && len(resp.Groups) == 1 && resp.Groups[0].ErrorCode == 0 {
			for _, mb := range resp.Groups[0].Members {
				if mb.ClientID == clientID {
					return m, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			cl.Close()
			return nil, fmt.Errorf("share member %s did not join %s: %w (last: %w)", clientID, group, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// JoinStreams makes a streams-group member (KIP-1071) of group whose
// topology reads topics, speaking the streams rebalance protocol itself
// (StreamsGroupHeartbeat): the broker side of a Kafka Streams application
// without a JVM. It heartbeats until Leave, which leaves the group. It
// processes nothing; the group and its membership are real.
func (c *Cluster) JoinStreams(ctx context.Context, group, clientID string, topics ...string) (*Member, error) {
	return c.JoinStreamsTopology(ctx, group, clientID, []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{{SubtopologyID: "0", SourceTopics: topics}})
}

// JoinStreamsTopology is JoinStreams with the member describing subs as
// its topology (repartition and changelog topics included), as a Kafka
// Streams application describes its own.
func (c *Cluster) JoinStreamsTopology(ctx context.Context, group, clientID string, subs []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology) (*Member, error) {
	coord, err := c.coordinator(ctx, group)
	if err != nil {
		return nil, err
	}
	cl, err := c.newClient(kgo.ClientID(clientID))
	if err != nil {
		return nil, err
	}
	b := cl.Broker(int(coord))
	idb := make([]byte, 16)
	_, _ = rand.Read(idb)
	memberID := base64.RawURLEncoding.EncodeToString(idb)
	process := clientID + "-process"
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = group, memberID, 0
	req.RebalanceTimeoutMillis = 30000
	req.ProcessID = &process
	// Joining, the broker wants the tasks as empty lists, not absent.
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	req.Topology = &kmsg.StreamsGroupHeartbeatRequestTopology{Subtopologies: subs}
	resp, err := beat(ctx, b, req)
	if err != nil {
		cl.Close()
		return nil, fmt.Errorf("streams member %s did not join %s: %w", clientID, group, err)
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	var once sync.Once
	go func() {
		defer close(stopped)
		epoch, interval := resp.MemberEpoch, time.Duration(resp.HeartbeatIntervalMillis)*time.Millisecond
		for {
			select {
			case <-stop:
				leave := kmsg.NewPtrStreamsGroupHeartbeatRequest()
				leave.Group, leave.MemberID, leave.MemberEpoch = group, memberID, -1
				lctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, _ = beat(lctx, b, leave)
				cancel()
				return
			case <-time.After(min(interval, time.Second)):
			}
			hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
			hb.Group, hb.MemberID, hb.MemberEpoch = group, memberID, epoch
			hctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if r, err := beat(hctx, b, hb); err == nil {
				epoch = r.MemberEpoch
			}
			cancel()
		}
	}()
	return &Member{client: cl, leave: func() {
		once.Do(func() { close(stop) })
		<-stopped
	}}, nil
}

// beat sends one StreamsGroupHeartbeat and reads its error.
func beat(ctx context.Context, b *kgo.Broker, req *kmsg.StreamsGroupHeartbeatRequest) (*kmsg.StreamsGroupHeartbeatResponse, error) {
	r, err := b.Request(ctx, req)
	if err != nil {
		return nil, err
	}
	resp := r.(*kmsg.StreamsGroupHeartbeatResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		msg := ""
		if resp.ErrorMessage != nil {
			msg = ": " + *resp.ErrorMessage
		}
		return nil, fmt.Errorf("%w%s", err, msg)
	}
	return resp, nil
}

// coordinator finds group's coordinator (kgo does not route streams-group
// requests itself).
func (c *Cluster) coordinator(ctx context.Context, group string) (int32, error) {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKeys = []string{group}
	for {
		resp, err := req.RequestWith(ctx, c.client)
		if err == nil && len(resp.Coordinators) == 1 {
			if err = kerr.ErrorForCode(resp.Coordinators[0].ErrorCode); err == nil {
				return resp.Coordinators[0].NodeID, nil
			}
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("find the coordinator of %s: %w (last: %w)", group, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Kind is the group's type as ListGroups gives it ("" when there is no
// such group).
func (c *Cluster) Kind(ctx context.Context, group string) (string, error) {
	listed, err := c.admin.ListGroups(ctx)
	if err != nil {
		return "", err
	}
	return listed[group].GroupType, nil
}

// ShareStartOffsets reads a share group's start offsets with the
// independent client: topic/partition to offset, -1 where none is set.
func (c *Cluster) ShareStartOffsets(ctx context.Context, group string) (map[string]int64, error) {
	ds, err := c.admin.DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		return nil, err
	}
	d := ds[group]
	if d.Err != nil {
		return nil, d.Err
	}
	out := map[string]int64{}
	for t, ps := range d.Offsets {
		for p, o := range ps {
			if o.Err != nil {
				return nil, fmt.Errorf("%s/%d: %w", t, p, o.Err)
			}
			out[fmt.Sprintf("%s/%d", t, p)] = o.StartOffset
		}
	}
	return out, nil
}

// SetShareStartOffsets sets an empty share group's start offsets with the
// independent client, as kafka-share-groups.sh --reset-offsets does.
func (c *Cluster) SetShareStartOffsets(ctx context.Context, group string, offs Offsets) error {
	ko := kadm.Offsets{}
	for t, ps := range offs {
		for p, o := range ps {
			ko.Add(kadm.Offset{Topic: t, Partition: p, At: o, LeaderEpoch: -1})
		}
	}
	resp, err := c.admin.AlterShareGroupOffsets(ctx, group, ko)
	if err != nil {
		return err
	}
	return resp.Error()
}

// Topics lists the cluster's topics (internal ones left out), as a
// broker knows them now. Not kadm's ListTopics: it answers from the
// client's cached metadata (RequestCachedMetadata, up to MetadataMinAge
// old), which leaves out a topic created a moment ago and keeps one just
// deleted, so a test would see topics vanish that nobody deleted.
func (c *Cluster) Topics(ctx context.Context) (map[string]bool, error) {
	req := kmsg.NewPtrMetadataRequest() // nil Topics: all of them
	resp, err := req.RequestWith(ctx, c.client)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, t := range resp.Topics {
		if t.Topic != nil && !t.IsInternal && t.ErrorCode == 0 {
			out[*t.Topic] = true
		}
	}
	return out, nil
}

// DeleteGroup deletes an empty group of any kind, its committed offsets
// with it (kafka-streams-groups.sh --delete does this for a streams group).
func (c *Cluster) DeleteGroup(ctx context.Context, group string) error {
	resp, err := c.admin.DeleteGroup(ctx, group)
	if err != nil {
		return err
	}
	return resp.Err
}

// LogEnds reads the log end offset of every partition of topic.
func (c *Cluster) LogEnds(ctx context.Context, topic string) (map[int32]int64, error) {
	ends, err := c.admin.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	if err := ends.Error(); err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	for _, o := range ends[topic] {
		out[o.Partition] = o.Offset
	}
	return out, nil
}
