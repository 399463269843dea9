package launcher

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// The fake clientset answers pods/log with a fixed body; this checks the
// request is made for the right pod and that the byte bound holds.
func TestUnitPodLogsTail(t *testing.T) {
	cs := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}})
	logs := PodLogs{Client: cs, Timeout: time.Second}
	got, err := logs.Tail(context.Background(), "ns", "p", ContainerName, 10, 4096)
	if err != nil || got != "fake logs" {
		t.Fatalf("Tail = %q, %v", got, err)
	}
	got, err = logs.Tail(context.Background(), "ns", "p", ContainerName, 10, 4)
	if err != nil || got != "fake" {
		t.Fatalf("bounded Tail = %q, %v", got, err)
	}
}
