package config

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/report"
)

// TargetKind names one form of the target grammar.
type TargetKind string

// The target kinds, spelled as their prefixes in the grammar.
const (
	KindEarliest TargetKind = "earliest"
	KindLatest   TargetKind = "latest"
	KindTime     TargetKind = "time"
	KindAgo      TargetKind = "ago"
	KindOffset   TargetKind = "offset"
	KindShift    TargetKind = "shift"
	KindFile     TargetKind = "file"
	KindGroup    TargetKind = "group"
	// KindPlan applies a dry run's plan exactly (see CheckPlanFile).
	KindPlan TargetKind = "plan"
	// KindUndo restores the previous offsets of a run's result under the
	// undo rules (docs/usage.md, "Undo").
	KindUndo TargetKind = "undo"
)

// Target is a parsed REPLAY_TO value.
//
// Grammar:
//
//	earliest | latest
//	time:<RFC3339 with a zone> | time:<unix milliseconds>
//	ago:<Go duration>              resolved once, against the run's start
//	offset:<N>                     the same absolute offset on every partition
//	shift:<+N|-N>                  relative to the committed offset
//	file:<path>                    JSON [{"topic","partition","offset"}]
//	group:<other-group>            copy another group's committed offsets
//	plan:<path>                    apply a dry run's result (JSON, or gzip of it) exactly
//	undo:<path>                    restore the previous offsets of a run's result
type Target struct {
	Kind TargetKind
	// Given is the text as the user wrote it.
	Given string
	// Time is set for time targets; ago targets get it from Resolve.
	Time time.Time
	// Ago is the duration of an ago target.
	Ago time.Duration
	// Offset is the absolute offset of an offset target.
	Offset int64
	// Shift is the signed distance of a shift target.
	Shift int64
	// File is the path of a file target, and Offsets its parsed content.
	File    string
	Offsets []PartitionOffset
	// fileGroup is the group column of a CSV file target, if it has one
	// (see decodeOffsetsCSV).
	fileGroup rowGroup
	// Group is the source group of a group target.
	Group string
	// FileDigest is the FileDigestOf the bytes of a file:, plan: or undo:
	// target's file, as read.
	FileDigest string
	// Result is a plan: or undo: target's file, decoded. Config.Validate
	// checks it against the group (CheckPlanFile, CheckUndoFile).
	Result *report.Result
	// Force is --force, for an undo: target.
	Force bool
}

// PartitionOffset is one entry of a file target.
type PartitionOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}

// MaxTargetFileBytes bounds a file target so a wrong path (a log file, say)
// fails fast instead of exhausting memory.
const MaxTargetFileBytes = 64 << 20

