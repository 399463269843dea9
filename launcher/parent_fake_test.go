package launcher

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/fanout"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// A request over several groups, run by ParentReconciler over the fake
// client: what it creates, gives up and writes, pass by pass. The children
// are finished by hand here (their runs are the one-group reconciler's,
// tested on their own); the envtest suite runs them for real.

type fakeParents struct {
	t      *testing.T
	clock  *clocktesting.FakeClock
	c      client.WithWatch
	r      *ParentReconciler
	uids   int
	writes int // status writes of parents
	// failStatus fails every status write of a parent: a launcher that
	// dies before its pass's one write.
	failStatus bool
}

func newFakeParents(t *testing.T, objs ...client.Object) *fakeParents {
	clock := clocktesting.NewFakeClock(t0)
	f := &fakeParents{t: t, clock: clock}
	f.c = fake.NewClientBuilder().WithScheme(NewScheme()).WithObjects(objs...).
		WithStatusSubresource(&v1alpha1.ReplayRequest{}).
		WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				f.uids++
				obj.SetUID(types.UID(fmt.Sprintf("uid-%d", f.uids)))
				obj.SetCreationTimestamp(metav1.NewTime(clock.Now()))
				return c.Create(ctx, obj, opts...)
			},
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				if rr, ok := obj.(*v1alpha1.ReplayRequest); ok && replay.IsParent(rr) {
					if f.failStatus {
						return errors.New("the launcher died before its status write")
					}
					f.writes++
				}
				return c.SubResource(sub).Update(ctx, obj, opts...)
			},
		}).Build()
	f.r = &ParentReconciler{Client: f.c, APIReader: f.c, Recorder: events.NewFakeRecorder(100), Now: clock.Now}
	return f
}

func (f *fakeParents) pass(p *v1alpha1.ReplayRequest) {
	f.t.Helper()
	before := f.writes
	if _, err := f.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(p)}); err != nil {
		f.t.Fatalf("reconcile: %v", err)
	}
	if f.writes-before > 1 {
		f.t.Fatalf("one pass wrote status %d times", f.writes-before)
	}
}

func (f *fakeParents) get(p *v1alpha1.ReplayRequest) *v1alpha1.ReplayRequest {
	f.t.Helper()
	var out v1alpha1.ReplayRequest
	if err := f.c.Get(context.Background(), client.ObjectKeyFromObject(p), &out); err != nil {
		f.t.Fatal(err)
	}
	return &out
}

// children are the parent's child requests, by group.
func (f *fakeParents) children(p *v1alpha1.ReplayRequest) map[string]*v1alpha1.ReplayRequest {
	f.t.Helper()
	var list v1alpha1.ReplayRequestList
	if err := f.c.List(context.Background(), &list, client.InNamespace(p.Namespace), client.MatchingLabels{v1alpha1.LabelParent: p.Name}); err != nil {
		f.t.Fatal(err)
	}
	out := map[string]*v1alpha1.ReplayRequest{}
	for i := range list.Items {
		out[list.Items[i].Spec.Group] = &list.Items[i]
	}
	return out
}

// end finishes group's child as the one-group reconciler would.
func (f *fakeParents) end(p *v1alpha1.ReplayRequest, group string, succeeded bool, reason string, moved int32) {
	f.t.Helper()
	c := f.children(p)[group]
	if c == nil {
		f.t.Fatalf("no child for %s", group)
	}
	st := metav1.ConditionFalse
	code := int32(3)
	if succeeded {
		st, code = metav1.ConditionTrue, 0
	}
	meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionSucceeded, Status: st, Reason: reason})
	meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionFinished, Status: metav1.ConditionTrue, Reason: reason})
	c.Status.JobName = c.Name + "-job"
	c.Status.Result = &v1alpha1.ReplayResult{Reason: reason, ExitCode: code, Totals: v1alpha1.ResultTotals{Applied: moved, Moved: moved, MessagesToReconsume: int64(moved) * 10}}
	if err := f.c.Status().Update(context.Background(), c); err != nil {
		f.t.Fatal(err)
	}
}

func rowsOf(p *v1alpha1.ReplayRequest) string {
	var s []string
	for _, r := range p.Status.Groups {
		s = append(s, fmt.Sprintf("%s=%s/%s", r.Group, r.Phase, r.Reason))
	}
	return strings.Join(s, " ")
}

func finishedAs(p *v1alpha1.ReplayRequest) string {
	c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionFinished)
	if c == nil {
		return ""
	}
	return c.Reason
}

