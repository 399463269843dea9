package render

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// sampleGroups are a three-group parent's rows as status.groups has them
// (docs/groups.md): one applied, one failed, one never attempted.
func sampleGroups() []GroupRow {
	return []GroupRow{
		{Group: "billing", Request: "incident-42-4f1c2a9b3e", Phase: "Succeeded", Reason: "Applied", Moved: 3, MessagesToReconsume: 420},
		{Group: "audit", Request: "incident-42-0b7d5e1a22", Phase: "Failed", Reason: "GroupActive"},
		{Group: "search", Phase: "NotAttempted", Reason: "NotAttempted"},
	}
}

// A parent's describe: how its groups were chosen, what a failure does,
// the overall outcome, the decision on the one plan, and one row per
// group; no partitions (each child's describe has its own).
func TestGoldenDescribeParent(t *testing.T) {
	rr := &v1alpha1.ReplayRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "incident-42", Namespace: "shop"},
		Spec: v1alpha1.ReplayRequestSpec{
			Kafka:  v1alpha1.KafkaConnection{BootstrapServers: "kafka-0.kafka:9092"},
			Groups: []string{"billing", "audit", "search"}, Approval: v1alpha1.ApprovalManual,
			Target: v1alpha1.Target{Time: ptr.To("2026-03-01T09:30:00Z")},
		},
		Status: v1alpha1.ReplayRequestStatus{
			Phase: v1alpha1.PhaseFailed, RequestedBy: "alice@example.com", ResolvedTarget: "time:2026-03-01T09:30:00Z",
			StartTime: at("2026-03-01T09:30:05Z"), CompletionTime: at("2026-03-01T09:33:00Z"),
			Conditions: []metav1.Condition{
				{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", Message: "3 groups", LastTransitionTime: *at("2026-03-01T09:30:00Z")},
				{Type: "Succeeded", Status: metav1.ConditionFalse, Reason: "PartiallyApplied", Message: "billing applied; audit failed GroupActive; search not attempted", LastTransitionTime: *at("2026-03-01T09:33:00Z")},
			},
			Plan:     &v1alpha1.PlanSummary{Digest: "sha256:9f2c", PlannedAt: at("2026-03-01T09:30:40Z"), Totals: v1alpha1.ResultTotals{Partitions: 9, MessagesToReconsume: 1230}},
			Approval: &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: "bob@example.com", At: at("2026-03-01T09:31:00Z"), Digest: "sha256:9f2c"},
		},
	}
	out := Describe(Palette{}, Description{Request: rr, Groups: sampleGroups()})
	golden(t, "describe-parent.golden", out)

	// A selector says what it selected with; continueOnError what a
	// failure does.
	rr.Spec.Groups, rr.Spec.ContinueOnError = nil, true
	rr.Spec.GroupSelector = &v1alpha1.GroupSelector{Include: []v1alpha1.GroupPattern{{Prefix: "team-x-"}, {Regex: "orders-v[0-9]+"}}, Exclude: []v1alpha1.GroupPattern{{Regex: ".*-canary"}}, WithOffsetsOn: []string{"orders"}}
	out = Describe(Palette{}, Description{Request: rr, Groups: sampleGroups()})
	for _, want := range []string{
		"Groups:       3, selected when accepted: team-x-*, regex:orders-v[0-9]+ but regex:.*-canary, with offsets on orders",
		"On error:     continue",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("describe of a selector parent has no %q:\n%s", want, out)
		}
	}
}

// The undo of a parent is one too: its groups are the undone parent's.
func TestUndoOfAParentIsAParent(t *testing.T) {
	undo := &v1alpha1.ReplayRequest{Spec: v1alpha1.ReplayRequestSpec{Target: v1alpha1.Target{UndoOf: ptr.To("incident-42")}}}
	if !replay.IsParent(undo) || Selection(&undo.Spec) != "those of incident-42, which it undoes" {
		t.Errorf("the undo of a parent: IsParent %v, %q", replay.IsParent(undo), Selection(&undo.Spec))
	}
	undo.Spec.Group = "billing"
	if replay.IsParent(undo) {
		t.Error("the undo of one group's request is a parent")
	}
}

