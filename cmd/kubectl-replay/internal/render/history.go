package render

import (
	"strconv"
	"time"
)

// HistoryEntry is one run of a group: a runner Job and, once it finished,
// its ReplayRecord, whichever path started it.
type HistoryEntry struct {
	// When is when the Job finished, or was created while it runs.
	When      time.Time `json:"when"`
	Namespace string    `json:"namespace"`
	Job       string    `json:"job"`
	// Source is what started it: request, runbook or job (a runner Job
	// made by hand, which the launcher recorded too).
	Source string `json:"source"`
	// Name is the request's or the runbook's name (the Job's for a job).
	Name string `json:"name"`
	// Stage is plan (the planning Job of approval: Manual) or apply.
	Stage string `json:"stage,omitempty"`
	// UndoOf is the request an undo undid.
	UndoOf string `json:"undoOf,omitempty"`
	// Parent is, for the run of a child request, the request over
	// several groups that made it; its runs are listed together.
	Parent      string `json:"parent,omitempty"`
	RequestedBy string `json:"requestedBy,omitempty"`
	ApprovedBy  string `json:"approvedBy,omitempty"`
	Group       string `json:"group"`
	Target      string `json:"target,omitempty"`
	DryRun      bool   `json:"dryRun"`
	// Outcome is Succeeded, Failed or Running.
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
	// OffsetsChanged is the record's Yes, No or Unknown.
	OffsetsChanged string `json:"offsetsChanged,omitempty"`
	// Reconsumed and Skipped are the messages re-consumed and skipped (a
	// dry run's: planned); nil when not known.
	Reconsumed *int64 `json:"reconsumed"`
	Skipped    *int64 `json:"skipped"`
}

// HistoryTable renders entries in the order given (newest first); with
// groups the GROUP column is shown (no --group).
func HistoryTable(p Palette, entries []HistoryEntry, groups bool) string {
	t := Table{Header: []string{"WHEN", "STARTED BY", "STAGE", "BY", "GROUP", "TARGET", "OUTCOME", "CHANGED", "RECONSUMED", "SKIPPED"}}
	t.Right = []bool{false, false, false, false, false, false, false, false, true, true}
	for i, e := range entries {
		source := Clean(e.Source + "/" + e.Name)
		if e.Parent != "" {
			// A parent's children's runs are together (cli.HistoryEntries
			// puts them so), under a line naming the parent.
			if i == 0 || entries[i-1].Parent != e.Parent || entries[i-1].Namespace != e.Namespace {
				t.Rows = append(t.Rows, []string{"", Clean("request/" + e.Parent + " (" + Groups(groupsUnder(entries[i:], e.Namespace, e.Parent)) + "):")})
			}
			source = "  " + source
		}
		outcome := Clean(e.Outcome)
		switch outcome {
		case "Succeeded":
			outcome = p.Green(outcome)
		case "Failed":
			outcome = p.Red(outcome)
		}
		if e.Reason != "" {
			outcome += " " + Clean(e.Reason)
		}
		rec, skip := count(e.Reconsumed), count(e.Skipped)
		if e.DryRun {
			rec, skip = "("+rec+")", "("+skip+")"
		}
		by := e.RequestedBy
		if e.ApprovedBy != "" {
			by += ", approved by " + e.ApprovedBy
		}
		stage := e.Stage
		if e.DryRun && stage != "plan" {
			// A dry run's Job carries the apply stage's label, and
			// applied nothing (issue 32, friction 5).
			stage = "dry run"
		}
		t.Rows = append(t.Rows, []string{e.When.UTC().Format(time.RFC3339), source, Clean(stage), oneLine(orDash(by)), Clean(e.Group), Clean(orDash(e.Target)), outcome, Clean(orDash(e.OffsetsChanged)), rec, skip})
	}
	if !groups {
		t = dropColumn(t, 4)
	}
	if len(entries) == 0 {
		return "no runs\n"
	}
	s := t.String()
	for _, e := range entries {
		if e.DryRun {
			return s + "(counts in parentheses are a dry run's plan: nothing moved)\n"
		}
	}
	return s
}

// groupsUnder counts the groups of the run of parent's children at the
// head of entries.
func groupsUnder(entries []HistoryEntry, ns, parent string) int {
	seen := map[string]bool{}
	for _, e := range entries {
		if e.Parent != parent || e.Namespace != ns {
			break
		}
		seen[e.Group] = true
	}
	return len(seen)
}

func count(n *int64) string {
	if n == nil {
		return "-"
	}
	return strconv.FormatInt(*n, 10)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func dropColumn(t Table, i int) Table {
	cut := func(r []string) []string { return append(append([]string{}, r[:i]...), r[i+1:]...) }
	out := Table{Header: cut(t.Header)}
	out.Right = append(append([]bool{}, t.Right[:i]...), t.Right[i+1:]...)
	for _, r := range t.Rows {
		out.Rows = append(out.Rows, cut(r))
	}
	return out
}
