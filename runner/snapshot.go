package runner

import (
	"fmt"
	"strings"

	"github.com/kafka-replay/kafka-replay/runner/config"
)

// TP is a topic partition.
type TP = config.TopicPartition

// Snapshot is one read of everything the plan depends on. It is filled by
// the Kafka reader and consumed by the pure planner, so the planning rules
// can be tested without a cluster.
type Snapshot struct {
	// ClusterID is the Kafka cluster's ID (Metadata), empty if the
	// brokers give none.
	ClusterID string
	// Group is the state of the group being repositioned.
	Group GroupInfo
	// Committed holds the group's committed offsets (all of them, not only
	// those in scope, so an empty scope can be derived from it).
	Committed map[TP]Committed
	// Unmarked is a group whose offsets carry no metadata, hence no run
	// ID (a share group's start offsets): a retry is recognised only by
	// finding a partition where the plan puts it.
	Unmarked bool
	// Source holds the source group's committed offsets for a group target.
	Source map[TP]Committed
	// Topics maps each existing topic that was asked about to its partition
	// count. Topics absent from the map do not exist.
	Topics map[string]int32
	// Leaders is each partition's leader broker, where known; it only
	// shapes the requests, never the plan.
	Leaders map[TP]int32
	// Partitions is the resolved scope, sorted.
	Partitions []TP
	// LogStart and LogEnd are each partition's bounds.
	LogStart map[TP]int64
	LogEnd   map[TP]int64
	// ForTime is the first offset whose timestamp is at or after the target
	// time, or -1 when no message is that recent.
	ForTime map[TP]int64
}

// Committed is one committed offset and its metadata.
type Committed struct {
	Offset   int64
	Metadata string
}

// GroupInfo describes the group's membership.
type GroupInfo struct {
	// State is Kafka's group state: Empty, Dead, Stable, PreparingRebalance,
	// CompletingRebalance, Assigning, Reconciling or Unknown.
	State string
	// Type is the group's protocol, config.GroupTypeClassic or
	// config.GroupTypeConsumer; empty when the group does not exist.
	Type    string
	Members []Member
}

// Member is one live group member.
type Member struct {
	ClientID   string
	ConsumerID string
	Host       string
}

// Active reports whether the group has live members, which makes an offset
// change unsafe: they would overwrite it with their own commits, and Kafka
// refuses an admin commit to a non-empty group anyway.
func (g GroupInfo) Active() bool {
	if len(g.Members) > 0 {
		return true
	}
	switch g.State {
	case "", "Empty", "Dead", "Unknown":
		return false
	}
	return true
}

// Describe says how many members there are and which clients they are.
func (g GroupInfo) Describe() string {
	clients := map[string]int{}
	var order []string
	for _, m := range g.Members {
		id := m.ClientID
		if m.Host != "" {
			id += "@" + strings.TrimPrefix(m.Host, "/")
		}
		if clients[id] == 0 {
			order = append(order, id)
		}
		clients[id]++
	}
	parts := make([]string, 0, len(order))
	for _, id := range order {
		if n := clients[id]; n > 1 {
			parts = append(parts, fmt.Sprintf("%s (×%d)", id, n))
		} else {
			parts = append(parts, id)
		}
	}
	s := fmt.Sprintf("state %s, %d member(s)", g.State, len(g.Members))
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, ", ")
	}
	return s
}
