package launcher

import (
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/grouplock"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

func TestUnitPodSpecQueueKeyMatchesTheRequests(t *testing.T) {
	rr := testutil.MakeRequest("ns", "a").Bootstrap("B:9092, a:9092").Resolved("earliest").Obj()
	job, err := BuildJob(rr, runnerjob.StageApply, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if got := grouplock.PodSpecQueueKey(&job.Spec.Template.Spec); got != grouplock.QueueKey(rr) {
		t.Fatalf("the Job's key %q is not the request's %q", got, grouplock.QueueKey(rr))
	}
	job.Spec.Template.Spec.Containers[0].Name = "sidecar"
	if got := grouplock.PodSpecQueueKey(&job.Spec.Template.Spec); got != "" {
		t.Fatalf("a pod without a runner container has key %q", got)
	}
}

func TestUnitHoldersFromTheCluster(t *testing.T) {
	rr := testutil.MakeRequest("ns", "a").UID("rr-uid").Resolved("earliest").Created(t0).Obj()
	base, err := BuildJob(rr, runnerjob.StageApply, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	base.UID = "job-uid"
	pod := func(phase corev1.PodPhase, deleting bool) corev1.Pod {
		p := testutil.PodFor(base, "pod")
		p.Status.Phase = phase
		if deleting {
			p.DeletionTimestamp = &metav1.Time{Time: t0}
		}
		return *p
	}
	running := *base.DeepCopy()
	finished := *base.DeepCopy()
	testutil.Complete(&finished, t0)
	deleting := *base.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	suspended := *base.DeepCopy()
	suspended.Spec.Suspend = ptr.To(true)
	started := rr.DeepCopy()
	started.Status.JobName = base.Name

	cases := []struct {
		name string
		rrs  []v1alpha1.ReplayRequest
		jobs []batchv1.Job
		pods []corev1.Pod
		want []string
		// holds is how each holder holds the group (Entry.Holds).
		holds string
	}{
		{"nothing", nil, nil, nil, nil, ""},
		{"a running Job", nil, []batchv1.Job{running}, nil, []string{"Job/" + base.Name}, grouplock.HoldRuns},
		{"a finished Job with no live pod", nil, []batchv1.Job{finished}, []corev1.Pod{pod(corev1.PodSucceeded, false)}, nil, ""},
		{"a finished Job whose pod still terminates", nil, []batchv1.Job{finished}, []corev1.Pod{pod(corev1.PodRunning, true)}, []string{"Job/" + base.Name}, grouplock.HoldPodStopping},
		{"a deleted Job's terminating pod", nil, []batchv1.Job{deleting}, []corev1.Pod{pod(corev1.PodRunning, true)}, []string{"Job/" + base.Name}, grouplock.HoldPodStopping},
		{"a deleted Job with its pods gone", nil, []batchv1.Job{deleting}, nil, nil, ""},
		{"an orphaned pod, Job gone", nil, nil, []corev1.Pod{pod(corev1.PodRunning, false)}, []string{"Pod/pod"}, grouplock.HoldRuns},
		{"an orphaned pod stopping", nil, nil, []corev1.Pod{pod(corev1.PodRunning, true)}, []string{"Pod/pod"}, grouplock.HoldPodStopping},
		{"a suspended Job whose pod is being removed", nil, []batchv1.Job{suspended}, []corev1.Pod{pod(corev1.PodPending, true)}, []string{"Job/" + base.Name}, grouplock.HoldPodStopping},
		{"a suspended Job, no pod", nil, []batchv1.Job{suspended}, nil, nil, ""},
		{"a started request whose Job the cache lacks", []v1alpha1.ReplayRequest{*started}, nil, nil, []string{"ReplayRequest/a"}, grouplock.HoldJobNotShown},
		{"a started request and its Job: one holder", []v1alpha1.ReplayRequest{*started}, []batchv1.Job{running}, nil, []string{"Job/" + base.Name}, grouplock.HoldRuns},
		{"a request not started", []v1alpha1.ReplayRequest{*rr}, nil, nil, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, h := range grouplock.Holders(c.rrs, c.jobs, c.pods) {
				got = append(got, string(h.Kind)+"/"+h.Name)
				if h.Holds != c.holds {
					t.Fatalf("%s/%s holds the group as %q, want %q", h.Kind, h.Name, h.Holds, c.holds)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("holders %v, want %v", got, c.want)
			}
		})
	}
}

// A request holding consumers holds its group from its record to its
// restore, whatever else it shows, and waits for nothing meanwhile.
func TestUnitHoldersCountConsumersHeld(t *testing.T) {
	ref := v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerDeployment, Name: "c"}
	recorded := testutil.MakeRequest("ns", "recorded").Resolved("earliest").Consumers(ref).Obj()
	recorded.Status.Consumers = []v1alpha1.ConsumerStatus{{Kind: ref.Kind, Name: ref.Name, State: v1alpha1.ConsumerRecorded}}
	finished := recorded.DeepCopy()
	finished.Name = "finished"
	finished.Status.Consumers[0].State = v1alpha1.ConsumerPaused
	finished.Status.JobName = "finished-1"
	FinishRequest(finished, record.Outcome{Reason: "KafkaError"}, "", t0)
	restored := finished.DeepCopy()
	restored.Name = "restored"
	restored.Status.Consumers[0].State = v1alpha1.ConsumerRestored

	holders := grouplock.Holders([]v1alpha1.ReplayRequest{*recorded, *finished, *restored}, nil, nil)
	var names []string
	for _, h := range holders {
		names = append(names, h.Name)
	}
	if strings.Join(names, ",") != "recorded,finished" {
		t.Fatalf("holders %v, want recorded,finished", names)
	}
	if w := grouplock.Waiting([]v1alpha1.ReplayRequest{*recorded}, nil); len(w) != 0 {
		t.Fatalf("a request with recorded consumers waits: %+v", w)
	}
}
