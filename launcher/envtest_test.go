package launcher_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"

	"github.com/kafka-replay/kafka-replay/launcher"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

func condition(rr *v1alpha1.ReplayRequest, typ string) *metav1.Condition {
	return meta.FindStatusCondition(rr.Status.Conditions, typ)
}

// A request becomes the expected Job, and its status says so.
func TestEnvtestRequestBecomesExpectedJob(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 2)

	rr := testutil.MakeRequest(ns, "replay-orders").Ago(2*time.Hour).Topic("orders", 0, 1).Topic("payments").
		ConfigMap("kafka-props").Secret("kafka-creds").Obj()
	create(t, rr)
	job := waitJob(t, rr)
	cur := waitPhase(t, rr, v1alpha1.PhaseRunning)

	// ago was resolved once, against the request's creationTimestamp (item
	// 10): exactly 2h before it, not 2h before whenever the launcher got to
	// it.
	at, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(cur.Status.ResolvedTarget, "time:"))
	if want := cur.CreationTimestamp.Add(-2 * time.Hour); err != nil || !at.Equal(want) {
		t.Fatalf("resolvedTarget %q (%v), want creationTimestamp minus 2h = %s", cur.Status.ResolvedTarget, err, want.UTC().Format(time.RFC3339Nano))
	}
	// The Job is exactly what the builder makes from the stored request.
	want, err := launcher.BuildJob(cur, runnerjob.StageApply, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range want.Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom != nil {
			e.ValueFrom.FieldRef.APIVersion = "v1" // defaulted by the API server
		}
	}
	if !reflect.DeepEqual(job.Labels, want.Labels) || !reflect.DeepEqual(job.Annotations, want.Annotations) ||
		!reflect.DeepEqual(job.OwnerReferences, want.OwnerReferences) || !reflect.DeepEqual(job.Spec.PodFailurePolicy, want.Spec.PodFailurePolicy) ||
		!reflect.DeepEqual(job.Spec.Template.Spec.Containers[0].Env, want.Spec.Template.Spec.Containers[0].Env) ||
		*job.Spec.BackoffLimit != *want.Spec.BackoffLimit || *job.Spec.ActiveDeadlineSeconds != *want.Spec.ActiveDeadlineSeconds {
		t.Fatalf("Job differs from BuildJob:\n got %s\nwant %s", testutil.JSON(job), testutil.JSON(want))
	}
	env := testutil.RunnerEnv(job)
	if env[config.EnvTo] != cur.Status.ResolvedTarget || env[config.EnvTopics] != "orders:0,1 payments" || env[config.EnvKafkaConfigDir] == "" {
		t.Fatalf("env = %v", env)
	}

	// Status: Accepted, Running, times, generation.
	if c := condition(cur, v1alpha1.ConditionAccepted); c == nil || c.Status != metav1.ConditionTrue || c.Reason != state.ReasonAccepted || c.ObservedGeneration != cur.Generation {
		t.Fatalf("Accepted = %+v", c)
	}
	if c := condition(cur, v1alpha1.ConditionRunning); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("Running = %+v", c)
	}
	if condition(cur, v1alpha1.ConditionSucceeded) != nil || cur.Status.StartTime == nil || cur.Status.ObservedGeneration != cur.Generation {
		t.Fatalf("status = %+v", cur.Status)
	}
	waitEvent(t, ns, rr.Name, state.ReasonAccepted)
	waitEvent(t, ns, rr.Name, state.ReasonJobCreated)

	// The pod passes the restricted Pod Security Standard: the API server's
	// PodSecurity admission admits it in a namespace that enforces it.
	restricted := newNamespace(t, map[string]string{"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest"})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: restricted, Name: "runner"}, Spec: *job.Spec.Template.Spec.DeepCopy()}
	create(t, pod)
	// And the control: the same namespace refuses a pod without it.
	bad := pod.DeepCopy()
	bad.Name, bad.ResourceVersion = "privileged", ""
	bad.Spec.Containers[0].SecurityContext = nil
	if err := k8s.Create(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "restricted") {
		t.Fatalf("PodSecurity admission is not enforcing (err %v); the check above proves nothing", err)
	}
}

