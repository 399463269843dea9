package launcher

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/internal/undo"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// succeeded is a request that ran as far as status goes: it succeeded with
// its Job jobName, applying applied partitions.
func succeeded(rr *v1alpha1.ReplayRequest, jobName string, applied int32) *v1alpha1.ReplayRequest {
	rr.Status.JobName = jobName
	rr.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionSucceeded, Status: metav1.ConditionTrue, Reason: string(report.ReasonApplied)}}
	rr.Status.Result = &v1alpha1.ReplayResult{RunID: "ns/rewind/0123456789abcdef", Reason: string(report.ReasonApplied), Totals: v1alpha1.ResultTotals{Partitions: applied, Applied: applied}}
	return rr
}

// jobFor is rr's Job as it is kept after the run (released from rr, its
// annotations in place).
func jobFor(rr *v1alpha1.ReplayRequest) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: rr.Namespace, Name: rr.Status.JobName, UID: "job-uid", Annotations: map[string]string{
		v1alpha1.AnnotationRequest: rr.Name, v1alpha1.AnnotationSpecDigest: runnerjob.SpecDigest(&rr.Spec),
	}}}
}

// recordFor is the ReplayRecord the launcher writes for rr's Job.
func recordFor(rr *v1alpha1.ReplayRequest) *v1alpha1.ReplayRecord {
	job := rr.Status.JobName
	return &v1alpha1.ReplayRecord{
		ObjectMeta: metav1.ObjectMeta{Namespace: rr.Namespace, Name: job, OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job, UID: "job-uid"}}},
		Job:        job,
		Request:    rr.Name,
		Group:      rr.Spec.Group,
		RunID:      rr.Status.Result.RunID,
		Complete:   true,
		Outcome:    v1alpha1.RecordOutcome{Succeeded: true, Reason: string(report.ReasonApplied)},
	}
}

// viaCluster makes rr name a Strimzi Kafka's listener and gives it the
// cluster ID it resolved to.
func viaCluster(rr *v1alpha1.ReplayRequest, listener, clusterID string) *v1alpha1.ReplayRequest {
	ref := v1alpha1.StrimziClusterRef{Name: "my-cluster", Listener: listener}
	rr.Spec.Kafka = v1alpha1.KafkaConnection{ClusterRef: &ref}
	rr.Status.ResolvedKafka = &v1alpha1.ResolvedKafka{Name: ref.Name, Listener: listener, ClusterID: clusterID, BootstrapServers: "my-cluster-" + listener + ":9092"}
	return rr
}

