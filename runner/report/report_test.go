package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func ptr(v int64) *int64 { return &v }

// part builds a partition whose delta is derived the way the runner derives
// it: previous − new.
func part(topic string, p int32, prev *int64, next int64) Partition {
	pp := Partition{Topic: topic, Partition: p, PreviousOffset: prev, NewOffset: next, LogEndOffset: next + 10, Applied: true}
	if prev != nil {
		pp.Delta = ptr(*prev - next)
		pp.LogEndOffset = max(*prev, next) + 10
	}
	return pp
}

func TestSummarize(t *testing.T) {
	failed := part("orders", 4, ptr(10), 10)
	failed.Error = "NOT_COORDINATOR"
	failed.Applied = false
	// A partition that did not move: its delta is the plan's, not a count.
	notMoved := part("orders", 6, ptr(1000), 0)
	notMoved.Error, notMoved.Applied = "commit failed: NOT_COORDINATOR", false
	clamped := part("orders", 5, ptr(3), 0)
	clamped.Clamped = true
	r := &Result{Partitions: []Partition{
		part("orders", 0, ptr(100), 40), // back 60: re-consume
		part("orders", 1, ptr(50), 80),  // forward 30: skip
		part("orders", 2, nil, 7),       // never committed
		part("orders", 3, ptr(9), 9),    // unchanged
		failed,
		clamped, // back 3
		part("payments", 0, nil, 0),
		notMoved,
	}}
	r.Summarize()
	want := Totals{
		Partitions:          8,
		Applied:             6,
		Moved:               5, // not orders/3, committed where it was
		MessagesToReconsume: 60 + 3,
		MessagesSkipped:     30,
		Clamped:             1,
		NoPreviousOffset:    2,
		Failed:              2,
	}
	if r.Totals != want {
		t.Errorf("Totals = %+v, want %+v", r.Totals, want)
	}

	// A dry run moves nothing: it counts the plan, and says so.
	dry := &Result{DryRun: true, Partitions: []Partition{part("o", 0, ptr(100), 40), part("o", 1, ptr(50), 80)}}
	for i := range dry.Partitions {
		dry.Partitions[i].Applied = false
	}
	dry.Summarize()
	if want := (Totals{Partitions: 2, Moved: 2, Planned: true, MessagesToReconsume: 60, MessagesSkipped: 30}); dry.Totals != want {
		t.Errorf("dry run Totals = %+v, want %+v", dry.Totals, want)
	}
	// The same partitions, not applied and not a dry run, count nothing.
	dry.DryRun = false
	dry.Summarize()
	if want := (Totals{Partitions: 2}); dry.Totals != want {
		t.Errorf("nothing applied: Totals = %+v, want %+v", dry.Totals, want)
	}

	// Summarize replaces stale totals rather than adding to them.
	r.Partitions = r.Partitions[:2]
	r.Summarize()
	if want := (Totals{Partitions: 2, Applied: 2, Moved: 2, MessagesToReconsume: 60, MessagesSkipped: 30}); r.Totals != want {
		t.Errorf("after removing partitions Totals = %+v, want %+v", r.Totals, want)
	}

	empty := &Result{Totals: Totals{Partitions: 9, Failed: 3}}
	empty.Summarize()
	if empty.Totals != (Totals{}) {
		t.Errorf("no partitions: Totals = %+v, want zero", empty.Totals)
	}
}

