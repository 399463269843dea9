package render

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-replay/kafka-replay/launcher/replay"
	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// Description is what `kubectl replay describe` shows, and what its -o
// json|yaml prints: the request and every partition of its record.
type Description struct {
	Request *v1alpha1.ReplayRequest `json:"request"`
	// Record names the ReplayRecord the partitions come from; empty when
	// they come from status (no record yet, or it is gone).
	Record string `json:"record,omitempty"`
	// Complete is the record's own word on whether it has every partition.
	Complete bool `json:"complete"`
	// Partitions are every partition, from the record (or status).
	Partitions []report.Partition `json:"partitions"`
	// Groups are, for a request over several groups, one row per group
	// (status.groups); its partitions are its child request's.
	Groups []GroupRow `json:"groups,omitempty"`
}

func ts(t *metav1.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// Describe renders a description for a person.
func Describe(p Palette, d Description) string {
	rr := d.Request
	var b strings.Builder
	raw := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%-14s%s\n", k+":", v)
		}
	}
	field := func(k, v string) { raw(k, Clean(v)) }
	field("Name", rr.Name)
	field("Namespace", rr.Namespace)
	if ref := rr.Spec.ConsumerRef; ref != nil {
		field("Consumer ref", string(ref.Kind)+"/"+ref.Name)
	}
	parent := replay.IsParent(rr)
	if parent {
		field("Groups", fmt.Sprintf("%d, %s", len(d.Groups), Selection(&rr.Spec)))
		if rr.Spec.ContinueOnError {
			field("On error", "continue: a failed group does not stop the others (continueOnError)")
		} else {
			field("On error", "stop: after a failed group, the groups not started are not attempted")
		}
	} else {
		// For a consumerRef, what it resolved to (status.resolved).
		field("Group", replay.Group(rr))
	}
	field("Group type", groupType(rr))
	field("Internal", internalTopics(rr))
	field("Kafka", replay.BootstrapServers(rr))
	field("Target", rr.Status.ResolvedTarget)
	if rr.Spec.DryRun {
		field("Dry run", "yes: nothing is committed")
	}
	field("Approval", string(rr.Spec.Approval))
	phase := string(rr.Status.Phase)
	if phase == "" {
		phase = "Pending"
	}
	raw("Phase", colourPhase(p, Clean(phase)))
	if s := findCond(rr.Status.Conditions, v1alpha1.ConditionSucceeded); s != nil {
		field("Outcome", s.Reason+": "+s.Message)
	} else if rr.Status.Message != "" {
		field("Message", rr.Status.Message)
	}
	field("Requested by", rr.Status.RequestedBy)
	field("Started", ts(rr.Status.StartTime))
	field("Completed", ts(rr.Status.CompletionTime))
	if a := rr.Status.Approval; a != nil {
		who := a.By
		if who == "" {
			who = "unknown"
		}
		v := fmt.Sprintf("%s by %s", a.Decision, who)
		if a.At != nil {
			v += " at " + ts(a.At)
		}
		if a.Digest != "" {
			v += ", plan " + a.Digest
		}
		if a.Reason != "" {
			v += ": " + a.Reason
		}
		field("Decision", v)
	}
	if pl := rr.Status.Plan; pl != nil {
		over := ""
		if parent {
			over = Groups(len(d.Groups)) + ", "
		}
		v := fmt.Sprintf("%s (%s%d partitions, %d to re-consume, %d skipped), planned %s", pl.Digest, over, pl.Totals.Partitions, pl.Totals.MessagesToReconsume, pl.Totals.MessagesSkipped, ts(pl.PlannedAt))
		if pl.ExpiresAt != nil && rr.Status.Approval == nil {
			v += ", expires " + ts(pl.ExpiresAt)
		}
		field("Plan", v)
	}
	if u := rr.Status.Undo; u != nil {
		field("Undoes", fmt.Sprintf("%s (Job %s)", u.Request, u.JobName))
	} else if rr.Spec.Target.UndoOf != nil {
		field("Undoes", *rr.Spec.Target.UndoOf)
	}
	field("Job", rr.Status.JobName)
	if rr.Status.UndoCommand != "" {
		field("Undo with", ReplayCommand("undo", rr.Name, rr.Namespace))
	}

	if len(rr.Status.Conditions) > 0 {
		b.WriteString("\nConditions:\n")
		t := Table{Header: []string{"TYPE", "STATUS", "REASON", "SINCE", "MESSAGE"}}
		for _, c := range rr.Status.Conditions {
			t.Rows = append(t.Rows, []string{Clean(c.Type), Clean(string(c.Status)), Clean(c.Reason), c.LastTransitionTime.UTC().Format(time.RFC3339), oneLine(c.Message)})
		}
		b.WriteString(indent(t.String()))
	}
	if len(rr.Status.Consumers) > 0 {
		b.WriteString("\nConsumers:\n")
		t := Table{Header: []string{"KIND", "NAME", "METHOD", "REPLICAS", "STATE", "MESSAGE"}}
		for _, c := range rr.Status.Consumers {
			rep := "-"
			if c.Replicas != nil {
				rep = strconv.Itoa(int(*c.Replicas))
			}
			t.Rows = append(t.Rows, []string{Clean(string(c.Kind)), Clean(c.Name), Clean(string(c.Method)), rep, Clean(string(c.State)), oneLine(c.Message)})
		}
		b.WriteString(indent(t.String()))
	}

	if parent {
		fmt.Fprintf(&b, "\nGroups (%s):\n", Tally(d.Groups))
		b.WriteString(indent(GroupTable(p, d.Groups)))
		var moved int64
		var again, skip int64
		for _, g := range d.Groups {
			moved += int64(g.Moved)
			again += g.MessagesToReconsume
			skip += g.MessagesSkipped
		}
		fmt.Fprintf(&b, "\nTotals:       %d partitions moved, %s re-consumed, %s skipped\n", moved, p.Yellow(strconv.FormatInt(again, 10)), skipped(p, skip))
		if rr.Status.Plan != nil {
			fmt.Fprintf(&b, "The plan per group: %s\n", ReplayCommand("plan", rr.Name, rr.Namespace))
		}
		fmt.Fprintf(&b, "A group's partitions: %s\n", ReplayCommand("describe", "REQUEST", rr.Namespace))
		return b.String()
	}
	if len(d.Partitions) == 0 && rr.Status.Plan != nil && rr.Status.JobName == "" {
		fmt.Fprintf(&b, "\nThe plan's partitions: %s\n", ReplayCommand("plan", rr.Name, rr.Namespace))
	}
	if len(d.Partitions) > 0 {
		src := "status (no record yet: it may lack partitions)"
		if d.Record != "" {
			src = "record " + d.Record
			if !d.Complete {
				src += ", incomplete: an attempt's result was lost"
			}
		} else if rr.Status.Result != nil && !rr.Status.Result.Truncated {
			src = "status"
		}
		fmt.Fprintf(&b, "\nPartitions (%s):\n", src)
		b.WriteString(indent(PartitionTable(p, d.Partitions)))
	}
	if r := rr.Status.Result; r != nil {
		fmt.Fprintf(&b, "\nTotals:       %d partitions, %d applied, %s re-consumed, %s skipped", r.Totals.Partitions, r.Totals.Applied, p.Yellow(strconv.FormatInt(r.Totals.MessagesToReconsume, 10)), skipped(p, r.Totals.MessagesSkipped))
		if r.Totals.Failed > 0 {
			fmt.Fprintf(&b, ", %s", p.Red(fmt.Sprintf("%d failed", r.Totals.Failed)))
		}
		if r.DryRun {
			b.WriteString(" (planned: a dry run moves nothing)")
		}
		b.WriteString("\n")
		if len(r.Warnings) > 0 {
			b.WriteString("Warnings:\n")
			for _, w := range r.Warnings {
				b.WriteString("  - " + Clean(w) + "\n")
			}
		}
		if r.Error != "" {
			b.WriteString("Error:        " + p.Red(Clean(r.Error)) + "\n")
		}
	}
	return b.String()
}

