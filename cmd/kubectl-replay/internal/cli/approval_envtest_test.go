package cli_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/exit"
	"github.com/kafka-replay/kafka-replay/launcher"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// planResult is the dry run a planning runner prints: orders' partitions
// rewound by these deltas, with its digest.
func planResult(group string, deltas ...int64) *report.Result {
	r := runResult(group, report.ExitOK, deltas...)
	r.DryRun, r.Reason = true, report.ReasonDryRun
	for i := range r.Partitions {
		r.Partitions[i].Applied = false
	}
	r.Summarize()
	r.Plan = report.PlanDigest(r.Group, r.Target.Resolved, r.Partitions)
	return r
}

// appliedResult is what the runner of an approved plan answers.
func appliedResult(plan *report.Result) *report.Result {
	r := *plan
	r.DryRun, r.Reason = false, report.ReasonApplied
	r.Target.Given = "plan:/etc/kafka-replay/input/input.json.gz"
	r.Partitions = append([]report.Partition(nil), plan.Partitions...)
	for i := range r.Partitions {
		r.Partitions[i].Applied = true
	}
	r.Summarize()
	return &r
}

// undoResult is what the runner of an undo answers: every partition of
// done back at its previous offset.
func undoResult(done *report.Result) *report.Result {
	r := *done
	r.Target = report.Target{Given: "undo:/etc/kafka-replay/input/input.json.gz", Resolved: "undo:/etc/kafka-replay/input/input.json.gz"}
	r.Plan, r.RunID = "", "undo-run"
	r.Partitions = nil
	for _, p := range done.Partitions {
		prev, back := p.NewOffset, *p.PreviousOffset
		d := prev - back
		r.Partitions = append(r.Partitions, report.Partition{Topic: p.Topic, Partition: p.Partition, PreviousOffset: &prev, NewOffset: back, Delta: &d, LogStartOffset: p.LogStartOffset, LogEndOffset: p.LogEndOffset, Applied: true})
	}
	r.Summarize()
	return &r
}

func planJob(t *testing.T, ns, name string) *batchv1.Job {
	t.Helper()
	var job batchv1.Job
	eventually(t, 30*time.Second, "planning Job of "+name, func() error {
		var rr v1alpha1.ReplayRequest
		if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &rr); err != nil {
			return err
		}
		return k8s.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: launcher.JobName(&rr, launcher.StagePlan)}, &job)
	})
	return &job
}

func waitPhase(t *testing.T, ns, name string, phase v1alpha1.Phase) *v1alpha1.ReplayRequest {
	t.Helper()
	var rr *v1alpha1.ReplayRequest
	eventually(t, 30*time.Second, name+" "+string(phase), func() error {
		rr = getRR(t, ns, name)
		if rr.Status.Phase != phase {
			return errorf("phase %q: %+v", rr.Status.Phase, rr.Status.Conditions)
		}
		return nil
	})
	return rr
}

