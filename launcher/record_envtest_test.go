package launcher_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/runner/report"

	"github.com/kafka-replay/kafka-replay/launcher"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// recordLogs stands in for pods/log, which envtest lacks (testutil.RunnerLogs:
// the runner's own log lines around its frame).
type recordLogs = testutil.RunnerLogs

func newRecordLogs() *recordLogs { return testutil.NewRunnerLogs() }

// startRecordingLauncher is the start of most record and undo tests: a new
// namespace and a launcher whose pod logs are the returned fake, on which
// tests play the runner's framed results.
func startRecordingLauncher(t *testing.T) (string, *recordLogs) {
	t.Helper()
	env(t)
	ns := newNamespace(t, nil)
	logs := newRecordLogs()
	opts := testOptions()
	opts.Logs = logs
	startLauncher(t, opts, 2)
	return ns, logs
}

// bigResult is a runner result over topics × partitions, production-style
// topic names, with applied and failed partitions as the runner reports them.
func bigResult(code report.ExitCode, topics, partitions int, applied func(i int) bool) *report.Result {
	r := testutil.Result("orders", code)
	i := 0
	for t := range topics {
		name := fmt.Sprintf("prod.payments.entity-%03d-change-events.v2", t)
		for p := range partitions {
			prev := int64(400_000_000 + t*1_000_003 + p*7_919)
			next := prev - 1_000
			d := prev - next
			part := report.Partition{Topic: name, Partition: int32(p), PreviousOffset: &prev, NewOffset: next, Delta: &d, LogEndOffset: prev + 10}
			if applied != nil && applied(i) {
				part.Applied = true
			} else if code == report.ExitPartiallyApplied {
				part.Error = "NOT_COORDINATOR"
			}
			r.Partitions = append(r.Partitions, part)
			i++
		}
	}
	r.Summarize()
	return r
}

// attempt plays the Job controller and kubelet for one attempt: a pod that
// terminated at at with code, the compact result as its termination message,
// and (logged) the full one in its log (testutil.Attempt).
func attempt(t testing.TB, logs *recordLogs, job *batchv1.Job, name string, code int32, r *report.Result, at time.Time) {
	t.Helper()
	if err := testutil.Attempt(context.Background(), k8s, logs, job, name, code, r, at); err != nil {
		t.Fatal(err)
	}
}

func getRecord(t testing.TB, ns, name string) *v1alpha1.ReplayRecord {
	t.Helper()
	var rec v1alpha1.ReplayRecord
	eventually(t, 30*time.Second, "ReplayRecord "+name, func() error {
		return k8s.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, &rec)
	})
	return &rec
}

