package launcher

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/lifecycle"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// ownJob is the Job the launcher makes for rr, controlled by it.
func ownJob(t *testing.T, rr *v1alpha1.ReplayRequest) *batchv1.Job {
	t.Helper()
	cp := rr.DeepCopy()
	if cp.Status.ResolvedTarget == "" {
		target, err := ResolveTarget(cp.Spec.Target, cp.CreationTimestamp.Time)
		if err != nil {
			t.Fatal(err)
		}
		cp.Status.ResolvedTarget = target
	}
	job, err := BuildJob(cp, runnerjob.StageApply, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	job.UID = "job-uid"
	return job
}

func TestUnitDecidePhase(t *testing.T) {
	fresh := testutil.MakeRequest("ns", "a").UID("uid-1").Obj()
	accepted := testutil.MakeRequest("ns", "a").UID("uid-1").Resolved("earliest").Obj()
	started := accepted.DeepCopy()
	started.Status.JobName = "a-123"
	finished := started.DeepCopy()
	FinishRequest(finished, record.Outcome{Succeeded: true, Reason: "Applied"}, "", t0)
	deleting := started.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	mine := ownJob(t, fresh)
	recreated := testutil.MakeRequest("ns", "a").UID("uid-2").Obj() // same key, new UID
	ref := v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerDeployment, Name: "c"}
	recorded := testutil.MakeRequest("ns", "a").UID("uid-1").Resolved("earliest").Consumers(ref).Obj()
	recorded.Status.Consumers = []v1alpha1.ConsumerStatus{{Kind: ref.Kind, Name: ref.Name, State: v1alpha1.ConsumerRecorded}}
	pausedRunning := recorded.DeepCopy()
	pausedRunning.Status.Consumers[0].State = v1alpha1.ConsumerPaused
	pausedRunning.Status.JobName = "a-123"
	pausedFinished := pausedRunning.DeepCopy()
	FinishRequest(pausedFinished, record.Outcome{Reason: "KafkaError"}, "", t0)
	restored := pausedFinished.DeepCopy()
	restored.Status.Consumers[0].State = v1alpha1.ConsumerRestored
	pausedDeleting := pausedRunning.DeepCopy()
	pausedDeleting.DeletionTimestamp = &metav1.Time{Time: t0}

	cases := []struct {
		name string
		rr   *v1alpha1.ReplayRequest
		job  *batchv1.Job
		want lifecycle.Phase
	}{
		{"new", fresh, nil, lifecycle.Accepting},
		{"accepted, no Job", accepted, nil, lifecycle.Queued},
		{"own Job not yet in status (adopt)", accepted, mine, lifecycle.Applying},
		{"own Job, not even accepted in status (adopt)", fresh, mine, lifecycle.Applying},
		{"started", started, mine, lifecycle.Applying},
		{"started, Job gone", started, nil, lifecycle.Applying},
		{"re-created: the earlier incarnation's Job", recreated, mine, lifecycle.Recognising},
		{"finished", finished, mine, lifecycle.Finished},
		{"deleting", deleting, mine, lifecycle.Deleting},
		{"consumers recorded, no Job", recorded, nil, lifecycle.PausingConsumers},
		{"consumers paused, Job made", pausedRunning, ownJob(t, pausedRunning), lifecycle.Applying},
		{"finished with consumers paused", pausedFinished, nil, lifecycle.RestoringConsumers},
		{"finished, consumers restored", restored, nil, lifecycle.Finished},
		{"deleted with consumers paused (Deleting restores)", pausedDeleting, nil, lifecycle.Deleting},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := lifecycle.DecidePhase(lifecycle.Observed{Request: c.rr, Job: c.job}); got != c.want {
				t.Fatalf("phase %s, want %s", got, c.want)
			}
		})
	}
}

