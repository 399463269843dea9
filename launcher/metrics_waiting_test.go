package launcher

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// waitingRequest builds a request with the given conditions (type, status, reason)
// and, when started, a Job name.
func waitingRequest(name string, started bool, conds ...[3]string) v1alpha1.ReplayRequest {
	rr := testutil.MakeRequest("shop", name).Obj()
	if started {
		rr.Status.JobName = name + "-job"
	}
	for _, c := range conds {
		SetCondition(rr, c[0], metav1.ConditionStatus(c[1]), c[2], "m")
	}
	return *rr
}

func TestUnitWaitingReason(t *testing.T) {
	acc, run, done := v1alpha1.ConditionAccepted, v1alpha1.ConditionRunning, v1alpha1.ConditionSucceeded
	for _, tc := range []struct {
		name string
		rr   v1alpha1.ReplayRequest
		want string
	}{
		{"new", waitingRequest("a", false), ""},
		{"accepted", waitingRequest("a", false, [3]string{acc, "True", ReasonAccepted}), ""},
		{"waiting for group", waitingRequest("a", false, [3]string{acc, "True", ReasonWaitingForGroup}), ReasonWaitingForGroup},
		{"earlier run", waitingRequest("a", false, [3]string{acc, "True", ReasonEarlierRunInProgress}), ReasonEarlierRunInProgress},
		{"job refused", waitingRequest("a", false, [3]string{acc, "True", ReasonWaitingForGroup}, [3]string{run, "False", ReasonJobCreateFailed}), ReasonJobCreateFailed},
		{"pod waits", waitingRequest("a", true, [3]string{acc, "True", ReasonAccepted}, [3]string{run, "True", ReasonPodWaiting}), ReasonPodWaiting},
		{"pod runs", waitingRequest("a", true, [3]string{acc, "True", ReasonAccepted}, [3]string{run, "True", ReasonPodRunning}), ""},
		// A started request whose Accepted condition was never rewritten
		// (a crash between create and status) is running, not waiting.
		{"started, stale accepted", waitingRequest("a", true, [3]string{acc, "True", ReasonWaitingForGroup}), ""},
		{"finished", waitingRequest("a", true, [3]string{run, "True", ReasonPodWaiting}, [3]string{done, "False", ReasonPodNotStarted}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := WaitingReason(&tc.rr); got != tc.want {
				t.Errorf("WaitingReason = %q, want %q", got, tc.want)
			}
		})
	}
	deleting := waitingRequest("a", false, [3]string{acc, "True", ReasonWaitingForGroup})
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	if got := WaitingReason(&deleting); got != "" {
		t.Errorf("a request being deleted waits for %q", got)
	}
}

func runbookJob(name string, suspended bool) batchv1.Job {
	return batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: name, Labels: map[string]string{
			v1alpha1.LabelRunner: v1alpha1.LabelRunnerValue, v1alpha1.LabelRunbook: "rewind",
		}},
		Spec: batchv1.JobSpec{Suspend: ptr.To(suspended)},
	}
}

func TestUnitRequestsWaitingGauge(t *testing.T) {
	acc := v1alpha1.ConditionAccepted
	rrs := []v1alpha1.ReplayRequest{
		waitingRequest("a", false, [3]string{acc, "True", ReasonWaitingForGroup}),
		waitingRequest("b", false, [3]string{acc, "True", ReasonWaitingForGroup}),
		waitingRequest("c", true, [3]string{acc, "True", ReasonAccepted}, [3]string{v1alpha1.ConditionRunning, "True", ReasonPodWaiting}),
		waitingRequest("d", true, [3]string{acc, "True", ReasonAccepted}),
	}
	jobs := []batchv1.Job{runbookJob("waits", true), runbookJob("runs", false)}
	got := CountWaiting(rrs, jobs)
	want := map[string]int{ReasonWaitingForGroup: 3, ReasonEarlierRunInProgress: 0, ReasonJobCreateFailed: 0, ReasonPodWaiting: 1}
	if len(got) != len(want) {
		t.Fatalf("CountWaiting = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("CountWaiting = %v, want %v", got, want)
		}
	}

}
