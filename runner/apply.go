package runner

import (
	"fmt"
	"strings"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// The plan: and undo: targets take their partitions from a result file
// instead of resolving a target: planFromFile applies a dry run's plan
// exactly, planUndo restores a run's previous offsets under the undo rules
// (decideUndo). Both are pure, like MakePlan.

// relativePlan reports whether a plan's target depends on the committed
// offsets it was planned from (shift:, undo:), so that the plan is stale
// once they move. A target it does not know as absolute (earliest, latest,
// time:, offset:, file:, group:), an empty one included, counts as
// relative: the stricter check, for a plan whose file lost its target.
func relativePlan(resolved string) bool {
	if resolved == string(config.KindEarliest) || resolved == string(config.KindLatest) {
		return false
	}
	for _, k := range []config.TargetKind{config.KindTime, config.KindOffset, config.KindFile, config.KindGroup} {
		if strings.HasPrefix(resolved, string(k)+":") {
			return false
		}
	}
	return true
}

// checkCluster refuses a plan: or undo: file made on another Kafka
// cluster than the one the run reads (Metadata's cluster ID): the same
// topic and group names there are other partitions, and the same instant
// other offsets. A plan must say its cluster; an undo: file of an older
// runner, or of a launcher record made before records kept the cluster,
// need not, since the undone run's commit metadata, which only its own
// cluster holds, vouches for it (checkUndone).
func checkCluster(t config.Target, cluster string) error {
	if t.Kind != config.KindPlan && t.Kind != config.KindUndo {
		return nil
	}
	was := t.Result.ClusterID
	field := config.Ref(config.RefPlan)
	if t.Kind == config.KindUndo {
		field = config.Ref(config.RefUndo)
	}
	switch {
	case was == cluster:
		return nil
	case t.Kind == config.KindUndo && was == "":
		return nil
	case was == "":
		return &inputError{field, fmt.Sprintf("the plan does not say which Kafka cluster it was made on (an older runner's), so it cannot be checked against this one (cluster %s); nothing was committed: plan again", cluster)}
	}
	now := cluster
	if now == "" {
		now = "one that gives no cluster ID"
	}
	return &inputError{field, fmt.Sprintf("was made on Kafka cluster %s, and this is cluster %s: the same names there are other partitions and offsets; nothing was committed: plan again on this cluster", was, now)}
}

// relativeTarget reports whether a target moves from the committed offsets
// (shift:, undo:, or a plan: of such a target), so that applying it twice
// moves the group twice.
func relativeTarget(t config.Target) bool {
	switch t.Kind {
	case config.KindShift, config.KindUndo:
		return true
	case config.KindPlan:
		return relativePlan(t.Result.Target.Resolved)
	}
	return false
}

// exists reports whether tp is a partition of the snapshot's topics.
func exists(s *Snapshot, tp TP) bool {
	n, ok := s.Topics[tp.Topic]
	return ok && tp.Partition < n
}

// planFromFile is the plan of a plan: target: exactly the plan's new
// offsets, for exactly its partitions, or stale partitions with an Error
// saying what differs:
//   - a partition that carries this run's commit is already applied (a
//     retry), checked first: it is never stale;
//   - so is, in a group whose offsets carry no run ID (Snapshot.Unmarked),
//     a partition of a relative plan found at the plan's new offset rather
//     than its previous one: committing it again would move nothing, and
//     the position is the only trace a retry can find there;
//   - a planned partition that no longer exists is stale;
//   - for a relative plan (shift:, undo:), a partition whose committed
//     offset is not the one the plan started from is stale;
//   - for any plan, a partition that had a committed offset when planned
//     and has none now (it expired) is stale: its consumers would start
//     wherever auto.offset.reset puts them, a move neither the plan nor the
//     guards weighed;
//   - a planned offset no longer inside [log start, log end] is stale.
//
// A partition the plan leaves alone stays as it is, uncommitted. For an
// absolute plan the committed offsets may have moved since planning: the
// partitions report the offsets of now, which the guards weigh.
func planFromFile(s *Snapshot, t config.Target, id runIdent) *Plan {
	planned := t.Result
	relative := relativePlan(planned.Target.Resolved)
	undo := strings.HasPrefix(planned.Target.Resolved, string(config.KindUndo)+":")
	p := newPlan(len(planned.Partitions))
	for _, pp := range planned.Partitions {
		tp := TP{Topic: pp.Topic, Partition: pp.Partition}
		c, hasC := s.Committed[tp]
		start, end := s.LogStart[tp], s.LogEnd[tp]
		rp := report.Partition{Topic: tp.Topic, Partition: tp.Partition, LogStartOffset: start, LogEndOffset: end}
		if m, ok := parseMark(c.Metadata); hasC && ok && id.owns(m) {
			p.add(alreadyApplied(rp, c, m), false, false)
			continue
		}
		if hasC {
			rp.PreviousOffset = ptr(c.Offset)
		}
		commit, exempt := false, false
		switch {
		case !exists(s, tp):
			rp.LogStartOffset, rp.LogEndOffset = 0, 0
			rp.NewOffset = pp.NewOffset
			rp.Error = "stale: the partition no longer exists"
		case pp.LeftAlone != "":
			rp.LeftAlone = pp.LeftAlone
			rp.NewOffset, rp.Delta = leftAt(rp.PreviousOffset)
		case relative && s.Unmarked && hasC && c.Offset == pp.NewOffset && !sameCommitted(pp.PreviousOffset, c, hasC):
			rp = atPlannedTarget(rp, pp)
		case relative && !sameCommitted(pp.PreviousOffset, c, hasC):
			rp.NewOffset = pp.NewOffset
			rp.Error = fmt.Sprintf("stale: the committed offset is now %s, the plan started from %s", offsetText(rp.PreviousOffset), offsetText(pp.PreviousOffset))
		case pp.PreviousOffset != nil && !hasC:
			rp.NewOffset = pp.NewOffset
			rp.Error = fmt.Sprintf("stale: the plan started from the committed offset %d; the group has none now (expired or deleted), so where its consumers would start depends on auto.offset.reset, which the plan did not weigh", *pp.PreviousOffset)
		case pp.NewOffset < start || pp.NewOffset > end:
			rp.NewOffset = pp.NewOffset
			rp.Error = fmt.Sprintf("stale: the planned offset %d is no longer inside the log [%d, %d]", pp.NewOffset, start, end)
		default:
			rp.NewOffset = pp.NewOffset
			rp.Clamped, rp.Note = pp.Clamped, pp.Note
			if hasC {
				rp.Delta = ptr(c.Offset - pp.NewOffset)
			}
			commit = true
			exempt = undo && !report.WeighedAsSkip(pp.Note)
		}
		p.add(rp, commit, exempt)
	}
	return p
}

// atPlannedTarget reports a partition of an unmarked group found at its
// planned offset: applied, as the plan describes the move (from the plan's
// previous offset), so that the result and an undo of it keep what the
// first attempt did.
func atPlannedTarget(rp report.Partition, pp report.Partition) report.Partition {
	rp.PreviousOffset, rp.NewOffset, rp.Delta = pp.PreviousOffset, pp.NewOffset, pp.Delta
	rp.Applied = true
	addNote(&rp, "already at the plan's new offset: applied before (a retry), or moved there since; its offsets carry no run ID to tell which, and it is not moved again")
	return rp
}

// sameCommitted reports whether the group's committed offset is planned.
func sameCommitted(planned *int64, c Committed, ok bool) bool {
	if planned == nil {
		return !ok
	}
	return ok && c.Offset == *planned
}

func offsetText(o *int64) string {
	if o == nil {
		return "none"
	}
	return fmt.Sprint(*o)
}

// leftAt is where a partition left alone is reported: at its committed
// offset, moved by nothing.
func leftAt(c *int64) (int64, *int64) {
	if c == nil {
		return 0, nil
	}
	return *c, ptr(int64(0))
}

// add appends one partition to the plan.
func (p *Plan) add(rp report.Partition, commit, exempt bool) {
	p.Partitions = append(p.Partitions, rp)
	p.Commit = append(p.Commit, commit)
	p.Exempt = append(p.Exempt, exempt)
}

// undoDecision is what the undo rules decide for one partition.
type undoDecision struct {
	// Restore is whether the partition goes back to its previous offset.
	Restore bool
	// LeftAlone says why not, in a sentence; with Forced, why the rules
	// alone would have left it.
	LeftAlone string
	// Forced is set when only force restores it.
	Forced bool
}

// decideUndo applies the undo rules to one partition of the undone run
// (its previous offset P, the offset it moved to N, whether it applied it)
// given the partition's committed offset now, C (nil for none). The aim:
// the group is back as if the replay had not happened, without consuming
// again what the consumers handled after it, and without skipping what
// they never handled.
//
//   - not applied by the undone run, or not moved by it (N == P): left alone;
//   - P null: left alone, whatever force says: Kafka cannot commit "no
//     offset";
//   - C == P: nothing to do;
//   - a rewind (N < P): N <= C < P restores P (the consumers handled N..C
//     again, C..P before the replay); C > P or C < N is left alone;
//   - a skip (N > P): C == N restores P (nothing consumed since; P..N is
//     handed back); C > N or C < N is left alone;
//   - C null (the offset was deleted or expired since): left alone;
//   - force restores P wherever the rules about C leave it alone.
func decideUndo(p report.Partition, c *int64, force bool) undoDecision {
	if !p.Applied {
		return undoDecision{LeftAlone: "not moved by the undone run"}
	}
	if p.PreviousOffset == nil {
		return undoDecision{LeftAlone: "had no committed offset before the undone run; Kafka cannot commit \"no offset\" to restore that (force does not change it)"}
	}
	prev, n := *p.PreviousOffset, p.NewOffset
	if n == prev {
		return undoDecision{LeftAlone: fmt.Sprintf("not moved by the undone run (it stayed at %d)", prev)}
	}
	var why string
	switch {
	case c == nil:
		why = fmt.Sprintf("has no committed offset now (deleted or expired since the replay, which set %d)", n)
	case *c == prev:
		// Nothing to restore, forced or not.
		return undoDecision{LeftAlone: fmt.Sprintf("already at its previous offset %d", prev)}
	case n < prev && n <= *c && *c < prev:
		return undoDecision{Restore: true}
	case n < prev && *c > prev:
		why = fmt.Sprintf("consumed past its previous offset %d (now at %d); restoring would re-consume %d messages", prev, *c, *c-prev)
	case n > prev && *c == n:
		return undoDecision{Restore: true}
	case n > prev && *c > n:
		why = fmt.Sprintf("consumed %d..%d since the replay; restoring would re-consume them; to get the %d skipped messages back, replay offsets %d..%d by explicit offsets instead", n, *c-1, n-prev, prev, n-1)
	default: // *c < n: moved back past where the replay put it
		why = fmt.Sprintf("moved back since the replay by something else (now at %d, the replay set %d)", *c, n)
	}
	if force {
		return undoDecision{Restore: true, Forced: true, LeftAlone: why}
	}
	return undoDecision{LeftAlone: why}
}

// planUndo is the plan of an undo: target: each partition of the undone
// run that the rules (decideUndo) restore goes back to its previous offset,
// clamped into the log; every other one is left alone, uncommitted, with
// the reason. A partition that carries this run's commit is already
// applied (a retry), checked before the rules.
func planUndo(s *Snapshot, t config.Target, id runIdent) (*Plan, error) {
	vouched, err := checkUndone(s, t.Result)
	if err != nil {
		return nil, err
	}
	p := newPlan(len(t.Result.Partitions))
	// The undone run is an undo itself: what it started from is where the
	// run it undid had put the group, not where the consumers had got to.
	again := strings.HasPrefix(t.Result.Target.Resolved, string(config.KindUndo)+":")
	for _, up := range t.Result.Partitions {
		tp := TP{Topic: up.Topic, Partition: up.Partition}
		c, hasC := s.Committed[tp]
		start, end := s.LogStart[tp], s.LogEnd[tp]
		rp := report.Partition{Topic: tp.Topic, Partition: tp.Partition, LogStartOffset: start, LogEndOffset: end}
		if m, ok := parseMark(c.Metadata); hasC && ok && id.owns(m) {
			p.add(alreadyApplied(rp, c, m), false, false)
			continue
		}
		var now *int64
		if hasC {
			now = ptr(c.Offset)
			rp.PreviousOffset = now
		}
		if !exists(s, tp) {
			rp.LogStartOffset, rp.LogEndOffset = 0, 0
			rp.LeftAlone = "the partition no longer exists"
			rp.NewOffset, rp.Delta = leftAt(now)
			p.add(rp, false, false)
			continue
		}
		d := decideUndo(up, now, t.Force)
		if !d.Restore {
			rp.LeftAlone = d.LeftAlone
			rp.NewOffset, rp.Delta = leftAt(now)
			p.add(rp, false, false)
			continue
		}
		want := *up.PreviousOffset
		addNote(&rp, fmt.Sprintf("%s %d, its offset before the undone run", report.NoteRestores, want))
		if d.Forced {
			rp.Note = report.NoteForced + " (the undo rules would leave it alone: it " + d.LeftAlone + "); " + rp.Note
		}
		switch {
		case want < start:
			rp.Clamped = true
			addNote(&rp, fmt.Sprintf("clamped from %d to log start %d", want, start))
			want = start
		case want > end:
			rp.Clamped = true
			addNote(&rp, fmt.Sprintf("clamped from %d to log end %d", want, end))
			want = end
		}
		rp.NewOffset = want
		if now != nil {
			rp.Delta = ptr(*now - want)
		}
		// A forward move the rules allow gives back to the consumers where
		// they were: the messages passed over were handled before the
		// replay. It is no skip; a forced one may be. Undoing an undo of a
		// skip, it passes over the skipped messages the first undo handed
		// back: a skip again, which takes allowSkip as the first one did.
		exempt := !d.Forced
		if again && exempt && rp.Delta != nil && *rp.Delta < 0 {
			rp.Note = report.NoteSkipsAgain + " (the undone run was an undo: its previous offset is where an earlier replay had put the group, not where the consumers had got to); " + rp.Note
			exempt = false
		}
		if exempt && !vouched.all && !vouched.partitions[tp] && rp.Delta != nil && *rp.Delta < 0 {
			rp.Note = report.NoteUnverified + " (the group no longer records the undone run's commit, so its previous offset comes from the file alone); " + rp.Note
			exempt = false
		}
		p.add(rp, true, exempt)
	}
	left := newNames(maxNamed)
	for i := range p.Partitions {
		if p.Partitions[i].LeftAlone != "" {
			left.add(func() string { return partitionName(&p.Partitions[i]) })
		}
	}
	if left.n > 0 {
		p.Warnings = append(p.Warnings, "left alone by the undo rules (each partition says why): "+left.summary())
	}
	return p, nil
}

// vouched is what the undone run's commit, as the group still records it,
// vouches for in an undo: file.
type vouched struct {
	// all is set when the file's applied partitions are exactly the run's
	// commit (its marks' n= and set=).
	all bool
	// partitions are those whose own mark's prev= and offset match.
	partitions map[TP]bool
}

// checkUndone checks an undo: file against the commit metadata of the run
// it says it is (its runId): a previous offset is what the undo restores
// and what makes its forward moves no skips, so it must be the run's, not
// an edited file's. Every partition that still carries the run's commit
// must be in the file as applied, with the mark's prev= and offset; when
// the marks carry the run's n= and set=, the file's applied partitions
// must be exactly that commit, and are all vouched for. A mismatch refuses
// the undo. Partitions whose mark is gone (the consumers committed since)
// are vouched for only by the set; unvouched, their forward moves are
// skips (planUndo).
func checkUndone(s *Snapshot, undone *report.Result) (vouched, error) {
	v := vouched{partitions: map[TP]bool{}}
	file := make(map[TP]*report.Partition, len(undone.Partitions))
	var entries []setEntry
	for i := range undone.Partitions {
		up := &undone.Partitions[i]
		if up.Applied {
			tp := TP{Topic: up.Topic, Partition: up.Partition}
			file[tp] = up
			entries = append(entries, setEntry{tp, up.PreviousOffset, up.NewOffset})
		}
	}
	refuse := func(format string, a ...any) error {
		return &inputError{config.Ref(config.RefUndo), fmt.Sprintf(format, a...) + fmt.Sprintf("; the file was edited, or is not run %s's result: nothing was committed", undone.RunID)}
	}
	count, set := 0, ""
	for i, pm := range marksOf(s.Committed, undone.RunID) {
		up, ok := file[pm.TP]
		if !ok {
			return v, refuse("the group records run %s's commit on %s, which the file does not list as applied", undone.RunID, pm.TP)
		}
		if pm.Mark.Version >= 2 && (!equalOffsets(pm.Mark.Prev, up.PreviousOffset) || pm.Offset != up.NewOffset) {
			return v, refuse("%s: the file says previousOffset %s and newOffset %d, the group's commit of run %s there says %s and %d", pm.TP, offsetText(up.PreviousOffset), up.NewOffset, undone.RunID, offsetText(pm.Mark.Prev), pm.Offset)
		}
		v.partitions[pm.TP] = pm.Mark.Version >= 2
		if i == 0 {
			count, set = pm.Mark.Count, pm.Mark.Set
		} else if pm.Mark.Count != count || pm.Mark.Set != set {
			count, set = 0, ""
		}
	}
	if set != "" {
		if len(entries) != count || setDigest(entries) != set {
			return v, refuse("its %d applied partition(s) are not the commit of run %s that the group records (%d partition(s), set %s)", len(entries), undone.RunID, count, set)
		}
		v.all = true
	}
	return v, nil
}

// equalOffsets reports whether two optional offsets are equal.
func equalOffsets(a, b *int64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}
