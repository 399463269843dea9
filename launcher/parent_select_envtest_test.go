package launcher_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/fanout"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// spec.groupSelector on a real API server: the list Job, its listing
// resolved once into status.resolvedGroups, and the children it makes;
// the test plays the Job controller and the kubelet for the list Job.

// selectorOf is a parent selecting the groups with these prefixes,
// stamped with a requester as the chart's admission policy would.
func selectorOf(ns, name string, prefixes ...string) *v1alpha1.ReplayRequest {
	p := testutil.MakeRequest(ns, name).Select(prefixes...).Obj()
	p.Annotations = map[string]string{v1alpha1.AnnotationRequestedBy: "alice", v1alpha1.AnnotationRequestedByGroups: "team-orders"}
	return p
}

// listJobsOf are p's list Jobs.
func listJobsOf(t *testing.T, p *v1alpha1.ReplayRequest) []batchv1.Job {
	t.Helper()
	return jobsOf(t, p.Namespace, map[string]string{v1alpha1.LabelStage: string(runnerjob.StageList), v1alpha1.LabelRequest: p.Name})
}

// waitListJob waits for p's list Job.
func waitListJob(t *testing.T, p *v1alpha1.ReplayRequest) *batchv1.Job {
	t.Helper()
	var job *batchv1.Job
	eventually(t, 20*time.Second, "the list Job of "+p.Name, func() error {
		js := listJobsOf(t, p)
		if len(js) != 1 {
			return fmt.Errorf("%d list Jobs", len(js))
		}
		job = &js[0]
		return nil
	})
	return job
}

// playList plays the list Job's pod: it lists groups, and the Job
// completes. The whole listing is on its log, as the runner writes it.
func playList(t *testing.T, logs *recordLogs, job *batchv1.Job, groups ...string) {
	t.Helper()
	msg, out := testutil.Listing(groups...)
	logs.PutText(job.Namespace, job.Name+"-0", "time=2026-03-01T09:30:00Z level=INFO msg=listing\n"+out)
	runPod(t, job, 0, 0, msg)
	finishJob(t, job, "")
}

func resolved(t *testing.T, p *v1alpha1.ReplayRequest, want ...string) *v1alpha1.ReplayRequest {
	t.Helper()
	var cur *v1alpha1.ReplayRequest
	eventually(t, 20*time.Second, p.Name+" resolved", func() error {
		cur = getRR(t, p)
		if !slices.Equal(cur.Status.ResolvedGroups, want) {
			return fmt.Errorf("resolvedGroups %v, status %+v", cur.Status.ResolvedGroups, cur.Status.Conditions)
		}
		return nil
	})
	return cur
}

// The whole way, with a launcher restart while the list Job runs: one
// list Job, its listing (read from the log: more groups than the
// termination message holds) resolved once, and each selected group run
// as a child.
func TestEnvtestSelectorResolvesAndRuns(t *testing.T) {
	e := newApprovalEnv(t)
	p := selectorOf(e.ns, "incident", "billing-")
	// Mounted as in every runner Job of the request (the pod's spec,
	// defaulted by the API server, is compared with the Job's).
	p.Spec.Kafka.SecretRef = &v1alpha1.LocalObjectReference{Name: "kafka-creds"}
	create(t, p)
	job := waitListJob(t, p)
	if len(job.Spec.Template.Spec.Volumes) != 1 {
		t.Fatalf("list Job volumes %+v", job.Spec.Template.Spec.Volumes)
	}
	eventually(t, 20*time.Second, "listing", func() error {
		c := condition(getRR(t, p), v1alpha1.ConditionAccepted)
		if c == nil || c.Status != metav1.ConditionUnknown || c.Reason != state.ReasonListingGroups || !strings.Contains(c.Message, job.Name) {
			return fmt.Errorf("Accepted %+v", c)
		}
		return nil
	})
	if cur := getRR(t, p); cur.Status.Phase != v1alpha1.PhasePending || len(children(t, p)) != 0 {
		t.Fatalf("while listing: phase %s, %d children", cur.Status.Phase, len(children(t, p)))
	}

	// The launcher restarts while the list Job runs: the new one finds it.
	e.restart(t, nil)
	var names []string
	for i := range 150 {
		names = append(names, fmt.Sprintf("other-%03d", i))
	}
	names = append(names, "billing-us", "billing-eu")
	playList(t, e.logs, job, names...)
	resolved(t, p, "billing-eu", "billing-us")
	runChild(t, p, "billing-eu", report.ExitOK)
	runChild(t, p, "billing-us", report.ExitOK)
	cur := waitPhase(t, p, v1alpha1.PhaseSucceeded)
	if got := rows(cur); got != "billing-eu=Succeeded/Applied billing-us=Succeeded/Applied" {
		t.Fatalf("rows %s", got)
	}
	if n := len(listJobsOf(t, p)); n != 1 {
		t.Fatalf("%d list Jobs", n)
	}
	if n := len(children(t, p)); n != 2 {
		t.Fatalf("%d children", n)
	}
	waitEvent(t, e.ns, p.Name, state.ReasonListingGroups)
}

// A selector that matches nothing is refused, saying so, and nothing is
// made but the list Job.
func TestEnvtestSelectorMatchesNothing(t *testing.T) {
	e := newApprovalEnv(t)
	p := selectorOf(e.ns, "incident", "billing-")
	create(t, p)
	playList(t, e.logs, waitListJob(t, p), "audit", "search")
	cur := waitPhase(t, p, v1alpha1.PhaseFailed)
	f := condition(cur, v1alpha1.ConditionFinished)
	if f.Reason != state.ReasonNoGroupsMatched || !strings.Contains(f.Message, "spec.groupSelector: matches no group of the 2 groups the cluster lists") {
		t.Fatalf("Finished %+v", f)
	}
	if len(children(t, p)) != 0 || len(cur.Status.ResolvedGroups) != 0 {
		t.Fatalf("children %v, resolvedGroups %v", children(t, p), cur.Status.ResolvedGroups)
	}
	waitEvent(t, e.ns, p.Name, state.ReasonNoGroupsMatched)
}

