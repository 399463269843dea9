package runner

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// inputError is a problem with the user's input that could only be seen once
// Kafka's metadata was known (an unknown topic, say). It exits with code 2.
// field is a config.Ref, so that the error names the setting the way the
// runner was started (a flag, or a request's field) when it is written out.
type inputError struct {
	field string
	msg   string
}

func (e *inputError) Error() string { return e.field + ": " + e.msg }

// topicsToDescribe lists the topics whose metadata the plan needs, if they
// can be known before the group's offsets are read.
func topicsToDescribe(scope config.Scope, target config.Target) []string {
	if target.Kind == config.KindPlan || target.Kind == config.KindUndo {
		seen := map[string]bool{}
		var ts []string
		for _, p := range target.Result.Partitions {
			if !seen[p.Topic] {
				seen[p.Topic] = true
				ts = append(ts, p.Topic)
			}
		}
		slices.Sort(ts)
		return ts
	}
	if target.Kind == config.KindFile {
		seen := map[string]bool{}
		var ts []string
		for _, o := range target.Offsets {
			if !seen[o.Topic] {
				seen[o.Topic] = true
				ts = append(ts, o.Topic)
			}
		}
		slices.Sort(ts)
		return ts
	}
	return scope.TopicNames()
}

// scopeFromOffsets lists the topics of committed offsets, sorted.
func scopeFromOffsets(offs map[TP]Committed) []string {
	seen := map[string]bool{}
	var ts []string
	for tp := range offs {
		if !seen[tp.Topic] {
			seen[tp.Topic] = true
			ts = append(ts, tp.Topic)
		}
	}
	slices.Sort(ts)
	return ts
}

// resolveScope turns the configured scope into concrete partitions, checking
// every named topic and partition against the cluster's metadata. Warnings
// report committed topics that no longer exist. The partition counts are
// those checkPartitionCounts found consistent with the committed offsets.
func resolveScope(s *Snapshot, scope config.Scope, target config.Target) ([]TP, []string, error) {
	var out []TP
	var warnings []string
	checkTopic := func(field, topic string) (int32, error) {
		n, ok := s.Topics[topic]
		if !ok {
			return 0, &inputError{field, fmt.Sprintf("topic %q does not exist", topic)}
		}
		return n, nil
	}
	switch {
	case target.Kind == config.KindPlan || target.Kind == config.KindUndo:
		// The file's partitions that still exist; the planner finds the
		// others gone (stale, or left alone by an undo).
		out = make([]TP, 0, len(target.Result.Partitions))
		for _, rp := range target.Result.Partitions {
			if tp := (TP{Topic: rp.Topic, Partition: rp.Partition}); exists(s, tp) {
				out = append(out, tp)
			}
		}
	case target.Kind == config.KindFile:
		out = make([]TP, 0, len(target.Offsets))
		for _, o := range target.Offsets {
			n, err := checkTopic(config.Ref(config.RefOffsetsFile), o.Topic)
			if err != nil {
				return nil, nil, err
			}
			if o.Partition >= n {
				return nil, nil, &inputError{config.Ref(config.RefOffsetsFile), fmt.Sprintf("partition %s does not exist; topic %q has %d partitions (0-%d)", TP{Topic: o.Topic, Partition: o.Partition}, o.Topic, n, n-1)}
			}
			out = append(out, TP{Topic: o.Topic, Partition: o.Partition})
		}
	case !scope.Empty():
		// Sized first: the scope of a large group is its largest list.
		n := 0
		for topic, parts := range scope.Topics {
			if parts == nil {
				n += int(max(s.Topics[topic], 0))
			} else {
				n += len(parts)
			}
		}
		out = make([]TP, 0, n)
		for _, topic := range scope.TopicNames() {
			n, err := checkTopic(config.Ref(config.FlagTopic), topic)
			if err != nil {
				return nil, nil, err
			}
			parts := scope.Topics[topic]
			if parts == nil {
				for p := int32(0); p < n; p++ {
					out = append(out, TP{Topic: topic, Partition: p})
				}
				continue
			}
			for _, p := range parts {
				if p >= n {
					return nil, nil, &inputError{config.Ref(config.FlagTopic), fmt.Sprintf("partition %d of topic %q does not exist; it has %d partitions (0-%d)", p, topic, n, n-1)}
				}
				out = append(out, TP{Topic: topic, Partition: p})
			}
		}
	default:
		// Every partition the group committed; for a copy, every partition
		// the source group committed, since the target group may be new.
		from, whose := s.Committed, "the group"
		if target.Kind == config.KindGroup {
			from, whose = s.Source, "source group "+target.Group
		}
		out = make([]TP, 0, len(from))
		for tp := range from {
			if _, exists := s.Topics[tp.Topic]; !exists {
				warnings = appendOnce(warnings, fmt.Sprintf("topic %q has committed offsets but no longer exists; left alone", tp.Topic))
				continue
			}
			out = append(out, tp)
		}
		if len(out) == 0 {
			return nil, warnings, &inputError{config.Ref(config.FlagTopic), fmt.Sprintf("is empty and %s has no committed offsets on existing topics; name the topics to reposition", whose)}
		}
	}
	sortTPs(out)
	return out, warnings, nil
}

