package launcher

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"
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
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// dryRunRecord is the record of a planning Job over n partitions.
func dryRunRecord(t *testing.T, n int) (*v1alpha1.ReplayRecord, *report.Result) {
	t.Helper()
	r := testutil.Result("orders", report.ExitOK)
	r.DryRun, r.Reason = true, report.ReasonDryRun
	r.Target = report.Target{Given: "shift:-10", Resolved: "shift:-10"}
	r.ClusterID = "4L6g3nShT-eMCtK--X86sw"
	r.GroupType = "Share"
	for i := range n {
		prev := int64(1000 + i)
		d := int64(10)
		r.Partitions = append(r.Partitions, report.Partition{Topic: "orders", Partition: int32(i), PreviousOffset: &prev, NewOffset: prev - d, Delta: &d})
	}
	// A partition the group never committed: no previous offset.
	r.Partitions = append(r.Partitions, report.Partition{Topic: "payments", Partition: 0, NewOffset: 0, Note: "no committed offset"})
	r.Summarize()
	r.Plan = report.PlanDigest(r.Group, r.Target.Resolved, r.Partitions)
	job := &batchv1.Job{}
	job.Name, job.Namespace, job.UID = "a-plan", "ns", "job-uid"
	job.Annotations = map[string]string{v1alpha1.AnnotationGroup: "orders"}
	code := int32(0)
	rec := record.BuildRecord(job, record.Outcome{Succeeded: true, Reason: string(report.ReasonDryRun), ExitCode: &code, Full: r, Complete: true})
	return rec, r
}

// A planning Job's record gives back the plan the runner printed: its
// partitions, its totals and its digest.
func TestUnitRecordResult(t *testing.T) {
	rec, want := dryRunRecord(t, 5)
	got, err := RecordResult(rec)
	if err != nil {
		t.Fatal(err)
	}
	if got.Plan != want.Plan {
		t.Errorf("digest %s, want the runner's %s", got.Plan, want.Plan)
	}
	// The runner refuses the plan on any other cluster than its own.
	if got.ClusterID != want.ClusterID {
		t.Errorf("cluster %q, want the runner's %q", got.ClusterID, want.ClusterID)
	}
	// The runner refuses a share group's plan on a consumer group, and
	// the reverse.
	if got.GroupType != "Share" || rec.GroupType != "Share" {
		t.Errorf("group type %q in the record, %q rebuilt; want the runner's Share", rec.GroupType, got.GroupType)
	}
	if got.Schema != report.Schema || got.Group != "orders" || !got.DryRun || got.ExitCode != report.ExitOK || got.Reason != report.ReasonDryRun || got.Target.Resolved != "shift:-10" {
		t.Errorf("result %+v", got)
	}
	if got.Totals != want.Totals {
		t.Errorf("totals %+v, want %+v", got.Totals, want.Totals)
	}
	if len(got.Partitions) != 6 || got.Partitions[5].PreviousOffset != nil || got.Partitions[0].Applied {
		t.Errorf("partitions %+v", got.Partitions)
	}

	incomplete := rec.DeepCopy()
	incomplete.Complete = false
	if _, err := RecordResult(incomplete); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Errorf("an incomplete record: %v", err)
	}
}