// An undo's forward move back to where the consumers were skips nothing:
// they handled those messages before the replay handed them back (issue 32,
// friction 5: the undo of a rewind reported "100 skipped"). A forced or
// unverified one is weighed as a skip, and counted as one.
func TestSummarizeUndoRestoreIsNoSkip(t *testing.T) {
	restore := part("orders", 0, ptr(40), 140) // the rewind set 40; back to 140
	restore.Note = NoteRestores + " 140, its offset before the undone run"
	forced := part("orders", 1, ptr(40), 140)
	forced.Note = NoteForced + " (the undo rules would leave it alone: ...); " + NoteRestores + " 140, its offset before the undone run"
	back := part("orders", 2, ptr(140), 40) // the undo of a skip hands 100 back
	back.Note = NoteRestores + " 40, its offset before the undone run"
	left := part("orders", 3, ptr(7), 7)
	left.Applied, left.LeftAlone = false, "consumed past its previous offset"
	r := &Result{Partitions: []Partition{restore, forced, back, left}}
	r.Summarize()
	want := Totals{Partitions: 4, Applied: 3, Moved: 3, MessagesToReconsume: 100, MessagesSkipped: 100, LeftAlone: 1}
	if r.Totals != want {
		t.Errorf("Totals = %+v, want %+v (the restore skips nothing, the forced one 100)", r.Totals, want)
	}
}

// Summary says what moved, not what was in scope (issue 32, friction 5:
// "3 partitions moved" when nothing had).
func TestSummary(t *testing.T) {
	at := func(prev, next int64) Partition { return part("orders", 0, ptr(prev), next) }
	cases := []struct {
		name string
		r    Result
		want string
	}{
		{"all moved", Result{Partitions: []Partition{at(100, 40), at(100, 40)}},
			"2 partitions moved, 120 messages will be consumed again, 0 skipped"},
		{"some moved", Result{Partitions: []Partition{at(100, 40), at(100, 100)}},
			"1 of 2 partitions moved, 60 messages will be consumed again, 0 skipped"},
		{"nothing moved", Result{Partitions: []Partition{at(100, 100), at(5, 5), at(9, 9)}},
			"nothing moved: 3 partitions were at the target already (committed again, with this run's mark), no message will be consumed again or skipped"},
		{"dry run", Result{DryRun: true, Partitions: []Partition{at(100, 40), at(100, 100)}},
			"dry run: 2 partitions planned, 1 of 2 partitions would move, 60 messages would be consumed again, 0 skipped"},
		{"dry run, nothing to move", Result{DryRun: true, Partitions: []Partition{at(100, 100)}},
			"dry run: 1 partitions planned, none would move (each is at its target already): no message would be consumed again or skipped"},
		{"already applied", Result{AlreadyApplied: true, Partitions: []Partition{at(100, 40)}},
			"already applied by this run: 1 partitions"},
	}
	withLeft := Result{Partitions: []Partition{at(100, 40), at(7, 7)}}
	withLeft.Partitions[1].Applied, withLeft.Partitions[1].LeftAlone = false, "consumed past its previous offset"
	cases = append(cases, struct {
		name string
		r    Result
		want string
	}{"undo, one left alone", withLeft, "1 of 2 partitions moved, 60 messages will be consumed again, 0 skipped; 1 left alone by the undo rules (each partition's leftAlone says why)"})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			if r.DryRun {
				for i := range r.Partitions {
					r.Partitions[i].Applied = false
				}
			}
			r.Summarize()
			if got := r.Summary(); got != tc.want {
				t.Errorf("Summary() = %q\nwant        %q", got, tc.want)
			}
		})
	}
}

func TestSummarizeUsesDeltaNotOffsets(t *testing.T) {
	// A partition with a previous offset but no delta (the runner could not
	// compute one) counts in neither sum.
	r := &Result{Partitions: []Partition{{Topic: "a", PreviousOffset: ptr(5), NewOffset: 1}}}
	r.Summarize()
	if r.Totals.MessagesToReconsume != 0 || r.Totals.MessagesSkipped != 0 || r.Totals.NoPreviousOffset != 0 {
		t.Errorf("Totals = %+v", r.Totals)
	}
}

