// Package fanout holds the pure decisions of a ReplayRequest over many
// groups (issue 30, docs/groups.md): the parent fans out into one child
// request per group, each running today's phase machine unchanged. It
// takes no client and is not wired yet: the API server refuses
// spec.groups and spec.groupSelector until the controller path exists.
// The parent's overall outcome is report.Outcome over its children's
// results, the rule a runner over several groups uses.
package fanout

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// maxNameLength keeps a child's name a DNS label (63), like the Jobs and
// labels named after it.
const maxNameLength = 63

// ChildName is the name of the child request of parent for group: the
// parent's name, cut to fit, and the first 10 hex digits of the group's
// SHA-256. It depends on nothing else, so a restarted launcher computes
// the same name and finds the child it made (AlreadyExists), and two
// groups never share a child.
func ChildName(parent, group string) string {
	sum := sha256.Sum256([]byte(group))
	suffix := "-" + hex.EncodeToString(sum[:])[:10]
	base := parent
	if len(base) > maxNameLength-len(suffix) {
		base = strings.TrimRight(base[:maxNameLength-len(suffix)], "-.")
	}
	return base + suffix
}

// ChildPlan is a child's plan, as its status shows it once planned.
type ChildPlan struct {
	Group string
	// Plan is the child's plan digest (report.PlanDigest); empty while
	// it plans.
	Plan string
}

// PlanDigest is the digest one approval of the parent names: the SHA-256
// over one line per group, sorted by group, of the group and its child's
// plan digest, each with its length, as
// "sha256:<hex>". It covers every group, so a group added, left out or
// planned again is another digest. It is not ready (false) while a child
// has no plan, and a group given twice is an error.
func PlanDigest(children []ChildPlan) (string, bool, error) {
	if len(children) == 0 {
		return "", false, fmt.Errorf("no groups to plan")
	}
	sorted := slices.Clone(children)
	slices.SortFunc(sorted, func(a, b ChildPlan) int { return strings.Compare(a.Group, b.Group) })
	h := sha256.New()
	for i, c := range sorted {
		if i > 0 && sorted[i-1].Group == c.Group {
			return "", false, fmt.Errorf("group %q is planned twice", c.Group)
		}
		if c.Plan == "" {
			return "", false, nil
		}
		// Each field with its length: no group name, whatever it holds,
		// reads as another group's line.
		fmt.Fprintf(h, "%d:%s %d:%s\n", len(c.Group), c.Group, len(c.Plan), c.Plan)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), true, nil
}

// State is where a group's child is.
type State string

const (
	// Waiting: no child yet.
	Waiting State = "Waiting"
	// Running: the child exists and has not finished.
	Running State = "Running"
	// Succeeded and Failed: the child finished so.
	Succeeded State = "Succeeded"
	Failed    State = "Failed"
	// NotAttempted: no child will be made; an earlier group failed
	// without continueOnError.
	NotAttempted State = "NotAttempted"
)

// Row is one group of the parent, in the order of its resolved groups.
type Row struct {
	Group string
	State State
}

// Step is what the parent does next.
type Step struct {
	// Start are the groups whose children to create now, in order.
	Start []string
	// GiveUp are the waiting groups that will not be attempted.
	GiveUp []string
	// Done is set when every group has finished or is not attempted.
	Done bool
}

// Next decides the next step: children are started in order, at most
// parallelism between their creation and their end at once (at least
// one). A failed group without continueOnError starts no more children:
// the waiting ones are given up, the running ones end on their own.
func Next(rows []Row, parallelism int, continueOnError bool) Step {
	parallelism = max(parallelism, 1)
	var s Step
	running, failed := 0, false
	for _, r := range rows {
		switch r.State {
		case Running:
			running++
		case Failed:
			failed = true
		}
	}
	stop := failed && !continueOnError
	open := 0
	for _, r := range rows {
		if r.State != Waiting {
			continue
		}
		switch {
		case stop:
			s.GiveUp = append(s.GiveUp, r.Group)
		case running+len(s.Start) < parallelism:
			s.Start = append(s.Start, r.Group)
		default:
			open++
		}
	}
	s.Done = running == 0 && len(s.Start) == 0 && open == 0
	return s
}