// A finished Job becomes Succeeded with the runner's result, on the request
// and on the Job.
func TestEnvtestFinishedJobSucceedsWithResult(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 2)

	rr := testutil.MakeRequest(ns, "replay").ShiftBy(-100).Obj()
	create(t, rr)
	job := waitJob(t, rr)
	res := testutil.Result("orders", report.ExitOK, 100, 100, 100)
	res.RunID = string(job.UID)
	pod := runPod(t, job, 0, 0, testutil.Compact(res))
	finishJob(t, job, "")

	cur := waitPhase(t, rr, v1alpha1.PhaseSucceeded)
	c := condition(cur, v1alpha1.ConditionSucceeded)
	if c.Status != metav1.ConditionTrue || c.Reason != string(report.ReasonApplied) {
		t.Fatalf("Succeeded = %+v", c)
	}
	if r := condition(cur, v1alpha1.ConditionRunning); r.Status != metav1.ConditionFalse {
		t.Fatalf("Running = %+v", r)
	}
	if f := condition(cur, v1alpha1.ConditionFinished); f == nil || f.Status != metav1.ConditionTrue || f.Reason != string(report.ReasonApplied) {
		t.Fatalf("Finished = %+v", f)
	}
	got := cur.Status.Result
	if got == nil || got.RunID != string(job.UID) || got.Totals.MessagesToReconsume != 300 || len(got.Partitions) != 3 || *got.Partitions[2].Delta != 100 {
		t.Fatalf("result = %+v", got)
	}
	if cur.Status.CompletionTime == nil || !strings.Contains(cur.Status.LogTail, pod.Name+": committed") || !strings.Contains(cur.Status.Message, "300 messages") {
		t.Fatalf("status = %+v", cur.Status)
	}
	// The Job tells the story alone, and is no longer owned by the request:
	// both in one patch, right after the status write.
	var j batchv1.Job
	eventually(t, 10*time.Second, "the finished Job recorded and released", func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(job), &j); err != nil {
			return err
		}
		if !state.IsRecorded(&j) || len(j.OwnerReferences) != 0 {
			return fmt.Errorf("annotations %v, owners %+v", j.Annotations, j.OwnerReferences)
		}
		return nil
	})
	if j.Annotations[v1alpha1.AnnotationOutcome] != "Succeeded" || j.Annotations[v1alpha1.AnnotationReason] != "Applied" || j.Annotations[v1alpha1.AnnotationMessagesReconsumed] != "300" {
		t.Fatalf("job annotations = %v", j.Annotations)
	}
	if r, err := report.Decode([]byte(j.Annotations[v1alpha1.AnnotationResult])); err != nil || r.Totals.MessagesToReconsume != 300 {
		t.Fatalf("result annotation: %v", err)
	}
	waitEvent(t, ns, rr.Name, "Applied")
	// History: the group's Jobs are listed by label.
	if n := len(jobsOf(t, ns, map[string]string{v1alpha1.LabelGroup: "orders"})); n != 1 {
		t.Fatalf("%d Jobs for group orders", n)
	}
}

