package state

import (
	"testing"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

func TestUnitConsumersHeld(t *testing.T) {
	for _, c := range []struct {
		states []v1alpha1.ConsumerState
		want   bool
	}{
		{nil, false},
		{[]v1alpha1.ConsumerState{v1alpha1.ConsumerRecorded}, true},
		{[]v1alpha1.ConsumerState{v1alpha1.ConsumerRestored, v1alpha1.ConsumerPaused}, true},
		{[]v1alpha1.ConsumerState{v1alpha1.ConsumerRestored, v1alpha1.ConsumerNotRestored}, false},
	} {
		rr := testutil.MakeRequest("ns", "a").Obj()
		for _, s := range c.states {
			rr.Status.Consumers = append(rr.Status.Consumers, v1alpha1.ConsumerStatus{State: s})
		}
		if got := ConsumersHeld(rr); got != c.want {
			t.Errorf("%v: held %v, want %v", c.states, got, c.want)
		}
	}
}

func TestUnitPausesConsumers(t *testing.T) {
	ref := v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerDeployment, Name: "c"}
	if !PausesConsumers(testutil.MakeRequest("ns", "a").Consumers(ref).Obj()) {
		t.Error("a request with consumers does not pause them")
	}
	if PausesConsumers(testutil.MakeRequest("ns", "a").Consumers(ref).DryRun().Obj()) {
		t.Error("a dry run pauses consumers")
	}
	if PausesConsumers(testutil.MakeRequest("ns", "a").Obj()) {
		t.Error("a request without consumers pauses some")
	}
}