// PartitionTable is every partition, in topic and partition order, with
// its bar.
func PartitionTable(p Palette, parts []report.Partition) string {
	t := Table{
		Header: []string{"TOPIC", "PARTITION", "WAS", "NOW", "DELTA", "LOG", "START" + strings.Repeat(" ", BarWidth-8) + "END", "NOTE"},
		Right:  []bool{false, true, true, true, true, false, false, false},
	}
	for _, pt := range parts {
		logRange := "-"
		bar := ""
		if pt.LogEndOffset > 0 || pt.LogStartOffset > 0 {
			logRange = fmt.Sprintf("%d..%d", pt.LogStartOffset, pt.LogEndOffset)
			bar = Bar(p, BarWidth, pt.LogStartOffset, pt.LogEndOffset, pt.PreviousOffset, pt.NewOffset)
		}
		note := oneLine(pt.Note)
		switch {
		case pt.Error != "":
			note = p.Red(oneLine(pt.Error))
		case pt.LeftAlone != "":
			note = "left alone: " + oneLine(pt.LeftAlone)
		}
		t.Rows = append(t.Rows, []string{Clean(pt.Topic), strconv.Itoa(int(pt.Partition)), Offset(pt.PreviousOffset), strconv.FormatInt(pt.NewOffset, 10), Delta(p, pt.Delta), logRange, bar, note})
	}
	return t.String()
}

