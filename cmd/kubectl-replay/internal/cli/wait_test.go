package cli

import (
	"context"
	"io"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/progress"
	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/render"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// A watch that fails (410 Gone from a too old resourceVersion) says so, so
// that follow reads the request again instead of watching from the same
// version forever; a closed one is re-watched; Deleted ends it; an update
// that finishes the request ends the drain with it.
func TestDrain(t *testing.T) {
	a := &app{}
	d := newDisplay(io.Discard, false, render.Palette{})
	run := func(events ...watch.Event) (cur v1alpha1.ReplayRequest, gone, stale bool) {
		w := watch.NewFakeWithChanSize(len(events), false)
		for _, e := range events {
			w.Action(e.Type, e.Object)
		}
		w.Stop()
		var err error
		gone, stale, err = a.drain(context.Background(), w, &cur, progress.Over, d, time.Now(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return cur, gone, stale
	}
	if _, gone, stale := run(watch.Event{Type: watch.Error, Object: &metav1.Status{Code: 410, Reason: metav1.StatusReasonGone}}); gone || !stale {
		t.Errorf("an Error event: gone %v stale %v", gone, stale)
	}
	if _, gone, stale := run(); gone || stale {
		t.Errorf("a closed watch: gone %v stale %v", gone, stale)
	}
	if _, gone, _ := run(watch.Event{Type: watch.Deleted, Object: &v1alpha1.ReplayRequest{}}); !gone {
		t.Error("Deleted did not end it")
	}
	done := &v1alpha1.ReplayRequest{ObjectMeta: metav1.ObjectMeta{Name: "r", ResourceVersion: "7"}}
	done.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionFinished, Status: metav1.ConditionTrue, Reason: "Applied"}, {Type: v1alpha1.ConditionSucceeded, Status: metav1.ConditionTrue, Reason: "Applied"}}
	later := done.DeepCopy()
	later.ResourceVersion = "8"
	// The drain stops at the update that finishes it; what follows is not read.
	cur, gone, stale := run(watch.Event{Type: watch.Modified, Object: &v1alpha1.ReplayRequest{ObjectMeta: metav1.ObjectMeta{Name: "r", ResourceVersion: "6"}}},
		watch.Event{Type: watch.Modified, Object: done}, watch.Event{Type: watch.Modified, Object: later})
	if gone || stale || cur.ResourceVersion != "7" {
		t.Errorf("finished: gone %v stale %v at version %s", gone, stale, cur.ResourceVersion)
	}
}

// plan --wait stops at a plan that awaits a decision and at every final
// state, failed ones included: a planning run that fails never makes a
// plan, so waiting for one would wait out --timeout.
func TestPlanSettled(t *testing.T) {
	finished := func(succeeded metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{
			{Type: v1alpha1.ConditionSucceeded, Status: succeeded, Reason: reason},
			{Type: v1alpha1.ConditionFinished, Status: metav1.ConditionTrue, Reason: reason},
		}
	}
	plan := &v1alpha1.PlanSummary{Digest: "01449e2dec61d69c"}
	for _, c := range []struct {
		name   string
		status v1alpha1.ReplayRequestStatus
		want   bool
	}{
		{"new", v1alpha1.ReplayRequestStatus{}, false},
		{"planning", v1alpha1.ReplayRequestStatus{Phase: v1alpha1.PhaseRunning}, false},
		{"awaiting approval, plan not yet in status", v1alpha1.ReplayRequestStatus{Phase: v1alpha1.PhaseAwaitingApproval}, false},
		{"plan ready", v1alpha1.ReplayRequestStatus{Phase: v1alpha1.PhaseAwaitingApproval, Plan: plan}, true},
		{"approved, applying", v1alpha1.ReplayRequestStatus{Phase: v1alpha1.PhaseRunning, Plan: plan}, false},
		{"planning failed", v1alpha1.ReplayRequestStatus{Phase: v1alpha1.PhaseFailed, Conditions: finished(metav1.ConditionFalse, "GuardTripped")}, true},
		{"rejected", v1alpha1.ReplayRequestStatus{Phase: v1alpha1.PhaseFailed, Plan: plan, Conditions: finished(metav1.ConditionFalse, "Rejected")}, true},
		{"a dry run done", v1alpha1.ReplayRequestStatus{Phase: v1alpha1.PhaseSucceeded, Conditions: finished(metav1.ConditionTrue, "DryRun")}, true},
	} {
		rr := &v1alpha1.ReplayRequest{Status: c.status}
		if got := PlanSettled(rr); got != c.want {
			t.Errorf("%s: PlanSettled = %v, want %v", c.name, got, c.want)
		}
	}
}