func TestUnitDecideUndo(t *testing.T) {
	undoReq := func() *v1alpha1.ReplayRequest { return testutil.MakeRequest("ns", "undo-1").UndoOf("rewind").Obj() }
	undone := func() *v1alpha1.ReplayRequest {
		return succeeded(testutil.MakeRequest("ns", "rewind").ShiftBy(-10).Obj(), "rewind-1a2b3c4d", 3)
	}
	cases := []struct {
		name   string
		rr     func() *v1alpha1.ReplayRequest
		undone func() *v1alpha1.ReplayRequest // nil: not found
		job    func(*batchv1.Job) *batchv1.Job
		rec    func(*v1alpha1.ReplayRecord) *v1alpha1.ReplayRecord
		refuse string // a part of the refusal; empty: accepted
	}{
		{name: "a request that succeeded, with its record", rr: undoReq, undone: undone},
		{name: "the same servers in another order, spacing, case and protocol",
			rr: func() *v1alpha1.ReplayRequest {
				return testutil.MakeRequest("ns", "undo-1").UndoOf("rewind").Bootstrap(" b:9092, PLAINTEXT://KAFKA.ns.svc:9092,b:9092").Obj()
			},
			undone: func() *v1alpha1.ReplayRequest {
				rr := undone()
				rr.Spec.Kafka.BootstrapServers = "kafka.ns.svc:9092,b:9092"
				return rr
			}},
		{name: "a consumerRef undo of the group and servers it resolved to",
			rr: func() *v1alpha1.ReplayRequest {
				rr := undoReq()
				rr.Spec.Kafka, rr.Spec.Group = v1alpha1.KafkaConnection{}, ""
				rr.Spec.ConsumerRef = &v1alpha1.KnativeRef{Kind: v1alpha1.KnativeKafkaSource, Name: "orders-source"}
				rr.Status.Resolved = &v1alpha1.ResolvedConsumer{Kind: v1alpha1.KnativeKafkaSource, Name: "orders-source", Group: "orders", BootstrapServers: "kafka.ns.svc:9092"}
				return rr
			}, undone: undone},
		{name: "a consumerRef undo resolved to another group",
			rr: func() *v1alpha1.ReplayRequest {
				rr := undoReq()
				rr.Spec.Kafka, rr.Spec.Group = v1alpha1.KafkaConnection{}, ""
				rr.Spec.ConsumerRef = &v1alpha1.KnativeRef{Kind: v1alpha1.KnativeKafkaSource, Name: "orders-source"}
				rr.Status.Resolved = &v1alpha1.ResolvedConsumer{Kind: v1alpha1.KnativeKafkaSource, Name: "orders-source", Group: "knative-group-uid", BootstrapServers: "kafka.ns.svc:9092"}
				return rr
			}, undone: undone, refuse: `moved group "orders", not "knative-group-uid"`},
		{name: "a clusterRef undo through another listener of the same cluster",
			rr:     func() *v1alpha1.ReplayRequest { return viaCluster(undoReq(), "scram", "id-1") },
			undone: func() *v1alpha1.ReplayRequest { return viaCluster(undone(), "tls", "id-1") }},
		{name: "a clusterRef undo on another cluster",
			rr:     func() *v1alpha1.ReplayRequest { return viaCluster(undoReq(), "tls", "id-2") },
			undone: func() *v1alpha1.ReplayRequest { return viaCluster(undone(), "tls", "id-1") }, refuse: "ran on Kafka cluster id-1, not id-2"},
		{name: "itself", rr: func() *v1alpha1.ReplayRequest { return testutil.MakeRequest("ns", "rewind").UndoOf("rewind").Obj() }, undone: undone, refuse: "names this request itself"},
		{name: "no such request", rr: undoReq, refuse: `there is no ReplayRequest "rewind" in namespace ns`},
		{name: "not finished yet", rr: undoReq, undone: func() *v1alpha1.ReplayRequest {
			rr := undone()
			rr.Status.Conditions = nil
			return rr
		}, refuse: "has not finished yet"},
		{name: "failed", rr: undoReq, undone: func() *v1alpha1.ReplayRequest {
			rr := undone()
			rr.Status.Conditions[0].Status, rr.Status.Conditions[0].Reason, rr.Status.Conditions[0].Message = metav1.ConditionFalse, "GroupActive", "the group has members"
			return rr
		}, refuse: "did not succeed (GroupActive: the group has members)"},
		{name: "a dry run", rr: undoReq, undone: func() *v1alpha1.ReplayRequest {
			rr := undone()
			rr.Spec.DryRun = true
			return rr
		}, refuse: "was a dry run"},
		{name: "a dry run by its result", rr: undoReq, undone: func() *v1alpha1.ReplayRequest {
			rr := undone()
			rr.Status.Result.DryRun = true
			return rr
		}, refuse: "was a dry run"},
		{name: "applied nothing", rr: undoReq, undone: func() *v1alpha1.ReplayRequest {
			rr := undone()
			rr.Status.Result.Totals.Applied = 0
			return rr
		}, refuse: "rewind applied no partition"},
		{name: "another group", rr: undoReq, undone: func() *v1alpha1.ReplayRequest {
			rr := undone()
			rr.Spec.Group = "payments"
			return rr
		}, refuse: `moved group "payments", not "orders"`},
		{name: "another cluster", rr: undoReq, undone: func() *v1alpha1.ReplayRequest {
			rr := undone()
			rr.Spec.Kafka.BootstrapServers = "kafka.other.svc:9092"
			return rr
		}, refuse: `kafka.bootstrapServers "kafka.other.svc:9092", not "kafka.ns.svc:9092"`},
		{name: "a cluster with one server more", rr: undoReq, undone: func() *v1alpha1.ReplayRequest {
			rr := undone()
			rr.Spec.Kafka.BootstrapServers += ",kafka-2.ns.svc:9092"
			return rr
		}, refuse: "the same Kafka cluster"},
		{name: "no Job in status", rr: undoReq, undone: func() *v1alpha1.ReplayRequest {
			rr := undone()
			rr.Status.JobName = ""
			return rr
		}, refuse: "no runner Job in status.jobName"},
		{name: "no record", rr: undoReq, undone: undone, rec: func(*v1alpha1.ReplayRecord) *v1alpha1.ReplayRecord { return nil }, refuse: "has no ReplayRecord rewind-1a2b3c4d"},
		{name: "a record not owned by the Job", rr: undoReq, undone: undone, rec: func(r *v1alpha1.ReplayRecord) *v1alpha1.ReplayRecord {
			r.OwnerReferences = nil
			return r
		}, refuse: "is not the record of rewind's Job"},
		{name: "the Job is gone", rr: undoReq, undone: undone, job: func(*batchv1.Job) *batchv1.Job { return nil }, refuse: "rewind's Job rewind-1a2b3c4d is gone"},
		{name: "a record owned by another Job of that name", rr: undoReq, undone: undone, job: func(j *batchv1.Job) *batchv1.Job {
			j.UID = "another-uid"
			return j
		}, refuse: "is not the record of rewind's Job"},
		{name: "a Job of that name made for another spec", rr: undoReq, undone: undone, job: func(j *batchv1.Job) *batchv1.Job {
			j.Annotations[v1alpha1.AnnotationSpecDigest] = "ffffffffffffffff"
			return j
		}, refuse: "was not made for rewind as it is"},
		{name: "a Job of that name made for another request", rr: undoReq, undone: undone, job: func(j *batchv1.Job) *batchv1.Job {
			j.Annotations[v1alpha1.AnnotationRequest] = "other"
			return j
		}, refuse: "was not made for rewind as it is"},
		{name: "a record of another request", rr: undoReq, undone: undone, rec: func(r *v1alpha1.ReplayRecord) *v1alpha1.ReplayRecord {
			r.Request = "other"
			return r
		}, refuse: `is of request "other"`},
		{name: "a record of a dry run", rr: undoReq, undone: undone, rec: func(r *v1alpha1.ReplayRecord) *v1alpha1.ReplayRecord {
			r.DryRun = true
			return r
		}, refuse: "is of a dry run"},
		{name: "a record of a failed run", rr: undoReq, undone: undone, rec: func(r *v1alpha1.ReplayRecord) *v1alpha1.ReplayRecord {
			r.Outcome.Succeeded, r.Outcome.Reason = false, "PartiallyApplied"
			return r
		}, refuse: "did not succeed (PartiallyApplied)"},
		{name: "an incomplete record", rr: undoReq, undone: undone, rec: func(r *v1alpha1.ReplayRecord) *v1alpha1.ReplayRecord {
			r.Complete = false
			return r
		}, refuse: "is incomplete"},
		{name: "a record of another group", rr: undoReq, undone: undone, rec: func(r *v1alpha1.ReplayRecord) *v1alpha1.ReplayRecord {
			r.Group = "payments"
			return r
		}, refuse: `is of group "payments"`},
		{name: "a record of another run", rr: undoReq, undone: undone, rec: func(r *v1alpha1.ReplayRecord) *v1alpha1.ReplayRecord {
			r.RunID = "ns/rewind/ffffffffffffffff"
			return r
		}, refuse: `is of run "ns/rewind/ffffffffffffffff"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rr := tc.rr()
			var u *v1alpha1.ReplayRequest
			var job *batchv1.Job
			var rec *v1alpha1.ReplayRecord
			if tc.undone != nil {
				u = tc.undone()
				job, rec = jobFor(u), recordFor(u)
			}
			if tc.job != nil {
				job = tc.job(job)
			}
			if tc.rec != nil {
				rec = tc.rec(rec)
			}
			got, err := undo.Decide(rr, u, job, rec)
			if tc.refuse == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				want := v1alpha1.UndoStatus{Request: "rewind", JobName: "rewind-1a2b3c4d", RunID: "ns/rewind/0123456789abcdef"}
				if got == nil || *got != want {
					t.Fatalf("status.undo %+v, want %+v", got, want)
				}
				return
			}
			var refusal *undo.Refusal
			if !errors.As(err, &refusal) || got != nil {
				t.Fatalf("got %+v, %v; want a refusal", got, err)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "target.undoOf: ") || !strings.Contains(msg, tc.refuse) {
				t.Fatalf("refusal %q, want it to name target.undoOf and say %q", msg, tc.refuse)
			}
		})
	}
}

// heredoc returns the manifest of an undo command, checking that the shell
// reads it as the here-document it looks like: the first line starts it,
// the only line "EOF" is the last.
func heredoc(t *testing.T, cmd string) string {
	t.Helper()
	lines := strings.Split(cmd, "\n")
	for len(lines) > 0 && strings.HasPrefix(lines[0], "# ") {
		lines = lines[1:]
	}
	if len(lines) < 3 || lines[0] != "kubectl create -f - <<'EOF'" || lines[len(lines)-1] != "EOF" {
		t.Fatalf("not a quoted here-document:\n%s", cmd)
	}
	for _, l := range lines[1 : len(lines)-1] {
		if strings.TrimSpace(l) == "EOF" {
			t.Fatalf("a line of the manifest ends the here-document early:\n%s", cmd)
		}
	}
	return strings.Join(lines[1:len(lines)-1], "\n")
}

func TestUnitUndoCommand(t *testing.T) {
	wait := &metav1.Duration{Duration: 5 * time.Minute}
	base := func() *testutil.RequestWrapper { return testutil.MakeRequest("team-a", "rewind").ShiftBy(-10) }
	cases := []struct {
		name  string
		rr    *v1alpha1.ReplayRequest
		empty bool
		check func(t *testing.T, cmd string, got *v1alpha1.ReplayRequest)
	}{
		{name: "a rewind that applied", rr: succeeded(base().Topic("orders", 0, 1).MaxReconsume(100).Obj(), "rewind-1", 2),
			check: func(t *testing.T, cmd string, got *v1alpha1.ReplayRequest) {
				if got.GenerateName != "rewind-undo-" || got.Namespace != "team-a" || got.Name != "" {
					t.Errorf("metadata %+v", got.ObjectMeta)
				}
				if got.Spec.Group != "orders" || got.Spec.Kafka.BootstrapServers != "kafka.team-a.svc:9092" {
					t.Errorf("group/kafka %+v", got.Spec)
				}
				// The record is the scope: no topics, no target of its own,
				// no limits, no force.
				if len(got.Spec.Topics) != 0 || got.Spec.Limits != nil || got.Spec.Force || got.Spec.DryRun || got.Spec.Target.ShiftBy != nil {
					t.Errorf("spec carries what an undo must not: %+v", got.Spec)
				}
			}},
		{name: "consumers, the wait and the runner are kept",
			rr: succeeded(base().Consumers(v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerDeployment, Name: "app"}).Wait(5*time.Minute).
				Secret("kafka-creds").ConfigMap("kafka-props").Runner(v1alpha1.RunnerOverrides{ServiceAccountName: "replayer"}).Obj(), "rewind-1", 1),
			check: func(t *testing.T, cmd string, got *v1alpha1.ReplayRequest) {
				s := got.Spec
				if len(s.Consumers) != 1 || s.Consumers[0].Name != "app" || s.WhenGroupActive != v1alpha1.GroupActiveWait || s.WaitTimeout == nil || *s.WaitTimeout != *wait {
					t.Errorf("consumers/wait %+v", s)
				}
				if s.Kafka.SecretRef == nil || s.Kafka.SecretRef.Name != "kafka-creds" || s.Kafka.ConfigMapRef == nil || s.Kafka.ConfigMapRef.Name != "kafka-props" || s.Runner == nil || s.Runner.ServiceAccountName != "replayer" {
					t.Errorf("kafka/runner %+v", s)
				}
			}},
		{name: "a group no shell or YAML should see raw",
			rr: succeeded(base().Group("orders\"\nEOF\n$(rm -rf /) #: 'x' \\ é").Obj(), "rewind-1", 1),
			check: func(t *testing.T, cmd string, got *v1alpha1.ReplayRequest) {
				if got.Spec.Group != "orders\"\nEOF\n$(rm -rf /) #: 'x' \\ é" {
					t.Errorf("group %q", got.Spec.Group)
				}
			}},
		{name: "a consumerRef request: the same reference, no kafka or group", rr: func() *v1alpha1.ReplayRequest {
			rr := base().Obj()
			rr.Spec.Kafka, rr.Spec.Group = v1alpha1.KafkaConnection{}, ""
			rr.Spec.ConsumerRef = &v1alpha1.KnativeRef{Kind: v1alpha1.KnativeKafkaSource, Name: "orders-source"}
			return succeeded(rr, "rewind-1", 1)
		}(), check: func(t *testing.T, cmd string, got *v1alpha1.ReplayRequest) {
			if got.Spec.ConsumerRef == nil || got.Spec.ConsumerRef.Name != "orders-source" || got.Spec.Group != "" || got.Spec.Kafka != (v1alpha1.KafkaConnection{}) || strings.Contains(cmd, `"kafka"`) {
				t.Errorf("consumerRef undo %+v\n%s", got.Spec, cmd)
			}
		}},
		{name: "an undo is undone by another undo", rr: succeeded(testutil.MakeRequest("team-a", "rewind-undo-x7k2p").UndoOf("rewind").Obj(), "undo-1", 1),
			check: func(t *testing.T, cmd string, got *v1alpha1.ReplayRequest) {
				if got.Spec.Target.UndoOf == nil || *got.Spec.Target.UndoOf != "rewind-undo-x7k2p" || got.GenerateName != "rewind-undo-x7k2p-undo-" {
					t.Errorf("undo of an undo %+v", got)
				}
			}},
		{name: "a long name keeps room for the generated suffix", rr: succeeded(base().Obj(), "j", 1),
			check: func(t *testing.T, cmd string, got *v1alpha1.ReplayRequest) {
				if n := len(got.GenerateName); n > 253-5 {
					t.Errorf("generateName %d characters", n)
				}
			}},
		{name: "too long for status: consumers and runner left out, and said", rr: func() *v1alpha1.ReplayRequest {
			w := base().Wait(time.Minute)
			var refs []v1alpha1.ConsumerRef
			for i := range 16 {
				refs = append(refs, v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerStatefulSet, Name: strings.Repeat(string(rune('a'+i)), 253)})
			}
			w.Consumers(refs...)
			w.Runner(v1alpha1.RunnerOverrides{Resources: &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}})
			return succeeded(w.Obj(), "rewind-1", 1)
		}(), check: func(t *testing.T, cmd string, got *v1alpha1.ReplayRequest) {
			if !strings.HasPrefix(cmd, "# too long to show whole: add spec.consumers and spec.runner as in rewind") || len(got.Spec.Consumers) != 0 {
				t.Errorf("command %q", cmd)
			}
		}},
		{name: "a dry run", rr: succeeded(base().DryRun().Obj(), "rewind-1", 0), empty: true},
		{name: "applied nothing", rr: succeeded(base().Obj(), "rewind-1", 0), empty: true},
		{name: "failed", rr: func() *v1alpha1.ReplayRequest {
			rr := succeeded(base().Obj(), "rewind-1", 2)
			rr.Status.Conditions[0].Status = metav1.ConditionFalse
			return rr
		}(), empty: true},
		{name: "not finished", rr: func() *v1alpha1.ReplayRequest {
			rr := succeeded(base().Obj(), "rewind-1", 2)
			rr.Status.Conditions = nil
			return rr
		}(), empty: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "a long name keeps room for the generated suffix" {
				tc.rr.Name = strings.Repeat("r", 253)
			}
			cmd := undo.Command(tc.rr)
			if tc.empty {
				if cmd != "" {
					t.Fatalf("command %q for a request with nothing to undo", cmd)
				}
				return
			}
			if len(cmd) > 4096 { // the CRD's maxLength of status.undoCommand
				t.Fatalf("%d bytes, more than status.undoCommand holds", len(cmd))
			}
			var got v1alpha1.ReplayRequest
			if err := json.Unmarshal([]byte(heredoc(t, cmd)), &got); err != nil {
				t.Fatalf("manifest: %v\n%s", err, cmd)
			}
			if got.APIVersion != v1alpha1.GroupVersion.String() || got.Kind != "ReplayRequest" {
				t.Errorf("type %+v", got.TypeMeta)
			}
			if got.Spec.Target.UndoOf == nil || *got.Spec.Target.UndoOf != tc.rr.Name || got.Spec.Group != tc.rr.Spec.Group {
				t.Errorf("target %+v, group %q", got.Spec.Target, got.Spec.Group)
			}
			if _, err := ResolveTarget(got.Spec.Target, time.Now()); err != nil {
				t.Errorf("the undo's target does not resolve: %v", err)
			}
			if tc.check != nil {
				tc.check(t, cmd, &got)
			}
		})
	}
}

// An undo's Job reads the record of the request it names, and only an
// undo's Job reads one: BuildJobWithInput refuses anything else.
func TestUnitCheckUndoInput(t *testing.T) {
	u := &v1alpha1.UndoStatus{Request: "rewind", JobName: "rewind-1", RunID: "ns/rewind/x"}
	undoIn := &runnerjob.Input{Kind: runnerjob.InputUndo, ConfigMap: "undo-1-input", Digest: "sha256:00", Undo: u}
	planIn := &runnerjob.Input{Kind: runnerjob.InputPlan, ConfigMap: "undo-1-input", Digest: "sha256:00"}
	undoRR := testutil.MakeRequest("ns", "undo-1").UndoOf("rewind").Obj()
	manual := testutil.MakeRequest("ns", "undo-1").UndoOf("rewind").Manual().Obj()
	rewind := testutil.MakeRequest("ns", "rewind").ShiftBy(-10).Obj()
	cases := []struct {
		name  string
		rr    *v1alpha1.ReplayRequest
		stage runnerjob.Stage
		in    *runnerjob.Input
		bad   string
	}{
		{"an undo's Job with the record", undoRR, runnerjob.StageApply, undoIn, ""},
		{"a Manual undo's planning Job with the record", manual, runnerjob.StagePlan, undoIn, ""},
		{"a Manual undo's apply Job with its plan", manual, runnerjob.StageApply, planIn, ""},
		{"a replay without input", rewind, runnerjob.StageApply, nil, ""},
		{"an undo's Job without input", undoRR, runnerjob.StageApply, nil, "needs the undone run's record"},
		{"an undo's Job with a plan", undoRR, runnerjob.StageApply, planIn, "needs the undone run's record"},
		{"an undo's Job with another request's record", undoRR, runnerjob.StageApply, &runnerjob.Input{Kind: runnerjob.InputUndo, Undo: &v1alpha1.UndoStatus{Request: "other"}}, `not request "rewind"`},
		{"an undo's Job with a record of nobody", undoRR, runnerjob.StageApply, &runnerjob.Input{Kind: runnerjob.InputUndo}, `not request "rewind"`},
		{"a replay with an undo input", rewind, runnerjob.StageApply, undoIn, "not an undo's"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := undo.CheckInput(tc.rr, tc.stage, tc.in)
			if tc.bad == "" && err != nil || tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)) {
				t.Fatalf("CheckInput = %v, want %q", err, tc.bad)
			}
		})
	}
	// Through BuildJobWithInput: the undo's Job carries the record's
	// identity and reads the file, with its digest, and no topics.
	rr := undoRR.DeepCopy()
	rr.Status.ResolvedTarget = "undo:rewind"
	job, err := BuildJobWithInput(rr, runnerjob.StageApply, DefaultOptions(), undoIn)
	if err != nil {
		t.Fatal(err)
	}
	env := testutil.RunnerEnv(job)
	if env["REPLAY_TO"] != "undo:/etc/kafka-replay/input/input.json.gz" || env["REPLAY_FILE_DIGEST"] != "sha256:00" || env["REPLAY_TOPICS"] != "" {
		t.Errorf("env %v", env)
	}
	if got := runnerjob.UndoFromJob(job.Annotations); got == nil || *got != *u {
		t.Errorf("status.undo from the Job's annotations %+v, want %+v", got, u)
	}
	if _, err := BuildJobWithInput(rr, runnerjob.StageApply, DefaultOptions(), nil); err == nil || !errors.Is(err, errJobRefused) {
		t.Errorf("an undo's Job built without input: %v", err)
	}
	if runnerjob.UndoFromJob(buildJob(t, testutil.MakeRequest("ns", "a")).Annotations) != nil {
		t.Errorf("a replay's Job reads as an undo's")
	}
}

// A Job adopted before status names it says what it undoes only for the
// request target.undoOf names, and as status.undo says it when it does.
func TestUnitAdoptedUndo(t *testing.T) {
	u := v1alpha1.UndoStatus{Request: "rewind", JobName: "rewind-1", RunID: "ns/rewind/x"}
	jobUndoing := func(u v1alpha1.UndoStatus) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "undo-1-x", Annotations: runnerjob.UndoAnnotations(&u)}}
	}
	undoRR := testutil.MakeRequest("ns", "undo-1").UndoOf("rewind").Obj()
	decided := undoRR.DeepCopy()
	decided.Status.Undo = &u
	rewind := testutil.MakeRequest("ns", "rewind").ShiftBy(-10).Obj()
	other := u
	other.Request = "other"
	otherRun := u
	otherRun.JobName = "rewind-2"
	cases := []struct {
		name string
		rr   *v1alpha1.ReplayRequest
		job  *batchv1.Job
		want *v1alpha1.UndoStatus
		bad  string
	}{
		{"the undo's Job, status lost", undoRR, jobUndoing(u), &u, ""},
		{"the undo's Job, status.undo written", decided, jobUndoing(u), &u, ""},
		{"a replay's Job", rewind, &batchv1.Job{}, nil, ""},
		{"an undo's Job without undo annotations", undoRR, &batchv1.Job{}, nil, ""},
		{"a replay's Job claiming an undo", rewind, jobUndoing(u), nil, "no undo"},
		{"an undo's Job undoing another request", undoRR, jobUndoing(other), nil, `"other"`},
		{"another run than status.undo", decided, jobUndoing(otherRun), nil, `"rewind-2"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := undo.Adopted(tc.rr, tc.job)
			switch {
			case tc.bad == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad) || got != nil):
				t.Fatalf("AdoptedUndo = %+v, %v, want an error naming %q", got, err, tc.bad)
			case tc.bad == "" && !equality.Semantic.DeepEqual(got, tc.want):
				t.Fatalf("AdoptedUndo = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A request is undone once: a second undo of it is refused while an
// earlier one may have restored something (undo.Earlier finds it).
func TestUnitEarlierUndo(t *testing.T) {
	at := func(name, of string, s int) *testutil.RequestWrapper {
		return testutil.MakeRequest("ns", name).UndoOf(of).Created(t0.Add(time.Duration(s) * time.Second))
	}
	failed := func(rr *v1alpha1.ReplayRequest, jobName string, applied int32) *v1alpha1.ReplayRequest {
		rr = succeeded(rr, jobName, applied)
		rr.Status.Conditions[0].Status = metav1.ConditionFalse
		return rr
	}
	rr := at("undo-b", "rewind", 10).Obj()
	cases := []struct {
		name   string
		rr     *v1alpha1.ReplayRequest
		others []*v1alpha1.ReplayRequest
		want   string
	}{
		{"none", rr, nil, ""},
		{"itself", rr, []*v1alpha1.ReplayRequest{rr}, ""},
		{"an undo of another request", rr, []*v1alpha1.ReplayRequest{succeeded(at("undo-x", "other", 1).Obj(), "j", 1)}, ""},
		{"an earlier undo that restored", rr, []*v1alpha1.ReplayRequest{succeeded(at("undo-a", "rewind", 1).Obj(), "j", 2)}, "undo-a"},
		{"an earlier undo still waiting", rr, []*v1alpha1.ReplayRequest{at("undo-a", "rewind", 1).Obj()}, "undo-a"},
		{"an earlier undo that failed part-way", rr, []*v1alpha1.ReplayRequest{failed(at("undo-a", "rewind", 1).Obj(), "j", 1)}, "undo-a"},
		{"an earlier undo that restored nothing", rr, []*v1alpha1.ReplayRequest{succeeded(at("undo-a", "rewind", 1).Obj(), "j", 0)}, ""},
		{"an earlier undo refused before its Job", rr, []*v1alpha1.ReplayRequest{failed(at("undo-a", "rewind", 1).Obj(), "", 0)}, ""},
		{"a later undo", rr, []*v1alpha1.ReplayRequest{at("undo-c", "rewind", 11).Obj()}, ""},
		{"the same second, an earlier name", rr, []*v1alpha1.ReplayRequest{at("undo-a", "rewind", 10).Obj()}, "undo-a"},
		{"the same second, a later name", rr, []*v1alpha1.ReplayRequest{at("undo-c", "rewind", 10).Obj()}, ""},
		{"forced", at("undo-b", "rewind", 10).Force().Obj(), []*v1alpha1.ReplayRequest{succeeded(at("undo-a", "rewind", 1).Obj(), "j", 2)}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var others []v1alpha1.ReplayRequest
			for _, o := range tc.others {
				others = append(others, *o)
			}
			got := ""
			if u := undo.Earlier(tc.rr, others); u != nil {
				got = u.Name
			}
			if got != tc.want {
				t.Fatalf("EarlierUndo = %q, want %q", got, tc.want)
			}
		})
	}
}

// A request is undone once even after the earlier undo's request is gone:
// the earlier undo's Job, kept as history, names the run it undid and
// refuses a second undo while it may have restored something
// (undo.EarlierJob).
func TestUnitEarlierUndoJob(t *testing.T) {
	rr := testutil.MakeRequest("ns", "undo-b").UndoOf("rewind").Obj()
	undoJob := func(name string, mut ...func(j *batchv1.Job)) batchv1.Job {
		j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
			Labels:      map[string]string{v1alpha1.LabelStage: string(runnerjob.StageApply)},
			Annotations: runnerjob.UndoAnnotations(&v1alpha1.UndoStatus{Request: "rewind", JobName: "rewind-job", RunID: "r"})}}
		j.Annotations[v1alpha1.AnnotationRequest] = "undo-a"
		for _, m := range mut {
			m(&j)
		}
		return j
	}
	recorded := func(applied int) func(j *batchv1.Job) {
		return func(j *batchv1.Job) {
			res := testutil.Result("orders", report.ExitOK, 10, 20)
			for i := applied; i < len(res.Partitions); i++ {
				res.Partitions[i].Applied, res.Partitions[i].LeftAlone = false, "already at its previous offset"
			}
			res.Summarize()
			for k, v := range resultAnnotations(record.Outcome{Succeeded: true, Reason: string(report.ReasonApplied), Result: res}) {
				j.Annotations[k] = v
			}
		}
	}
	cases := []struct {
		name string
		rr   *v1alpha1.ReplayRequest
		jobs []batchv1.Job
		want string
	}{
		{"none", rr, nil, ""},
		{"an undo that restored", rr, []batchv1.Job{undoJob("a", recorded(1))}, "a"},
		{"an undo still running", rr, []batchv1.Job{undoJob("a")}, "a"},
		{"an undo whose result is unreadable", rr, []batchv1.Job{undoJob("a", recorded(2), func(j *batchv1.Job) { j.Annotations[v1alpha1.AnnotationResult] = "{" })}, "a"},
		{"an undo that restored nothing", rr, []batchv1.Job{undoJob("a", recorded(0))}, ""},
		{"a planning Job", rr, []batchv1.Job{undoJob("a", func(j *batchv1.Job) { j.Labels[v1alpha1.LabelStage] = string(runnerjob.StagePlan) })}, ""},
		{"a dry run, recorded", rr, []batchv1.Job{undoJob("a", recorded(2), func(j *batchv1.Job) { j.Annotations[v1alpha1.AnnotationDryRun] = "true" })}, ""},
		{"a dry run, running", rr, []batchv1.Job{undoJob("a", func(j *batchv1.Job) {
			j.Spec.Template.Spec.Containers = []corev1.Container{{Name: state.ContainerName, Env: []corev1.EnvVar{{Name: config.EnvDryRun, Value: "true"}}}}
		})}, ""},
		// Only the runner's environment says what the runner does (runnerjob.DryRun).
		{"a sidecar's dry run, running", rr, []batchv1.Job{undoJob("a", func(j *batchv1.Job) {
			j.Spec.Template.Spec.Containers = []corev1.Container{{Name: "sidecar", Env: []corev1.EnvVar{{Name: config.EnvDryRun, Value: "true"}}}, {Name: state.ContainerName}}
		})}, "a"},
		{"an undo of another run", rr, []batchv1.Job{undoJob("a", recorded(2), func(j *batchv1.Job) { j.Annotations[v1alpha1.AnnotationUndoJob] = "other-job" })}, ""},
		{"another namespace", rr, []batchv1.Job{undoJob("a", recorded(2), func(j *batchv1.Job) { j.Namespace = "other" })}, ""},
		{"its own apply Job", rr, []batchv1.Job{undoJob(runnerjob.Name(rr, runnerjob.StageApply), recorded(2))}, ""},
		{"forced", testutil.MakeRequest("ns", "undo-b").UndoOf("rewind").Force().Obj(), []batchv1.Job{undoJob("a", recorded(2))}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if j := undo.EarlierJob(tc.rr, "rewind-job", tc.jobs); j != nil {
				got = j.Name
			}
			if got != tc.want {
				t.Fatalf("EarlierUndoJob = %q, want %q", got, tc.want)
			}
		})
	}
}
