package render

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// A request over several groups (a parent, docs/groups.md) is shown as
// one row per group, each replayed by a child request of its own.

// GroupRow is one group of a parent, as status.groups has it, and as
// describe -o json and plan -o json print it.
type GroupRow struct {
	Group string `json:"group"`
	// Request is the group's child request; empty before it is made.
	Request string `json:"request,omitempty"`
	// Phase is Waiting, the child's phase, or NotAttempted.
	Phase  string `json:"phase"`
	Reason string `json:"reason,omitempty"`
	// Moved, MessagesToReconsume and MessagesSkipped are the child's
	// totals (its plan's before it applied).
	Moved               int32 `json:"moved"`
	MessagesToReconsume int64 `json:"messagesToReconsume"`
	MessagesSkipped     int64 `json:"messagesSkipped"`
}

// GroupPhases is the order phases are counted in: where a group is in a
// parent's life, then how it ended.
var GroupPhases = []string{"Waiting", "Pending", "Running", "AwaitingApproval", "Succeeded", "Failed", "NotAttempted"}

// Tally counts rows by phase, in GroupPhases' order ("3 groups: 2
// Succeeded, 1 Failed"); a phase no row has is left out, one this
// plugin does not know is counted last.
func Tally(rows []GroupRow) string {
	n := map[string]int{}
	for _, r := range rows {
		n[r.Phase]++
	}
	var parts []string
	for _, ph := range GroupPhases {
		if n[ph] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[ph], ph))
			delete(n, ph)
		}
	}
	others := make([]string, 0, len(n))
	for ph := range n {
		others = append(others, ph)
	}
	slices.Sort(others)
	for _, ph := range others {
		parts = append(parts, fmt.Sprintf("%d %s", n[ph], Clean(orDash(ph))))
	}
	s := Groups(len(rows))
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, ", ")
	}
	return s
}

// Groups is "1 group" or "n groups".
func Groups(n int) string {
	if n == 1 {
		return "1 group"
	}
	return strconv.Itoa(n) + " groups"
}

// GroupTable is a parent's groups, one row each, in their start order.
func GroupTable(p Palette, rows []GroupRow) string {
	t := Table{
		Header: []string{"GROUP", "REQUEST", "PHASE", "REASON", "MOVED", "RECONSUMED", "SKIPPED"},
		Right:  []bool{false, false, false, false, true, true, true},
	}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{Clean(r.Group), Clean(orDash(r.Request)), colourPhase(p, Clean(orDash(r.Phase))), Clean(orDash(r.Reason)),
			strconv.Itoa(int(r.Moved)), strconv.FormatInt(r.MessagesToReconsume, 10), strconv.FormatInt(r.MessagesSkipped, 10)})
	}
	return t.String()
}

// Selection says how a parent chose its groups, in one line: "listed
// (spec.groups)" or the selector's patterns.
func Selection(spec *v1alpha1.ReplayRequestSpec) string {
	sel := spec.GroupSelector
	switch {
	case sel == nil && len(spec.Groups) == 0 && spec.Target.UndoOf != nil:
		return Clean("those of " + *spec.Target.UndoOf + ", which it undoes")
	case sel == nil:
		return "listed (spec.groups)"
	}
	pats := func(ps []v1alpha1.GroupPattern) string {
		out := make([]string, len(ps))
		for i, pt := range ps {
			out[i] = pt.Prefix + "*"
			if pt.Regex != "" {
				out[i] = "regex:" + pt.Regex
			}
		}
		return strings.Join(out, ", ")
	}
	s := "selected when accepted: " + pats(sel.Include)
	if len(sel.Exclude) > 0 {
		s += " but " + pats(sel.Exclude)
	}
	if len(sel.WithOffsetsOn) > 0 {
		s += ", with offsets on " + strings.Join(sel.WithOffsetsOn, ", ")
	}
	return Clean(s)
}

