// Package report is the contract between the runner and everything that reads
// its outcome: the launcher, Argo output parameters and humans with jq.
//
// It is deliberately free of cgo and of Kafka client code, so the launcher can
// import it and still build with CGO_ENABLED=0. Every fact about the result
// format, the exit codes and the failure reasons lives here and only here.
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
	"time"
)

// Schema identifies the version of the result format. Readers reject results
// whose schema they do not know rather than guess at their meaning.
const Schema = "kafkareplay.dev/result/v1"

// MaxTerminationMessageBytes is the kubelet's limit for a container's
// termination message; anything longer is cut by the kubelet mid-JSON.
const MaxTerminationMessageBytes = 4096

// ExitCode is the runner's process exit status. The launcher's Job pod failure
// policy and Argo's retry and branch conditions key on these numbers, so they
// are part of the contract and never change meaning.
type ExitCode int

const (
	// ExitOK means the plan was applied, was already applied, or was a dry run.
	ExitOK ExitCode = 0
	// ExitInternal is an unexpected failure inside the runner. Offsets may
	// only have changed if the result lists applied partitions.
	ExitInternal ExitCode = 1
	// ExitInvalidInput means the configuration, target or scope was rejected,
	// the run ID was already used with another target or scope, or Kafka
	// refused the credentials. Nothing was changed. Retrying with the same
	// input cannot help.
	ExitInvalidInput ExitCode = 2
	// ExitGroupActive means the group has live members (and any wait for it to
	// become empty ran out), or the broker refused the commit because members
	// joined, and the read-back shows no partition moved. Nothing was changed.
	ExitGroupActive ExitCode = 3
	// ExitKafkaError means Kafka could not be read, or the broker refused
	// the commit with an answer that proves it was not written, and the
	// read-back shows every partition unchanged. Nothing was changed; a
	// retry may succeed.
	ExitKafkaError ExitCode = 4
	// ExitPartiallyApplied means that after a commit attempt the group may
	// have moved, and not every partition is known to be at this run's
	// commit: some partitions took and others did not, or another client
	// overwrote some (PartiallyApplied), or the runner cannot know what the
	// commit did (OutcomeUnknown). The result names each partition that is
	// not applied and marks the applied ones. A retry with the same run ID
	// settles it: it finds this run's commit, or makes it.
	ExitPartiallyApplied ExitCode = 5
	// ExitInterrupted means the runner was stopped by a signal before it
	// committed anything. Nothing was changed.
	ExitInterrupted ExitCode = 6
	// ExitRefused means a guard refused the plan before anything was
	// committed: the plan being applied no longer holds (PlanStale), it
	// would re-consume more messages than allowed (LimitExceeded), or it
	// would skip messages the consumers never handled (WouldSkipMessages).
	// The result still holds the plan, and names the partitions at fault.
	// Nothing was changed. Retrying the same input cannot help: plan again,
	// or change the limits.
	ExitRefused ExitCode = 7
	// ExitSuperseded means an Atomic run was fenced by another replay of
	// the same group on the same cluster (another runner initialised the
	// group's transactional ID after this one): Kafka aborted this run's
	// transaction, and the read-back shows none of its offsets. Nothing
	// was changed. Not retryable: a retry would fence the other replay in
	// turn; look at what it did first.
	ExitSuperseded ExitCode = 8
)

// LastExitCode is the highest exit code the runner uses.
const LastExitCode = ExitSuperseded

// Reason is a one-word, CamelCase summary of an outcome, suitable for a
// metav1.Condition reason.
type Reason string