func TestUnitClassifyForeignJob(t *testing.T) {
	earlier := testutil.MakeRequest("ns", "a").UID("uid-1").ShiftBy(-10).Obj()
	again := testutil.MakeRequest("ns", "a").UID("uid-2").ShiftBy(-10).Obj()
	running := ownJob(t, earlier)
	released := running.DeepCopy()
	released.OwnerReferences = nil
	testutil.Complete(released, t0)
	planted := released.DeepCopy()
	planted.Annotations = map[string]string{}
	otherSpec := released.DeepCopy()
	otherSpec.Annotations[v1alpha1.AnnotationSpecDigest] = "0123456789abcdef"
	fromCron := released.DeepCopy()
	fromCron.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: "x", UID: "c", Controller: ptr.To(true)}}

	cases := []struct {
		name string
		job  *batchv1.Job
		want foreignJob
	}{
		{"the earlier run, finished and released", released, foreignAlreadyRan},
		{"the earlier run, still running (owned by the old UID)", running, foreignInProgress},
		{"a planted Job without the launcher's annotations", planted, foreignConflict},
		{"a Job of the same name for another spec", otherSpec, foreignConflict},
		{"a Job controlled by something else", fromCron, foreignConflict},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := classifyForeignJob(again, c.job); got != c.want {
				t.Fatalf("got %d, want %d", got, c.want)
			}
		})
	}
	o := alreadyRanOutcome(released)
	if o.Reason != state.ReasonAlreadyRan || !o.Succeeded || !strings.Contains(o.Message, released.Name) || !strings.Contains(o.Message, t0.UTC().Format(time.RFC3339)) {
		t.Fatalf("AlreadyRan outcome %+v must name the Job and its time", o)
	}
	failed := released.DeepCopy()
	failed.Annotations[v1alpha1.AnnotationOutcome] = v1alpha1.OutcomeFailed
	failed.Annotations[v1alpha1.AnnotationReason] = "GroupActive"
	if o := alreadyRanOutcome(failed); o.Succeeded || !strings.Contains(o.Message, "GroupActive") {
		t.Fatalf("an earlier failure is not a success now: %+v", o)
	}
}

func TestUnitStartProgress(t *testing.T) {
	job := ownJob(t, testutil.MakeRequest("ns", "a").Obj())
	waiting := func(reason, msg string) corev1.Pod {
		p := testutil.PodFor(job, "p")
		p.Status.Phase = corev1.PodPending
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: state.ContainerName, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}
		return *p
	}
	unschedulable := testutil.PodFor(job, "p")
	unschedulable.Status.Phase = corev1.PodPending
	unschedulable.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/1 nodes are available"}}
	running := testutil.PodFor(job, "p")
	running.Status.Phase = corev1.PodRunning
	retried := waiting("ImagePullBackOff", "")
	retried.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 4}

	pending := testutil.PodFor(job, "p")
	pending.Status.Phase = corev1.PodPending

	// event is the type of the event that says what the pod waits for
	// (issue 32, friction 6: a pod that starts as every pod does raises no
	// Warning).
	cases := []struct {
		name    string
		pods    []corev1.Pod
		started bool
		waiting string
		event   string
	}{
		{"no pod", nil, false, "NoPod", corev1.EventTypeNormal},
		{"pending", []corev1.Pod{*pending}, false, "Pending", corev1.EventTypeNormal},
		{"creating its container", []corev1.Pod{waiting("ContainerCreating", "")}, false, "ContainerCreating", corev1.EventTypeNormal},
		{"initializing", []corev1.Pod{waiting("PodInitializing", "")}, false, "PodInitializing", corev1.EventTypeNormal},
		{"image pull", []corev1.Pod{waiting("ImagePullBackOff", "Back-off pulling image")}, false, "ImagePullBackOff: Back-off pulling image", corev1.EventTypeWarning},
		{"missing Secret", []corev1.Pod{waiting("CreateContainerConfigError", `secret "kafka-creds" not found`)}, false, "CreateContainerConfigError", corev1.EventTypeWarning},
		{"unschedulable", []corev1.Pod{*unschedulable}, false, "Unschedulable: 0/1 nodes", corev1.EventTypeWarning},
		{"running", []corev1.Pod{*running}, true, "", ""},
		{"ran before, waits again: started", []corev1.Pod{retried}, true, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := startProgress(c.pods)
			if got.Started != c.started || !strings.HasPrefix(got.Waiting, c.waiting) {
				t.Fatalf("got %+v, want started=%v waiting~%q", got, c.started, c.waiting)
			}
			if !c.started && got.EventType() != c.event {
				t.Fatalf("event type %s, want %s (%+v)", got.EventType(), c.event, got)
			}
		})
	}
}