// Every failure reason reaches the Succeeded=False condition.
func TestEnvtestFailureReasons(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 4)

	type tc struct {
		name    string
		req     *testutil.RequestWrapper
		act     func(t *testing.T, job *batchv1.Job) // nil: refused before any Job
		reason  string
		message string
	}
	runnerFails := func(code report.ExitCode, jobReason string) func(t *testing.T, job *batchv1.Job) {
		return func(t *testing.T, job *batchv1.Job) {
			runPod(t, job, 0, int32(code), testutil.Compact(testutil.Result("orders", code, 1)))
			finishJob(t, job, jobReason)
		}
	}
	cases := []tc{
		{"internal", nil, runnerFails(report.ExitInternal, batchv1.JobReasonBackoffLimitExceeded), "InternalError", "runner failed"},
		{"invalid-input", nil, runnerFails(report.ExitInvalidInput, batchv1.JobReasonPodFailurePolicy), "InvalidInput", "runner failed"},
		{"group-active", nil, runnerFails(report.ExitGroupActive, batchv1.JobReasonPodFailurePolicy), "GroupActive", "runner failed"},
		{"kafka-error", nil, runnerFails(report.ExitKafkaError, batchv1.JobReasonBackoffLimitExceeded), "KafkaError", "runner failed"},
		{"partially-applied", nil, runnerFails(report.ExitPartiallyApplied, batchv1.JobReasonBackoffLimitExceeded), "PartiallyApplied", "runner failed"},
		{"interrupted", nil, runnerFails(report.ExitInterrupted, batchv1.JobReasonBackoffLimitExceeded), "Interrupted", "runner failed"},
		{"crash-logs-fallback", nil, func(t *testing.T, job *batchv1.Job) {
			runPod(t, job, 0, 4, "dialing kafka:9092\nall brokers down\n")
			finishJob(t, job, batchv1.JobReasonBackoffLimitExceeded)
		}, "KafkaError", "exited with code 4: all brokers down"},
		{"retried-then-failed", nil, func(t *testing.T, job *batchv1.Job) {
			runPod(t, job, 0, 4, testutil.Compact(testutil.Result("orders", report.ExitKafkaError, 1)))
			time.Sleep(1100 * time.Millisecond) // a later attempt finishes later
			runPod(t, job, 1, 5, testutil.Compact(testutil.Result("orders", report.ExitPartiallyApplied, 1)))
			finishJob(t, job, batchv1.JobReasonBackoffLimitExceeded)
		}, "PartiallyApplied", ""},
		{"deadline", nil, func(t *testing.T, job *batchv1.Job) {
			finishJob(t, job, batchv1.JobReasonDeadlineExceeded)
		}, state.ReasonDeadlineExceeded, "activeDeadlineSeconds"},
		{"job-deleted", nil, func(t *testing.T, job *batchv1.Job) {
			if err := k8s.Delete(context.Background(), job); err != nil {
				t.Fatal(err)
			}
		}, state.ReasonJobDeleted, "deleted before it finished"},
		// Admission refuses a time before 1970; an ago that far back is
		// only found out on acceptance.
		{"invalid-target", testutil.MakeRequest(ns, "invalid-target").Ago(1_000_000 * time.Hour), nil, state.ReasonInvalidTarget, "before 1970"},
		{"image-not-allowed", testutil.MakeRequest(ns, "image-not-allowed").Group("g-image").Runner(v1alpha1.RunnerOverrides{Image: "evil.example.com/miner:1"}), nil, string(report.ReasonInvalidInput), "runner.image"},
	}
	for i := range cases {
		c := &cases[i]
		if c.req == nil {
			// A group per case, so the cases run side by side.
			c.req = testutil.MakeRequest(ns, c.name).Group("g-" + c.name)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rr := c.req.Obj()
			create(t, rr)
			if c.act != nil {
				c.act(t, waitJob(t, rr))
			}
			cur := waitPhase(t, rr, v1alpha1.PhaseFailed)
			sc := condition(cur, v1alpha1.ConditionSucceeded)
			if sc.Status != metav1.ConditionFalse || sc.Reason != c.reason || !strings.Contains(sc.Message, c.message) {
				t.Fatalf("Succeeded = %+v, want False/%s ~%q", sc, c.reason, c.message)
			}
			if cur.Status.CompletionTime == nil || cur.Status.Phase != v1alpha1.PhaseFailed {
				t.Fatalf("status = %+v", cur.Status)
			}
			// Finished is True on failure too: kubectl wait
			// --for=condition=Finished returns (item 11).
			if f := condition(cur, v1alpha1.ConditionFinished); f == nil || f.Status != metav1.ConditionTrue || f.Reason != c.reason {
				t.Fatalf("Finished = %+v, want True/%s", f, c.reason)
			}
			waitEvent(t, ns, rr.Name, c.reason)
			if c.act == nil {
				if a := condition(cur, v1alpha1.ConditionAccepted); a.Status != metav1.ConditionFalse || a.Reason != c.reason {
					t.Fatalf("Accepted = %+v", a)
				}
				if cur.Status.JobName != "" || len(jobsOf(t, ns, map[string]string{v1alpha1.LabelRequest: rr.Name})) != 0 {
					t.Fatal("a refused request got a Job")
				}
			}
		})
	}
}

