package launcher_test

// Review before apply on envtest: a request with approval: Manual plans (its
// planning Job's pod is played with a dry run's framed result, as the runner
// writes it), waits for a decision with the group free, and applies exactly
// the approved plan through an input ConfigMap. The runner does not run here:
// what it would answer (Applied, PlanStale) is played the same way.

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"

	"github.com/kafka-replay/kafka-replay/launcher"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/lifecycle"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// approvalEnv is one test's launcher, with logs that hold framed results.
type approvalEnv struct {
	ns   string
	logs *recordLogs
	opts launcher.Options
	l    *running
	// owner is the test the launchers belong to (stopped when it ends),
	// also when a subtest restarts them.
	owner *testing.T
}

func newApprovalEnv(t *testing.T) *approvalEnv {
	t.Helper()
	env(t)
	e := &approvalEnv{ns: newNamespace(t, nil), logs: newRecordLogs(), opts: testOptions(), owner: t}
	e.opts.Logs = e.logs
	e.l = startLauncher(t, e.opts, 2)
	return e
}

// restart stops the launcher (as a pod's termination would), runs between
// while none runs, and starts a new one.
func (e *approvalEnv) restart(t *testing.T, between func()) {
	t.Helper()
	e.l.stop(t)
	if between != nil {
		between()
	}
	e.l = startLauncher(e.owner, e.opts, 2)
}

// manualRequest is a Manual rewind of group by 10 messages.
func manualRequest(ns, name, group string) *testutil.RequestWrapper {
	return testutil.MakeRequest(ns, name).Group(group).Topic("orders").ShiftBy(-10).Manual()
}

// planOf is the dry run a planning runner prints for group: three
// partitions rewound by 10, 20 and 30 messages, and its digest.
func planOf(group string) *report.Result {
	r := testutil.Result(group, report.ExitOK, 10, 20, 30)
	r.DryRun, r.Reason = true, report.ReasonDryRun
	r.Target = report.Target{Given: "shift:-10", Resolved: "shift:-10"}
	for i := range r.Partitions {
		r.Partitions[i].Applied = false
	}
	r.Warnings = []string{"a warning of the plan"}
	r.Summarize()
	r.Plan = report.PlanDigest(r.Group, r.Target.Resolved, r.Partitions)
	return r
}

// planJobOf waits for a request's planning Job and returns it.
func planJobOf(t *testing.T, rr *v1alpha1.ReplayRequest) *batchv1.Job {
	t.Helper()
	var job batchv1.Job
	eventually(t, 20*time.Second, "planning Job of "+rr.Name, func() error {
		cur := getRR(t, rr) // with its UID, which the planning Job's name carries
		return k8s.Get(context.Background(), types.NamespacedName{Namespace: rr.Namespace, Name: runnerjob.Name(cur, runnerjob.StagePlan)}, &job)
	})
	return &job
}

// makeApplyJob makes, as a launcher pass would, the input ConfigMap and
// the apply Job of seen (a request as that pass saw it), from the record
// of its planning Job planJob.
func (e *approvalEnv) makeApplyJob(t *testing.T, seen *v1alpha1.ReplayRequest, planJob string) {
	t.Helper()
	res, err := launcher.RecordResult(getRecord(t, e.ns, planJob))
	if err != nil {
		t.Fatal(err)
	}
	cm, digest, err := runnerjob.InputConfigMap(seen, runnerjob.Name(seen, runnerjob.StageApply), res)
	if err != nil {
		t.Fatal(err)
	}
	create(t, cm)
	job, err := launcher.BuildJobWithInput(seen, runnerjob.StageApply, e.opts, &runnerjob.Input{Kind: runnerjob.InputPlan, ConfigMap: cm.Name, Digest: digest})
	if err != nil {
		t.Fatal(err)
	}
	create(t, job)
}

// playPlan plays the planning Job's pod printing plan, and the Job
// finishing.
func (e *approvalEnv) playPlan(t *testing.T, job *batchv1.Job, plan *report.Result) {
	t.Helper()
	attempt(t, e.logs, job, job.Name+"-0", 0, plan, time.Now())
	finishJob(t, job, "")
}

// awaiting waits for a request's plan to wait for approval.
func awaiting(t *testing.T, rr *v1alpha1.ReplayRequest) *v1alpha1.ReplayRequest {
	t.Helper()
	cur := waitPhase(t, rr, v1alpha1.PhaseAwaitingApproval)
	if cur.Status.Plan == nil {
		t.Fatalf("AwaitingApproval without status.plan: %+v", cur.Status)
	}
	return cur
}

// annotate sets annotations on a request, as kubectl annotate does.
func annotate(t *testing.T, rr *v1alpha1.ReplayRequest, kv ...string) {
	t.Helper()
	eventually(t, 10*time.Second, "annotate "+rr.Name, func() error {
		cur := getRR(t, rr)
		patched := cur.DeepCopy()
		if patched.Annotations == nil {
			patched.Annotations = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			patched.Annotations[kv[i]] = kv[i+1]
		}
		return k8s.Patch(context.Background(), patched, client.MergeFrom(cur))
	})
}

// noApplyJob checks that a request has no apply Job.
func noApplyJob(t *testing.T, rr *v1alpha1.ReplayRequest) {
	t.Helper()
	cur := getRR(t, rr)
	var job batchv1.Job
	err := k8s.Get(context.Background(), types.NamespacedName{Namespace: rr.Namespace, Name: runnerjob.Name(cur, runnerjob.StageApply)}, &job)
	if !apierrors.IsNotFound(err) {
		t.Fatalf("an apply Job exists (%v): %+v", err, job.ObjectMeta)
	}
	if cur.Status.JobName != "" {
		t.Fatalf("status.jobName = %q", cur.Status.JobName)
	}
}