// checkPartitionCounts refuses a description of the topics with fewer
// partitions than the group's committed offsets (or, for a group: target,
// the source group's) show. Kafka never takes partitions away from a
// topic, and refuses a commit to a partition it does not have, so such a
// description is incomplete: a mangled answer, or one from a broker that
// has not yet learnt of partitions added a moment ago. Leaving its last
// partitions out is no visible gap (partitions 0 to n-1 are all there),
// and a plan made from it would leave the missing ones where they are
// without a word. Only the topics described are judged.
func checkPartitionCounts(s *Snapshot, target config.Target) error {
	type beyond struct {
		tp    TP
		whose string
	}
	var found []beyond
	look := func(offsets map[TP]Committed, whose string) {
		for tp := range offsets {
			if n, ok := s.Topics[tp.Topic]; ok && tp.Partition >= n {
				found = append(found, beyond{tp, whose})
			}
		}
	}
	look(s.Committed, "the group")
	if target.Kind == config.KindGroup {
		look(s.Source, "source group "+target.Group)
	}
	if len(found) == 0 {
		return nil
	}
	slices.SortFunc(found, func(a, b beyond) int {
		if c := compareTPs(a.tp, b.tp); c != 0 {
			return c
		}
		return strings.Compare(a.whose, b.whose)
	})
	var topics []string
	names := newNames(maxNamed)
	for _, f := range found {
		if t := fmt.Sprintf("%q with %d", f.tp.Topic, s.Topics[f.tp.Topic]); !slices.Contains(topics, t) {
			topics = append(topics, t)
		}
		names.add(func() string { return f.tp.String() + " (" + f.whose + ")" })
	}
	return fmt.Errorf("the topics are described with fewer partitions than the offsets committed on them show: topic %s partition(s), but offsets on %s; Kafka never removes partitions, so the description is incomplete (a broker that has not yet learnt of partitions just added, or a mangled answer); nothing was planned; retry. Should the topic have been deleted and made again with fewer partitions, delete those old offsets first (kafka-consumer-groups.sh --delete-offsets)", strings.Join(topics, ", topic "), names.list())
}

func appendOnce(ss []string, s string) []string {
	if slices.Contains(ss, s) {
		return ss
	}
	return append(ss, s)
}

func sortTPs(tps []TP) {
	slices.SortFunc(tps, compareTPs)
}

// compareTPs orders partitions by topic, then partition.
func compareTPs(a, b TP) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return int(a.Partition - b.Partition)
}

// Plan is the decided new offset of every partition in scope.
type Plan struct {
	// Partitions are reported in the result, sorted.
	Partitions []report.Partition
	// Commit marks which of Partitions must be committed; the others
	// already carry this run's commit, are left alone by an undo, or are
	// stale (their Error says how).
	Commit []bool
	// Exempt marks the partitions whose forward move is no skip: an undo
	// giving back an offset the consumers had reached before the replay.
	Exempt []bool
	// Warnings are clamps, fallbacks and skipped partitions.
	Warnings []string
	// Count and Set are the n= and set= of the plan's marks: the run's
	// whole commit, its partitions already applied by this run ID
	// included (settlePrior).
	Count int
	Set   string
	// PriorMarks counts the partitions of the group that carry this run's
	// commit.
	PriorMarks int
	// Unsettled counts the partitions not committed because the group
	// shows this run elsewhere and they are not as it found them;
	// UnsettledNames names them. Nothing may be committed then.
	Unsettled      int
	UnsettledNames string
}

