package launcher_test

import (
	"strings"
	"testing"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// Who asked is shown in status, on the Job, in the Accepted event and in
// the launcher's log, as the admission policies stamped it; a request
// nothing stamped is "unknown".
func TestEnvtestRequesterShown(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	l := startLauncher(t, testOptions(), 2)

	stamped := testutil.MakeRequest(ns, "stamped").Group("stamped").Obj()
	stamped.Annotations = map[string]string{v1alpha1.AnnotationRequestedBy: "alice@example.com", v1alpha1.AnnotationRequestedByGroups: "team-orders"}
	plain := testutil.MakeRequest(ns, "plain").Group("plain").Obj()
	for _, rr := range []*v1alpha1.ReplayRequest{stamped, plain} {
		create(t, rr)
	}
	for rr, want := range map[*v1alpha1.ReplayRequest]string{stamped: "alice@example.com", plain: v1alpha1.RequesterUnknown} {
		job := waitJob(t, rr)
		if got := job.Annotations[v1alpha1.AnnotationRequestedBy]; got != want {
			t.Errorf("%s: Job says requested by %q, want %q", rr.Name, got, want)
		}
		if got := getRR(t, rr).Status.RequestedBy; got != want {
			t.Errorf("%s: status.requestedBy = %q, want %q", rr.Name, got, want)
		}
		waitEvent(t, ns, rr.Name, "Accepted")
		found := false
		for _, e := range eventsFor(t, ns, rr.Name) {
			found = found || (e.Reason == "Accepted" && strings.Contains(e.Note, "requested by "+want))
		}
		if !found {
			t.Errorf("%s: no Accepted event naming %s: %+v", rr.Name, want, eventsFor(t, ns, rr.Name))
		}
	}
	// The pass logs its acceptance before it sends the Accepted event.
	if !strings.Contains(l.logs.String(), `"requestedBy":"alice@example.com"`) {
		t.Errorf("the launcher's log does not name the requester:\n%s", l.logs.String())
	}
}

// With WatchNamespaces the launcher neither sees nor acts on requests
// elsewhere: its cache holds only those namespaces.
func TestEnvtestWatchNamespaces(t *testing.T) {
	env(t)
	watched, other := newNamespace(t, nil), newNamespace(t, nil)
	opts := testOptions()
	opts.WatchNamespaces = []string{watched}
	startLauncher(t, opts, 2)

	elsewhere := testutil.MakeRequest(other, "elsewhere").Group("elsewhere").Obj()
	create(t, elsewhere)
	here := testutil.MakeRequest(watched, "here").Group("here").Obj()
	create(t, here)
	// The request created after it is handled: the other one would have
	// been by now, were it watched.
	waitJob(t, here)
	cur := getRR(t, elsewhere)
	if cur.Status.Phase != "" || len(cur.Status.Conditions) != 0 || len(cur.Finalizers) != 0 {
		t.Errorf("a request outside the watched namespaces was acted on: %+v", cur.Status)
	}
	jobs := jobsOf(t, other, map[string]string{v1alpha1.LabelRunner: v1alpha1.LabelRunnerValue})
	if len(jobs) != 0 {
		t.Errorf("%d Jobs in a namespace not watched", len(jobs))
	}
}