// inputOf reads an apply Job's input ConfigMap, checks the Job names the
// digest of its bytes, and decodes the plan it holds.
func inputOf(t *testing.T, job *batchv1.Job) *report.Result {
	t.Helper()
	env := testutil.RunnerEnv(job)
	if got := env[config.EnvTo]; got != "plan:/etc/kafka-replay/input/input.json.gz" {
		t.Fatalf("%s=%q", config.EnvTo, got)
	}
	if _, ok := env[config.EnvTopics]; ok {
		t.Fatalf("%s set with a plan file", config.EnvTopics)
	}
	var cm corev1.ConfigMap
	if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: job.Namespace, Name: runnerjob.InputConfigMapName(job.Name)}, &cm); err != nil {
		t.Fatal(err)
	}
	b := cm.BinaryData[runnerjob.InputKey]
	sum := sha256.Sum256(b)
	if want := "sha256:" + hex.EncodeToString(sum[:]); env[config.EnvFileDigest] != want {
		t.Fatalf("%s=%q, the ConfigMap's bytes are %s", config.EnvFileDigest, env[config.EnvFileDigest], want)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// appliedOf is what the runner of an approved plan answers: the plan,
// committed.
func appliedOf(plan *report.Result) *report.Result {
	r := *plan
	r.DryRun, r.Reason, r.Warnings = false, report.ReasonApplied, nil
	r.Target.Given = "plan:/etc/kafka-replay/input/input.json.gz"
	r.Partitions = append([]report.Partition(nil), plan.Partitions...)
	for i := range r.Partitions {
		r.Partitions[i].Applied = true
	}
	r.Summarize()
	return &r
}

// The whole way: planned, shown, approved with the digest by the stamped
// approver, applied from exactly the plan, recorded on the Job.
func TestEnvtestApprovalApproved(t *testing.T) {
	e := newApprovalEnv(t)
	rr := manualRequest(e.ns, "orders-rewind", "orders").Obj()
	create(t, rr)
	plan := planOf("orders")
	planJob := planJobOf(t, rr)
	env := testutil.RunnerEnv(planJob)
	if env[config.EnvDryRun] != "true" || env[config.EnvTo] != "shift:-10" || planJob.Labels[v1alpha1.LabelStage] != string(runnerjob.StagePlan) {
		t.Fatalf("the planning Job is not a dry run of the target: env %v labels %v", env, planJob.Labels)
	}
	if cur := waitPhase(t, rr, v1alpha1.PhaseRunning); cur.Status.JobName != "" {
		t.Fatalf("planning set status.jobName %q", cur.Status.JobName)
	}
	e.playPlan(t, planJob, plan)

	cur := awaiting(t, rr)
	p := cur.Status.Plan
	if p.Digest != plan.Plan || p.JobName != planJob.Name || p.Totals.Partitions != 3 || p.Totals.MessagesToReconsume != 60 ||
		len(p.LargestDeltas) != 3 || p.LargestDeltas[0].Partition != 2 || len(p.Warnings) != 1 || p.ExpiresAt == nil ||
		!p.ExpiresAt.Time.Equal(p.PlannedAt.Add(24*time.Hour)) {
		t.Fatalf("status.plan %+v, want digest %s", p, plan.Plan)
	}
	c := condition(cur, v1alpha1.ConditionAwaitingApproval)
	want := fmt.Sprintf("kubectl annotate replayrequest %s -n %s kafkareplay.dev/approve=%s", rr.Name, rr.Namespace, plan.Plan)
	if c == nil || c.Status != "True" || c.Reason != state.ReasonPlanReady || !strings.Contains(c.Message, want) {
		t.Fatalf("AwaitingApproval %+v, want True PlanReady with %q", c, want)
	}
	waitEvent(t, e.ns, rr.Name, state.ReasonPlanReady)
	noApplyJob(t, rr)
	var planned batchv1.Job
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(planJob), &planned); err != nil {
		t.Fatal(err)
	}
	if got := planned.Annotations[v1alpha1.AnnotationPlanDigest]; got != plan.Plan {
		t.Fatalf("the planning Job's %s = %q, want %s", v1alpha1.AnnotationPlanDigest, got, plan.Plan)
	}

	annotate(t, rr, v1alpha1.AnnotationApprove, plan.Plan, v1alpha1.AnnotationApprovedBy, "bob")
	job := waitJob(t, rr)
	if job.Name != runnerjob.Name(cur, runnerjob.StageApply) {
		t.Fatalf("apply Job %s", job.Name)
	}
	if job.Annotations[v1alpha1.AnnotationApprovedBy] != "bob" || job.Annotations[v1alpha1.AnnotationPlanDigest] != plan.Plan || job.Annotations[v1alpha1.AnnotationApprovedAt] == "" {
		t.Fatalf("apply Job annotations %v", job.Annotations)
	}
	in := inputOf(t, job)
	if in.Plan != plan.Plan || report.PlanDigest(in.Group, in.Target.Resolved, in.Partitions) != plan.Plan || !in.DryRun || in.Target.Resolved != "shift:-10" {
		t.Fatalf("the input file is not the plan: %+v", in)
	}
	cur = getRR(t, rr)
	if a := cur.Status.Approval; a == nil || a.Decision != v1alpha1.ApprovalApproved || a.By != "bob" || a.Digest != plan.Plan || a.At == nil {
		t.Fatalf("status.approval %+v", cur.Status.Approval)
	}
	if c := condition(cur, v1alpha1.ConditionAwaitingApproval); c.Status != "False" || c.Reason != state.ReasonApproved {
		t.Fatalf("AwaitingApproval %+v", c)
	}
	waitEvent(t, e.ns, rr.Name, state.ReasonApproved)

	attempt(t, e.logs, job, job.Name+"-0", 0, appliedOf(plan), time.Now())
	finishJob(t, job, "")
	done := waitPhase(t, rr, v1alpha1.PhaseSucceeded)
	if sc := condition(done, v1alpha1.ConditionSucceeded); sc.Reason != string(report.ReasonApplied) {
		t.Fatalf("Succeeded %+v", sc)
	}
}

