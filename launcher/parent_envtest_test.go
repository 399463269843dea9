package launcher_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/fanout"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// Many groups in one request (issue 30, docs/groups.md): a parent fans out
// into one child request per group, each run by the launcher as any
// request; here the test plays the Job controller for each child's Job.

// parentOf is a request over groups, stamped with a requester as the
// chart's admission policy would.
func parentOf(ns, name string, groups ...string) *v1alpha1.ReplayRequest {
	p := testutil.MakeRequest(ns, name).Groups(groups...).Obj()
	p.Annotations = map[string]string{v1alpha1.AnnotationRequestedBy: "alice", v1alpha1.AnnotationRequestedByGroups: "team-orders"}
	return p
}

// childOf waits for group's child of p.
func childOf(t *testing.T, p *v1alpha1.ReplayRequest, group string) *v1alpha1.ReplayRequest {
	t.Helper()
	c := &v1alpha1.ReplayRequest{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: fanout.ChildName(p.Name, group)}}
	eventually(t, 20*time.Second, "the child of "+group, func() error {
		return k8s.Get(context.Background(), client.ObjectKeyFromObject(c), c)
	})
	return c
}

// children lists p's children, by group.
func children(t *testing.T, p *v1alpha1.ReplayRequest) map[string]*v1alpha1.ReplayRequest {
	t.Helper()
	var list v1alpha1.ReplayRequestList
	if err := k8s.List(context.Background(), &list, client.InNamespace(p.Namespace), client.MatchingLabels{v1alpha1.LabelParent: p.Name}); err != nil {
		t.Fatal(err)
	}
	out := map[string]*v1alpha1.ReplayRequest{}
	for i := range list.Items {
		out[list.Items[i].Spec.Group] = &list.Items[i]
	}
	return out
}

// runChild plays group's child Job to the end with the runner's exit code.
func runChild(t *testing.T, p *v1alpha1.ReplayRequest, group string, code report.ExitCode) {
	t.Helper()
	c := childOf(t, p, group)
	job := waitJob(t, c)
	runPod(t, job, 0, int32(code), testutil.Compact(testutil.Result(group, code, 5)))
	fail := ""
	if code != report.ExitOK {
		fail = batchv1.JobReasonPodFailurePolicy
	}
	finishJob(t, job, fail)
	want := v1alpha1.PhaseSucceeded
	if code != report.ExitOK {
		want = v1alpha1.PhaseFailed
	}
	waitPhase(t, c, want)
}

// rows is p's status rows as group=phase/reason.
func rows(p *v1alpha1.ReplayRequest) string {
	var s []string
	for _, r := range p.Status.Groups {
		s = append(s, fmt.Sprintf("%s=%s/%s", r.Group, r.Phase, r.Reason))
	}
	return strings.Join(s, " ")
}

// waitRows waits for p's rows to read want.
func waitRows(t *testing.T, p *v1alpha1.ReplayRequest, want string) *v1alpha1.ReplayRequest {
	t.Helper()
	var cur *v1alpha1.ReplayRequest
	eventually(t, 20*time.Second, p.Name+" rows "+want, func() error {
		cur = getRR(t, p)
		if got := rows(cur); got != want {
			return fmt.Errorf("rows %s", got)
		}
		return nil
	})
	return cur
}

