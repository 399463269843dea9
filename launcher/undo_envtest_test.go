package launcher_test

// Undo (target.undoOf) on envtest: the undone run's record becomes the undo
// Job's input file, which the runner's own checks accept; every refusal at
// acceptance (and one at the Job, when the record went meanwhile); a
// partition the runner left alone reaches status and the record; force; and
// launcher restarts between the writes.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"

	"github.com/kafka-replay/kafka-replay/launcher"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// ranToSuccess plays a request's Job to success: one attempt that logs res
// in full and exits 0. It returns the request as it ended and its record.
func ranToSuccess(t *testing.T, logs *recordLogs, rr *v1alpha1.ReplayRequest, res *report.Result) (*v1alpha1.ReplayRequest, *v1alpha1.ReplayRecord) {
	t.Helper()
	create(t, rr)
	job := waitJob(t, rr)
	res.RunID = runnerjob.RunID(getRR(t, rr))
	attempt(t, logs, job, job.Name+"-0", 0, res, time.Now())
	finishJob(t, job, "")
	cur := waitPhase(t, rr, v1alpha1.PhaseSucceeded)
	return cur, getRecord(t, rr.Namespace, cur.Status.JobName)
}

// rewindResult is a rewind of group by 10, 20 and 30 messages from 1000 on
// three partitions, all applied.
func rewindResult(group string) *report.Result {
	return testutil.Result(group, report.ExitOK, 10, 20, 30)
}

// undoCommandRequest is the request status.undoCommand creates: the JSON of
// its quoted here-document, as the shell hands it to kubectl.
func undoCommandRequest(t *testing.T, cmd string) *v1alpha1.ReplayRequest {
	t.Helper()
	const start, end = "kubectl create -f - <<'EOF'\n", "\nEOF"
	if !strings.HasPrefix(cmd, start) || !strings.HasSuffix(cmd, end) {
		t.Fatalf("status.undoCommand is not a kubectl create of a here-document:\n%s", cmd)
	}
	var rr v1alpha1.ReplayRequest
	if err := json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimPrefix(cmd, start), end)), &rr); err != nil {
		t.Fatalf("status.undoCommand's manifest: %v\n%s", err, cmd)
	}
	return &rr
}

// inputFile reads an undo Job's input ConfigMap (the test is admin; the
// launcher itself cannot read ConfigMaps) and checks it as the runner does.
func inputFile(t *testing.T, job *batchv1.Job, group string) *report.Result {
	t.Helper()
	var cm corev1.ConfigMap
	name := runnerjob.InputConfigMapName(job.Name)
	if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: job.Namespace, Name: name}, &cm); err != nil {
		t.Fatalf("input ConfigMap %s: %v", name, err)
	}
	b := cm.BinaryData[runnerjob.InputKey]
	env := testutil.RunnerEnv(job)
	if got := config.FileDigestOf(b); env[config.EnvFileDigest] != got {
		t.Fatalf("Job's %s = %q, the ConfigMap's bytes are %s", config.EnvFileDigest, env[config.EnvFileDigest], got)
	}
	r, err := config.DecodeResultFile(b)
	if err != nil {
		t.Fatalf("the runner cannot read the input: %v", err)
	}
	if err := config.CheckUndoFile(r, group); err != nil {
		t.Fatalf("the runner refuses the input as an undo: file: %v", err)
	}
	if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].Kind != "ReplayRequest" || cm.Labels[v1alpha1.LabelRunner] != v1alpha1.LabelRunnerValue {
		t.Fatalf("input ConfigMap owner %+v labels %v", cm.OwnerReferences, cm.Labels)
	}
	return r
}