// A wrong digest approves nothing: a Warning event, the condition says so,
// no Job; the right one then applies.
func TestEnvtestApprovalWrongDigest(t *testing.T) {
	e := newApprovalEnv(t)
	rr := manualRequest(e.ns, "wrong", "wrong").Obj()
	create(t, rr)
	plan := planOf("wrong")
	e.playPlan(t, planJobOf(t, rr), plan)
	awaiting(t, rr)

	annotate(t, rr, v1alpha1.AnnotationApprove, "ffffffffffffffff")
	waitEvent(t, e.ns, rr.Name, state.ReasonApprovalRefused)
	eventually(t, 10*time.Second, "the refusal in the condition", func() error {
		c := condition(getRR(t, rr), v1alpha1.ConditionAwaitingApproval)
		if c == nil || c.Status != "True" || !strings.Contains(c.Message, `"ffffffffffffffff"`) || !strings.Contains(c.Message, "not this plan's digest") {
			return fmt.Errorf("condition %+v", c)
		}
		return nil
	})
	cur := getRR(t, rr)
	if cur.Status.Phase != v1alpha1.PhaseAwaitingApproval || cur.Status.Approval != nil || cur.Status.Plan.Digest != plan.Plan {
		t.Fatalf("a wrong digest changed the request: %+v", cur.Status)
	}
	noApplyJob(t, rr)

	annotate(t, rr, v1alpha1.AnnotationApprove, plan.Plan)
	job := waitJob(t, rr)
	if got := job.Annotations[v1alpha1.AnnotationApprovedBy]; got != v1alpha1.RequesterUnknown {
		t.Fatalf("approved-by %q with nothing stamped, want unknown", got)
	}
}

// A rejection ends the request Rejected with the reason, nothing applied.
func TestEnvtestApprovalRejected(t *testing.T) {
	e := newApprovalEnv(t)
	rr := manualRequest(e.ns, "rejected", "rejected").Obj()
	create(t, rr)
	e.playPlan(t, planJobOf(t, rr), planOf("rejected"))
	awaiting(t, rr)

	annotate(t, rr, v1alpha1.AnnotationReject, "the wrong topic", v1alpha1.AnnotationApprovedBy, "carol")
	cur := waitPhase(t, rr, v1alpha1.PhaseFailed)
	sc := condition(cur, v1alpha1.ConditionSucceeded)
	if sc.Reason != state.ReasonRejected || !strings.Contains(sc.Message, "the wrong topic") || !strings.Contains(sc.Message, "carol") {
		t.Fatalf("Succeeded %+v", sc)
	}
	if a := cur.Status.Approval; a == nil || a.Decision != v1alpha1.ApprovalRejected || a.By != "carol" || a.Reason != "the wrong topic" {
		t.Fatalf("status.approval %+v", cur.Status.Approval)
	}
	if c := condition(cur, v1alpha1.ConditionAwaitingApproval); c.Status != "False" || c.Reason != state.ReasonRejected {
		t.Fatalf("AwaitingApproval %+v", c)
	}
	noApplyJob(t, rr)
	waitFinalizerGone(t, rr)
}

// Approved, but its group busy: a rejection still stops it before its
// apply Job is made.
func TestEnvtestApprovalRejectedWhileWaitingForTheGroup(t *testing.T) {
	e := newApprovalEnv(t)
	rr := manualRequest(e.ns, "a-changed-mind", "changed-mind").Obj()
	create(t, rr)
	plan := planOf("changed-mind")
	e.playPlan(t, planJobOf(t, rr), plan)
	awaiting(t, rr)
	other := testutil.MakeRequest(e.ns, "b-other").Group("changed-mind").Topic("orders").ShiftBy(-1).Obj()
	create(t, other)
	waitJob(t, other)
	annotate(t, rr, v1alpha1.AnnotationApprove, plan.Plan)
	eventually(t, 20*time.Second, "approved, waiting for the group", func() error {
		cur := getRR(t, rr)
		if cur.Status.Approval == nil || condition(cur, v1alpha1.ConditionAccepted).Reason != state.ReasonWaitingForGroup {
			return fmt.Errorf("status %+v", cur.Status)
		}
		return nil
	})
	annotate(t, rr, v1alpha1.AnnotationReject, "not after all", v1alpha1.AnnotationApprovedBy, "carol")
	cur := waitPhase(t, rr, v1alpha1.PhaseFailed)
	if sc := condition(cur, v1alpha1.ConditionSucceeded); sc.Reason != state.ReasonRejected || !strings.Contains(sc.Message, "not after all") {
		t.Fatalf("Succeeded %+v", sc)
	}
	if a := cur.Status.Approval; a == nil || a.Decision != v1alpha1.ApprovalRejected || a.By != "carol" {
		t.Fatalf("approval %+v", a)
	}
	noApplyJob(t, rr)
}

// Nobody decides within approvalTimeout: Expired, on the timer (no event
// comes to wake the request).
func TestEnvtestApprovalExpired(t *testing.T) {
	e := newApprovalEnv(t)
	rr := manualRequest(e.ns, "expired", "expired").ApprovalTimeout(3 * time.Second).Obj()
	create(t, rr)
	e.playPlan(t, planJobOf(t, rr), planOf("expired"))
	cur := waitPhaseWithin(t, rr, v1alpha1.PhaseFailed, time.Minute)
	sc := condition(cur, v1alpha1.ConditionSucceeded)
	if sc.Reason != state.ReasonExpired || cur.Status.Plan == nil {
		t.Fatalf("Succeeded %+v, plan %+v", sc, cur.Status.Plan)
	}
	if cur.Status.CompletionTime == nil || cur.Status.CompletionTime.Before(cur.Status.Plan.ExpiresAt) {
		t.Fatalf("expired at %v, before expiresAt %v", cur.Status.CompletionTime, cur.Status.Plan.ExpiresAt)
	}
	noApplyJob(t, rr)
}

// A planning run refused by either guard fails the request with the
// guard's reason; nothing waits for approval.
func TestEnvtestApprovalPlanRefusedByGuard(t *testing.T) {
	e := newApprovalEnv(t)
	for _, tc := range []struct {
		name   string
		reason report.Reason
		msg    string
	}{
		{"limit", report.ReasonLimitExceeded, "the plan would have the group consume 60 messages again, more than limits.maxMessagesToReconsume (5)"},
		{"skip", report.ReasonWouldSkipMessages, "the plan skips 7 messages the consumers never handled (orders/1); set limits.allowSkip: true to allow that"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rr := manualRequest(e.ns, "guarded-"+tc.name, "guarded-"+tc.name).MaxReconsume(5).Obj()
			create(t, rr)
			job := planJobOf(t, rr)
			refused := planOf(rr.Spec.Group)
			refused.ExitCode, refused.Reason, refused.Error = report.ExitRefused, tc.reason, tc.msg
			attempt(t, e.logs, job, job.Name+"-0", int32(report.ExitRefused), refused, time.Now())
			finishJob(t, job, batchv1.JobReasonPodFailurePolicy)
			cur := waitPhase(t, rr, v1alpha1.PhaseFailed)
			sc := condition(cur, v1alpha1.ConditionSucceeded)
			if sc.Reason != string(tc.reason) || !strings.Contains(sc.Message, tc.msg) || cur.Status.Plan != nil {
				t.Fatalf("Succeeded %+v, plan %+v", sc, cur.Status.Plan)
			}
			noApplyJob(t, rr)
		})
	}
}