// The spec is immutable; metadata and status are not.
func TestEnvtestSpecIsImmutable(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	rr := testutil.MakeRequest(ns, "fixed").Obj()
	create(t, rr)
	ctx := context.Background()
	mutations := map[string]func(*v1alpha1.ReplayRequest){
		"group":     func(r *v1alpha1.ReplayRequest) { r.Spec.Group = "other" },
		"target":    func(r *v1alpha1.ReplayRequest) { r.Spec.Target = v1alpha1.Target{ShiftBy: ptr.To[int64](-1)} },
		"dryRun":    func(r *v1alpha1.ReplayRequest) { r.Spec.DryRun = true },
		"bootstrap": func(r *v1alpha1.ReplayRequest) { r.Spec.Kafka.BootstrapServers = "other:9092" },
		"topics":    func(r *v1alpha1.ReplayRequest) { r.Spec.Topics = []v1alpha1.TopicSelector{{Name: "x"}} },
		"runner":    func(r *v1alpha1.ReplayRequest) { r.Spec.Runner = &v1alpha1.RunnerOverrides{Image: "evil:latest"} },
	}
	for name, mutate := range mutations {
		cur := getRR(t, rr)
		mutate(cur)
		err := k8s.Update(ctx, cur)
		if err == nil || !strings.Contains(err.Error(), "spec is immutable") {
			t.Errorf("%s: update err = %v, want spec is immutable", name, err)
		}
	}
	cur := getRR(t, rr)
	cur.Labels = map[string]string{"team": "payments"}
	if err := k8s.Update(ctx, cur); err != nil {
		t.Fatalf("label update refused: %v", err)
	}
}

