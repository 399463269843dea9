package launcher

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// Issue 27, cases 3 and 4: a request whose Job was deleted waits for its
// runner pods, then takes what they reported, else says that offsets may
// have changed (unless its runner never started) and how to find out.
func TestUnitDeletedJobOutcome(t *testing.T) {
	rr := testutil.MakeRequest("shop", "rewind").Group("orders").Resolved("earliest").Obj()
	job, err := BuildJob(rr, runnerjob.StageApply, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	pod := func(name string, mod func(*corev1.Pod)) corev1.Pod {
		p := testutil.PodFor(job, name)
		p.CreationTimestamp = metav1.Time{Time: t0}
		mod(p)
		return *p
	}
	running := func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning }
	stopping := func(p *corev1.Pod) { running(p); p.DeletionTimestamp = &metav1.Time{Time: t0} }
	ended := func(code report.ExitCode) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			testutil.Terminated(p, int32(code), testutil.Compact(testutil.Result("orders", code, 5)), t0.Add(time.Minute))
		}
	}
	killed := func(p *corev1.Pod) { testutil.Terminated(p, 137, "", t0.Add(time.Minute)) }
	waiting := rr.DeepCopy()
	state.SetCondition(waiting, v1alpha1.ConditionRunning, metav1.ConditionTrue, state.ReasonPodWaiting, "ImagePullBackOff")

	cases := []struct {
		name      string
		rr        *v1alpha1.ReplayRequest
		pods      []corev1.Pod
		wait      string // the pod it waits for
		reason    string
		succeeded bool
		changed   v1alpha1.OffsetsChanged
		says      []string
	}{
		{name: "a pod still running", rr: rr, pods: []corev1.Pod{pod("p0", running)}, wait: "p0"},
		{name: "a pod stopping in its grace period", rr: rr, pods: []corev1.Pod{pod("p0", ended(report.ExitKafkaError)), pod("p1", stopping)}, wait: "p1"},
		{name: "committed in its grace period", rr: rr, pods: []corev1.Pod{pod("p0", ended(report.ExitOK))},
			reason: string(report.ReasonApplied), succeeded: true, changed: v1alpha1.OffsetsChangedYes, says: []string{"deleted before it finished", "p0"}},
		{name: "interrupted before the commit", rr: rr, pods: []corev1.Pod{pod("p0", ended(report.ExitInterrupted))},
			reason: string(report.ReasonInterrupted), changed: v1alpha1.OffsetsChangedNo, says: []string{"deleted before it finished"}},
		{name: "killed without a result", rr: rr, pods: []corev1.Pod{pod("p0", killed)},
			reason: state.ReasonJobDeleted, changed: v1alpha1.OffsetsChangedUnknown, says: []string{"offsets may have changed", "kubectl replay describe rewind -n shop", runnerjob.RunID(rr)}},
		{name: "no pod left", rr: rr,
			reason: state.ReasonJobDeleted, changed: v1alpha1.OffsetsChangedUnknown, says: []string{"deleted before it finished", "offsets may have changed", `group "orders"`}},
		{name: "no pod left, and it never started", rr: waiting,
			reason: state.ReasonJobDeleted, changed: v1alpha1.OffsetsChangedNo, says: []string{"nothing was run"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			alive, o := deletedJobOutcome(c.rr, job.Name, c.pods)
			if c.wait != "" {
				if alive == nil || alive.Name != c.wait {
					t.Fatalf("waits for %v, want %s", alive, c.wait)
				}
				return
			}
			if alive != nil {
				t.Fatalf("waits for %s, with no pod alive", alive.Name)
			}
			if o.Reason != c.reason || o.Succeeded != c.succeeded || o.OffsetsChanged != c.changed {
				t.Fatalf("outcome %s succeeded=%v changed=%s, want %s %v %s (%s)", o.Reason, o.Succeeded, o.OffsetsChanged, c.reason, c.succeeded, c.changed, o.Message)
			}
			for _, s := range c.says {
				if !strings.Contains(o.Message, s) {
					t.Fatalf("message %q does not say %q", o.Message, s)
				}
			}
		})
	}
}