// The group moved between the plan and the approval: the apply run finds
// the plan stale, commits nothing, and the request fails PlanStale with the
// partitions that differ.
func TestEnvtestApprovalPlanStale(t *testing.T) {
	e := newApprovalEnv(t)
	rr := manualRequest(e.ns, "stale", "stale").Obj()
	create(t, rr)
	plan := planOf("stale")
	e.playPlan(t, planJobOf(t, rr), plan)
	awaiting(t, rr)
	annotate(t, rr, v1alpha1.AnnotationApprove, plan.Plan)
	job := waitJob(t, rr)
	stale := *plan
	stale.DryRun, stale.ExitCode, stale.Reason = false, report.ExitRefused, report.ReasonPlanStale
	stale.Partitions = append([]report.Partition(nil), plan.Partitions...)
	stale.Partitions[1].Error = "committed offset is 1005 now, the plan started from 1000"
	stale.Error = "the plan no longer holds (partitions that differ: orders/1); nothing was committed"
	stale.Summarize()
	attempt(t, e.logs, job, job.Name+"-0", int32(report.ExitRefused), &stale, time.Now())
	finishJob(t, job, batchv1.JobReasonPodFailurePolicy)
	cur := waitPhase(t, rr, v1alpha1.PhaseFailed)
	sc := condition(cur, v1alpha1.ConditionSucceeded)
	if sc.Reason != string(report.ReasonPlanStale) || !strings.Contains(sc.Message, "orders/1") {
		t.Fatalf("Succeeded %+v", sc)
	}
	rec := getRecord(t, e.ns, job.Name)
	if rec.Outcome.OffsetsChanged != v1alpha1.OffsetsChangedNo {
		t.Fatalf("record says offsets changed %q", rec.Outcome.OffsetsChanged)
	}
}

// The planning Job's record changed after its plan was shown (someone with
// write access to ReplayRecords moved a partition): the approval names the
// plan that was shown, the record is another, so nothing is applied.
func TestEnvtestApprovalRecordChangedAfterThePlan(t *testing.T) {
	e := newApprovalEnv(t)
	rr := manualRequest(e.ns, "tampered", "tampered").Obj()
	create(t, rr)
	plan := planOf("tampered")
	e.playPlan(t, planJobOf(t, rr), plan)
	cur := awaiting(t, rr)
	eventually(t, 10*time.Second, "edit the record", func() error {
		rec := getRecord(t, e.ns, cur.Status.Plan.JobName)
		rec.Topics[0].NewOffsets[0] = 0 // partition 0 back to the log start
		return k8s.Update(context.Background(), rec)
	})
	annotate(t, rr, v1alpha1.AnnotationApprove, plan.Plan)
	done := waitPhase(t, rr, v1alpha1.PhaseFailed)
	sc := condition(done, v1alpha1.ConditionSucceeded)
	if sc.Reason != state.ReasonJobInvalid || !strings.Contains(sc.Message, "not the approved "+plan.Plan) {
		t.Fatalf("Succeeded %+v", sc)
	}
	noApplyJob(t, rr)
}

// A ReplayRecord planted under the planning Job's name before the Job
// finishes is not taken for its plan: the request fails PlanNotRecorded
// and nothing waits for approval.
func TestEnvtestApprovalPlantedRecord(t *testing.T) {
	e := newApprovalEnv(t)
	rr := manualRequest(e.ns, "planted-record", "planted-record").Obj()
	create(t, rr)
	job := planJobOf(t, rr)
	forged := planOf("planted-record")
	for i := range forged.Partitions {
		forged.Partitions[i].NewOffset = 0
	}
	code := int32(0)
	rec := record.BuildRecord(job, record.Outcome{Succeeded: true, Reason: string(report.ReasonDryRun), ExitCode: &code, Full: forged, Complete: true})
	rec.OwnerReferences = nil // not the Job's
	create(t, rec)
	e.playPlan(t, job, planOf("planted-record"))
	cur := waitPhase(t, rr, v1alpha1.PhaseFailed)
	if sc := condition(cur, v1alpha1.ConditionSucceeded); sc.Reason != state.ReasonPlanNotRecorded || cur.Status.Plan != nil {
		t.Fatalf("Succeeded %+v, plan %+v", sc, cur.Status.Plan)
	}
	noApplyJob(t, rr)
}

// A plan awaiting approval holds nothing: another request of the same
// group runs meanwhile.
func TestEnvtestApprovalLeavesTheGroupFree(t *testing.T) {
	e := newApprovalEnv(t)
	// Named so that the plan is ahead of the later request in the queue's
	// order even when both are created within one second (creation time,
	// then name).
	manual := manualRequest(e.ns, "a-manual", "shared").Obj()
	create(t, manual)
	e.playPlan(t, planJobOf(t, manual), planOf("shared"))
	awaiting(t, manual)
	later := testutil.MakeRequest(e.ns, "b-later").Group("shared").Topic("orders").ShiftBy(-1).Obj()
	create(t, later)
	waitJob(t, later)
}