// The input ConfigMap holds the gzip of the result's JSON, always the same
// bytes for the same result, and its digest is of those bytes; it belongs to
// the request, not as controller, and cannot be changed.
func TestUnitInputConfigMap(t *testing.T) {
	rr := testutil.MakeRequest("ns", "orders-rewind").UID("uid-1").Group("orders").Obj()
	rec, _ := dryRunRecord(t, 100)
	res, err := RecordResult(rec)
	if err != nil {
		t.Fatal(err)
	}
	cm, digest, err := runnerjob.InputConfigMap(rr, "orders-rewind-12345678", res)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Name != "orders-rewind-12345678-input" || cm.Namespace != "ns" {
		t.Errorf("name %s/%s", cm.Namespace, cm.Name)
	}
	b := cm.BinaryData[runnerjob.InputKey]
	sum := sha256.Sum256(b)
	if want := "sha256:" + hex.EncodeToString(sum[:]); digest != want {
		t.Errorf("digest %s, want %s", digest, want)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	back, err := report.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	// The runner's own reading of the file accepts it as this group's plan.
	file, err := config.DecodeResultFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := config.CheckPlanFile(file, "orders"); err != nil {
		t.Errorf("the runner refuses the plan file: %v", err)
	}
	if err := config.CheckPlanFile(file, "payments"); err == nil {
		t.Error("the runner takes the plan file for another group")
	}
	if back.Plan != res.Plan || report.PlanDigest(back.Group, back.Target.Resolved, back.Partitions) != res.Plan || len(back.Partitions) != 101 {
		t.Errorf("the file's plan %s (recomputed %s, %d partitions), want %s", back.Plan, report.PlanDigest(back.Group, back.Target.Resolved, back.Partitions), len(back.Partitions), res.Plan)
	}
	again, digest2, err := runnerjob.InputConfigMap(rr, "orders-rewind-12345678", res)
	if err != nil || digest2 != digest || !bytes.Equal(again.BinaryData[runnerjob.InputKey], b) {
		t.Errorf("not the same bytes twice: %s vs %s (%v)", digest2, digest, err)
	}
	if cm.Immutable == nil || !*cm.Immutable {
		t.Error("the ConfigMap is not immutable")
	}
	if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != "uid-1" || cm.OwnerReferences[0].Controller != nil {
		t.Errorf("owner references %+v", cm.OwnerReferences)
	}
	if cm.Labels[v1alpha1.LabelRunner] != v1alpha1.LabelRunnerValue || cm.Labels[v1alpha1.LabelGroup] != "orders" || cm.Labels[v1alpha1.LabelRequest] != "orders-rewind" {
		t.Errorf("labels %v", cm.Labels)
	}
	if len(cm.Data) != 0 {
		t.Errorf("data %v", cm.Data)
	}
}

// 10,000 partitions fit in one ConfigMap.
func TestUnitInputConfigMapTenThousandPartitions(t *testing.T) {
	rr := testutil.MakeRequest("ns", "big").Group("orders").Obj()
	rec, _ := dryRunRecord(t, 10_000)
	res, err := RecordResult(rec)
	if err != nil {
		t.Fatal(err)
	}
	cm, _, err := runnerjob.InputConfigMap(rr, "big-1", res)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res)
	t.Logf("10,001 partitions: %d bytes of JSON, %d compressed", len(raw), len(cm.BinaryData[runnerjob.InputKey]))
}

// The apply Job of an approved plan reads it from the input ConfigMap,
// mounted read-only, with the digest of its bytes, without topics; it says
// who approved which plan and when.
func TestUnitBuildJobWithPlanInput(t *testing.T) {
	const digest = "0123456789abcdef"
	rr := testutil.MakeRequest("ns", "orders-rewind").UID("uid-1").Group("orders").Topic("orders", 0, 1).ShiftBy(-10).Manual().Resolved("shift:-10").
		Annotate(v1alpha1.AnnotationApprove, digest).Annotate(v1alpha1.AnnotationApprovedBy, "bob").Obj()
	rr.Status.Plan = &v1alpha1.PlanSummary{Digest: digest, JobName: runnerjob.Name(rr, runnerjob.StagePlan)}
	rr.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: "bob", Digest: digest, At: ptrTime(t0)}
	in := &runnerjob.Input{Kind: runnerjob.InputPlan, ConfigMap: runnerjob.Name(rr, runnerjob.StageApply) + "-input", Digest: "sha256:" + strings.Repeat("ab", 32)}
	job, err := BuildJobWithInput(rr, runnerjob.StageApply, DefaultOptions(), in)
	if err != nil {
		t.Fatal(err)
	}
	env := testutil.RunnerEnv(job)
	if got := env[config.EnvTo]; got != "plan:/etc/kafka-replay/input/input.json.gz" {
		t.Errorf("%s=%q", config.EnvTo, got)
	}
	if got := env[config.EnvFileDigest]; got != in.Digest {
		t.Errorf("%s=%q", config.EnvFileDigest, got)
	}
	if _, ok := env[config.EnvTopics]; ok {
		t.Errorf("%s set with a plan file (the file is the scope)", config.EnvTopics)
	}
	if _, ok := env[config.EnvDryRun]; ok {
		t.Error("the apply Job is a dry run")
	}
	var vol *corev1.Volume
	for i := range job.Spec.Template.Spec.Volumes {
		if v := &job.Spec.Template.Spec.Volumes[i]; v.ConfigMap != nil && v.ConfigMap.Name == in.ConfigMap {
			vol = v
		}
	}
	if vol == nil {
		t.Fatalf("no volume of ConfigMap %s: %+v", in.ConfigMap, job.Spec.Template.Spec.Volumes)
	}
	mounted := false
	for _, m := range job.Spec.Template.Spec.Containers[0].VolumeMounts {
		mounted = mounted || (m.Name == vol.Name && m.MountPath == "/etc/kafka-replay/input" && m.ReadOnly)
	}
	if !mounted {
		t.Errorf("not mounted read-only at /etc/kafka-replay/input: %+v", job.Spec.Template.Spec.Containers[0].VolumeMounts)
	}
	for k, want := range map[string]string{
		v1alpha1.AnnotationApprovedBy: "bob",
		v1alpha1.AnnotationPlanDigest: digest,
		v1alpha1.AnnotationApprovedAt: "2026-03-01T09:30:00Z",
	} {
		if got := job.Annotations[k]; got != want {
			t.Errorf("annotation %s=%q, want %q", k, got, want)
		}
	}

	// The planning Job: a dry run of the same request, its own name (with
	// the UID), no wait, no input.
	plan, err := BuildJob(rr, runnerjob.StagePlan, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	penv := testutil.RunnerEnv(plan)
	if penv[config.EnvDryRun] != "true" || penv[config.EnvTo] != "shift:-10" || penv[config.EnvTopics] == "" {
		t.Errorf("planning Job env %v", penv)
	}
	if plan.Name == job.Name || plan.Labels[v1alpha1.LabelStage] != string(runnerjob.StagePlan) {
		t.Errorf("planning Job %s (stage %s), apply Job %s", plan.Name, plan.Labels[v1alpha1.LabelStage], job.Name)
	}
	other := rr.DeepCopy()
	other.UID = "uid-2"
	if runnerjob.Name(other, runnerjob.StagePlan) == plan.Name || runnerjob.Name(other, runnerjob.StageApply) != job.Name {
		t.Error("a re-created request must plan under a new name and apply under the same")
	}
}