const (
	ReasonApplied          Reason = "Applied"
	ReasonAlreadyApplied   Reason = "AlreadyApplied"
	ReasonDryRun           Reason = "DryRun"
	ReasonInternalError    Reason = "InternalError"
	ReasonInvalidInput     Reason = "InvalidInput"
	ReasonGroupActive      Reason = "GroupActive"
	ReasonKafkaError       Reason = "KafkaError"
	ReasonPartiallyApplied Reason = "PartiallyApplied"
	// ReasonOutcomeUnknown (exit 5): the commit may have applied, and the
	// runner cannot know: its answer was lost (a dropped connection, a
	// timeout) and a broker may still apply it after the read-back showed
	// nothing moved, or the read-back itself failed, or the runner ended
	// (killed, crashed) after its commit began and before it read the
	// outcome back: the result it writes before it commits says so. Never
	// "nothing changed": a retry with the same run ID settles it.
	ReasonOutcomeUnknown Reason = "OutcomeUnknown"
	ReasonInterrupted    Reason = "Interrupted"
	// ReasonCredentialsNotBound is an invalid input (exit 2) of its own
	// kind: the run would have presented a Secret's credentials to servers
	// the Secret does not name, or let the config directory change how they
	// are presented. Nothing was contacted. It is a reason of its own so
	// that an operator can alert on it: it is what an attempt to take a
	// credential looks like.
	ReasonCredentialsNotBound Reason = "CredentialsNotBound"
	// ReasonUnsupportedGroupKind is an invalid input (exit 2) of its own
	// kind: the group is not of the kind --group-type (spec.groupType)
	// states, so it is not reset through that kind's API. The error names
	// the setting, the kind stated and the kind found. Nothing changed.
	ReasonUnsupportedGroupKind Reason = "UnsupportedGroupKind"
	// ReasonPlanStale (exit 7): a plan: target's plan no longer holds. A
	// partition of a relative plan (shift:, undo:) has another committed
	// offset than the plan started from, a planned offset is no longer
	// inside its partition's log, or a planned partition is gone. The
	// partitions that differ carry an error saying how.
	ReasonPlanStale Reason = "PlanStale"
	// ReasonLimitExceeded (exit 7): the plan would re-consume more messages
	// than --max-messages-to-reconsume allows; the error gives both figures.
	ReasonLimitExceeded Reason = "LimitExceeded"
	// ReasonWouldSkipMessages (exit 7): the plan moves some partition
	// ahead of its committed offset, past messages the consumers never
	// handled, and --allow-skip is not set. The error names the partitions
	// and the count.
	ReasonWouldSkipMessages Reason = "WouldSkipMessages"
	// ReasonRefused (exit 7) is what a reader says that has only the exit
	// code 7 and lost the result that named the guard. The runner itself
	// always writes one of the three guard reasons.
	ReasonRefused Reason = "Refused"
	// ReasonSuperseded (exit 8): another replay of the group fenced this
	// Atomic run; nothing was committed.
	ReasonSuperseded Reason = "Superseded"
)

// reasonExitCodes is every reason the runner writes, with the exit code it
// goes with. Readers that need a fixed set of reasons (a metric's label)
// take it from here.
var reasonExitCodes = map[Reason]ExitCode{
	ReasonApplied:              ExitOK,
	ReasonAlreadyApplied:       ExitOK,
	ReasonDryRun:               ExitOK,
	ReasonInternalError:        ExitInternal,
	ReasonInvalidInput:         ExitInvalidInput,
	ReasonCredentialsNotBound:  ExitInvalidInput,
	ReasonUnsupportedGroupKind: ExitInvalidInput,
	ReasonGroupActive:          ExitGroupActive,
	ReasonKafkaError:           ExitKafkaError,
	ReasonPartiallyApplied:     ExitPartiallyApplied,
	ReasonOutcomeUnknown:       ExitPartiallyApplied,
	ReasonInterrupted:          ExitInterrupted,
	ReasonPlanStale:            ExitRefused,
	ReasonLimitExceeded:        ExitRefused,
	ReasonWouldSkipMessages:    ExitRefused,
	ReasonRefused:              ExitRefused,
	ReasonSuperseded:           ExitSuperseded,
}