func TestUnitCreateRetry(t *testing.T) {
	cases := []struct {
		refusedFor, timeout time.Duration
		retry               time.Duration
		expired             bool
	}{
		{0, 5 * time.Minute, time.Second, false},
		{10 * time.Second, 5 * time.Minute, 5 * time.Second, false},
		{4 * time.Minute, 5 * time.Minute, 30 * time.Second, false},
		{4*time.Minute + 50*time.Second, 5 * time.Minute, 10 * time.Second, false}, // never past the timeout
		{5 * time.Minute, 5 * time.Minute, 0, true},
	}
	for _, c := range cases {
		retry, left := createRetry(t0, t0.Add(c.refusedFor), c.timeout)
		if retry != c.retry || (left <= 0) != c.expired {
			t.Errorf("refused for %s of %s: retry %s left %s, want retry %s expired %v", c.refusedFor, c.timeout, retry, left, c.retry, c.expired)
		}
	}
}

func TestUnitReleaseDeleted(t *testing.T) {
	rr := testutil.MakeRequest("ns", "a").Obj()
	job := ownJob(t, rr)
	finished := job.DeepCopy()
	testutil.Complete(finished, t0)
	pod := func(phase corev1.PodPhase) corev1.Pod {
		p := testutil.PodFor(job, "p")
		p.Status.Phase = phase
		return *p
	}
	orphaning := rr.DeepCopy()
	orphaning.Finalizers = []string{Finalizer, metav1.FinalizerOrphanDependents}

	cases := []struct {
		name string
		rr   *v1alpha1.ReplayRequest
		job  *batchv1.Job
		pods []corev1.Pod
		want bool
	}{
		{"no Job ever", rr, nil, nil, true},
		{"Job running", rr, job, []corev1.Pod{pod(corev1.PodRunning)}, false},
		{"Job deleted, pod still terminating", rr, nil, []corev1.Pod{pod(corev1.PodRunning)}, false},
		{"Job deleted, pod done", rr, nil, []corev1.Pod{pod(corev1.PodFailed)}, true},
		{"Job finished", rr, finished, []corev1.Pod{pod(corev1.PodSucceeded)}, true},
		{"--cascade=orphan: the Job lives on and holds the group itself", orphaning, job, []corev1.Pod{pod(corev1.PodRunning)}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := releaseDeleted(c.rr, c.job, c.pods); got != c.want {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestUnitFinishRequestSetsFinishedOnEveryOutcome(t *testing.T) {
	for _, o := range []record.Outcome{
		{Succeeded: true, Reason: "Applied", Message: "moved"},
		{Reason: "GroupActive", Message: "active"},
		{Reason: state.ReasonAlreadyRan, Succeeded: true, Message: "ran before"},
		{Reason: state.ReasonPodNotStarted, Message: "ImagePullBackOff"},
	} {
		rr := testutil.MakeRequest("ns", "a").Obj()
		FinishRequest(rr, o, "", t0)
		c := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionFinished)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != o.Reason {
			t.Errorf("%s: Finished = %+v", o.Reason, c)
		}
		if !state.IsFinished(rr) {
			t.Errorf("%s: not finished", o.Reason)
		}
	}
}

func TestUnitStatusOutcomeReadsBackFinish(t *testing.T) {
	for _, o := range []record.Outcome{
		{Succeeded: true, Reason: "Applied", Message: "3 partitions moved", FinishedAt: t0},
		{Reason: state.ReasonPodNotStarted, Message: "ImagePullBackOff", FinishedAt: t0},
	} {
		rr := testutil.MakeRequest("ns", "a").Obj()
		FinishRequest(rr, o, "", t0)
		got := statusOutcome(rr)
		if got.Succeeded != o.Succeeded || got.Reason != o.Reason || got.Message != o.Message || !got.FinishedAt.Equal(o.FinishedAt) {
			t.Errorf("StatusOutcome = %+v, want %+v", got, o)
		}
	}
}

// A Manual request plans before it applies: Queued makes its planning Job,
// Planning follows it, AwaitingApproval holds the ready plan, and once
// approved it goes the Automatic way (Queued for the apply Job, Applying).
func TestUnitDecidePhaseManual(t *testing.T) {
	accepted := testutil.MakeRequest("ns", "a").UID("uid-1").Manual().Resolved("earliest").Obj()
	planJob, err := BuildJob(accepted, runnerjob.StagePlan, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	planJob.UID = "plan-uid"
	ready := accepted.DeepCopy()
	ready.Status.Plan = &v1alpha1.PlanSummary{Digest: "0123456789abcdef", JobName: planJob.Name}
	approved := ready.DeepCopy()
	approved.Annotations = map[string]string{v1alpha1.AnnotationApprove: "0123456789abcdef"}
	approved.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: v1alpha1.RequesterUnknown, Digest: "0123456789abcdef"}
	consumers := approved.DeepCopy()
	consumers.Spec.Consumers = []v1alpha1.ConsumerRef{{Kind: v1alpha1.ConsumerDeployment, Name: "c"}}
	consumers.Status.Consumers = []v1alpha1.ConsumerStatus{{Kind: v1alpha1.ConsumerDeployment, Name: "c", State: v1alpha1.ConsumerRecorded}}
	applyJob, err := BuildJobWithInput(approved, runnerjob.StageApply, DefaultOptions(), &runnerjob.Input{Kind: runnerjob.InputPlan, ConfigMap: "a-input", Digest: "sha256:00"})
	if err != nil {
		t.Fatal(err)
	}
	applyJob.UID = "job-uid"
	started := approved.DeepCopy()
	started.Status.JobName = applyJob.Name
	rejected := ready.DeepCopy()
	FinishRequest(rejected, record.Outcome{Reason: state.ReasonRejected}, "", t0)
	deleting := accepted.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}

	cases := []struct {
		name         string
		rr           *v1alpha1.ReplayRequest
		job, planJob *batchv1.Job
		want         lifecycle.Phase
	}{
		{"accepted: the planning Job next", accepted, nil, nil, lifecycle.Queued},
		{"planning Job made", accepted, nil, planJob, lifecycle.Planning},
		{"plan ready", ready, nil, planJob, lifecycle.AwaitingApproval},
		{"plan ready, its Job since deleted", ready, nil, nil, lifecycle.AwaitingApproval},
		{"approved: the apply Job next", approved, nil, planJob, lifecycle.Queued},
		{"approved, consumers recorded", consumers, nil, planJob, lifecycle.PausingConsumers},
		{"approved, apply Job made (adopt)", approved, applyJob, nil, lifecycle.Applying},
		{"apply Job made, approval not in status yet (adopt)", ready, applyJob, nil, lifecycle.Applying},
		{"started", started, applyJob, nil, lifecycle.Applying},
		{"rejected", rejected, nil, planJob, lifecycle.Finished},
		{"deleted while planning", deleting, nil, planJob, lifecycle.Deleting},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := lifecycle.DecidePhase(lifecycle.Observed{Request: c.rr, Job: c.job, PlanJob: c.planJob}); got != c.want {
				t.Fatalf("phase %s, want %s", got, c.want)
			}
		})
	}
}

// A finished request writes its outcome only on a Job its status names (or
// on its planning Job): an apply Job it refused to adopt is left as it was.
func TestUnitRefusedJob(t *testing.T) {
	rr := testutil.MakeRequest("ns", "a").UID("uid-1").Resolved("earliest").Obj()
	apply := ownJob(t, rr)
	plan := apply.DeepCopy()
	plan.Name = runnerjob.Name(rr, runnerjob.StagePlan)
	adopted := rr.DeepCopy()
	adopted.Status.JobName = apply.Name
	cases := []struct {
		name string
		rr   *v1alpha1.ReplayRequest
		job  *batchv1.Job
		want bool
	}{
		{"the apply Job status names", adopted, apply, false},
		{"an apply Job status never named", rr, apply, true},
		{"the planning Job of a request that failed planning", rr, plan, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := refusedJob(c.rr, c.job); got != c.want {
				t.Fatalf("RefusedJob = %v, want %v", got, c.want)
			}
		})
	}
}