// The happy path, from the command status.undoCommand shows: the undo is
// accepted with status.undo naming the undone Job and run; its Job reads the
// undone run's record as an undo: file the runner's checks accept, with its
// digest; the run restores two partitions and leaves one alone, which status
// and the undo's own record show with the reason; the undo, having
// committed, can be undone in turn.
func TestEnvtestUndoHappyPath(t *testing.T) {
	ns, logs := startRecordingLauncher(t)

	rewind, rec := ranToSuccess(t, logs, testutil.MakeRequest(ns, "rewind").ShiftBy(-10).Obj(), rewindResult("orders"))
	if rewind.Status.UndoCommand == "" {
		t.Fatalf("no status.undoCommand on a request that committed: %+v", rewind.Status)
	}
	undo := undoCommandRequest(t, rewind.Status.UndoCommand)
	if err := k8s.Create(context.Background(), undo); err != nil {
		t.Fatalf("the CRD refuses what status.undoCommand creates: %v", err)
	}
	if !strings.HasPrefix(undo.Name, "rewind-undo-") {
		t.Fatalf("undo request named %q", undo.Name)
	}
	job := waitJob(t, undo)
	cur := getRR(t, undo)
	want := v1alpha1.UndoStatus{Request: "rewind", JobName: rewind.Status.JobName, RunID: rec.RunID}
	if cur.Status.Undo == nil || *cur.Status.Undo != want || cur.Status.ResolvedTarget != "undo:rewind" {
		t.Fatalf("status.undo %+v resolvedTarget %q; want %+v", cur.Status.Undo, cur.Status.ResolvedTarget, want)
	}
	env := testutil.RunnerEnv(job)
	if env[config.EnvTo] != "undo:/etc/kafka-replay/input/input.json.gz" || env[config.EnvTopics] != "" || env[config.EnvForce] != "" {
		t.Fatalf("undo Job env %v", env)
	}
	if job.Annotations[v1alpha1.AnnotationUndoOf] != "rewind" || job.Annotations[v1alpha1.AnnotationUndoJob] != want.JobName || job.Annotations[v1alpha1.AnnotationUndoRunID] != want.RunID {
		t.Fatalf("undo Job annotations %v", job.Annotations)
	}
	in := inputFile(t, job, "orders")
	recParts, err := replay.RecordPartitions(rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Partitions) != 3 || in.RunID != rec.RunID || in.DryRun || in.ExitCode != report.ExitOK {
		t.Fatalf("input %+v", in)
	}
	for i, p := range in.Partitions {
		r := recParts[i]
		if p.Topic != r.Topic || p.Partition != r.Partition || *p.PreviousOffset != *r.PreviousOffset || p.NewOffset != r.NewOffset || !p.Applied {
			t.Fatalf("input partition %d %+v, record %+v", i, p, r)
		}
	}

	// The runner restores partitions 0 and 2 and leaves 1 alone: its
	// consumers went past the offset it had before the rewind.
	res := testutil.Result("orders", report.ExitOK)
	res.Target = report.Target{Given: env[config.EnvTo], Resolved: "undo:" + rec.RunID}
	res.RunID = runnerjob.RunID(cur)
	restore := func(p int32, c, prev int64) report.Partition {
		d := c - prev
		return report.Partition{Topic: "orders", Partition: p, PreviousOffset: &c, NewOffset: prev, Delta: &d, LogEndOffset: 2000, Applied: true}
	}
	c1, zero := int64(1005), int64(0)
	left := "consumed past its previous offset 1000 (at 1005): restoring would re-consume 5 messages"
	res.Partitions = []report.Partition{
		restore(0, 990, 1000),
		{Topic: "orders", Partition: 1, PreviousOffset: &c1, NewOffset: c1, Delta: &zero, LogEndOffset: 2000, LeftAlone: left},
		restore(2, 975, 1000),
	}
	res.Summarize()
	attempt(t, logs, job, job.Name+"-0", 0, res, time.Now())
	finishJob(t, job, "")
	done := waitPhase(t, undo, v1alpha1.PhaseSucceeded)
	r := done.Status.Result
	if r == nil || r.Totals.LeftAlone != 1 || r.Totals.Applied != 2 || len(r.Partitions) != 3 || r.Partitions[1].LeftAlone != left || r.Partitions[0].LeftAlone != "" {
		t.Fatalf("status result %+v", r)
	}
	undoRec := getRecord(t, ns, done.Status.JobName)
	if tp := undoRec.Topics[0]; len(tp.LeftAlone) != 1 || tp.LeftAlone[0].Text != left || len(tp.LeftAlone[0].Partitions) != 1 || tp.LeftAlone[0].Partitions[0] != 1 || len(tp.Failed) != 0 {
		t.Fatalf("undo record topic %+v", tp)
	}
	if undoRec.Totals.LeftAlone != 1 {
		t.Fatalf("undo record totals %+v", undoRec.Totals)
	}
	// An undo that committed can be undone too: the command names it.
	again := undoCommandRequest(t, done.Status.UndoCommand)
	if again.Spec.Target.UndoOf == nil || *again.Spec.Target.UndoOf != undo.Name {
		t.Fatalf("undo of the undo: %+v", again.Spec.Target)
	}
}

// refused waits for an undo to fail UndoRefused at acceptance, with a
// message naming the rule, and checks that nothing was made for it.
func refused(t *testing.T, rr *v1alpha1.ReplayRequest, says string) {
	t.Helper()
	cur := waitPhase(t, rr, v1alpha1.PhaseFailed)
	sc, ac := condition(cur, v1alpha1.ConditionSucceeded), condition(cur, v1alpha1.ConditionAccepted)
	if sc.Reason != state.ReasonUndoRefused || ac.Status != metav1.ConditionFalse || ac.Reason != state.ReasonUndoRefused ||
		!strings.HasPrefix(sc.Message, "target.undoOf: ") || !strings.Contains(sc.Message, says) {
		t.Fatalf("Succeeded %s %q, Accepted %s %s; want UndoRefused saying %q", sc.Reason, sc.Message, ac.Status, ac.Reason, says)
	}
	if cur.Status.JobName != "" || cur.Status.Undo != nil || cur.Status.UndoCommand != "" {
		t.Fatalf("a refused undo has status %+v", cur.Status)
	}
	if jobs := jobsOf(t, rr.Namespace, map[string]string{v1alpha1.LabelRequest: rr.Name}); len(jobs) != 0 {
		t.Fatalf("a refused undo made Jobs %v", jobs)
	}
	var cms corev1.ConfigMapList
	if err := k8s.List(context.Background(), &cms, client.InNamespace(rr.Namespace), client.MatchingLabels{v1alpha1.LabelRequest: rr.Name}); err != nil || len(cms.Items) != 0 {
		t.Fatalf("a refused undo made ConfigMaps %v (%v)", cms.Items, err)
	}
	waitEvent(t, rr.Namespace, rr.Name, state.ReasonUndoRefused)
}

