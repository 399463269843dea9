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

// skippedBy is how many messages a partition's move ahead of its committed
// offset passes over that are still in the log: a committed offset below
// the log start points at records retention has deleted, which no consumer
// can read any more (it would fall back to its auto.offset.reset), so
// moving from there to the log start skips nothing.
func skippedBy(rp *report.Partition) int64 {
	if rp.PreviousOffset == nil {
		return 0
	}
	return max(rp.NewOffset-max(*rp.PreviousOffset, rp.LogStartOffset), 0)
}

// reconsumedBy is how many messages still in the log a partition's move
// back makes its consumers read again: from the new offset up to the
// committed one, or to the log end if the committed offset is past it.
func reconsumedBy(rp *report.Partition) int64 {
	if rp.PreviousOffset == nil {
		return 0
	}
	return max(min(*rp.PreviousOffset, rp.LogEndOffset)-rp.NewOffset, 0)
}

// judgePlan decides whether a plan may be committed, before anything is:
//   - a stale partition (a plan: target's plan no longer holds) refuses it
//     with PlanStale;
//   - a partition that moves ahead of its committed offset over messages
//     still in the log (skippedBy) refuses it with WouldSkipMessages,
//     unless allowSkip: those messages are lost to the consumers. An
//     undo's forward move back to where the consumers were before the
//     replay (Plan.Exempt) is no skip;
//   - more messages to re-consume (reconsumedBy), all partitions together,
//     than limit refuses it with LimitExceeded.
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
			n := skippedBy(rp)
			if !p.Commit[i] || p.Exempt[i] || n == 0 {
				continue
			}
			skipped += n
			rp.Error = fmt.Sprintf("would skip %d message(s): the target %d is ahead of the committed offset %d", n, rp.NewOffset, *rp.PreviousOffset)
			names.add(func() string { return fmt.Sprintf("%s/%d by %d", rp.Topic, rp.Partition, n) })
		}
		if names.n > 0 {
			return &refusal{report.ReasonWouldSkipMessages, fmt.Sprintf("would skip %d message(s) the consumers never handled, moving %d partition(s) ahead of the committed offset: %s; nothing was committed; to skip them anyway set %s", skipped, names.n, names.list(), config.Ref(config.FlagAllowSkip))}
		}
	}
	var total int64
	for i := range p.Partitions {
		if p.Commit[i] {
			total += reconsumedBy(&p.Partitions[i])
		}
	}
	if limit.Allows(total) {
		return nil
	}
	names := newNames(guardsNamed)
	for i := range p.Partitions {
		rp := &p.Partitions[i]
		if n := reconsumedBy(rp); p.Commit[i] && n > 0 {
			rp.Error = fmt.Sprintf("would re-consume %d message(s), of %d in all, more than the %d allowed", n, total, limit.N)
			names.add(func() string { return fmt.Sprintf("%s/%d by %d", rp.Topic, rp.Partition, n) })
		}
	}
	return &refusal{report.ReasonLimitExceeded, fmt.Sprintf("would re-consume %d message(s), more than the %d %s allows, on %d partition(s): %s; nothing was committed", total, limit.N, config.Ref(config.FlagMaxMessagesToReconsume), names.n, names.list())}
}