func ptrTime(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }

// A plan with partitions an undo would leave alone keeps them left alone
// through the record, and the digest the runner recomputes.
func TestUnitRecordResultLeftAlone(t *testing.T) {
	r := testutil.Result("orders", report.ExitOK, 5, 0)
	r.DryRun, r.Reason = true, report.ReasonDryRun
	r.Target = report.Target{Given: "undo:/in", Resolved: "undo:orders-rewind"}
	for i := range r.Partitions {
		r.Partitions[i].Applied = false
	}
	r.Partitions[1].LeftAlone = "already at its previous offset"
	r.Summarize()
	r.Plan = report.PlanDigest(r.Group, r.Target.Resolved, r.Partitions)
	job := &batchv1.Job{}
	job.Name, job.Namespace, job.UID = "u-plan", "ns", "u"
	code := int32(0)
	rec := record.BuildRecord(job, record.Outcome{Succeeded: true, Reason: string(report.ReasonDryRun), ExitCode: &code, Full: r, Complete: true})
	got, err := RecordResult(rec)
	if err != nil {
		t.Fatal(err)
	}
	if got.Plan != r.Plan || got.Partitions[1].LeftAlone == "" || got.Totals.LeftAlone != 1 {
		t.Fatalf("digest %s (want %s), partitions %+v", got.Plan, r.Plan, got.Partitions)
	}
	if err := config.CheckPlanFile(got, "orders"); err != nil {
		t.Fatalf("the runner refuses it: %v", err)
	}
}