// Issue 27: a runner that cannot start, in a way waiting does not mend,
// fails with its own reason after StartFailAfter, well within the start
// timeout; anything else waits for the start timeout.
func TestUnitStartVerdict(t *testing.T) {
	opts := DefaultOptions() // start timeout 5m, fail after 1m
	rr := testutil.MakeRequest("shop", "rewind").Resolved("earliest").Obj()
	job, err := BuildJob(rr, runnerjob.StageApply, opts)
	if err != nil {
		t.Fatal(err)
	}
	waitingFor := func(reason string) []corev1.Pod {
		p := testutil.PodFor(job, "p0")
		p.CreationTimestamp = metav1.Time{Time: t0}
		p.Status.Phase = corev1.PodPending
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: state.ContainerName, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "details"}}}}
		return []corev1.Pod{*p}
	}
	unschedulable := func(since time.Time) []corev1.Pod {
		p := testutil.PodFor(job, "p0")
		p.CreationTimestamp = metav1.Time{Time: t0}
		p.Status.Phase = corev1.PodPending
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available", LastTransitionTime: metav1.Time{Time: since}}}
		return []corev1.Pod{*p}
	}
	// A pod on a node whose Secret volume cannot be mounted: the pod says
	// only ContainerCreating; its events say why.
	mounting := func() []corev1.Pod {
		pods := waitingFor("ContainerCreating")
		pods[0].UID, pods[0].Spec.NodeName = "pod-uid", "node-1"
		return pods
	}
	failedMount := func(uid types.UID) []corev1.Event {
		return []corev1.Event{
			{InvolvedObject: corev1.ObjectReference{Kind: "Pod", UID: uid}, Reason: "Scheduled", Message: "Successfully assigned shop/p0 to node-1", LastTimestamp: metav1.Time{Time: t0}},
			{InvolvedObject: corev1.ObjectReference{Kind: "Pod", UID: uid}, Reason: ReasonFailedMount, Type: corev1.EventTypeWarning,
				Message: `MountVolume.SetUp failed for volume "credentials" : secret "kafka-credentials" not found`, LastTimestamp: metav1.Time{Time: t0.Add(time.Second)}},
		}
	}
	cases := []struct {
		name   string
		pods   []corev1.Pod
		events []corev1.Event
		now    time.Time
		reason string        // "" waits
		again  time.Duration // when it waits
		says   string        // in the outcome's message
	}{
		{"no pod yet", nil, nil, t0.Add(time.Minute), "", 4 * time.Minute, ""},
		{"creating its container", waitingFor("ContainerCreating"), nil, t0.Add(2 * time.Minute), "", 3 * time.Minute, ""},
		{"an image pull failing, not for long", waitingFor("ErrImagePull"), nil, t0.Add(20 * time.Second), "", 40 * time.Second, ""},
		{"an image pull failing for a minute", waitingFor("ImagePullBackOff"), nil, t0.Add(time.Minute), state.ReasonImagePullFailed, 0, "ImagePullBackOff"},
		{"an invalid image name", waitingFor("InvalidImageName"), nil, t0.Add(2 * time.Minute), state.ReasonImagePullFailed, 0, ""},
		{"a missing Secret key", waitingFor("CreateContainerConfigError"), nil, t0.Add(time.Minute), state.ReasonConfigMissing, 0, ""},
		{"unschedulable, since a moment", unschedulable(t0.Add(2 * time.Minute)), nil, t0.Add(2*time.Minute + 10*time.Second), "", 50 * time.Second, ""},
		{"unschedulable for a minute", unschedulable(t0.Add(time.Minute)), nil, t0.Add(2 * time.Minute), state.ReasonUnschedulable, 0, ""},
		{"anything at the start timeout", waitingFor("ContainerCreating"), nil, t0.Add(5 * time.Minute), state.ReasonPodNotStarted, 0, "ContainerCreating"},
		// Issue 32, friction 1: a missing Secret volume.
		{"mounting, its events not read yet: look when they are due", mounting(), nil, t0.Add(10 * time.Second), "", 50 * time.Second, ""},
		{"mounting, a mount failing, not for long", mounting(), failedMount("pod-uid"), t0.Add(10 * time.Second), "", 50 * time.Second, ""},
		{"mounting, a mount failing for a minute", mounting(), failedMount("pod-uid"), t0.Add(time.Minute), state.ReasonConfigMissing, 0, `FailedMount: MountVolume.SetUp failed for volume "credentials" : secret "kafka-credentials" not found`},
		{"mounting, another pod's mount failing", mounting(), failedMount("other-pod"), t0.Add(time.Minute), "", 4 * time.Minute, ""},
		{"mounting for a minute, no failure: the start timeout", mounting(), failedMount("")[:1], t0.Add(time.Minute), "", 4 * time.Minute, ""},
		{"a mount failing at the start timeout is named", mounting(), failedMount("pod-uid"), t0.Add(5 * time.Minute), state.ReasonPodNotStarted, 0, `secret "kafka-credentials" not found`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, again := startVerdict("runner", t0, c.pods, c.events, startProgress(c.pods), c.now, opts)
			switch {
			case c.reason == "" && o != nil:
				t.Fatalf("stopped with %s: %s", o.Reason, o.Message)
			case c.reason == "" && again != c.again:
				t.Fatalf("looks again in %s, want %s", again, c.again)
			case c.reason != "" && (o == nil || o.Reason != c.reason || o.Succeeded || !o.FinishedAt.Equal(c.now)):
				t.Fatalf("outcome %+v, want %s", o, c.reason)
			case o != nil && !strings.Contains(o.Message, c.says):
				t.Fatalf("message %q does not say %q", o.Message, c.says)
			}
		})
	}
	// 0 turns early failures off: only the start timeout stops a runner.
	opts.StartFailAfter = 0
	if o, _ := startVerdict("runner", t0, waitingFor("ImagePullBackOff"), nil, startProgress(waitingFor("ImagePullBackOff")), t0.Add(4*time.Minute), opts); o != nil {
		t.Fatalf("failed early with StartFailAfter 0: %+v", o)
	}
}

