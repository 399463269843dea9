package runner

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSupersededErrorNamesRunsSorted: a fenced run names the runs whose
// commits the group shows in sorted order, the same message every time,
// and, beyond maxNamed, the first ones in that order (not a draw of map
// order); its own run and commits without a mark are not named.
func TestSupersededErrorNamesRunsSorted(t *testing.T) {
	mark := func(run string) Committed {
		return Committed{Offset: 1, Metadata: commitMark{Version: metadataVersion, RunID: run, Plan: "p", At: time.Unix(0, 0)}.String()}
	}
	tx := &txnCommitter{id: "kafka-replay.g"}
	self := runIdent{RunID: "self", Plan: "p"}
	after := map[TP]Committed{{Topic: "t", Partition: 100}: mark("self"), {Topic: "t", Partition: 101}: {Offset: 5, Metadata: "consumer"}}
	var want []string
	for i := maxNamed + 2; i >= 1; i-- { // inserted in reverse, twice each
		run := fmt.Sprintf("run-%02d", i)
		after[TP{Topic: "t", Partition: int32(i)}] = mark(run)
		after[TP{Topic: "u", Partition: int32(i)}] = mark(run)
	}
	for i := 1; i <= maxNamed; i++ {
		want = append(want, fmt.Sprintf("run-%02d", i))
	}
	wantShows := "it shows the commit of run " + strings.Join(want, ", ") + ", …"
	fenced := errors.New("fenced")
	first := tx.supersededError(fenced, "g", after, self)
	if !strings.Contains(first, wantShows+".") {
		t.Fatalf("want %q in\n%s", wantShows, first)
	}
	if strings.Contains(first, "run self") || strings.Contains(first, "consumer") {
		t.Errorf("names its own run or an unmarked commit: %s", first)
	}
	for range 20 {
		if got := tx.supersededError(fenced, "g", after, self); got != first {
			t.Fatalf("message changed between calls:\n%s\n%s", first, got)
		}
	}
	if got := tx.supersededError(fenced, "g", map[TP]Committed{{Topic: "t"}: mark("self")}, self); !strings.Contains(got, "it shows no other replay's commit yet") {
		t.Errorf("no other run: %s", got)
	}
}