func TestUnitParentStartsInOrderUnderParallelism(t *testing.T) {
	p := testutil.MakeRequest("shop", "incident").Groups("billing", "audit", "search").Obj()
	p.UID = "parent-uid"
	p.Annotations = map[string]string{v1alpha1.AnnotationRequestedBy: "alice"}
	f := newFakeParents(t, p)

	f.pass(p)
	got := f.get(p)
	if len(f.children(p)) != 1 || f.children(p)["billing"] == nil {
		t.Fatalf("first pass made %v, want billing's child alone (parallelism 1)", f.children(p))
	}
	if !meta.IsStatusConditionTrue(got.Status.Conditions, v1alpha1.ConditionAccepted) || strings.Join(got.Status.ResolvedGroups, ",") != "billing,audit,search" {
		t.Errorf("accepted: %+v", got.Status)
	}
	if want := "billing=Pending/ audit=Waiting/ search=Waiting/"; rowsOf(got) != want {
		t.Errorf("rows %s, want %s", rowsOf(got), want)
	}
	if got.Status.Phase != v1alpha1.PhaseRunning || got.Status.RequestedBy != "alice" || got.Status.ObservedGeneration != got.Generation {
		t.Errorf("phase %s requestedBy %q", got.Status.Phase, got.Status.RequestedBy)
	}
	// Nothing changed: nothing is made, nothing written.
	w := f.writes
	f.pass(p)
	if len(f.children(p)) != 1 || f.writes != w {
		t.Fatalf("a pass over nothing new made %d children, wrote %d times", len(f.children(p)), f.writes-w)
	}
	// The child carries the parent's requester, its owner and its spec.
	if err := fanout.CheckAdopted(got, f.children(p)["billing"], "billing"); err != nil {
		t.Fatal(err)
	}

	f.end(p, "billing", true, "Applied", 3)
	f.pass(p)
	if len(f.children(p)) != 2 {
		t.Fatalf("after billing applied: %d children", len(f.children(p)))
	}
	f.end(p, "audit", true, "Applied", 1)
	f.pass(p)
	f.end(p, "search", true, "Applied", 2)
	f.pass(p)
	got = f.get(p)
	if finishedAs(got) != "Applied" || got.Status.Phase != v1alpha1.PhaseSucceeded || got.Status.CompletionTime == nil {
		t.Fatalf("finished %q phase %s: %s", finishedAs(got), got.Status.Phase, got.Status.Message)
	}
	if r := got.Status.Groups[0]; r.Moved != 3 || r.MessagesToReconsume != 30 || r.Child != fanout.ChildName("incident", "billing") {
		t.Errorf("billing's row %+v", r)
	}
	// A finished parent does nothing more, whatever happens to a child.
	w = f.writes
	_ = f.c.Delete(context.Background(), f.children(p)["audit"])
	f.pass(p)
	if f.writes != w || len(f.children(p)) != 2 {
		t.Errorf("a finished parent acted on a child's deletion")
	}
}

func TestUnitParentParallelismAndContinueOnError(t *testing.T) {
	for _, cont := range []bool{false, true} {
		t.Run(fmt.Sprintf("continueOnError=%v", cont), func(t *testing.T) {
			p := testutil.MakeRequest("shop", "incident").Groups("a", "b", "c", "d").Obj()
			p.UID, p.Spec.Parallelism, p.Spec.ContinueOnError = "parent-uid", 2, cont
			f := newFakeParents(t, p)
			f.pass(p)
			if n := len(f.children(p)); n != 2 {
				t.Fatalf("parallelism 2 started %d", n)
			}
			f.end(p, "a", false, "GroupActive", 0)
			f.pass(p)
			got := f.get(p)
			if !cont {
				// b runs on; c and d are given up, never made.
				if n := len(f.children(p)); n != 2 {
					t.Fatalf("after a failed group without continueOnError: %d children", n)
				}
				if want := "a=Failed/GroupActive b=Pending/ c=NotAttempted/NotAttempted d=NotAttempted/NotAttempted"; rowsOf(got) != want {
					t.Fatalf("rows %s, want %s", rowsOf(got), want)
				}
				if finishedAs(got) != "" {
					t.Fatalf("finished while b runs: %s", finishedAs(got))
				}
				f.end(p, "b", true, "Applied", 4)
				f.pass(p)
				got = f.get(p)
				if finishedAs(got) != "PartiallyApplied" || !strings.Contains(got.Status.Message, "not attempted") || !strings.Contains(got.Status.Message, "c, d") {
					t.Fatalf("finished %q: %s", finishedAs(got), got.Status.Message)
				}
				return
			}
			if n := len(f.children(p)); n != 3 {
				t.Fatalf("continueOnError: %d children after a failed one, want 3", n)
			}
			for _, g := range []string{"b", "c", "d"} {
				f.end(p, g, false, "GroupActive", 0)
				f.pass(p)
			}
			got = f.get(p)
			if finishedAs(got) != "GroupActive" || got.Status.Phase != v1alpha1.PhaseFailed || !strings.Contains(got.Status.Message, "no group changed") {
				t.Fatalf("finished %q: %s", finishedAs(got), got.Status.Message)
			}
		})
	}
}

