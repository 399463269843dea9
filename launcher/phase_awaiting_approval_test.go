package launcher

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/approval"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

func TestUnitDecideApproval(t *testing.T) {
	const digest = "0123456789abcdef"
	expires := t0.Add(time.Hour)
	plan := func(annotations ...string) *v1alpha1.ReplayRequest {
		w := testutil.MakeRequest("ns", "a").Manual()
		for i := 0; i+1 < len(annotations); i += 2 {
			w.Annotate(annotations[i], annotations[i+1])
		}
		rr := w.Obj()
		rr.Status.Plan = &v1alpha1.PlanSummary{Digest: digest, JobName: "a-plan", ExpiresAt: &metav1.Time{Time: expires}}
		return rr
	}
	const (
		approve = v1alpha1.AnnotationApprove
		reject  = v1alpha1.AnnotationReject
		by      = v1alpha1.AnnotationApprovedBy
	)
	type approvalCase struct {
		name string
		rr   *v1alpha1.ReplayRequest
		now  time.Time
		want approval.Decision
	}
	cases := []approvalCase{
		{"nothing yet", plan(), t0, approval.Decision{Verdict: approval.VerdictWaiting}},
		{"approved with the digest", plan(approve, digest, by, "bob"), t0, approval.Decision{Verdict: approval.VerdictApproved, By: "bob", Value: digest}},
		{"approved, nothing stamped who", plan(approve, digest), t0, approval.Decision{Verdict: approval.VerdictApproved, By: "unknown", Value: digest}},
		{"another digest", plan(approve, "fedcba9876543210", by, "bob"), t0, approval.Decision{Verdict: approval.VerdictWrongDigest, By: "bob", Value: "fedcba9876543210"}},
		{"the digest in capitals is another value", plan(approve, strings.ToUpper(digest)), t0, approval.Decision{Verdict: approval.VerdictWrongDigest, By: "unknown", Value: strings.ToUpper(digest)}},
		{"an empty approve", plan(approve, ""), t0, approval.Decision{Verdict: approval.VerdictWrongDigest, By: "unknown"}},
		{"rejected", plan(reject, "wrong topic", by, "carol"), t0, approval.Decision{Verdict: approval.VerdictRejected, By: "carol", Value: "wrong topic"}},
		{"rejected with no reason", plan(reject, ""), t0, approval.Decision{Verdict: approval.VerdictRejected, By: "unknown"}},
		{"rejected and approved: the rejection wins", plan(approve, digest, reject, "no"), t0, approval.Decision{Verdict: approval.VerdictRejected, By: "unknown", Value: "no"}},
		{"expired", plan(), expires, approval.Decision{Verdict: approval.VerdictExpired}},
		{"approved after the expiry: expired", plan(approve, digest), expires.Add(time.Second), approval.Decision{Verdict: approval.VerdictExpired}},
		{"rejected after the expiry: rejected", plan(reject, "late"), expires.Add(time.Second), approval.Decision{Verdict: approval.VerdictRejected, By: "unknown", Value: "late"}},
		{"a second before the expiry", plan(approve, digest), expires.Add(-time.Second), approval.Decision{Verdict: approval.VerdictApproved, By: "unknown", Value: digest}},
		{"a long reason is bounded", plan(reject, strings.Repeat("x", 5000)), t0, approval.Decision{Verdict: approval.VerdictRejected, By: "unknown", Value: strings.Repeat("x", 1024)}},
	}
	// A status writer leaving out expiresAt: plannedAt + approvalTimeout,
	// and a plan of unknown age has expired.
	noExpiry := plan(approve, digest)
	noExpiry.Status.Plan.ExpiresAt = nil
	noExpiry.Status.Plan.PlannedAt = &metav1.Time{Time: t0}
	noTimes := plan(approve, digest)
	noTimes.Status.Plan.ExpiresAt = nil
	cases = append(cases,
		approvalCase{"no expiresAt: plannedAt + 24h", noExpiry, t0.Add(23 * time.Hour), approval.Decision{Verdict: approval.VerdictApproved, By: "unknown", Value: digest}},
		approvalCase{"no expiresAt: expired after plannedAt + 24h", noExpiry, t0.Add(24 * time.Hour), approval.Decision{Verdict: approval.VerdictExpired}},
		approvalCase{"neither time: expired", noTimes, t0, approval.Decision{Verdict: approval.VerdictExpired}},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := approval.Decide(c.rr, c.now); got != c.want {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// Only the request's own approve annotation of the plan in status lets a
// Manual request have an apply Job, and only one applying that plan.
func TestUnitCheckApproved(t *testing.T) {
	const digest = "0123456789abcdef"
	in := &runnerjob.Input{Kind: runnerjob.InputPlan, ConfigMap: "a-input", Digest: "sha256:00"}
	base := func() *v1alpha1.ReplayRequest {
		rr := testutil.MakeRequest("ns", "a").Manual().Annotate(v1alpha1.AnnotationApprove, digest).Annotate(v1alpha1.AnnotationApprovedBy, "bob").Obj()
		rr.Status.Plan = &v1alpha1.PlanSummary{Digest: digest, JobName: "a-plan"}
		rr.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: "bob", Digest: digest}
		return rr
	}
	noApproval := base()
	noApproval.Status.Approval = nil
	rejected := base()
	rejected.Status.Approval.Decision = v1alpha1.ApprovalRejected
	statusOnly := base()
	delete(statusOnly.Annotations, v1alpha1.AnnotationApprove)
	otherPlan := base()
	otherPlan.Status.Plan.Digest = "fedcba9876543210"
	otherApprover := base()
	otherApprover.Status.Approval.By = "mallory"
	unstamped := base()
	delete(unstamped.Annotations, v1alpha1.AnnotationApprovedBy)
	unstamped.Status.Approval.By = v1alpha1.RequesterUnknown
	automatic := testutil.MakeRequest("ns", "a").Obj()

	cases := []struct {
		name  string
		rr    *v1alpha1.ReplayRequest
		stage runnerjob.Stage
		in    *runnerjob.Input
		ok    bool
	}{
		{"approved, with its plan", base(), runnerjob.StageApply, in, true},
		{"approved, without the plan as input", base(), runnerjob.StageApply, nil, false},
		{"approved, with an undo input", base(), runnerjob.StageApply, &runnerjob.Input{Kind: runnerjob.InputUndo}, false},
		{"not approved", noApproval, runnerjob.StageApply, in, false},
		{"rejected", rejected, runnerjob.StageApply, in, false},
		{"approved in status only (no annotation)", statusOnly, runnerjob.StageApply, in, false},
		{"the approval is of another plan", otherPlan, runnerjob.StageApply, in, false},
		{"status names another approver than the request's stamp", otherApprover, runnerjob.StageApply, in, false},
		{"nothing stamped who, and status says unknown", unstamped, runnerjob.StageApply, in, true},
		{"the planning Job needs no approval", noApproval, runnerjob.StagePlan, nil, true},
		{"Automatic needs none", automatic, runnerjob.StageApply, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := checkApproved(c.rr, c.stage, c.in); (err == nil) != c.ok {
				t.Fatalf("err %v, want ok %v", err, c.ok)
			}
		})
	}
}

func TestUnitPhaseForAwaitingApproval(t *testing.T) {
	rr := testutil.MakeRequest("ns", "a").Manual().Obj()
	state.SetCondition(rr, v1alpha1.ConditionRunning, metav1.ConditionFalse, state.ReasonFinished, "")
	state.SetCondition(rr, v1alpha1.ConditionAwaitingApproval, metav1.ConditionTrue, state.ReasonPlanReady, "")
	if got := state.PhaseFor(rr.Status.Conditions); got != v1alpha1.PhaseAwaitingApproval {
		t.Fatalf("phase %s", got)
	}
	state.SetCondition(rr, v1alpha1.ConditionAwaitingApproval, metav1.ConditionFalse, state.ReasonApproved, "")
	if got := state.PhaseFor(rr.Status.Conditions); got != v1alpha1.PhasePending {
		t.Fatalf("approved, no Job yet: phase %s", got)
	}
	state.SetCondition(rr, v1alpha1.ConditionRunning, metav1.ConditionTrue, state.ReasonJobCreated, "")
	if got := state.PhaseFor(rr.Status.Conditions); got != v1alpha1.PhaseRunning {
		t.Fatalf("applying: phase %s", got)
	}
}

// A Job adopted before status names it carries the request's approval or is
// not adopted: the approval comes from the request's annotations and status,
// the Job's own annotations are only compared.
func TestUnitAdoptedApproval(t *testing.T) {
	const (
		digest  = "0123456789abcdef"
		other   = "fedcba9876543210"
		approve = v1alpha1.AnnotationApprove
		reject  = v1alpha1.AnnotationReject
		by      = v1alpha1.AnnotationApprovedBy
	)
	created := t0.Add(time.Minute)
	in := &runnerjob.Input{Kind: runnerjob.InputPlan, ConfigMap: "a-input", Digest: "sha256:00"}
	// request is a Manual request with its plan in status.
	request := func(annotations ...string) *v1alpha1.ReplayRequest {
		w := testutil.MakeRequest("ns", "a").UID("uid-1").Manual().Resolved("earliest")
		for i := 0; i+1 < len(annotations); i += 2 {
			w.Annotate(annotations[i], annotations[i+1])
		}
		rr := w.Obj()
		rr.Status.Plan = &v1alpha1.PlanSummary{Digest: digest, JobName: runnerjob.Name(rr, runnerjob.StagePlan)}
		return rr
	}
	// made is the apply Job the launcher makes for rr once it saw plan
	// digest approved by approver (BuildJob's annotations), as the API
	// server stores it.
	made := func(rr *v1alpha1.ReplayRequest, approver string) *batchv1.Job {
		seen := rr.DeepCopy()
		seen.Annotations = map[string]string{approve: digest}
		if approver != v1alpha1.RequesterUnknown {
			seen.Annotations[by] = approver
		}
		seen.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: approver, Digest: digest, At: &metav1.Time{Time: t0}}
		job, err := BuildJobWithInput(seen, runnerjob.StageApply, DefaultOptions(), in)
		if err != nil {
			t.Fatal(err)
		}
		job.CreationTimestamp = metav1.Time{Time: created}
		return job
	}
	with := func(job *batchv1.Job, kv ...string) *batchv1.Job {
		for i := 0; i+1 < len(kv); i += 2 {
			job.Annotations[kv[i]] = kv[i+1]
		}
		return job
	}
	approvedAt := func(who string, at time.Time) *v1alpha1.ApprovalStatus {
		return &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: who, Digest: digest, At: &metav1.Time{Time: at}}
	}

	honest := request(approve, digest, by, "bob")
	unstamped := request(approve, digest)
	lateReject := request(approve, digest, reject, "too late", by, "carol")
	approvedEarlier := request(approve, digest, by, "bob")
	approvedEarlier.Status.Approval = approvedAt("bob", t0.Add(-time.Hour))
	forgedStatus := request(approve, digest, by, "bob")
	forgedStatus.Status.Approval = approvedAt("mallory", t0)
	waiting := request()
	wrongApprove := request(approve, other, by, "bob")
	noPlan := request(approve, digest, by, "bob")
	noPlan.Status.Plan = nil
	rejectedInStatus := request(approve, digest, by, "bob")
	rejectedInStatus.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalRejected, By: "bob", Digest: digest}
	otherInStatus := request(approve, digest, by, "bob")
	otherInStatus.Status.Approval = approvedAt("bob", t0)
	otherInStatus.Status.Approval.Digest = other
	automatic := testutil.MakeRequest("ns", "a").UID("uid-1").Resolved("earliest").Obj()
	automaticJob, err := BuildJob(automatic, runnerjob.StageApply, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	noDigest := made(honest, "bob")
	delete(noDigest.Annotations, v1alpha1.AnnotationPlanDigest)

	cases := []struct {
		name string
		rr   *v1alpha1.ReplayRequest
		job  *batchv1.Job
		want *v1alpha1.ApprovalStatus
		// err is what the error must name; "" for no error.
		err string
	}{
		// The launcher's own Jobs, adopted after a restart.
		{"made under the request's stamped approval", honest, made(honest, "bob"), approvedAt("bob", created), ""},
		{"the Job's approved-at is never read", honest, with(made(honest, "bob"), v1alpha1.AnnotationApprovedAt, "2001-01-01T00:00:00Z"), approvedAt("bob", created), ""},
		{"nothing stamped who: unknown on both", unstamped, made(unstamped, "unknown"), approvedAt("unknown", created), ""},
		{"status.approval written earlier is kept", approvedEarlier, made(approvedEarlier, "bob"), approvedAt("bob", t0.Add(-time.Hour)), ""},
		{"rejected after the Job: who approved is unknown", lateReject, made(lateReject, "bob"), approvedAt("unknown", created), ""},
		{"an Automatic request's Job carries no approval", automatic, automaticJob, nil, ""},

		// Planted Jobs (or ones the request no longer agrees with).
		{"the request was not approved", waiting, made(waiting, "mallory"), nil, "has no " + approve},
		{"the request approves another plan", wrongApprove, made(wrongApprove, "bob"), nil, other},
		{"the Job applies another plan", honest, with(made(honest, "bob"), v1alpha1.AnnotationPlanDigest, other), nil, `plan "` + other + `"`},
		{"the Job names no plan", honest, noDigest, nil, v1alpha1.AnnotationPlanDigest},
		{"the Job names another approver than the request's stamp", honest, made(honest, "mallory"), nil, `"mallory"`},
		{"the Job names another approver than status", approvedEarlier, made(approvedEarlier, "mallory"), nil, `"mallory"`},
		{"status names another approver than the request's stamp", forgedStatus, made(forgedStatus, "mallory"), nil, `"mallory"`},
		{"status recorded a rejection", rejectedInStatus, made(rejectedInStatus, "bob"), nil, "Rejected"},
		{"status approved another plan", otherInStatus, made(otherInStatus, "bob"), nil, other},
		{"no plan in status", noPlan, made(honest, "bob"), nil, "no plan"},
		{"an Automatic request's Job with a forged approval", automatic, with(automaticJob.DeepCopy(), by, "mallory"), nil, "mallory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := c.rr.DeepCopy()
			got, err := approval.Adopted(c.rr, c.job)
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("error %v", err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("error %v, want one naming %q (approval %+v)", err, c.err, got)
			case c.err != "" && got != nil:
				t.Fatalf("an approval %+v with the error", got)
			case !equality.Semantic.DeepEqual(got, c.want):
				t.Fatalf("approval %+v, want %+v", got, c.want)
			}
			if !equality.Semantic.DeepEqual(before, c.rr) {
				t.Fatal("the request was changed")
			}
		})
	}
}