// A launcher restart, at any point, never makes a second Job.
func TestEnvtestNoDuplicateJobAcrossRestart(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	ctx := context.Background()

	// 1. Restart while the Job runs.
	l := startLauncher(t, testOptions(), 2)
	rr := testutil.MakeRequest(ns, "restart").Obj()
	create(t, rr)
	job := waitJob(t, rr)
	l.stop(t)
	l = startLauncher(t, testOptions(), 2)
	time.Sleep(500 * time.Millisecond) // let it reconcile everything it sees
	if n := len(jobsOf(t, ns, map[string]string{v1alpha1.LabelRequest: "restart"})); n != 1 {
		t.Fatalf("%d Jobs after a restart", n)
	}
	runPod(t, job, 0, 0, testutil.Compact(testutil.Result("orders", report.ExitOK, 1)))
	finishJob(t, job, "")
	waitPhase(t, rr, v1alpha1.PhaseSucceeded)
	l.stop(t)

	// 2. The previous leader created the Job and stopped before recording
	// it in status: the new one adopts the Job instead of making another.
	rr2 := testutil.MakeRequest(ns, "crashed").Group("crashed").Obj()
	create(t, rr2)
	cur := getRR(t, rr2)
	target, err := launcher.ResolveTarget(cur.Spec.Target, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cur.Status.ResolvedTarget = target
	state.SetCondition(cur, v1alpha1.ConditionAccepted, metav1.ConditionTrue, state.ReasonAccepted, "")
	if err := k8s.Status().Update(ctx, cur); err != nil {
		t.Fatal(err)
	}
	orphan, err := launcher.BuildJob(cur, runnerjob.StageApply, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	create(t, orphan)
	l = startLauncher(t, testOptions(), 2)
	adopted := waitJob(t, rr2)
	if adopted.UID != orphan.UID {
		t.Fatalf("launcher made Job %s (%s), not the existing %s", adopted.Name, adopted.UID, orphan.UID)
	}
	time.Sleep(500 * time.Millisecond)
	if n := len(jobsOf(t, ns, map[string]string{v1alpha1.LabelRequest: "crashed"})); n != 1 {
		t.Fatalf("%d Jobs after adopting", n)
	}
	// The resolved target survived the restart unchanged.
	if got := getRR(t, rr2).Status.ResolvedTarget; got != target {
		t.Fatalf("resolvedTarget moved: %q → %q", target, got)
	}

	// 3. The previous leader resolved an ago target and created the Job
	// (which carries it), then stopped before any status write: the new
	// leader adopts the Job and its target, and never resolves ago again.
	l.stop(t)
	rr3 := testutil.MakeRequest(ns, "crashed-ago").Group("crashed-ago").Ago(time.Hour).Obj()
	create(t, rr3)
	earlier := testutil.MakeRequest(ns, rr3.Name).Obj()
	earlier.ObjectMeta, earlier.Spec = rr3.ObjectMeta, rr3.Spec
	// Resolved against another instant than the request's own, so that
	// resolving it again would show; BuildJob resolves against the
	// creationTimestamp it is given.
	earlier.CreationTimestamp = metav1.NewTime(time.Now().Add(-10 * time.Minute))
	target3, err := launcher.ResolveTarget(rr3.Spec.Target, earlier.CreationTimestamp.Time)
	if err != nil {
		t.Fatal(err)
	}
	earlier.Status.ResolvedTarget = target3
	orphan3, err := launcher.BuildJob(earlier, runnerjob.StageApply, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	create(t, orphan3)
	startLauncher(t, testOptions(), 2)
	adopted3 := waitJob(t, rr3)
	if adopted3.UID != orphan3.UID {
		t.Fatalf("launcher made a second Job for %s", rr3.Name)
	}
	if got := getRR(t, rr3).Status.ResolvedTarget; got != target3 {
		t.Fatalf("ago resolved twice: the Job carries %q, status says %q", target3, got)
	}
}

// Three requests for one group run one at a time, first in first out, while
// another group's request runs alongside.
func TestEnvtestPerGroupSerialization(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 4)

	var rrs []*v1alpha1.ReplayRequest
	for i, name := range []string{"third-by-name", "second-by-name", "first-by-name"} {
		if i > 0 {
			time.Sleep(1100 * time.Millisecond) // creation times are whole seconds
		}
		rr := testutil.MakeRequest(ns, name).Group("payments").Obj()
		create(t, rr)
		rrs = append(rrs, rr)
	}
	other := testutil.MakeRequest(ns, "other-group").Group("shipping").Obj()
	create(t, other)
	waitJob(t, other) // not held up by the payments queue

	expectWaiting := func(rr *v1alpha1.ReplayRequest, blocker string) {
		t.Helper()
		eventually(t, 10*time.Second, rr.Name+" waits for "+blocker, func() error {
			cur := getRR(t, rr)
			c := condition(cur, v1alpha1.ConditionAccepted)
			if c == nil || c.Reason != state.ReasonWaitingForGroup || !strings.Contains(c.Message, ns+"/"+blocker) || cur.Status.JobName != "" || cur.Status.Phase != v1alpha1.PhasePending {
				return fmt.Errorf("status %+v", cur.Status)
			}
			return nil
		})
	}
	job0 := waitJob(t, rrs[0])
	expectWaiting(rrs[1], rrs[0].Name)
	expectWaiting(rrs[2], rrs[1].Name) // the request just ahead of it
	waitEvent(t, ns, rrs[1].Name, state.ReasonWaitingForGroup)

	runPod(t, job0, 0, 0, testutil.Compact(testutil.Result("payments", report.ExitOK, 1)))
	finishJob(t, job0, "")
	waitPhase(t, rrs[0], v1alpha1.PhaseSucceeded)
	job1 := waitJob(t, rrs[1])
	expectWaiting(rrs[2], rrs[1].Name)

	runPod(t, job1, 0, 3, testutil.Compact(testutil.Result("payments", report.ExitGroupActive, 1)))
	finishJob(t, job1, batchv1.JobReasonPodFailurePolicy)
	waitPhase(t, rrs[1], v1alpha1.PhaseFailed) // a failure frees the group too
	job2 := waitJob(t, rrs[2])

	// Never two payments Jobs unfinished at once: the first two are recorded.
	for _, j := range []*batchv1.Job{job0, job1} {
		var cur batchv1.Job
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(j), &cur); err != nil {
			t.Fatal(err)
		}
		if finished, _, _ := state.JobFinished(&cur); !finished {
			t.Fatalf("%s not finished before the next started", j.Name)
		}
	}
	_ = job2
	// A request deleted mid-run frees the group for the next one; its Job is
	// owned by it, so the garbage collector takes Job and pod with it.
	next := testutil.MakeRequest(ns, "after-delete").Group("payments").Obj()
	create(t, next)
	expectWaiting(next, rrs[2].Name)
	var j2 batchv1.Job
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(job2), &j2); err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(&j2); ref == nil || ref.UID != getRR(t, rrs[2]).UID || !*ref.BlockOwnerDeletion {
		t.Fatalf("running Job not owned by its request: %+v", j2.OwnerReferences)
	}
	if err := k8s.Delete(context.Background(), rrs[2]); err != nil {
		t.Fatal(err)
	}
	waitJob(t, next)
}

