package record

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

var t0 = time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)

// runnerJob is the Job launcher.BuildJob makes for
// testutil.MakeRequest("ns", "a"), as far as a record reads it: its name,
// labels, annotations, deadline and pod template.
func runnerJob() *batchv1.Job {
	labels := map[string]string{
		"kafkareplay.dev/group": "orders", "kafkareplay.dev/request": "a",
		"kafkareplay.dev/runner": "true", "kafkareplay.dev/stage": "apply",
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: "a-f0efe5ca", Namespace: "ns",
			Labels: labels,
			Annotations: map[string]string{
				"kafkareplay.dev/group": "orders", "kafkareplay.dev/request": "a",
				"kafkareplay.dev/requested-by": "unknown", "kafkareplay.dev/resolved-target": "earliest",
				"kafkareplay.dev/spec-digest": "d0c7f3f0f879031e",
			},
		},
		Spec: batchv1.JobSpec{
			ActiveDeadlineSeconds: ptr.To[int64](600),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"kafkareplay.dev/request": "a"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: state.ContainerName, Image: "ghcr.io/kafka-replay/runner:latest",
				}}},
			},
		},
	}
}
