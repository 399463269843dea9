package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// The record through the real path: a runner pod writes its whole result as
// a frame in its log, the launcher reads it through pods/log from the
// kubelet and keeps it as the Job's ReplayRecord. 400 partitions are far
// more than the 4 KiB termination message (and so status) holds; the record
// has every one, each at the offset Kafka now has, with the offset it had
// before.
func TestRecordFromThePodLog(t *testing.T) {
	f := needFlow(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const (
		ns     = "team-record"
		wide   = "orders-wide"
		nparts = 400
		group  = "svc-record"
	)
	ensureNamespace(t, ctx, f, ns)
	if err := f.kafka.Seed(ctx, wide, nparts, 20, base, time.Second); err != nil {
		t.Fatal(err)
	}
	before := kafkatest.Offsets{wide: {}}
	for p := int32(0); p < nparts; p++ {
		before[wide][p] = 20 - int64(p%7) // differing previous offsets
	}
	if err := f.kafka.Commit(ctx, group, before, "e2e"); err != nil {
		t.Fatal(err)
	}
	manifest := strings.Replace(rrManifest(ns, "wide", group, f.kafka.Bootstrap(), "offset: 5", ""), "- name: "+topic, "- name: "+wide, 1)
	f.apply(t, ctx, manifest)
	rr := f.waitFinal(t, ctx, ns, "wide")
	if rr.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("phase %s: %s", rr.Status.Phase, rr.Status.Message)
	}
	if res := rr.Status.Result; res == nil || !res.Truncated || res.Totals.Partitions != nparts {
		t.Fatalf("status.result: want truncated with totals of %d partitions: %+v", nparts, res)
	}

	var rec v1alpha1.ReplayRecord
	if err := f.cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: rr.Status.JobName}, &rec); err != nil {
		t.Fatalf("no ReplayRecord %s: %v", rr.Status.JobName, err)
	}
	if !rec.Complete || len(rec.Attempts) != 1 || rec.Attempts[0].ResultSource != v1alpha1.ResultSourceLog || rec.Attempts[0].DamagedFrames != 0 {
		t.Fatalf("record: complete %v, attempts %+v; want the full result from the pod's log", rec.Complete, rec.Attempts)
	}
	if rec.Outcome.Reason != "Applied" || rec.Outcome.OffsetsChanged != v1alpha1.OffsetsChangedYes || len(rec.Topics) != 1 || len(rec.Topics[0].Partitions) != nparts {
		t.Fatalf("record outcome %+v, %d topics", rec.Outcome, len(rec.Topics))
	}
	got, err := f.kafka.Committed(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	tp := rec.Topics[0]
	for i, p := range tp.Partitions {
		if tp.PreviousOffsets[i] != before[wide][p] || tp.NewOffsets[i] != 5 || got[wide][p].Offset != 5 {
			t.Fatalf("partition %d: record previous %d new %d, Kafka %d; want previous %d, new 5", p, tp.PreviousOffsets[i], tp.NewOffsets[i], got[wide][p].Offset, before[wide][p])
		}
	}
	// The documented commands.
	out, err := f.c.Kubectl(ctx, "-n", ns, "get", "rrec", rr.Status.JobName)
	if err != nil || !strings.Contains(out, "Applied") || !strings.Contains(out, fmt.Sprint(nparts)) {
		t.Fatalf("kubectl get rrec: %v\n%s", err, out)
	}
	t.Logf("kubectl get rrec:\n%s", out)
}