// Finished launcher-made Jobs beyond --history-limit are deleted, the oldest
// first, per group; requests never are (item 1: a deleted request kept in Git
// comes back with a new UID and would run again).
func TestEnvtestHistoryLimit(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	opts := testOptions()
	opts.HistoryLimit = 2
	startLauncher(t, opts, 2)

	bystander := testutil.MakeRequest(ns, "other-group").Group("other").Obj()
	create(t, bystander)
	bj := waitJob(t, bystander)
	runPod(t, bj, 0, 0, testutil.Compact(testutil.Result("other", report.ExitOK, 1)))
	finishJob(t, bj, "")
	waitPhase(t, bystander, v1alpha1.PhaseSucceeded)

	for i := range 4 {
		rr := testutil.MakeRequest(ns, fmt.Sprintf("run-%d", i)).Group("history").Obj()
		create(t, rr)
		job := waitJob(t, rr)
		runPod(t, job, 0, 0, testutil.Compact(testutil.Result("history", report.ExitOK, 1)))
		finishJob(t, job, "")
		waitPhase(t, rr, v1alpha1.PhaseSucceeded)
		time.Sleep(1100 * time.Millisecond) // distinct completion times (seconds)
	}
	eventually(t, 10*time.Second, "history pruned", func() error {
		var jobs []string
		for _, j := range jobsOf(t, ns, map[string]string{v1alpha1.LabelGroup: "history"}) {
			if j.DeletionTimestamp == nil {
				jobs = append(jobs, j.Annotations[v1alpha1.AnnotationRequest])
			}
		}
		if !reflect.DeepEqual(jobs, []string{"run-2", "run-3"}) && !reflect.DeepEqual(jobs, []string{"run-3", "run-2"}) {
			return fmt.Errorf("jobs left for %v", jobs)
		}
		return nil
	})
	var list v1alpha1.ReplayRequestList
	if err := k8s.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, r := range list.Items {
		if r.DeletionTimestamp == nil {
			left = append(left, r.Name)
		}
	}
	if want := []string{"other-group", "run-0", "run-1", "run-2", "run-3"}; !reflect.DeepEqual(left, want) {
		t.Fatalf("requests left %v, want all of %v: the launcher never deletes a request", left, want)
	}
	if n := len(jobsOf(t, ns, map[string]string{v1alpha1.LabelGroup: "other"})); n != 1 {
		t.Fatalf("the other group's history was touched: %d Jobs", n)
	}
}

