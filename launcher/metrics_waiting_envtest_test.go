package launcher_test

import (
	"fmt"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kafka-replay/kafka-replay/runner/report"

	"github.com/kafka-replay/kafka-replay/launcher"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// waitingGauge scrapes kafkareplay_requests_waiting from the registry the
// launcher's /metrics endpoint serves, by reason.
func waitingGauge(t testing.TB) map[string]float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "kafkareplay_requests_waiting" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" {
					got[l.GetValue()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	return got
}

// The waiting gauge counts a request that waits for its group while it
// waits, and not once it has run; every reason of the fixed set is always
// exported. The cluster is shared with earlier tests, so it compares with
// what it read before.
func TestEnvtestRequestsWaitingGauge(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 2)

	before := waitingGauge(t)
	for _, r := range launcher.WaitingReasons {
		if _, ok := before[r]; !ok {
			t.Fatalf("reason %s not exported: %v", r, before)
		}
	}
	if len(before) != len(launcher.WaitingReasons) {
		t.Fatalf("exported reasons %v, want exactly %v", before, launcher.WaitingReasons)
	}
	first := testutil.MakeRequest(ns, "first").Group("gauge").Obj()
	create(t, first)
	job := waitJob(t, first) // first holds the group from here on
	second := testutil.MakeRequest(ns, "second").Group("gauge").Obj()
	create(t, second)

	want := func(delta float64) func() error {
		return func() error {
			now := waitingGauge(t)[state.ReasonWaitingForGroup]
			if w := before[state.ReasonWaitingForGroup] + delta; now != w {
				return fmt.Errorf("WaitingForGroup = %v, want %v", now, w)
			}
			return nil
		}
	}
	eventually(t, 30*time.Second, "the second request counted as waiting", want(1))

	runPod(t, job, 0, 0, testutil.Compact(testutil.Result("gauge", report.ExitOK, 1)))
	finishJob(t, job, "")
	waitPhase(t, first, v1alpha1.PhaseSucceeded)
	waitJob(t, second)
	eventually(t, 30*time.Second, "the second request no longer counted once it runs", want(0))
}
