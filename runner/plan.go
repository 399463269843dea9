package runner

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// inputError is a problem with the user's input that could only be seen once
// Kafka's metadata was known (an unknown topic, say). It exits with code 2.
type inputError struct {
	field string
	msg   string
}

func (e *inputError) Error() string { return e.field + ": " + e.msg }

// topicsToDescribe lists the topics whose metadata the plan needs, if they
// can be known before the group's offsets are read.
func topicsToDescribe(scope config.Scope, target config.Target) []string {
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
// report committed topics that no longer exist.
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
	case target.Kind == config.KindFile:
		for _, o := range target.Offsets {
			n, err := checkTopic("--to file:", o.Topic)
			if err != nil {
				return nil, nil, err
			}
			if o.Partition >= n {
				return nil, nil, &inputError{"--to file:", fmt.Sprintf("partition %s does not exist; topic %q has %d partitions (0-%d)", TP{Topic: o.Topic, Partition: o.Partition}, o.Topic, n, n-1)}
			}
			out = append(out, TP{Topic: o.Topic, Partition: o.Partition})
		}
	case !scope.Empty():
		for _, topic := range scope.TopicNames() {
			n, err := checkTopic("--topic", topic)
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
					return nil, nil, &inputError{"--topic", fmt.Sprintf("partition %d of topic %q does not exist; it has %d partitions (0-%d)", p, topic, n, n-1)}
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
		for tp := range from {
			n, exists := s.Topics[tp.Topic]
			switch {
			case !exists:
				warnings = appendOnce(warnings, fmt.Sprintf("topic %q has committed offsets but no longer exists; left alone", tp.Topic))
			case tp.Partition >= n:
				warnings = append(warnings, fmt.Sprintf("%s has a committed offset but the partition no longer exists; left alone", tp))
			default:
				out = append(out, tp)
			}
		}
		if len(out) == 0 {
			return nil, warnings, &inputError{"--topic", fmt.Sprintf("is empty and %s has no committed offsets on existing topics; name the topics to reposition", whose)}
		}
	}
	sortTPs(out)
	return out, warnings, nil
}

func appendOnce(ss []string, s string) []string {
	if slices.Contains(ss, s) {
		return ss
	}
	return append(ss, s)
}

func sortTPs(tps []TP) {
	slices.SortFunc(tps, func(a, b TP) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
}

// Plan is the decided new offset of every partition in scope.
type Plan struct {
	// Partitions are reported in the result, sorted.
	Partitions []report.Partition
	// Commit marks which of Partitions must be committed; the others were
	// already committed by this run ID.
	Commit []bool
	// Warnings are clamps, fallbacks and skipped partitions.
	Warnings []string
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
// partition of the plan.
func (p *Plan) AlreadyApplied() bool { return len(p.Partitions) > 0 && p.ToCommit() == 0 }

// MakePlan decides every partition's new offset. It is pure: all it knows of
// Kafka is the snapshot. Rules:
//   - a partition that already carries this run ID's commit metadata keeps its
//     offset (a retried pod must not shift twice);
//   - targets outside [log start, log end] are clamped, with a warning;
//   - a time after the last message falls back to the log end, with a note;
//   - relative and copied targets skip partitions that have nothing to be
//     relative to, with a warning.
func MakePlan(s *Snapshot, target config.Target, runID string) *Plan {
	p := &Plan{}
	fileOffsets := map[TP]int64{}
	for _, o := range target.Offsets {
		fileOffsets[TP{Topic: o.Topic, Partition: o.Partition}] = o.Offset
	}
	var noPrev, noSource []string // partitions left alone, for the warnings
	for _, tp := range s.Partitions {
		prev, hasPrev := s.Committed[tp]
		start, end := s.LogStart[tp], s.LogEnd[tp]
		rp := report.Partition{Topic: tp.Topic, Partition: tp.Partition, LogStartOffset: start, LogEndOffset: end}
		if hasPrev {
			rp.PreviousOffset = ptr(prev.Offset)
		}
		if hasPrev && runID != "" && metadataRunID(prev.Metadata) == runID {
			rp.NewOffset = prev.Offset
			rp.Delta = ptr(int64(0))
			rp.Note = "already applied by this run ID"
			p.Partitions = append(p.Partitions, rp)
			p.Commit = append(p.Commit, false)
			continue
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
				rp.Note = "no message at or after " + target.Time.UTC().Format(time.RFC3339) + "; log end"
			}
		case config.KindOffset:
			want = target.Offset
		case config.KindShift:
			if !hasPrev {
				noPrev = append(noPrev, tp.String())
				continue
			}
			want = prev.Offset + target.Shift
			// Overflow guards: an absurd shift lands on the log bound it
			// points at, not on the opposite one.
			if target.Shift < 0 && want > prev.Offset {
				want = start
			} else if target.Shift > 0 && want < prev.Offset {
				want = end
			}
		case config.KindFile:
			want = fileOffsets[tp]
		case config.KindGroup:
			src, ok := s.Source[tp]
			if !ok {
				noSource = append(noSource, tp.String())
				continue
			}
			want = src.Offset
		}
		switch {
		case want < start:
			rp.Clamped = true
			rp.Note = fmt.Sprintf("clamped from %d to log start %d", want, start)
			want = start
		case want > end:
			rp.Clamped = true
			rp.Note = fmt.Sprintf("clamped from %d to log end %d", want, end)
			want = end
		}
		if !hasPrev && rp.Note == "" {
			rp.Note = "no previous committed offset"
		}
		rp.NewOffset = want
		if hasPrev {
			rp.Delta = ptr(prev.Offset - want)
		}
		p.Partitions = append(p.Partitions, rp)
		p.Commit = append(p.Commit, true)
	}
	// One summary line per kind of anomaly: a warning per partition would
	// drown the log (and the termination message) for a large group.
	var clamped, pastEnd []string
	for _, rp := range p.Partitions {
		name := fmt.Sprintf("%s/%d", rp.Topic, rp.Partition)
		if rp.Clamped {
			clamped = append(clamped, name)
		}
		if strings.HasPrefix(rp.Note, "no message at or after") {
			pastEnd = append(pastEnd, name)
		}
	}
	warn := func(what string, names []string) {
		if len(names) > 0 {
			p.Warnings = append(p.Warnings, what+": "+summarize(names))
		}
	}
	warn("target outside the log, clamped to its bounds", clamped)
	if target.IsTime() {
		warn("no message at or after "+target.Time.UTC().Format(time.RFC3339)+", moved to the log end", pastEnd)
	}
	warn("no committed offset to shift from, left alone", noPrev)
	warn("no committed offset in source group "+target.Group+", left alone", noSource)
	return p
}

// maxNamed is how many partitions a summary warning names before it counts.
const maxNamed = 10

// summarize counts names and lists the first few.
func summarize(names []string) string {
	s := strings.Join(names[:min(len(names), maxNamed)], ", ")
	if len(names) > maxNamed {
		s += fmt.Sprintf(" and %d more", len(names)-maxNamed)
	}
	return fmt.Sprintf("%d partition(s): %s", len(names), s)
}

func ptr[T any](v T) *T { return &v }
