package record

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// manyPartitions is a realistic large result: topics × partitions with
// production-style topic names (nameLen pads them) and offsets in the
// hundreds of millions, every partition applied.
func manyPartitions(topics, partitions, nameLen int) *report.Result {
	domains := []string{"payments", "orders", "inventory", "customer-profile", "shipping"}
	r := testutil.Result("orders", report.ExitOK)
	for t := range topics {
		name := fmt.Sprintf("prod.%s.entity-%04d-change-events.v%d", domains[t%len(domains)], t, 1+t%3)
		if len(name) < nameLen {
			name += "." + strings.Repeat("x", nameLen-len(name)-1)
		}
		for p := range partitions {
			prev := int64(400_000_000 + t*1_000_003 + p*7_919)
			next := prev - int64(1_000+p*13)
			d := prev - next
			r.Partitions = append(r.Partitions, report.Partition{
				Topic: name, Partition: int32(p), PreviousOffset: &prev, NewOffset: next, Delta: &d,
				LogStartOffset: prev - 50_000_000, LogEndOffset: prev + 12_345, Applied: true,
			})
		}
	}
	// The runner sorts by topic and partition.
	slices.SortStableFunc(r.Partitions, func(a, b report.Partition) int { return strings.Compare(a.Topic, b.Topic) })
	r.Summarize()
	return r
}

func recordOf(t *testing.T, r *report.Result) *v1alpha1.ReplayRecord {
	t.Helper()
	job := finishedJob(t, r.ExitCode == report.ExitOK, "BackoffLimitExceeded")
	return BuildRecord(job, Outcome{Succeeded: r.ExitCode == report.ExitOK, Reason: string(r.Reason), Full: r, Complete: true})
}

// The record's size at 10,000 partitions, in the readable column form and
// compressed, against the API server's limits (3 MiB a request, 1.5 MiB an
// etcd value by default). The figures go into docs/usage.md.
func TestUnitRecordSizes(t *testing.T) {
	cases := []struct {
		name                   string
		topics, parts, nameLen int
		wantGzip               bool
	}{
		{"100 topics × 100 partitions", 100, 100, 0, false},
		{"10 topics × 1,000 partitions", 10, 1000, 0, false},
		{"10,000 topics of 249 characters × 1 partition", 10_000, 1, 249, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := manyPartitions(tc.topics, tc.parts, tc.nameLen)
			rec := recordOf(t, r)
			obj, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			full, _ := json.Marshal(r)
			topics, _ := json.Marshal(recordTopics(r))
			t.Logf("%s: record %d bytes (topics as columns %d, gzip %d; the runner's JSON result %d)",
				tc.name, len(obj), len(topics), len(gzipBytes(topics)), len(full))
			if len(obj) > 1<<20 {
				t.Errorf("record is %d bytes, more than 1 MiB", len(obj))
			}
			if (len(rec.TopicsGzip) > 0) != tc.wantGzip || (len(rec.Topics) > 0) == tc.wantGzip || !rec.Complete {
				t.Fatalf("gzip %d bytes, topics %d, complete %v", len(rec.TopicsGzip), len(rec.Topics), rec.Complete)
			}
			got, err := replay.RecordPartitions(rec)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, r.Partitions) {
				t.Fatal("the record's partitions differ from the result's")
			}
		})
	}
}

