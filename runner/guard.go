package runner

import (
	"fmt"
	"strings"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// refusal is a guard's verdict on a plan: the reason (PlanStale,
// WouldSkipMessages, LimitExceeded) and the error, or none.
type refusal struct {
	Reason report.Reason
	Error  string
}

// guardsNamed is how many partitions a refusal names before it counts.
const guardsNamed = 5

// judgePlan decides whether a plan may be committed, before anything is:
//   - a stale partition (a plan: target's plan no longer holds) refuses it
//     with PlanStale;
//   - a partition that moves ahead of its committed offset over messages
//     of the log refuses it with WouldSkipMessages, unless allowSkip: those
//     messages are lost to the consumers. An undo's forward move back to
//     where the consumers were before the replay (Plan.Exempt) is no skip;
//   - more messages to re-consume, all partitions together, than limit
//     refuses it with LimitExceeded.
//
// Messages are counted against the log (report.Partition.Messages): a
// committed offset below the log start or past its end moves over no
// message there, so a move from it to the log's bounds neither skips nor
// re-consumes what does not exist; and the sum saturates, so a count
// never wraps around to pass a limit.
//
// Only the partitions the plan commits count: one already applied by this
// run ID (a retry) or left alone by an undo moves nothing now. The
// partitions at fault get an Error saying why. It is pure, and the same
// for a dry run, which reports what the real run would do.
func judgePlan(p *Plan, allowSkip bool, limit config.Limit) *refusal {
	if stale := p.Stale(); len(stale) > 0 {
		names := newNames(guardsNamed)
		for _, rp := range stale {
			names.add(func() string {
				return fmt.Sprintf("%s/%d (%s)", rp.Topic, rp.Partition, strings.TrimPrefix(rp.Error, "stale: "))
			})
		}
		return &refusal{report.ReasonPlanStale, fmt.Sprintf("the plan no longer holds on %d partition(s): %s; nothing was committed: plan again", names.n, names.list())}
	}
	if !allowSkip {
		names := newNames(guardsNamed)
		var skipped int64
		for i := range p.Partitions {
			rp := &p.Partitions[i]
			_, n := rp.Messages()
			if !p.Commit[i] || p.Exempt[i] || n == 0 {
				continue
			}
			skipped = report.AddCounts(skipped, n)
			rp.Error = fmt.Sprintf("would skip %d message(s): the target %d is ahead of the committed offset %d", n, rp.NewOffset, *rp.PreviousOffset)
			names.add(func() string { return fmt.Sprintf("%s/%d by %d", rp.Topic, rp.Partition, n) })
		}
		if names.n > 0 {
			return &refusal{report.ReasonWouldSkipMessages, fmt.Sprintf("would skip %d message(s) the consumers never handled, moving %d partition(s) ahead of the committed offset: %s; nothing was committed; to skip them anyway set %s", skipped, names.n, names.list(), config.Ref(config.FlagAllowSkip))}
		}
	}
	var total int64
	for i, rp := range p.Partitions {
		if again, _ := rp.Messages(); p.Commit[i] {
			total = report.AddCounts(total, again)
		}
	}
	if limit.Allows(total) {
		return nil
	}
	names := newNames(guardsNamed)
	for i := range p.Partitions {
		rp := &p.Partitions[i]
		if again, _ := rp.Messages(); p.Commit[i] && again > 0 {
			rp.Error = fmt.Sprintf("would re-consume %d message(s), of %d in all, more than the %d allowed", again, total, limit.N)
			names.add(func() string { return fmt.Sprintf("%s/%d by %d", rp.Topic, rp.Partition, again) })
		}
	}
	return &refusal{report.ReasonLimitExceeded, fmt.Sprintf("would re-consume %d message(s), more than the %d %s allows, on %d partition(s): %s; nothing was committed", total, limit.N, config.Ref(config.FlagMaxMessagesToReconsume), names.n, names.list())}
}
