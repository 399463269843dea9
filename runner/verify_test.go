package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-replay/kafka-replay/runner/report"
)

func TestVerifyCommit(t *testing.T) {
	id := runIdent{RunID: "r", Plan: "aaaaaaaaaaaaaaaa"}
	ours := commitMark{Version: metadataVersion, RunID: "r", Plan: id.Plan, At: time.Now()}.String()
	p0, p1 := TP{Topic: "o", Partition: 0}, TP{Topic: "o", Partition: 1}
	timedOut := kafka.NewError(kafka.ErrRequestTimedOut, "Broker: Request timed out", false)
	unknownMember := kafka.NewError(kafka.ErrUnknownMemberID, "Broker: Unknown member", false)
	denied := kafka.NewError(kafka.ErrGroupAuthorizationFailed, "Broker: Group authorization failed", false)
	// Both partitions were at 80 and are planned to 10.
	applied := map[TP]Committed{p0: {Offset: 10, Metadata: ours}, p1: {Offset: 10, Metadata: ours}}
	unchanged := map[TP]Committed{p0: {Offset: 80, Metadata: "consumer"}, p1: {Offset: 80, Metadata: "consumer"}}
	cases := []struct {
		name       string
		ans        commitAnswer
		after      map[TP]Committed
		readErr    error
		earlier    bool // a third partition carries an earlier attempt's commit
		code       report.ExitCode
		reason     report.Reason // when not the one the exit code goes with
		applied    []bool
		msg        string // in the result's error, or its warnings on success
		partErrors []string
	}{
		{name: "acknowledged and read back", after: applied, applied: []bool{true, true}},
		// Issue 8 item 1: the first attempt took, the retry was refused.
		{name: "refused retry of an applied commit", ans: commitAnswer{Failed: map[TP]error{p0: unknownMember, p1: unknownMember}}, after: applied,
			applied: []bool{true, true}, msg: "but the read-back shows that it took"},
		{name: "timed out and not applied", ans: commitAnswer{Err: timedOut}, after: unchanged,
			code: report.ExitKafkaError, applied: []bool{false, false}, msg: "nothing changed", partErrors: []string{"not committed: Broker: Request timed out"}},
		{name: "refused because the group became active", ans: commitAnswer{Failed: map[TP]error{p0: unknownMember, p1: unknownMember}}, after: unchanged,
			code: report.ExitGroupActive, applied: []bool{false, false}, msg: "became active"},
		{name: "refused, not authorized", ans: commitAnswer{Failed: map[TP]error{p0: denied, p1: denied}}, after: unchanged,
			code: report.ExitKafkaError, applied: []bool{false, false}, msg: "authorization"},
		// Acknowledged, yet the read-back shows nothing: it took and was
		// undone, or the read-back is not of it. Never "nothing changed".
		{name: "acknowledged but nothing moved", after: unchanged, code: report.ExitPartiallyApplied, reason: report.ReasonOutcomeUnknown, applied: []bool{false, false}, msg: "acknowledged"},
		// Issue 25 class 4: the answer was lost, and a broker may apply the
		// commit after the read-back.
		{name: "unanswered and nothing moved yet", ans: commitAnswer{Err: timedOut, Unanswered: true}, after: unchanged,
			code: report.ExitPartiallyApplied, reason: report.ReasonOutcomeUnknown, applied: []bool{false, false}, msg: "may have applied"},
		{name: "refused after an unanswered attempt", ans: commitAnswer{Failed: map[TP]error{p0: denied, p1: denied}, Unanswered: true}, after: unchanged,
			code: report.ExitPartiallyApplied, reason: report.ReasonOutcomeUnknown, applied: []bool{false, false}, msg: "retry with the same run ID"},
		{name: "unanswered, one partition took", ans: commitAnswer{Err: timedOut, Unanswered: true}, after: map[TP]Committed{p0: applied[p0], p1: unchanged[p1]},
			code: report.ExitPartiallyApplied, applied: []bool{true, false}, msg: "1 of 2"},
		{name: "one partition took", ans: commitAnswer{Failed: map[TP]error{p1: denied}}, after: map[TP]Committed{p0: applied[p0], p1: unchanged[p1]},
			code: report.ExitPartiallyApplied, applied: []bool{true, false}, msg: "1 of 2", partErrors: []string{"", "not committed"}},
		// Issue 8 item 2: another client committed before the read-back.
		{name: "overwritten by a second writer", after: map[TP]Committed{p0: applied[p0], p1: {Offset: 95, Metadata: "other-tool"}},
			code: report.ExitPartiallyApplied, applied: []bool{true, false}, msg: "o/1", partErrors: []string{"", `committed, then overwritten by another client: the read-back shows offset 95 (metadata "other-tool")`}},
		{name: "overwritten everywhere is not nothing changed", ans: commitAnswer{Err: timedOut}, after: map[TP]Committed{p0: {Offset: 95}, p1: {Offset: 95}},
			code: report.ExitPartiallyApplied, applied: []bool{false, false}, partErrors: []string{"another client moved it", "another client moved it"}},
		{name: "read-back failed", ans: commitAnswer{Err: timedOut}, readErr: timedOut,
			code: report.ExitPartiallyApplied, reason: report.ReasonOutcomeUnknown, applied: []bool{false, false}, msg: "could not be read back", partErrors: []string{"could not be read back"}},
		{name: "read-back failed after an earlier attempt moved another partition", ans: commitAnswer{Err: timedOut}, readErr: timedOut, earlier: true,
			code: report.ExitPartiallyApplied, applied: []bool{false, false}, msg: "could not be verified"},
		{name: "unchanged, but an earlier attempt moved another partition", ans: commitAnswer{Err: denied}, after: unchanged, earlier: true,
			code: report.ExitPartiallyApplied, applied: []bool{false, false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parts := []report.Partition{
				{Topic: "o", Partition: 0, PreviousOffset: ptr(int64(80)), NewOffset: 10},
				{Topic: "o", Partition: 1, PreviousOffset: ptr(int64(80)), NewOffset: 10},
			}
			commit := []bool{true, true}
			if tc.earlier {
				parts = append(parts, report.Partition{Topic: "o", Partition: 2, NewOffset: 10, Applied: true})
				commit = append(commit, false)
			}
			v := verifyCommit(parts, commit, id, tc.ans, tc.after, tc.readErr)
			if v.Code != tc.code {
				t.Errorf("exit %d, want %d (%s)", v.Code, tc.code, v.Error)
			}
			reason := tc.reason
			if reason == "" {
				reason = report.ReasonForExitCode(tc.code)
				if tc.code == report.ExitOK {
					reason = report.ReasonApplied
				}
			}
			if v.Reason != reason {
				t.Errorf("reason %s, want %s", v.Reason, reason)
			}
			if c, _ := v.Reason.ExitCode(); c != v.Code {
				t.Errorf("reason %s goes with exit %d, not %d", v.Reason, c, v.Code)
			}
			if text := v.Error + strings.Join(v.Warnings, " "); !strings.Contains(text, tc.msg) {
				t.Errorf("error %q, warnings %q: want %q", v.Error, v.Warnings, tc.msg)
			}
			if tc.code == report.ExitOK && v.Error != "" {
				t.Errorf("success with an error: %q", v.Error)
			}
			for i, want := range tc.applied {
				if parts[i].Applied != want {
					t.Errorf("o/%d applied %v, want %v", i, parts[i].Applied, want)
				}
				if parts[i].Applied == (parts[i].Error != "") {
					t.Errorf("o/%d: applied %v with error %q", i, parts[i].Applied, parts[i].Error)
				}
			}
			for i, want := range tc.partErrors {
				if !strings.Contains(parts[i].Error, want) || (want == "" && parts[i].Error != "") {
					t.Errorf("o/%d error %q, want %q", i, parts[i].Error, want)
				}
			}
		})
	}
}

