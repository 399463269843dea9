package report

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// MultiSchema identifies the result of a run over several groups (the
// runner's --group given more than once, or --all-groups). A run over one
// group writes a [Result] of [Schema], exactly as before: readers of that
// format never see this one unless they asked for several groups.
const MultiSchema = "kafkareplay.dev/result-groups/v1"

// MultiResult is a run over several groups: each group is a run of its
// own (its own emptiness check, guards, commit with the run ID's metadata
// and read-back), one after the other in the order of Groups.
type MultiResult struct {
	// Schema is always [MultiSchema].
	Schema string `json:"schema"`
	// RunID is the run ID every group's commit carries. Each group's
	// offsets hold their own metadata, so one ID serves all: a retry finds,
	// group by group, the commits already made.
	RunID string `json:"runId"`
	// Target is the target as given (each group's result has it resolved).
	Target Target `json:"target"`
	// DryRun is true when the plans were only printed.
	DryRun bool `json:"dryRun"`
	// ContinueOnError is whether a failed group let the next ones run.
	ContinueOnError bool `json:"continueOnError"`
	// Selected is every group the run was asked to move, in order: the
	// groups given, or those --all-groups listed.
	Selected []string `json:"selected"`
	// Groups holds one full result per group that ran, in order. A group
	// that did not run (see NotAttempted) has none.
	Groups []Result `json:"groups"`
	// NotAttempted are the selected groups that were not run, because an
	// earlier group failed (without continueOnError), or a signal or an
	// internal error stopped the run. Nothing of theirs was read or changed.
	NotAttempted []string `json:"notAttempted,omitempty"`
	// ExitCode and Reason are the run's, as [Outcome] decides them from the
	// groups'.
	ExitCode ExitCode `json:"exitCode"`
	Reason   Reason   `json:"reason"`
	// Error says which groups changed and which failed, and why.
	Error string `json:"error,omitempty"`
	// StartedAt and FinishedAt bound the whole run.
	StartedAt  time.Time `json:"startedAt"`
	FinishedAt time.Time `json:"finishedAt"`
	// Truncated is true when a group's partitions (or, past the size
	// limit, whole groups' results) were left out: see [CompactMulti].
	Truncated bool `json:"truncated,omitempty"`
}

// groupState is what a group's result says of its offsets.
type groupState int

const (
	// unchanged: the group's offsets are as they were (any failure of
	// exit 2, 3, 4, 6, 7 or 8, a dry run, or a run that had nothing to
	// commit).
	unchanged groupState = iota
	// atCommit: the group is at this run's commit (applied now or by an
	// earlier attempt of the run ID).
	atCommit
	// mayHaveChanged: exit 5 (PartiallyApplied, OutcomeUnknown), or an
	// internal error after the commit began.
	mayHaveChanged
)

// stateOf reads the group's totals (never truncated), not its
// partitions, which a pending or compact result leaves out.
func stateOf(r *Result) groupState {
	switch {
	case r.ExitCode == ExitPartiallyApplied:
		return mayHaveChanged
	case r.ExitCode == ExitInternal:
		if r.Totals.Applied > 0 || r.Totals.Failed > 0 {
			return mayHaveChanged
		}
		return unchanged
	case r.ExitCode != ExitOK || r.DryRun:
		return unchanged
	case r.AlreadyApplied || r.Totals.Applied > 0:
		return atCommit
	}
	return unchanged
}

