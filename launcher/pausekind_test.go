package launcher

import (
	"strings"
	"testing"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// TestUnitPauseKindErrors: every way of pausing against every stated
// kind; the refusals name the field and the kind.
func TestUnitPauseKindErrors(t *testing.T) {
	ways := []struct {
		name     string
		spec     v1alpha1.ReplayRequestSpec
		field    string // named by the refusal
		anyGroup bool   // pauses a group of any kind
	}{
		{"Deployment", v1alpha1.ReplayRequestSpec{Consumers: []v1alpha1.ConsumerRef{{Kind: v1alpha1.ConsumerDeployment, Name: "d"}}}, "", true},
		{"StatefulSet", v1alpha1.ReplayRequestSpec{Consumers: []v1alpha1.ConsumerRef{{Kind: v1alpha1.ConsumerStatefulSet, Name: "s"}}}, "", true},
		{"ScaledObject", v1alpha1.ReplayRequestSpec{Consumers: []v1alpha1.ConsumerRef{{Kind: v1alpha1.ConsumerScaledObject, Name: "so"}}}, "", true},
		{"KafkaSource", v1alpha1.ReplayRequestSpec{Consumers: []v1alpha1.ConsumerRef{{Kind: v1alpha1.ConsumerDeployment, Name: "d"}, {Kind: v1alpha1.ConsumerKafkaSource, Name: "src"}}}, "consumers[1]: KafkaSource src", false},
		{"KafkaConnector", v1alpha1.ReplayRequestSpec{Consumers: []v1alpha1.ConsumerRef{{Kind: v1alpha1.ConsumerKafkaConnector, Name: "sink"}}}, "consumers[0]: KafkaConnector sink", false},
		{"consumerRef", v1alpha1.ReplayRequestSpec{ConsumerRef: &v1alpha1.KnativeRef{Kind: "Trigger", Name: "t"}}, "consumerRef: a Knative Trigger", false},
		{"nothing paused", v1alpha1.ReplayRequestSpec{}, "", true},
	}
	for _, w := range ways {
		for _, kind := range []v1alpha1.GroupType{"", "Auto", "Classic", "Consumer", "Share", "Streams"} {
			spec := w.spec
			spec.GroupType = kind
			errs := pauseKindErrors(&spec)
			refused := !w.anyGroup && (kind == "Share" || kind == "Streams")
			switch {
			case !refused && len(errs) > 0:
				t.Errorf("%s, groupType %q: refused: %q", w.name, kind, errs)
			case refused && len(errs) != 1:
				t.Errorf("%s, groupType %q: %d errors %q, want 1", w.name, kind, len(errs), errs)
			case refused && (!strings.HasPrefix(errs[0], w.field) || !strings.Contains(errs[0], "groupType: "+string(kind)) || !strings.Contains(errs[0], "never a "+string(kind)+" group")):
				t.Errorf("%s, groupType %q: %q does not name the field %q and the kind", w.name, kind, errs[0], w.field)
			}
		}
	}
}