// The whole run is kept, every attempt: attempt 1 commits 6,000 of 10,000
// partitions and exits 5, attempt 2 cannot reach Kafka and exits 4. The
// request ends PartiallyApplied, not KafkaError; status has the summary and
// the first partitions; the ReplayRecord, read back from the API server, has
// all 10,000 with their previous offsets, both attempts, and belongs to the
// Job.
func TestEnvtestRecordKeepsEveryAttemptAndPartition(t *testing.T) {
	ns, logs := startRecordingLauncher(t)

	rr := testutil.MakeRequest(ns, "big").Obj()
	create(t, rr)
	job := waitJob(t, rr)
	first := bigResult(report.ExitPartiallyApplied, 100, 100, func(i int) bool { return i < 6000 })
	now := time.Now()
	attempt(t, logs, job, job.Name+"-0", 5, first, now.Add(-time.Minute))
	attempt(t, logs, job, job.Name+"-1", 4, testutil.Result("orders", report.ExitKafkaError), now)
	finishJob(t, job, batchv1.JobReasonBackoffLimitExceeded)

	cur := waitPhase(t, rr, v1alpha1.PhaseFailed)
	sc := condition(cur, v1alpha1.ConditionSucceeded)
	if sc.Reason != string(report.ReasonPartiallyApplied) || !strings.Contains(sc.Message, "offsets were changed") || !strings.Contains(sc.Message, "attempt 2") {
		t.Fatalf("Succeeded = %s: %s; want PartiallyApplied naming both attempts", sc.Reason, sc.Message)
	}
	// The log tail is the runner's own lines, not the frame's base64.
	if lt := cur.Status.LogTail; !strings.Contains(lt, "msg=done") || strings.Contains(lt, report.FrameMarker) {
		t.Fatalf("status.logTail = %q", lt)
	}
	res := cur.Status.Result
	if res == nil || !res.Truncated || len(res.Partitions) == 0 || res.Totals.Partitions != 10_000 || res.Totals.Applied != 6000 {
		t.Fatalf("status result: %+v", res)
	}

	rec := getRecord(t, ns, cur.Status.JobName)
	if rec.Outcome.Reason != sc.Reason || rec.Outcome.OffsetsChanged != v1alpha1.OffsetsChangedYes || rec.Outcome.Attempts != 2 || !rec.Complete {
		t.Fatalf("record outcome %+v, complete %v", rec.Outcome, rec.Complete)
	}
	if len(rec.Attempts) != 2 || rec.Attempts[0].ResultSource != v1alpha1.ResultSourceLog || rec.Attempts[0].OffsetsChanged != v1alpha1.OffsetsChangedYes ||
		rec.Attempts[1].Reason != string(report.ReasonKafkaError) || rec.Attempts[1].OffsetsChanged != v1alpha1.OffsetsChangedNo {
		t.Fatalf("attempts %+v", rec.Attempts)
	}
	var jobNow batchv1.Job
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(job), &jobNow); err != nil {
		t.Fatal(err)
	}
	if len(rec.OwnerReferences) != 1 || rec.OwnerReferences[0].UID != jobNow.UID || !maps.Equal(rec.Labels, jobNow.Labels) || rec.Request != rr.Name {
		t.Fatalf("record owner %+v labels %v request %q; Job %s labels %v", rec.OwnerReferences, rec.Labels, rec.Request, jobNow.UID, jobNow.Labels)
	}
	parts, err := replay.RecordPartitions(rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 10_000 {
		t.Fatalf("%d partitions in the record, want 10000", len(parts))
	}
	applied := 0
	for i, p := range parts {
		want := first.Partitions[i]
		if p.Topic != want.Topic || p.Partition != want.Partition || *p.PreviousOffset != *want.PreviousOffset || p.NewOffset != want.NewOffset {
			t.Fatalf("partition %d: %+v, want %+v", i, p, want)
		}
		if p.Applied {
			applied++
		}
	}
	if applied != 6000 {
		t.Fatalf("%d applied partitions in the record, want 6000", applied)
	}
	// The size as the API server holds it.
	b, _ := json.Marshal(rec)
	t.Logf("ReplayRecord of 10,000 partitions: %d bytes as JSON", len(b))
	if len(b) > 1<<20 {
		t.Fatalf("record is %d bytes", len(b))
	}
}