// Outcome is the one rule that turns the groups' results into the run's
// exit code, reason and error:
//
//   - every group ended well and all ran: exit 0, DryRun, AlreadyApplied
//     (every group was) or Applied;
//   - an internal error in any group: exit 1 (InternalError), the bug wins;
//   - some group failed, and some group changed or may have changed: exit 5
//     (PartiallyApplied). As for one group, a retry with the same run ID
//     settles it: the groups at this run's commit are found AlreadyApplied
//     and the others are tried again;
//   - some group failed and no group changed anything: the first failed
//     group's exit code and reason, whose meaning ("nothing changed", and
//     whether a retry can help) then holds for the whole run.
//
// The error names the groups in each state, so that it says exactly what
// changed whatever the exit code.
func Outcome(groups []Result, notAttempted []string, dryRun bool) (ExitCode, Reason, string) {
	var at, maybe, failed []string
	var firstFailed *Result
	internal := false
	for i := range groups {
		g := &groups[i]
		switch stateOf(g) {
		case atCommit:
			at = append(at, g.Group)
		case mayHaveChanged:
			maybe = append(maybe, g.Group)
		}
		if g.ExitCode != ExitOK {
			failed = append(failed, fmt.Sprintf("%s (%s: %s)", g.Group, g.Reason, g.Error))
			if firstFailed == nil {
				firstFailed = g
			}
			internal = internal || g.ExitCode == ExitInternal
		}
	}
	if firstFailed == nil && len(notAttempted) == 0 {
		reason := ReasonApplied
		switch {
		case dryRun:
			reason = ReasonDryRun
		case len(groups) > 0 && len(at) == len(groups) && allAlreadyApplied(groups):
			reason = ReasonAlreadyApplied
		}
		return ExitOK, reason, ""
	}
	var parts []string
	if len(at) > 0 {
		parts = append(parts, fmt.Sprintf("at this run's commit: %s", strings.Join(at, ", ")))
	}
	if len(maybe) > 0 {
		parts = append(parts, fmt.Sprintf("may have changed (read their offsets; a retry with the same run ID settles them): %s", strings.Join(maybe, ", ")))
	}
	if len(failed) > 0 {
		parts = append(parts, "failed: "+strings.Join(failed, "; "))
	}
	if len(notAttempted) > 0 {
		parts = append(parts, "not attempted, nothing of theirs read or changed: "+strings.Join(notAttempted, ", "))
	}
	changed := len(at)+len(maybe) > 0
	switch {
	case internal:
		return ExitInternal, ReasonInternalError, "internal error; " + strings.Join(parts, "; ")
	case changed:
		return ExitPartiallyApplied, ReasonPartiallyApplied, fmt.Sprintf("%d of %d groups changed or may have: ", len(at)+len(maybe), len(groups)+len(notAttempted)) + strings.Join(parts, "; ")
	case firstFailed != nil:
		return firstFailed.ExitCode, firstFailed.Reason, "no group changed; " + strings.Join(parts, "; ")
	}
	// Groups left out with none failed: only a signal between two groups
	// does that.
	return ExitInterrupted, ReasonInterrupted, "no group changed; " + strings.Join(parts, "; ")
}

func allAlreadyApplied(groups []Result) bool {
	for i := range groups {
		if !groups[i].AlreadyApplied {
			return false
		}
	}
	return true
}

// Decide sets r's ExitCode, Reason and Error by [Outcome], from the
// groups' totals: each group's must be summarised ([Result.Summarize]).
func (r *MultiResult) Decide() {
	r.ExitCode, r.Reason, r.Error = Outcome(r.Groups, r.NotAttempted, r.DryRun)
}

// withLists makes the lists encode as [] rather than null.
func (r *MultiResult) withLists() *MultiResult {
	c := *r
	if c.Selected == nil {
		c.Selected = []string{}
	}
	c.Groups = make([]Result, len(r.Groups))
	for i := range r.Groups {
		c.Groups[i] = *withList(&r.Groups[i])
	}
	return &c
}

// MarshalMulti encodes the full result as indented JSON.
func MarshalMulti(r *MultiResult) ([]byte, error) {
	b, err := json.MarshalIndent(r.withLists(), "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// CompactMulti encodes r in at most limit bytes, for a termination
// message. Every group's outcome (group, exit code, reason, totals) is
// kept while it fits, never its partitions or warnings. Past that, in
// turn: the errors are shortened, Selected is left out (Groups and
// NotAttempted hold it), then as many trailing groups' results as it takes
// (the run's error still names every failed group, and is shortened last).
func CompactMulti(r *MultiResult, limit int) ([]byte, error) {
	c := *r.withLists()
	c.Truncated = true
	for i := range c.Groups {
		g := &c.Groups[i]
		g.Partitions, g.Warnings = []Partition{}, nil
	}
	fits := func() ([]byte, bool, error) {
		b, err := json.Marshal(&c)
		return b, err == nil && len(b) <= limit, err
	}
	for _, n := range []int{256, 64, 0} {
		for i := range c.Groups {
			c.Groups[i].Error = shorten(r.Groups[i].Error, n)
		}
		c.Error = shorten(r.Error, 4*n+512)
		if b, ok, err := fits(); ok || err != nil {
			return b, err
		}
	}
	c.Selected = []string{}
	all := c.Groups
	for _, e := range []int{1024, 256, 0} {
		c.Error = shorten(r.Error, e)
		// The most groups that fit, by bisection: each try encodes them all.
		lo, hi := -1, len(all) // lo fits (or is none), hi does not
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			c.Groups = all[:mid+1]
			if _, ok, err := fits(); err != nil {
				return nil, err
			} else if ok {
				lo = mid
			} else {
				hi = mid
			}
		}
		c.Groups = all[:lo+1]
		if b, ok, err := fits(); ok || err != nil {
			return b, err
		}
	}
	c.NotAttempted = nil
	c.Target.Given = shorten(r.Target.Given, 64)
	if b, ok, err := fits(); ok || err != nil {
		return b, err
	}
	return nil, fmt.Errorf("result does not fit in %d bytes", limit)
}

// DecodeMulti parses a full or compact result over several groups and
// checks its schema.
func DecodeMulti(b []byte) (*MultiResult, error) {
	var r MultiResult
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode result: %w", err)
	}
	if r.Schema != MultiSchema {
		return nil, fmt.Errorf("%w %q (want %q)", ErrUnknownSchema, r.Schema, MultiSchema)
	}
	return &r, nil
}