// The whole workflow with the launcher doing its part: create a Manual
// request and follow it (--wait) through its plan, the approval (from
// another "terminal": approve), the apply and the outcome; the plan
// table from the planning Job's record; describe with who approved; undo
// it and follow that; history with all three Jobs. A rejected plan ends
// reject --wait with exit 1.
func TestEnvtestManualApproveApplyUndo(t *testing.T) {
	env(t)
	ns := newNamespace(t)
	logs := testutil.NewRunnerLogs()
	startLauncher(t, ns, logs)
	servers := "kafka." + ns + ".svc:9092"

	var wg sync.WaitGroup
	var waited result
	wg.Add(1)
	go func() {
		defer wg.Done()
		waited = plugin(t, ns, operator, "create", "manual", "--bootstrap-servers", servers, "--group", "orders", "--topic", "orders",
			"--to", "shift:-100", "--approval", "Manual", "--max-messages-to-reconsume", "1000", "--wait", "--timeout", "5m")
	}()
	plan := planResult("orders", 100, 300, 20)
	runJob(t, logs, planJob(t, ns, "manual"), plan)
	rr := waitPhase(t, ns, "manual", v1alpha1.PhaseAwaitingApproval)
	if rr.Status.Plan.Digest != plan.Plan || rr.Spec.Limits == nil || *rr.Spec.Limits.MaxMessagesToReconsume != 1000 {
		t.Fatalf("status.plan %+v, limits %+v", rr.Status.Plan, rr.Spec.Limits)
	}

	r := plugin(t, ns, viewer, "plan", "manual")
	wantCode(t, "plan", r, exit.OK)
	contains(t, "plan", r.out, "Plan "+plan.Plan+" of "+ns+"/manual: group orders, target shift:-100", "total 3 partitions: 420 messages re-consumed, 0 skipped", "approve: kubectl replay approve manual -n "+ns)
	lines := strings.Split(r.out, "\n")
	if !strings.HasPrefix(lines[4], "orders") || !strings.Contains(lines[4], "+300") || !strings.Contains(lines[6], "+20") {
		t.Errorf("plan not sorted by the largest delta:\n%s", r.out)
	}

	r = plugin(t, ns, operator, "approve", "manual")
	wantCode(t, "approve", r, exit.OK)
	contains(t, "approve", r.out, "approved plan "+plan.Plan)
	var apply *batchv1.Job
	eventually(t, 30*time.Second, "the apply Job", func() error {
		cur := getRR(t, ns, "manual")
		if cur.Status.JobName == "" {
			return errorf("no apply Job yet: %+v", cur.Status.Conditions)
		}
		apply = waitJob(t, ns, "manual")
		return nil
	})
	if apply.Annotations[v1alpha1.AnnotationPlanDigest] != plan.Plan {
		t.Errorf("apply Job's plan digest %q, want %q", apply.Annotations[v1alpha1.AnnotationPlanDigest], plan.Plan)
	}
	applied := appliedResult(plan)
	runJob(t, logs, apply, applied)
	wg.Wait()
	wantCode(t, "create --wait of a Manual request", waited, exit.OK)
	contains(t, "create --wait of a Manual request", waited.out, "plan", plan.Plan+": 3 partitions, 420 to re-consume", "approval", "waiting: kubectl replay approve manual", "approved by", "succeeded Applied", "undo with: kubectl replay undo manual -n "+ns)

	r = plugin(t, ns, viewer, "describe", "manual")
	wantCode(t, "describe", r, exit.OK)
	contains(t, "describe", r.out, "Decision:     Approved by ", "plan "+plan.Plan, "Undo with:    kubectl replay undo manual")
	hasRow(t, "describe", r.out, "orders", "1", "1000", "700", "+300", "0..2000")

	// Undo, followed to its end.
	wg.Add(1)
	go func() {
		defer wg.Done()
		waited = plugin(t, ns, operator, "undo", "manual", "--wait", "--timeout", "5m")
	}()
	undoJob := waitJob(t, ns, "manual-undo")
	if undoJob.Annotations[v1alpha1.AnnotationUndoOf] != "manual" {
		t.Errorf("undo Job annotations %v", undoJob.Annotations)
	}
	runJob(t, logs, undoJob, undoResult(applied))
	wg.Wait()
	wantCode(t, "undo --wait", waited, exit.OK)
	contains(t, "undo --wait", waited.out, "replayrequest.kafkareplay.dev/manual-undo created (undoes manual)", "succeeded Applied")

	// history: the undo, the apply and the plan, newest first.
	r = plugin(t, ns, viewer, "history", "--group", "orders")
	wantCode(t, "history", r, exit.OK)
	rows := strings.Split(strings.TrimSpace(r.out), "\n")
	if len(rows) != 5 || !strings.Contains(rows[1], "request/manual-undo") || !strings.Contains(rows[2], "request/manual") || !strings.Contains(rows[2], "apply") ||
		!strings.Contains(rows[3], "plan") || !strings.Contains(rows[3], "(420)") || !strings.HasPrefix(rows[4], "(counts in parentheses") {
		t.Errorf("history:\n%s", r.out)
	}

	// A rejected plan: reject --wait follows it to its failure.
	wantCode(t, "create", plugin(t, ns, operator, "create", "other", "--bootstrap-servers", servers, "--group", "orders", "--to", "shift:-5", "--approval", "Manual"), exit.OK)
	runJob(t, logs, planJob(t, ns, "other"), planResult("orders", 5))
	waitPhase(t, ns, "other", v1alpha1.PhaseAwaitingApproval)
	r = plugin(t, ns, operator, "reject", "other", "--reason", "wrong group", "--wait", "--timeout", "5m")
	wantCode(t, "reject --wait", r, exit.Failed)
	contains(t, "reject --wait", r.errOut, "replayrequest other failed: Rejected")
	r = plugin(t, ns, operator, "approve", "other")
	wantCode(t, "approve of a rejected request", r, exit.WrongState)
}