func TestEnvtestParentAppliesAnExplicitList(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 4)

	p := parentOf(ns, "incident", "billing", "audit", "search")
	create(t, p)
	for i, g := range []string{"billing", "audit", "search"} {
		c := childOf(t, p, g)
		// parallelism 1: one child at a time, in the order given.
		if n := len(children(t, p)); n != i+1 {
			t.Fatalf("%d children while %s runs, want %d", n, g, i+1)
		}
		if err := fanout.CheckAdopted(getRR(t, p), c, g); err != nil {
			t.Fatal(err)
		}
		runChild(t, p, g, report.ExitOK)
		// The child's checks are made for the parent's requester.
		if got := getRR(t, c).Status.RequestedBy; got != "alice" {
			t.Errorf("%s's requester is %q, want the parent's", c.Name, got)
		}
	}
	cur := waitPhase(t, p, v1alpha1.PhaseSucceeded)
	if f := condition(cur, v1alpha1.ConditionFinished); f == nil || f.Reason != "Applied" {
		t.Fatalf("Finished = %+v", f)
	}
	if got := rows(cur); got != "billing=Succeeded/Applied audit=Succeeded/Applied search=Succeeded/Applied" {
		t.Fatalf("rows %s", got)
	}
	if r := cur.Status.Groups[0]; r.Moved != 1 || r.MessagesToReconsume != 5 || r.Child != fanout.ChildName(p.Name, "billing") {
		t.Errorf("billing's row %+v", r)
	}
	if cur.Status.ObservedGeneration != cur.Generation || cur.Status.RequestedBy != "alice" || cur.Status.JobName != "" {
		t.Errorf("status %+v", cur.Status)
	}
	// One Job per group, none for the parent.
	for _, g := range []string{"billing", "audit", "search"} {
		if n := len(jobsOf(t, ns, map[string]string{v1alpha1.LabelGroup: g})); n != 1 {
			t.Errorf("%d Jobs of %s", n, g)
		}
	}
	if n := len(jobsOf(t, ns, map[string]string{v1alpha1.LabelRequest: p.Name})); n != 0 {
		t.Errorf("the parent has %d Jobs", n)
	}
	// The children's Jobs, and so their records, carry the parent.
	js := jobsOf(t, ns, map[string]string{v1alpha1.LabelParent: p.Name})
	if len(js) != 3 {
		t.Fatalf("%d Jobs labelled with the parent", len(js))
	}
	for _, j := range js {
		if j.Annotations[v1alpha1.AnnotationParent] != p.Name {
			t.Errorf("Job %s annotations %v", j.Name, j.Annotations)
		}
	}
	eventually(t, 10*time.Second, "the records carry the parent", func() error {
		for _, j := range js {
			rec := getRecord(t, ns, j.Name)
			if rec.Annotations[v1alpha1.AnnotationParent] != p.Name || rec.Labels[v1alpha1.LabelParent] != p.Name {
				return fmt.Errorf("record %s: labels %v annotations %v", rec.Name, rec.Labels, rec.Annotations)
			}
		}
		return nil
	})
}

// A group another request holds: its child waits in its group's queue, the
// others apply meanwhile, and the parent holds nothing while it waits.
func TestEnvtestParentBusyGroupWhileOthersApply(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 4)

	holder := testutil.MakeRequest(ns, "holder").Group("audit").Obj()
	create(t, holder)
	holderJob := waitJob(t, holder)

	p := parentOf(ns, "incident", "audit", "billing", "search")
	p.Spec.Parallelism = 2
	create(t, p)
	audit := childOf(t, p, "audit")
	eventually(t, 20*time.Second, "audit's child waits for the holder", func() error {
		c := condition(getRR(t, audit), v1alpha1.ConditionAccepted)
		if c == nil || c.Reason != state.ReasonWaitingForGroup || !strings.Contains(c.Message, "holder") {
			return fmt.Errorf("Accepted = %+v", c)
		}
		return nil
	})
	runChild(t, p, "billing", report.ExitOK)
	runChild(t, p, "search", report.ExitOK)
	waitRows(t, p, "audit=Pending/ billing=Succeeded/Applied search=Succeeded/Applied")
	// Another request of billing is not held up by the parent.
	other := testutil.MakeRequest(ns, "other-billing").Group("billing").Obj()
	create(t, other)
	waitJob(t, other)

	runPod(t, holderJob, 0, 0, testutil.Compact(testutil.Result("audit", report.ExitOK, 1)))
	finishJob(t, holderJob, "")
	runChild(t, p, "audit", report.ExitOK)
	cur := waitPhase(t, p, v1alpha1.PhaseSucceeded)
	if f := condition(cur, v1alpha1.ConditionFinished); f.Reason != "Applied" {
		t.Fatalf("Finished = %+v", f)
	}
}

