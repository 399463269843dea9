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

// TestManyGroupsApprovedThenUndone (issue 30) on the real cluster, through
// the plugin as a user types it: one request over three groups with
// Manual approval plans every group (nothing moves), shows one plan with
// each group's totals, is approved once with `kubectl replay approve
// --wait`, which follows every group to its end; each group then sits at
// exactly its own plan, its own child request and record say so, and
// `kubectl replay undo` of the parent puts every group back, one command.
// At each step an independent franz-go client reads the offsets.
func TestManyGroupsApprovedThenUndone(t *testing.T) {
	f := needFlow(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	const (
		name  = "incident"
		shift = 20
	)
	ns := f.ns("team-incident")
	ensureNamespace(t, ctx, f, ns)
	groups := []string{"svc-billing", "svc-audit", "svc-search"}
	before := map[string]map[int32]int64{}
	for i, g := range groups {
		offs := map[int32]int64{}
		for p := int32(0); p < parts; p++ {
			offs[p] = int64(50 + 10*i + int(p))
		}
		before[g] = offs
		if err := f.kafka.Commit(ctx, g, kafkatest.Offsets{topic: offs}, "e2e"); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(step string, want func(g string, p int32) int64) {
		t.Helper()
		for _, g := range groups {
			got := f.committed(t, ctx, g)
			for p := int32(0); p < parts; p++ {
				if w := want(g, p); got[p] != w {
					t.Fatalf("%s: %s partition %d is at %d (independent client), want %d; all %v", step, g, p, got[p], w, got)
				}
			}
		}
	}
	unmoved := func(g string, p int32) int64 { return before[g][p] }
	shifted := func(g string, p int32) int64 { return before[g][p] - shift }
	t0 := time.Now()

	// 1. Created as typed: --group three times, one plan to approve.
	args := []string{"-n", ns, "create", name, "--bootstrap-servers", f.kafka.Bootstrap(), "--topic", topic, "--to", fmt.Sprintf("shift:-%d", shift), "--approval", "Manual"}
	for _, g := range groups {
		args = append(args, "--group", g)
	}
	out := f.plugin(t, ctx, args...)
	if !strings.Contains(out, "replayrequest.kafkareplay.dev/"+name+" created") {
		t.Fatalf("create said:\n%s", out)
	}
	planned := f.waitRR(t, ctx, ns, name, "one plan over every group awaiting approval", func(rr *v1alpha1.ReplayRequest) bool {
		return rr.Status.Phase == v1alpha1.PhaseAwaitingApproval && rr.Status.Plan != nil && rr.Status.Plan.Digest != ""
	})
	tPlanned := time.Now()
	expect("planned", unmoved)
	if len(planned.Status.Groups) != len(groups) {
		t.Fatalf("status.groups %+v, want one row per group", planned.Status.Groups)
	}
	for i, row := range planned.Status.Groups {
		if row.Group != groups[i] || row.Child == "" || row.Phase != v1alpha1.GroupPhase(v1alpha1.PhaseAwaitingApproval) || row.MessagesToReconsume != shift*parts {
			t.Fatalf("row %d: %+v, want %s planned with %d to re-consume", i, row, groups[i], shift*parts)
		}
	}

	// 2. The plan: the one digest, a line per group with its totals.
	out = f.plugin(t, ctx, "-n", ns, "plan", name)
	digest := planned.Status.Plan.Digest
	if !strings.Contains(out, digest) {
		t.Fatalf("kubectl replay plan does not show the digest %s:\n%s", digest, out)
	}
	for _, g := range groups {
		if !strings.Contains(out, g) {
			t.Fatalf("kubectl replay plan does not show group %s:\n%s", g, out)
		}
	}
	if !strings.Contains(out, fmt.Sprintf("3 groups (3 planned), %d partitions: %d messages re-consumed", 3*parts, 3*parts*shift)) {
		t.Fatalf("kubectl replay plan's totals:\n%s", out)
	}

	// 3. One approval, followed to the end of every group.
	out = f.plugin(t, ctx, "-n", ns, "approve", name, "--wait", "--timeout", "10m")
	tApplied := time.Now()
	if !strings.Contains(out, "approved plan "+digest) || !strings.Contains(out, "succeeded") {
		t.Fatalf("approve --wait said:\n%s", out)
	}
	applied := f.waitFinal(t, ctx, ns, name)
	if applied.Status.Phase != v1alpha1.PhaseSucceeded || applied.Status.Approval == nil || applied.Status.Approval.Digest != digest {
		t.Fatalf("after approve: phase %s, approval %+v: %s", applied.Status.Phase, applied.Status.Approval, applied.Status.Message)
	}
	expect("applied", shifted)
	for _, row := range applied.Status.Groups {
		var child v1alpha1.ReplayRequest
		if err := f.cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: row.Child}, &child); err != nil {
			t.Fatal(err)
		}
		if child.Spec.Group != row.Group || child.Status.Phase != v1alpha1.PhaseSucceeded || child.Status.Approval == nil {
			t.Fatalf("child %s of %s: group %s, phase %s, approval %+v", child.Name, row.Group, child.Spec.Group, child.Status.Phase, child.Status.Approval)
		}
		rec := f.record(t, ctx, ns, child.Status.JobName)
		prev, next, _ := recordOffsets(t, rec)
		for p := int32(0); p < parts; p++ {
			if rec.Group != row.Group || prev[p] != before[row.Group][p] || next[p] != before[row.Group][p]-shift {
				t.Fatalf("%s's record partition %d: %d -> %d, want %d -> %d", row.Group, p, prev[p], next[p], before[row.Group][p], before[row.Group][p]-shift)
			}
		}
	}
	out = f.plugin(t, ctx, "-n", ns, "describe", name)
	for _, g := range groups {
		if !strings.Contains(out, g) {
			t.Fatalf("kubectl replay describe has no row of %s:\n%s", g, out)
		}
	}
	if !strings.Contains(out, "3 groups: 3 Succeeded") {
		t.Fatalf("kubectl replay describe:\n%s", out)
	}

	// 4. Undone with one command: every group back where it was.
	out = f.plugin(t, ctx, "-n", ns, "undo", name, "--wait", "--timeout", "10m")
	tUndone := time.Now()
	if !strings.Contains(out, "succeeded") {
		t.Fatalf("undo --wait said:\n%s", out)
	}
	expect("undone", unmoved)

	// 5. The history: each group's runs, under their parents.
	out = f.plugin(t, ctx, "-n", ns, "history")
	for _, want := range []string{"request/" + name + " (3 groups):", "request/" + name + "-undo (3 groups):"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl replay history has no %q:\n%s", want, out)
		}
	}
	t.Logf("three groups: planned in %s, approved and applied in %s, undone in %s",
		tPlanned.Sub(t0).Round(time.Second), tApplied.Sub(tPlanned).Round(time.Second), tUndone.Sub(tApplied).Round(time.Second))
}