func TestUnitParentRefusesATamperedChild(t *testing.T) {
	p := testutil.MakeRequest("shop", "incident").Groups("billing", "audit").Obj()
	p.UID = "parent-uid"
	// Someone made audit's child ahead, with another target and the
	// parent as its owner: the parent must not adopt it, nor start billing.
	ctrl := true
	forged := fanout.Child(p, "audit")
	latest := v1alpha1.PositionLatest
	forged.Spec.Target.Position = &latest
	forged.OwnerReferences[0].Controller = &ctrl
	f := newFakeParents(t, p, forged)
	f.pass(p)
	got := f.get(p)
	if finishedAs(got) != "ChildTampered" || got.Status.Phase != v1alpha1.PhaseFailed || !strings.Contains(got.Status.Message, "spec is not the parent's") {
		t.Fatalf("finished %q: %s", finishedAs(got), got.Status.Message)
	}
	if n := len(f.children(p)); n != 1 {
		t.Fatalf("the parent made %d children beside the forged one", n-1)
	}
}

func TestUnitParentNeverRemakesADeletedChild(t *testing.T) {
	p := testutil.MakeRequest("shop", "incident").Groups("billing", "audit").Obj()
	p.UID = "parent-uid"
	p.Spec.ContinueOnError = true
	f := newFakeParents(t, p)
	f.pass(p)
	if err := f.c.Delete(context.Background(), f.children(p)["billing"]); err != nil {
		t.Fatal(err)
	}
	f.pass(p)
	got := f.get(p)
	if f.children(p)["billing"] != nil {
		t.Fatal("billing's deleted child was made again")
	}
	if want := "billing=Failed/ChildDeleted audit=Pending/"; rowsOf(got) != want {
		t.Fatalf("rows %s, want %s", rowsOf(got), want)
	}
	f.end(p, "audit", true, "Applied", 1)
	f.pass(p)
	// billing's child may have run before it was deleted: not "nothing changed".
	if got := f.get(p); finishedAs(got) != "PartiallyApplied" {
		t.Fatalf("finished %q: %s", finishedAs(got), got.Status.Message)
	}
}

// Whoever may write status cannot choose the groups: a resolvedGroups
// written before acceptance that is not spec.groups refuses the request.
func TestUnitParentStatusCannotAddAGroup(t *testing.T) {
	p := testutil.MakeRequest("shop", "incident").Groups("billing").Obj()
	p.UID = "parent-uid"
	p.Status.ResolvedGroups = []string{"billing", "payments"}
	f := newFakeParents(t, p)
	f.pass(p)
	if c := f.children(p); len(c) != 0 {
		t.Fatalf("status.resolvedGroups written ahead: children %v", c)
	}
	if got := f.get(p); finishedAs(got) != "InvalidInput" || !strings.Contains(got.Status.Message, "status.resolvedGroups was written before") {
		t.Fatalf("finished %q: %s", finishedAs(got), got.Status.Message)
	}
}

// The one-group reconciler leaves a parent alone: no Job, no status.
func TestUnitOneGroupReconcilerSkipsParents(t *testing.T) {
	p := testutil.MakeRequest("shop", "incident").Groups("billing", "audit").Obj()
	f := newFakeAPI(t, fakeOptions(), p)
	f.reconcile(p)
	got := f.request(p)
	if len(got.Status.Conditions) != 0 || got.Status.JobName != "" {
		t.Fatalf("the one-group reconciler acted on a parent: %+v", got.Status)
	}
}

// planned makes group's Manual child planned, as its planning run would:
// its plan in status, awaiting a decision.
func (f *fakeParents) planned(p *v1alpha1.ReplayRequest, group, digest string) {
	f.t.Helper()
	f.plannedWith(p, group, digest, 7)
}

// plannedWith is planned, with the plan re-consuming msgs messages.
func (f *fakeParents) plannedWith(p *v1alpha1.ReplayRequest, group, digest string, msgs int64) {
	f.t.Helper()
	c := f.children(p)[group]
	if c == nil {
		f.t.Fatalf("no child for %s", group)
	}
	at := metav1.NewTime(f.clock.Now())
	exp := metav1.NewTime(at.Add(24 * time.Hour))
	c.Status.Plan = &v1alpha1.PlanSummary{Digest: digest, JobName: c.Name + "-plan", PlannedAt: &at, ExpiresAt: &exp,
		Totals: v1alpha1.ResultTotals{Partitions: 2, Moved: 2, MessagesToReconsume: msgs}}
	meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionAwaitingApproval, Status: metav1.ConditionTrue, Reason: "PlanReady"})
	if err := f.c.Status().Update(context.Background(), c); err != nil {
		f.t.Fatal(err)
	}
}

// approveAs annotates the parent as an approver would, with the stamp the
// chart's admission policy writes.
func (f *fakeParents) annotate(p *v1alpha1.ReplayRequest, kv ...string) {
	f.t.Helper()
	cur := f.get(p)
	before := cur.DeepCopy()
	if cur.Annotations == nil {
		cur.Annotations = map[string]string{}
	}
	for i := 0; i < len(kv); i += 2 {
		cur.Annotations[kv[i]] = kv[i+1]
	}
	if err := f.c.Patch(context.Background(), cur, client.MergeFrom(before)); err != nil {
		f.t.Fatal(err)
	}
}

