package runner

import (
	"fmt"
	"strconv"

	"github.com/kafka-replay/kafka-replay/runner/report"
)

// commitAnswer is what the broker answered to the commit, which the
// verification weighs but never trusts on its own: a timed-out commit may
// have been applied, a refused retry may follow an applied first attempt,
// and an acknowledged one is only believed once read back.
type commitAnswer struct {
	// Failed holds the partitions the last attempt answered with an error.
	Failed map[TP]error
	// Err is a failure of the commit as a whole.
	Err error
	// Unanswered is set when some attempt may have been written without
	// the runner hearing so (mayHaveApplied): a broker may apply it after
	// the read-back, so a read-back that shows nothing moved proves
	// nothing.
	Unanswered bool
}

// of is the error the commit answered for one partition, if any.
func (a commitAnswer) of(tp TP) error {
	if e := a.Failed[tp]; e != nil {
		return e
	}
	return a.Err
}

// verification is the outcome of a commit, decided from the read-back.
type verification struct {
	Code     report.ExitCode
	Reason   report.Reason
	Error    string
	Warnings []string
}

// verifyCommit decides a commit's outcome from what was read back after it,
// and marks each committed partition Applied or gives it an Error. It is the
// only judge of what changed once a commit was attempted:
//
//   - applied: the read-back shows this run's commit (its metadata and the
//     planned offset), whatever the broker answered;
//   - unchanged: the read-back shows the offset the snapshot had: the commit
//     did not take;
//   - overwritten: the read-back shows some other offset or metadata.
//     Another client committed after the snapshot; whether this run's
//     commit took first does not matter, the group is not where this run put
//     it. Such a partition is not applied and is named;
//   - unverified: the read-back failed.
//
// Exit 0 needs every partition applied. Exit 3 or 4 ("nothing changed") need
// every partition unchanged, none applied by an earlier attempt either, and
// a broker's answer that proves the commit was refused: an unanswered
// attempt may still be applied after the read-back, and an acknowledged
// commit that reads back as nothing did take, then was undone. Anything
// else is exit 5, naming the partitions that are not applied: OutcomeUnknown
// where no partition is known to be applied and the runner cannot know
// what the commit did (the read-back failed, or it shows nothing moved
// while the commit may yet apply), PartiallyApplied otherwise.
func verifyCommit(parts []report.Partition, commit []bool, id runIdent, ans commitAnswer, after map[TP]Committed, readErr error) verification {
	var n, applied, unchanged, earlier int
	var answeredBadly error // an error answered for a partition that took
	for i := range parts {
		p := &parts[i]
		if !commit[i] {
			if p.Applied {
				earlier++
			}
			continue
		}
		n++
		tp := TP{Topic: p.Topic, Partition: p.Partition}
		answer := ans.of(tp)
		got, ok := after[tp]
		m, isMark := parseMark(got.Metadata)
		mine := ok && isMark && id.owns(m)
		switch {
		case readErr != nil:
			p.Error = "not verified: could not read back: " + errString(readErr)
			if answer != nil {
				p.Error = "commit failed (" + errString(answer) + ") and could not be read back: " + errString(readErr)
			}
		case mine && got.Offset == p.NewOffset:
			p.Applied = true
			applied++
			if answer != nil && answeredBadly == nil {
				answeredBadly = answer
			}
		case !mine && sameOffset(p.PreviousOffset, got, ok):
			unchanged++
			p.Error = "not committed: the read-back shows the previous offset"
			if answer != nil {
				p.Error = "not committed: " + errString(answer)
			}
		case mine:
			p.Error = fmt.Sprintf("the read-back shows offset %d with this run's metadata, not the planned %d: another attempt of this run ID committed concurrently", got.Offset, p.NewOffset)
		default:
			now := "no committed offset"
			if ok {
				now = fmt.Sprintf("offset %d (metadata %s)", got.Offset, strconv.Quote(shortText(got.Metadata, 80)))
			}
			if answer == nil {
				p.Error = "committed, then overwritten by another client: the read-back shows " + now
			} else {
				p.Error = "commit failed (" + errString(answer) + "), and another client moved it: the read-back shows " + now
			}
		}
	}
	v := verification{Reason: report.ReasonApplied}
	// The first error the commit was answered with, for the message.
	cause := ans.Err
	for i := range parts {
		if cause != nil {
			break
		}
		if commit[i] {
			cause = ans.Failed[TP{Topic: parts[i].Topic, Partition: parts[i].Partition}]
		}
	}
	switch {
	case readErr == nil && applied == n:
		if answeredBadly != nil {
			v.Warnings = append(v.Warnings, "the commit was answered with "+errString(answeredBadly)+", but the read-back shows that it took on every partition")
		}
		return v
	case readErr == nil && unchanged == n && earlier == 0 && cause != nil && !ans.Unanswered:
		// The broker refused it, and the read-back shows nothing moved:
		// the plain failure.
		v.Code, v.Error = report.ExitKafkaError, "commit: "+errString(cause)+"; the read-back shows that nothing changed"
		if isGroupActiveErr(cause) {
			v.Code, v.Error = report.ExitGroupActive, "the broker refused the commit because the group became active ("+errString(cause)+"); the read-back shows that nothing changed"
		}
		v.Reason = report.ReasonForExitCode(v.Code)
		return v
	}
	v.Code, v.Reason = report.ExitPartiallyApplied, report.ReasonPartiallyApplied
	notApplied := n - applied
	const retry = "; retry with the same run ID, which finds this run's commit or makes it"
	switch {
	case readErr != nil && applied == 0 && earlier == 0:
		v.Reason = report.ReasonOutcomeUnknown
		v.Error = fmt.Sprintf("the commit may have applied: its outcome could not be read back for %d partition(s): %s%s", notApplied, errString(readErr), retry)
	case readErr != nil:
		v.Error = fmt.Sprintf("the commit's outcome could not be verified for %d partition(s): %s", notApplied, errString(readErr))
	case unchanged == n && earlier == 0 && cause == nil:
		v.Reason = report.ReasonOutcomeUnknown
		v.Error = "the commit was acknowledged, but the read-back shows that no partition moved: it took and was undone, or the read-back is not of it" + retry
	case unchanged == n && earlier == 0:
		v.Reason = report.ReasonOutcomeUnknown
		v.Error = "the commit may have applied: an attempt went unanswered (" + errString(cause) + "), and a broker may still apply it though the read-back shows no partition moved yet" + retry
	default:
		v.Error = fmt.Sprintf("%d of %d partition(s) are not at this run's commit: %s", notApplied, n, failedList(parts))
	}
	return v
}

// sameOffset reports whether a read-back offset is the snapshot's.
func sameOffset(before *int64, got Committed, ok bool) bool {
	if before == nil {
		return !ok
	}
	return ok && got.Offset == *before
}

// shortText cuts s to at most n bytes, on a rune boundary.
func shortText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