// Reasons lists every reason the runner writes, sorted.
func Reasons() []Reason {
	out := make([]Reason, 0, len(reasonExitCodes))
	for r := range reasonExitCodes {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// ExitCode is the exit code a reason goes with; ok is false for a reason
// the runner does not write.
func (r Reason) ExitCode() (code ExitCode, ok bool) {
	code, ok = reasonExitCodes[r]
	return code, ok
}

var failureReasons = map[ExitCode]Reason{
	ExitInternal:         ReasonInternalError,
	ExitInvalidInput:     ReasonInvalidInput,
	ExitGroupActive:      ReasonGroupActive,
	ExitKafkaError:       ReasonKafkaError,
	ExitPartiallyApplied: ReasonPartiallyApplied,
	ExitInterrupted:      ReasonInterrupted,
	ExitRefused:          ReasonRefused,
	ExitSuperseded:       ReasonSuperseded,
}

// ReasonForExitCode maps a failed runner's exit code to its reason. It is how a
// reader that only has the container's exit code (the result was lost, say)
// still explains the failure. Unknown codes map to InternalError.
func ReasonForExitCode(code ExitCode) Reason {
	if r, ok := failureReasons[code]; ok {
		return r
	}
	return ReasonInternalError
}

// Retryable reports whether running the same input again could succeed.
// Invalid input and an active group fail fast; everything else may be retried
// (a retry is safe: the run ID makes it idempotent).
func (c ExitCode) Retryable() bool {
	return c != ExitOK && c != ExitInvalidInput && c != ExitGroupActive && c != ExitRefused && c != ExitSuperseded
}

// Result is everything a run decided and did.
type Result struct {
	// Schema is always [Schema].
	Schema string `json:"schema"`
	// Group is the consumer group that was repositioned.
	Group string `json:"group"`
	// RunID is the idempotency key recorded in every committed offset's metadata.
	RunID string `json:"runId"`
	// ClusterID is the ID of the Kafka cluster the run read (from
	// Metadata); absent when it never got that far, or the brokers gave
	// none. A plan: or undo: of this result is refused on another cluster.
	ClusterID string `json:"clusterId,omitempty"`
	// Target is the target as given and as resolved.
	Target Target `json:"target"`
	// DryRun is true when the plan was only printed.
	DryRun bool `json:"dryRun"`
	// Plan is the plan's digest ([PlanDigest] of Group and Partitions): in
	// a dry run, of the plan it printed, which a plan: target applies and
	// an approval names; in a run of a plan: target, of the plan it
	// applied. Empty otherwise.
	Plan string `json:"plan,omitempty"`
	// GroupType is the kind of group the run found: Classic, Consumer,
	// Share or Streams (runner/config's GroupType* names). Empty when the
	// group does not exist (a commit makes it a Classic group), and when
	// the run ended before it knew.
	GroupType string `json:"groupType,omitempty"`
	// InternalTopics are, with --delete-all-internal-topics, the streams
	// group's internal topics the run deletes once the offsets are moved:
	// in a dry run, those it would delete.
	InternalTopics *InternalTopics `json:"internalTopics,omitempty"`
	// CommitMode is how the run committed, or would have: Atomic (a Kafka
	// transaction) or Plain; with --commit-mode Auto, the one it chose.
	// Empty when the run ended before it chose, and in a dry run.
	CommitMode string `json:"commitMode,omitempty"`
	// AlreadyApplied is true when every partition in scope already carried
	// this run ID's commit, so nothing was committed again. Its partitions
	// report the offsets and deltas of that earlier commit.
	AlreadyApplied bool `json:"alreadyApplied"`
	// ExitCode is the process exit status that goes with this result.
	ExitCode ExitCode `json:"exitCode"`
	// Reason summarises the outcome in one word.
	Reason Reason `json:"reason"`
	// Partitions is the per-partition plan and outcome, sorted by topic and
	// partition. A truncated result may omit some or all of them.
	Partitions []Partition `json:"partitions"`
	// Totals summarise Partitions and are never truncated.
	Totals Totals `json:"totals"`
	// Warnings are things an operator should read, such as clamped targets.
	Warnings []string `json:"warnings,omitempty"`
	// StartedAt is when the run began; relative targets are resolved against it.
	StartedAt time.Time `json:"startedAt"`
	// FinishedAt is when the result was written.
	FinishedAt time.Time `json:"finishedAt"`
	// Error explains a failure. Empty on success.
	Error string `json:"error,omitempty"`
	// Truncated is true when partitions were left out to fit a size limit.
	Truncated bool `json:"truncated,omitempty"`
}

// InternalTopics are a streams group's internal topics, planned and
// deleted (kafka-streams-groups.sh --delete-all-internal-topics).
type InternalTopics struct {
	// Planned are the topics the run deletes after a successful commit.
	Planned []string `json:"planned"`
	// Deleted are those Kafka deleted, or found already gone. A planned
	// topic not in it was not deleted: the result's error says why.
	Deleted []string `json:"deleted,omitempty"`
}

// Target is the requested position, as given and as resolved.
type Target struct {
	// Given is the target exactly as configured, for example "ago:2h".
	Given string `json:"given"`
	// Resolved is the canonical form actually used: relative times become an
	// absolute "time:<RFC3339 UTC>", everything else is normalised.
	Resolved string `json:"resolved,omitempty"`
	// Time is the absolute instant for time and ago targets.
	Time *time.Time `json:"time,omitempty"`
}

// Partition is one partition's plan and, after a commit, its outcome.
type Partition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// PreviousOffset is the committed offset before the run; null when the
	// group had never committed this partition.
	PreviousOffset *int64 `json:"previousOffset"`
	// NewOffset is the offset the group is (or, in a dry run, would be) at.
	NewOffset int64 `json:"newOffset"`
	// Delta is PreviousOffset minus NewOffset, the move in offsets:
	// positive moves back (re-consumes), negative moves ahead (skips).
	// Null when there was no previous offset. The messages a move
	// re-consumes or skips are those of the log between the two offsets
	// (see [Partition.Messages]), which the totals and the guards count:
	// fewer, where the previous offset lay outside the log.
	Delta *int64 `json:"delta"`
	// LogStartOffset and LogEndOffset bound the partition at planning time.
	LogStartOffset int64 `json:"logStartOffset"`
	LogEndOffset   int64 `json:"logEndOffset"`
	// Clamped is true when the target fell outside [log start, log end].
	Clamped bool `json:"clamped,omitempty"`
	// Note explains anything unusual about this partition in a few words.
	Note string `json:"note,omitempty"`
	// Applied is true when the group's committed offset for this partition is
	// this run ID's commit: read back after this attempt's commit, or found
	// already in place by a retry. False in a dry run and wherever Error is set.
	Applied bool `json:"applied"`
	// Error is set when committing this partition failed, could not be
	// verified, or was overwritten by another client before the read-back.
	// With exit 7 it says why a guard refused this partition.
	Error string `json:"error,omitempty"`
	// LeftAlone is set when an undo: target's rules leave this partition
	// where it is (and --force was not given), and says why in a sentence.
	// Such a partition is not committed: NewOffset is its committed offset,
	// Delta 0, Applied false, and it does not make the run fail.
	LeftAlone string `json:"leftAlone,omitempty"`
}

// Messages counts the messages that p's move re-consumes and skips: the
// offsets of the log [LogStartOffset, LogEndOffset) between PreviousOffset
// and NewOffset. An offset outside the log is no message: a committed
// offset below the log start (records deleted since) or past the log end
// (a topic recreated, a forged commit) moves over nothing there. Both are 0
// without a previous offset. They cannot overflow: each is at most the
// log's length.
//
// An undo's forward move back to where the consumers were before the
// undone run (its note starts with NoteRestores) skips nothing: the
// consumers handled those messages before the replay handed them back.
// Such a move counts as neither, so that the undo of a 100-message rewind
// does not report 100 skipped.
func (p Partition) Messages() (reconsume, skip int64) {
	if p.PreviousOffset == nil {
		return 0, 0
	}
	start, end := max(p.LogStartOffset, 0), max(p.LogEndOffset, 0)
	in := func(o int64) int64 { return max(min(o, end), start, 0) }
	prev, next := in(*p.PreviousOffset), in(p.NewOffset)
	if prev >= next {
		return prev - next, 0
	}
	if strings.HasPrefix(p.Note, NoteRestores+" ") {
		return 0, 0
	}
	return 0, next - prev
}

// Moves reports whether p's committed offset is (or, planned, would be)
// another one than before: a partition without a committed offset gets
// one; one already at its target, or left alone by an undo, does not move.
func (p Partition) Moves() bool {
	if p.LeftAlone != "" {
		return false
	}
	return p.PreviousOffset == nil || *p.PreviousOffset != p.NewOffset
}

// AddCounts is a + b for message counts (not negative), saturating at the
// largest int64 instead of wrapping around to a negative count, which a
// limit would let through.
func AddCounts(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Totals summarise a result's partitions.
//
// The message counts are of what actually moved: the deltas of the applied
// partitions only. A failed, refused or overwritten partition counts in
// Failed, never in the messages. A dry run moves nothing, so its counts are
// the plan's instead, and Planned says so.
type Totals struct {
	// Partitions is the number of partitions in scope, applied or not.
	Partitions int `json:"partitions"`
	// Applied counts the partitions whose committed offset is this run ID's
	// (see [Partition.Applied]).
	Applied int `json:"applied"`
	// Moved counts the partitions whose committed offset the run changed
	// ([Partition.Moves]; in a dry run, would change): a partition
	// committed at the offset it already had is applied, not moved.
	Moved int `json:"moved"`
	// Planned is true when the message counts are a dry run's plan rather
	// than what moved.
	Planned bool `json:"planned,omitempty"`
	// MessagesToReconsume is the messages the partitions' moves re-consume
	// ([Partition.Messages]), summed without overflowing ([AddCounts]).
	MessagesToReconsume int64 `json:"messagesToReconsume"`
	// MessagesSkipped is the messages the partitions' moves skip, likewise.
	MessagesSkipped int64 `json:"messagesSkipped"`
	// Clamped counts partitions whose target was clamped to the log bounds.
	Clamped int `json:"clamped,omitempty"`
	// NoPreviousOffset counts partitions the group had never committed.
	NoPreviousOffset int `json:"noPreviousOffset,omitempty"`
	// Failed counts partitions whose commit failed or could not be verified.
	Failed int `json:"failed,omitempty"`
	// LeftAlone counts partitions an undo left where they were (see
	// [Partition.LeftAlone]).
	LeftAlone int `json:"leftAlone,omitempty"`
}

// Summarize recomputes Totals from Partitions. Call it whenever partitions
// change so the two can never disagree.
func (r *Result) Summarize() {
	t := Totals{Partitions: len(r.Partitions), Planned: r.DryRun}
	for _, p := range r.Partitions {
		if p.Applied {
			t.Applied++
		}
		if p.Applied || r.DryRun {
			if p.Moves() {
				t.Moved++
			}
			again, skip := p.Messages()
			t.MessagesToReconsume = AddCounts(t.MessagesToReconsume, again)
			t.MessagesSkipped = AddCounts(t.MessagesSkipped, skip)
		}
		if p.Clamped {
			t.Clamped++
		}
		if p.PreviousOffset == nil {
			t.NoPreviousOffset++
		}
		if p.Error != "" {
			t.Failed++
		}
		if p.LeftAlone != "" {
			t.LeftAlone++
		}
	}
	r.Totals = t
}

// Summary says in a sentence what a successful run did, from its totals
// (never truncated): how many partitions moved, out of how many, and the
// messages that will be consumed again or were skipped. It is the one
// wording of these counts; the launcher puts it in a request's status.
func (r *Result) Summary() string {
	t := r.Totals
	if r.AlreadyApplied {
		return fmt.Sprintf("already applied by this run: %d partitions", t.Partitions)
	}
	var s string
	switch {
	case r.DryRun && t.Moved == 0:
		s = fmt.Sprintf("dry run: %d partitions planned, none would move (each is at its target already): no message would be consumed again or skipped", t.Partitions)
	case r.DryRun:
		s = fmt.Sprintf("dry run: %d partitions planned, %s, %d messages would be consumed again, %d skipped",
			t.Partitions, ofTotal(t.Moved, t.Partitions, "would move"), t.MessagesToReconsume, t.MessagesSkipped)
	case t.Moved == 0:
		s = fmt.Sprintf("nothing moved: %d partitions were at the target already (committed again, with this run's mark), no message will be consumed again or skipped", t.Applied)
	default:
		s = fmt.Sprintf("%s, %d messages will be consumed again, %d skipped", ofTotal(t.Moved, t.Partitions, "moved"), t.MessagesToReconsume, t.MessagesSkipped)
	}
	if t.LeftAlone > 0 {
		s += fmt.Sprintf("; %d left alone by the undo rules (each partition's leftAlone says why)", t.LeftAlone)
	}
	return s
}

// ofTotal is "3 partitions moved", or "2 of 3 partitions moved".
func ofTotal(n, of int, verb string) string {
	if n == of {
		return fmt.Sprintf("%d partitions %s", n, verb)
	}
	return fmt.Sprintf("%d of %d partitions %s", n, of, verb)
}

// Succeeded reports whether the run ended well (applied, already applied or a
// dry run).
func (r *Result) Succeeded() bool { return r.ExitCode == ExitOK }

// withList makes sure partitions encode as a list: a result with none says
// "partitions": [], never null, so readers need not tell the two apart.
func withList(r *Result) *Result {
	if r.Partitions != nil {
		return r
	}
	c := *r
	c.Partitions = []Partition{}
	return &c
}

// Marshal encodes the full result as indented JSON, for files and stdout.
func Marshal(r *Result) ([]byte, error) {
	b, err := json.MarshalIndent(withList(r), "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Compact encodes the result in at most limit bytes, for a container's
// termination message. When the whole result does not fit, it keeps the
// partitions that failed first, then as many others as fit, and sets
// Truncated; totals always survive. limit must leave room for the totals
// (a few hundred bytes); the error message is shortened if it alone is too long.
//
// It never encodes more partitions than fit: the length of a result's
// compact JSON is that of the result without partitions plus each
// partition's own encoding and a comma between two, so it adds those up and
// stops past limit (a few dozen partitions). Encoding the whole result
// first, then a binary search of prefixes, was about two encodings of all
// of a 10,000-partition result for a 4 KiB message.
func Compact(r *Result, limit int) ([]byte, error) {
	r = withList(r)
	if n, err := fitting(r, slices.Values(r.Partitions), limit); err != nil {
		return nil, err
	} else if n == len(r.Partitions) {
		return json.Marshal(r)
	}
	c := *r
	c.Truncated = true
	// Failed partitions matter most to whoever reads a truncated result.
	failedFirst := func(yield func(Partition) bool) {
		for _, failed := range []bool{true, false} {
			for _, p := range r.Partitions {
				if (p.Error != "") == failed && !yield(p) {
					return
				}
			}
		}
	}
	n, err := fitting(&c, failedFirst, limit)
	if err != nil {
		return nil, err
	}
	if n >= 0 {
		c.Partitions = make([]Partition, 0, n)
		for p := range failedFirst {
			if len(c.Partitions) == n {
				break
			}
			c.Partitions = append(c.Partitions, p)
		}
		return json.Marshal(&c)
	}
	// Even the totals alone do not fit: the strings must be too long.
	c.Partitions = []Partition{}
	c.Warnings = nil
	for n := 1024; n >= 0; n /= 2 {
		// Every free-form string may be long: on invalid input the group and
		// target are whatever the user gave.
		c.Error = shorten(r.Error, n)
		c.Target.Given = shorten(r.Target.Given, n)
		c.Target.Resolved = shorten(r.Target.Resolved, n)
		c.Group = shorten(r.Group, n)
		c.RunID = shorten(r.RunID, n)
		if b, err := json.Marshal(&c); err == nil && len(b) <= limit {
			return b, nil
		}
		if n == 0 {
			break
		}
	}
	return nil, fmt.Errorf("result does not fit in %d bytes", limit)
}

// fitting is how many of ps, from the first, r can hold within limit bytes
// of compact JSON (r's own partitions are ignored), or -1 when not even none
// fit. It encodes r once without partitions and each partition it counts.
func fitting(r *Result, ps iter.Seq[Partition], limit int) (int, error) {
	c := *r
	c.Partitions = []Partition{}
	b, err := json.Marshal(&c)
	if err != nil {
		return 0, err
	}
	size := len(b)
	if size > limit {
		return -1, nil
	}
	n := 0
	for p := range ps {
		pb, err := json.Marshal(&p)
		if err != nil {
			return 0, err
		}
		size += len(pb)
		if n > 0 {
			size++ // the comma
		}
		if size > limit {
			return n, nil
		}
		n++
	}
	return n, nil
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary so the JSON stays valid UTF-8.
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// ErrUnknownSchema is returned by Decode for results of another schema.
var ErrUnknownSchema = errors.New("unknown result schema")

// Decode parses a full or compact result and checks its schema.
func Decode(b []byte) (*Result, error) {
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode result: %w", err)
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("%w %q (want %q)", ErrUnknownSchema, r.Schema, Schema)
	}
	return &r, nil
}
