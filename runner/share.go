package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/internal/groupkind"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// A share group (KIP-932) has no committed offsets: one start offset per
// partition, from which its members acquire records and acknowledge them
// one by one. Moving it is what kafka-share-groups.sh --reset-offsets
// does (AlterShareGroupOffsets), only while the group has no members. The
// runner plans it as a consumer group's reset with the start offsets as
// the previous offsets: the same targets' resolution, the same guards and
// the same result; the commit and its read-back go through franz-go.
//
// What a share group cannot have: run IDs. A start offset carries no
// metadata, so a retry is recognised only by finding the group where the
// plan puts it. Hence the targets it takes: the absolute ones, whose retry
// sets the same offsets again; plan:, which applies a plan of those (or of
// an undo) and refuses, as stale, a relative plan whose partitions moved
// since it was made, its own apply included; and undo:, whose rules leave
// alone a partition already back at its previous offset. shift: and
// group:, whose retry would move the group again, are refused.

// shareTargets are the targets a share group takes: Kafka's tool's
// (earliest, latest, datetime, offset and file from KIP-1323), ago:, a
// time, and plan: and undo: of a share group's results.
var shareTargets = map[config.TargetKind]bool{
	config.KindEarliest: true, config.KindLatest: true, config.KindTime: true,
	config.KindAgo: true, config.KindOffset: true, config.KindFile: true,
	config.KindPlan: true, config.KindUndo: true,
}

// shareSnapshot turns a snapshot librdkafka read of a share group (a
// group it describes as not existing, with no offsets) into the share
// group's: its start offsets and its members, whose presence refuses the
// run, or is waited out with --wait-for-empty.
func (r *run) shareSnapshot(ctx context.Context, cl *kgo.Client, s *Snapshot, info groupkind.Info) error {
	cfg := r.cfg
	if !shareTargets[cfg.Target.Kind] {
		return &inputError{config.Ref(config.FlagTo), fmt.Sprintf("%s is a share group, whose start offsets carry no run ID: it takes earliest, latest, time:, ago:, offset:, file:, plan: and undo: targets, not %s:, whose retry would move it again", cfg.Group, cfg.Target.Kind)}
	}
	if len(info.Members) > 0 && !cfg.DryRun && cfg.WaitForEmpty > 0 {
		var err error
		if info, err = r.waitKindEmpty(ctx, cl, info); err != nil {
			return err
		}
	}
	rctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	start, err := groupkind.StartOffsets(rctx, cl, cfg.Group)
	if err != nil {
		return err
	}
	s.Committed, s.Unmarked = map[TP]Committed{}, true
	for t, ps := range start {
		for p, o := range ps {
			s.Committed[TP{Topic: t, Partition: p}] = Committed{Offset: o}
		}
	}
	s.Group = groupInfoOf(info)
	if s.Group.Active() && !cfg.DryRun {
		return &groupActiveError{info: s.Group, waited: max(cfg.WaitForEmpty, 0)}
	}
	return nil
}

// waitKindEmpty polls a share or streams group until it has no members or
// --wait-for-empty has passed, as waitForEmpty does for a consumer group;
// it returns the last description, which the caller judges.
func (r *run) waitKindEmpty(ctx context.Context, cl *kgo.Client, info groupkind.Info) (groupkind.Info, error) {
	kind := info.Kind
	deadline := time.Now().Add(r.cfg.WaitForEmpty)
	interval := 500 * time.Millisecond
	for len(info.Members) > 0 {
		left := time.Until(deadline)
		if left <= 0 {
			return info, nil
		}
		r.log.Info("waiting for the group to become empty", "group", r.cfg.Group, "kind", info.Kind, "members", len(info.Members), "left", left.Round(time.Second).String())
		select {
		case <-ctx.Done():
			return info, context.Cause(ctx)
		case <-time.After(min(interval, left)):
		}
		interval = min(interval*2, 5*time.Second)
		var err error
		if info, err = groupkind.Describe(ctx, cl, r.cfg.Group); err != nil {
			return info, err
		}
		if info.Kind != kind {
			// Deleted and made again as another kind while waiting.
			return info, fmt.Errorf("group %s stopped being a %s group while the run waited for it to empty (it is now a %s group): nothing was changed; run again", r.cfg.Group, kind, info.Kind)
		}
	}
	r.log.Info("group is now empty", "state", info.State)
	return info, nil
}

// shareNote is the result's word on what a share group's move means.
const shareNote = "a share group: the new offsets are start offsets, where its members begin acquiring records; records from there on are delivered again, acknowledged or not, and those before it are not delivered (the previous offsets are the old start offsets, not a consumer's position); start offsets carry no run ID, so a retry is recognised only by finding the group where this plan puts it"

