package fanout

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// TotalField names the guard over all groups in messages.
const TotalField = "spec.limits.maxTotalMessagesToReconsume"

// totalNamed is how many groups a refusal names, largest first, before it
// counts the rest (the runner names as many partitions: guardsNamed).
const totalNamed = 5

// TotalLimit is the parent's guard over all its groups, or nil.
func TotalLimit(parent *v1alpha1.ReplayRequest) *int64 {
	if parent.Spec.Limits == nil {
		return nil
	}
	return parent.Spec.Limits.MaxTotalMessagesToReconsume
}

// Contribution is one group's messages to consume again: its plan's, or
// a dry run's result's (which are the plan's too).
type Contribution struct {
	Group    string
	Messages int64
}

// Contributions are the groups a parent's plan covers (those ParentPlan
// sums), each with its plan's messages to consume again; for a dry run,
// every group that ran, with its result's.
func Contributions(parent *v1alpha1.ReplayRequest, rows []v1alpha1.GroupStatus, children []*v1alpha1.ReplayRequest) []Contribution {
	var out []Contribution
	for i, r := range rows {
		if parent.Spec.DryRun && r.Phase != v1alpha1.GroupNotAttempted || covered(r, children[i]) {
			out = append(out, Contribution{Group: r.Group, Messages: r.MessagesToReconsume})
		}
	}
	return out
}

// TotalVerdict is what a parent does with its complete plan.
type TotalVerdict string

const (
	// TotalAwaitsApproval: a Manual parent's plan, within its guard if it
	// has one, waits for a person's decision.
	TotalAwaitsApproval TotalVerdict = "AwaitsApproval"
	// TotalApproved: an Automatic parent's plan is within its guard; the
	// launcher approves it, and so its groups, itself.
	TotalApproved TotalVerdict = "Approved"
	// TotalRefused: the plan re-consumes more than the guard allows; the
	// parent ends LimitExceeded with nothing applied.
	TotalRefused TotalVerdict = "Refused"
)

// JudgeTotal decides on a parent's complete plan (or a dry run's results),
// before any group applies: over its guard, refused, with the message
// (mirroring the runner's LimitExceeded for one group: the total, the
// limit, and the largest groups first); else a Manual parent awaits its
// approval and an Automatic one is approved, with the message saying the
// total was within the guard. The counts sum saturating (report.AddCounts),
// so no total wraps around to pass.
func JudgeTotal(parent *v1alpha1.ReplayRequest, cs []Contribution) (TotalVerdict, string) {
	limit := TotalLimit(parent)
	ok := TotalApproved
	if parent.Spec.Approval == v1alpha1.ApprovalManual {
		ok = TotalAwaitsApproval
	}
	if limit == nil {
		return ok, ""
	}
	var total int64
	for _, c := range cs {
		total = report.AddCounts(total, c.Messages)
	}
	if total <= *limit {
		return ok, fmt.Sprintf("%d message(s) to consume again over %d group(s), within the %d %s allows", total, len(cs), *limit, TotalField)
	}
	largest := slices.Clone(cs)
	slices.SortStableFunc(largest, func(a, b Contribution) int { return cmp.Compare(b.Messages, a.Messages) })
	var named []string
	for _, c := range largest[:min(len(largest), totalNamed)] {
		named = append(named, fmt.Sprintf("%s %d", c.Group, c.Messages))
	}
	list := strings.Join(named, ", ")
	if n := len(largest) - totalNamed; n > 0 {
		list += fmt.Sprintf(" and %d more", n)
	}
	return TotalRefused, fmt.Sprintf("would re-consume %d message(s), more than the %d %s allows, over %d group(s), largest first: %s; nothing was applied", total, *limit, TotalField, len(cs), list)
}