func TestVerifyCommitKeepsErrorsApart(t *testing.T) {
	// isGroupActiveErr must see through the wrapping retry adds.
	err := errors.Join(errors.New("commit offsets"), kafka.NewError(kafka.ErrUnknownMemberID, "Broker: Unknown member", false))
	if !isGroupActiveErr(err) {
		t.Error("a wrapped UNKNOWN_MEMBER_ID is not recognised as the group becoming active")
	}
}

// TestMayHaveApplied: only a broker's answer that proves the commit was
// refused before anything was written lets a read-back that shows nothing
// moved mean that nothing changed.
func TestMayHaveApplied(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{kafka.NewError(kafka.ErrTransport, "Connection reset", false), true},
		{kafka.NewError(kafka.ErrTimedOut, "Local: Timed out", false), true},
		{kafka.NewError(kafka.ErrAllBrokersDown, "", false), true},
		{kafka.NewError(kafka.ErrRequestTimedOut, "", false), true},
		{kafka.NewError(kafka.ErrCoordinatorNotAvailable, "", false), true},
		{kafka.NewError(kafka.ErrNotCoordinator, "", false), true},
		{kafka.NewError(kafka.ErrUnknown, "", false), true},
		{context.DeadlineExceeded, true},
		{errors.New("something else"), true},
		{kafka.NewError(kafka.ErrInvalidArg, "", false), false},
		{kafka.NewError(kafka.ErrGroupAuthorizationFailed, "", false), false},
		{kafka.NewError(kafka.ErrOffsetMetadataTooLarge, "", false), false},
		{kafka.NewError(kafka.ErrCoordinatorLoadInProgress, "", false), false},
		{fmt.Errorf("commit offsets: %w", kafka.NewError(kafka.ErrUnknownMemberID, "", false)), false},
		{kafka.NewError(kafka.ErrRebalanceInProgress, "", false), false},
	} {
		if got := mayHaveApplied(tc.err); got != tc.want {
			t.Errorf("mayHaveApplied(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