// The launcher stops at each step of the way; the next one continues:
//   - the planning Job finishes while no launcher runs (finished, status
//     not written);
//   - the approval comes while no launcher runs;
//   - the approval is in status but the group is busy, and the launcher
//     stops before the apply Job (the next one creates it, once);
//   - the input ConfigMap exists, the Job does not (a pass stopped between
//     the two): AlreadyExists, the same bytes, the same digest;
//   - the apply Job exists, status does not name it: adopted under the
//     request's approval (with status's plan, or the plan read back from
//     the planning Job's record when the same pass planned, approved and
//     made the Job);
//   - a rejection and an expiry while no launcher runs.
func TestEnvtestApprovalAcrossRestarts(t *testing.T) {
	e := newApprovalEnv(t)

	t.Run("plan finished, approval, apply Job", func(t *testing.T) {
		rr := manualRequest(e.ns, "restarts", "restarts").Obj()
		create(t, rr)
		plan := planOf("restarts")
		job := planJobOf(t, rr)
		e.restart(t, func() { e.playPlan(t, job, plan) })
		cur := awaiting(t, rr)
		if cur.Status.Plan.Digest != plan.Plan {
			t.Fatalf("plan %+v", cur.Status.Plan)
		}
		e.restart(t, func() { annotate(t, rr, v1alpha1.AnnotationApprove, plan.Plan, v1alpha1.AnnotationApprovedBy, "bob") })
		apply := waitJob(t, rr)
		if in := inputOf(t, apply); in.Plan != plan.Plan {
			t.Fatalf("input plan %s", in.Plan)
		}
		if got := getRR(t, rr).Status.Approval; got == nil || got.By != "bob" {
			t.Fatalf("approval %+v", got)
		}
	})

	t.Run("approved, group busy, restart, then the apply Job", func(t *testing.T) {
		rr := manualRequest(e.ns, "busy", "busy").Obj()
		create(t, rr)
		plan := planOf("busy")
		e.playPlan(t, planJobOf(t, rr), plan)
		awaiting(t, rr)
		// Another replay of the group runs meanwhile (the group is free
		// while the plan waits).
		other := testutil.MakeRequest(e.ns, "busy-other").Group("busy").Topic("orders").ShiftBy(-1).Obj()
		create(t, other)
		otherJob := waitJob(t, other)
		annotate(t, rr, v1alpha1.AnnotationApprove, plan.Plan)
		eventually(t, 20*time.Second, "approved, waiting for the group", func() error {
			cur := getRR(t, rr)
			if cur.Status.Approval == nil || condition(cur, v1alpha1.ConditionAccepted).Reason != state.ReasonWaitingForGroup {
				return fmt.Errorf("status %+v", cur.Status)
			}
			return nil
		})
		noApplyJob(t, rr)
		e.restart(t, func() {
			attempt(t, e.logs, otherJob, otherJob.Name+"-0", 0, testutil.Result("busy", report.ExitOK, 1), time.Now())
			finishJob(t, otherJob, "")
		})
		apply := waitJob(t, rr)
		if in := inputOf(t, apply); in.Plan != plan.Plan {
			t.Fatalf("input plan %s", in.Plan)
		}
		if n := len(jobsOf(t, e.ns, map[string]string{v1alpha1.LabelRequest: "busy", v1alpha1.LabelStage: string(runnerjob.StageApply)})); n != 1 {
			t.Fatalf("%d apply Jobs", n)
		}
	})

	t.Run("input ConfigMap made, Job not", func(t *testing.T) {
		rr := manualRequest(e.ns, "half", "half").Obj()
		create(t, rr)
		plan := planOf("half")
		e.playPlan(t, planJobOf(t, rr), plan)
		cur := awaiting(t, rr)
		e.restart(t, func() {
			// What the stopped pass wrote: the ConfigMap, from the plan's
			// record, and the approval it saw.
			rec := getRecord(t, e.ns, cur.Status.Plan.JobName)
			res, err := launcher.RecordResult(rec)
			if err != nil {
				t.Fatal(err)
			}
			cm, _, err := runnerjob.InputConfigMap(cur, runnerjob.Name(cur, runnerjob.StageApply), res)
			if err != nil {
				t.Fatal(err)
			}
			create(t, cm)
			annotate(t, rr, v1alpha1.AnnotationApprove, plan.Plan)
		})
		apply := waitJob(t, rr)
		if in := inputOf(t, apply); in.Plan != plan.Plan {
			t.Fatalf("input plan %s", in.Plan)
		}
	})

	t.Run("apply Job made, status not written", func(t *testing.T) {
		rr := manualRequest(e.ns, "adopt", "adopt").Obj()
		create(t, rr)
		plan := planOf("adopt")
		e.playPlan(t, planJobOf(t, rr), plan)
		cur := awaiting(t, rr)
		e.restart(t, func() {
			// What the stopped pass made before its status write: the
			// approval it saw, the input and the apply Job.
			annotate(t, rr, v1alpha1.AnnotationApprove, plan.Plan, v1alpha1.AnnotationApprovedBy, "bob")
			seen := getRR(t, rr)
			seen.Status = cur.Status
			seen.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: "bob", Digest: plan.Plan, At: &metav1.Time{Time: time.Now().Truncate(time.Second)}}
			e.makeApplyJob(t, seen, cur.Status.Plan.JobName)
		})
		eventually(t, 20*time.Second, "the apply Job adopted with its approval", func() error {
			got := getRR(t, rr)
			a, c := got.Status.Approval, condition(got, v1alpha1.ConditionAwaitingApproval)
			if got.Status.JobName == "" || a == nil || a.By != "bob" || a.Digest != plan.Plan || a.At == nil || c == nil || c.Reason != state.ReasonApproved {
				return fmt.Errorf("status %+v", got.Status)
			}
			// When: the Job's creation, which the API server stamped.
			if job := waitJob(t, rr); !a.At.Equal(&job.CreationTimestamp) {
				return fmt.Errorf("approved at %s, the Job was created at %s", a.At, job.CreationTimestamp)
			}
			return nil
		})
	})

	t.Run("plan, approval and apply Job in one pass, status not written", func(t *testing.T) {
		// The approver annotated the digest before the plan was ready;
		// the pass that saw the plan approved it and made the Job at once,
		// and stopped before writing status: status has no plan yet.
		rr := manualRequest(e.ns, "adopt-plan", "adopt-plan").Obj()
		create(t, rr)
		plan := planOf("adopt-plan")
		planJob := planJobOf(t, rr)
		planning := waitPhase(t, rr, v1alpha1.PhaseRunning).Status // planning
		e.playPlan(t, planJob, plan)
		cur := awaiting(t, rr)
		e.restart(t, func() {
			annotate(t, rr, v1alpha1.AnnotationApprove, plan.Plan, v1alpha1.AnnotationApprovedBy, "bob")
			seen := getRR(t, rr)
			seen.Status = cur.Status
			seen.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: "bob", Digest: plan.Plan}
			e.makeApplyJob(t, seen, cur.Status.Plan.JobName)
			// Status as it was before that pass.
			back := getRR(t, rr)
			back.Status = planning
			if err := k8s.Status().Update(context.Background(), back); err != nil {
				t.Fatal(err)
			}
			if back.Status.Plan != nil {
				t.Fatalf("status still has a plan: %+v", back.Status.Plan)
			}
		})
		eventually(t, 20*time.Second, "the apply Job adopted under the plan read back", func() error {
			got := getRR(t, rr)
			a, p := got.Status.Approval, got.Status.Plan
			if got.Status.JobName == "" || a == nil || a.By != "bob" || a.Digest != plan.Plan || p == nil || p.Digest != plan.Plan || p.JobName != cur.Status.Plan.JobName {
				return fmt.Errorf("status %+v", got.Status)
			}
			return nil
		})
	})

	t.Run("a ConfigMap planted under the input's name", func(t *testing.T) {
		rr := manualRequest(e.ns, "planted", "planted").Obj()
		create(t, rr)
		plan := planOf("planted")
		e.playPlan(t, planJobOf(t, rr), plan)
		cur := awaiting(t, rr)
		// A tenant writes its own plan (all partitions to offset 0) under
		// the name the launcher will use.
		forged := *plan
		forged.Partitions = append([]report.Partition(nil), plan.Partitions...)
		for i := range forged.Partitions {
			forged.Partitions[i].NewOffset = 0
		}
		forged.Plan = report.PlanDigest(forged.Group, forged.Target.Resolved, forged.Partitions)
		cm, forgedDigest, err := runnerjob.InputConfigMap(cur, runnerjob.Name(cur, runnerjob.StageApply), &forged)
		if err != nil {
			t.Fatal(err)
		}
		create(t, cm)
		annotate(t, rr, v1alpha1.AnnotationApprove, plan.Plan)
		apply := waitJob(t, rr)
		digest := testutil.RunnerEnv(apply)[config.EnvFileDigest]
		// The Job names the launcher's bytes: the runner refuses the
		// planted ones (exit 2, naming the setting).
		if digest == "" || digest == forgedDigest {
			t.Fatalf("the Job's %s is %q, the planted ConfigMap's %q", config.EnvFileDigest, digest, forgedDigest)
		}
	})

	t.Run("a wrong digest, then PlanStale, while no launcher runs", func(t *testing.T) {
		rr := manualRequest(e.ns, "off-stale", "off-stale").Obj()
		create(t, rr)
		plan := planOf("off-stale")
		e.playPlan(t, planJobOf(t, rr), plan)
		awaiting(t, rr)
		e.restart(t, func() { annotate(t, rr, v1alpha1.AnnotationApprove, "0000000000000000") })
		waitEvent(t, e.ns, rr.Name, state.ReasonApprovalRefused)
		eventually(t, 10*time.Second, "the refusal in the condition", func() error {
			if c := condition(getRR(t, rr), v1alpha1.ConditionAwaitingApproval); c == nil || !strings.Contains(c.Message, `"0000000000000000"`) {
				return fmt.Errorf("condition %+v", c)
			}
			return nil
		})
		noApplyJob(t, rr)
		annotate(t, rr, v1alpha1.AnnotationApprove, plan.Plan)
		job := waitJob(t, rr)
		e.restart(t, func() {
			stale := *plan
			stale.DryRun, stale.ExitCode, stale.Reason = false, report.ExitRefused, report.ReasonPlanStale
			stale.Error = "the plan no longer holds (partitions that differ: orders/0); nothing was committed"
			attempt(t, e.logs, job, job.Name+"-0", int32(report.ExitRefused), &stale, time.Now())
			finishJob(t, job, batchv1.JobReasonPodFailurePolicy)
		})
		if sc := condition(waitPhase(t, rr, v1alpha1.PhaseFailed), v1alpha1.ConditionSucceeded); sc.Reason != string(report.ReasonPlanStale) {
			t.Fatalf("Succeeded %+v", sc)
		}
	})

	t.Run("rejected and expired while no launcher runs", func(t *testing.T) {
		rejected := manualRequest(e.ns, "off-rejected", "off-rejected").Obj()
		expired := manualRequest(e.ns, "off-expired", "off-expired").ApprovalTimeout(2 * time.Second).Obj()
		create(t, rejected)
		create(t, expired)
		// The expiring plan's Job finishes last, so the rejected one's
		// plan is surely ready first.
		e.playPlan(t, planJobOf(t, rejected), planOf("off-rejected"))
		awaiting(t, rejected)
		e.restart(t, func() {
			annotate(t, rejected, v1alpha1.AnnotationReject, "not now")
			e.playPlan(t, planJobOf(t, expired), planOf("off-expired"))
		})
		if sc := condition(waitPhase(t, rejected, v1alpha1.PhaseFailed), v1alpha1.ConditionSucceeded); sc.Reason != state.ReasonRejected {
			t.Fatalf("rejected: %+v", sc)
		}
		cur := awaiting(t, expired)
		e.restart(t, func() {
			eventually(t, 30*time.Second, "past expiresAt", func() error {
				if time.Now().Before(cur.Status.Plan.ExpiresAt.Time) {
					return fmt.Errorf("not yet %s", cur.Status.Plan.ExpiresAt)
				}
				return nil
			})
		})
		if sc := condition(waitPhaseWithin(t, expired, v1alpha1.PhaseFailed, time.Minute), v1alpha1.ConditionSucceeded); sc.Reason != state.ReasonExpired {
			t.Fatalf("expired: %+v", sc)
		}
		noApplyJob(t, expired)
		noApplyJob(t, rejected)
	})
}

