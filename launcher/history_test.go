package launcher

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

func TestUnitResultAnnotations(t *testing.T) {
	res := testutil.Result("orders", report.ExitOK, 7, 3)
	a := resultAnnotations(record.Outcome{Succeeded: true, Reason: "Applied", Result: res, FinishedAt: t0})
	if a[v1alpha1.AnnotationOutcome] != v1alpha1.OutcomeSucceeded || a[v1alpha1.AnnotationReason] != "Applied" ||
		a[v1alpha1.AnnotationMessagesReconsumed] != "10" || a[v1alpha1.AnnotationFinishedAt] != "2026-03-01T09:30:00Z" {
		t.Fatalf("annotations = %v", a)
	}
	got, err := report.Decode([]byte(a[v1alpha1.AnnotationResult]))
	if err != nil || got.Totals.MessagesToReconsume != 10 {
		t.Fatalf("result annotation does not decode: %v", err)
	}
	if len(a[v1alpha1.AnnotationResult]) > report.MaxTerminationMessageBytes {
		t.Fatal("result annotation too long")
	}

	// A big result is compacted to the same bound as the termination message.
	deltas := make([]int64, 500)
	for i := range deltas {
		deltas[i] = int64(i)
	}
	big := resultAnnotations(record.Outcome{Succeeded: true, Reason: "Applied", Result: testutil.Result("orders", report.ExitOK, deltas...)})
	var r report.Result
	if err := json.Unmarshal([]byte(big[v1alpha1.AnnotationResult]), &r); err != nil || !r.Truncated || r.Totals.Partitions != 500 {
		t.Fatalf("big result: %v truncated=%v totals=%+v", err, r.Truncated, r.Totals)
	}

	// History shows skips, and a dry run's counts are marked as the plan's.
	skip := resultAnnotations(record.Outcome{Succeeded: true, Reason: "Applied", Result: testutil.Result("orders", report.ExitOK, -200, -76)})
	if skip[v1alpha1.AnnotationMessagesSkipped] != "276" || skip[v1alpha1.AnnotationMessagesReconsumed] != "0" {
		t.Fatalf("a replay that skipped 276: annotations = %v", skip)
	}
	if _, ok := skip[v1alpha1.AnnotationDryRun]; ok {
		t.Fatalf("a real run is marked a dry run: %v", skip)
	}
	plan := testutil.Result("orders", report.ExitOK, 5, -2)
	plan.DryRun, plan.Reason = true, report.ReasonDryRun
	plan.Summarize()
	dry := resultAnnotations(record.Outcome{Succeeded: true, Reason: string(report.ReasonDryRun), Result: plan})
	if dry[v1alpha1.AnnotationDryRun] != "true" || dry[v1alpha1.AnnotationMessagesReconsumed] != "5" || dry[v1alpha1.AnnotationMessagesSkipped] != "2" {
		t.Fatalf("dry run annotations = %v", dry)
	}

	f := resultAnnotations(record.Outcome{Reason: state.ReasonJobDeleted})
	if f[v1alpha1.AnnotationOutcome] != v1alpha1.OutcomeFailed || f[v1alpha1.AnnotationReason] != state.ReasonJobDeleted {
		t.Fatalf("failure annotations = %v", f)
	}
}

func TestUnitExpiredJobsOnlyReleasedLauncherJobs(t *testing.T) {
	mk := func(name string, finished time.Time, owned, launcherMade, recorded bool) batchv1.Job {
		j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1alpha1.LabelRunner: "true"}, Annotations: map[string]string{}}}
		if launcherMade {
			j.Labels[v1alpha1.LabelRequest] = "r"
		}
		if owned {
			j.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplayRequest", Name: "r", Controller: func() *bool { b := true; return &b }()}}
		}
		if recorded {
			j.Annotations[v1alpha1.AnnotationOutcome] = v1alpha1.OutcomeSucceeded
			j.Annotations[v1alpha1.AnnotationFinishedAt] = finished.Format(time.RFC3339)
		}
		return j
	}
	jobs := []batchv1.Job{
		mk("old", t0, false, true, true),
		mk("mid", t0.Add(time.Minute), false, true, true),
		mk("new", t0.Add(2*time.Minute), false, true, true),
		mk("running", t0, true, true, false),
		mk("runbook", t0.Add(-time.Hour), false, false, true),
	}
	got := expiredJobs(jobs, 1)
	if len(got) != 2 || got[0].Name != "old" || got[1].Name != "mid" {
		t.Fatalf("expired = %v", got)
	}
}

