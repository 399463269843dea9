package consumers

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

// KEDA's pause annotations on a ScaledObject. Both are set: paused-replicas
// alone scales to 0 but KEDA still acts on the HPA it owns, paused alone
// freezes the workload at whatever count it has; together the workload goes
// to 0 and stays there.
const (
	AnnotationKEDAPaused         = "autoscaling.keda.sh/paused"
	AnnotationKEDAPausedReplicas = "autoscaling.keda.sh/paused-replicas"

	// KEDAPausedValue and KEDAPausedReplicasValue are the values a pause
	// sets them to.
	KEDAPausedValue         = "true"
	KEDAPausedReplicasValue = "0"
)

// ConnectorStopped is the spec.state that stops a Strimzi KafkaConnector
// (KafkaConnectorSpec), its pause.
const ConnectorStopped = "stopped"

// WorkloadState is what a consumer looks like now, as read for a restore.
type WorkloadState struct {
	// Gone is true when the workload (or ScaledObject) no longer exists.
	Gone bool
	// Replicas is the scale's spec.replicas, with method Scale.
	Replicas int32
	// Paused and PausedReplicas are the KEDA annotations (nil: absent),
	// with method KEDA.
	Paused, PausedReplicas *string
	// State is a KafkaConnector's spec.state (nil: absent), with method
	// State.
	State *string
}

// RestoreAction is what a restore does to one consumer.
type RestoreAction string

const (
	// RestoreApply puts the recorded state back.
	RestoreApply RestoreAction = "Apply"
	// RestoreNothing: it is as recorded already (never paused, or restored
	// by a pass that stopped before its status write).
	RestoreNothing RestoreAction = "Nothing"
	// RestoreLeave: someone else changed it since the pause; it is left as
	// found.
	RestoreLeave RestoreAction = "Leave"
)

// DecideRestore says what to do with one recorded consumer, given its state
// now, and why. It is pure. The launcher restores only what it changed: a
// consumer still as the pause left it is restored, one as recorded needs
// nothing, anything else was changed by someone else and is not
// overwritten.
func DecideRestore(c v1alpha1.ConsumerStatus, now WorkloadState) (RestoreAction, string) {
	if now.Gone {
		return RestoreLeave, fmt.Sprintf("%s is gone; nothing to restore", Name(c))
	}
	switch c.Method {
	case v1alpha1.PauseState:
		prev := "spec.state " + showOpt(c.PreviousState)
		switch {
		case eqOpt(now.State, c.PreviousState):
			return RestoreNothing, fmt.Sprintf("%s is as recorded (%s)", c.Workload, prev)
		case valueIs(now.State, ConnectorStopped):
			return RestoreApply, fmt.Sprintf("%s restored to %s", c.Workload, prev)
		default:
			return RestoreLeave, fmt.Sprintf("%s was changed by someone else while stopped (spec.state %s); left as found, recorded %s", c.Workload, showOpt(now.State), prev)
		}
	case v1alpha1.PauseKEDA:
		prev := fmt.Sprintf("%s=%s, %s=%s", AnnotationKEDAPaused, showOpt(c.PreviousPaused), AnnotationKEDAPausedReplicas, showOpt(c.PreviousPausedReplicas))
		switch {
		case eqOpt(now.Paused, c.PreviousPaused) && eqOpt(now.PausedReplicas, c.PreviousPausedReplicas):
			return RestoreNothing, fmt.Sprintf("ScaledObject %s is as recorded (%s)", c.ScaledObject, prev)
		case valueIs(now.Paused, KEDAPausedValue) && valueIs(now.PausedReplicas, KEDAPausedReplicasValue):
			return RestoreApply, fmt.Sprintf("ScaledObject %s restored to %s", c.ScaledObject, prev)
		default:
			return RestoreLeave, fmt.Sprintf("ScaledObject %s was changed by someone else while paused (%s=%s, %s=%s); left as found, recorded %s",
				c.ScaledObject, AnnotationKEDAPaused, showOpt(now.Paused), AnnotationKEDAPausedReplicas, showOpt(now.PausedReplicas), prev)
		}
	default:
		want := state.ValueOr(c.Replicas, 0)
		switch now.Replicas {
		case want:
			return RestoreNothing, fmt.Sprintf("%s is at its recorded %d replicas", c.Workload, want)
		case 0:
			return RestoreApply, fmt.Sprintf("%s scaled back to %d replicas", c.Workload, want)
		default:
			return RestoreLeave, fmt.Sprintf("%s was scaled to %d by someone else while paused; left as found, recorded %d", c.Workload, now.Replicas, want)
		}
	}
}

