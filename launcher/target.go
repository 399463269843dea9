package launcher

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/config"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/knative"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// undoTargetPrefix starts status.resolvedTarget of an undo: "undo:<name of
// the undone request>". Like offsets:<count>, it is the launcher's own form:
// the runner receives undo:<file>, the undone run's result.
const undoTargetPrefix = "undo:"

// ResolveTarget turns spec.target into the runner's grammar, resolving an ago
// target against now. It is called once, when the request is accepted; the
// result is stored in status.resolvedTarget and every Job is built from that,
// so a retry or a restart never moves the target.
//
// The schema has already checked the shape; this applies the runner's own
// parser on top, so that a request the runner would refuse with exit code 2
// fails at acceptance instead, with the same message.
func ResolveTarget(t v1alpha1.Target, now time.Time) (string, error) {
	var s string
	switch {
	case t.Time != nil:
		s = "time:" + *t.Time
	case t.Ago != nil:
		if t.Ago.Duration <= 0 {
			return "", errors.New("target.ago must be positive")
		}
		at := now.Add(-t.Ago.Duration).UTC().Truncate(time.Millisecond)
		s = "time:" + at.Format(time.RFC3339Nano)
	case t.Position != nil:
		switch *t.Position {
		case v1alpha1.PositionEarliest:
			s = string(config.KindEarliest)
		case v1alpha1.PositionLatest:
			s = string(config.KindLatest)
		default:
			return "", fmt.Errorf("target.position %q is not Earliest or Latest", *t.Position)
		}
	case t.Offset != nil:
		s = "offset:" + strconv.FormatInt(*t.Offset, 10)
	case t.ShiftBy != nil:
		s = fmt.Sprintf("shift:%+d", *t.ShiftBy)
	case t.FromGroup != nil:
		s = "group:" + *t.FromGroup
	case len(t.Offsets) > 0:
		if err := config.ValidateOffsets(runnerjob.PartitionOffsets(t.Offsets), "target.offsets"); err != nil {
			return "", err
		}
		return runnerjob.OffsetsTarget + strconv.Itoa(len(t.Offsets)), nil
	case t.UndoOf != nil:
		// The undone run reaches the runner as a file (undo:<file>), made
		// from its ReplayRecord when the Job is; see undo.Decide.
		if *t.UndoOf == "" {
			return "", errors.New("target.undoOf must name a ReplayRequest")
		}
		return undoTargetPrefix + *t.UndoOf, nil
	default:
		return "", errors.New("target sets none of time, ago, position, offset, shiftBy, offsets, fromGroup or undoOf")
	}
	if _, err := config.ParseTarget(s); err != nil {
		return "", fmt.Errorf("target: %w", err)
	}
	return s, nil
}

// ValidateSpec applies the runner's validation of everything but the target
// (see ResolveTarget), so that input the runner would refuse never becomes a
// Job. The schema's CEL rules catch the same mistakes at admission; this is
// the backstop for objects stored before a schema change.
func ValidateSpec(spec *v1alpha1.ReplayRequestSpec) error {
	var errs []string
	if spec.ConsumerRef != nil {
		// The group and the topics (and, for Knative, the servers) come
		// from the resource; ValidateResolved checks them once resolved.
		switch {
		case spec.Group != "" || len(spec.Topics) > 0:
			errs = append(errs, "consumerRef: replaces group and topics; leave them out")
		case spec.ConsumerRef.Kind == v1alpha1.ConsumerRefKafkaConnector:
			if spec.Kafka.ClusterRef == nil {
				errs = append(errs, "kafka.clusterRef: required with a KafkaConnector consumerRef: the Strimzi Kafka its KafkaConnect connects to")
			} else {
				errs = append(errs, validateClusterRef(spec.Kafka)...)
			}
		case spec.Kafka != (v1alpha1.KafkaConnection{}):
			errs = append(errs, "consumerRef: a Knative resource replaces kafka; leave it out")
		}
		if err := knative.ValidateRef(*spec.ConsumerRef); err != nil {
			errs = append(errs, err.Error())
		}
	} else {
		if spec.Kafka.ClusterRef != nil {
			errs = append(errs, validateClusterRef(spec.Kafka)...)
		} else if err := config.ValidateBootstrapServers(spec.Kafka.BootstrapServers); err != nil {
			errs = append(errs, "kafka.bootstrapServers: "+err.Error())
		}
		if err := config.ValidateGroup(spec.Group); err != nil {
			errs = append(errs, "group: "+err.Error())
		}
	}
	if _, err := config.ParseScope(runnerjob.ScopeEntries(spec.Topics)); err != nil {
		errs = append(errs, "topics: "+err.Error())
	}
	if spec.Target.FromGroup != nil && spec.Group != "" && *spec.Target.FromGroup == spec.Group {
		errs = append(errs, "target.fromGroup: names the group being repositioned")
	}
	if spec.Target.UndoOf != nil && len(spec.Topics) > 0 {
		errs = append(errs, "topics: must be empty with target.undoOf: the undone request's record chooses the partitions")
	}
	if spec.Force && spec.Target.UndoOf == nil {
		errs = append(errs, "force: is only allowed with target.undoOf")
	}
	errs = append(errs, pauseKindErrors(spec)...)
	if n := replay.OffsetsAnnotationBytes(spec.Target.Offsets); n > replay.MaxOffsetsAnnotationBytes {
		errs = append(errs, fmt.Sprintf("target.offsets: %d bytes as JSON, more than the %d a pod annotation can carry", n, replay.MaxOffsetsAnnotationBytes))
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}
