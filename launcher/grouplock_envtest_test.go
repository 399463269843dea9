package launcher_test

// Issue 27: the group lock is released by what the cluster shows, whatever
// happens to the request that took it; restores wait for the runner.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/runner/report"

	"github.com/kafka-replay/kafka-replay/launcher"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/grouplock"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// waitingPod plays the Job controller and a kubelet that cannot pull the
// runner's image: the Job's pod, Pending in ImagePullBackOff.
func waitingPod(t testing.TB, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	create(t, pod)
	pod.Status.Phase = corev1.PodPending
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: state.ContainerName, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "kafka-replay/runner:no-such-tag"`}}}}
	if err := k8s.Status().Update(context.Background(), pod); err != nil {
		t.Fatalf("pod status: %v", err)
	}
	return pod
}

// Case 1: a request whose runner never starts ends PodNotStarted (its Job
// suspended, its pod removed), and a request for the same group from another
// namespace, created after that, starts: the first start's hold ended when
// the cache showed its Job, not when another start of the group happened to
// count it. While the stopped runner's pod is still going, the waiting
// request is told so, not that a replay "is in progress".
func TestEnvtestNeverStartedRunnerReleasesTheGroup(t *testing.T) {
	env(t)
	nsX, nsY := newNamespace(t, nil), newNamespace(t, nil)
	clk := clocktesting.NewFakeClock(time.Now())
	opts := testOptions()
	opts.StartTimeout = time.Minute
	opts.Clock = clk
	startLauncher(t, opts, 2)
	shared := "kafka.lock-" + nsX + ".svc:9092"

	x := testutil.MakeRequest(nsX, "bad-tag").Bootstrap(shared).Obj()
	create(t, x)
	job := waitJob(t, x)
	pod := testutil.PodFor(job, job.Name+"-0")
	pod.Spec.NodeName = "node-1"
	pod.Finalizers = []string{jobTrackingFinalizer} // stays visible while it goes
	waitingPod(t, pod)

	// The start timeout passes (the fake clock), and the request is
	// reconciled: PodNotStarted, Job suspended.
	clk.Step(2 * time.Minute)
	touch(t, x)
	cur := waitPhase(t, x, v1alpha1.PhaseFailed)
	if sc := condition(cur, v1alpha1.ConditionSucceeded); sc.Reason != state.ReasonPodNotStarted {
		t.Fatalf("Succeeded = %+v", sc)
	}
	// The Job controller removes the suspended Job's pod, with its grace
	// period: the pod holds the group until it is gone, and the waiting
	// request says so.
	if err := k8s.Delete(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	y := testutil.MakeRequest(nsY, "after").Bootstrap(shared).Obj()
	create(t, y)
	eventually(t, 20*time.Second, "the waiting request says what holds the group", func() error {
		c := condition(getRR(t, y), v1alpha1.ConditionAccepted)
		if c == nil || c.Reason != state.ReasonWaitingForGroup || !strings.Contains(c.Message, grouplock.HoldPodStopping) {
			return fmt.Errorf("Accepted = %+v", c)
		}
		if strings.Contains(c.Message, nsX) || strings.Contains(c.Message, "bad-tag") {
			t.Fatalf("another tenant's request leaks: %q", c.Message)
		}
		return nil
	})
	if getRR(t, y).Status.JobName != "" {
		t.Fatal("started while the stopped runner's pod was still there")
	}

	// The pod goes: the group is free, without a launcher restart.
	removePod(t, pod)
	waitJob(t, y)
}

// removePod plays the Job controller and the kubelet once a deleted pod's
// containers have stopped: the tracking finalizer goes, then the pod (the
// kubelet's confirmation, a deletion with no grace period).
func removePod(t testing.TB, pod *corev1.Pod) {
	t.Helper()
	eventually(t, 10*time.Second, "pod "+pod.Name+" gone", func() error {
		var p corev1.Pod
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pod), &p); err != nil {
			return client.IgnoreNotFound(err)
		}
		if len(p.Finalizers) > 0 {
			p.Finalizers = nil
			if err := k8s.Update(context.Background(), &p); err != nil {
				return err
			}
		}
		if err := k8s.Delete(context.Background(), &p, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
			return err
		}
		return fmt.Errorf("still there")
	})
}

// Case 2: requests that spell the running replay's servers another way (a
// protocol prefix, case, order, duplicates), from other
// namespaces, wait for it: one cluster, one group, one lock.
func TestEnvtestServerSpellingsShareTheLock(t *testing.T) {
	env(t)
	nsA, nsB := newNamespace(t, nil), newNamespace(t, nil)
	startLauncher(t, testOptions(), 4)
	b0, b1 := "broker-0."+nsA+":9092", "broker-1."+nsA+":9092"

	first := testutil.MakeRequest(nsA, "first").Bootstrap(b0 + "," + b1).Obj()
	create(t, first)
	waitJob(t, first)
	spellings := map[string]string{
		"plaintext":  "PLAINTEXT://" + b0 + ",PLAINTEXT://" + b1,
		"ssl":        "SSL://" + b1 + ",SSL://" + b0,
		"upper":      strings.ToUpper(b0) + "," + strings.ToUpper(b1),
		"dupes":      b1 + ", " + b0 + "," + b1,
		"mixed-case": "Sasl_Ssl://" + b0 + "," + b1,
	}
	var others []*v1alpha1.ReplayRequest
	for name, servers := range spellings {
		rr := testutil.MakeRequest(nsB, name).Bootstrap(servers).Obj()
		create(t, rr)
		others = append(others, rr)
	}
	for _, rr := range others {
		expectWaiting(t, rr)
	}
	// Another port is another server: it does not wait.
	other := testutil.MakeRequest(nsB, "other-port").Bootstrap(strings.TrimSuffix(b0, ":9092") + ":9093").Obj()
	create(t, other)
	waitJob(t, other)
	for _, rr := range others {
		if cur := getRR(t, rr); cur.Status.JobName != "" {
			t.Fatalf("%s (%s) started while %s ran", rr.Name, rr.Spec.Kafka.BootstrapServers, first.Name)
		}
	}
}

// Cases 3 and 4: a request paused a Deployment (2 → 0), its runner runs, and
// its Job is deleted (a tenant, a TTL controller, a cleanup script) while
// the pod stops during its grace period. The request does not end, and the
// Deployment stays at 0, while the pod is alive; the runner commits in its
// grace period, and the request's outcome is what its pod reported. When the
// pod leaves no result, the request ends JobDeleted saying that offsets may
// have changed and how to find out. Either way the consumers come back after
// the runner, not under it.
func TestEnvtestDeletedJobWaitsForItsRunner(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	ctx := context.Background()
	startLauncher(t, testOptions(), 4)

	cases := []struct {
		name string
		// committed: the runner ends in its grace period with its result
		// in its termination message, else with none.
		committed bool
	}{
		{"committed in its grace period", true},
		{"gone without a word", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			name := "c" + fmt.Sprint(c.committed)
			d := makeDeployment(t, ns, name, 2, nil)
			rr := consumerRequest(ns, name, "g-"+name, deploymentRef(name))
			create(t, rr)
			_, job := waitPaused(t, rr)
			waitReplicas(t, d, 0)
			pod := startNodePod(t, job, job.Name+"-0")

			// The Job goes at once (background propagation); the garbage
			// collector deletes its pod, which stops in its grace period.
			if err := k8s.Delete(ctx, job, client.PropagationPolicy("Background")); err != nil {
				t.Fatal(err)
			}
			if err := k8s.Delete(ctx, pod); err != nil {
				t.Fatal(err)
			}
			eventually(t, 20*time.Second, "the request waits for its runner pod", func() error {
				cur := getRR(t, rr)
				if state.IsFinished(cur) {
					t.Fatalf("ended while its runner pod is alive: %+v", cur.Status)
				}
				rc := condition(cur, v1alpha1.ConditionRunning)
				if rc == nil || rc.Reason != state.ReasonJobDeleted || !strings.Contains(rc.Message, pod.Name) || !strings.Contains(rc.Message, "consumers stay paused") {
					return fmt.Errorf("Running = %+v", rc)
				}
				return nil
			})
			if n := replicasOf(t, d); n != 0 {
				t.Fatalf("consumers restored to %d while the runner pod is alive", n)
			}

			if !c.committed {
				removePod(t, pod)
				cur := waitPhase(t, rr, v1alpha1.PhaseFailed)
				sc := condition(cur, v1alpha1.ConditionSucceeded)
				for _, want := range []string{"deleted before it finished", "offsets may have changed", "kubectl replay describe " + rr.Name, runnerjob.RunID(rr)} {
					if sc.Reason != state.ReasonJobDeleted || !strings.Contains(sc.Message, want) {
						t.Fatalf("Succeeded = %+v, want JobDeleted saying %q", sc, want)
					}
				}
				waitRestored(t, rr, state.ReasonRestored)
				waitReplicas(t, d, 2)
				return
			}
			// The runner commits in its grace period and exits 0 with its
			// result; the pod is still there (Succeeded) when the launcher
			// reads it.
			var p corev1.Pod
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), &p); err != nil {
				t.Fatal(err)
			}
			testutil.Terminated(&p, 0, testutil.Compact(testutil.Result("g-"+name, report.ExitOK, 3)), time.Now())
			if err := k8s.Status().Update(ctx, &p); err != nil {
				t.Fatal(err)
			}
			cur := waitPhase(t, rr, v1alpha1.PhaseSucceeded)
			sc := condition(cur, v1alpha1.ConditionSucceeded)
			if !strings.Contains(sc.Message, "deleted before it finished") || !strings.Contains(sc.Message, pod.Name) {
				t.Fatalf("Succeeded = %+v: does not say it was read from the pod of a deleted Job", sc)
			}
			if cur.Status.Result == nil || cur.Status.Result.ExitCode != 0 || len(cur.Status.Result.Partitions) == 0 {
				t.Fatalf("result %+v: the pod's result was not collected", cur.Status.Result)
			}
			waitRestored(t, rr, state.ReasonRestored)
			waitReplicas(t, d, 2)
			removePod(t, pod)
		})
	}
}

// Case 3, whatever ended the request: a Job that ran out of its deadline is
// Failed while its pod still stops (a Job controller that marks it before
// the pod is gone). No outcome is written while the pod lives (it may still
// commit: Running says WaitingForRunner, naming it) and the consumers stay
// paused; once it has ended, the request ends DeadlineExceeded and its
// consumers come back.
func TestEnvtestConsumersNotRestoredUnderALiveRunner(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	ctx := context.Background()
	startLauncher(t, testOptions(), 2)

	d := makeDeployment(t, ns, "consumer", 2, nil)
	rr := consumerRequest(ns, "deadline", "g-deadline", deploymentRef("consumer"))
	create(t, rr)
	_, job := waitPaused(t, rr)
	pod := startNodePod(t, job, job.Name+"-0")
	if err := k8s.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	finishJob(t, job, batchv1.JobReasonDeadlineExceeded)
	var cur *v1alpha1.ReplayRequest
	eventually(t, 20*time.Second, "the outcome waits for the runner", func() error {
		cur = getRR(t, rr)
		if c := condition(cur, v1alpha1.ConditionRunning); c == nil || c.Reason != state.ReasonWaitingForRunner || !strings.Contains(c.Message, pod.Name) {
			return fmt.Errorf("Running = %+v", c)
		}
		return nil
	})
	if cur.Status.Phase != v1alpha1.PhaseRunning || condition(cur, v1alpha1.ConditionSucceeded) != nil {
		t.Fatalf("phase %s, Succeeded %+v while the runner pod is alive", cur.Status.Phase, condition(cur, v1alpha1.ConditionSucceeded))
	}
	if n := replicasOf(t, d); n != 0 {
		t.Fatalf("consumers restored to %d while the runner pod is alive", n)
	}
	removePod(t, pod)
	cur = waitPhase(t, rr, v1alpha1.PhaseFailed)
	if c := condition(cur, v1alpha1.ConditionSucceeded); c == nil || c.Reason != state.ReasonDeadlineExceeded {
		t.Fatalf("Succeeded = %+v, want DeadlineExceeded", c)
	}
	waitRestored(t, rr, state.ReasonRestored)
	waitReplicas(t, d, 2)
}

// Issue 32, friction 1: a runner pod whose Secret volume cannot be mounted
// says only ContainerCreating; the kubelet's FailedMount event says why. The
// request fails ConfigMissing after StartFailAfter, naming the Secret, and
// the group goes to another namespace's request once the stopped pod is
// gone, well before the start timeout.
func TestEnvtestMissingSecretVolumeFailsEarly(t *testing.T) {
	env(t)
	nsX, nsY := newNamespace(t, nil), newNamespace(t, nil)
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Now())
	opts := testOptions()
	opts.StartTimeout = time.Hour
	opts.StartFailAfter = time.Minute
	opts.Clock = clk
	startLauncher(t, opts, 2)
	shared := "kafka.mount-" + nsX + ".svc:9092"

	x := testutil.MakeRequest(nsX, "no-secret").Bootstrap(shared).Secret("kafka-credentials").Obj()
	create(t, x)
	job := waitJob(t, x)
	pod := testutil.PodFor(job, job.Name+"-0")
	pod.Spec.NodeName = "node-1"
	create(t, pod)
	pod.Status.Phase = corev1.PodPending
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: state.ContainerName, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	// The kubelet's event, and another pod's that must not count.
	mountEvent := func(name string, uid types.UID, msg string) {
		create(t, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: nsX, Name: name},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: nsX, Name: pod.Name, UID: uid, APIVersion: "v1"},
			Reason:         launcher.ReasonFailedMount, Type: corev1.EventTypeWarning, Message: msg,
			Source:         corev1.EventSource{Component: "kubelet", Host: "node-1"},
			FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1,
		})
	}
	mountEvent(pod.Name+".mount", pod.UID, `MountVolume.SetUp failed for volume "credentials" : secret "kafka-credentials" not found`)
	mountEvent(pod.Name+".other", "another-pods-uid", `MountVolume.SetUp failed for volume "x" : secret "unrelated" not found`)

	// Before StartFailAfter it waits, and says for what, in a Normal event
	// (friction 6: ContainerCreating is how every pod starts).
	touch(t, x)
	eventually(t, 20*time.Second, "the request says its pod is being created", func() error {
		if c := condition(getRR(t, x), v1alpha1.ConditionRunning); c == nil || c.Reason != state.ReasonPodWaiting || !strings.Contains(c.Message, "ContainerCreating") {
			return fmt.Errorf("Running = %+v", c)
		}
		for _, e := range eventsFor(t, nsX, x.Name) {
			if e.Reason == state.ReasonPodWaiting {
				if e.Type != corev1.EventTypeNormal {
					t.Fatalf("a pod being created raised a %s event: %s", e.Type, e.Note)
				}
				return nil
			}
		}
		return fmt.Errorf("no %s event", state.ReasonPodWaiting)
	})
	// After it, without waiting for the start timeout: ConfigMissing,
	// naming the Secret, and the Job stopped.
	clk.Step(2 * time.Minute)
	touch(t, x)
	cur := waitPhase(t, x, v1alpha1.PhaseFailed)
	sc := condition(cur, v1alpha1.ConditionSucceeded)
	if sc.Reason != state.ReasonConfigMissing || !strings.Contains(sc.Message, `secret "kafka-credentials" not found`) || strings.Contains(sc.Message, "unrelated") {
		t.Fatalf("Succeeded = %+v", sc)
	}
	eventually(t, 10*time.Second, "Job stopped", func() error {
		var j batchv1.Job
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), &j); err != nil {
			return err
		}
		if j.Spec.Suspend == nil || !*j.Spec.Suspend {
			return fmt.Errorf("suspend %v", j.Spec.Suspend)
		}
		return nil
	})
	// The group goes to the next request once the pod is gone.
	y := testutil.MakeRequest(nsY, "after").Bootstrap(shared).Obj()
	create(t, y)
	removePod(t, pod)
	waitJob(t, y)
}