// waitPhaseWithin is waitPhase with its own timeout.
func waitPhaseWithin(t *testing.T, rr *v1alpha1.ReplayRequest, phase v1alpha1.Phase, timeout time.Duration) *v1alpha1.ReplayRequest {
	t.Helper()
	var cur *v1alpha1.ReplayRequest
	eventually(t, timeout, fmt.Sprintf("%s %s", rr.Name, phase), func() error {
		cur = getRR(t, rr)
		if cur.Status.Phase != phase {
			return fmt.Errorf("phase %q, status %+v", cur.Status.Phase, cur.Status)
		}
		return nil
	})
	return cur
}

// waitFinalizerGone waits until the launcher has let a finished request go.
func waitFinalizerGone(t *testing.T, rr *v1alpha1.ReplayRequest) {
	t.Helper()
	eventually(t, 10*time.Second, "finalizer of "+rr.Name+" removed", func() error {
		if f := getRR(t, rr).Finalizers; len(f) != 0 {
			return fmt.Errorf("finalizers %v", f)
		}
		return nil
	})
}

// Consumers are paused for the apply only: they run on while the plan is
// made and while it waits, are paused once it is approved, and are back
// after the approved plan is applied.
func TestEnvtestApprovalWithConsumers(t *testing.T) {
	env(t)
	installKEDA(t) // the launcher's ScaledObject lookups are real ones
	e := newApprovalEnv(t)
	d := makeDeployment(t, e.ns, "orders-consumer", 2, nil)
	rr := manualRequest(e.ns, "paused", "paused").Wait(time.Minute).Consumers(deploymentRef("orders-consumer")).Obj()
	create(t, rr)
	planJob := planJobOf(t, rr)
	if v, ok := testutil.RunnerEnv(planJob)[config.EnvWaitForEmpty]; ok {
		t.Errorf("the planning Job waits for the group (%s=%s): a dry run commits nothing", config.EnvWaitForEmpty, v)
	}
	plan := planOf("paused")
	e.playPlan(t, planJob, plan)
	cur := awaiting(t, rr)
	if len(cur.Status.Consumers) != 0 || replicasOf(t, d) != 2 {
		t.Fatalf("consumers touched before the approval: %+v, %d replicas", cur.Status.Consumers, replicasOf(t, d))
	}
	annotate(t, rr, v1alpha1.AnnotationApprove, plan.Plan)
	_, job := waitPaused(t, rr)
	waitReplicas(t, d, 0)
	if in := inputOf(t, job); in.Plan != plan.Plan {
		t.Fatalf("input plan %s", in.Plan)
	}
	attempt(t, e.logs, job, job.Name+"-0", 0, appliedOf(plan), time.Now())
	finishJob(t, job, "")
	waitRestored(t, rr, state.ReasonRestored)
	waitReplicas(t, d, 2)
}