func TestUnitResultGrace(t *testing.T) {
	code := int32(0)
	if resultGraceLeft(record.Outcome{ExitCode: &code, FinishedAt: t0}, 10*time.Second, t0) != 0 {
		t.Fatal("waited although the pod reported")
	}
	if resultGraceLeft(record.Outcome{Reason: state.ReasonDeadlineExceeded, FinishedAt: t0}, 10*time.Second, t0) != 0 {
		t.Fatal("waited on a deadline")
	}
	if got := resultGraceLeft(record.Outcome{Reason: state.ReasonCompleted, FinishedAt: t0}, 10*time.Second, t0.Add(4*time.Second)); got != 6*time.Second {
		t.Fatalf("grace left = %v", got)
	}
	if resultGraceLeft(record.Outcome{Reason: state.ReasonCompleted, FinishedAt: t0}, 10*time.Second, t0.Add(time.Minute)) > 0 {
		t.Fatal("waited past the grace")
	}
}

// Issue 27: plans and dry runs do not push apply Jobs out of the history;
// they have a limit of their own, the same number.
func TestUnitExpiredJobsCountsApplyJobsApart(t *testing.T) {
	rr := testutil.MakeRequest("ns", "r").Resolved("earliest").Obj()
	mk := func(name string, stage runnerjob.Stage, dry bool, finished time.Time) batchv1.Job {
		r := rr.DeepCopy()
		r.Spec.DryRun = dry
		j, err := BuildJob(r, stage, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		j.Name = name
		j.Annotations[v1alpha1.AnnotationOutcome] = v1alpha1.OutcomeSucceeded
		j.Annotations[v1alpha1.AnnotationFinishedAt] = finished.Format(time.RFC3339)
		j.OwnerReferences = nil // released
		return *j
	}
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	jobs := []batchv1.Job{
		mk("apply-old", runnerjob.StageApply, false, at(0)),
		mk("apply-new", runnerjob.StageApply, false, at(1)),
		mk("plan-1", runnerjob.StagePlan, false, at(2)),
		mk("dry-2", runnerjob.StageApply, true, at(3)),
		mk("plan-3", runnerjob.StagePlan, false, at(4)),
	}
	var got []string
	for _, j := range expiredJobs(jobs, 2) {
		got = append(got, j.Name)
	}
	if want := []string{"plan-1"}; !slices.Equal(got, want) {
		t.Fatalf("expired %v, want %v: two apply Jobs and two plans or dry runs kept", got, want)
	}
	for _, c := range []struct {
		job  batchv1.Job
		want bool
	}{{jobs[0], false}, {jobs[2], true}, {jobs[3], true}} {
		if got := runnerjob.DryRun(&c.job); got != c.want {
			t.Errorf("DryRunJob(%s) = %v", c.job.Name, got)
		}
	}
}

// TestUnitDryRunJob is the one rule for "this Job changes no offsets", which
// retention (expiredJobs) and undo (undo.EarlierJob, whose table has the
// sidecar case too) both use: only the
// runner container's environment counts, a sidecar's never does.
func TestUnitDryRunJob(t *testing.T) {
	mk := func(stage string, dryAnnotation string, containers ...corev1.Container) *batchv1.Job {
		j := &batchv1.Job{}
		if stage != "" {
			j.Labels = map[string]string{v1alpha1.LabelStage: stage}
		}
		if dryAnnotation != "" {
			j.Annotations = map[string]string{v1alpha1.AnnotationDryRun: dryAnnotation}
		}
		j.Spec.Template.Spec.Containers = containers
		return j
	}
	ctr := func(name, dry string) corev1.Container {
		c := corev1.Container{Name: name, Env: []corev1.EnvVar{{Name: config.EnvGroup, Value: "g"}}}
		if dry != "" {
			c.Env = append(c.Env, corev1.EnvVar{Name: config.EnvDryRun, Value: dry})
		}
		return c
	}
	for _, tc := range []struct {
		name string
		job  *batchv1.Job
		want bool
	}{
		{"empty Job", mk("", ""), false},
		{"apply Job", mk(string(runnerjob.StageApply), "", ctr(state.ContainerName, "")), false},
		{"planning Job", mk(string(runnerjob.StagePlan), "", ctr(state.ContainerName, "")), true},
		{"runner dry run", mk(string(runnerjob.StageApply), "", ctr(state.ContainerName, "true")), true},
		{"runner not a dry run", mk(string(runnerjob.StageApply), "", ctr(state.ContainerName, "false")), false},
		{"sidecar's env says nothing", mk(string(runnerjob.StageApply), "", ctr("sidecar", "true"), ctr(state.ContainerName, "")), false},
		{"sidecar only", mk("", "", ctr("sidecar", "true")), false},
		{"runner after a sidecar", mk("", "", ctr("sidecar", ""), ctr(state.ContainerName, "true")), true},
		{"recorded dry run", mk(string(runnerjob.StageApply), "true", ctr(state.ContainerName, "")), true},
		{"dry-run annotation not true", mk(string(runnerjob.StageApply), "false", ctr(state.ContainerName, "")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := runnerjob.DryRun(tc.job); got != tc.want {
				t.Errorf("DryRunJob = %v, want %v", got, tc.want)
			}
		})
	}
}