func sampleResult() *Result {
	tm := time.Date(2026, 3, 1, 7, 30, 0, 0, time.UTC)
	failed := part("orders", 1, ptr(20), 5)
	failed.Error = "REBALANCE_IN_PROGRESS"
	r := &Result{
		Schema:         Schema,
		Group:          "orders-consumer",
		RunID:          "2f0c-uid",
		Target:         Target{Given: "ago:2h", Resolved: "time:2026-03-01T07:30:00Z", Time: &tm},
		DryRun:         false,
		AlreadyApplied: true,
		ExitCode:       ExitPartiallyApplied,
		Reason:         ReasonPartiallyApplied,
		Partitions:     []Partition{part("orders", 0, ptr(10), 3), failed, part("orders", 2, nil, 0)},
		Warnings:       []string{"orders/0 clamped"},
		StartedAt:      time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC),
		FinishedAt:     time.Date(2026, 3, 1, 9, 30, 1, 500_000_000, time.UTC),
		Error:          "1 partition failed",
	}
	r.Partitions[0].Clamped = true
	r.Partitions[0].Note = "clamped from 1 to log start 3"
	r.Summarize()
	return r
}

func TestMarshalDecodeRoundTrip(t *testing.T) {
	r := sampleResult()
	b, err := Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(b, []byte("}\n")) {
		t.Errorf("Marshal output does not end with a newline: %q", b[len(b)-3:])
	}
	if !json.Valid(b) {
		t.Fatal("Marshal output is not valid JSON")
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Errorf("round trip changed the result:\n got %+v\nwant %+v", got, r)
	}
	// Compact output decodes to the same result when it fits.
	c, err := Compact(r, MaxTerminationMessageBytes)
	if err != nil {
		t.Fatal(err)
	}
	got, err = Decode(c)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Errorf("compact round trip changed the result:\n got %+v\nwant %+v", got, r)
	}
}