// newPlan makes a plan with room for n partitions: the plan is the run's
// largest Go object, and growing its three slices by appending allocated
// twice their final size on the way (2.6 MiB at 10,000 partitions).
func newPlan(n int) *Plan {
	return &Plan{Partitions: make([]report.Partition, 0, n), Commit: make([]bool, 0, n), Exempt: make([]bool, 0, n)}
}

// settlePrior holds a run to at most once when the group already shows it
// (prior, from findPrior): a run the group shows anywhere moves nothing a
// second time. Its partitions that carry its commit are already applied
// (the planners saw to that); for the others it would commit:
//   - when every partition of the run's commit still carries it (as many
//     marks as their n=), the run is complete: they are not part of it
//     (partitions added since, a scope that grew) and are left alone;
//   - when some lost it or never got it, they are committed only if the
//     whole plan, the run's marked partitions as their marks say and these
//     as planned now, is exactly the run's commit (n= and set=): the rest
//     of a commit that took on some partitions only, with nothing moved
//     since;
//   - otherwise nothing is committed: each says why (Unsettled), since
//     the runner cannot tell a commit that did not take from one that
//     consumers overwrote, and moving them could move them twice.
//
// It also sets the plan's own n= and set= for its marks.
func settlePrior(p *Plan, prior priorRun, runID string) {
	entries := make([]setEntry, 0, len(prior.Marks)+p.ToCommit())
	for _, m := range prior.Marks {
		entries = append(entries, setEntry{m.TP, m.Mark.Prev, m.Offset})
	}
	open := 0
	for i, c := range p.Commit {
		if c {
			rp := &p.Partitions[i]
			entries = append(entries, setEntry{TP{Topic: rp.Topic, Partition: rp.Partition}, rp.PreviousOffset, rp.NewOffset})
			open++
		}
	}
	p.Count, p.Set = len(entries), setDigest(entries)
	p.PriorMarks = len(prior.Marks)
	stale := len(p.Stale())
	if len(prior.Marks) == 0 || open+stale == 0 {
		return
	}
	complete := prior.Set != "" && len(prior.Marks) == prior.Count
	if !complete && stale == 0 && prior.Set != "" && p.Count == prior.Count && p.Set == prior.Set {
		return // the rest of the run's own commit, as it planned it
	}
	names := newNames(maxNamed)
	for i := range p.Partitions {
		rp := &p.Partitions[i]
		if rp.Applied || rp.LeftAlone != "" {
			continue
		}
		p.Commit[i] = false
		if complete {
			rp.LeftAlone = fmt.Sprintf("not part of run %s, whose commit is in place on all its %d partition(s) (this one came into the scope since)", runID, prior.Count)
			rp.NewOffset, rp.Delta = leftAt(rp.PreviousOffset)
			rp.Clamped, rp.Note, rp.Error = false, "", ""
			names.add(func() string { return partitionName(rp) })
			continue
		}
		if rp.Error == "" {
			rp.Error = fmt.Sprintf("carries no commit of run %s, which the group shows on %d other partition(s): that commit did not take here, or something committed over it since; the runner cannot tell which, so it does not move it", runID, len(prior.Marks))
		}
		p.Unsettled++
		names.add(func() string { return partitionName(rp) })
	}
	if complete {
		p.Warnings = append(p.Warnings, fmt.Sprintf("run %s is complete; left alone as not part of it: %s", runID, names.summary()))
	} else {
		p.UnsettledNames = names.summary()
	}
}

// ToCommit counts the partitions the plan would commit.
func (p *Plan) ToCommit() int {
	n := 0
	for _, c := range p.Commit {
		if c {
			n++
		}
	}
	return n
}

// AlreadyApplied reports whether this run ID already committed every
// partition of the plan that it commits: nothing is left to commit, and
// something was.
func (p *Plan) AlreadyApplied() bool {
	return p.ToCommit() == 0 && p.Unsettled == 0 && slices.ContainsFunc(p.Partitions, func(rp report.Partition) bool { return rp.Applied })
}

// Stale lists the partitions a plan: target found no longer as planned.
func (p *Plan) Stale() []report.Partition {
	var out []report.Partition
	for i, rp := range p.Partitions {
		if !p.Commit[i] && rp.Error != "" {
			out = append(out, rp)
		}
	}
	return out
}

