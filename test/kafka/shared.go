package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A JVM broker takes seconds to start, so a test binary whose TestMain
// calls RunShared starts one Apache Kafka cluster, on first use, for all
// its tests; each Cluster then empties it (every topic and group) before
// the test uses it. The tests of a binary must not run in parallel.
var shared struct {
	mu      sync.Mutex
	nodes   int // 0: no RunShared; every Cluster starts its own
	cluster *Apache
}

// RunShared runs m's tests. Under KAFKA_REPLAY_TEST_APACHE the Clusters of
// this binary share one Apache Kafka cluster of at least nodes nodes,
// started by the first of them and stopped when the tests end. On kfake
// it only runs the tests.
func RunShared(m *testing.M, nodes int) int {
	shared.mu.Lock()
	shared.nodes = max(nodes, 1)
	shared.mu.Unlock()
	defer func() {
		shared.mu.Lock()
		defer shared.mu.Unlock()
		if shared.cluster != nil {
			shared.cluster.Stop()
			shared.cluster = nil
		}
	}()
	return m.Run()
}

// apacheFor returns the shared cluster, starting it on first use, or a
// cluster of the Cluster's own when the binary shares none (own is true).
func apacheFor(libs string, nodes int) (a *Apache, own bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.nodes == 0 {
		a, err := StartApache(ctx, ApacheOptions{Libs: libs, Nodes: max(nodes, 1)})
		return a, true, err
	}
	if shared.cluster != nil && len(shared.cluster.nodes) >= nodes {
		return shared.cluster, false, nil
	}
	if shared.cluster != nil { // too small for this test: replace it
		shared.cluster.Stop()
		shared.cluster = nil
	}
	a, err = StartApache(ctx, ApacheOptions{Libs: libs, Nodes: max(nodes, shared.nodes)})
	if err != nil {
		return nil, false, err
	}
	shared.cluster = a
	return a, false, nil
}

// empty deletes every topic and every group, so that the next test finds
// the cluster as a fresh one. A group that still has members (a static
// member that left keeps its place until its session expires) has them
// removed first. It deletes until every broker reports no topic and no
// group is left, not once: a topic can come back after its deletion (a
// streams group's coordinator creates the internal topics its last
// heartbeat asked for asynchronously, so a creation requested by the
// previous test may land after this deletion), and the next test would
// then find topics nobody made for it.
func (c *Cluster) empty(ctx context.Context) error {
	for {
		// Every broker's list: one that lags may not know a topic another has.
		ids, err := brokerIDs(ctx, c.client)
		if err != nil {
			return err
		}
		topics := map[string]bool{}
		for _, id := range ids {
			known, err := c.brokerTopics(ctx, id)
			if err != nil {
				return err
			}
			for t := range known {
				topics[t] = true
			}
		}
		names := make([]string, 0, len(topics))
		for t := range topics {
			names = append(names, t)
		}
		sort.Strings(names)
		if len(names) > 0 {
			resp, err := c.admin.DeleteTopics(ctx, names...)
			if err != nil {
				return fmt.Errorf("delete topics: %w", err)
			}
			for _, r := range resp.Sorted() {
				if r.Err != nil && !errors.Is(r.Err, kerr.UnknownTopicOrPartition) {
					return fmt.Errorf("delete topic %s: %w", r.Topic, r.Err)
				}
			}
		}
		left, err := c.deleteGroups(ctx)
		if err != nil {
			return err
		}
		if len(names) == 0 && len(left) == 0 {
			return nil
		}
		for _, t := range names {
			left = append(left, "topic "+t)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("still there: %s: %w", strings.Join(left, ", "), ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// deleteGroups deletes the groups it can and returns those still there.
func (c *Cluster) deleteGroups(ctx context.Context) ([]string, error) {
	var left []string
	groups, err := c.admin.ListGroups(ctx)
	if err != nil {
		return nil, fmt.Errorf("list groups: %w", err)
	}
	names := groups.Groups()
	sort.Strings(names)
	if len(names) == 0 {
		return nil, nil
	}
	resp, err := c.admin.DeleteGroups(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("delete groups: %w", err)
	}
	for _, g := range names {
		r := resp[g]
		switch {
		case r.Err == nil, errors.Is(r.Err, kerr.GroupIDNotFound):
		case errors.Is(r.Err, kerr.NonEmptyGroup):
			if err := c.removeMembers(ctx, g); err != nil {
				return nil, err
			}
			left = append(left, "group "+g)
		default:
			left = append(left, fmt.Sprintf("group %s (%v)", g, r.Err))
		}
	}
	return left, nil
}

// removeMembers removes a group's static members, as
// kafka-consumer-groups.sh's admin call removeMembersFromConsumerGroup
// does. Dynamic members leave when their test closes them.
func (c *Cluster) removeMembers(ctx context.Context, group string) error {
	described, err := c.admin.DescribeGroups(ctx, group)
	if err != nil {
		return fmt.Errorf("describe group %s: %w", group, err)
	}
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = group
	for _, m := range described[group].Members {
		if m.InstanceID == nil {
			continue
		}
		id := kmsg.NewLeaveGroupRequestMember()
		id.InstanceID = m.InstanceID
		id.MemberID = m.MemberID
		req.Members = append(req.Members, id)
	}
	if len(req.Members) == 0 {
		return nil
	}
	_, err = req.RequestWith(ctx, c.client) // kgo routes it to the coordinator
	return err
}