// A dry run has a record too: its plan, which review before apply reads.
func TestEnvtestRecordOfADryRun(t *testing.T) {
	ns, logs := startRecordingLauncher(t)

	rr := testutil.MakeRequest(ns, "plan").DryRun().Obj()
	create(t, rr)
	job := waitJob(t, rr)
	plan := bigResult(report.ExitOK, 3, 200, nil)
	plan.DryRun, plan.Reason = true, report.ReasonDryRun
	plan.Summarize()
	attempt(t, logs, job, job.Name+"-0", 0, plan, time.Now())
	finishJob(t, job, "")

	cur := waitPhase(t, rr, v1alpha1.PhaseSucceeded)
	rec := getRecord(t, ns, cur.Status.JobName)
	parts, err := replay.RecordPartitions(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.DryRun || rec.Outcome.Reason != string(report.ReasonDryRun) || rec.Outcome.OffsetsChanged != v1alpha1.OffsetsChangedNo || len(parts) != 600 {
		t.Fatalf("record: dryRun %v outcome %+v, %d partitions", rec.DryRun, rec.Outcome, len(parts))
	}
	for _, tp := range rec.Topics {
		if len(tp.Failed) != 0 {
			t.Fatalf("a dry run's plan lists failed partitions: %+v", tp.Failed)
		}
	}
}

// The collector, as the launcher's user (its generated RBAC role): writing
// twice keeps the first complete record even when the logs are gone by
// then, a pod that never reached a node is not asked for a log, and a record
// of the Job's name that someone else wrote is never taken as the Job's.
func TestEnvtestRecordCollectorIsIdempotentAndKeepsItsOwn(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	ctx := context.Background()
	as, err := client.New(userCfg, client.Options{Scheme: launcher.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	logs := newRecordLogs()
	collector := record.NewCollector(as, as, logs)

	rr := testutil.MakeRequest(ns, "direct").Obj()
	create(t, rr)
	rr.Status.ResolvedTarget = "earliest"
	job, err := launcher.BuildJob(rr, runnerjob.StageApply, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	create(t, job)
	r := bigResult(report.ExitOK, 2, 50, func(int) bool { return true })
	attempt(t, logs, job, job.Name+"-0", 0, r, time.Now())
	testutil.Complete(job, time.Now())
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}

	got, err := collector.Collect(ctx, job, pods.Items)
	if err != nil || got.Object == nil || !got.Object.Complete || got.Outcome.Reason != string(report.ReasonApplied) {
		t.Fatalf("Collect = %+v, %v", got, err)
	}
	// A pod never bound to a node has no log; none is asked for.
	unbound := pods.Items[0].DeepCopy()
	unbound.Spec.NodeName = ""
	asked := &countingLogs{FullLogFetcher: logs}
	if _, err := record.NewCollector(as, as, asked).Collect(ctx, job, []corev1.Pod{*unbound}); err != nil || asked.n != 0 {
		t.Fatalf("Collect of an unbound pod: %v, %d log reads", err, asked.n)
	}
	// Again, with the pod's log gone: the complete record stays.
	logs = newRecordLogs()
	again, err := record.NewCollector(as, as, logs).Collect(ctx, job, pods.Items)
	if err != nil || again.Object == nil || !again.Object.Complete || again.Object.ResourceVersion != got.Object.ResourceVersion {
		t.Fatalf("second Collect = %+v, %v; want the first record unchanged", again.Object, err)
	}

	// A record planted under another Job's name, owned by something else.
	other := job.DeepCopy()
	other.Name, other.UID = job.Name+"-planted", "not-this-job"
	planted := record.BuildRecord(other, record.Outcome{Reason: "Applied", Succeeded: true})
	planted.Name = job.Name + "x"
	create(t, planted)
	victim := job.DeepCopy()
	victim.Name = planted.Name
	res, err := collector.Collect(ctx, victim, nil)
	if !errors.Is(err, record.ErrRecordNotOwned) || res == nil || res.Object != nil {
		t.Fatalf("Collect over a planted record = %+v, %v; want ErrRecordNotOwned and no record", res, err)
	}
}

// A runbook Job (from the chart's CronJob, no request) gets its record too,
// read from its pod's log, with the runbook's name.
func TestEnvtestRecordOfARunbookJob(t *testing.T) {
	ns, logs := startRecordingLauncher(t)

	cron := runbookCronJob(t, ns, "rewind-orders", true)
	job := waitUnsuspended(t, jobFromCronJob(t, cron, "rewind-orders-manual"))
	r := bigResult(report.ExitOK, 2, 150, func(int) bool { return true })
	attempt(t, logs, job, job.Name+"-0", 0, r, time.Now())
	finishJob(t, job, "")

	rec := getRecord(t, ns, job.Name)
	parts, err := replay.RecordPartitions(rec)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Runbook != "rewind-orders" || rec.Request != "" || !rec.Complete || rec.Outcome.Reason != string(report.ReasonApplied) || len(parts) != 300 {
		t.Fatalf("record: runbook %q request %q complete %v outcome %+v, %d partitions", rec.Runbook, rec.Request, rec.Complete, rec.Outcome, len(parts))
	}
}

// countingLogs counts whole-log reads.
type countingLogs struct {
	record.FullLogFetcher
	n int
}

func (c *countingLogs) Tail(context.Context, string, string, string, int64, int64) (string, error) {
	return "", nil
}

func (c *countingLogs) Full(ctx context.Context, ns, pod, container string, limit int64) (io.ReadCloser, error) {
	c.n++
	return c.FullLogFetcher.Full(ctx, ns, pod, container, limit)
}