// A plan that deletes a streams group's internal topics keeps them
// through the record, with the digest the runner computed over them; the
// same record without them gives another digest, so an approval of one
// never applies the other; and both the planning and the apply Job run
// with the setting, which the runner's plan: target needs to delete them.
func TestUnitRecordResultInternalTopics(t *testing.T) {
	_, r := dryRunRecord(t, 3)
	r.GroupType = "Streams"
	r.InternalTopics = &report.InternalTopics{Planned: []string{"orders-store-changelog", "orders-rekey-repartition"}}
	r.Plan = r.Digest()
	job := &batchv1.Job{}
	job.Name, job.Namespace = "a-plan", "ns"
	code := int32(0)
	rec := record.BuildRecord(job, record.Outcome{Succeeded: true, Reason: string(report.ReasonDryRun), ExitCode: &code, Full: r, Complete: true})
	if rec.InternalTopics == nil || strings.Join(rec.InternalTopics.Planned, ",") != "orders-store-changelog,orders-rekey-repartition" {
		t.Fatalf("record's internal topics %+v", rec.InternalTopics)
	}
	got, err := RecordResult(rec)
	if err != nil {
		t.Fatal(err)
	}
	if got.Plan != r.Plan || got.InternalTopics == nil || strings.Join(got.InternalTopics.Planned, ",") != strings.Join(r.InternalTopics.Planned, ",") {
		t.Errorf("rebuilt plan %s with %+v, want the runner's %s with %+v", got.Plan, got.InternalTopics, r.Plan, r.InternalTopics)
	}
	if err := config.CheckPlanFile(got, got.Group); err != nil {
		t.Errorf("the runner refuses the rebuilt plan: %v", err)
	}
	without := rec.DeepCopy()
	without.InternalTopics = nil
	if w, err := RecordResult(without); err != nil || w.Plan == r.Plan {
		t.Errorf("the record without its internal topics digests as %s (%v), the same as with them", w.Plan, err)
	}
	other := rec.DeepCopy()
	other.InternalTopics.Planned = append(other.InternalTopics.Planned, "orders")
	if o, err := RecordResult(other); err != nil || o.Plan == r.Plan {
		t.Errorf("another list digests as %s (%v), the same", o.Plan, err)
	}

	// A Manual request's planning Job, and an Automatic one's apply Job
	// (an approved plan's apply Job is built with its input, above).
	manual := testutil.MakeRequest("ns", "app-reset").Group("orders").Position(v1alpha1.PositionEarliest).Manual().Resolved("earliest").Obj()
	automatic := testutil.MakeRequest("ns", "app-reset").Group("orders").Position(v1alpha1.PositionEarliest).Resolved("earliest").Obj()
	for _, tc := range []struct {
		rr    *v1alpha1.ReplayRequest
		stage runnerjob.Stage
	}{{manual, runnerjob.StagePlan}, {automatic, runnerjob.StageApply}} {
		for _, set := range []bool{true, false} {
			tc.rr.Spec.DeleteAllInternalTopics = set
			job, err := BuildJob(tc.rr, tc.stage, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			got, ok := testutil.RunnerEnv(job)[config.EnvDeleteAllInternalTopics]
			if ok != set || (set && got != "true") {
				t.Errorf("%s Job, spec.deleteAllInternalTopics %t: %s=%q (set %t)", tc.stage, set, config.EnvDeleteAllInternalTopics, got, ok)
			}
		}
	}
	rr := manual
	with := approvedPlanJob(t, rr, got)
	if v := testutil.RunnerEnv(with)[config.EnvDeleteAllInternalTopics]; v != "" {
		t.Errorf("an approved plan's apply Job of a request without the setting: %s=%q", config.EnvDeleteAllInternalTopics, v)
	}
	rr.Spec.DeleteAllInternalTopics = true
	with = approvedPlanJob(t, rr, got)
	if v := testutil.RunnerEnv(with)[config.EnvDeleteAllInternalTopics]; v != "true" {
		t.Errorf("an approved plan's apply Job: %s=%q, want true", config.EnvDeleteAllInternalTopics, v)
	}
	// The plan shows the topics it deletes; one that deletes none shows none.
	s := planSummaryOf(rr, rec, got, t0)
	if strings.Join(s.InternalTopics, ",") != "orders-store-changelog,orders-rekey-repartition" || s.Digest != r.Plan {
		t.Errorf("status.plan: internal topics %q, digest %s", s.InternalTopics, s.Digest)
	}
	got.InternalTopics = nil
	if s := planSummaryOf(rr, rec, got, t0); s.InternalTopics != nil {
		t.Errorf("a plan that deletes nothing shows %q", s.InternalTopics)
	}
}

// approvedPlanJob is the apply Job of rr's approved plan.
func approvedPlanJob(t *testing.T, rr *v1alpha1.ReplayRequest, plan *report.Result) *batchv1.Job {
	t.Helper()
	rr = rr.DeepCopy()
	rr.Annotations = map[string]string{v1alpha1.AnnotationApprove: plan.Plan, v1alpha1.AnnotationApprovedBy: "bob"}
	rr.Status.Plan = &v1alpha1.PlanSummary{Digest: plan.Plan, JobName: runnerjob.Name(rr, runnerjob.StagePlan)}
	rr.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: "bob", Digest: plan.Plan, At: ptrTime(t0)}
	in := &runnerjob.Input{Kind: runnerjob.InputPlan, ConfigMap: runnerjob.Name(rr, runnerjob.StageApply) + "-input", Digest: "sha256:" + strings.Repeat("ab", 32)}
	job, err := BuildJobWithInput(rr, runnerjob.StageApply, DefaultOptions(), in)
	if err != nil {
		t.Fatal(err)
	}
	return job
}