// Errors and notes are grouped by text, so 10,000 failed partitions with the
// same error cost one text, and distinct texts are bounded.
func TestUnitRecordTopicsGroupsTexts(t *testing.T) {
	r := manyPartitions(2, 5000, 0)
	for i := range r.Partitions {
		p := &r.Partitions[i]
		p.Applied = false
		if i%2 == 0 {
			p.Error = "NOT_COORDINATOR"
		} else {
			p.Error = fmt.Sprintf("partition %d: offset out of range", i) // one text each
		}
	}
	r.Partitions[0].Error, r.Partitions[1].Error = "", "" // left where they were, no error named
	r.Partitions[3].Note, r.Partitions[3].Clamped = "clamped to log start", true
	r.ExitCode, r.Reason = report.ExitPartiallyApplied, report.ReasonPartiallyApplied
	r.Summarize()
	topics := recordTopics(r)
	texts := map[string]int{}
	for _, tp := range topics {
		for _, f := range tp.Failed {
			texts[f.Text] += len(f.Partitions)
		}
	}
	if len(texts) > maxRecordTexts+1 {
		t.Fatalf("%d distinct texts kept, bound %d", len(texts), maxRecordTexts)
	}
	total := 0
	for _, n := range texts {
		total += n
	}
	if total != 10_000 || texts[replay.NotCommitted] != 2 || texts[textsElided] == 0 {
		t.Fatalf("failed partitions %d (want 10000), not committed %d (want 2), elided %d", total, texts[replay.NotCommitted], texts[textsElided])
	}
	if len(topics[0].Clamped) != 1 || len(topics[0].Notes) != 1 || topics[0].Notes[0].Partitions[0] != 3 {
		t.Fatalf("clamped %v notes %v", topics[0].Clamped, topics[0].Notes)
	}
	// Read back: the partitions without a named error are not applied, and
	// say nothing else.
	got, err := replay.RecordPartitions(&v1alpha1.ReplayRecord{Topics: topics})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Applied || got[0].Error != "" || got[2].Error != "NOT_COORDINATOR" || got[2].Applied {
		t.Fatalf("read back %+v %+v", got[0], got[2])
	}
}

// A dry run's record is its plan: nothing is listed as failed.
func TestUnitRecordOfADryRun(t *testing.T) {
	r := manyPartitions(1, 3, 0)
	r.DryRun, r.Reason = true, report.ReasonDryRun
	for i := range r.Partitions {
		r.Partitions[i].Applied = false
	}
	r.Summarize()
	rec := recordOf(t, r)
	if !rec.DryRun || len(rec.Topics) != 1 || len(rec.Topics[0].Failed) != 0 || rec.Totals.Partitions != 3 {
		t.Fatalf("record %+v", rec)
	}
	if rec.Name != "" && rec.OwnerReferences[0].Kind != "Job" {
		t.Fatalf("owner %+v", rec.OwnerReferences)
	}
}

// A partition an undo left alone is neither applied nor failed, in the
// record and back out of it, and its reason survives both ways.
func TestUnitRecordKeepsLeftAlone(t *testing.T) {
	r := testutil.Result("orders", report.ExitOK, 5, 0, 0)
	r.Target = report.Target{Given: "undo:/etc/kafka-replay/input/input.json.gz", Resolved: "undo:ns/rewind"}
	for _, i := range []int{1, 2} {
		c := *r.Partitions[i].PreviousOffset
		r.Partitions[i].NewOffset, r.Partitions[i].Applied = c, false
		r.Partitions[i].LeftAlone = "consumed past its previous offset; restoring would re-consume 3 messages"
	}
	r.Summarize()
	if r.Totals.LeftAlone != 2 || r.Totals.Failed != 0 {
		t.Fatalf("totals %+v", r.Totals)
	}
	rec := recordOf(t, r)
	if got := rec.Topics[0]; len(got.Failed) != 0 || len(got.LeftAlone) != 1 || len(got.LeftAlone[0].Partitions) != 2 {
		t.Fatalf("record topic %+v", got)
	}
	if rec.Totals.LeftAlone != 2 {
		t.Fatalf("record totals %+v", rec.Totals)
	}
	back, err := replay.RecordPartitions(rec)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range back {
		wantLeft := i > 0
		if (p.LeftAlone != "") != wantLeft || p.Applied == wantLeft || p.Error != "" {
			t.Errorf("partition %d back from the record: %+v", i, p)
		}
	}
	if api := APIResult(r); api.Totals.LeftAlone != 2 || api.Partitions[1].LeftAlone == "" || api.Partitions[0].LeftAlone != "" {
		t.Errorf("status result %+v", api)
	}
}