// Each refusal of the contract, on the API server: the named request is
// missing, is the undo itself, was a dry run, failed, has not finished, is
// of another group or cluster, has no record, or an incomplete one.
func TestEnvtestUndoRefusals(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	logs := newRecordLogs()
	opts := testOptions()
	opts.Logs = logs
	startLauncher(t, opts, 4)

	undoOf := func(name, of, group string) *v1alpha1.ReplayRequest {
		return testutil.MakeRequest(ns, name).Group(group).UndoOf(of).Obj()
	}

	t.Run("no such request", func(t *testing.T) {
		rr := undoOf("undo-missing", "missing", "g-missing")
		create(t, rr)
		refused(t, rr, `there is no ReplayRequest "missing" in namespace `+ns)
	})
	t.Run("itself", func(t *testing.T) {
		rr := undoOf("undo-self", "undo-self", "g-self")
		create(t, rr)
		refused(t, rr, "names this request itself")
	})
	t.Run("a dry run", func(t *testing.T) {
		plan := testutil.Result("g-dry", report.ExitOK, 5)
		plan.DryRun, plan.Reason = true, report.ReasonDryRun
		plan.Partitions[0].Applied = false
		plan.Summarize()
		ranToSuccess(t, logs, testutil.MakeRequest(ns, "dry").Group("g-dry").ShiftBy(-5).DryRun().Obj(), plan)
		rr := undoOf("undo-dry", "dry", "g-dry")
		create(t, rr)
		refused(t, rr, "dry was a dry run")
	})
	t.Run("failed", func(t *testing.T) {
		failed := testutil.MakeRequest(ns, "failed").Group("g-failed").ShiftBy(-5).Obj()
		create(t, failed)
		job := waitJob(t, failed)
		attempt(t, logs, job, job.Name+"-0", int32(report.ExitGroupActive), testutil.Result("g-failed", report.ExitGroupActive), time.Now())
		finishJob(t, job, batchv1.JobReasonPodFailurePolicy)
		waitPhase(t, failed, v1alpha1.PhaseFailed)
		rr := undoOf("undo-failed", "failed", "g-failed")
		create(t, rr)
		refused(t, rr, "failed did not succeed (GroupActive")
	})
	t.Run("not finished", func(t *testing.T) {
		running := testutil.MakeRequest(ns, "running").Group("g-running").ShiftBy(-5).Obj()
		create(t, running)
		waitJob(t, running)
		rr := undoOf("undo-running", "running", "g-running")
		create(t, rr)
		refused(t, rr, "running has not finished yet")
	})
	t.Run("another group", func(t *testing.T) {
		ranToSuccess(t, logs, testutil.MakeRequest(ns, "group-a").Group("g-a").ShiftBy(-10).Obj(), rewindResult("g-a"))
		rr := undoOf("undo-group", "group-a", "g-b")
		create(t, rr)
		refused(t, rr, `moved group "g-a", not "g-b"`)
	})
	t.Run("another cluster", func(t *testing.T) {
		ranToSuccess(t, logs, testutil.MakeRequest(ns, "cluster-a").Group("g-cluster").ShiftBy(-10).Obj(), rewindResult("g-cluster"))
		rr := testutil.MakeRequest(ns, "undo-cluster").Group("g-cluster").Bootstrap("kafka.elsewhere.svc:9092").UndoOf("cluster-a").Obj()
		create(t, rr)
		refused(t, rr, "an undo restores the same Kafka cluster")
	})
	t.Run("no record", func(t *testing.T) {
		gone, rec := ranToSuccess(t, logs, testutil.MakeRequest(ns, "unrecorded").Group("g-norec").ShiftBy(-10).Obj(), rewindResult("g-norec"))
		if err := k8s.Delete(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		rr := undoOf("undo-norec", "unrecorded", "g-norec")
		create(t, rr)
		refused(t, rr, "has no ReplayRecord "+gone.Status.JobName)
	})
	t.Run("an incomplete record", func(t *testing.T) {
		// The pod's log is gone: only the termination message is read,
		// which holds 4 KiB, so not the 500 partitions, and the record
		// says it lacks some.
		part := testutil.MakeRequest(ns, "partial").Group("g-partial").ShiftBy(-10).Obj()
		create(t, part)
		job := waitJob(t, part)
		deltas := make([]int64, 500)
		for i := range deltas {
			deltas[i] = 10
		}
		runPod(t, job, 0, 0, testutil.Compact(testutil.Result("g-partial", report.ExitOK, deltas...)))
		finishJob(t, job, "")
		cur := waitPhase(t, part, v1alpha1.PhaseSucceeded)
		if rec := getRecord(t, ns, cur.Status.JobName); rec.Complete {
			t.Fatalf("record complete without the pod's log")
		}
		rr := undoOf("undo-partial", "partial", "g-partial")
		create(t, rr)
		refused(t, rr, "is incomplete")
	})
}

// The record, or the undone request itself, can go after acceptance
// (history pruned, the Job or the request deleted) while the undo waits for
// its group, here while no launcher runs: the next launcher does not make
// the Job, the undo fails UndoRefused, and nothing is written for it.
func TestEnvtestUndoRecordGoneBeforeItsJob(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	logs := newRecordLogs()
	opts := testOptions()
	opts.Logs = logs
	l := startLauncher(t, opts, 2)

	_, rec := ranToSuccess(t, logs, testutil.MakeRequest(ns, "rewind").ShiftBy(-10).Obj(), rewindResult("orders"))
	gone, _ := ranToSuccess(t, logs, testutil.MakeRequest(ns, "rewind-2").ShiftBy(-20).Obj(), rewindResult("orders"))
	blocker := testutil.MakeRequest(ns, "blocker").ShiftBy(-1).Obj()
	create(t, blocker)
	blockerJob := waitJob(t, blocker)
	// Two undos wait for the group: one whose record goes, one whose
	// request goes.
	undo := testutil.MakeRequest(ns, "undo").UndoOf("rewind").Obj()
	undo2 := testutil.MakeRequest(ns, "undo-2").UndoOf("rewind-2").Obj()
	for _, u := range []*v1alpha1.ReplayRequest{undo, undo2} {
		create(t, u)
		eventually(t, 20*time.Second, u.Name+" accepted and waiting", func() error {
			cur := getRR(t, u)
			if cur.Status.Undo == nil || condition(cur, v1alpha1.ConditionAccepted) == nil || condition(cur, v1alpha1.ConditionAccepted).Reason != state.ReasonWaitingForGroup {
				return fmt.Errorf("status %+v", cur.Status)
			}
			return nil
		})
	}
	l.stop(t)
	if err := k8s.Delete(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(context.Background(), gone); err != nil {
		t.Fatal(err)
	}
	attempt(t, logs, blockerJob, blockerJob.Name+"-0", 0, testutil.Result("orders", report.ExitOK, 1), time.Now())
	finishJob(t, blockerJob, "")
	startLauncher(t, opts, 2)
	for u, says := range map[*v1alpha1.ReplayRequest]string{undo: "has no ReplayRecord " + rec.Name, undo2: `there is no ReplayRequest "rewind-2"`} {
		cur := waitPhase(t, u, v1alpha1.PhaseFailed)
		if c := condition(cur, v1alpha1.ConditionSucceeded); c.Reason != state.ReasonUndoRefused || !strings.Contains(c.Message, says) {
			t.Fatalf("%s: Succeeded %s: %s", u.Name, c.Reason, c.Message)
		}
		if jobs := jobsOf(t, ns, map[string]string{v1alpha1.LabelRequest: u.Name}); len(jobs) != 0 || cur.Status.JobName != "" {
			t.Fatalf("%s: Jobs %v, status.jobName %q", u.Name, jobs, cur.Status.JobName)
		}
	}
}

// force reaches the runner, also through a launcher restart while the
// forced undo runs.
func TestEnvtestUndoForce(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	logs := newRecordLogs()
	opts := testOptions()
	opts.Logs = logs
	l := startLauncher(t, opts, 2)

	ranToSuccess(t, logs, testutil.MakeRequest(ns, "rewind").ShiftBy(-10).Obj(), rewindResult("orders"))
	forced := testutil.MakeRequest(ns, "undo-forced").UndoOf("rewind").Force().Obj()
	create(t, forced)
	job := waitJob(t, forced)
	if env := testutil.RunnerEnv(job); env[config.EnvForce] != "true" || env[config.EnvTo] != "undo:/etc/kafka-replay/input/input.json.gz" {
		t.Fatalf("forced undo Job env %v", env)
	}
	inputFile(t, job, "orders")
	l.stop(t)
	l = startLauncher(t, opts, 2)
	// Forced: every partition restored, none left alone.
	res := testutil.Result("orders", report.ExitOK, -10, -20, -30)
	res.RunID = runnerjob.RunID(getRR(t, forced))
	res.Partitions[2].Note = "forced: the undo rules would leave it alone (consumed past its previous offset)"
	attempt(t, logs, job, job.Name+"-0", 0, res, time.Now())
	finishJob(t, job, "")
	done := waitPhase(t, forced, v1alpha1.PhaseSucceeded)
	if r := done.Status.Result; r == nil || r.Totals.Applied != 3 || r.Totals.LeftAlone != 0 || done.Status.Undo == nil {
		t.Fatalf("forced undo after a restart: %+v", done.Status)
	}
	if n := len(jobsOf(t, ns, map[string]string{v1alpha1.LabelRequest: forced.Name})); n != 1 {
		t.Fatalf("%d Jobs", n)
	}
	l.stop(t)
	// The CRD allows force only with an undo.
	bad := testutil.MakeRequest(ns, "forced-rewind").ShiftBy(-1).Force().Obj()
	if err := k8s.Create(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "force is only allowed with target.undoOf") {
		t.Fatalf("create force without undoOf: %v", err)
	}
}

// Launcher restarts in the middle of an undo: (1) while its Job runs; (2)
// after the earlier leader created the input ConfigMap and the Job but
// before it wrote status (the new one adopts the Job, takes status.undo from
// it, makes no second one); (3) after it created the ConfigMap only (the new
// one makes the Job, whose digest is that of the bytes in place).
func TestEnvtestUndoAcrossRestart(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	ctx := context.Background()
	logs := newRecordLogs()
	opts := testOptions()
	opts.Logs = logs
	l := startLauncher(t, opts, 2)

	rewind, rec := ranToSuccess(t, logs, testutil.MakeRequest(ns, "rewind").ShiftBy(-10).Obj(), rewindResult("orders"))
	want := v1alpha1.UndoStatus{Request: "rewind", JobName: rewind.Status.JobName, RunID: rec.RunID}
	left := "moved back since the replay by something else"
	restored := func(job *batchv1.Job, rr *v1alpha1.ReplayRequest) {
		t.Helper()
		// Two partitions restored, one left alone.
		res := testutil.Result("orders", report.ExitOK, -10, -20, 0)
		res.RunID = runnerjob.RunID(getRR(t, rr))
		res.Partitions[2].Applied, res.Partitions[2].LeftAlone = false, left
		res.Summarize()
		attempt(t, logs, job, job.Name+"-0", 0, res, time.Now())
		finishJob(t, job, "")
		done := waitPhase(t, rr, v1alpha1.PhaseSucceeded)
		if done.Status.Undo == nil || *done.Status.Undo != want {
			t.Fatalf("status.undo %+v after a restart, want %+v", done.Status.Undo, want)
		}
		if r := done.Status.Result; r == nil || r.Totals.LeftAlone != 1 || r.Partitions[2].LeftAlone != left {
			t.Fatalf("left alone after a restart: %+v", r)
		}
		if rec := getRecord(t, ns, done.Status.JobName); len(rec.Topics[0].LeftAlone) != 1 || len(rec.Topics[0].Failed) != 0 {
			t.Fatalf("record after a restart %+v", rec.Topics[0])
		}
		if n := len(jobsOf(t, ns, map[string]string{v1alpha1.LabelRequest: rr.Name})); n != 1 {
			t.Fatalf("%d Jobs for %s", n, rr.Name)
		}
	}

	// Each case undoes the same replay, which is undone once only: the
	// undo before it goes first (undo.Earlier), and the later ones are
	// forced, since the first one's Job, kept as history, refuses another
	// plain undo even once its request is gone (undo.EarlierJob).
	gone := func(rr *v1alpha1.ReplayRequest) {
		t.Helper()
		if err := k8s.Delete(ctx, getRR(t, rr)); err != nil {
			t.Fatal(err)
		}
		eventually(t, 20*time.Second, rr.Name+" gone", func() error {
			var cur v1alpha1.ReplayRequest
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(rr), &cur); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there (finalizers %v): %w", cur.Finalizers, err)
			}
			return nil
		})
	}

	// 1. While the Job runs.
	first := testutil.MakeRequest(ns, "undo-1").UndoOf("rewind").Obj()
	create(t, first)
	job1 := waitJob(t, first)
	l.stop(t)
	l = startLauncher(t, opts, 2)
	restored(job1, first)
	gone(first)
	l.stop(t)

	// The earlier leader accepted the request: what it had in memory.
	accepted := func(name string) *v1alpha1.ReplayRequest {
		rr := testutil.MakeRequest(ns, name).UndoOf("rewind").Force().Obj()
		create(t, rr)
		cur := getRR(t, rr)
		cur.Status.ResolvedTarget = "undo:rewind"
		state.SetCondition(cur, v1alpha1.ConditionAccepted, metav1.ConditionTrue, state.ReasonAccepted, "")
		if err := k8s.Status().Update(ctx, cur); err != nil {
			t.Fatal(err)
		}
		cur = getRR(t, rr)
		cur.Status.Undo = &want // in memory only, never written
		return cur
	}
	input := func(rr *v1alpha1.ReplayRequest) *runnerjob.Input {
		res, err := launcher.RecordResult(rec)
		if err != nil {
			t.Fatal(err)
		}
		cm, digest, err := runnerjob.InputConfigMap(rr, runnerjob.Name(rr, runnerjob.StageApply), res)
		if err != nil {
			t.Fatal(err)
		}
		create(t, cm)
		return &runnerjob.Input{Kind: runnerjob.InputUndo, ConfigMap: cm.Name, Digest: digest, Undo: &want}
	}

	// 2. ConfigMap and Job made, status not written.
	second := accepted("undo-2")
	orphan, err := launcher.BuildJobWithInput(second, runnerjob.StageApply, opts, input(second))
	if err != nil {
		t.Fatal(err)
	}
	create(t, orphan)
	l = startLauncher(t, opts, 2)
	adopted := waitJob(t, second)
	if adopted.UID != orphan.UID {
		t.Fatalf("made Job %s, not the existing %s", adopted.UID, orphan.UID)
	}
	restored(adopted, second)
	gone(second)
	l.stop(t)

	// 3. ConfigMap made, no Job: the next leader makes the Job over the
	// ConfigMap in place (AlreadyExists), with the same digest.
	third := accepted("undo-3")
	in := input(third)
	startLauncher(t, opts, 2)
	job3 := waitJob(t, third)
	if got := testutil.RunnerEnv(job3)[config.EnvFileDigest]; got != in.Digest {
		t.Fatalf("Job digest %q, ConfigMap's %q", got, in.Digest)
	}
	inputFile(t, job3, "orders")
	restored(job3, third)
}