func TestUnitParentManualOnePlanOneApproval(t *testing.T) {
	p := testutil.MakeRequest("shop", "incident").Groups("a", "b").Manual().Obj()
	p.UID = "parent-uid"
	f := newFakeParents(t, p)
	f.pass(p)
	if n := len(f.children(p)); n != 1 {
		t.Fatalf("%d children planning at parallelism 1", n)
	}
	f.planned(p, "a", "aaaaaaaaaaaaaaaa")
	f.pass(p)
	// a planned: its place goes to b's planning; no plan yet.
	if n := len(f.children(p)); n != 2 || f.get(p).Status.Plan != nil {
		t.Fatalf("%d children, plan %+v", n, f.get(p).Status.Plan)
	}
	f.clock.Step(time.Minute)
	f.planned(p, "b", "bbbbbbbbbbbbbbbb")
	f.pass(p)
	got := f.get(p)
	want, _, _ := fanout.PlanDigest([]fanout.ChildPlan{{Group: "a", Plan: "aaaaaaaaaaaaaaaa"}, {Group: "b", Plan: "bbbbbbbbbbbbbbbb"}})
	if got.Status.Plan == nil || got.Status.Plan.Digest != want || got.Status.Plan.Totals.MessagesToReconsume != 14 || got.Status.Phase != v1alpha1.PhaseAwaitingApproval {
		t.Fatalf("plan %+v phase %s", got.Status.Plan, got.Status.Phase)
	}
	// The parent's plan expires with its first child's.
	if !got.Status.Plan.ExpiresAt.Time.Equal(t0.Add(24 * time.Hour)) {
		t.Errorf("expiresAt %v", got.Status.Plan.ExpiresAt)
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionAwaitingApproval); c == nil || !strings.Contains(c.Message, "kafkareplay.dev/approve="+want) {
		t.Fatalf("AwaitingApproval %+v", c)
	}
	if r := got.Status.Groups[1]; r.Plan != "bbbbbbbbbbbbbbbb" || r.Phase != v1alpha1.GroupPhase(v1alpha1.PhaseAwaitingApproval) {
		t.Errorf("b's row %+v", r)
	}

	// A child's digest approves nothing on the parent.
	f.annotate(p, v1alpha1.AnnotationApprove, "aaaaaaaaaaaaaaaa", v1alpha1.AnnotationApprovedBy, "bob")
	f.pass(p)
	for g, c := range f.children(p) {
		if _, ok := c.Annotations[v1alpha1.AnnotationApprove]; ok {
			t.Fatalf("%s approved on a wrong digest", g)
		}
	}
	f.annotate(p, v1alpha1.AnnotationApprove, want, v1alpha1.AnnotationApprovedBy, "bob")
	f.pass(p)
	got, cs := f.get(p), f.children(p)
	if got.Status.Approval == nil || got.Status.Approval.By != "bob" || got.Status.Approval.Digest != want {
		t.Fatalf("approval %+v", got.Status.Approval)
	}
	// Each child with its own digest, in the approver's name, in order.
	if a := cs["a"].Annotations; a[v1alpha1.AnnotationApprove] != "aaaaaaaaaaaaaaaa" || a[v1alpha1.AnnotationApprovedBy] != "bob" {
		t.Fatalf("a's annotations %v", a)
	}
	if _, ok := cs["b"].Annotations[v1alpha1.AnnotationApprove]; ok {
		t.Fatal("b approved while a runs (parallelism 1)")
	}
	// The child takes its approval (its own reconciler); then it ends.
	approve := func(g string) {
		c := f.children(p)[g]
		c.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: "bob", Digest: c.Status.Plan.Digest}
		meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionAwaitingApproval, Status: metav1.ConditionFalse, Reason: "Approved"})
		if err := f.c.Status().Update(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	approve("a")
	f.pass(p)
	f.end(p, "a", true, "Applied", 2)
	f.pass(p)
	if b := f.children(p)["b"].Annotations; b[v1alpha1.AnnotationApprove] != "bbbbbbbbbbbbbbbb" {
		t.Fatalf("b not approved after a ended: %v", b)
	}
	approve("b")
	f.end(p, "b", true, "Applied", 2)
	f.pass(p)
	if got := f.get(p); finishedAs(got) != "Applied" {
		t.Fatalf("finished %q: %s", finishedAs(got), got.Status.Message)
	}
}

func TestUnitParentManualRejectedOrExpired(t *testing.T) {
	for _, how := range []string{"rejected", "expired"} {
		t.Run(how, func(t *testing.T) {
			p := testutil.MakeRequest("shop", "incident").Groups("a", "b").Manual().Obj()
			p.UID, p.Spec.Parallelism = "parent-uid", 2
			f := newFakeParents(t, p)
			f.pass(p)
			f.planned(p, "a", "aaaaaaaaaaaaaaaa")
			f.planned(p, "b", "bbbbbbbbbbbbbbbb")
			f.pass(p)
			want := "Rejected"
			if how == "rejected" {
				f.annotate(p, v1alpha1.AnnotationReject, "wrong incident", v1alpha1.AnnotationApprovedBy, "carol")
			} else {
				want = "Expired"
				f.clock.Step(24 * time.Hour)
			}
			f.pass(p)
			got := f.get(p)
			if finishedAs(got) != want || got.Status.Phase != v1alpha1.PhaseFailed {
				t.Fatalf("finished %q: %s", finishedAs(got), got.Status.Message)
			}
			for g, c := range f.children(p) {
				if _, ok := c.Annotations[v1alpha1.AnnotationReject]; !ok {
					t.Errorf("%s still awaits a decision: %v", g, c.Annotations)
				}
				if _, ok := c.Annotations[v1alpha1.AnnotationApprove]; ok {
					t.Errorf("%s approved", g)
				}
			}
		})
	}
}

