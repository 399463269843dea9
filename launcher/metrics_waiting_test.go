package launcher

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
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
		state.SetCondition(rr, c[0], metav1.ConditionStatus(c[1]), c[2], "m")
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
		{"accepted", waitingRequest("a", false, [3]string{acc, "True", state.ReasonAccepted}), ""},
		{"waiting for group", waitingRequest("a", false, [3]string{acc, "True", state.ReasonWaitingForGroup}), state.ReasonWaitingForGroup},
		{"earlier run", waitingRequest("a", false, [3]string{acc, "True", state.ReasonEarlierRunInProgress}), state.ReasonEarlierRunInProgress},
		{"waiting for its Strimzi cluster", waitingRequest("a", false, [3]string{acc, "Unknown", state.ReasonWaitingForCluster}), state.ReasonWaitingForCluster},
		{"waiting for its KafkaConnector", waitingRequest("a", false, [3]string{acc, "Unknown", state.ReasonWaitingForConnector}), state.ReasonWaitingForConnector},
		{"job refused", waitingRequest("a", false, [3]string{acc, "True", state.ReasonWaitingForGroup}, [3]string{run, "False", state.ReasonJobCreateFailed}), state.ReasonJobCreateFailed},
		{"pod waits", waitingRequest("a", true, [3]string{acc, "True", state.ReasonAccepted}, [3]string{run, "True", state.ReasonPodWaiting}), state.ReasonPodWaiting},
		{"pod runs", waitingRequest("a", true, [3]string{acc, "True", state.ReasonAccepted}, [3]string{run, "True", state.ReasonPodRunning}), ""},
		// A started request whose Accepted condition was never rewritten
		// (a crash between create and status) is running, not waiting.
		{"started, stale accepted", waitingRequest("a", true, [3]string{acc, "True", state.ReasonWaitingForGroup}), ""},
		{"finished", waitingRequest("a", true, [3]string{run, "True", state.ReasonPodWaiting}, [3]string{done, "False", state.ReasonPodNotStarted}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := waitingReason(&tc.rr); got != tc.want {
				t.Errorf("WaitingReason = %q, want %q", got, tc.want)
			}
		})
	}
	deleting := waitingRequest("a", false, [3]string{acc, "True", state.ReasonWaitingForGroup})
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	if got := waitingReason(&deleting); got != "" {
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
		waitingRequest("a", false, [3]string{acc, "True", state.ReasonWaitingForGroup}),
		waitingRequest("b", false, [3]string{acc, "True", state.ReasonWaitingForGroup}),
		waitingRequest("c", true, [3]string{acc, "True", state.ReasonAccepted}, [3]string{v1alpha1.ConditionRunning, "True", state.ReasonPodWaiting}),
		waitingRequest("d", true, [3]string{acc, "True", state.ReasonAccepted}),
		waitingRequest("e", false, [3]string{acc, "Unknown", state.ReasonWaitingForCluster}),
		waitingRequest("f", false, [3]string{acc, "Unknown", state.ReasonWaitingForConnector}),
	}
	jobs := []batchv1.Job{runbookJob("waits", true), runbookJob("runs", false)}
	got := countWaiting(rrs, jobs)
	want := map[string]int{state.ReasonWaitingForGroup: 3, state.ReasonEarlierRunInProgress: 0, state.ReasonJobCreateFailed: 0, state.ReasonPodWaiting: 1, state.ReasonWaitingForCluster: 1, state.ReasonWaitingForConnector: 1}
	if len(got) != len(want) {
		t.Fatalf("CountWaiting = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("CountWaiting = %v, want %v", got, want)
		}
	}

}