// RestoredCondition is the ConsumersRestored condition once no
// consumer is held: Restored, or NotRestored naming those left as found. It
// is pure.
func RestoredCondition(cs []v1alpha1.ConsumerStatus) (reason, message string) {
	var restored, left []string
	for _, c := range cs {
		if c.State == v1alpha1.ConsumerNotRestored {
			left = append(left, c.Message)
		} else {
			restored = append(restored, Summary(c))
		}
	}
	if len(left) > 0 {
		msg := "not restored: " + strings.Join(left, "; ")
		if len(restored) > 0 {
			msg += "; restored: " + strings.Join(restored, ", ")
		}
		return state.ReasonNotRestored, msg
	}
	return state.ReasonRestored, "restored: " + strings.Join(restored, ", ")
}

// PausedMessage names the paused consumers and what they were.
func PausedMessage(cs []v1alpha1.ConsumerStatus) string {
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		parts = append(parts, Summary(c))
	}
	return "paused: " + strings.Join(parts, ", ") + "; the runner waits for the group to be empty"
}

// Summary is one consumer and what it was before the pause.
func Summary(c v1alpha1.ConsumerStatus) string {
	if c.Method == v1alpha1.PauseState {
		return fmt.Sprintf("%s (spec.state %s)", c.Workload, showOpt(c.PreviousState))
	}
	if c.Method == v1alpha1.PauseKEDA {
		return fmt.Sprintf("ScaledObject %s (scaling %s)", c.ScaledObject, c.Workload)
	}
	return fmt.Sprintf("%s (%d replicas)", c.Workload, state.ValueOr(c.Replicas, 0))
}

// Name is what a consumer is called in messages: its ScaledObject, or its
// workload.
func Name(c v1alpha1.ConsumerStatus) string {
	if c.Method == v1alpha1.PauseKEDA {
		return "ScaledObject " + c.ScaledObject
	}
	return c.Workload
}

// ScaledObjectGVK is KEDA's ScaledObject, read as an unstructured object: the
// launcher does not depend on KEDA's Go module.
var ScaledObjectGVK = schema.GroupVersionKind{Group: "keda.sh", Version: "v1alpha1", Kind: "ScaledObject"}

// Labels and annotations by which Argo CD and Flux track what they apply.
// Both may revert spec.replicas to the manifest's (self-heal, or the next
// reconcile): the pause then does not hold.
const (
	argoTrackingAnnotation = "argocd.argoproj.io/tracking-id"
	argoInstanceLabel      = "argocd.argoproj.io/instance"
	fluxKustomizeLabel     = "kustomize.toolkit.fluxcd.io/name"
	fluxHelmLabel          = "helm.toolkit.fluxcd.io/name"
)

// PauseWarnings names what may fight the pause of a workload: the
// HorizontalPodAutoscalers that target it, and an Argo CD or Flux owner,
// recognised by its tracking labels and annotations. method is how the
// workload is paused: through KEDA, KEDA's own HPA is expected and paused
// with it. It is pure.
func PauseWarnings(workload string, method v1alpha1.PauseMethod, labels, annotations map[string]string, hpas []string) []string {
	var out []string
	if method == v1alpha1.PauseScale {
		for _, h := range hpas {
			out = append(out, fmt.Sprintf("HorizontalPodAutoscaler %s targets %s: at 0 replicas it stops scaling it (until the restore), and it may scale it up again if it is changed meanwhile", h, workload))
		}
	}
	if labels[argoInstanceLabel] != "" || annotations[argoTrackingAnnotation] != "" {
		app := state.ValueOrString(labels[argoInstanceLabel], strings.SplitN(annotations[argoTrackingAnnotation], ":", 2)[0])
		out = append(out, fmt.Sprintf("%s is managed by Argo CD (application %s): with self-heal it reverts the pause; add an ignoreDifferences entry for /spec/replicas of this workload", workload, app))
	}
	for _, l := range []string{fluxKustomizeLabel, fluxHelmLabel} {
		if v := labels[l]; v != "" {
			out = append(out, fmt.Sprintf("%s is managed by Flux (%s=%s): its next reconcile reverts spec.replicas if the manifest sets it; leave replicas out of the manifest or suspend that object for the replay", workload, l, v))
			break
		}
	}
	if len(out) > 8 {
		out = out[:8]
	}
	return out
}

func eqOpt(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func valueIs(p *string, v string) bool { return p != nil && *p == v }

func showOpt(p *string) string {
	if p == nil {
		return "(absent)"
	}
	return fmt.Sprintf("%q", *p)
}
