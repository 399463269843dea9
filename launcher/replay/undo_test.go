package replay

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// An undo keeps how the replay reached its group and ran, and nothing of
// what it moved; the undone spec is not shared with it.
func TestUnitUndoSpec(t *testing.T) {
	n := int64(5)
	undone := v1alpha1.ReplayRequestSpec{
		Kafka:           v1alpha1.KafkaConnection{BootstrapServers: "k:9092"},
		Group:           "orders",
		Topics:          []v1alpha1.TopicSelector{{Name: "orders"}},
		Target:          v1alpha1.Target{ShiftBy: &n},
		WhenGroupActive: v1alpha1.GroupActiveWait,
		WaitTimeout:     &metav1.Duration{Duration: time.Minute},
		Consumers:       []v1alpha1.ConsumerRef{{Kind: v1alpha1.ConsumerDeployment, Name: "app"}},
		Limits:          &v1alpha1.Limits{MaxMessagesToReconsume: &n},
		DryRun:          true,
		Approval:        v1alpha1.ApprovalManual,
		Force:           true,
	}
	got := UndoSpec(&undone, "rewind")
	if got.Target.UndoOf == nil || *got.Target.UndoOf != "rewind" || got.Target.ShiftBy != nil {
		t.Errorf("target %+v, want undoOf rewind only", got.Target)
	}
	if got.Kafka.BootstrapServers != "k:9092" || got.Group != "orders" || got.WhenGroupActive != v1alpha1.GroupActiveWait ||
		got.WaitTimeout == nil || got.WaitTimeout.Duration != time.Minute || len(got.Consumers) != 1 || got.Consumers[0].Name != "app" {
		t.Errorf("the way to the group is not kept: %+v", got)
	}
	if got.Topics != nil || got.Limits != nil || got.DryRun || got.Approval != "" || got.Force {
		t.Errorf("kept what the undo does not copy: %+v", got)
	}
	got.Consumers[0].Name = "changed"
	if undone.Consumers[0].Name != "app" {
		t.Error("the undo's spec shares the undone spec's consumers")
	}
}