// A Manual request deleted while it plans stops its planning Job and goes.
func TestEnvtestApprovalDeletedWhilePlanning(t *testing.T) {
	e := newApprovalEnv(t)
	rr := manualRequest(e.ns, "deleted", "deleted").Obj()
	create(t, rr)
	job := planJobOf(t, rr)
	eventually(t, 10*time.Second, "the finalizer", func() error {
		if len(getRR(t, rr).Finalizers) == 0 {
			return fmt.Errorf("no finalizer yet")
		}
		return nil
	})
	if err := k8s.Delete(context.Background(), getRR(t, rr)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "request and planning Job gone", func() error {
		var cur v1alpha1.ReplayRequest
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(rr), &cur); !apierrors.IsNotFound(err) {
			return fmt.Errorf("request still there (finalizers %v): %w", cur.Finalizers, err)
		}
		var j batchv1.Job
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(job), &j); err == nil && j.DeletionTimestamp == nil {
			return fmt.Errorf("planning Job not deleted")
		}
		return nil
	})
}

// A rejection set after an approved request recorded its consumers, but
// before its apply Job was made (a launcher stopped between the pause and
// its status write, or a pause retried), still stops it: Rejected, no apply
// Job, the consumers restored to their recorded count.
func TestEnvtestApprovalRejectedWhilePausingConsumers(t *testing.T) {
	env(t)
	installKEDA(t) // the launcher's ScaledObject lookups are real ones
	e := newApprovalEnv(t)
	d := makeDeployment(t, e.ns, "pausing-consumer", 2, nil)
	rr := manualRequest(e.ns, "pausing", "pausing").Wait(time.Minute).Consumers(deploymentRef("pausing-consumer")).Obj()
	create(t, rr)
	plan := planOf("pausing")
	e.playPlan(t, planJobOf(t, rr), plan)
	awaiting(t, rr)
	e.restart(t, func() {
		// What a launcher stopped right after recording the consumers of
		// the approved plan leaves, then a rejection.
		annotate(t, rr, v1alpha1.AnnotationApprove, plan.Plan, v1alpha1.AnnotationApprovedBy, "bob")
		cur := getRR(t, rr)
		cur.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: "bob", At: &metav1.Time{Time: time.Now()}, Digest: plan.Plan}
		state.SetCondition(cur, v1alpha1.ConditionAwaitingApproval, metav1.ConditionFalse, state.ReasonApproved, "plan "+plan.Plan+" approved by bob")
		cur.Status.Consumers = []v1alpha1.ConsumerStatus{{
			Kind: v1alpha1.ConsumerDeployment, Name: d.Name, Method: v1alpha1.PauseScale,
			Workload: "Deployment/" + d.Name, Replicas: ptr.To[int32](2), State: v1alpha1.ConsumerRecorded,
		}}
		state.SetCondition(cur, v1alpha1.ConditionConsumersPaused, metav1.ConditionFalse, state.ReasonPausing, "recorded, pausing")
		if err := k8s.Status().Update(context.Background(), cur); err != nil {
			t.Fatal(err)
		}
		setReplicas(t, d, 0) // paused, the status not written yet
		annotate(t, rr, v1alpha1.AnnotationReject, "not after all", v1alpha1.AnnotationApprovedBy, "carol")
	})
	cur := waitRestored(t, rr, state.ReasonRestored)
	if sc := condition(cur, v1alpha1.ConditionSucceeded); sc == nil || sc.Reason != state.ReasonRejected || !strings.Contains(sc.Message, "not after all") {
		t.Fatalf("Succeeded %+v", sc)
	}
	noApplyJob(t, rr)
	waitReplicas(t, d, 2)
}