func TestEnvtestParentContinueOnError(t *testing.T) {
	env(t)
	for _, cont := range []bool{false, true} {
		t.Run(fmt.Sprintf("continueOnError=%v", cont), func(t *testing.T) {
			ns := newNamespace(t, nil)
			startLauncher(t, testOptions(), 4)
			p := parentOf(ns, "incident", "a", "b", "c")
			p.Spec.ContinueOnError = cont
			create(t, p)
			runChild(t, p, "a", report.ExitGroupActive)
			if !cont {
				cur := waitPhase(t, p, v1alpha1.PhaseFailed)
				if f := condition(cur, v1alpha1.ConditionFinished); f.Reason != "GroupActive" || !strings.Contains(f.Message, "not attempted") {
					t.Fatalf("Finished = %+v", f)
				}
				if got := rows(cur); got != "a=Failed/GroupActive b=NotAttempted/NotAttempted c=NotAttempted/NotAttempted" {
					t.Fatalf("rows %s", got)
				}
				if n := len(children(t, p)); n != 1 {
					t.Fatalf("%d children after a failed group without continueOnError", n)
				}
				return
			}
			runChild(t, p, "b", report.ExitOK)
			runChild(t, p, "c", report.ExitOK)
			cur := waitPhase(t, p, v1alpha1.PhaseFailed)
			if f := condition(cur, v1alpha1.ConditionFinished); f.Reason != "PartiallyApplied" || !strings.Contains(f.Message, "at this run's commit: b, c") {
				t.Fatalf("Finished = %+v", f)
			}
		})
	}
}

// The launcher stops while a child runs; a new one finishes the parent
// from the cluster alone, making no child and no Job twice.
func TestEnvtestParentSurvivesALauncherRestart(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	first := startLauncher(t, testOptions(), 4)
	p := parentOf(ns, "incident", "a", "b", "c")
	create(t, p)
	runChild(t, p, "a", report.ExitOK)
	b := childOf(t, p, "b")
	bJob := waitJob(t, b)
	first.stop(t)

	startLauncher(t, testOptions(), 4)
	runPod(t, bJob, 0, 0, testutil.Compact(testutil.Result("b", report.ExitOK, 5)))
	finishJob(t, bJob, "")
	runChild(t, p, "c", report.ExitOK)
	cur := waitPhase(t, p, v1alpha1.PhaseSucceeded)
	if got := rows(cur); got != "a=Succeeded/Applied b=Succeeded/Applied c=Succeeded/Applied" {
		t.Fatalf("rows %s", got)
	}
	if n := len(children(t, p)); n != 3 {
		t.Fatalf("%d children", n)
	}
	for _, g := range []string{"a", "b", "c"} {
		if n := len(jobsOf(t, ns, map[string]string{v1alpha1.LabelGroup: g})); n != 1 {
			t.Errorf("%d Jobs of %s: a group ran twice", n, g)
		}
	}
}

// A request made ahead under a child's name, owned by the parent but with
// another spec, is not adopted: the parent fails ChildTampered and starts
// nothing.
func TestEnvtestParentRefusesAForgedChild(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	p := parentOf(ns, "incident", "billing", "audit")
	create(t, p) // no launcher yet
	ctrl := true
	forged := fanout.Child(getRR(t, p), "audit")
	forged.Spec.Target = v1alpha1.Target{Offset: new(int64)}
	forged.OwnerReferences[0].Controller = &ctrl
	create(t, forged)

	startLauncher(t, testOptions(), 4)
	cur := waitPhase(t, p, v1alpha1.PhaseFailed)
	if f := condition(cur, v1alpha1.ConditionFinished); f.Reason != state.ReasonChildTampered || !strings.Contains(f.Message, "spec is not the parent's") {
		t.Fatalf("Finished = %+v", f)
	}
	if c := children(t, p); len(c) != 1 || c["billing"] != nil {
		t.Fatalf("children %v: the parent started a group", c)
	}
	waitEvent(t, ns, p.Name, state.ReasonChildTampered)
	var bj batchv1.JobList
	if err := k8s.List(context.Background(), &bj, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelGroup: "billing"}); err != nil || len(bj.Items) != 0 {
		t.Fatalf("billing Jobs %d (%v)", len(bj.Items), err)
	}
}

