package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/render"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// parentOf is a three-group Manual parent with its status filled as
// docs/groups.md says the launcher writes it: resolvedGroups, one row per
// group, the one plan over every group.
func parentOf(phase v1alpha1.Phase, rows ...v1alpha1.GroupStatus) *v1alpha1.ReplayRequest {
	rr := &v1alpha1.ReplayRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "incident-42", UID: "parent-uid"},
		Spec: v1alpha1.ReplayRequestSpec{
			Kafka: v1alpha1.KafkaConnection{BootstrapServers: "kafka-0.kafka:9092"}, Groups: []string{"billing", "audit", "search"},
			Approval: v1alpha1.ApprovalManual,
		},
	}
	rr.Status.Phase = phase
	rr.Status.ResolvedGroups = rr.Spec.Groups
	rr.Status.ResolvedTarget = "time:2026-03-01T09:30:00Z"
	rr.Status.Groups = rows
	return rr
}

func row(group, child string, phase v1alpha1.GroupPhase, reason string, moved int32, again int64) v1alpha1.GroupStatus {
	return v1alpha1.GroupStatus{Group: group, Child: child, Phase: phase, Reason: reason, Moved: moved, MessagesToReconsume: again}
}

func childOf(parent *v1alpha1.ReplayRequest, name, digest string, again int64, deltas ...int64) *v1alpha1.ReplayRequest {
	ctrl := true
	c := &v1alpha1.ReplayRequest{ObjectMeta: metav1.ObjectMeta{Namespace: parent.Namespace, Name: name,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ReplayRequest", Name: parent.Name, UID: parent.UID, Controller: &ctrl}}}}
	c.Status.Plan = &v1alpha1.PlanSummary{Digest: digest, JobName: name + "-plan", Target: "time:2026-03-01T09:30:00Z",
		Totals: v1alpha1.ResultTotals{Partitions: int32(len(deltas)), MessagesToReconsume: again}}
	for i, d := range deltas {
		prev := int64(1000)
		c.Status.Plan.LargestDeltas = append(c.Status.Plan.LargestDeltas, v1alpha1.PartitionResult{Topic: "orders", Partition: int32(i), PreviousOffset: &prev, NewOffset: prev - d, Delta: &d})
	}
	return c
}

// A parent's rows: status.groups once written; before that its groups,
// with no phase.
func TestGroupRows(t *testing.T) {
	before := parentOf(v1alpha1.PhasePending)
	before.Status.ResolvedGroups = nil
	got := GroupRows(before)
	if len(got) != 3 || got[1].Group != "audit" || got[1].Phase != "" || got[1].Request != "" {
		t.Errorf("rows before the launcher wrote them: %+v", got)
	}
	p := parentOf(v1alpha1.PhaseRunning, row("billing", "incident-42-a", "Succeeded", "Applied", 3, 420), row("audit", "incident-42-b", "Running", "", 0, 0), row("search", "", "Waiting", "", 0, 0))
	got = GroupRows(p)
	if len(got) != 3 || got[0].Request != "incident-42-a" || got[0].MessagesToReconsume != 420 || got[2].Phase != "Waiting" {
		t.Errorf("rows: %+v", got)
	}
}

// A parent's plan: the one digest, each group's child's digest and
// totals (a group whose child is not among the parent's own, by UID,
// shows no plan), the largest moves across the groups.
func TestParentPlanOf(t *testing.T) {
	p := parentOf(v1alpha1.PhaseAwaitingApproval,
		row("billing", "incident-42-a", "AwaitingApproval", "", 3, 420), row("audit", "incident-42-b", "AwaitingApproval", "", 2, 900), row("search", "incident-42-c", "AwaitingApproval", "", 1, 5))
	p.Status.Plan = &v1alpha1.PlanSummary{Digest: "sha256:" + strings.Repeat("ab", 32), PlannedAt: &metav1.Time{Time: time.Date(2026, 3, 1, 9, 31, 0, 0, time.UTC)}}
	p.Status.Groups[0].Plan, p.Status.Groups[1].Plan = "1111111111111111", "fedcba9876543210"
	children := map[string]*v1alpha1.ReplayRequest{
		"incident-42-a": childOf(p, "incident-42-a", "0123456789abcdef", 420, 300, 100, 20),
		"incident-42-b": childOf(p, "incident-42-b", "fedcba9876543210", 900, 900),
	}
	pl := ParentPlanOf(p, children)
	if pl.Digest != p.Status.Plan.Digest || pl.Target != "time:2026-03-01T09:30:00Z" || len(pl.Groups) != 3 {
		t.Fatalf("plan %+v", pl)
	}
	// billing was planned again since the parent's digest was made.
	if g := pl.Groups[0]; g.Digest != "0123456789abcdef" || g.Totals.Partitions != 3 || g.Totals.MessagesToReconsume != 420 || g.Reason != "planned again: 1111111111111111 is covered" {
		t.Errorf("billing's plan %+v", g)
	}
	if g := pl.Groups[1]; g.Reason != "" {
		t.Errorf("audit's plan is the covered one: %+v", g)
	}
	if g := pl.Groups[2]; g.Digest != "" || g.Phase != "AwaitingApproval" {
		t.Errorf("search, whose child is not listed: %+v", g)
	}
	if len(pl.Largest) != 4 || pl.Largest[0].Group != "audit" || *pl.Largest[0].Delta != 900 || pl.Largest[1].Group != "billing" || *pl.Largest[1].Delta != 300 {
		t.Errorf("largest moves %+v", pl.Largest)
	}
	var b strings.Builder
	printParentPlan(&b, render.Palette{}, pl)
	for _, want := range []string{"Plan sha256:abab", "of shop/incident-42: 3 groups, target time:2026-03-01T09:30:00Z", "Largest moves across the groups:",
		"approve: kubectl replay approve incident-42 -n shop", "no plan: AwaitingApproval"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("plan has no %q:\n%s", want, b.String())
		}
	}
}

// plan shows the guard over all groups against the planned groups' total,
// which the launcher judges before any group applies.
func TestParentPlanTotalGuard(t *testing.T) {
	p := parentOf(v1alpha1.PhaseAwaitingApproval, row("billing", "incident-42-a", "AwaitingApproval", "", 3, 420), row("audit", "incident-42-b", "AwaitingApproval", "", 2, 900))
	children := map[string]*v1alpha1.ReplayRequest{
		"incident-42-a": childOf(p, "incident-42-a", "0123456789abcdef", 420, 300, 100, 20),
		"incident-42-b": childOf(p, "incident-42-b", "fedcba9876543210", 900, 900),
	}
	var b strings.Builder
	printParentPlan(&b, render.Palette{}, ParentPlanOf(p, children))
	if strings.Contains(b.String(), "total guard") {
		t.Errorf("a guard shown without one:\n%s", b.String())
	}
	for limit, want := range map[int64]string{
		1320: "total guard 1320 messages re-consumed over the groups, within the 1320 allowed (--max-total-messages-to-reconsume (spec.limits.maxTotalMessagesToReconsume))\n",
		1319: "total guard 1320 messages re-consumed over the groups, more than the 1319 allowed (--max-total-messages-to-reconsume (spec.limits.maxTotalMessagesToReconsume)): the launcher refuses the plan (LimitExceeded) and applies nothing\n",
	} {
		p.Spec.Limits = &v1alpha1.Limits{MaxTotalMessagesToReconsume: &limit}
		pl := ParentPlanOf(p, children)
		if pl.MaxTotalMessagesToReconsume == nil || *pl.MaxTotalMessagesToReconsume != limit {
			t.Fatalf("plan's guard %v", pl.MaxTotalMessagesToReconsume)
		}
		b.Reset()
		printParentPlan(&b, render.Palette{}, pl)
		if !strings.Contains(b.String(), want) {
			t.Errorf("limit %d: plan has no %q:\n%s", limit, want, b.String())
		}
	}
}

// --wait's display of a parent: a line per group, the approval while it
// waits; on a terminal at most limit groups, those under way first.
func TestParentLines(t *testing.T) {
	p := parentOf(v1alpha1.PhaseAwaitingApproval, row("billing", "incident-42-a", "AwaitingApproval", "", 3, 420), row("audit", "incident-42-b", "Failed", "PlanFailed", 0, 0), row("search", "incident-42-c", "AwaitingApproval", "", 1, 5))
	p.Status.Plan = &v1alpha1.PlanSummary{Digest: "sha256:ab"}
	got := strings.Join(ParentLines(render.Palette{}, p, 3*time.Second, 0), "\n")
	want := `replayrequest shop/incident-42  3 groups: 2 AwaitingApproval, 1 Failed  AwaitingApproval  3s
  … approval          waiting: kubectl replay plan incident-42 -n shop, then kubectl replay approve incident-42 -n shop
  … billing           AwaitingApproval  3 moved, 420 re-consumed, 0 skipped
  ✗ audit             Failed PlanFailed
  … search            AwaitingApproval  1 moved, 5 re-consumed, 0 skipped`
	if got != want {
		t.Errorf("ParentLines =\n%s\nwant\n%s", got, want)
	}

	var rows []v1alpha1.GroupStatus
	for i := range 30 {
		ph := v1alpha1.GroupPhase(v1alpha1.PhaseSucceeded)
		if i%10 == 9 {
			ph = v1alpha1.GroupPhase(v1alpha1.PhaseRunning)
		}
		rows = append(rows, row(fmt.Sprintf("g%02d", i), "", ph, "", 0, 0))
	}
	lines := ParentLines(render.Palette{}, parentOf(v1alpha1.PhaseRunning, rows...), 0, 5)
	if len(lines) != 7 || !strings.Contains(lines[1], "g09") || !strings.Contains(lines[3], "g29") || !strings.Contains(lines[4], "g00") || lines[6] != "  … 25 more" {
		t.Errorf("30 groups on a terminal of 5:\n%s", strings.Join(lines, "\n"))
	}
}

// Off a terminal, a parent's --wait prints a line per change of a
// group's row, and the approval once per plan.
func TestParentDisplayPrintsChanges(t *testing.T) {
	var b strings.Builder
	d := newDisplay(&b, false, render.Palette{})
	p := parentOf(v1alpha1.PhaseAwaitingApproval, row("billing", "incident-42-a", "AwaitingApproval", "", 3, 420), row("audit", "incident-42-b", "AwaitingApproval", "", 0, 0))
	p.Status.Plan = &v1alpha1.PlanSummary{Digest: "sha256:ab"}
	d.show(p, 0)
	d.show(p, time.Second)
	first := b.String()
	p.Status.Phase = v1alpha1.PhaseRunning
	p.Status.Groups[0].Phase, p.Status.Groups[0].Reason = "Succeeded", "Applied"
	d.show(p, 2*time.Second)
	more := strings.TrimPrefix(b.String(), first)
	if n := strings.Count(first, "\n"); n != 3 || !strings.Contains(first, "approval") {
		t.Errorf("first display, %d lines:\n%s", n, first)
	}
	if strings.Count(more, "\n") != 1 || !strings.Contains(more, "✓ billing") || !strings.Contains(more, "Succeeded Applied") {
		t.Errorf("after billing applied:\n%s", more)
	}
}

// A parent's children are those it controls, by UID: a request that
// carries the parent label under a child's name but is controlled by
// another (a parent of the same name deleted and made again, or a
// request someone made ahead) is not shown as one of its plans.
func TestChildrenAreTheParentsOwn(t *testing.T) {
	p := parentOf(v1alpha1.PhaseAwaitingApproval, row("billing", "incident-42-a", "AwaitingApproval", "", 0, 0), row("audit", "incident-42-b", "AwaitingApproval", "", 0, 0))
	own := childOf(p, "incident-42-a", "0123456789abcdef", 420, 300)
	other := childOf(p, "incident-42-b", "fedcba9876543210", 9_999_999, 9_999_999)
	other.OwnerReferences[0].UID = "another-uid"
	unlabelled := childOf(p, "incident-42-c", "0000000000000000", 1, 1)
	for _, c := range []*v1alpha1.ReplayRequest{own, other} {
		c.Labels = map[string]string{v1alpha1.LabelParent: v1alpha1.LabelValue(p.Name)}
	}
	a := &app{streams: genericiooptions.NewTestIOStreamsDiscard(), ns: "shop",
		c: fake.NewClientBuilder().WithScheme(newScheme()).WithObjects(own, other, unlabelled).Build()}
	got, err := a.children(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["incident-42-a"] == nil {
		t.Fatalf("children = %v, want incident-42-a only", got)
	}
	pl := ParentPlanOf(p, got)
	if pl.Groups[1].Digest != "" || len(pl.Largest) != 1 || *pl.Largest[0].Delta != 300 {
		t.Errorf("a request the parent does not control shows in its plan: %+v, largest %+v", pl.Groups, pl.Largest)
	}
}