// MakePlan decides every partition's new offset. It is pure: all it knows of
// Kafka is the snapshot. Rules:
//   - a run ID already used with another target or scope is refused;
//   - a partition that already carries this run's commit keeps its offset (a
//     retried pod must not shift twice) and reports that commit's previous
//     offset and delta;
//   - targets outside [log start, log end] are clamped, with a warning; so is
//     a shift that overflows;
//   - a time after the last message falls back to the log end, with a note;
//   - relative and copied targets skip partitions that have nothing to be
//     relative to, with a warning; a plan left with no partition at all is
//     refused, since it would report success for doing nothing.
func MakePlan(s *Snapshot, target config.Target, id runIdent) (*Plan, error) {
	prior, err := findPrior(s.Committed, id)
	if err != nil {
		return nil, err
	}
	if err := checkSource(s, target); err != nil {
		return nil, err
	}
	if err := checkCluster(target, s.ClusterID); err != nil {
		return nil, err
	}
	var p *Plan
	switch target.Kind {
	case config.KindPlan:
		p = planFromFile(s, target, id)
	case config.KindUndo:
		if p, err = planUndo(s, target, id); err != nil {
			return nil, err
		}
	default:
		if p, err = planResolved(s, target, id); err != nil {
			return nil, err
		}
	}
	settlePrior(p, prior, id.RunID)
	return p, nil
}