// One plan and one approval over the groups: the children plan and wait;
// the parent's digest covers every child's plan; approved, the launcher
// approves each child with its own digest in the approver's name, and a
// child whose plan went stale fails PlanStale on its own.
func TestEnvtestParentManualApproval(t *testing.T) {
	e := newApprovalEnv(t)
	p := testutil.MakeRequest(e.ns, "incident").Groups("a", "b", "c").Topic("orders").ShiftBy(-10).Manual().Obj()
	p.Spec.ContinueOnError = true
	create(t, p)
	var plans []fanout.ChildPlan
	for _, g := range []string{"a", "b", "c"} {
		c := childOf(t, p, g)
		plan := planOf(g)
		e.playPlan(t, planJobOf(t, c), plan)
		awaiting(t, c)
		plans = append(plans, fanout.ChildPlan{Group: g, Plan: plan.Plan})
	}
	digest, _, _ := fanout.PlanDigest(plans)
	cur := awaiting(t, p)
	if cur.Status.Plan.Digest != digest || cur.Status.Plan.Totals.MessagesToReconsume != 180 {
		t.Fatalf("parent plan %+v, want %s", cur.Status.Plan, digest)
	}
	for _, c := range children(t, p) {
		if _, ok := c.Annotations[v1alpha1.AnnotationApprove]; ok {
			t.Fatalf("%s approved before its parent", c.Name)
		}
	}
	// A child's digest approves nothing on the parent.
	annotate(t, p, v1alpha1.AnnotationApprove, plans[0].Plan, v1alpha1.AnnotationApprovedBy, "bob")
	waitEvent(t, e.ns, p.Name, state.ReasonApprovalRefused)
	annotate(t, p, v1alpha1.AnnotationApprove, digest, v1alpha1.AnnotationApprovedBy, "bob")

	// a applies its plan exactly.
	a := childOf(t, p, "a")
	aJob := waitJob(t, a)
	if aJob.Annotations[v1alpha1.AnnotationApprovedBy] != "bob" || aJob.Annotations[v1alpha1.AnnotationPlanDigest] != plans[0].Plan {
		t.Fatalf("a's apply Job %v", aJob.Annotations)
	}
	attempt(t, e.logs, aJob, aJob.Name+"-0", 0, appliedOf(planOf("a")), time.Now())
	finishJob(t, aJob, "")
	waitPhase(t, a, v1alpha1.PhaseSucceeded)
	// b's plan no longer holds when it runs.
	b := childOf(t, p, "b")
	bJob := waitJob(t, b)
	stale := *planOf("b")
	stale.DryRun, stale.ExitCode, stale.Reason = false, report.ExitRefused, report.ReasonPlanStale
	stale.Error = "the plan no longer holds; nothing was committed"
	attempt(t, e.logs, bJob, bJob.Name+"-0", int32(report.ExitRefused), &stale, time.Now())
	finishJob(t, bJob, batchv1.JobReasonPodFailurePolicy)
	waitPhase(t, b, v1alpha1.PhaseFailed)
	cJob := waitJob(t, childOf(t, p, "c"))
	attempt(t, e.logs, cJob, cJob.Name+"-0", 0, appliedOf(planOf("c")), time.Now())
	finishJob(t, cJob, "")

	done := waitPhase(t, p, v1alpha1.PhaseFailed)
	if got := rows(done); got != "a=Succeeded/Applied b=Failed/PlanStale c=Succeeded/Applied" {
		t.Fatalf("rows %s", got)
	}
	if f := condition(done, v1alpha1.ConditionFinished); f.Reason != "PartiallyApplied" {
		t.Fatalf("Finished %+v", f)
	}
	if ap := done.Status.Approval; ap == nil || ap.By != "bob" || ap.Digest != digest {
		t.Fatalf("approval %+v", ap)
	}
}