// A Manual undo plans from the record like any undo (its planning Job reads
// the undo: input, as a dry run), shows which partitions it restores and
// which it leaves alone, and once approved applies exactly that plan.
func TestEnvtestUndoManual(t *testing.T) {
	e := newApprovalEnv(t)
	ns := e.ns
	_, rec := ranToSuccess(t, e.logs, testutil.MakeRequest(ns, "rewind").ShiftBy(-10).Obj(), rewindResult("orders"))
	undo := testutil.MakeRequest(ns, "undo").UndoOf("rewind").Manual().Obj()
	create(t, undo)
	planJob := planJobOf(t, undo)
	env := testutil.RunnerEnv(planJob)
	if env[config.EnvTo] != "undo:/etc/kafka-replay/input/input.json.gz" || env[config.EnvDryRun] != "true" || planJob.Annotations[v1alpha1.AnnotationUndoOf] != "rewind" {
		t.Fatalf("planning Job env %v annotations %v", env, planJob.Annotations)
	}
	inputFile(t, planJob, "orders")

	plan := testutil.Result("orders", report.ExitOK)
	plan.DryRun, plan.Reason = true, report.ReasonDryRun
	plan.Target = report.Target{Given: env[config.EnvTo], Resolved: "undo:" + rec.RunID}
	c0, c1, c2, zero := int64(990), int64(1003), int64(970), int64(0)
	d0, d2 := c0-1000, c2-1000
	left := "consumed past its previous offset 1000 (at 1003): restoring would re-consume 3 messages"
	plan.Partitions = []report.Partition{
		{Topic: "orders", Partition: 0, PreviousOffset: &c0, NewOffset: 1000, Delta: &d0, LogEndOffset: 2000},
		{Topic: "orders", Partition: 1, PreviousOffset: &c1, NewOffset: c1, Delta: &zero, LogEndOffset: 2000, LeftAlone: left},
		{Topic: "orders", Partition: 2, PreviousOffset: &c2, NewOffset: 1000, Delta: &d2, LogEndOffset: 2000},
	}
	plan.Summarize()
	plan.Plan = report.PlanDigest(plan.Group, plan.Target.Resolved, plan.Partitions)
	e.playPlan(t, planJob, plan)
	cur := awaiting(t, undo)
	if cur.Status.Plan.Digest != plan.Plan || cur.Status.Undo == nil || cur.Status.Undo.Request != "rewind" || cur.Status.Plan.Totals.LeftAlone != 1 {
		t.Fatalf("plan %+v undo %+v", cur.Status.Plan, cur.Status.Undo)
	}
	annotate(t, undo, v1alpha1.AnnotationApprove, plan.Plan)
	job := waitJob(t, undo)
	if in := inputOf(t, job); in.Plan != plan.Plan || len(in.Partitions) != 3 || in.Partitions[1].LeftAlone != left {
		t.Fatalf("apply input %+v", in)
	}
	applied := appliedOf(plan)
	applied.Partitions[1].Applied = false // left alone: not committed
	applied.Summarize()
	attempt(t, e.logs, job, job.Name+"-0", 0, applied, time.Now())
	finishJob(t, job, "")
	done := waitPhase(t, undo, v1alpha1.PhaseSucceeded)
	if r := done.Status.Result; r == nil || r.Totals.LeftAlone != 1 || r.Totals.Applied != 2 || done.Status.Undo == nil || done.Status.UndoCommand == "" {
		t.Fatalf("status %+v", done.Status)
	}
	// The apply Job, which committed, says what it undid: with the request
	// deleted, it still refuses a second undo.
	if got := UndoFromJobOf(t, ns, job.Name); got == nil || *got != *done.Status.Undo {
		t.Fatalf("apply Job's undo annotations %+v, want %+v", got, done.Status.Undo)
	}
	deleted(t, undo)
	again := testutil.MakeRequest(ns, "undo-again").UndoOf("rewind").Obj()
	create(t, again)
	refused(t, again, "Job "+job.Name+" already undid rewind")
}

