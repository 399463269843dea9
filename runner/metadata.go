package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// Commit metadata marks every offset the runner commits, so that a later
// attempt of the same run can tell its own commit from anyone else's, see
// what it applied, and report it. Version 2 is one line of space-separated
// key=value fields after a version marker:
//
//	kafka-replay/2 run=<run ID> plan=<digest> [prev=<offset>] [time=<instant>] [n=<count> set=<digest>] at=<commit time>
//
// The fields are:
//   - run: the run ID, percent-encoded (every byte outside [A-Za-z0-9._:/-]),
//     so no run ID can forge a field or a space;
//   - plan: 16 hex digits of a SHA-256 over the target as given (the instant
//     for time:, the duration for ago:, the file's entries for file:) and
//     the scope, so a run ID reused with another target or scope is
//     recognised and refused;
//   - prev: the partition's committed offset before this run; absent when
//     there was none. A retry that finds the commit reports the original
//     previous offset and delta from it;
//   - time: for time: and ago: targets, the instant the first attempt
//     resolved (RFC3339, UTC, milliseconds), which a retry reuses;
//   - n, set: how many partitions the run commits in all, and 16 hex digits
//     of a SHA-256 over each of them with its previous and new offset
//     (setDigest). Every mark of a run carries the same two, so a later
//     attempt that finds the run on some partitions knows whether it is
//     complete, and whether the partitions without its mark are still
//     exactly where the run found them (see settlePrior). An undo checks
//     the undone run's file against them;
//   - at: when the commit was made (RFC3339, UTC).
//
// Fields a reader does not know are ignored (n and set came after the
// version 2 format, whose readers ignore them). Version 1 ("kafka-replay
// run=<id> at=<time>", no plan digest) is still recognised as this run's
// commit, so a run started by an older runner is never applied twice.
const (
	metadataMarker  = "kafka-replay"
	metadataVersion = 2
)

// maxMetadataBytes is Kafka's default offset.metadata.max.bytes: a broker
// refuses a commit whose metadata is longer.
const maxMetadataBytes = 4096

// commitMark is what the runner records with each committed offset.
type commitMark struct {
	// Version is the metadata format's version.
	Version int
	RunID   string
	// Plan is the digest of target and scope; empty for version 1.
	Plan string
	// Prev is the partition's committed offset before the run, if it had one.
	Prev *int64
	// Time is the resolved instant of a time or ago target.
	Time *time.Time
	// Count and Set are n= and set=: the size and digest of the run's
	// whole commit (setDigest); 0 and empty in marks written before them.
	Count int
	Set   string
	At    time.Time
}

// String encodes the mark as commit metadata.
//
// It is appended into a stack buffer and copied once into a string of its
// exact size: a commit writes one mark per partition, and the
// strings.Builder and fmt it replaces allocated about 500 bytes per mark (its
// buffer's doublings), of which the 256-byte last one stayed live until the
// read-back: 2 MiB at 10,000 partitions, at the run's memory peak.
func (m commitMark) String() string {
	var buf [512]byte // a launcher run ID (namespace/name/hash) fits
	b := append(buf[:0], metadataMarker...)
	b = append(b, '/')
	b = strconv.AppendInt(b, metadataVersion, 10)
	b = append(b, " run="...)
	b = appendEscaped(b, m.RunID)
	b = append(b, " plan="...)
	b = append(b, m.Plan...)
	if m.Prev != nil {
		b = append(b, " prev="...)
		b = strconv.AppendInt(b, *m.Prev, 10)
	}
	if m.Time != nil {
		b = append(b, " time="...)
		b = m.Time.UTC().AppendFormat(b, metadataTime)
	}
	if m.Set != "" {
		b = append(b, " n="...)
		b = strconv.AppendInt(b, int64(m.Count), 10)
		b = append(b, " set="...)
		b = append(b, m.Set...)
	}
	b = append(b, " at="...)
	b = m.At.UTC().AppendFormat(b, metadataTime)
	return string(b)
}

// metadataTime keeps milliseconds, the precision of Kafka's timestamps.
const metadataTime = "2006-01-02T15:04:05.999Z07:00"