func TestJSONFieldNames(t *testing.T) {
	b, err := Marshal(sampleResult())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema", "group", "runId", "target", "dryRun", "alreadyApplied", "exitCode", "reason", "partitions", "totals", "warnings", "startedAt", "finishedAt", "error"} {
		if _, ok := m[k]; !ok {
			t.Errorf("result JSON has no %q: %s", k, b)
		}
	}
	if _, ok := m["truncated"]; ok {
		t.Error("an untruncated result carries \"truncated\"")
	}
	target := m["target"].(map[string]any)
	for _, k := range []string{"given", "resolved", "time"} {
		if _, ok := target[k]; !ok {
			t.Errorf("target has no %q", k)
		}
	}
	parts := m["partitions"].([]any)
	never := parts[2].(map[string]any)
	for _, k := range []string{"previousOffset", "delta"} {
		v, ok := never[k]
		if !ok || v != nil {
			t.Errorf("a never-committed partition must carry %q: null, got %v (present %v)", k, v, ok)
		}
	}
	totals := m["totals"].(map[string]any)
	for _, k := range []string{"partitions", "messagesToReconsume", "messagesSkipped"} {
		if _, ok := totals[k]; !ok {
			t.Errorf("totals have no %q", k)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, tc := range []struct {
		in      string
		unknown bool
	}{
		{`{"schema":"kafkareplay.dev/result/v2","group":"g"}`, true},
		{`{"group":"g"}`, true},
		{`{"schema":"","group":"g"}`, true},
		{`not json`, false},
		{`{"schema":"` + Schema + `","partitions":"nope"}`, false},
		{``, false},
	} {
		r, err := Decode([]byte(tc.in))
		if err == nil {
			t.Errorf("Decode(%q) = %+v, want an error", tc.in, r)
			continue
		}
		if errors.Is(err, ErrUnknownSchema) != tc.unknown {
			t.Errorf("Decode(%q): errors.Is(ErrUnknownSchema) = %v, want %v (%v)", tc.in, !tc.unknown, tc.unknown, err)
		}
		if r != nil {
			t.Errorf("Decode(%q) returned a result with an error", tc.in)
		}
	}
	if _, err := Decode([]byte(`{"schema":"` + Schema + `","unknownField":1}`)); err != nil {
		t.Errorf("a newer writer's extra field was rejected: %v", err)
	}
}

// Every reason a failure's exit code stands for is in the fixed set, with
// that exit code; CredentialsNotBound is an invalid input.
func TestReasonsAreAFixedSet(t *testing.T) {
	for code := ExitInternal; code <= ExitRefused; code++ {
		r := ReasonForExitCode(code)
		if got, ok := r.ExitCode(); !ok || got != code {
			t.Errorf("%q.ExitCode() = %d, %v; want %d", r, got, ok, code)
		}
	}
	if code, ok := ReasonCredentialsNotBound.ExitCode(); !ok || code != ExitInvalidInput {
		t.Errorf("CredentialsNotBound exit code = %d, %v; want %d", code, ok, ExitInvalidInput)
	}
	if _, ok := Reason("Anything").ExitCode(); ok {
		t.Error("an unknown reason has an exit code")
	}
	rs := Reasons()
	for _, r := range []Reason{ReasonPlanStale, ReasonLimitExceeded, ReasonWouldSkipMessages} {
		if code, ok := r.ExitCode(); !ok || code != ExitRefused {
			t.Errorf("%s exit code = %d, %v; want %d", r, code, ok, ExitRefused)
		}
	}
	if code, ok := ReasonOutcomeUnknown.ExitCode(); !ok || code != ExitPartiallyApplied || !code.Retryable() {
		t.Errorf("OutcomeUnknown exit code = %d, %v; want %d, retryable", code, ok, ExitPartiallyApplied)
	}
	if code, ok := ReasonUnsupportedGroupKind.ExitCode(); !ok || code != ExitInvalidInput || code.Retryable() {
		t.Errorf("UnsupportedGroupKind exit code = %d, %v; want %d, not retryable", code, ok, ExitInvalidInput)
	}
	if len(rs) != 17 || !slices.IsSorted(rs) || !slices.Contains(rs, ReasonCredentialsNotBound) || !slices.Contains(rs, ReasonOutcomeUnknown) || !slices.Contains(rs, ReasonUnsupportedGroupKind) || !slices.Contains(rs, ReasonSuperseded) {
		t.Errorf("Reasons() = %q", rs)
	}
}

func TestExitCodes(t *testing.T) {
	reasons := map[ExitCode]Reason{
		ExitInternal:         ReasonInternalError,
		ExitInvalidInput:     ReasonInvalidInput,
		ExitGroupActive:      ReasonGroupActive,
		ExitKafkaError:       ReasonKafkaError,
		ExitPartiallyApplied: ReasonPartiallyApplied,
		ExitInterrupted:      ReasonInterrupted,
		ExitRefused:          ReasonRefused,
		ExitSuperseded:       ReasonSuperseded,
	}
	numbers := map[ExitCode]int{ExitOK: 0, ExitInternal: 1, ExitInvalidInput: 2, ExitGroupActive: 3, ExitKafkaError: 4, ExitPartiallyApplied: 5, ExitInterrupted: 6, ExitRefused: 7, ExitSuperseded: 8}
	for code, n := range numbers {
		if int(code) != n {
			t.Errorf("exit code %v is %d, the contract says %d", code, int(code), n)
		}
	}
	for code, want := range reasons {
		if got := ReasonForExitCode(code); got != want {
			t.Errorf("ReasonForExitCode(%d) = %q, want %q", code, got, want)
		}
	}
	for _, code := range []ExitCode{9, 42, 137, 143, 255, -1} {
		if got := ReasonForExitCode(code); got != ReasonInternalError {
			t.Errorf("ReasonForExitCode(%d) = %q, want %q", code, got, ReasonInternalError)
		}
	}
	// Reasons are distinct: a reader can tell the failures apart.
	seen := map[Reason]ExitCode{}
	for code, r := range reasons {
		if prev, dup := seen[r]; dup {
			t.Errorf("codes %d and %d share reason %q", prev, code, r)
		}
		seen[r] = code
	}

	retryable := map[ExitCode]bool{
		ExitOK:               false,
		ExitInternal:         true,
		ExitInvalidInput:     false,
		ExitGroupActive:      false,
		ExitKafkaError:       true,
		ExitPartiallyApplied: true,
		ExitInterrupted:      true,
		ExitRefused:          false,
		// A retry would fence the replay that superseded it.
		ExitSuperseded: false,
		137:            true, // OOM-killed: the run ID makes a retry safe
	}
	for code, want := range retryable {
		if got := code.Retryable(); got != want {
			t.Errorf("ExitCode(%d).Retryable() = %v, want %v", code, got, want)
		}
	}
	if !(&Result{ExitCode: ExitOK}).Succeeded() || (&Result{ExitCode: ExitKafkaError}).Succeeded() {
		t.Error("Succeeded does not follow the exit code")
	}
}

func TestCompactSmallIsWhole(t *testing.T) {
	r := sampleResult()
	full, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Compact(r, MaxTerminationMessageBytes)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, full) {
		t.Errorf("a result that fits was changed:\n got %s\nwant %s", got, full)
	}
	if r.Truncated {
		t.Error("Compact modified its argument")
	}
}