var (
	// An RFC3339 timestamp without its zone designator, which we refuse to
	// interpret rather than silently assume UTC.
	zonelessTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$`)
	allDigits    = regexp.MustCompile(`^\d+$`)
)

// ParseTarget parses the target grammar. A file target's file is read and
// validated here, so every input error surfaces before Kafka is contacted.
func ParseTarget(s string) (Target, error) { return parseTarget(s, "") }

// FileDigestError is a file:, plan: or undo: target's file whose bytes are
// not those of --file-digest: nothing was decoded from it.
type FileDigestError struct {
	Kind       TargetKind
	File       string
	Got, Wants string
}

func (e *FileDigestError) Error() string {
	return fmt.Sprintf("%s's file %s is %s, not %s: it changed since the digest was taken; nothing was read from it", e.Kind, e.File, e.Got, e.Wants)
}

// parseTarget is ParseTarget for a file whose bytes must have digest (a
// FileDigestOf; empty: any): a file with other bytes is refused with a
// *FileDigestError before it is decoded, so whoever could write it cannot
// even reach the decoder.
func parseTarget(s, digest string) (Target, error) {
	t := Target{Given: s}
	s = strings.TrimSpace(s)
	if s == "" {
		return t, errors.New("is empty; use earliest, latest, time:<RFC3339>, ago:<duration>, offset:<N>, shift:<+N|-N>, file:<path> or group:<name>")
	}
	kind, arg, hasArg := strings.Cut(s, ":")
	t.Kind = TargetKind(strings.ToLower(kind))
	switch t.Kind {
	case KindEarliest, KindLatest:
		if hasArg {
			return t, fmt.Errorf("%q takes no argument", t.Kind)
		}
		return t, nil
	}
	if !hasArg || arg == "" {
		switch t.Kind {
		case KindTime, KindAgo, KindOffset, KindShift, KindFile, KindGroup, KindPlan, KindUndo:
			return t, fmt.Errorf("%q needs an argument, as in %s", t.Kind, example(t.Kind))
		}
		return t, fmt.Errorf("unknown target %q (kinds: %s)%s", s, kindList, kindHint(s))
	}
	switch t.Kind {
	case KindTime:
		tm, err := ParseTime(arg)
		if err != nil {
			return t, err
		}
		t.Time = tm
	case KindAgo:
		d, err := time.ParseDuration(arg)
		if err != nil {
			return t, fmt.Errorf("ago: %q is not a Go duration such as 90m or 2h30m", arg)
		}
		if d <= 0 {
			return t, fmt.Errorf("ago: duration must be positive, got %s", arg)
		}
		t.Ago = d
	case KindOffset:
		n, err := strconv.ParseInt(arg, 10, 64)
		if err != nil || n < 0 {
			return t, fmt.Errorf("offset: %q must be a whole number ≥ 0", arg)
		}
		t.Offset = n
	case KindShift:
		if arg[0] != '+' && arg[0] != '-' {
			return t, fmt.Errorf("shift: %q needs an explicit sign: +N moves forward (skips), -N moves back (re-consumes)", arg)
		}
		n, err := strconv.ParseInt(arg, 10, 64)
		if err != nil {
			return t, fmt.Errorf("shift: %q is not a signed whole number", arg)
		}
		if n == 0 {
			return t, errors.New("shift: must not be 0, which would change nothing")
		}
		t.Shift = n
	case KindFile:
		t.File = arg
		b, err := readTargetFile(KindFile, arg)
		if err != nil {
			return t, err
		}
		t.FileDigest = FileDigestOf(b)
		if digest != "" && t.FileDigest != digest {
			return t, &FileDigestError{Kind: t.Kind, File: arg, Got: t.FileDigest, Wants: digest}
		}
		f, err := decodeOffsetsFile(b, "file: "+arg)
		if err != nil {
			return t, err
		}
		t.Offsets, t.fileGroup = f.offsets, f.group
	case KindPlan, KindUndo:
		t.File = arg
		b, err := readTargetFile(t.Kind, arg)
		if err != nil {
			return t, err
		}
		t.FileDigest = FileDigestOf(b)
		if digest != "" && t.FileDigest != digest {
			return t, &FileDigestError{Kind: t.Kind, File: arg, Got: t.FileDigest, Wants: digest}
		}
		r, err := DecodeResultFile(b)
		if err != nil {
			return t, fmt.Errorf("%s: %s %w", t.Kind, arg, err)
		}
		t.Result = r
	case KindGroup:
		if err := ValidateGroup(arg); err != nil {
			return t, fmt.Errorf("group: %w", err)
		}
		t.Group = arg
	default:
		return t, fmt.Errorf("unknown target kind %q (kinds: %s)%s", kind, kindList, kindHint(s))
	}
	return t, nil
}

// kindHint names the target a value without its kind would be, when it is
// a valid argument of one ("2026-03-01T09:30:00Z" is time:2026-...), so that
// the error says what to write; else nothing.
func kindHint(s string) string {
	kinds := []TargetKind{KindTime, KindAgo, KindShift, KindOffset}
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		// A bare number is an offset, or with a sign a shift, before it
		// is a time in milliseconds.
		kinds = []TargetKind{KindShift, KindOffset}
	}
	for _, k := range kinds {
		if _, err := parseTarget(string(k)+":"+s, ""); err == nil {
			return fmt.Sprintf("; did you mean %s:%s?", k, s)
		}
	}
	return ""
}

// kindList names every target kind, for errors.
const kindList = "earliest, latest, time, ago, offset, shift, file, group, plan, undo"

func example(k TargetKind) string {
	switch k {
	case KindTime:
		return "time:2026-03-01T09:30:00+01:00"
	case KindAgo:
		return "ago:2h"
	case KindOffset:
		return "offset:0"
	case KindShift:
		return "shift:-100"
	case KindFile:
		return "file:/plan/offsets.json"
	case KindPlan:
		return "plan:/plans/orders-plan.json"
	case KindUndo:
		return "undo:/results/orders-rewind.json"
	default:
		return "group:orders-consumer"
	}
}

// maxTimeMillis is 9999-12-31T23:59:59.999Z, the last instant that RFC3339
// (and so the canonical form and the JSON result) can express.
const maxTimeMillis = 253402300799999

// The plausible range of a time given as bare digits. Any digit string is a
// number of milliseconds, but the common mistakes are digit strings too:
// `date +%s` prints seconds and 20260301 is a date, and both read as
// milliseconds land in January 1970, which quietly means earliest. Kafka
// timestamps of real data lie well inside this range; an RFC3339 time says
// what it means and is not held to it.
var (
	minPlausibleTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	maxPlausibleTime = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

// ParseTime accepts RFC3339 (with a zone) or Unix milliseconds.
func ParseTime(s string) (time.Time, error) {
	if allDigits.MatchString(s) {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("time: %q is out of range for Unix milliseconds%s", s, digitsHint(s))
		}
		tm := time.UnixMilli(ms).UTC()
		if tm.Before(minPlausibleTime) || !tm.Before(maxPlausibleTime) {
			return time.Time{}, fmt.Errorf("time: %q read as Unix milliseconds is %s, outside the plausible years 2000 to 2099%s",
				s, tm.Format(time.RFC3339Nano), digitsHint(s))
		}
		return tm, nil
	}
	if zonelessTime.MatchString(s) {
		return time.Time{}, fmt.Errorf("time: %q has no time zone; add Z for UTC or an offset such as +02:00 (the runner never assumes one)", s)
	}
	tm, err := ParseRFC3339(s)
	if errors.Is(err, errZoneOffset) {
		return time.Time{}, fmt.Errorf("time: %q: %w", s, err)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("time: %q is neither RFC3339 with a zone (2026-03-01T09:30:00Z) nor Unix milliseconds", s)
	}
	if tm.UnixMilli() < 0 {
		return time.Time{}, fmt.Errorf("time: %q is before 1970", s)
	}
	return tm, nil
}

// MaxZoneOffset is the largest zone offset a time may carry, either way:
// the range of Java's ZoneOffset, which Kafka's own tools parse times with,
// and of every zone there is. Go's RFC3339 parser takes any two-digit hour
// and minute (+24:00, +99:59, and +00:60 as +01:00), which names no zone.
const MaxZoneOffset = 18 * time.Hour

// errZoneOffset marks a zone offset that is not one.
var errZoneOffset = errors.New("zone offset")

// ParseRFC3339 parses an RFC3339 time as time.Parse does, and refuses what
// Go's parser lets through but RFC3339 and Kafka's tools do not: a zone
// offset whose minutes exceed 59 or that lies beyond ±18:00 (MaxZoneOffset).
// Every time the runner reads as text goes through it: a time: target, the
// at= and time= of commit metadata.
func ParseRFC3339(s string) (time.Time, error) {
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return tm, err
	}
	if last := s[len(s)-1]; last == 'Z' || last == 'z' {
		return tm, nil
	}
	// A parsed time without Z ends in ±hh:mm.
	zone := s[len(s)-6:]
	h, m := int(zone[1]-'0')*10+int(zone[2]-'0'), int(zone[4]-'0')*10+int(zone[5]-'0')
	if m > 59 || time.Duration(h)*time.Hour+time.Duration(m)*time.Minute > MaxZoneOffset {
		return time.Time{}, fmt.Errorf("%w %s is not a zone offset: offsets run from -18:00 to +18:00, minutes from 00 to 59", errZoneOffset, zone)
	}
	return tm, nil
}

// CheckZone refuses a decoded time (from JSON, whose decoder is Go's RFC3339
// parser) whose zone offset lies beyond ±18:00: see ParseRFC3339.
func CheckZone(t time.Time) error {
	if _, off := t.Zone(); time.Duration(max(off, -off))*time.Second > MaxZoneOffset {
		return fmt.Errorf("%w %s is not a zone offset: offsets run from -18:00 to +18:00", errZoneOffset, t.Format("-07:00"))
	}
	return nil
}

// digitsHint guesses what an implausible digit string was meant to be.
func digitsHint(s string) string {
	plausible := func(t time.Time) bool { return !t.Before(minPlausibleTime) && t.Before(maxPlausibleTime) }
	if d, err := time.Parse("20060102", s); err == nil && plausible(d) {
		return fmt.Sprintf("; it looks like a date (YYYYMMDD): write it as RFC3339 with the zone you mean, such as time:%sT00:00:00Z", d.Format(time.DateOnly))
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err == nil {
		for _, u := range []struct {
			unit string
			t    time.Time
			fix  string
		}{
			{"seconds (as date +%s prints them)", time.Unix(n, 0).UTC(), "append 000 for milliseconds"},
			{"microseconds", time.UnixMicro(n).UTC(), "drop the last 3 digits for milliseconds"},
			{"nanoseconds", time.Unix(0, n).UTC(), "drop the last 6 digits for milliseconds"},
		} {
			if plausible(u.t) {
				return fmt.Sprintf("; it looks like Unix %s, which is %s: %s, or write time:%s", u.unit, u.t.Format(time.RFC3339), u.fix, u.t.Format(time.RFC3339))
			}
		}
	}
	return "; write Unix milliseconds or an RFC3339 time with a zone, such as time:2026-03-01T09:30:00Z"
}

// ValidateOffsets checks explicit per-partition offsets: valid topics, no
// negative numbers, and no partition listed twice (which would be ambiguous).
func ValidateOffsets(offs []PartitionOffset, where string) error {
	return validateOffsets(offs, where, func(i int) string { return fmt.Sprintf("entry %d", i) })
}

// validateOffsets is ValidateOffsets for entries that label names (entry 3,
// or a CSV's line 4).
func validateOffsets(offs []PartitionOffset, where string, label func(int) string) error {
	if len(offs) == 0 {
		return fmt.Errorf("%s: lists no partitions", where)
	}
	seen := make(map[TopicPartition]int, len(offs))
	for i, o := range offs {
		if err := ValidateTopic(o.Topic); err != nil {
			return fmt.Errorf("%s: %s: topic: %w", where, label(i), err)
		}
		if o.Partition < 0 {
			return fmt.Errorf("%s: %s: partition %d is negative", where, label(i), o.Partition)
		}
		if o.Offset < 0 {
			return fmt.Errorf("%s: %s: offset %d is negative", where, label(i), o.Offset)
		}
		tp := TopicPartition{o.Topic, o.Partition}
		if j, dup := seen[tp]; dup {
			return fmt.Errorf("%s: %s and %s both name %s", where, label(j), label(i), tp)
		}
		seen[tp] = i
	}
	return nil
}

// Resolve fixes relative parts of the target against the run's start time, so
// that an ago target means the same instant for the whole run and in the
// result. An ago reaching before 1970 resolves to the Unix epoch: a negative
// timestamp would mean something else to Kafka (-1 is latest, -2 earliest).
func (t *Target) Resolve(start time.Time) {
	if t.Kind == KindAgo {
		t.Time = start.Add(-t.Ago).UTC().Truncate(time.Millisecond)
		if t.Time.UnixMilli() < 0 {
			t.Time = time.UnixMilli(0).UTC()
		}
	}
}

// IsTime reports whether the target resolves through offsets-for-times.
func (t *Target) IsTime() bool { return t.Kind == KindTime || t.Kind == KindAgo }

// Canonical is the normalised, absolute form of the target, as recorded in
// the result.
func (t *Target) Canonical() string {
	switch t.Kind {
	case KindTime, KindAgo:
		return "time:" + t.Time.UTC().Format(time.RFC3339Nano)
	case KindOffset:
		return "offset:" + strconv.FormatInt(t.Offset, 10)
	case KindShift:
		return fmt.Sprintf("shift:%+d", t.Shift)
	case KindFile:
		return fmt.Sprintf("file:%s (%d partitions)", t.File, len(t.Offsets))
	case KindGroup:
		return "group:" + t.Group
	case KindPlan:
		// The plan's own target: what the applied offsets were planned for.
		if t.Result != nil {
			return t.Result.Target.Resolved
		}
		return "plan:" + t.File
	case KindUndo:
		n := 0
		if t.Result != nil {
			n = len(t.Result.Partitions)
		}
		force := ""
		if t.Force {
			force = ", force"
		}
		return fmt.Sprintf("undo:%s (%d partitions%s)", t.File, n, force)
	default:
		return string(t.Kind)
	}
}