// commitShare applies the plan in one AlterShareGroupOffsets request, then
// reads the start offsets back; the read-back decides, as for a commit.
func (r *run) commitShare(ctx context.Context, cl *kgo.Client, plan *Plan, res *report.Result) *report.Result {
	cfg := r.cfg
	offs := groupkind.Offsets{}
	for i, p := range plan.Partitions {
		if !plan.Commit[i] {
			continue
		}
		if offs[p.Topic] == nil {
			offs[p.Topic] = map[int32]int64{}
		}
		offs[p.Topic][p.Partition] = p.NewOffset
	}
	r.log.Info("setting the share group's start offsets", "partitions", plan.ToCommit())
	cctx, ccancel := context.WithTimeout(ctx, cfg.Timeout)
	r.committing = true
	answers, err := groupkind.AlterStartOffsets(cctx, cl, cfg.Group, offs)
	ccancel()
	hook(hookCommitted)
	vctx, vcancel := context.WithTimeout(ctx, cfg.Timeout)
	after, readErr := groupkind.StartOffsets(vctx, cl, cfg.Group)
	vcancel()
	v := verifyShare(res.Partitions, plan.Commit, answers, err, after, readErr)
	res.ExitCode, res.Reason, res.Error = v.Code, v.Reason, v.Error
	if v.Code == report.ExitOK {
		r.log.Info("start offsets set and verified", "partitions", plan.ToCommit())
	} else {
		r.log.Error(res.Error, "reason", res.Reason)
	}
	return res
}

// verifyShare decides the outcome from the start offsets read back, and
// marks each partition set Applied or gives it an Error:
//
//   - applied: the read-back shows the planned offset;
//   - unchanged: it shows the previous one;
//   - moved: it shows another (another client set it since the snapshot);
//   - unverified: the read-back failed.
//
// Exit 0 needs every partition applied; "nothing changed" (3 when Kafka
// refused because the group has members, else 4) needs every partition
// unchanged and a refusal from Kafka itself; anything else is exit 5.
func verifyShare(parts []report.Partition, commit []bool, answers map[string]map[int32]error, ansErr error, after groupkind.Offsets, readErr error) verification {
	var n, applied, unchanged int
	refused := ansErr != nil && isKafkaAnswer(ansErr)
	groupActive := errors.Is(ansErr, kerr.NonEmptyGroup)
	for i := range parts {
		if !commit[i] {
			continue
		}
		n++
		p := &parts[i]
		answer := ansErr
		if answer == nil {
			answer = answers[p.Topic][p.Partition]
		}
		if answer != nil && !refused {
			refused = isKafkaAnswer(answer)
		}
		groupActive = groupActive || errors.Is(answer, kerr.NonEmptyGroup)
		got, ok := after[p.Topic][p.Partition]
		switch {
		case readErr != nil:
			p.Error = "outcome unknown: the read-back failed: " + errString(readErr)
		case ok && got == p.NewOffset:
			p.Applied = true
			applied++
		case (!ok && p.PreviousOffset == nil) || (ok && p.PreviousOffset != nil && got == *p.PreviousOffset):
			unchanged++
			p.Error = "not applied"
			if answer != nil {
				p.Error += ": " + errString(answer)
			}
		default:
			p.Error = fmt.Sprintf("the start offset reads back as %s, neither the previous nor the planned one: another client set it", startOffsetString(got, ok))
		}
	}
	switch {
	case applied == n:
		return verification{Code: report.ExitOK, Reason: report.ReasonApplied}
	case unchanged == n && refused && groupActive:
		return verification{Code: report.ExitGroupActive, Reason: report.ReasonGroupActive, Error: "Kafka refused the new start offsets because the share group has members (" + errString(ansErr) + "); the read-back shows that nothing changed"}
	case unchanged == n && refused:
		e := ansErr
		if e == nil {
			e = firstAnswer(answers)
		}
		return verification{Code: report.ExitKafkaError, Reason: report.ReasonKafkaError, Error: "set start offsets: " + errString(e) + "; the read-back shows that nothing changed"}
	case applied == 0:
		return verification{Code: report.ExitPartiallyApplied, Reason: report.ReasonOutcomeUnknown, Error: fmt.Sprintf("the start offsets may have been set and the runner cannot know (%s); read the group's start offsets (kafka-share-groups.sh --describe --offsets)", errString(errors.Join(ansErr, readErr)))}
	}
	return verification{Code: report.ExitPartiallyApplied, Reason: report.ReasonPartiallyApplied, Error: fmt.Sprintf("%d of %d partitions' start offsets are set; not: %s", applied, n, failedList(parts))}
}

func startOffsetString(o int64, ok bool) string {
	if !ok {
		return "none"
	}
	return fmt.Sprint(o)
}

// isKafkaAnswer is an error Kafka answered, which proves the request was
// refused; a timeout or a dropped connection proves nothing.
func isKafkaAnswer(err error) bool {
	var ke *kerr.Error
	return errors.As(err, &ke)
}

func firstAnswer(answers map[string]map[int32]error) error {
	for _, ps := range answers {
		for _, e := range ps {
			if e != nil {
				return e
			}
		}
	}
	return nil
}