// A ConfigMap planted under the name of an undo's input (tenants may write
// ConfigMaps; the launcher may only create them, never read one) is not
// what the Job trusts: the Job names the digest of the launcher's own bytes,
// so the runner refuses the planted file instead of restoring from it.
func TestEnvtestUndoPlantedInputIsNotTrusted(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	logs := newRecordLogs()
	opts := testOptions()
	opts.Logs = logs
	l := startLauncher(t, opts, 2)
	_, rec := ranToSuccess(t, logs, testutil.MakeRequest(ns, "rewind").ShiftBy(-10).Obj(), rewindResult("orders"))
	l.stop(t)

	undo := testutil.MakeRequest(ns, "undo").UndoOf("rewind").Obj()
	create(t, undo)
	stored := getRR(t, undo)
	forged := testutil.Result("orders", report.ExitOK, 500, 500, 500) // "restore" far back
	forged.RunID = rec.RunID
	planted, plantedDigest, err := runnerjob.InputConfigMap(stored, runnerjob.Name(stored, runnerjob.StageApply), forged)
	if err != nil {
		t.Fatal(err)
	}
	planted.OwnerReferences = nil // a tenant's, not the request's
	create(t, planted)

	startLauncher(t, opts, 2)
	job := waitJob(t, undo)
	res, err := launcher.RecordResult(rec)
	if err != nil {
		t.Fatal(err)
	}
	_, want, err := runnerjob.InputConfigMap(stored, job.Name, res)
	if err != nil {
		t.Fatal(err)
	}
	got := testutil.RunnerEnv(job)[config.EnvFileDigest]
	if got != want || got == plantedDigest {
		t.Fatalf("Job digest %q; the record's bytes are %q, the planted ConfigMap's %q", got, want, plantedDigest)
	}
	var cm corev1.ConfigMap
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(planted), &cm); err != nil {
		t.Fatal(err)
	}
	if config.FileDigestOf(cm.BinaryData[runnerjob.InputKey]) == got {
		t.Fatalf("the planted ConfigMap matches the Job's digest")
	}
}