// parseMark decodes commit metadata written by the runner. ok is false for
// anything else: another tool's metadata, a consumer's, or a damaged value.
func parseMark(md string) (m commitMark, ok bool) {
	head, rest, _ := strings.Cut(md, " ")
	switch {
	case head == metadataMarker:
		m.Version = 1
	case strings.HasPrefix(head, metadataMarker+"/"):
		v, err := strconv.Atoi(strings.TrimPrefix(head, metadataMarker+"/"))
		if err != nil || v < 2 {
			return commitMark{}, false
		}
		m.Version = v
	default:
		return commitMark{}, false
	}
	// The fields are cut one at a time rather than split into a slice: every
	// committed offset of the group is parsed, up to three times a run. A
	// key seen twice makes the mark invalid, whatever the key: the first few
	// keys are checked in a small array, those of a (forged) mark with more
	// in a map, so that no metadata costs more than linear time.
	var keys [8]string
	nkeys := 0
	var seen map[string]bool
	for more := true; more; {
		var f string
		f, rest, more = strings.Cut(rest, " ")
		k, raw, found := strings.Cut(f, "=")
		if !found || slices.Contains(keys[:nkeys], k) || seen != nil && seen[k] {
			return commitMark{}, false
		}
		switch {
		case nkeys < len(keys):
			keys[nkeys] = k
			nkeys++
		case seen == nil:
			seen = map[string]bool{k: true}
		default:
			seen[k] = true
		}
		// Only a '%' makes PathUnescape change or refuse a value; the
		// runner's own marks have none but in unusual run IDs.
		v := raw
		if strings.IndexByte(raw, '%') >= 0 {
			var err error
			if v, err = url.PathUnescape(raw); err != nil {
				return commitMark{}, false
			}
		}
		switch k {
		case "run":
			m.RunID = v
		case "plan":
			m.Plan = v
		case "prev":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return commitMark{}, false
			}
			m.Prev = &n
		case "n":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return commitMark{}, false
			}
			m.Count = n
		case "set":
			m.Set = v
		case "time", "at":
			t, err := config.ParseRFC3339(v)
			if err != nil {
				return commitMark{}, false
			}
			if k == "at" {
				m.At = t
			} else {
				// Its own variable: &t would move every parsed at= to the heap too.
				tm := t
				m.Time = &tm
			}
		}
	}
	if m.RunID == "" || (m.Version >= 2 && m.Plan == "") || (m.Count == 0) != (m.Set == "") {
		return commitMark{}, false
	}
	return m, true
}

// escapeValue percent-encodes every byte outside [A-Za-z0-9._:/-], which
// keeps the launcher's run IDs (namespace/name/hash) readable.
func escapeValue(s string) string {
	return string(appendEscaped(nil, s))
}

// appendEscaped appends escapeValue(s) to b.
func appendEscaped(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unescaped(c) {
			b = append(b, c)
		} else {
			b = append(b, '%', hex[c>>4], hex[c&0xF])
		}
	}
	return b
}

// unescaped reports whether escapeValue keeps c as it is.
func unescaped(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("._:/-", c) >= 0
}