// The undo of a parent: one request, target.undoOf naming the parent and
// no group (as kubectl replay undo makes it); one undo child per group
// that applied, undoing its child; the group that failed is left, and the
// status says why.
func TestEnvtestParentUndo(t *testing.T) {
	ns, logs := startRecordingLauncher(t)
	p := parentOf(ns, "incident", "a", "b")
	p.Spec.ContinueOnError = true
	p.Spec.Target = v1alpha1.Target{ShiftBy: ptrTo(int64(-10))}
	create(t, p)
	a := childOf(t, p, "a")
	aJob := waitJob(t, a)
	res := rewindResult("a")
	res.RunID = runnerjob.RunID(getRR(t, a))
	attempt(t, logs, aJob, aJob.Name+"-0", 0, res, time.Now())
	finishJob(t, aJob, "")
	waitPhase(t, a, v1alpha1.PhaseSucceeded)
	b := childOf(t, p, "b")
	bJob := waitJob(t, b)
	attempt(t, logs, bJob, bJob.Name+"-0", int32(report.ExitGroupActive), testutil.Result("b", report.ExitGroupActive, 1), time.Now())
	finishJob(t, bJob, batchv1.JobReasonPodFailurePolicy)
	waitPhase(t, p, v1alpha1.PhaseFailed)

	undo := testutil.MakeRequest(ns, "incident-undo").UndoOf(p.Name).Obj()
	undo.Spec.Group, undo.Spec.Topics = "", nil
	undo.Annotations = p.Annotations
	create(t, undo) // the CRD admits an undo without group
	cur := waitRows(t, undo, "a=Pending/ b=NotAttempted/NothingToUndo")
	if c := condition(cur, v1alpha1.ConditionAccepted); c == nil || !strings.Contains(c.Message, "did not succeed (GroupActive") {
		t.Fatalf("Accepted %+v", c)
	}
	ua := childOf(t, undo, "a")
	if ua.Spec.Target.UndoOf == nil || *ua.Spec.Target.UndoOf != a.Name {
		t.Fatalf("a's undo %+v", ua.Spec.Target)
	}
	uJob := waitJob(t, ua)
	if uJob.Annotations[v1alpha1.AnnotationUndoOf] != a.Name || uJob.Annotations[v1alpha1.AnnotationParent] != undo.Name {
		t.Fatalf("undo Job annotations %v", uJob.Annotations)
	}
	ures := testutil.Result("a", report.ExitOK, -10, -20, -30)
	ures.RunID = runnerjob.RunID(getRR(t, ua))
	attempt(t, logs, uJob, uJob.Name+"-0", 0, ures, time.Now())
	finishJob(t, uJob, "")
	done := waitPhase(t, undo, v1alpha1.PhaseSucceeded)
	if got := rows(done); got != "a=Succeeded/Applied b=NotAttempted/NothingToUndo" {
		t.Fatalf("rows %s", got)
	}
	if n := len(children(t, undo)); n != 1 {
		t.Fatalf("%d undo children", n)
	}
	// Undone once: a second undo of the parent is refused child by child.
	again := testutil.MakeRequest(ns, "incident-undo-2").UndoOf(p.Name).Obj()
	again.Spec.Group, again.Spec.Topics = "", nil
	create(t, again)
	waitPhase(t, childOf(t, again, "a"), v1alpha1.PhaseFailed)
	if f := condition(getRR(t, childOf(t, again, "a")), v1alpha1.ConditionFinished); f.Reason != state.ReasonUndoRefused {
		t.Fatalf("a second undo's child: %+v", f)
	}
}

func ptrTo[T any](v T) *T { return &v }