func TestTally(t *testing.T) {
	rows := append(sampleGroups(), GroupRow{Group: "x", Phase: "Succeeded"}, GroupRow{Group: "y", Phase: "Exploded"}, GroupRow{Group: "z"})
	if got, want := Tally(rows), "6 groups: 2 Succeeded, 1 Failed, 1 NotAttempted, 1 -, 1 Exploded"; got != want {
		t.Errorf("Tally = %q, want %q", got, want)
	}
	if got := Tally(nil); got != "0 groups" {
		t.Errorf("Tally(nil) = %q", got)
	}
}

// A parent's plan: per group its child's digest and totals (a group
// with no plan says why), the total over the planned groups; and the
// largest moves across every group, from each child's largest.
func TestGoldenGroupPlan(t *testing.T) {
	groups := []GroupPlan{
		{Group: "billing", Request: "incident-42-4f1c2a9b3e", Digest: "0123456789abcdef", Totals: PlanTotals{Partitions: 3, MessagesToReconsume: 420}},
		{Group: "audit", Request: "incident-42-0b7d5e1a22", Digest: "fedcba9876543210", Totals: PlanTotals{Partitions: 4, MessagesToReconsume: 800, MessagesSkipped: 5}},
		{Group: "search", Request: "incident-42-77aa01bc9d", Phase: "Failed", Reason: "GroupActive"},
	}
	d := func(n int64) *int64 { return &n }
	moves := LargestMoves(map[string][]v1alpha1.PartitionResult{
		"billing": {{Topic: "orders", Partition: 1, PreviousOffset: d(1000), NewOffset: 700, Delta: d(300)}, {Topic: "orders", Partition: 0, PreviousOffset: d(1000), NewOffset: 900, Delta: d(100)}},
		"audit":   {{Topic: "orders", Partition: 1, PreviousOffset: d(1000), NewOffset: 700, Delta: d(300)}, {Topic: "payments", Partition: 0, PreviousOffset: d(10), NewOffset: 15, Delta: d(-5)}, {Topic: "orders", Partition: 2, NewOffset: 40}},
	}, 4)
	golden(t, "plan-groups.golden", GroupPlanTable(Palette{}, groups)+"\n"+MovesTable(Palette{}, moves))
	if len(moves) != 4 || moves[0].Group != "audit" || moves[1].Group != "billing" || moves[3].Delta == nil || *moves[3].Delta != -5 {
		t.Errorf("LargestMoves = %+v", moves)
	}
	if got := LargestMoves(nil, 10); len(got) != 0 {
		t.Errorf("LargestMoves(nil) = %+v", got)
	}
}

// What a tenant wrote in a group's name or a child's reason never
// reaches the terminal raw.
func TestGroupTablesAreCleaned(t *testing.T) {
	evil := "g\x1b[2J\r"
	out := GroupTable(Palette{}, []GroupRow{{Group: evil, Request: evil, Phase: evil, Reason: evil}}) +
		GroupPlanTable(Palette{}, []GroupPlan{{Group: evil, Request: evil, Phase: evil, Reason: evil}, {Group: evil, Request: evil, Digest: evil}}) +
		MovesTable(Palette{}, []Move{{Group: evil, PlanRow: PlanRow{Topic: evil, Note: evil}}}) + Tally([]GroupRow{{Phase: evil}}) +
		Selection(&v1alpha1.ReplayRequestSpec{GroupSelector: &v1alpha1.GroupSelector{Include: []v1alpha1.GroupPattern{{Prefix: evil}}}})
	rr := &v1alpha1.ReplayRequest{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "n"}, Spec: v1alpha1.ReplayRequestSpec{GroupSelector: &v1alpha1.GroupSelector{Include: []v1alpha1.GroupPattern{{Regex: evil}}}}}
	out += Describe(Palette{}, Description{Request: rr, Groups: []GroupRow{{Group: evil}}})
	if strings.ContainsAny(out, "\x1b\r") {
		t.Fatalf("a control character reached the output:\n%q", out)
	}
}