// TestEnvtestDeleteAllInternalTopics: create --delete-all-internal-topics
// on a streams group, approval Manual. The planning Job runs with the
// setting, and its plan's internal topics show in status.plan, plan and
// describe before anyone approves; the digest of the same partitions
// without them approves nothing; the approved apply Job runs with the
// setting and its plan (its ConfigMap) carries the list; describe says
// what was deleted, and that an undo cannot recreate it; the undo does
// not delete again.
func TestEnvtestDeleteAllInternalTopics(t *testing.T) {
	env(t)
	ns := newNamespace(t)
	logs := testutil.NewRunnerLogs()
	startLauncher(t, ns, logs)
	servers := "kafka." + ns + ".svc:9092"
	topics := []string{"orders-app-counts-changelog", "orders-app-rekey-repartition"}

	r := plugin(t, ns, operator, "create", "app", "--bootstrap-servers", servers, "--group", "orders-app", "--group-type", "Streams",
		"--to", "shift:-100", "--approval", "Manual", "--delete-all-internal-topics")
	wantCode(t, "create", r, exit.OK)
	pj := planJob(t, ns, "app")
	if v := testutil.RunnerEnv(pj)[config.EnvDeleteAllInternalTopics]; v != "true" {
		t.Errorf("planning Job: %s=%q", config.EnvDeleteAllInternalTopics, v)
	}
	plan := planResult("orders-app", 100, 300)
	keeping := plan.Plan
	plan.GroupType = "Streams"
	plan.InternalTopics = &report.InternalTopics{Planned: topics}
	plan.Plan = plan.Digest()
	runJob(t, logs, pj, plan)
	rr := waitPhase(t, ns, "app", v1alpha1.PhaseAwaitingApproval)
	if rr.Status.Plan.Digest != plan.Plan || strings.Join(rr.Status.Plan.InternalTopics, ",") != strings.Join(topics, ",") {
		t.Fatalf("status.plan %+v", rr.Status.Plan)
	}
	r = plugin(t, ns, viewer, "plan", "app")
	wantCode(t, "plan", r, exit.OK)
	contains(t, "plan", r.out, "Deletes internal topics once the offsets are moved: orders-app-counts-changelog, orders-app-rekey-repartition (an undo cannot recreate them)")
	r = plugin(t, ns, viewer, "describe", "app")
	contains(t, "describe", r.out, "Internal:     topics the plan deletes once the offsets are moved: orders-app-counts-changelog, orders-app-rekey-repartition; an undo cannot recreate them")

	// The reviewer of the same partitions without the deletion approves
	// nothing.
	r = plugin(t, ns, operator, "approve", "app", "--digest", keeping)
	wantCode(t, "approve with the digest of the plan without the topics", r, exit.WrongState)
	r = plugin(t, ns, operator, "approve", "app", "--digest", plan.Plan)
	wantCode(t, "approve", r, exit.OK)
	var apply *batchv1.Job
	eventually(t, 30*time.Second, "the apply Job", func() error {
		if getRR(t, ns, "app").Status.JobName == "" {
			return errorf("no apply Job yet")
		}
		apply = waitJob(t, ns, "app")
		return nil
	})
	if v := testutil.RunnerEnv(apply)[config.EnvDeleteAllInternalTopics]; v != "true" {
		t.Errorf("apply Job: %s=%q", config.EnvDeleteAllInternalTopics, v)
	}
	in := jobInput(t, apply)
	if in.InternalTopics == nil || strings.Join(in.InternalTopics.Planned, ",") != strings.Join(topics, ",") || in.Plan != plan.Plan || in.Digest() != plan.Plan {
		t.Errorf("the apply's plan: internal topics %+v, digest %s (recomputed %s), want %q under %s", in.InternalTopics, in.Plan, in.Digest(), topics, plan.Plan)
	}
	applied := appliedResult(plan)
	applied.InternalTopics = &report.InternalTopics{Planned: topics, Deleted: topics}
	runJob(t, logs, apply, applied)
	waitPhase(t, ns, "app", v1alpha1.PhaseSucceeded)
	r = plugin(t, ns, viewer, "describe", "app")
	contains(t, "describe", r.out, "Internal:     topics deleted: orders-app-counts-changelog, orders-app-rekey-repartition; an undo cannot recreate them")

	r = plugin(t, ns, operator, "undo", "app")
	wantCode(t, "undo", r, exit.OK)
	undoJob := waitJob(t, ns, "app-undo")
	if v, ok := testutil.RunnerEnv(undoJob)[config.EnvDeleteAllInternalTopics]; ok {
		t.Errorf("the undo deletes topics: %s=%q", config.EnvDeleteAllInternalTopics, v)
	}
	if u := getRR(t, ns, "app-undo"); u.Spec.DeleteAllInternalTopics {
		t.Errorf("the undo's spec deletes internal topics")
	}
	if undone := jobInput(t, undoJob); undone.InternalTopics == nil || strings.Join(undone.InternalTopics.Deleted, ",") != strings.Join(topics, ",") {
		t.Errorf("the undo's input does not say what the run deleted (the runner warns from it): %+v", undone.InternalTopics)
	}
}