func TestUnitParentManualPlanFails(t *testing.T) {
	p := testutil.MakeRequest("shop", "incident").Groups("a", "b", "c").Manual().Obj()
	p.UID, p.Spec.Parallelism = "parent-uid", 2
	f := newFakeParents(t, p)
	f.pass(p)
	f.planned(p, "a", "aaaaaaaaaaaaaaaa")
	f.end(p, "b", false, "GroupActive", 0) // its planning run failed
	f.pass(p)
	got := f.get(p)
	if finishedAs(got) != "GroupActive" || got.Status.Plan != nil || !strings.Contains(got.Status.Message, "no plan to approve") {
		t.Fatalf("finished %q plan %+v: %s", finishedAs(got), got.Status.Plan, got.Status.Message)
	}
	if f.children(p)["c"] != nil {
		t.Error("c planned after b failed without continueOnError")
	}
	if _, ok := f.children(p)["a"].Annotations[v1alpha1.AnnotationReject]; !ok {
		t.Error("a still awaits a decision that cannot come")
	}
}

// A child that finished but still holds paused consumers keeps its place
// and the parent unfinished until they are restored.
func TestUnitParentWaitsForTheConsumersRestored(t *testing.T) {
	p := testutil.MakeRequest("shop", "incident").Groups("a", "b").Obj()
	p.UID = "parent-uid"
	f := newFakeParents(t, p)
	f.pass(p)
	f.end(p, "a", true, "Applied", 1)
	c := f.children(p)["a"]
	c.Status.Consumers = []v1alpha1.ConsumerStatus{{Kind: v1alpha1.ConsumerDeployment, Name: "orders", State: v1alpha1.ConsumerPaused}}
	if err := f.c.Status().Update(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	f.pass(p)
	if f.children(p)["b"] != nil {
		t.Fatal("b started while a's consumers are still paused (parallelism 1)")
	}
	c = f.children(p)["a"]
	c.Status.Consumers[0].State = v1alpha1.ConsumerRestored
	if err := f.c.Status().Update(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	f.pass(p)
	f.end(p, "b", true, "Applied", 1)
	c = f.children(p)["b"]
	c.Status.Consumers = []v1alpha1.ConsumerStatus{{Kind: v1alpha1.ConsumerDeployment, Name: "orders", State: v1alpha1.ConsumerPaused}}
	if err := f.c.Status().Update(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	f.pass(p)
	if got := f.get(p); finishedAs(got) != "" {
		t.Fatalf("finished while b's consumers are paused: %s", finishedAs(got))
	}
	c.Status.Consumers[0].State = v1alpha1.ConsumerRestored
	if err := f.c.Status().Update(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	f.pass(p)
	if got := f.get(p); finishedAs(got) != "Applied" {
		t.Fatalf("finished %q", finishedAs(got))
	}
}

// The undo of a parent: one undo child per group whose child committed
// something, each undoing that child; the others left, saying why.
func TestUnitParentUndo(t *testing.T) {
	undone := testutil.MakeRequest("shop", "incident").Groups("a", "b", "c").Obj()
	undone.UID = "undone-uid"
	meta.SetStatusCondition(&undone.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionSucceeded, Status: metav1.ConditionFalse, Reason: "PartiallyApplied"})
	applied := fanout.Child(undone, "a")
	applied.Status.JobName = "a-job"
	applied.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionSucceeded, Status: metav1.ConditionTrue, Reason: "Applied"}, {Type: v1alpha1.ConditionFinished, Status: metav1.ConditionTrue, Reason: "Applied"}}
	applied.Status.Result = &v1alpha1.ReplayResult{Reason: "Applied", Totals: v1alpha1.ResultTotals{Applied: 2, Moved: 2}}
	failed := fanout.Child(undone, "b")
	failed.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionSucceeded, Status: metav1.ConditionFalse, Reason: "GroupActive"}, {Type: v1alpha1.ConditionFinished, Status: metav1.ConditionTrue, Reason: "GroupActive"}}
	// c's child was never made (not attempted).

	undo := testutil.MakeRequest("shop", "incident-undo").UndoOf("incident").Obj()
	undo.Spec.Group, undo.Spec.Topics = "", nil
	undo.UID = "undo-uid"
	if !replay.IsUndoParent(undo) || replay.IsUndoParent(applied) {
		t.Fatal("IsUndoParent")
	}
	f := newFakeParents(t, undone, applied, failed, undo)
	f.pass(undo)
	got := f.get(undo)
	if strings.Join(got.Status.ResolvedGroups, ",") != "a,b,c" {
		t.Fatalf("resolvedGroups %v", got.Status.ResolvedGroups)
	}
	if want := "a=Pending/ b=NotAttempted/NothingToUndo c=NotAttempted/NothingToUndo"; rowsOf(got) != want {
		t.Fatalf("rows %s, want %s", rowsOf(got), want)
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionAccepted); c == nil || !strings.Contains(c.Message, "1 of 3 groups to undo") || !strings.Contains(c.Message, "did not succeed (GroupActive") || !strings.Contains(c.Message, "c: no request ran it") {
		t.Fatalf("Accepted %+v", c)
	}
	cs := f.children(undo)
	if len(cs) != 1 || cs["a"] == nil || *cs["a"].Spec.Target.UndoOf != applied.Name || cs["a"].Spec.Group != "a" {
		t.Fatalf("undo children %v", cs)
	}
	f.end(undo, "a", true, "Applied", 2)
	f.pass(undo)
	if got := f.get(undo); finishedAs(got) != "Applied" || got.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("finished %q: %s", finishedAs(got), got.Status.Message)
	}
}