// limits.maxTotalMessagesToReconsume on an Automatic parent: its children
// plan first (each a Manual request), and the launcher approves them only
// when their plans together are within the guard. Within, each applies its
// own plan, approved in the launcher's name; over, nothing is applied and
// every child is rejected, the parent failing LimitExceeded as one group's
// plan over maxMessagesToReconsume does.
func TestEnvtestParentTotalGuard(t *testing.T) {
	e := newApprovalEnv(t)
	for _, tc := range []struct {
		name  string
		limit int64 // each group's plan re-consumes 60 (planOf)
	}{{"within", 120}, {"over", 119}} {
		t.Run(tc.name, func(t *testing.T) {
			groups := []string{tc.name + "-a", tc.name + "-b"}
			p := testutil.MakeRequest(e.ns, "total-"+tc.name).Groups(groups...).Topic("orders").ShiftBy(-10).Obj()
			p.Spec.Parallelism, p.Spec.Limits = 2, &v1alpha1.Limits{MaxTotalMessagesToReconsume: &tc.limit}
			create(t, p)
			plans := map[string]*report.Result{}
			for _, g := range groups {
				c := childOf(t, p, g)
				if c.Spec.Approval != v1alpha1.ApprovalManual || c.Spec.Limits != nil {
					t.Fatalf("%s's child spec %+v", g, c.Spec)
				}
				plans[g] = planOf(g)
				e.playPlan(t, planJobOf(t, c), plans[g])
			}
			if tc.name == "over" {
				done := waitPhase(t, p, v1alpha1.PhaseFailed)
				if f := condition(done, v1alpha1.ConditionFinished); f.Reason != string(report.ReasonLimitExceeded) ||
					!strings.Contains(f.Message, "would re-consume 120 message(s), more than the 119 spec.limits.maxTotalMessagesToReconsume allows, over 2 group(s)") {
					t.Fatalf("Finished %+v", f)
				}
				if done.Status.Plan != nil || done.Status.Approval != nil {
					t.Fatalf("plan %+v, approval %+v", done.Status.Plan, done.Status.Approval)
				}
				for _, g := range groups {
					c := waitPhase(t, childOf(t, p, g), v1alpha1.PhaseFailed)
					if f := condition(c, v1alpha1.ConditionFinished); f.Reason != state.ReasonRejected {
						t.Errorf("%s's child finished %+v", g, f)
					}
					noApplyJob(t, c)
				}
				return
			}
			for _, g := range groups {
				c := childOf(t, p, g)
				job := waitJob(t, c)
				if job.Annotations[v1alpha1.AnnotationApprovedBy] != "kafka-replay-launcher" || job.Annotations[v1alpha1.AnnotationPlanDigest] != plans[g].Plan {
					t.Fatalf("%s's apply Job %v", g, job.Annotations)
				}
				attempt(t, e.logs, job, job.Name+"-0", 0, appliedOf(plans[g]), time.Now())
				finishJob(t, job, "")
			}
			done := waitPhase(t, p, v1alpha1.PhaseSucceeded)
			if a := done.Status.Approval; a == nil || a.By != "kafka-replay-launcher" || done.Status.Plan == nil || a.Digest != done.Status.Plan.Digest || done.Status.Plan.Totals.MessagesToReconsume != 120 {
				t.Fatalf("approval %+v, plan %+v", a, done.Status.Plan)
			}
		})
	}
}

// A Manual parent across launcher restarts: one while its groups plan,
// one while it awaits approval (approved while no launcher runs), one
// while a group applies. Each new launcher carries on from the cluster:
// every group planned once and applied once, no child made twice.
func TestEnvtestParentManualSurvivesLauncherRestarts(t *testing.T) {
	e := newApprovalEnv(t)
	groups := []string{"restart-a", "restart-b"}
	p := testutil.MakeRequest(e.ns, "restarted").Groups(groups...).Topic("orders").ShiftBy(-10).Manual().Obj()
	create(t, p)
	a := childOf(t, p, groups[0])
	aPlan := planJobOf(t, a)
	e.restart(t, func() { e.playPlan(t, aPlan, planOf(groups[0])) })
	b := childOf(t, p, groups[1])
	e.playPlan(t, planJobOf(t, b), planOf(groups[1]))
	cur := awaiting(t, p)
	digest := cur.Status.Plan.Digest
	e.restart(t, func() { annotate(t, p, v1alpha1.AnnotationApprove, digest, v1alpha1.AnnotationApprovedBy, "bob") })
	aJob := waitJob(t, a)
	e.restart(t, func() {
		attempt(t, e.logs, aJob, aJob.Name+"-0", 0, appliedOf(planOf(groups[0])), time.Now())
		finishJob(t, aJob, "")
	})
	bJob := waitJob(t, b)
	attempt(t, e.logs, bJob, bJob.Name+"-0", 0, appliedOf(planOf(groups[1])), time.Now())
	finishJob(t, bJob, "")
	done := waitPhase(t, p, v1alpha1.PhaseSucceeded)
	if got := rows(done); got != "restart-a=Succeeded/Applied restart-b=Succeeded/Applied" {
		t.Fatalf("rows %s", got)
	}
	if ap := done.Status.Approval; ap == nil || ap.By != "bob" || ap.Digest != digest || done.Status.Plan.Digest != digest {
		t.Fatalf("approval %+v, plan %+v", ap, done.Status.Plan)
	}
	if n := len(children(t, p)); n != 2 {
		t.Fatalf("%d children", n)
	}
	for _, g := range groups {
		// One planning Job and one apply Job per group.
		if n := len(jobsOf(t, e.ns, map[string]string{v1alpha1.LabelGroup: g})); n != 2 {
			t.Errorf("%d Jobs of %s", n, g)
		}
	}
}
