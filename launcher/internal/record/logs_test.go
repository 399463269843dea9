package record

import (
	"context"
	"io"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

// The fake clientset answers pods/log with a fixed body; this checks the
// request is made for the right pod and that the byte bound holds.
func TestUnitPodLogsTail(t *testing.T) {
	cs := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}})
	logs := PodLogs{Client: cs.CoreV1(), Timeout: time.Second}
	got, err := logs.Tail(context.Background(), "ns", "p", state.ContainerName, 10, 4096)
	if err != nil || got != "fake logs" {
		t.Fatalf("Tail = %q, %v", got, err)
	}
	got, err = logs.Tail(context.Background(), "ns", "p", state.ContainerName, 10, 4)
	if err != nil || got != "fake" {
		t.Fatalf("bounded Tail = %q, %v", got, err)
	}
}

func TestUnitPodLogsFull(t *testing.T) {
	cs := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}})
	logs := PodLogs{Client: cs.CoreV1(), Timeout: time.Second}
	for _, tc := range []struct {
		limit int64
		want  string
	}{{1 << 20, "fake logs"}, {4, "fake"}} {
		rc, err := logs.Full(context.Background(), "ns", "p", state.ContainerName, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		if cerr := rc.Close(); err != nil || cerr != nil || string(b) != tc.want {
			t.Fatalf("Full(limit %d) = %q, %v, %v; want %q", tc.limit, b, err, cerr, tc.want)
		}
	}
	// PodLogs is what the launcher reads records with.
	var _ FullLogFetcher = logs
	if NewCollector(nil, nil, logs).Logs == nil {
		t.Fatal("the collector does not read whole logs through PodLogs")
	}
}