// GroupPlan is one group's plan in a parent's: its child's digest and
// totals.
type GroupPlan struct {
	Group   string `json:"group"`
	Request string `json:"request,omitempty"`
	// Digest is the child's plan digest, which the parent's covers; empty
	// while it plans.
	Digest string     `json:"digest,omitempty"`
	Totals PlanTotals `json:"totals"`
	// Phase and Reason are the group's, for a group with no plan (it
	// failed planning, or waits for its turn).
	Phase  string `json:"phase,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// GroupPlanTable is a parent's plan per group, with a totals line over
// every group.
func GroupPlanTable(p Palette, groups []GroupPlan) string {
	t := Table{
		Header: []string{"GROUP", "REQUEST", "PLAN", "PARTITIONS", "RECONSUMED", "SKIPPED", "NOTE"},
		Right:  []bool{false, false, false, true, true, true, false},
	}
	var tot PlanTotals
	planned := 0
	for _, g := range groups {
		if g.Digest == "" {
			note := Clean(g.Phase)
			if g.Reason != "" {
				note += " " + Clean(g.Reason)
			}
			t.Rows = append(t.Rows, []string{Clean(g.Group), Clean(orDash(g.Request)), "-", "-", "-", "-", strings.TrimSpace("no plan: " + note)})
			continue
		}
		planned++
		tot.Partitions += g.Totals.Partitions
		tot.MessagesToReconsume += g.Totals.MessagesToReconsume
		tot.MessagesSkipped += g.Totals.MessagesSkipped
		t.Rows = append(t.Rows, []string{Clean(g.Group), Clean(g.Request), Clean(g.Digest), strconv.Itoa(g.Totals.Partitions),
			p.Yellow(strconv.FormatInt(g.Totals.MessagesToReconsume, 10)), skipped(p, g.Totals.MessagesSkipped), Clean(g.Reason)})
	}
	var b strings.Builder
	b.WriteString(t.String())
	fmt.Fprintf(&b, "%s %s (%d planned), %d partitions: %s messages re-consumed, %s skipped\n", p.Bold("total"), Groups(len(groups)), planned, tot.Partitions,
		p.Yellow(strconv.FormatInt(tot.MessagesToReconsume, 10)), skipped(p, tot.MessagesSkipped))
	return b.String()
}

// Move is one partition's planned move in a parent's plan.
type Move struct {
	Group string `json:"group"`
	PlanRow
}

// LargestMoves are the n moves of largest |delta| across the groups
// (then by group, topic and partition), from each group's largest
// (status.plan.largestDeltas of its child): the n largest of all are
// among the n largest of each, so no group's whole plan is read.
func LargestMoves(byGroup map[string][]v1alpha1.PartitionResult, n int) []Move {
	var all []Move
	for g, parts := range byGroup {
		for _, pt := range parts {
			all = append(all, Move{Group: g, PlanRow: PlanRow{Topic: pt.Topic, Partition: pt.Partition, Committed: pt.PreviousOffset, New: pt.NewOffset, Delta: pt.Delta, Note: pt.Note, LeftAlone: pt.LeftAlone, Error: pt.Error}})
		}
	}
	slices.SortFunc(all, func(a, b Move) int {
		if c := cmp.Compare(absOr(b.Delta), absOr(a.Delta)); c != 0 {
			return c
		}
		if c := strings.Compare(a.Group, b.Group); c != 0 {
			return c
		}
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return cmp.Compare(a.Partition, b.Partition)
	})
	return all[:min(n, len(all))]
}

// MovesTable is the largest moves across a parent's groups.
func MovesTable(p Palette, moves []Move) string {
	t := Table{
		Header: []string{"GROUP", "TOPIC", "PARTITION", "COMMITTED", "NEW", "DELTA", "NOTE"},
		Right:  []bool{false, false, true, true, true, true, false},
	}
	for _, m := range moves {
		note := oneLine(m.Note)
		if m.LeftAlone != "" {
			note = "left alone: " + oneLine(m.LeftAlone)
		}
		if m.Error != "" {
			note = p.Red(oneLine(m.Error))
		}
		t.Rows = append(t.Rows, []string{Clean(m.Group), Clean(m.Topic), strconv.Itoa(int(m.Partition)), Offset(m.Committed), strconv.FormatInt(m.New, 10), Delta(p, m.Delta), note})
	}
	return t.String()
}