// planResolved is MakePlan for a target resolved against the snapshot (every
// kind but plan: and undo:).
func planResolved(s *Snapshot, target config.Target, id runIdent) (*Plan, error) {
	p := newPlan(len(s.Partitions))
	fileOffsets := map[TP]int64{}
	for _, o := range target.Offsets {
		fileOffsets[TP{Topic: o.Topic, Partition: o.Partition}] = o.Offset
	}
	// For the summary warnings.
	noPrev, noSource, prevOutside := newNames(maxNamed), newNames(maxNamed), newNames(maxNamed)
	var pastEndNote string // the same for every partition past the log end
	for _, tp := range s.Partitions {
		prev, hasPrev := s.Committed[tp]
		start, end := s.LogStart[tp], s.LogEnd[tp]
		rp := report.Partition{Topic: tp.Topic, Partition: tp.Partition, LogStartOffset: start, LogEndOffset: end}
		if m, ok := parseMark(prev.Metadata); hasPrev && ok && id.owns(m) {
			p.add(alreadyApplied(rp, prev, m), false, false)
			continue
		}
		if hasPrev {
			rp.PreviousOffset = ptr(prev.Offset)
			if prev.Offset < start || prev.Offset > end {
				addNote(&rp, fmt.Sprintf("previous offset %d was outside the log [%d, %d]", prev.Offset, start, end))
				prevOutside.add(tp.String)
			}
		}
		var want int64
		switch target.Kind {
		case config.KindEarliest:
			want = start
		case config.KindLatest:
			want = end
		case config.KindTime, config.KindAgo:
			want = s.ForTime[tp]
			if want < 0 {
				want = end
				if pastEndNote == "" {
					pastEndNote = "no message at or after " + target.Time.UTC().Format(time.RFC3339Nano) + "; log end"
				}
				addNote(&rp, pastEndNote)
			}
		case config.KindOffset:
			want = target.Offset
		case config.KindShift:
			if !hasPrev {
				noPrev.add(tp.String)
				continue
			}
			// An absurd shift forward wraps around int64; it lands on the
			// log end it points at, and is a clamp like any other. (Back,
			// it cannot wrap: offsets are never negative.)
			want = prev.Offset + target.Shift
			if target.Shift > 0 && want < prev.Offset {
				want = end
				rp.Clamped = true
				addNote(&rp, fmt.Sprintf("shift %+d overflows; clamped to log end %d", target.Shift, end))
			}
		case config.KindFile:
			want = fileOffsets[tp]
		case config.KindGroup:
			src, ok := s.Source[tp]
			if !ok {
				noSource.add(tp.String)
				continue
			}
			want = src.Offset
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
		if !hasPrev {
			addNote(&rp, "no previous committed offset")
		}
		rp.NewOffset = want
		if hasPrev {
			rp.Delta = ptr(prev.Offset - want)
		}
		p.add(rp, true, false)
	}
	// One summary line per kind of anomaly: a warning per partition would
	// drown the log (and the termination message) for a large group.
	clamped, pastEnd := newNames(maxNamed), newNames(maxNamed)
	for i := range p.Partitions {
		rp := &p.Partitions[i]
		if rp.Clamped {
			clamped.add(func() string { return partitionName(rp) })
		}
		if strings.Contains(rp.Note, "no message at or after") {
			pastEnd.add(func() string { return partitionName(rp) })
		}
	}
	warn := func(what string, names *partitionNames) {
		if names.n > 0 {
			p.Warnings = append(p.Warnings, what+": "+names.summary())
		}
	}
	warn("target outside the log, clamped to its bounds", clamped)
	if target.IsTime() {
		warn("no message at or after "+target.Time.UTC().Format(time.RFC3339Nano)+", moved to the log end", pastEnd)
	}
	warn("committed offset outside the log (records deleted, or the topic recreated)", prevOutside)
	warn("no committed offset to shift from, left alone", noPrev)
	warn("no committed offset in source group "+target.Group+", left alone", noSource)
	if len(p.Partitions) == 0 {
		return nil, emptyPlanError(s, target)
	}
	return p, nil
}

// alreadyApplied reports a partition that carries this run's commit: it
// stays where it is, and the commit's metadata gives back the offset it had
// before the run, so the result and totals describe the replay, not zeros.
func alreadyApplied(rp report.Partition, c Committed, m commitMark) report.Partition {
	rp.NewOffset = c.Offset
	rp.Applied = true
	if m.Prev != nil {
		rp.PreviousOffset = ptr(*m.Prev)
		rp.Delta = ptr(*m.Prev - c.Offset)
	}
	note := "already applied by this run ID"
	if !m.At.IsZero() {
		note += " at " + m.At.UTC().Format(time.RFC3339)
	}
	if m.Version == 1 {
		note += " (by an older runner, which did not record the previous offset)"
	}
	addNote(&rp, note)
	return rp
}

// checkSource refuses a copy from a group with no committed offsets at all:
// a misspelt group name would otherwise copy nothing and report success.
func checkSource(s *Snapshot, target config.Target) error {
	if target.Kind == config.KindGroup && len(s.Source) == 0 {
		return &inputError{config.Ref(config.RefFromGroup), fmt.Sprintf("source group %q has no committed offsets: it does not exist, or has never committed", target.Group)}
	}
	return nil
}

// emptyPlanError explains why no partition in scope could be planned.
func emptyPlanError(s *Snapshot, target config.Target) error {
	switch target.Kind {
	case config.KindShift:
		return &inputError{config.Ref(config.RefShift), fmt.Sprintf("shift: moves from the committed offset, and the group has none on the %d partition(s) in scope; use earliest, latest, offset: or time: instead", len(s.Partitions))}
	case config.KindGroup:
		return &inputError{config.Ref(config.RefFromGroup), fmt.Sprintf("source group %q has no committed offset on any of the %d partition(s) in scope", target.Group, len(s.Partitions))}
	}
	return &inputError{config.Ref(config.FlagTopic), "no partition in scope"}
}

// addNote appends to a partition's note.
func addNote(rp *report.Partition, note string) {
	if rp.Note != "" {
		rp.Note += "; "
	}
	rp.Note += note
}

// maxNamed is how many partitions a summary warning names before it counts.
const maxNamed = 10

// partitionNames collects the partitions a warning or a refusal names:
// the first few, and how many in all. A large plan may put every partition
// in one (all past the log end, all skipped): naming each of them, to list
// the first few, cost a string per partition.
type partitionNames struct {
	keep  int
	first []string
	n     int
}

func newNames(keep int) *partitionNames { return &partitionNames{keep: keep} }

// add counts a partition, and names it while the first few are kept.
func (l *partitionNames) add(name func() string) {
	if l.n < l.keep {
		l.first = append(l.first, name())
	}
	l.n++
}

// list is the first few names and how many more there are.
func (l *partitionNames) list() string {
	s := strings.Join(l.first, ", ")
	if l.n > l.keep {
		s += fmt.Sprintf(" and %d more", l.n-l.keep)
	}
	return s
}

// partitionName is how warnings name a partition: topic/partition.
func partitionName(rp *report.Partition) string {
	return rp.Topic + "/" + strconv.FormatInt(int64(rp.Partition), 10)
}

// summary counts the names and lists the first few.
func (l *partitionNames) summary() string {
	return fmt.Sprintf("%d partition(s): %s", l.n, l.list())
}

func ptr[T any](v T) *T { return &v }