// An undo of 10,000 partitions: the whole record, not status's first
// partitions, reaches the runner, in a ConfigMap well within its 1 MiB.
func TestEnvtestUndoTenThousandPartitions(t *testing.T) {
	ns, logs := startRecordingLauncher(t)

	big := bigResult(report.ExitOK, 100, 100, func(int) bool { return true })
	rewind, _ := ranToSuccess(t, logs, testutil.MakeRequest(ns, "rewind").ShiftBy(-1000).Obj(), big)
	if r := rewind.Status.Result; r == nil || !r.Truncated || r.Totals.Applied != 10_000 {
		t.Fatalf("status result %+v", r)
	}
	undo := testutil.MakeRequest(ns, "undo").UndoOf("rewind").Obj()
	create(t, undo)
	job := waitJob(t, undo)
	in := inputFile(t, job, "orders")
	if len(in.Partitions) != 10_000 {
		t.Fatalf("%d partitions in the undo's input, want 10000", len(in.Partitions))
	}
	for i, p := range in.Partitions {
		want := big.Partitions[i]
		if p.Topic != want.Topic || p.Partition != want.Partition || *p.PreviousOffset != *want.PreviousOffset || p.NewOffset != want.NewOffset || !p.Applied {
			t.Fatalf("input partition %d %+v, want %+v", i, p, want)
		}
	}
	var cm corev1.ConfigMap
	if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: runnerjob.InputConfigMapName(job.Name)}, &cm); err != nil {
		t.Fatal(err)
	}
	t.Logf("undo input of 10,000 partitions: %d bytes compressed", len(cm.BinaryData[runnerjob.InputKey]))
}