// planDigest identifies what a run applies: the target as given (not as
// resolved, so that an ago: retried later has the same digest) and the scope.
// Each part is length-prefixed, so no two different inputs hash alike.
func planDigest(t config.Target, s config.Scope) string {
	h := sha256.New()
	field := func(h hash.Hash, v string) { fmt.Fprintf(h, "%d:%s;", len(v), v) }
	field(h, "kafka-replay plan 1")
	field(h, string(t.Kind))
	switch t.Kind {
	case config.KindTime:
		field(h, t.Time.UTC().Format(time.RFC3339Nano))
	case config.KindAgo:
		field(h, t.Ago.String())
	case config.KindOffset:
		field(h, strconv.FormatInt(t.Offset, 10))
	case config.KindShift:
		field(h, strconv.FormatInt(t.Shift, 10))
	case config.KindFile:
		// The entries, not the path: the same path may hold another plan.
		offs := slices.Clone(t.Offsets)
		slices.SortFunc(offs, func(a, b config.PartitionOffset) int {
			return strings.Compare(fmt.Sprintf("%s/%010d", a.Topic, a.Partition), fmt.Sprintf("%s/%010d", b.Topic, b.Partition))
		})
		for _, o := range offs {
			field(h, fmt.Sprintf("%s/%d=%d", o.Topic, o.Partition, o.Offset))
		}
	case config.KindGroup:
		field(h, t.Group)
	case config.KindPlan, config.KindUndo:
		// The file's partitions, as for file:, with what the undo rules
		// read (applied) and whether force overrides them.
		field(h, t.Result.Group)
		if t.Force {
			field(h, "force")
		}
		ps := slices.Clone(t.Result.Partitions)
		slices.SortFunc(ps, func(a, b report.Partition) int {
			return strings.Compare(fmt.Sprintf("%s/%010d", a.Topic, a.Partition), fmt.Sprintf("%s/%010d", b.Topic, b.Partition))
		})
		for _, p := range ps {
			prev := "-"
			if p.PreviousOffset != nil {
				prev = strconv.FormatInt(*p.PreviousOffset, 10)
			}
			field(h, fmt.Sprintf("%s/%d %s %d %t %t", p.Topic, p.Partition, prev, p.NewOffset, p.Applied, p.LeftAlone != ""))
		}
	}
	field(h, "scope")
	field(h, s.String())
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// runIdent is what makes a commit this run's: its run ID and plan digest.
type runIdent struct {
	RunID string
	Plan  string
}

// owns reports whether m was written by this run (same run ID, same plan).
// A version 1 mark has no digest and is taken at its run ID's word.
func (id runIdent) owns(m commitMark) bool {
	return m.RunID == id.RunID && (m.Version == 1 || m.Plan == id.Plan)
}

// priorRun is what earlier attempts of this run left in the group.
type priorRun struct {
	// Partitions counts the partitions carrying this run's commit.
	Partitions int
	// Time is the instant the first attempt resolved, for time targets.
	Time *time.Time
	// Marks are the partitions carrying this run's commit, sorted.
	Marks []priorMark
	// Count and Set are the run's n= and set=, when every mark carries
	// the same ones; 0 and empty otherwise (marks of an older runner).
	Count int
	Set   string
}

// priorMark is one partition that carries this run's commit.
type priorMark struct {
	TP     TP
	Offset int64
	Mark   commitMark
}

// findPrior looks through every committed offset of the group (not only
// those in scope: the scope may be what changed) for this run ID. It refuses
// a run ID that committed with another plan, and a mark it cannot vouch for.
func findPrior(committed map[TP]Committed, id runIdent) (priorRun, error) {
	// Only the partitions with a mark of this run ID count, so only those
	// are sorted (so that the partition an error names does not vary): on a
	// first attempt none, instead of every committed offset of the group.
	marks := marksOf(committed, id.RunID)
	var p priorRun
	for i, f := range marks {
		tp, m := f.TP, f.Mark
		switch {
		case m.Version > metadataVersion:
			return priorRun{}, &inputError{config.Ref(config.FlagRunID), fmt.Sprintf("%q was used by a newer runner (commit metadata version %d on %s); use that runner or a new run ID", id.RunID, m.Version, tp)}
		case !id.owns(m):
			return priorRun{}, &inputError{config.Ref(config.FlagRunID), fmt.Sprintf("%q was already used with another target or scope (target digest %s on %s, this run's is %s); a run ID names one replay: use a new run ID", id.RunID, m.Plan, tp, id.Plan)}
		}
		p.Partitions++
		if m.Time != nil {
			if p.Time != nil && !p.Time.Equal(*m.Time) {
				return priorRun{}, &inputError{config.Ref(config.FlagRunID), fmt.Sprintf("the commits of run %q disagree on the resolved time (%s and %s on %s); use a new run ID", id.RunID, p.Time.Format(time.RFC3339Nano), m.Time.Format(time.RFC3339Nano), tp)}
			}
			p.Time = m.Time
		}
		if i == 0 {
			p.Count, p.Set = m.Count, m.Set
		} else if m.Count != p.Count || m.Set != p.Set {
			p.Count, p.Set = 0, ""
		}
	}
	if p.Set == "" {
		p.Count = 0
	}
	p.Marks = marks
	return p, nil
}

// marksOf lists the partitions whose commit metadata is a mark of runID.
func marksOf(committed map[TP]Committed, runID string) []priorMark {
	var out []priorMark
	for tp, c := range committed {
		if m, ok := parseMark(c.Metadata); ok && m.RunID == runID {
			out = append(out, priorMark{tp, c.Offset, m})
		}
	}
	slices.SortFunc(out, func(a, b priorMark) int { return compareTPs(a.TP, b.TP) })
	return out
}

// setEntry is one partition of a run's commit as setDigest weighs it: the
// committed offset it started from (nil for none) and the one committed.
type setEntry struct {
	TP   TP
	Prev *int64
	New  int64
}

// setDigest is a mark's set=: 16 hex digits of a SHA-256 over a run's
// committed partitions, sorted, each with its previous and new offset. It
// sorts es.
func setDigest(es []setEntry) string {
	slices.SortFunc(es, func(a, b setEntry) int { return compareTPs(a.TP, b.TP) })
	h := sha256.New()
	var buf []byte
	for _, e := range es {
		buf = strconv.AppendQuote(buf[:0], e.TP.Topic)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, int64(e.TP.Partition), 10)
		buf = append(buf, ' ')
		if e.Prev == nil {
			buf = append(buf, '-')
		} else {
			buf = strconv.AppendInt(buf, *e.Prev, 10)
		}
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, e.New, 10)
		buf = append(buf, '\n')
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