func TestUnitParentUndoRefused(t *testing.T) {
	lone := testutil.MakeRequest("shop", "lone").Obj()
	nothing := testutil.MakeRequest("shop", "nothing").Groups("a").Obj()
	nothing.UID = "nothing-uid"
	meta.SetStatusCondition(&nothing.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionSucceeded, Status: metav1.ConditionFalse, Reason: "GroupActive"})
	running := testutil.MakeRequest("shop", "running").Groups("a").Obj()
	for _, tt := range []struct{ undone, says string }{
		{"lone", "not a request over several groups"},
		{"nothing", "no group of nothing committed anything to undo"},
		{"running", "has not finished yet"},
		{"gone", "no request gone"},
	} {
		t.Run(tt.undone, func(t *testing.T) {
			undo := testutil.MakeRequest("shop", "undo").UndoOf(tt.undone).Obj()
			undo.Spec.Group, undo.Spec.Topics = "", nil
			f := newFakeParents(t, lone.DeepCopy(), nothing.DeepCopy(), running.DeepCopy(), undo)
			f.pass(undo)
			got := f.get(undo)
			if finishedAs(got) != state.ReasonUndoRefused || !strings.Contains(got.Status.Message, tt.says) || len(f.children(undo)) != 0 {
				t.Fatalf("finished %q: %s", finishedAs(got), got.Status.Message)
			}
		})
	}
}

// A request made ahead under a child's name without the parent label is
// found all the same (by its name, not the label) and refused.
func TestUnitParentRefusesAnUnlabelledChild(t *testing.T) {
	p := testutil.MakeRequest("shop", "incident").Groups("billing", "audit").Obj()
	p.UID = "parent-uid"
	forged := fanout.Child(p, "audit")
	forged.Labels = nil
	f := newFakeParents(t, p, forged)
	f.pass(p)
	got := f.get(p)
	if finishedAs(got) != "ChildTampered" || !strings.Contains(got.Status.Message, "label") {
		t.Fatalf("finished %q: %s", finishedAs(got), got.Status.Message)
	}
	if n := len(f.children(p)); n != 0 {
		t.Fatalf("the parent made %d children", n)
	}
}