// A request is undone once. After a first undo restored a skip's previous
// offset, the consumers handle the skipped messages again and may stop
// exactly where the skip had put them (a quiet partition skipped to its
// end): a second undo then finds the committed offset at the skip's new
// offset, which the rules read as "nothing consumed since", and would hand
// the same messages back a second time. So a second undo of the same
// request is refused while the first may have restored something; one
// that restored nothing does not count.
func TestEnvtestUndoOnlyOnce(t *testing.T) {
	ns, logs := startRecordingLauncher(t)

	skip := testutil.MakeRequest(ns, "skip").Group("once").ShiftBy(100).AllowSkip().Obj()
	ranToSuccess(t, logs, skip, testutil.Result("once", report.ExitOK, -100))
	nothing := testutil.MakeRequest(ns, "skip-undo-nothing").Group("once").UndoOf("skip").Obj()
	none := testutil.Result("once", report.ExitOK, 0)
	none.Partitions[0].Applied, none.Partitions[0].LeftAlone = false, "consumed 1100..1104 since the replay"
	none.Summarize()
	ranToSuccess(t, logs, nothing, none)
	first := testutil.MakeRequest(ns, "skip-undo-1").Group("once").UndoOf("skip").Obj()
	ranToSuccess(t, logs, first, testutil.Result("once", report.ExitOK, 100))

	second := testutil.MakeRequest(ns, "skip-undo-2").Group("once").UndoOf("skip").Obj()
	create(t, second)
	refused(t, second, "skip-undo-1 already undoes skip")
}

