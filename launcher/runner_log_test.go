package launcher

import (
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestUnitLogReadDue(t *testing.T) {
	const interval = 30 * time.Second
	started := t0
	running := func(name string, created time.Time) corev1.Pod {
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(created)},
			Spec:       corev1.PodSpec{NodeName: "node-1"},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
				Name: state.ContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}},
			}}},
		}
	}
	deleting := func(p corev1.Pod) corev1.Pod {
		p.DeletionTimestamp = &metav1.Time{Time: t0.Add(5 * time.Minute)}
		return p
	}
	ended := func(p corev1.Pod) corev1.Pod {
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 6, FinishedAt: metav1.NewTime(t0.Add(time.Minute))}}
		return p
	}
	unscheduled := running("p", t0)
	unscheduled.Spec.NodeName = ""
	job := &batchv1.Job{}
	failing := &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonDeadlineExceeded}}}}
	never := func(types.UID) time.Time { return time.Time{} }
	readAt := func(at time.Time) func(types.UID) time.Time { return func(types.UID) time.Time { return at } }

	for _, tc := range []struct {
		name      string
		job       *batchv1.Job
		pods      []corev1.Pod
		last      func(types.UID) time.Time
		now       time.Time
		wantPod   string
		wantNow   bool
		wantAfter time.Duration
		wantEnded bool
	}{
		{name: "no pod", job: job, last: never, now: t0},
		{name: "not on a node: no kubelet to ask", job: job, pods: []corev1.Pod{unscheduled}, last: never, now: t0.Add(time.Hour)},
		{name: "just started: first read after the interval", job: job, pods: []corev1.Pod{running("p", t0)}, last: never, now: t0.Add(10 * time.Second), wantPod: "p", wantAfter: 20 * time.Second},
		{name: "running past the interval", job: job, pods: []corev1.Pod{running("p", t0)}, last: never, now: t0.Add(interval), wantPod: "p", wantNow: true, wantAfter: interval},
		{name: "read recently", job: job, pods: []corev1.Pod{running("p", t0)}, last: readAt(t0.Add(40 * time.Second)), now: t0.Add(50 * time.Second), wantPod: "p", wantAfter: 20 * time.Second},
		{name: "read an interval ago", job: job, pods: []corev1.Pod{running("p", t0)}, last: readAt(t0.Add(40 * time.Second)), now: t0.Add(70 * time.Second), wantPod: "p", wantNow: true, wantAfter: interval},
		{name: "deadline: the Job is about to stop it", job: failing, pods: []corev1.Pod{running("p", t0)}, last: readAt(t0.Add(9 * time.Second)), now: t0.Add(10 * time.Second), wantPod: "p", wantNow: true},
		{name: "pod terminating", job: job, pods: []corev1.Pod{deleting(running("p", t0))}, last: readAt(t0.Add(9 * time.Second)), now: t0.Add(10 * time.Second), wantPod: "p", wantNow: true},
		{name: "stopped container in a pod still there", job: failing, pods: []corev1.Pod{deleting(ended(running("p", t0)))}, last: readAt(t0.Add(9 * time.Second)), now: t0.Add(70 * time.Second), wantPod: "p", wantNow: true, wantEnded: true},
		{name: "a finished container not being deleted: the finish reads it", job: job, pods: []corev1.Pod{ended(running("p", t0))}, last: never, now: t0.Add(time.Hour)},
		{name: "the newest running pod", job: job, pods: []corev1.Pod{ended(running("old", t0)), running("new", t0.Add(time.Second))}, last: never, now: t0.Add(time.Hour), wantPod: "new", wantNow: true, wantAfter: interval},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := logReadDue(tc.job, tc.pods, tc.last, tc.now, interval)
			if got.Pod != tc.wantPod || got.Now != tc.wantNow || got.After != tc.wantAfter || got.Ended != tc.wantEnded {
				t.Fatalf("LogReadDue = %+v, want pod %q now %v after %s ended %v", got, tc.wantPod, tc.wantNow, tc.wantAfter, tc.wantEnded)
			}
		})
	}
	// Interval 0: only a stop is read.
	if got := logReadDue(job, []corev1.Pod{running("p", t0)}, never, t0.Add(time.Hour), 0); got.Now || got.After != 0 {
		t.Fatalf("interval 0 read a running pod: %+v", got)
	}
	if got := logReadDue(failing, []corev1.Pod{running("p", t0)}, never, t0.Add(time.Hour), 0); !got.Now {
		t.Fatalf("interval 0 did not read a stopping pod: %+v", got)
	}
}

func TestUnitLaterTail(t *testing.T) {
	const kept = "level=INFO msg=starting\nlevel=INFO msg=\"group described\"\n"
	for _, tc := range []struct {
		name, kept, read string
		ended, want      bool
	}{
		{"first read", "", "level=INFO msg=starting\n", false, true},
		{"empty read", kept, "", false, false},
		{"running: any read", kept, "level=WARN msg=retrying attempt=9\n", false, true},
		{"ended: the log grew", kept, kept + "level=INFO msg=interrupted\n", true, true},
		{"ended: the kubelet lost the container", kept, "unable to retrieve container logs for containerd://4d50d312\n", true, false},
		{"ended: the log file is gone", kept, "failed to try resolving symlinks in path \"/var/log/pods/x/runner/0.log\": no such file or directory\n", true, false},
		{"ended, nothing kept yet", "", "level=INFO msg=interrupted\n", true, true},
		// The cache may show the container running after the kubelet lost it.
		{"running as far as the cache knows: the kubelet lost the container", kept, "unable to retrieve container logs for containerd://4d50d312\n", false, false},
		{"running as far as the cache knows: the log file is gone", kept, "failed to try resolving symlinks in path \"/var/log/pods/x/runner/0.log\": no such file or directory\n", false, false},
		{"nothing kept yet: the kubelet's line is no log either", "", "unable to retrieve container logs for containerd://4d50d312\n", true, false},
		{"a runner line that quotes the kubelet is a log", kept, "level=WARN msg=\"unable to retrieve container logs for x\"\n", false, true},
		{"a longer log that holds such a line is a log", kept, kept + "unable to retrieve container logs for x\n", true, true},
	} {
		if got := laterTail(tc.kept, tc.read, tc.ended); got != tc.want {
			t.Errorf("%s: laterTail = %v, want %v", tc.name, got, tc.want)
		}
	}
}
