package launcher

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

func TestUnitLargestDeltas(t *testing.T) {
	part := func(topic string, p int32, delta *int64) report.Partition {
		return report.Partition{Topic: topic, Partition: p, Delta: delta}
	}
	ps := []report.Partition{
		part("a", 0, ptr.To[int64](5)),
		part("a", 1, ptr.To[int64](-50)),
		part("a", 2, nil), // never committed: no delta
		part("b", 0, ptr.To[int64](50)),
		part("b", 1, ptr.To[int64](0)),
		part("b", 2, ptr.To[int64](7)),
	}
	got := largestDeltas(ps, 3)
	var names []string
	for _, p := range got {
		names = append(names, fmt.Sprintf("%s-%d", p.Topic, p.Partition))
	}
	if want := "a-1 b-0 b-2"; strings.Join(names, " ") != want {
		t.Fatalf("largest %v, want %s", names, want)
	}
	if n := len(largestDeltas(ps, 10)); n != 4 {
		t.Fatalf("%d with a delta, want 4 (none for a never-committed or unmoved partition)", n)
	}
}

// The summary shows the plan's digest, expiry from the timeout (24 h by
// default), the ten largest moves of many, and the commands that decide it.
func TestUnitPlanSummary(t *testing.T) {
	rr := testutil.MakeRequest("ns", "orders-rewind").Manual().Obj()
	plan := testutil.Result("orders", report.ExitOK)
	plan.DryRun, plan.Reason = true, report.ReasonDryRun
	for i := range 30 {
		prev := int64(1000)
		d := int64(i)
		plan.Partitions = append(plan.Partitions, report.Partition{Topic: "orders", Partition: int32(i), PreviousOffset: &prev, NewOffset: prev - d, Delta: &d, LogEndOffset: 2000})
	}
	plan.Summarize()
	plan.Plan = report.PlanDigest(plan.Group, plan.Target.Resolved, plan.Partitions)
	rec := &v1alpha1.ReplayRecord{Target: "shift:-29"}
	rec.Name = "orders-rewind-plan"
	s := planSummaryOf(rr, rec, plan, t0)
	if s.Digest != plan.Plan || s.JobName != rec.Name || s.Target != "shift:-29" {
		t.Errorf("summary %+v", s)
	}
	if !s.ExpiresAt.Time.Equal(t0.Add(24 * time.Hour)) {
		t.Errorf("expires at %s, want 24h after %s", s.ExpiresAt, t0)
	}
	if len(s.LargestDeltas) != 10 || s.LargestDeltas[0].Partition != 29 || s.LargestDeltas[9].Partition != 20 {
		t.Errorf("largest deltas %+v", s.LargestDeltas)
	}
	plan.Partitions[29].Note = strings.Repeat("n", 300)
	if n := planSummaryOf(rr, rec, plan, t0).LargestDeltas[0].Note; len(n) != 256 {
		t.Errorf("a largest move's note of 300 bytes is %d in status, want 256", len(n))
	}
	if s.Totals.Partitions != 30 || s.Totals.MessagesToReconsume != 435 {
		t.Errorf("totals %+v", s.Totals)
	}
	rr.Spec.ApprovalTimeout = nil
	short := testutil.MakeRequest("ns", "orders-rewind").Manual().ApprovalTimeout(90 * time.Minute).Obj()
	if got := planSummaryOf(short, rec, plan, t0).ExpiresAt.Time; !got.Equal(t0.Add(90 * time.Minute)) {
		t.Errorf("approvalTimeout 90m: expires at %s", got)
	}
	msg := planReadyMessage(rr, s)
	want := "kubectl annotate replayrequest orders-rewind -n ns kafkareplay.dev/approve=" + plan.Plan
	if !strings.Contains(msg, want) || !strings.Contains(msg, "kafkareplay.dev/reject=") {
		t.Errorf("message %q lacks %q or the reject command", msg, want)
	}
}
