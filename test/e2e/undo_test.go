package e2e

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// recordOffsets are a ReplayRecord's offsets of the orders topic:
// partition → previous, and partition → new.
func recordOffsets(t *testing.T, rec *v1alpha1.ReplayRecord) (prev, next map[int32]int64, left map[int32]string) {
	t.Helper()
	prev, next, left = map[int32]int64{}, map[int32]int64{}, map[int32]string{}
	for _, tp := range rec.Topics {
		if tp.Name != topic {
			t.Fatalf("record %s has topic %q", rec.Name, tp.Name)
		}
		for i, p := range tp.Partitions {
			prev[p], next[p] = tp.PreviousOffsets[i], tp.NewOffsets[i]
		}
		for _, n := range tp.LeftAlone {
			for _, p := range n.Partitions {
				left[p] = n.Text
			}
		}
	}
	return prev, next, left
}

func (f *flowEnv) record(t *testing.T, ctx context.Context, ns, name string) *v1alpha1.ReplayRecord {
	t.Helper()
	var rec v1alpha1.ReplayRecord
	if err := f.cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &rec); err != nil {
		t.Fatalf("ReplayRecord %s: %v", name, err)
	}
	if !rec.Complete {
		t.Fatalf("ReplayRecord %s is not complete: %+v", name, rec.Outcome)
	}
	return &rec
}

