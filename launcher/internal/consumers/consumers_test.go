package consumers

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

func TestUnitDecideRestore(t *testing.T) {
	scaled := v1alpha1.ConsumerStatus{Method: v1alpha1.PauseScale, Workload: "Deployment/c", Replicas: ptr.To[int32](3), State: v1alpha1.ConsumerPaused}
	keda := v1alpha1.ConsumerStatus{Method: v1alpha1.PauseKEDA, ScaledObject: "so", Workload: "Deployment/c", State: v1alpha1.ConsumerPaused}
	kedaPrev := keda
	kedaPrev.PreviousPaused, kedaPrev.PreviousPausedReplicas = ptr.To("false"), ptr.To("2")
	connector := v1alpha1.ConsumerStatus{Method: v1alpha1.PauseState, Workload: "KafkaConnector/k", State: v1alpha1.ConsumerPaused}
	pausedConnector := connector
	pausedConnector.PreviousState = ptr.To("paused")
	cases := []struct {
		name string
		c    v1alpha1.ConsumerStatus
		now  WorkloadState
		want RestoreAction
		says string
	}{
		{"scale: still paused", scaled, WorkloadState{Replicas: 0}, RestoreApply, "scaled back to 3"},
		{"scale: already restored", scaled, WorkloadState{Replicas: 3}, RestoreNothing, "recorded 3"},
		{"scale: scaled by someone else", scaled, WorkloadState{Replicas: 5}, RestoreLeave, "scaled to 5 by someone else"},
		{"scale: gone", scaled, WorkloadState{Gone: true}, RestoreLeave, "gone"},
		{"scale: recorded at 0, still 0", v1alpha1.ConsumerStatus{Method: v1alpha1.PauseScale, Workload: "Deployment/c", Replicas: ptr.To[int32](0)}, WorkloadState{}, RestoreNothing, "recorded 0"},
		{"keda: both ours, none before", keda, WorkloadState{Paused: ptr.To("true"), PausedReplicas: ptr.To("0")}, RestoreApply, "restored"},
		{"keda: both ours, values before", kedaPrev, WorkloadState{Paused: ptr.To("true"), PausedReplicas: ptr.To("0")}, RestoreApply, `"2"`},
		{"keda: already as recorded", keda, WorkloadState{}, RestoreNothing, "as recorded"},
		{"keda: unpaused by someone else", keda, WorkloadState{PausedReplicas: ptr.To("0")}, RestoreLeave, "someone else"},
		{"keda: other replicas by someone else", keda, WorkloadState{Paused: ptr.To("true"), PausedReplicas: ptr.To("4")}, RestoreLeave, "someone else"},
		{"keda: gone", keda, WorkloadState{Gone: true}, RestoreLeave, "gone"},
		{"connector: stopped, none before", connector, WorkloadState{State: ptr.To("stopped")}, RestoreApply, "restored to spec.state (absent)"},
		{"connector: stopped, paused before", pausedConnector, WorkloadState{State: ptr.To("stopped")}, RestoreApply, `restored to spec.state "paused"`},
		{"connector: already as recorded", connector, WorkloadState{}, RestoreNothing, "as recorded"},
		{"connector: stopped before, still stopped", v1alpha1.ConsumerStatus{Method: v1alpha1.PauseState, Workload: "KafkaConnector/k", PreviousState: ptr.To("stopped")}, WorkloadState{State: ptr.To("stopped")}, RestoreNothing, "as recorded"},
		{"connector: resumed by someone else", connector, WorkloadState{State: ptr.To("running")}, RestoreLeave, `someone else while stopped (spec.state "running")`},
		{"connector: gone", connector, WorkloadState{Gone: true}, RestoreLeave, "gone"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, msg := DecideRestore(c.c, c.now)
			if got != c.want || !strings.Contains(msg, c.says) {
				t.Fatalf("DecideRestore = %s %q, want %s saying %q", got, msg, c.want, c.says)
			}
		})
	}
}

func TestUnitPauseWarnings(t *testing.T) {
	cases := []struct {
		name        string
		method      v1alpha1.PauseMethod
		labels, ann map[string]string
		hpas        []string
		want        []string
	}{
		{"nothing", v1alpha1.PauseScale, nil, nil, nil, nil},
		{"HPA", v1alpha1.PauseScale, nil, nil, []string{"h"}, []string{"HorizontalPodAutoscaler h targets Deployment/c: at 0 replicas it stops scaling it"}},
		{"KEDA's own HPA is paused with it", v1alpha1.PauseKEDA, nil, nil, []string{"keda-hpa-so"}, nil},
		{"Argo CD tracking annotation", v1alpha1.PauseScale, nil, map[string]string{argoTrackingAnnotation: "shop:apps/Deployment:ns/c"}, nil, []string{"Argo CD (application shop)", "ignoreDifferences", "/spec/replicas"}},
		{"Argo CD instance label", v1alpha1.PauseScale, map[string]string{argoInstanceLabel: "shop"}, nil, nil, []string{"Argo CD (application shop)"}},
		{"Flux Kustomization", v1alpha1.PauseScale, map[string]string{fluxKustomizeLabel: "apps"}, nil, nil, []string{"Flux (kustomize.toolkit.fluxcd.io/name=apps)", "suspend"}},
		{"Flux HelmRelease", v1alpha1.PauseScale, map[string]string{fluxHelmLabel: "shop"}, nil, nil, []string{"Flux (helm.toolkit.fluxcd.io/name=shop)"}},
		{"Helm's own instance label is not Argo CD", v1alpha1.PauseScale, map[string]string{"app.kubernetes.io/instance": "shop"}, nil, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := strings.Join(PauseWarnings("Deployment/c", c.method, c.labels, c.ann, c.hpas), "\n")
			if c.want == nil && got != "" {
				t.Fatalf("warnings %q, want none", got)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Fatalf("warnings %q, want %q", got, w)
				}
			}
		})
	}
}

func TestUnitConsumersRestoredCondition(t *testing.T) {
	restored := v1alpha1.ConsumerStatus{Method: v1alpha1.PauseScale, Workload: "Deployment/a", Replicas: ptr.To[int32](2), State: v1alpha1.ConsumerRestored}
	left := v1alpha1.ConsumerStatus{Method: v1alpha1.PauseScale, Workload: "Deployment/b", State: v1alpha1.ConsumerNotRestored, Message: "Deployment/b was scaled to 5 by someone else"}
	if r, m := RestoredCondition([]v1alpha1.ConsumerStatus{restored}); r != state.ReasonRestored || !strings.Contains(m, "Deployment/a (2 replicas)") {
		t.Errorf("%s %q", r, m)
	}
	if r, m := RestoredCondition([]v1alpha1.ConsumerStatus{restored, left}); r != state.ReasonNotRestored || !strings.Contains(m, "scaled to 5 by someone else") || !strings.Contains(m, "Deployment/a") {
		t.Errorf("%s %q", r, m)
	}
}