// jobInput decodes the plan or undone result a Job's input ConfigMap
// holds (the ConfigMap volume the launcher mounts).
func jobInput(t *testing.T, job *batchv1.Job) *report.Result {
	t.Helper()
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.ConfigMap == nil || len(v.ConfigMap.Items) != 1 {
			continue
		}
		var cm corev1.ConfigMap
		if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: job.Namespace, Name: v.ConfigMap.Name}, &cm); err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(cm.BinaryData[v.ConfigMap.Items[0].Key]))
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
	t.Fatalf("Job %s mounts no input ConfigMap", job.Name)
	return nil
}

// TestEnvtestPlanWait: plan --wait returns with the plan once it is ready,
// and with the reason, exit 1, when the planning run fails: a failure
// never makes a plan, so it must not wait out --timeout (issue 32,
// friction 2's class: the documented wait for AwaitingApproval did).
func TestEnvtestPlanWait(t *testing.T) {
	env(t)
	ns := newNamespace(t)
	logs := testutil.NewRunnerLogs()
	startLauncher(t, ns, logs)
	servers := "kafka." + ns + ".svc:9092"

	for _, c := range []struct {
		name    string
		planned *report.Result
		code    exit.Code
		want    string
	}{
		{"ready", planResult("orders", 100, 300, 20), exit.OK, "total 3 partitions: 420 messages re-consumed, 0 skipped"},
		{"refused", runResult("orders", report.ExitGroupActive, 5), exit.Failed, "replayrequest refused failed: GroupActive"},
	} {
		wantCode(t, "create "+c.name, plugin(t, ns, operator, "create", c.name, "--bootstrap-servers", servers, "--group", "orders", "--to", "shift:-100", "--approval", "Manual"), exit.OK)
		done := make(chan result, 1)
		go func() { done <- plugin(t, ns, viewer, "plan", c.name, "--wait", "--timeout", "5m") }()
		runJob(t, logs, planJob(t, ns, c.name), c.planned)
		r := <-done
		wantCode(t, "plan --wait of "+c.name, r, c.code)
		contains(t, "plan --wait of "+c.name, r.out+r.errOut, c.want)
	}
}