// waitRR polls a request until cond holds.
func (f *flowEnv) waitRR(t *testing.T, ctx context.Context, ns, name, what string, cond func(*v1alpha1.ReplayRequest) bool) *v1alpha1.ReplayRequest {
	t.Helper()
	var rr v1alpha1.ReplayRequest
	for {
		err := f.cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &rr)
		if err == nil && cond(&rr) {
			return &rr
		}
		if err == nil && (rr.Status.Phase == v1alpha1.PhaseFailed) {
			t.Fatalf("%s/%s failed while waiting for %s: %s", ns, name, what, rr.Status.Message)
		}
		select {
		case <-ctx.Done():
			out, _ := f.c.Kubectl(context.Background(), "-n", ns, "get", "replayrequest", name, "-o", "yaml")
			lg, _ := f.c.Kubectl(context.Background(), "-n", releaseNS, "logs", "deploy/"+release+"-launcher", "--tail=40")
			t.Fatalf("%s/%s: no %s: %v (last error %v)\n%s\nlauncher:\n%s", ns, name, what, ctx.Err(), err, out, lg)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// createdName is the request `kubectl create` says it created.
var createdName = regexp.MustCompile(`(?m)^replayrequest\.kafkareplay\.dev/(\S+) created$`)

// Issue 11 on the real cluster: a Manual request plans (nothing moves),
// waits for approval, is approved with `kubectl annotate`, applies exactly
// its plan; then its status.undoCommand, run by a shell, undoes it under the
// undo rules: one partition the consumers moved back within the replayed
// range is restored, one they moved past their old offset is left alone,
// one untouched is restored; a forced undo then restores the one left
// alone too. At each step the offsets an independent franz-go client reads
// are the ones the ReplayRecords say.
func TestApprovedReplayThenUndone(t *testing.T) { onKafkas(t, approvedReplayThenUndone) }

func approvedReplayThenUndone(t *testing.T, f *flowEnv) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const (
		group = "svc-undo"
		name  = "rewind"
		shift = 20
	)
	ns := f.ns("team-undo")
	ensureNamespace(t, ctx, f, ns)
	before := map[int32]int64{0: 60, 1: 70, 2: 80}
	if err := f.kafka.Commit(ctx, group, kafkatest.Offsets{topic: before}, "e2e"); err != nil {
		t.Fatal(err)
	}
	expect := func(step string, want map[int32]int64) {
		t.Helper()
		got := f.committed(t, ctx, group)
		for p, o := range want {
			if got[p] != o {
				t.Fatalf("%s: partition %d is at %d (independent client), want %d; all %v", step, p, got[p], o, got)
			}
		}
	}
	t0 := time.Now()

	// 1. Plan: the planning Job is a dry run; nothing moves.
	f.apply(t, ctx, rrManifest(ns, name, group, f.kafka.Bootstrap(), "shiftBy: -20", "  approval: Manual\n"))
	planned := f.waitRR(t, ctx, ns, name, "a plan awaiting approval", func(rr *v1alpha1.ReplayRequest) bool {
		return rr.Status.Phase == v1alpha1.PhaseAwaitingApproval && rr.Status.Plan != nil
	})
	tPlanned := time.Now()
	if st, reason := condition(planned, v1alpha1.ConditionAwaitingApproval); st != "True" || reason != "PlanReady" {
		t.Fatalf("AwaitingApproval %s %s", st, reason)
	}
	expect("planned", before)
	plan := f.record(t, ctx, ns, planned.Status.Plan.JobName)
	prev, next, _ := recordOffsets(t, plan)
	for p, o := range before {
		if !plan.DryRun || prev[p] != o || next[p] != o-shift {
			t.Fatalf("plan record partition %d: %d -> %d (dry run %v), want %d -> %d", p, prev[p], next[p], plan.DryRun, o, o-shift)
		}
	}

	// 2. Approve with the documented command: the plan applies, exactly.
	digest := planned.Status.Plan.Digest
	if _, err := f.c.Kubectl(ctx, "-n", ns, "annotate", "rr", name, v1alpha1.AnnotationApprove+"="+digest); err != nil {
		t.Fatal(err)
	}
	applied := f.waitFinal(t, ctx, ns, name)
	tApplied := time.Now()
	if applied.Status.Phase != v1alpha1.PhaseSucceeded || applied.Status.Approval == nil || applied.Status.Approval.Digest != digest || applied.Status.Approval.By == "" {
		t.Fatalf("after approval: phase %s, approval %+v: %s", applied.Status.Phase, applied.Status.Approval, applied.Status.Message)
	}
	rec := f.record(t, ctx, ns, applied.Status.JobName)
	prev, next, _ = recordOffsets(t, rec)
	for p, o := range before {
		if prev[p] != o || next[p] != o-shift {
			t.Fatalf("apply record partition %d: %d -> %d, want %d -> %d", p, prev[p], next[p], o, o-shift)
		}
	}
	expect("applied", next)
	if applied.Status.UndoCommand == "" {
		t.Fatalf("no status.undoCommand after success")
	}

	// 3. The consumers ran a little (partition 1, within the replayed
	// range) or a lot (partition 2, past where it was before the replay);
	// partition 0 did not move, so nothing committed over the replay's
	// mark there, and that mark vouches for the whole undo file (issue 25:
	// once consumers have committed over every partition, an undo's
	// forward moves are weighed as skips).
	moved := map[int32]int64{0: next[0], 1: next[1] + 5, 2: before[2] + 7}
	if err := f.kafka.Commit(ctx, group, kafkatest.Offsets{topic: {1: moved[1], 2: moved[2]}}, "consumer"); err != nil {
		t.Fatal(err)
	}

	// 4. Undo with the command status shows, run by a shell as a user
	// would paste it.
	out, err := f.c.Command(ctx, "sh", "-ec", applied.Status.UndoCommand).CombinedOutput()
	if err != nil {
		t.Fatalf("status.undoCommand: %v\n%s\n%s", err, applied.Status.UndoCommand, out)
	}
	m := createdName.FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("status.undoCommand created no request:\n%s", out)
	}
	undo := f.waitFinal(t, ctx, ns, m[1])
	tUndone := time.Now()
	if undo.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("undo %s: %s: %s\n%s", undo.Name, undo.Status.Phase, undo.Status.Message, undo.Status.LogTail)
	}
	if u := undo.Status.Undo; u == nil || u.Request != name || u.JobName != applied.Status.JobName || u.RunID != rec.RunID {
		t.Fatalf("status.undo %+v", undo.Status.Undo)
	}
	undoRec := f.record(t, ctx, ns, undo.Status.JobName)
	uprev, unext, left := recordOffsets(t, undoRec)
	want := map[int32]int64{0: before[0], 1: before[1], 2: moved[2]}
	for p := range before {
		if uprev[p] != moved[p] || unext[p] != want[p] {
			t.Fatalf("undo record partition %d: %d -> %d, want %d -> %d", p, uprev[p], unext[p], moved[p], want[p])
		}
	}
	if len(left) != 1 || left[2] == "" {
		t.Fatalf("left alone %v, want partition 2 only", left)
	}
	if res := undo.Status.Result; res == nil || res.Totals.LeftAlone != 1 || res.Totals.Applied != 2 {
		t.Fatalf("undo status result %+v", undo.Status.Result)
	}
	expect("undone", want)

	// 5. force restores what the rules left alone: partition 2 goes back
	// to where it was before the replay; 0 and 1 are there already.
	forced := rrManifest(ns, "rewind-undo-forced", group, f.kafka.Bootstrap(), "undoOf: "+name, "  force: true\n")
	forced = strings.Replace(forced, "  topics:\n  - name: "+topic+"\n", "", 1) // the record is the scope
	f.apply(t, ctx, forced)
	fu := f.waitFinal(t, ctx, ns, "rewind-undo-forced")
	if fu.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("forced undo: %s: %s\n%s", fu.Status.Phase, fu.Status.Message, fu.Status.LogTail)
	}
	fprev, fnext, fleft := recordOffsets(t, f.record(t, ctx, ns, fu.Status.JobName))
	if fprev[2] != moved[2] || fnext[2] != before[2] || fleft[2] != "" || fleft[0] == "" || fleft[1] == "" {
		t.Fatalf("forced undo record: %v -> %v, left alone %v", fprev, fnext, fleft)
	}
	expect("forced", before)
	t.Logf("request -> plan awaiting approval %s; approve -> applied %s; undo command -> undone %s; left alone: %q; forced: %q, %q",
		tPlanned.Sub(t0).Round(time.Millisecond), tApplied.Sub(tPlanned).Round(time.Millisecond), tUndone.Sub(tApplied).Round(time.Millisecond), left[2], fleft[0], fleft[1])
}
