package launcher_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// scriptedLogs serves each pod's log as the test sets it, standing for the
// kubelet's pods/log, which envtest lacks.
type scriptedLogs struct {
	mu     sync.Mutex
	logs   map[string]string
	served map[string]int // reads that returned each text
}

// servedCount is how many reads have returned text.
func (s *scriptedLogs) servedCount(text string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served[text]
}

func (s *scriptedLogs) set(pod, log string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.logs == nil {
		s.logs = map[string]string{}
	}
	s.logs[pod] = log
}

// gone makes a pod's log unreadable, as once the pod is deleted.
func (s *scriptedLogs) gone(pod string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.logs, pod)
}

func (s *scriptedLogs) Tail(_ context.Context, _, pod, _ string, _, _ int64) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.logs[pod]; ok {
		if s.served == nil {
			s.served = map[string]int{}
		}
		s.served[l]++
		return l, nil
	}
	return "", fmt.Errorf("pods %q not found", pod)
}

// jobTrackingFinalizer is the finalizer the Job controller puts on the pods
// it makes and removes once it has counted them: it keeps a deleted pod
// visible, as the kubelet's graceful stop does on a real node.
const jobTrackingFinalizer = "batch.kubernetes.io/job-tracking"

// startNodePod plays the Job controller and a kubelet: the Job's pod, on a
// node, Running.
func startNodePod(t testing.TB, job *batchv1.Job, name string) *corev1.Pod {
	t.Helper()
	pod := testutil.PodFor(job, name)
	pod.Spec.NodeName = "node-1"
	pod.Finalizers = []string{jobTrackingFinalizer}
	create(t, pod)
	pod.Status.Phase = corev1.PodRunning
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: state.ContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
	if err := k8s.Status().Update(context.Background(), pod); err != nil {
		t.Fatalf("pod status: %v", err)
	}
	return pod
}

// A Job that runs out of activeDeadlineSeconds has its pod deleted by the
// Job controller and is marked Failed only once the pod is gone, with its
// log. The launcher reads the tail when the pod starts terminating, so the
// request that ends DeadlineExceeded still says what the runner was doing.
func TestEnvtestDeadlineKeepsLogTail(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	logs := &scriptedLogs{}
	opts := testOptions()
	opts.Logs = logs
	opts.RunnerLogInterval = 0 // only the stop's read
	startLauncher(t, opts, 2)

	rr := testutil.MakeRequest(ns, "deadline").Obj()
	create(t, rr)
	job := waitJob(t, rr)
	pod := startNodePod(t, job, job.Name+"-0")
	const line = `level=INFO msg="waiting for the group to become empty" group=billing members="consumer-1 (/10.0.0.7)" left=4m2s`
	logs.set(pod.Name, "time=... level=INFO msg=\"planning\"\n"+line+"\n")

	// The Job controller at the deadline: FailureTarget, then the pod's
	// deletion with its grace period.
	eventually(t, 10*time.Second, "FailureTarget", func() error {
		var cur batchv1.Job
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(job), &cur); err != nil {
			return err
		}
		cur.Status.StartTime = &metav1.Time{Time: time.Now().Add(-time.Minute)}
		cur.Status.Active = 1
		cur.Status.Conditions = append(cur.Status.Conditions, batchv1.JobCondition{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonDeadlineExceeded, Message: "Job was active longer than specified deadline", LastTransitionTime: metav1.Now()})
		return k8s.Status().Update(context.Background(), &cur)
	})
	if err := k8s.Delete(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the log tail read while the pod stops", func() error {
		if got := getRR(t, rr).Status.LogTail; !strings.Contains(got, line) {
			return fmt.Errorf("logTail %q", got)
		}
		return nil
	})

	// The container goes, its log with it: the kubelet then answers a log
	// read with a line of its own, as the log's content (seen on the real
	// cluster, TestDeadlineExceededKeepsLogTail). Then the pod goes, and
	// the Job is Failed.
	const kubeletGone = "unable to retrieve container logs for containerd://4d50d312b53b\n"
	logs.set(pod.Name, kubeletGone)
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 6, Reason: "Error", FinishedAt: metav1.Now()}}
	if err := k8s.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "a read of the removed container's log", func() error {
		if logs.servedCount(kubeletGone) == 0 {
			return fmt.Errorf("not read yet")
		}
		return nil
	})
	logs.gone(pod.Name)
	removePod(t, pod)
	finishJob(t, job, batchv1.JobReasonDeadlineExceeded)
	got := waitPhase(t, rr, v1alpha1.PhaseFailed)
	if c := condition(got, v1alpha1.ConditionSucceeded); c == nil || c.Reason != state.ReasonDeadlineExceeded {
		t.Fatalf("Succeeded = %+v, want DeadlineExceeded", c)
	}
	if !strings.Contains(got.Status.LogTail, line) {
		t.Fatalf("logTail of the DeadlineExceeded request = %q, want the runner's last line %q", got.Status.LogTail, line)
	}
}

// While a runner runs longer than RunnerLogInterval, the Running condition
// says what it is doing: its log's last line, read again each interval.
func TestEnvtestRunningSaysWhatTheRunnerDoes(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	logs := &scriptedLogs{}
	opts := testOptions()
	opts.Logs = logs
	opts.RunnerLogInterval = time.Second
	startLauncher(t, opts, 2)

	rr := testutil.MakeRequest(ns, "progress").Obj()
	create(t, rr)
	job := waitJob(t, rr)
	pod := startNodePod(t, job, job.Name+"-0")
	retry := func(n int) string {
		return fmt.Sprintf(`level=WARN msg="kafka request failed, retrying" request=OffsetCommit attempt=%d error="Broker: Coordinator not available" backoff=800ms`, n)
	}
	says := func(want string) func() error {
		return func() error {
			cur := getRR(t, rr)
			c := condition(cur, v1alpha1.ConditionRunning)
			if c == nil || c.Reason != state.ReasonPodRunning || !strings.Contains(c.Message, want) || !strings.Contains(cur.Status.LogTail, want) {
				return fmt.Errorf("Running = %+v, logTail %q", c, cur.Status.LogTail)
			}
			return nil
		}
	}
	logs.set(pod.Name, "level=INFO msg=planning\n"+retry(1)+"\n")
	eventually(t, 60*time.Second, "Running names the first retry", says(retry(1)))
	logs.set(pod.Name, "level=INFO msg=planning\n"+retry(1)+"\n"+retry(2)+"\n")
	eventually(t, 60*time.Second, "Running names the next retry", says(retry(2)))

	// Its pod finishing ends the reads: the finish reads the log itself.
	var ended corev1.Pod
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pod), &ended); err != nil {
		t.Fatal(err)
	}
	testutil.Terminated(&ended, 0, testutil.Compact(testutil.Result("orders", 0, 1)), time.Now())
	if err := k8s.Status().Update(context.Background(), &ended); err != nil {
		t.Fatal(err)
	}
	finishJob(t, job, "")
	waitPhase(t, rr, v1alpha1.PhaseSucceeded)
}