// A canary secret value never reaches status, events, annotations or the
// launcher's log, and the launcher cannot read Secrets at all.
func TestEnvtestCanarySecretNeverLeaks(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	l := startLauncher(t, testOptions(), 2)
	ctx := context.Background()
	const canary = "CANARY-s3cr3t-7f1d9a"
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kafka-creds"}, StringData: map[string]string{
		"sasl.password": canary, "sasl.username": "replayer",
	}})
	create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kafka-props"}, Data: map[string]string{
		"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
	}})
	ok := testutil.MakeRequest(ns, "with-creds").Secret("kafka-creds").ConfigMap("kafka-props").Obj()
	failing := testutil.MakeRequest(ns, "with-creds-fails").Group("other").Secret("kafka-creds").Obj()
	create(t, ok)
	create(t, failing)
	job := waitJob(t, ok)
	runPod(t, job, 0, 0, testutil.Compact(testutil.Result("orders", report.ExitOK, 5)))
	finishJob(t, job, "")
	fjob := waitJob(t, failing)
	runPod(t, fjob, 0, 4, "SASL authentication failed for user replayer\n")
	finishJob(t, fjob, batchv1.JobReasonBackoffLimitExceeded)
	waitPhase(t, ok, v1alpha1.PhaseSucceeded)
	waitPhase(t, failing, v1alpha1.PhaseFailed)

	var seen []string
	for _, rr := range []*v1alpha1.ReplayRequest{ok, failing} {
		seen = append(seen, testutil.JSON(getRR(t, rr)))
	}
	var jobs batchv1.JobList
	if err := k8s.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	seen = append(seen, testutil.JSON(jobs))
	var events corev1.EventList
	if err := k8s.List(ctx, &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	seen = append(seen, testutil.JSON(events))
	seen = append(seen, testutil.JSON(eventsFor(t, ns, ok.Name)), testutil.JSON(eventsFor(t, ns, failing.Name)))
	seen = append(seen, l.logs.String())
	for i, s := range seen {
		if strings.Contains(s, canary) {
			t.Fatalf("canary found in output %d: %s", i, s)
		}
	}
	if !strings.Contains(l.logs.String(), "replay finished") {
		t.Fatal("launcher log not captured; the check above proves nothing")
	}
	// Least privilege: the launcher's own identity cannot read Secrets.
	uc, err := client.New(userCfg, client.Options{Scheme: launcher.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	var s corev1.Secret
	if err := uc.Get(ctx, types.NamespacedName{Namespace: ns, Name: "kafka-creds"}, &s); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("launcher can read Secrets: %v", err)
	}
}

// runbookCronJob creates a runbook CronJob of group "orders"
// (testutil.RunbookCronJob), whose Job template is the launcher's.
func runbookCronJob(t *testing.T, ns, name string, chartLabels bool) *batchv1.CronJob {
	t.Helper()
	probe := testutil.MakeRequest(ns, "template").Group("orders").UID("x").Time("2026-03-01T09:30:00Z").Resolved("time:2026-03-01T09:30:00Z").Obj()
	tmpl, err := launcher.BuildJob(probe, runnerjob.StageApply, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	cron := testutil.RunbookCronJob(ns, name, "orders", chartLabels, tmpl)
	create(t, cron)
	return cron
}

// jobFromCronJob creates the Job `kubectl create job --from=cronjob/...`
// makes.
func jobFromCronJob(t *testing.T, cron *batchv1.CronJob, name string) *batchv1.Job {
	t.Helper()
	job := testutil.JobFromCronJob(cron, name)
	create(t, job)
	return job
}

// waitUnsuspended waits until the launcher has started a runbook Job.
func waitUnsuspended(t *testing.T, job *batchv1.Job) *batchv1.Job {
	t.Helper()
	var got batchv1.Job
	eventually(t, 20*time.Second, "runbook Job "+job.Name+" started", func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(job), &got); err != nil {
			return err
		}
		if got.Spec.Suspend == nil || *got.Spec.Suspend || got.Annotations[v1alpha1.AnnotationStartedAt] == "" {
			return fmt.Errorf("suspend %v, annotations %v", got.Spec.Suspend, got.Annotations)
		}
		return nil
	})
	return &got
}

// Jobs made from the chart's runbook CronJobs are started by the launcher and
// get their outcome recorded; a runner Job from any other CronJob is neither
// started nor recorded (item 4).
func TestEnvtestRunbookJobsGetResultsRecorded(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 2)
	ctx := context.Background()

	// Not the chart's: the runner label alone earns no trust.
	untrustedCron := runbookCronJob(t, ns, "homemade", false)
	untrusted := jobFromCronJob(t, untrustedCron, "homemade-manual")

	cron := runbookCronJob(t, ns, "rewind-orders-1h", true)
	job := waitUnsuspended(t, jobFromCronJob(t, cron, "rewind-orders-1h-manual"))
	runPod(t, job, 0, 0, testutil.Compact(testutil.Result("orders", report.ExitOK, 40, 2)))
	finishJob(t, job, "")

	var got batchv1.Job
	eventually(t, 20*time.Second, "runbook Job recorded", func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), &got); err != nil {
			return err
		}
		if !state.IsRecorded(&got) {
			return fmt.Errorf("annotations %v", got.Annotations)
		}
		return nil
	})
	if got.Annotations[v1alpha1.AnnotationOutcome] != "Succeeded" || got.Annotations[v1alpha1.AnnotationReason] != "Applied" || got.Annotations[v1alpha1.AnnotationMessagesReconsumed] != "42" {
		t.Fatalf("annotations = %v", got.Annotations)
	}
	var r report.Result
	if err := json.Unmarshal([]byte(got.Annotations[v1alpha1.AnnotationResult]), &r); err != nil || r.Totals.Partitions != 2 {
		t.Fatalf("result annotation: %v", err)
	}
	if ref := metav1.GetControllerOf(&got); ref == nil || ref.Kind != "CronJob" {
		t.Fatal("the runbook Job's owner was changed")
	}
	waitEvent(t, ns, job.Name, "Applied")
	// A failing runbook Job is recorded with its reason.
	failJob := waitUnsuspended(t, jobFromCronJob(t, cron, "rewind-orders-1h-again"))
	runPod(t, failJob, 0, 3, testutil.Compact(testutil.Result("orders", report.ExitGroupActive, 1)))
	finishJob(t, failJob, batchv1.JobReasonPodFailurePolicy)
	eventually(t, 20*time.Second, "failed runbook Job recorded", func() error {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(failJob), &got); err != nil {
			return err
		}
		if got.Annotations[v1alpha1.AnnotationReason] != "GroupActive" || got.Annotations[v1alpha1.AnnotationOutcome] != "Failed" {
			return fmt.Errorf("annotations %v", got.Annotations)
		}
		return nil
	})
	// The untrusted Job, created first, was left alone all along.
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(untrusted), &got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Suspend == nil || !*got.Spec.Suspend || state.IsRecorded(&got) || got.Annotations[v1alpha1.AnnotationStartedAt] != "" {
		t.Fatalf("a Job of a CronJob without the chart's labels was started or recorded: suspend %v, annotations %v", got.Spec.Suspend, got.Annotations)
	}
	// Both trusted ones show in the group's history.
	if n := len(jobsOf(t, ns, map[string]string{v1alpha1.LabelGroup: "orders", v1alpha1.LabelRunbook: "rewind-orders-1h"})); n != 2 {
		t.Fatalf("%d Jobs in the group's history", n)
	}
}

