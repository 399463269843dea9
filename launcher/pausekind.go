package launcher

import (
	"fmt"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/runner/config"
)

// pauseKindErrors refuses, before anything is paused, the ways of pausing
// that cannot be the consumers of a group of the kind spec.groupType
// states. A Deployment, a StatefulSet or a ScaledObject runs whatever
// client it runs, a share consumer or a Kafka Streams application too, so
// it pauses any kind. A KafkaSource (Knative's dispatcher), a KafkaConnector
// (Kafka Connect's sink tasks) and a consumerRef (a Knative resource's
// dispatcher) consume through a consumer group, classic or KIP-848, never
// a share or a streams group: with groupType Share or Streams they would
// pause something else, and the group's own members would go on. Auto
// leaves the kind to the runner, which finds it; Classic and Consumer take
// every way. Each error names the field and the kind. It is pure.
func pauseKindErrors(spec *v1alpha1.ReplayRequestSpec) []string {
	kind := string(spec.GroupType)
	if kind != config.GroupTypeShare && kind != config.GroupTypeStreams {
		return nil
	}
	var errs []string
	if spec.ConsumerRef != nil {
		errs = append(errs, fmt.Sprintf("consumerRef: a Knative %s consumes through a consumer group, never a %s group (groupType: %s); name the group and its consumers' workloads instead, or state another groupType", spec.ConsumerRef.Kind, kind, kind))
	}
	for i, c := range spec.Consumers {
		switch c.Kind {
		case v1alpha1.ConsumerKafkaSource, v1alpha1.ConsumerKafkaConnector:
			errs = append(errs, fmt.Sprintf("consumers[%d]: %s %s consumes through a consumer group, never a %s group (groupType: %s), so pausing it does not stop the group's members; name the Deployment or StatefulSet that runs them", i, c.Kind, c.Name, kind, kind))
		}
	}
	return errs
}