// limits.maxTotalMessagesToReconsume, judged by the parent over its
// children's plans before any applies (fanout.JudgeTotal): over it,
// nothing is approved and every planned child is rejected; within it, a
// Manual parent waits for its approval as without a guard, and an
// Automatic one approves its children itself.
func TestUnitParentTotalGuard(t *testing.T) {
	for _, tc := range []struct {
		name   string
		manual bool
		limit  int64
		// want: the parent's end (LimitExceeded), or "" while it goes on.
		want string
	}{
		{"Manual, over", true, 20, "LimitExceeded"},
		{"Manual, within", true, 21, ""},
		{"Automatic, over", false, 20, "LimitExceeded"},
		{"Automatic, within", false, 21, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := testutil.MakeRequest("shop", "incident").Groups("a", "b", "c")
			if tc.manual {
				w = w.Manual()
			}
			p := w.Obj()
			p.UID, p.Spec.Limits = "parent-uid", &v1alpha1.Limits{MaxTotalMessagesToReconsume: &tc.limit}
			f := newFakeParents(t, p)
			// The children plan one after the other (parallelism 1), an
			// Automatic parent's too: each child is Manual.
			for _, g := range []string{"a", "b", "c"} {
				f.pass(p)
				c := f.children(p)[g]
				if c == nil || c.Spec.Approval != v1alpha1.ApprovalManual || c.Spec.Limits != nil {
					t.Fatalf("%s's child %+v", g, c)
				}
				if len(f.children(p)) > 1 && f.get(p).Status.Plan != nil {
					t.Fatal("a plan before every group planned")
				}
				f.plannedWith(p, g, strings.Repeat(g, 16), map[string]int64{"a": 5, "b": 9, "c": 7}[g])
			}
			f.pass(p)
			got, cs := f.get(p), f.children(p)
			for g, c := range cs {
				// Only the launcher's own approval of an Automatic
				// parent's first child may be there; never before the
				// total was judged within.
				if _, ok := c.Annotations[v1alpha1.AnnotationApprove]; ok && (tc.want != "" || tc.manual || g != "a") {
					t.Errorf("%s approved: %v", g, c.Annotations)
				}
			}
			if tc.want != "" {
				if finishedAs(got) != tc.want || got.Status.Phase != v1alpha1.PhaseFailed || got.Status.Plan != nil || got.Status.Approval != nil {
					t.Fatalf("finished %q, phase %s, plan %+v, approval %+v", finishedAs(got), got.Status.Phase, got.Status.Plan, got.Status.Approval)
				}
				msg := "would re-consume 21 message(s), more than the 20 spec.limits.maxTotalMessagesToReconsume allows, over 3 group(s), largest first: b 9, c 7, a 5; nothing was applied"
				if got.Status.Message != msg {
					t.Fatalf("message %q", got.Status.Message)
				}
				for g, c := range cs {
					if r := c.Annotations[v1alpha1.AnnotationReject]; !strings.Contains(r, "LimitExceeded of incident") || c.Annotations[v1alpha1.AnnotationApprovedBy] != EventSource {
						t.Errorf("%s not rejected by the launcher: %v", g, c.Annotations)
					}
				}
				return
			}
			if got.Status.Plan == nil || got.Status.Plan.Totals.MessagesToReconsume != 21 {
				t.Fatalf("plan %+v", got.Status.Plan)
			}
			if tc.manual {
				if got.Status.Phase != v1alpha1.PhaseAwaitingApproval || got.Status.Approval != nil {
					t.Fatalf("phase %s, approval %+v", got.Status.Phase, got.Status.Approval)
				}
				return
			}
			if a := got.Status.Approval; a == nil || a.By != EventSource || a.Digest != got.Status.Plan.Digest || got.Status.Phase == v1alpha1.PhaseAwaitingApproval {
				t.Fatalf("approval %+v, phase %s", a, got.Status.Phase)
			}
			if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionAwaitingApproval); c == nil || c.Status != metav1.ConditionFalse || c.Reason != state.ReasonApproved ||
				!strings.Contains(c.Message, "21 message(s) to consume again over 3 group(s), within the 21 spec.limits.maxTotalMessagesToReconsume allows") {
				t.Errorf("AwaitingApproval %+v", c)
			}
			// In order under parallelism, each with its own digest, in
			// the launcher's name.
			if a := cs["a"].Annotations; a[v1alpha1.AnnotationApprove] != strings.Repeat("a", 16) || a[v1alpha1.AnnotationApprovedBy] != EventSource {
				t.Fatalf("a's annotations %v", a)
			}
			f.end(p, "a", true, "Applied", 1)
			f.pass(p)
			if b := f.children(p)["b"].Annotations; b[v1alpha1.AnnotationApprove] != strings.Repeat("b", 16) {
				t.Fatalf("b not approved after a ended: %v", b)
			}
		})
	}
}

// A dry run with a total guard runs its groups as dry runs (nothing to
// approve) and fails LimitExceeded, as the real run would, when their
// plans together re-consume more than it allows.
func TestUnitParentTotalGuardDryRun(t *testing.T) {
	for _, tc := range []struct {
		limit int64
		want  string
	}{{30, "LimitExceeded"}, {40, "DryRun"}} {
		p := testutil.MakeRequest("shop", fmt.Sprintf("rehearsal-%d", tc.limit)).Groups("a", "b").Obj()
		p.UID, p.Spec.DryRun, p.Spec.Parallelism = "parent-uid", true, 2
		p.Spec.Limits = &v1alpha1.Limits{MaxTotalMessagesToReconsume: &tc.limit}
		f := newFakeParents(t, p)
		f.pass(p)
		for g, c := range f.children(p) {
			if c.Spec.Approval == v1alpha1.ApprovalManual || !c.Spec.DryRun {
				t.Fatalf("%s's child plans for approval: %+v", g, c.Spec)
			}
		}
		f.end(p, "a", true, "DryRun", 2) // 20 messages each
		f.end(p, "b", true, "DryRun", 2)
		f.pass(p)
		got := f.get(p)
		if finishedAs(got) != tc.want {
			t.Fatalf("limit %d: finished %q: %s", tc.limit, finishedAs(got), got.Status.Message)
		}
		if tc.want == "LimitExceeded" && (got.Status.Phase != v1alpha1.PhaseFailed || !strings.Contains(got.Status.Message, "would re-consume 40 message(s), more than the 30")) {
			t.Fatalf("phase %s: %s", got.Status.Phase, got.Status.Message)
		}
	}
}