// One plan, one approval over the listed groups: a group that appears
// after the listing is not planned, not approved, not run; the listing
// is not redone.
func TestEnvtestSelectorApprovalAfterNewGroups(t *testing.T) {
	e := newApprovalEnv(t)
	p := testutil.MakeRequest(e.ns, "incident").Select("billing-").Topic("orders").ShiftBy(-10).Manual().Obj()
	p.Annotations = map[string]string{v1alpha1.AnnotationRequestedBy: "alice"}
	create(t, p)
	job := waitListJob(t, p)
	playList(t, e.logs, job, "billing-eu", "billing-us")
	resolved(t, p, "billing-eu", "billing-us")
	var plans []fanout.ChildPlan
	for _, g := range []string{"billing-eu", "billing-us"} {
		c := childOf(t, p, g)
		plan := planOf(g)
		e.playPlan(t, planJobOf(t, c), plan)
		awaiting(t, c)
		plans = append(plans, fanout.ChildPlan{Group: g, Plan: plan.Plan})
	}
	digest, _, _ := fanout.PlanDigest(plans)
	cur := awaiting(t, p)
	if cur.Status.Plan.Digest != digest {
		t.Fatalf("plan %s, want %s", cur.Status.Plan.Digest, digest)
	}
	// billing-new appears: its listing, on the list Job's pod, is never
	// read again.
	var pod = testutil.PodFor(job, job.Name+"-0")
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.ContainerStatuses[0].State.Terminated.Message, _ = testutil.Listing("billing-eu", "billing-new", "billing-us")
	if err := k8s.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	annotate(t, p, v1alpha1.AnnotationApprove, digest, v1alpha1.AnnotationApprovedBy, "bob")
	for _, g := range []string{"billing-eu", "billing-us"} {
		c := childOf(t, p, g)
		j := waitJob(t, c)
		attempt(t, e.logs, j, j.Name+"-0", 0, appliedOf(planOf(g)), time.Now())
		finishJob(t, j, "")
	}
	done := waitPhase(t, p, v1alpha1.PhaseSucceeded)
	if !slices.Equal(done.Status.ResolvedGroups, []string{"billing-eu", "billing-us"}) || len(children(t, p)) != 2 {
		t.Fatalf("resolvedGroups %v, children %v", done.Status.ResolvedGroups, children(t, p))
	}
	if ap := done.Status.Approval; ap == nil || ap.Digest != digest {
		t.Fatalf("approval %+v", ap)
	}
	if n := len(listJobsOf(t, p)); n != 1 {
		t.Fatalf("%d list Jobs", n)
	}
}

// A status.resolvedGroups written by someone else: before acceptance,
// refused unless the listing gives it; after, the CRD refuses the change.
func TestEnvtestSelectorForgedResolvedGroups(t *testing.T) {
	e := newApprovalEnv(t)
	e.l.stop(t)
	p := selectorOf(e.ns, "incident", "billing-")
	create(t, p)
	forged := getRR(t, p)
	forged.Status.ResolvedGroups = []string{"billing-eu", "payments"}
	if err := k8s.Status().Update(context.Background(), forged); err != nil {
		t.Fatal(err)
	}
	e.l = startLauncher(t, e.opts, 2)
	playList(t, e.logs, waitListJob(t, p), "billing-eu", "billing-us")
	cur := waitPhase(t, p, v1alpha1.PhaseFailed)
	if f := condition(cur, v1alpha1.ConditionFinished); f.Reason != "InvalidInput" || !strings.Contains(f.Message, "status.resolvedGroups was written before the launcher accepted the request") {
		t.Fatalf("Finished %+v", f)
	}
	if len(children(t, p)) != 0 {
		t.Fatalf("children %v", children(t, p))
	}

	// Accepted: the CRD keeps what the launcher wrote.
	q := selectorOf(e.ns, "incident-2", "billing-")
	create(t, q)
	playList(t, e.logs, waitListJob(t, q), "billing-eu")
	resolved(t, q, "billing-eu")
	// The launcher goes on writing the parent's status (its child's row),
	// so a write from a copy read a moment before may meet a conflict
	// rather than the CRD's rule: read it again and retry on those.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		acc := getRR(t, q)
		acc.Status.ResolvedGroups = append(acc.Status.ResolvedGroups, "payments")
		return k8s.Status().Update(context.Background(), acc)
	})
	if err == nil || !strings.Contains(err.Error(), "status.resolvedGroups is written once") {
		t.Fatalf("a changed resolvedGroups: %v", err)
	}
}

// A Job planted under the list Job's name is not adopted, and its
// listing is never read.
func TestEnvtestSelectorRefusesAPlantedListJob(t *testing.T) {
	e := newApprovalEnv(t)
	e.l.stop(t)
	p := selectorOf(e.ns, "incident", "billing-")
	create(t, p)
	planted, err := runnerjob.BuildList(getRR(t, p), e.opts.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	planted.OwnerReferences = nil
	create(t, planted)
	e.l = startLauncher(t, e.opts, 2)
	cur := waitPhase(t, p, v1alpha1.PhaseFailed)
	if f := condition(cur, v1alpha1.ConditionFinished); f.Reason != state.ReasonJobConflict || !strings.Contains(f.Message, planted.Name) {
		t.Fatalf("Finished %+v", f)
	}
	if len(children(t, p)) != 0 {
		t.Fatalf("children %v", children(t, p))
	}
}