func bigResult(n int, failedEvery int) *Result {
	r := sampleResult()
	r.Partitions = make([]Partition, 0, n)
	for i := range n {
		p := part(fmt.Sprintf("topic-%02d", i%10), int32(i/10), ptr(int64(1000+i)), int64(i))
		if failedEvery > 0 && i%failedEvery == failedEvery-1 {
			p.Error = "NOT_COORDINATOR"
		}
		if i%7 == 0 {
			p.Clamped = true
		}
		r.Partitions = append(r.Partitions, p)
	}
	r.Summarize()
	return r
}

func TestCompactManyPartitions(t *testing.T) {
	r := bigResult(10000, 997)
	orig := append([]Partition(nil), r.Partitions...)
	b, err := Compact(r, MaxTerminationMessageBytes)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxTerminationMessageBytes {
		t.Fatalf("compact result is %d bytes, limit %d", len(b), MaxTerminationMessageBytes)
	}
	if !json.Valid(b) || !utf8.Valid(b) {
		t.Fatal("compact result is not valid UTF-8 JSON")
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Truncated {
		t.Error("Truncated = false though partitions were left out")
	}
	if got.Totals != r.Totals {
		t.Errorf("Totals = %+v, want the full result's %+v", got.Totals, r.Totals)
	}
	if got.Totals.Partitions != 10000 || got.Totals.Failed != 10 {
		t.Errorf("totals do not describe the whole result: %+v", got.Totals)
	}
	if got.Group != r.Group || got.RunID != r.RunID || got.Error != r.Error || got.ExitCode != r.ExitCode || got.Reason != r.Reason {
		t.Errorf("identifying fields lost: %+v", got)
	}
	nFailed := r.Totals.Failed
	if len(got.Partitions) <= nFailed {
		t.Fatalf("kept %d partitions; want the %d failed ones and as many others as fit", len(got.Partitions), nFailed)
	}
	// Failed partitions first, in their original order, then the others.
	var wantFailed []Partition
	for _, p := range orig {
		if p.Error != "" {
			wantFailed = append(wantFailed, p)
		}
	}
	if !reflect.DeepEqual(got.Partitions[:nFailed], wantFailed) {
		t.Errorf("the first %d partitions are not the failed ones: %+v", nFailed, got.Partitions[:nFailed])
	}
	rest := got.Partitions[nFailed:]
	j := 0
	for _, p := range orig {
		if p.Error == "" && j < len(rest) {
			if !reflect.DeepEqual(rest[j], p) {
				t.Fatalf("kept partition %d is %+v, want %+v", nFailed+j, rest[j], p)
			}
			j++
		}
	}
	// As many as fit: one more would not.
	more := *got
	more.Partitions = append(append([]Partition(nil), got.Partitions...), orig[len(got.Partitions)])
	if mb, _ := json.Marshal(&more); len(mb) <= MaxTerminationMessageBytes {
		t.Errorf("one more partition would still fit (%d bytes); Compact kept too few", len(mb))
	}
	if !reflect.DeepEqual(r.Partitions, orig) || r.Truncated {
		t.Error("Compact modified its argument")
	}
}

func TestCompactOnlyFailedFit(t *testing.T) {
	// More failed partitions than fit: the kept ones are all failed.
	r := bigResult(2000, 1)
	b, err := Compact(r, MaxTerminationMessageBytes)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxTerminationMessageBytes || !got.Truncated || got.Totals.Failed != 2000 {
		t.Errorf("len %d, truncated %v, totals %+v", len(b), got.Truncated, got.Totals)
	}
	for _, p := range got.Partitions {
		if p.Error == "" {
			t.Errorf("partition %s/%d kept without an error", p.Topic, p.Partition)
		}
	}
}

func TestCompactEnormousStrings(t *testing.T) {
	tests := map[string]func(r *Result){
		"error":           func(r *Result) { r.Error = strings.Repeat("broker said no. ", 100000) },
		"escaped error":   func(r *Result) { r.Error = strings.Repeat("<\x01>", 20000) },
		"given target":    func(r *Result) { r.Target.Given = "group:" + strings.Repeat("g", 10000) },
		"group":           func(r *Result) { r.Group = strings.Repeat("g", 10000) },
		"run id":          func(r *Result) { r.RunID = strings.Repeat("r", 10000) },
		"resolved target": func(r *Result) { r.Target.Resolved = "file:/" + strings.Repeat("d/", 3000) + "o.json (1 partitions)" },
		"warnings":        func(r *Result) { r.Warnings = []string{strings.Repeat("w", 5000)} },
		"everything at once": func(r *Result) {
			r.Error = strings.Repeat("e", 9000)
			r.Group = strings.Repeat("g", 9000)
			r.RunID = strings.Repeat("r", 9000)
			r.Target.Given = strings.Repeat("t", 9000)
			r.Target.Resolved = strings.Repeat("t", 9000)
			r.Warnings = []string{strings.Repeat("w", 9000)}
		},
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			r := bigResult(500, 50)
			mutate(r)
			b, err := Compact(r, MaxTerminationMessageBytes)
			if err != nil {
				t.Fatalf("Compact: %v", err)
			}
			if len(b) > MaxTerminationMessageBytes {
				t.Fatalf("%d bytes, limit %d", len(b), MaxTerminationMessageBytes)
			}
			got, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Truncated || got.Totals != r.Totals {
				t.Errorf("truncated %v, totals %+v, want true and %+v", got.Truncated, got.Totals, r.Totals)
			}
			// Shortened strings are prefixes of the originals.
			for _, pair := range [][2]string{{got.Error, r.Error}, {got.Group, r.Group}, {got.RunID, r.RunID}, {got.Target.Given, r.Target.Given}, {got.Target.Resolved, r.Target.Resolved}} {
				short := strings.TrimSuffix(pair[0], "…")
				if !strings.HasPrefix(pair[1], short) {
					t.Errorf("%.40q is not a shortening of %.40q", pair[0], pair[1])
				}
			}
		})
	}
}

