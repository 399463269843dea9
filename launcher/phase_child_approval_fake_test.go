package launcher

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/fanout"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// A child request's approve annotation (one set by anyone but the
// launcher, as without the chart's admission policies) applies nothing
// until its parent records in status its approval of a plan covering the
// child's: the child waits, saying so and naming the parent to approve;
// then it is approved, by whom its stamp says, and its apply Job made.
func TestUnitPhasesChildWaitsForItsParentsApproval(t *testing.T) {
	p := testutil.MakeRequest("shop", "incident").UID("p-uid").Created(t0).ShiftBy(-10).Manual().ApprovalTimeout(time.Hour).Obj()
	p.Spec.Group, p.Spec.Groups = "", []string{"orders", "audit"}
	p.Annotations = map[string]string{v1alpha1.AnnotationRequestedBy: "alice", v1alpha1.AnnotationRequestedByGroups: "team-orders"}
	child := fanout.Child(p, "orders")
	child.UID, child.CreationTimestamp = "c-uid", metav1.NewTime(t0)
	f := newFakeAPI(t, fakeOptions(), p, child)
	cur, _ := f.planned(child)
	digest := cur.Status.Plan.Digest
	f.sent()
	// The plan's message says to decide the parent, not this child.
	if c := conditionOf(cur, v1alpha1.ConditionAwaitingApproval); !strings.Contains(c.Message, "the plan of incident covers it: approve or reject incident (kubectl replay approve incident -n shop)") || strings.Contains(c.Message, "kubectl annotate") {
		t.Errorf("the child's plan-ready message %q, want it to name the parent to decide, and no command deciding the child", c.Message)
	}

	waits := func(what, want string) {
		t.Helper()
		f.reconcile(child)
		cur := f.request(child)
		c := conditionOf(cur, v1alpha1.ConditionAwaitingApproval)
		if cur.Status.Approval != nil || c.Status != metav1.ConditionTrue || c.Reason != state.ReasonPlanReady {
			t.Fatalf("%s: approval %+v, AwaitingApproval %+v; want the child still awaiting", what, cur.Status.Approval, c)
		}
		for _, w := range []string{"child of incident", want, "approve or reject incident (kubectl replay approve incident)"} {
			if !strings.Contains(c.Message, w) {
				t.Errorf("%s: message %q does not say %q", what, c.Message, w)
			}
		}
		f.noJob(cur, runnerjob.StageApply)
		if ev := f.sent(); len(ev) != 0 {
			t.Errorf("%s: events %q, want none (no refusal: the parent's approval may come)", what, ev)
		}
	}
	f.annotate(child, v1alpha1.AnnotationApprove, digest, v1alpha1.AnnotationApprovedBy, "bob")
	waits("the parent undecided", "whose approval alone applies it, and incident's status records no approval of its plan")

	// The parent's approval, with a row that covers another plan.
	parent := f.request(p)
	parent.Status.Plan = &v1alpha1.PlanSummary{Digest: "sha256:parent"}
	parent.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: "bob", Digest: "sha256:parent"}
	parent.Status.Groups = []v1alpha1.GroupStatus{{Group: "orders", Child: child.Name, Plan: "1111111111111111"}, {Group: "audit", Phase: v1alpha1.GroupWaiting}}
	if err := f.c.Status().Update(context.Background(), parent); err != nil {
		t.Fatal(err)
	}
	waits("the parent's row covers another plan", "covers 1111111111111111 for it")

	parent = f.request(p)
	parent.Status.Groups[0].Plan = digest
	if err := f.c.Status().Update(context.Background(), parent); err != nil {
		t.Fatal(err)
	}
	f.reconcile(child)
	cur = f.request(child)
	if a := cur.Status.Approval; a == nil || a.Decision != v1alpha1.ApprovalApproved || a.By != "bob" || a.Digest != digest {
		t.Fatalf("approval %+v, want approved by bob for %s once the parent's approval covers it", a, digest)
	}
	if cur.Status.JobName != runnerjob.Name(cur, runnerjob.StageApply) {
		t.Errorf("status.jobName %q, want the apply Job", cur.Status.JobName)
	}
}

// The parent's status first recording its approval wakes its children
// (the launcher approved them before that write, and they may have seen
// it first); no other change of a parent wakes them.
func TestUnitWakeChildrenOnApproval(t *testing.T) {
	before := testutil.MakeRequest("shop", "incident").Manual().Obj()
	before.Spec.Group, before.Spec.Groups = "", []string{"orders", "audit", "billing"}
	before.Status.Groups = []v1alpha1.GroupStatus{{Group: "orders", Child: "incident-a"}, {Group: "audit", Child: "incident-b"}, {Group: "billing", Phase: v1alpha1.GroupWaiting}}
	after := before.DeepCopy()
	after.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: "bob"}
	rejected := before.DeepCopy()
	rejected.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalRejected, By: "bob"}
	later := after.DeepCopy()
	later.Status.Message = "1 of 2 running"
	oneGroup := testutil.MakeRequest("shop", "single").Manual().Obj()
	oneGroupApproved := oneGroup.DeepCopy()
	oneGroupApproved.Status.Approval = after.Status.Approval
	h := wakeChildrenOnApproval()
	for _, tc := range []struct {
		name     string
		old, cur *v1alpha1.ReplayRequest
		want     []string
	}{
		{"the approval recorded", before, after, []string{"shop/incident-a", "shop/incident-b"}},
		{"a rejection", before, rejected, nil},
		{"a later change of an approved parent", after, later, nil},
		{"a one-group request approved", oneGroup, oneGroupApproved, nil},
	} {
		if got := woken(t, h, update(tc.old, tc.cur)); strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: woke %v, want %v", tc.name, got, tc.want)
		}
	}
}
