package report

import (
	"fmt"
	"strings"
	"testing"
)

func groupResult(group string, code ExitCode, reason Reason, applied bool) Result {
	r := Result{Schema: Schema, Group: group, ExitCode: code, Reason: reason, Partitions: []Partition{{Topic: "t", Partition: 0, NewOffset: 1, Applied: applied}}}
	if code != ExitOK {
		r.Error = "it " + string(reason)
	}
	r.Summarize()
	return r
}

// TestOutcome: the run's exit code says what changed across the groups.
func TestOutcome(t *testing.T) {
	ok := groupResult("a", ExitOK, ReasonApplied, true)
	already := groupResult("a", ExitOK, ReasonAlreadyApplied, true)
	already.AlreadyApplied = true
	active := groupResult("b", ExitGroupActive, ReasonGroupActive, false)
	refused := groupResult("c", ExitRefused, ReasonLimitExceeded, false)
	partial := groupResult("d", ExitPartiallyApplied, ReasonOutcomeUnknown, false)
	crashedBefore := Result{Group: "e", ExitCode: ExitInternal, Reason: ReasonInternalError, Error: "panic"}
	nothingToDo := groupResult("f", ExitOK, ReasonApplied, false)
	nothingToDo.Partitions[0].LeftAlone = "moved since"
	tests := []struct {
		name         string
		groups       []Result
		notAttempted []string
		dryRun       bool
		code         ExitCode
		reason       Reason
		says         []string
	}{
		{"all applied", []Result{ok, ok}, nil, false, ExitOK, ReasonApplied, nil},
		{"all already applied", []Result{already, already}, nil, false, ExitOK, ReasonAlreadyApplied, nil},
		{"some already applied", []Result{already, ok}, nil, false, ExitOK, ReasonApplied, nil},
		{"dry run", []Result{groupResult("a", ExitOK, ReasonDryRun, false)}, nil, true, ExitOK, ReasonDryRun, nil},
		{"first busy, rest not attempted", []Result{active}, []string{"x"}, false, ExitGroupActive, ReasonGroupActive, []string{"no group changed", "b (GroupActive: it GroupActive)", "not attempted, nothing of theirs read or changed: x"}},
		{"two failures, nothing changed: the first's", []Result{refused, active}, nil, false, ExitRefused, ReasonLimitExceeded, []string{"no group changed"}},
		{"applied then busy", []Result{ok, active}, []string{"x"}, false, ExitPartiallyApplied, ReasonPartiallyApplied, []string{"1 of 3 groups changed or may have", "at this run's commit: a", "failed: b"}},
		{"nothing to do counts as unchanged", []Result{nothingToDo, active}, nil, false, ExitGroupActive, ReasonGroupActive, nil},
		{"unknown outcome", []Result{partial, refused}, nil, false, ExitPartiallyApplied, ReasonPartiallyApplied, []string{"may have changed (read their offsets; a retry with the same run ID settles them): d"}},
		{"internal error wins", []Result{ok, crashedBefore}, nil, false, ExitInternal, ReasonInternalError, []string{"at this run's commit: a", "e (InternalError: panic)"}},
		{"interrupted between groups", []Result{}, []string{"a", "b"}, false, ExitInterrupted, ReasonInterrupted, []string{"not attempted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, reason, msg := Outcome(tt.groups, tt.notAttempted, tt.dryRun)
			if code != tt.code || reason != tt.reason {
				t.Fatalf("Outcome = %d %s (%s), want %d %s", code, reason, msg, tt.code, tt.reason)
			}
			if (code == ExitOK) != (msg == "") {
				t.Errorf("error %q with exit %d", msg, code)
			}
			if got, ok := reason.ExitCode(); ok && got != code {
				t.Errorf("reason %s means exit %d, not %d", reason, got, code)
			}
			for _, s := range tt.says {
				if !strings.Contains(msg, s) {
					t.Errorf("error %q does not say %q", msg, s)
				}
			}
		})
	}
}

// TestCompactMultiFits: 2,000 groups' outcomes do not fit a termination
// message; the compact form fits, decodes, keeps the run's outcome and as
// many groups as fit, and says it is truncated. A few groups keep every
// outcome.
func TestCompactMultiFits(t *testing.T) {
	for _, n := range []int{3, 200, 2000} {
		r := &MultiResult{Schema: MultiSchema, RunID: "ns/name/abc", Target: Target{Given: "earliest"}}
		for i := range n {
			g := fmt.Sprintf("team-orders-consumer-%04d", i)
			r.Selected = append(r.Selected, g)
			gr := groupResult(g, ExitOK, ReasonApplied, true)
			for p := range 50 {
				gr.Partitions = append(gr.Partitions, Partition{Topic: "orders", Partition: int32(p), NewOffset: 10, Applied: true})
			}
			gr.Summarize()
			r.Groups = append(r.Groups, gr)
		}
		r.Groups[n-1] = groupResult(r.Selected[n-1], ExitGroupActive, ReasonGroupActive, false)
		r.Groups[n-1].Error = strings.Repeat("x", 5000)
		r.Decide()
		b, err := CompactMulti(r, MaxTerminationMessageBytes)
		if err != nil {
			t.Fatalf("%d groups: %v", n, err)
		}
		if len(b) > MaxTerminationMessageBytes {
			t.Fatalf("%d groups: %d bytes", n, len(b))
		}
		got, err := DecodeMulti(b)
		if err != nil {
			t.Fatalf("%d groups: %v", n, err)
		}
		if got.ExitCode != ExitPartiallyApplied || !got.Truncated || len(got.Groups) == 0 {
			t.Fatalf("%d groups: exit %d truncated %v groups %d", n, got.ExitCode, got.Truncated, len(got.Groups))
		}
		if n == 3 && (len(got.Groups) != 3 || len(got.Selected) != 3) {
			t.Errorf("3 groups: kept %d groups, %d selected", len(got.Groups), len(got.Selected))
		}
		full, err := MarshalMulti(r)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d groups × 50 partitions: full result %d bytes, compact %d bytes with %d groups", n, len(full), len(b), len(got.Groups))
	}
}

// TestDecodeMultiSchema: a one-group result is not a result over groups,
// and the other way round.
func TestDecodeMultiSchema(t *testing.T) {
	one, err := Marshal(&Result{Schema: Schema, Group: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeMulti(one); err == nil {
		t.Error("DecodeMulti took a one-group result")
	}
	many, err := MarshalMulti(&MultiResult{Schema: MultiSchema})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(many); err == nil {
		t.Error("Decode took a result over groups")
	}
	if !strings.Contains(string(many), `"groups": []`) || !strings.Contains(string(many), `"selected": []`) {
		t.Errorf("empty lists encode as null:\n%s", many)
	}
}