func colourPhase(p Palette, phase string) string {
	switch v1alpha1.Phase(phase) {
	case v1alpha1.PhaseSucceeded:
		return p.Green(phase)
	case v1alpha1.PhaseFailed:
		return p.Red(phase)
	case v1alpha1.PhaseAwaitingApproval:
		return p.Yellow(phase)
	}
	return phase
}

func findCond(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

func oneLine(s string) string {
	s = Clean(s)
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString("  " + l)
		}
	}
	return b.String()
}

// groupType is the kind of group the runner found (status.result), or,
// before it has looked, the kind the request states.
func groupType(rr *v1alpha1.ReplayRequest) string {
	if r := rr.Status.Result; r != nil && r.GroupType != "" {
		return r.GroupType
	}
	if k := rr.Spec.GroupType; k != "" && k != "Auto" {
		return string(k) + " (stated, not yet checked)"
	}
	return ""
}

// internalTopics says what a request with deleteAllInternalTopics does to
// its streams group's internal topics: what the run deleted (and did not),
// else what its plan deletes, else that it will; empty without the field.
func internalTopics(rr *v1alpha1.ReplayRequest) string {
	if !rr.Spec.DeleteAllInternalTopics {
		return ""
	}
	const noUndo = "; an undo cannot recreate them"
	if r := rr.Status.Result; r != nil && !r.DryRun && r.InternalTopics != nil && (len(r.InternalTopics.Deleted) > 0 || r.Error != "") {
		v := "topics deleted: " + topicList(r.InternalTopics.Deleted)
		var not []string
		for _, t := range r.InternalTopics.Planned {
			if !slices.Contains(r.InternalTopics.Deleted, t) {
				not = append(not, t)
			}
		}
		if len(not) > 0 {
			v += "; not deleted: " + topicList(not)
		}
		return v + noUndo
	}
	if p := rr.Status.Plan; p != nil {
		return "topics the plan deletes once the offsets are moved: " + topicList(p.InternalTopics) + noUndo
	}
	if r := rr.Status.Result; r != nil && r.DryRun && r.InternalTopics != nil {
		return "topics the dry run would delete: " + topicList(r.InternalTopics.Planned) + noUndo
	}
	return "topics deleted once the offsets are moved (deleteAllInternalTopics)" + noUndo
}

func topicList(ts []string) string {
	if len(ts) == 0 {
		return "none"
	}
	return strings.Join(ts, ", ")
}