func TestCompactMultiByteError(t *testing.T) {
	for _, unit := range []string{"é", "日本語", "🦀", "aé日🦀"} {
		r := sampleResult()
		r.Error = strings.Repeat(unit, 5000)
		b, err := Compact(r, MaxTerminationMessageBytes)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > MaxTerminationMessageBytes || !utf8.Valid(b) {
			t.Fatalf("%q: %d bytes, valid UTF-8 %v", unit, len(b), utf8.Valid(b))
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		short := strings.TrimSuffix(got.Error, "…")
		if short == got.Error {
			t.Errorf("%q: error was not marked as shortened", unit)
		}
		if strings.ContainsRune(got.Error, utf8.RuneError) {
			t.Errorf("%q: a rune was cut in half: %q", unit, got.Error[len(got.Error)-12:])
		}
		if !strings.HasPrefix(r.Error, short) {
			t.Errorf("%q: shortened error is not a prefix of the original", unit)
		}
	}
}

func TestShorten(t *testing.T) {
	s := "aé日🦀z" // 1 + 2 + 3 + 4 + 1 bytes
	for n := 0; n <= len(s)+1; n++ {
		got := shorten(s, n)
		if !utf8.ValidString(got) {
			t.Errorf("shorten(%q, %d) = %q is not valid UTF-8", s, n, got)
		}
		if n >= len(s) {
			if got != s {
				t.Errorf("shorten(%q, %d) = %q, want it unchanged", s, n, got)
			}
			continue
		}
		body := strings.TrimSuffix(got, "…")
		if body == got || len(body) > n || !strings.HasPrefix(s, body) {
			t.Errorf("shorten(%q, %d) = %q", s, n, got)
		}
	}
}

func TestCompactLimitTooSmall(t *testing.T) {
	if b, err := Compact(sampleResult(), 50); err == nil {
		t.Errorf("Compact with a 50-byte limit returned %d bytes and no error", len(b))
	}
}

func TestNoPartitionsIsAnEmptyList(t *testing.T) {
	r := &Result{Schema: Schema}
	full, err := Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	compact, err := Compact(r, MaxTerminationMessageBytes)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(full, []byte(`"partitions": []`)) || !bytes.Contains(compact, []byte(`"partitions":[]`)) {
		t.Errorf("no partitions encoded as\n%s\n%s", full, compact)
	}
	if r.Partitions != nil {
		t.Error("encoding changed the caller's result")
	}
}

// compactBySearch is Compact as it was before it added up the partitions'
// lengths: the whole result encoded, then a binary search of the longest
// prefix that fits. TestCompactAsBefore compares the two byte for byte.
func compactBySearch(r *Result, limit int) ([]byte, error) {
	r = withList(r)
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	if len(b) <= limit {
		return b, nil
	}
	c := *r
	c.Truncated = true
	keep := make([]Partition, 0, len(r.Partitions))
	for _, p := range r.Partitions {
		if p.Error != "" {
			keep = append(keep, p)
		}
	}
	for _, p := range r.Partitions {
		if p.Error == "" {
			keep = append(keep, p)
		}
	}
	lo, hi := 0, len(keep)
	var best []byte
	for lo <= hi {
		mid := (lo + hi) / 2
		c.Partitions = keep[:mid]
		b, err := json.Marshal(&c)
		if err != nil {
			return nil, err
		}
		if len(b) <= limit {
			best, lo = b, mid+1
		} else {
			hi = mid - 1
		}
	}
	if best != nil {
		return best, nil
	}
	c.Partitions = []Partition{}
	c.Warnings = nil
	for n := 1024; n >= 0; n /= 2 {
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

// TestCompactAsBefore: Compact writes exactly what the binary search wrote,
// for results that fit whole, just do not, need a cut among failed
// partitions, hold strings JSON escapes (quotes, HTML, control and
// multi-byte characters), have no partitions or a nil list, or whose
// strings alone are too long; and at limits down to where nothing fits.
func TestCompactAsBefore(t *testing.T) {
	odd := []string{"", "clamped from 1 to log start 3", `a "quoted" <b>&amp;</b>`, "tab\there\nnewline\x01", "ünïcødé ✓ 日本", strings.Repeat("x", 700)}
	var results []*Result
	for _, n := range []int{0, 1, 2, 3, 10, 17, 40, 41, 100, 1000} {
		for _, failedEvery := range []int{0, 1, 3, 997} {
			r := bigResult(n, failedEvery)
			for i := range r.Partitions {
				r.Partitions[i].Note = odd[i%len(odd)]
				if i%5 == 4 {
					r.Partitions[i].LeftAlone = odd[(i+2)%len(odd)]
				}
			}
			r.Summarize()
			results = append(results, r)
		}
	}
	nilList := sampleResult()
	nilList.Partitions = nil
	long := bigResult(30, 2)
	long.Error, long.Group, long.Target.Given = strings.Repeat("é", 3000), strings.Repeat("g", 2000), strings.Repeat("<", 2000)
	results = append(results, nilList, sampleResult(), long)
	check := func(ri int, r *Result, limit int) {
		t.Helper()
		want, wantErr := compactBySearch(r, limit)
		got, err := Compact(r, limit)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("result %d (%d partitions), limit %d:\n got %s (%v)\nwant %s (%v)", ri, len(r.Partitions), limit, got, err, want, wantErr)
		}
	}
	for ri, r := range results {
		for _, limit := range []int{MaxTerminationMessageBytes, 8192, 2000, 1000, 700, 400, 200, 50} {
			check(ri, r, limit)
		}
	}
	// Every limit, so that each cut between two partitions is met: a
	// length added up wrong by a byte (a comma) shows at some limit.
	for _, ri := range []int{4 * 6, 4*7 + 2} {
		for limit := 100; limit <= 4200; limit++ {
			check(ri, results[ri], limit)
		}
	}
}

// TestMessagesCountTheLog: a move re-consumes or skips the messages of the
// log between its two offsets, never offsets outside the log; totals of
// them saturate instead of wrapping around.
func TestMessagesCountTheLog(t *testing.T) {
	const maxInt = int64(^uint64(0) >> 1)
	for _, tc := range []struct {
		name                string
		prev                *int64
		next, start, end    int64
		wantAgain, wantSkip int64
	}{
		{"back inside the log", ptr(80), 20, 0, 100, 60, 0},
		{"ahead inside the log", ptr(20), 80, 0, 100, 0, 60},
		{"no move", ptr(50), 50, 0, 100, 0, 0},
		{"no previous offset", nil, 50, 0, 100, 0, 0},
		{"committed below the log start, to earliest", ptr(5), 40, 40, 100, 0, 0},
		{"committed below the log start, shift:-1 clamped", ptr(5), 40, 40, 100, 0, 0},
		{"committed below the log start, to latest", ptr(5), 100, 40, 100, 0, 60},
		{"committed past the log end, to latest", ptr(500), 100, 0, 100, 0, 0},
		{"committed past the log end, to earliest", ptr(500), 0, 0, 100, 100, 0},
		{"committed near the largest offset", ptr(maxInt - 1), 0, 0, 100, 100, 0},
		{"committed at the largest offset, to a middle", ptr(maxInt), 30, 10, 100, 70, 0},
		{"log bounds unknown (negative)", ptr(10), 0, -1001, -1001, 0, 0},
	} {
		p := Partition{PreviousOffset: tc.prev, NewOffset: tc.next, LogStartOffset: tc.start, LogEndOffset: tc.end}
		if again, skip := p.Messages(); again != tc.wantAgain || skip != tc.wantSkip {
			t.Errorf("%s: Messages() = %d, %d; want %d, %d", tc.name, again, skip, tc.wantAgain, tc.wantSkip)
		}
	}
	// The totals of a result whose every partition re-consumes the most
	// there can be: the largest count, never a negative one.
	r := &Result{}
	for i := range 3 {
		r.Partitions = append(r.Partitions, Partition{Topic: "t", Partition: int32(i), PreviousOffset: ptr(maxInt), NewOffset: 0, LogEndOffset: maxInt, Delta: ptr(maxInt), Applied: true})
	}
	r.Summarize()
	if r.Totals.MessagesToReconsume != maxInt {
		t.Errorf("MessagesToReconsume = %d, want the largest int64", r.Totals.MessagesToReconsume)
	}
	if AddCounts(maxInt, maxInt) != maxInt || AddCounts(1, 2) != 3 || AddCounts(maxInt-1, 1) != maxInt {
		t.Error("AddCounts does not saturate")
	}
}