// plantedJob is what a tenant who may create Jobs can make: a Job with the
// request's apply Job name, the request as its controller, and whatever
// annotations it likes, with the runner labels and the request annotation
// that put it in the launcher's cache and map its events to the request.
func plantedJob(rr *v1alpha1.ReplayRequest, annotations ...string) *batchv1.Job {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   rr.Namespace,
			Name:        runnerjob.Name(rr, runnerjob.StageApply),
			Labels:      runnerjob.Labels(rr, runnerjob.StageApply),
			Annotations: map[string]string{v1alpha1.AnnotationRequest: rr.Name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: v1alpha1.GroupVersion.String(), Kind: "ReplayRequest", Name: rr.Name, UID: rr.UID, Controller: ptr.To(true),
			}},
		},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: state.ContainerName, Image: "registry.example/anything:1"}},
		}}},
	}
	for i := 0; i+1 < len(annotations); i += 2 {
		job.Annotations[annotations[i]] = annotations[i+1]
	}
	return job
}

// A Job planted under the apply Job's name, controlled by the request, with
// a forged approval, never makes status say the plan was approved: the
// request fails JobConflict naming the Job, and adopts nothing. The honest
// restart cases are in TestEnvtestApprovalAcrossRestarts.
func TestEnvtestApprovalPlantedJob(t *testing.T) {
	e := newApprovalEnv(t)
	// notAdopted waits for rr to fail JobConflict naming job and what
	// disagrees, with no approval in status and no Job adopted.
	notAdopted := func(t *testing.T, rr *v1alpha1.ReplayRequest, job *batchv1.Job, says string) {
		t.Helper()
		cur := waitPhase(t, rr, v1alpha1.PhaseFailed)
		sc := condition(cur, v1alpha1.ConditionSucceeded)
		if sc.Reason != state.ReasonJobConflict || !strings.Contains(sc.Message, "Job "+job.Name+" ") || !strings.Contains(sc.Message, says) {
			t.Fatalf("Succeeded %+v, want %s naming Job %s and %q", sc, state.ReasonJobConflict, job.Name, says)
		}
		if cur.Status.Approval != nil || cur.Status.JobName != "" {
			t.Fatalf("approval %+v, jobName %q", cur.Status.Approval, cur.Status.JobName)
		}
		if c := condition(cur, v1alpha1.ConditionAwaitingApproval); c != nil && c.Reason == state.ReasonApproved {
			t.Fatalf("AwaitingApproval %+v", c)
		}
		waitEvent(t, rr.Namespace, rr.Name, state.ReasonJobConflict)
		// A pass after the finish (one that fills status.group in again)
		// has run, and it left the Job as it was: no outcome of this
		// request on it, still owned.
		eventually(t, 10*time.Second, "status.group emptied", func() error {
			emptied := getRR(t, rr)
			emptied.Status.Group = ""
			return k8s.Status().Update(context.Background(), emptied) // a conflict with the launcher's own writes: again
		})
		eventually(t, 10*time.Second, "a pass after the finish", func() error {
			if g := getRR(t, rr).Status.Group; g == "" {
				return fmt.Errorf("status.group not filled in again")
			}
			return nil
		})
		var now batchv1.Job
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(job), &now); err != nil {
			t.Fatal(err)
		}
		if state.IsRecorded(&now) || !lifecycle.ControlledBy(&now, cur) {
			t.Fatalf("the refused Job was touched: annotations %v, owners %+v", now.Annotations, now.OwnerReferences)
		}
	}

	t.Run("while the plan waits, approved by a name of its own", func(t *testing.T) {
		rr := manualRequest(e.ns, "planted-waiting", "planted-waiting").Obj()
		create(t, rr)
		plan := planOf("planted-waiting")
		e.playPlan(t, planJobOf(t, rr), plan)
		cur := awaiting(t, rr)
		job := plantedJob(cur, v1alpha1.AnnotationPlanDigest, plan.Plan, v1alpha1.AnnotationApprovedBy, "alice",
			v1alpha1.AnnotationApprovedAt, time.Now().UTC().Format(time.RFC3339))
		create(t, job)
		notAdopted(t, rr, job, "has no "+v1alpha1.AnnotationApprove)
	})

	t.Run("approved by bob while no launcher runs, the Job says alice", func(t *testing.T) {
		rr := manualRequest(e.ns, "planted-approver", "planted-approver").Obj()
		create(t, rr)
		plan := planOf("planted-approver")
		e.playPlan(t, planJobOf(t, rr), plan)
		cur := awaiting(t, rr)
		job := plantedJob(cur, v1alpha1.AnnotationPlanDigest, plan.Plan, v1alpha1.AnnotationApprovedBy, "alice")
		e.restart(t, func() {
			annotate(t, rr, v1alpha1.AnnotationApprove, plan.Plan, v1alpha1.AnnotationApprovedBy, "bob")
			create(t, job)
		})
		notAdopted(t, rr, job, `"alice"`)
	})

	t.Run("approved while no launcher runs, the Job applies another plan", func(t *testing.T) {
		rr := manualRequest(e.ns, "planted-plan", "planted-plan").Obj()
		create(t, rr)
		plan := planOf("planted-plan")
		e.playPlan(t, planJobOf(t, rr), plan)
		cur := awaiting(t, rr)
		const forged = "ffffffffffffffff"
		job := plantedJob(cur, v1alpha1.AnnotationPlanDigest, forged, v1alpha1.AnnotationApprovedBy, "bob")
		e.restart(t, func() {
			annotate(t, rr, v1alpha1.AnnotationApprove, plan.Plan, v1alpha1.AnnotationApprovedBy, "bob")
			create(t, job)
		})
		notAdopted(t, rr, job, forged)
	})

	t.Run("while planning", func(t *testing.T) {
		rr := manualRequest(e.ns, "planted-planning", "planted-planning").Obj()
		create(t, rr)
		planJobOf(t, rr)
		cur := waitPhase(t, rr, v1alpha1.PhaseRunning) // planning
		job := plantedJob(cur, v1alpha1.AnnotationPlanDigest, "0123456789abcdef", v1alpha1.AnnotationApprovedBy, "alice")
		create(t, job)
		notAdopted(t, rr, job, "no plan")
	})
}