// deleted deletes a request and waits until it is gone (its finished Jobs
// stay, as history).
func deleted(t *testing.T, rr *v1alpha1.ReplayRequest) {
	t.Helper()
	ctx := context.Background()
	if err := k8s.Delete(ctx, getRR(t, rr)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, rr.Name+" gone", func() error {
		var cur v1alpha1.ReplayRequest
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(rr), &cur); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (finalizers %v): %w", cur.Finalizers, err)
		}
		return nil
	})
}

// UndoFromJobOf reads what a Job says it undid.
func UndoFromJobOf(t *testing.T, ns, name string) *v1alpha1.UndoStatus {
	t.Helper()
	var job batchv1.Job
	if err := k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, &job); err != nil {
		t.Fatalf("Job %s: %v", name, err)
	}
	return runnerjob.UndoFromJob(job.Annotations)
}

// Deleting an undo does not make its replay undoable again: the undo's Job
// stays as history, says what it undid (kafkareplay.dev/undo-job) and what
// it restored, and refuses a second undo as the request did. An earlier
// undo's Job that restored nothing does not count; force still undoes.
func TestEnvtestUndoOnlyOnceAfterTheUndoIsDeleted(t *testing.T) {
	ns, logs := startRecordingLauncher(t)

	skip := testutil.MakeRequest(ns, "skip").Group("once").ShiftBy(100).AllowSkip().Obj()
	ranToSuccess(t, logs, skip, testutil.Result("once", report.ExitOK, -100))
	nothing := testutil.MakeRequest(ns, "skip-undo-nothing").Group("once").UndoOf("skip").Obj()
	none := testutil.Result("once", report.ExitOK, 0)
	none.Partitions[0].Applied, none.Partitions[0].LeftAlone = false, "consumed 1100..1104 since the replay"
	none.Summarize()
	ranToSuccess(t, logs, nothing, none)
	deleted(t, nothing)
	first := testutil.MakeRequest(ns, "skip-undo-1").Group("once").UndoOf("skip").Obj()
	done, _ := ranToSuccess(t, logs, first, testutil.Result("once", report.ExitOK, 100))
	deleted(t, first)
	if u := UndoFromJobOf(t, ns, done.Status.JobName); u == nil || u.Request != "skip" {
		t.Fatalf("the undo's Job, kept as history, says it undid %+v", u)
	}

	second := testutil.MakeRequest(ns, "skip-undo-2").Group("once").UndoOf("skip").Obj()
	create(t, second)
	refused(t, second, "Job "+done.Status.JobName+" already undid skip")

	forced := testutil.MakeRequest(ns, "skip-undo-forced").Group("once").UndoOf("skip").Force().Obj()
	create(t, forced)
	if job := waitJob(t, forced); job.Annotations[v1alpha1.AnnotationUndoOf] != "skip" {
		t.Fatalf("forced undo's Job annotations %v", job.Annotations)
	}
}

// A Job planted under a replay's name, with the replay as its controller and
// an undo's annotations, never makes status say the replay undid anything
// (which would make a real undo of the named request look done): the
// replay fails JobConflict naming the Job.
func TestEnvtestUndoPlantedJobClaimsNoUndo(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	rr := testutil.MakeRequest(ns, "not-an-undo").ShiftBy(-10).Obj()
	create(t, rr) // no launcher runs yet: the Job is there first
	cur := getRR(t, rr)
	job := plantedJob(cur)
	maps.Copy(job.Annotations, runnerjob.UndoAnnotations(&v1alpha1.UndoStatus{Request: "someone-elses", JobName: "someone-elses-1", RunID: "x"}))
	create(t, job)
	startLauncher(t, testOptions(), 2)
	done := waitPhase(t, rr, v1alpha1.PhaseFailed)
	if sc := condition(done, v1alpha1.ConditionSucceeded); sc.Reason != state.ReasonJobConflict || !strings.Contains(sc.Message, "Job "+job.Name+" ") || !strings.Contains(sc.Message, `"someone-elses"`) {
		t.Fatalf("Succeeded %+v", sc)
	}
	if done.Status.Undo != nil || done.Status.JobName != "" {
		t.Fatalf("status.undo %+v, jobName %q", done.Status.Undo, done.Status.JobName)
	}
}