// A launcher restarted in the middle carries on from the cluster alone: a
// new ParentReconciler, after a pass whose status write never landed (the
// launcher died after making or deciding children), makes no child twice
// and says what the children did.
func TestUnitParentCarriesOnAfterALostPass(t *testing.T) {
	lost := func(f *fakeParents, p *v1alpha1.ReplayRequest) {
		t.Helper()
		f.failStatus = true
		if _, err := f.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(p)}); err == nil {
			t.Fatal("the lost pass reported no error")
		}
		f.failStatus = false
		// The next launcher: a new reconciler over the same cluster.
		f.r = &ParentReconciler{Client: f.c, APIReader: f.c, Recorder: events.NewFakeRecorder(100), Now: f.clock.Now}
	}
	t.Run("a child made, status lost", func(t *testing.T) {
		p := testutil.MakeRequest("shop", "incident").Groups("a", "b").Obj()
		p.UID = "parent-uid"
		f := newFakeParents(t, p)
		lost(f, p)
		if got := f.get(p); len(got.Status.Conditions) != 0 || len(f.children(p)) != 1 {
			t.Fatalf("after the lost pass: status %+v, %d children", got.Status, len(f.children(p)))
		}
		f.pass(p)
		if got := f.get(p); rowsOf(got) != "a=Pending/ b=Waiting/" || len(f.children(p)) != 1 {
			t.Fatalf("rows %s, %d children", rowsOf(got), len(f.children(p)))
		}
		f.end(p, "a", true, "Applied", 1)
		f.pass(p)
		f.end(p, "b", true, "Applied", 1)
		f.pass(p)
		if got := f.get(p); finishedAs(got) != "Applied" || f.uids != 2 {
			t.Fatalf("finished %q, %d objects created: %s", finishedAs(got), f.uids, got.Status.Message)
		}
	})
	// The pass that approved the parent approved its first child and
	// died before recording the approval; the child ran and failed
	// meanwhile. The parent must not say nothing was applied.
	t.Run("approval lost, its child failed meanwhile", func(t *testing.T) {
		p := testutil.MakeRequest("shop", "incident").Groups("a", "b").Manual().Obj()
		p.UID = "parent-uid"
		f := newFakeParents(t, p)
		f.pass(p)
		f.planned(p, "a", strings.Repeat("a", 16))
		f.pass(p)
		f.planned(p, "b", strings.Repeat("b", 16))
		f.pass(p)
		digest := f.get(p).Status.Plan.Digest
		f.annotate(p, v1alpha1.AnnotationApprove, digest, v1alpha1.AnnotationApprovedBy, "bob")
		lost(f, p)
		if a := f.children(p)["a"].Annotations[v1alpha1.AnnotationApprove]; a != strings.Repeat("a", 16) {
			t.Fatalf("a not approved by the lost pass: %q", a)
		}
		// a's own reconciler took the approval, ran its Job, and failed.
		c := f.children(p)["a"]
		c.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: "bob", Digest: c.Status.Plan.Digest}
		if err := f.c.Status().Update(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		f.end(p, "a", false, "KafkaError", 0)
		f.pass(p)
		got := f.get(p)
		if finishedAs(got) != "KafkaError" && finishedAs(got) != "PartiallyApplied" {
			t.Fatalf("finished %q: %s", finishedAs(got), got.Status.Message)
		}
		if strings.Contains(got.Status.Message, "nothing applied") || got.Status.Approval == nil || got.Status.Approval.By != "bob" {
			t.Fatalf("after a's apply failed: approval %+v, message %q", got.Status.Approval, got.Status.Message)
		}
		if rowsOf(got) != "a=Failed/KafkaError b=NotAttempted/NotAttempted" {
			t.Fatalf("rows %s", rowsOf(got))
		}
		if _, ok := f.children(p)["b"].Annotations[v1alpha1.AnnotationApprove]; ok {
			t.Fatal("b approved after a failed without continueOnError")
		}
	})
	// An Automatic parent with a total guard plans, judges and approves
	// in one pass: that pass lost, its plan and approval are made again
	// from the children, even after the first approved child failed.
	t.Run("a total guard's approval lost, its child failed meanwhile", func(t *testing.T) {
		p := testutil.MakeRequest("shop", "incident").Groups("a", "b").Obj()
		limit := int64(100)
		p.UID, p.Spec.Limits = "parent-uid", &v1alpha1.Limits{MaxTotalMessagesToReconsume: &limit}
		f := newFakeParents(t, p)
		f.pass(p)
		f.planned(p, "a", strings.Repeat("a", 16))
		f.pass(p)
		f.planned(p, "b", strings.Repeat("b", 16))
		lost(f, p)
		c := f.children(p)["a"]
		if c.Annotations[v1alpha1.AnnotationApprove] != strings.Repeat("a", 16) {
			t.Fatalf("a not approved by the lost pass: %v", c.Annotations)
		}
		c.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: EventSource, Digest: c.Status.Plan.Digest}
		if err := f.c.Status().Update(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		f.end(p, "a", false, "KafkaError", 0)
		f.pass(p)
		got := f.get(p)
		if strings.Contains(got.Status.Message, "nothing applied") || got.Status.Approval == nil || rowsOf(got) != "a=Failed/KafkaError b=NotAttempted/NotAttempted" {
			t.Fatalf("finished %q, approval %+v, rows %s: %s", finishedAs(got), got.Status.Approval, rowsOf(got), got.Status.Message)
		}
	})
}