// Issue 32, friction 4: while the runner waits for its group, status says
// for what, how long and what comes then, not only "runner pod is running".
func TestUnitRunningMessage(t *testing.T) {
	plain := testutil.MakeRequest("shop", "a").Obj()
	if got := runningMessage(plain, "a-1-xyz"); got != "runner pod a-1-xyz is running" {
		t.Errorf("a request that does not wait: %q", got)
	}
	waits := testutil.MakeRequest("shop", "b").Group("billing").Wait(5 * time.Minute).Obj()
	got := runningMessage(waits, "b-1-xyz")
	for _, want := range []string{"runner pod b-1-xyz is running", "group billing", "up to 5m0s (spec.waitTimeout)", "fails GroupActive", "client ID@host"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	waits.Status.Consumers = []v1alpha1.ConsumerStatus{{Kind: v1alpha1.ConsumerDeployment, Name: "billing-consumer", State: v1alpha1.ConsumerPaused}}
	if got := runningMessage(waits, "b-1-xyz"); !strings.Contains(got, "paused consumers") {
		t.Errorf("with paused consumers: %q", got)
	}
	// A dry run never waits (runnerjob.Build sets no wait for it).
	dry := testutil.MakeRequest("shop", "c").Wait(time.Minute).Obj()
	dry.Spec.DryRun = true
	if got := runningMessage(dry, "c-1"); strings.Contains(got, "waits") {
		t.Errorf("a dry run: %q", got)
	}
}
