package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// GroupsSchema identifies the version of the listing format, as Schema does
// the result's.
const GroupsSchema = "kafkareplay.dev/groups/v1"

// Groups is what `runner --list` and `runner --describe` write with
// --output json (and what `kubectl replay groups -o json` passes on): the
// consumer groups of a cluster, read-only, in one call. It is the one place
// a reader learns which groups exist and what they consume.
//
// A reader that resolves a group selector (many groups in one request)
// takes a --list: every group with its kind, state, member count and
// topics, without any per-partition detail. --describe adds the members
// (client ID, host) and, per partition, the committed offset, the log end
// and the lag, as kafka-consumer-groups.sh --describe prints them.
//
// The Kafka requests behind one listing grow with the brokers, never with
// the partitions or the groups: one ListGroups per broker, one describe
// and one offset fetch per group coordinator for all its groups, and (for
// --describe) one ListOffsets per partition leader.
type Groups struct {
	Schema string `json:"schema"`
	// Describe is set for a --describe, whose groups carry Members and
	// Partitions.
	Describe bool    `json:"describe,omitempty"`
	Groups   []Group `json:"groups"`
	// Omitted counts the groups left off the end of this copy to fit a
	// termination message (CompactGroups); the result file holds every
	// group. A reader that resolves a selector must refuse a listing with
	// Omitted above 0: a group it does not see is one it would leave out.
	Omitted int `json:"omitted,omitempty"`
}

// Group is one group of a listing.
type Group struct {
	Group string `json:"group"`
	// GroupType is the group's kind as --group-type names it: Classic,
	// Consumer, Share or Streams. A broker before KIP-848 reports no kind;
	// its groups are Classic.
	GroupType string `json:"groupType"`
	// ProtocolType is "consumer" for consumers, "connect" for Kafka
	// Connect workers, and empty for a group of committed offsets alone.
	ProtocolType string `json:"protocolType,omitempty"`
	// State is the coordinator's word (Empty, Stable, PreparingRebalance,
	// Assigning, Reconciling, Dead...): a replay needs Empty or Dead.
	State       string `json:"state"`
	MemberCount int    `json:"memberCount"`
	// Topics are the topics the group has committed offsets of or is
	// assigned, sorted: what a replay with no --topic would consider
	// (the committed ones) and what its members read now.
	Topics []string `json:"topics"`
	// Committed are the topics the group has committed offsets on,
	// sorted (a part of Topics): what a selector's withOffsetsOn asks
	// about, which a member's assignment alone does not answer.
	Committed []string `json:"committed,omitempty"`
	// Members and Partitions are filled by --describe only.
	Members    []GroupMember    `json:"members,omitempty"`
	Partitions []GroupPartition `json:"partitions,omitempty"`
	// Error says why the group could not be described or its offsets not
	// read; the other fields are then what ListGroups said.
	Error string `json:"error,omitempty"`
}

// GroupMember is one member of a group, as Kafka's tool prints it.
type GroupMember struct {
	MemberID   string `json:"memberId"`
	InstanceID string `json:"instanceId,omitempty"`
	ClientID   string `json:"clientId"`
	Host       string `json:"host"`
	// Partitions is how many partitions the member is assigned.
	Partitions int `json:"partitions"`
}

// GroupPartition is one partition a group has committed or is assigned.
type GroupPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// CurrentOffset is the committed offset; nil when the group has not
	// committed the partition (Kafka's tool prints "-").
	CurrentOffset *int64 `json:"currentOffset"`
	// LogEndOffset is the high watermark; nil when it could not be read.
	LogEndOffset *int64 `json:"logEndOffset"`
	// Lag is LogEndOffset - CurrentOffset (never below 0); nil when
	// either is unknown.
	Lag *int64 `json:"lag"`
	// The member assigned the partition, if any.
	MemberID string `json:"memberId,omitempty"`
	ClientID string `json:"clientId,omitempty"`
	Host     string `json:"host,omitempty"`
}

