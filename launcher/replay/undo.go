package replay

import (
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// UndoSpec is the spec of a request that undoes undone, the request named
// undoOf: the same way to the group (the Kafka connection and group, or the
// consumerRef, which the undo resolves again and must find the same), the
// same consumers to pause, the same wait for the group and the same runner
// overrides; nothing of the target, the topics or the limits, since the
// undone run's record is the scope. The launcher's status.undoCommand and
// the plugin's `kubectl replay undo` both make it here, so the fields an
// undo copies are listed once.
func UndoSpec(undone *v1alpha1.ReplayRequestSpec, undoOf string) v1alpha1.ReplayRequestSpec {
	src := undone.DeepCopy()
	return v1alpha1.ReplayRequestSpec{
		Kafka:           src.Kafka,
		Group:           src.Group,
		ConsumerRef:     src.ConsumerRef,
		Target:          v1alpha1.Target{UndoOf: &undoOf},
		WhenGroupActive: src.WhenGroupActive,
		WaitTimeout:     src.WaitTimeout,
		Runner:          src.Runner,
		Consumers:       src.Consumers,
	}
}