// A runbook Job created while a request of its group runs waits, then runs;
// a request created while the runbook Job runs waits for it (item 4).
func TestEnvtestRunbookJobsQueueWithRequests(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 2)
	ctx := context.Background()

	first := testutil.MakeRequest(ns, "first").Obj()
	create(t, first)
	firstJob := waitJob(t, first)
	cron := runbookCronJob(t, ns, "rewind", true)
	job := jobFromCronJob(t, cron, "rewind-manual")
	waitEvent(t, ns, job.Name, state.ReasonWaitingForGroup)
	var cur batchv1.Job
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), &cur); err != nil {
		t.Fatal(err)
	}
	if !*cur.Spec.Suspend {
		t.Fatal("the runbook Job started while a request of its group runs")
	}
	runPod(t, firstJob, 0, 0, testutil.Compact(testutil.Result("orders", report.ExitOK, 1)))
	finishJob(t, firstJob, "")
	waitPhase(t, first, v1alpha1.PhaseSucceeded)
	started := waitUnsuspended(t, job)

	// Now a request waits for the runbook Job, and its status names it.
	second := testutil.MakeRequest(ns, "second").Obj()
	create(t, second)
	eventually(t, 10*time.Second, "second waits for the runbook Job", func() error {
		c := condition(getRR(t, second), v1alpha1.ConditionAccepted)
		if c == nil || c.Reason != state.ReasonWaitingForGroup || !strings.Contains(c.Message, ns+"/rewind-manual") {
			return fmt.Errorf("Accepted = %+v", c)
		}
		return nil
	})
	runPod(t, started, 0, 0, testutil.Compact(testutil.Result("orders", report.ExitOK, 1)))
	finishJob(t, started, "")
	waitJob(t, second)
}

// A Job the API server refuses for now (a quota) is reported on the request
// and retried; the request is not failed.
func TestEnvtestRefusedJobIsReported(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-jobs"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/jobs.batch": resource.MustParse("0")}},
	}
	create(t, quota)
	// Admission enforces a quota once its status is filled, which the
	// resource quota controller (absent here) would do.
	quota.Status = corev1.ResourceQuotaStatus{Hard: quota.Spec.Hard, Used: corev1.ResourceList{"count/jobs.batch": resource.MustParse("0")}}
	if err := k8s.Status().Update(context.Background(), quota); err != nil {
		t.Fatal(err)
	}
	startLauncher(t, testOptions(), 2)
	rr := testutil.MakeRequest(ns, "over-quota").Obj()
	create(t, rr)
	waitEvent(t, ns, rr.Name, state.ReasonJobCreateFailed)
	eventually(t, 10*time.Second, "status explains", func() error {
		cur := getRR(t, rr)
		if !strings.Contains(cur.Status.Message, "cannot create the runner Job") || !strings.Contains(cur.Status.Message, "exceeded quota") || cur.Status.Phase != v1alpha1.PhasePending {
			return fmt.Errorf("status %+v", cur.Status)
		}
		return nil
	})
}