// Lag is end - current, as Kafka's tool computes it: unknown when either
// is, and 0 when the commit lies past the log end.
func Lag(current, end *int64) *int64 {
	if current == nil || end == nil {
		return nil
	}
	l := max(*end-*current, 0)
	return &l
}

// EncodeGroups writes g as indented JSON, with its schema.
func EncodeGroups(w io.Writer, g Groups) error {
	g.Schema = GroupsSchema
	if g.Groups == nil {
		g.Groups = []Group{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(g)
}

// MarshalGroups is EncodeGroups into bytes, for the result file.
func MarshalGroups(g Groups) ([]byte, error) {
	var b bytes.Buffer
	if err := EncodeGroups(&b, g); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// CompactGroups encodes g in at most limit bytes, for a termination
// message: unindented, and with as many trailing groups left off as it
// takes, counted in Omitted. Groups are never cut inside: a group listed
// is listed whole. limit must leave room for the envelope (under 100
// bytes).
func CompactGroups(g Groups, limit int) ([]byte, error) {
	g.Schema = GroupsSchema
	all := g.Groups
	if all == nil {
		all = []Group{}
	}
	enc := func(n int) ([]byte, error) {
		c := g
		c.Groups, c.Omitted = all[:n], len(all)-n
		return json.Marshal(c)
	}
	// Each group's length is independent of the others': binary search
	// the longest prefix that fits.
	lo, hi := 0, len(all)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		b, err := enc(mid)
		if err != nil {
			return nil, err
		}
		if len(b) <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	b, err := enc(lo)
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, fmt.Errorf("a listing of no group is %d bytes, over %d", len(b), limit)
	}
	return b, nil
}

// DecodeGroups reads a listing, refusing one of an unknown schema.
func DecodeGroups(b []byte) (Groups, error) {
	var g Groups
	if err := json.Unmarshal(b, &g); err != nil {
		return Groups{}, fmt.Errorf("decode groups: %w", err)
	}
	if g.Schema != GroupsSchema {
		if g.Schema == "" {
			return Groups{}, errors.New("decode groups: no schema; not a group listing")
		}
		return Groups{}, fmt.Errorf("decode groups: unknown schema %q (want %s)", g.Schema, GroupsSchema)
	}
	return g, nil
}

// Find returns the group named name, if listed.
func (g Groups) Find(name string) (Group, bool) {
	i := slices.IndexFunc(g.Groups, func(x Group) bool { return x.Group == name })
	if i < 0 {
		return Group{}, false
	}
	return g.Groups[i], true
}

// WriteGroupsTable prints a listing as Kafka's tool would: for --list a
// row per group (with the kind, state, members and topics Kafka's tool
// prints only with --state and --type); for --describe, per group, a row
// per partition, GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG
// CONSUMER-ID HOST CLIENT-ID, and "-" for what is unknown.
func WriteGroupsTable(w io.Writer, gs Groups) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	num := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatInt(*p, 10)
	}
	if !gs.Describe {
		fmt.Fprintln(tw, "GROUP\tTYPE\tSTATE\tMEMBERS\tTOPICS")
		for _, g := range gs.Groups {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", g.Group, dash(g.GroupType), g.State, g.MemberCount, dash(strings.Join(g.Topics, ",")))
		}
		return tw.Flush()
	}
	for i, g := range gs.Groups {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintf(tw, "Group %s (%s, %s, %d members)\n", g.Group, dash(g.GroupType), g.State, g.MemberCount)
		if g.Error != "" {
			fmt.Fprintf(tw, "error: %s\n", g.Error)
		}
		if len(g.Partitions) == 0 {
			fmt.Fprintln(tw, "no committed or assigned partitions")
			continue
		}
		fmt.Fprintln(tw, "GROUP\tTOPIC\tPARTITION\tCURRENT-OFFSET\tLOG-END-OFFSET\tLAG\tCONSUMER-ID\tHOST\tCLIENT-ID")
		for _, p := range g.Partitions {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", g.Group, p.Topic, p.Partition, num(p.CurrentOffset), num(p.LogEndOffset), num(p.Lag), dash(p.MemberID), dash(p.Host), dash(p.ClientID))
		}
	}
	return tw.Flush()
}
