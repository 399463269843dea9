package launcher

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/grouplock"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// The cache's transform keeps every answer the launcher reads from a cached
// runner Job or pod, and drops the rest of the spec (volumes, resources,
// security contexts, images: more than half of a cached runner object's
// memory).
func TestUnitSlimRunner(t *testing.T) {
	offsets := []v1alpha1.PartitionOffset{{Topic: "orders", Partition: 0, Offset: 5}, {Topic: "orders", Partition: 1, Offset: 7}}
	for _, rr := range []*v1alpha1.ReplayRequest{
		testutil.MakeRequest("shop", "rewind").Resolved("earliest").Secret("kafka-creds").Obj(),
		testutil.MakeRequest("shop", "dry").Resolved("earliest").Secret("kafka-creds").DryRun().Obj(),
		testutil.MakeRequest("shop", "explicit").Secret("kafka-creds").Offsets(offsets...).Resolved("offsets:2").Obj(),
	} {
		t.Run(rr.Name, func(t *testing.T) {
			job, err := BuildJob(rr, runnerjob.StageApply, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			job.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}
			pod := testutil.PodFor(job, job.Name+"-0")
			pod.Spec.NodeName = "node-1"
			pod.Annotations = job.Spec.Template.Annotations
			whole, wholePod := job.DeepCopy(), pod.DeepCopy()

			out, err := slimRunner(job)
			if err != nil {
				t.Fatal(err)
			}
			slim := out.(*batchv1.Job)
			out, err = slimRunner(pod)
			if err != nil {
				t.Fatal(err)
			}
			slimPod := out.(*corev1.Pod)

			if grouplock.PodSpecQueueKey(&slim.Spec.Template.Spec) != grouplock.PodSpecQueueKey(&whole.Spec.Template.Spec) || grouplock.PodSpecQueueKey(&whole.Spec.Template.Spec) == "" {
				t.Errorf("queue key %q, want %q", grouplock.PodSpecQueueKey(&slim.Spec.Template.Spec), grouplock.PodSpecQueueKey(&whole.Spec.Template.Spec))
			}
			if grouplock.PodSpecQueueKey(&slimPod.Spec) != grouplock.PodSpecQueueKey(&wholePod.Spec) {
				t.Errorf("pod queue key %q, want %q", grouplock.PodSpecQueueKey(&slimPod.Spec), grouplock.PodSpecQueueKey(&wholePod.Spec))
			}
			if runnerjob.DryRun(slim) != runnerjob.DryRun(whole) || runnerjob.DryRun(whole) != rr.Spec.DryRun {
				t.Errorf("DryRun = %v, want %v", runnerjob.DryRun(slim), runnerjob.DryRun(whole))
			}
			if slimPod.Spec.NodeName != "node-1" || slimPod.Labels[v1alpha1.LabelRunner] == "" || slim.Annotations[v1alpha1.AnnotationRequest] == "" {
				t.Errorf("metadata or node lost: pod %+v, job annotations %v", slimPod.ObjectMeta, slim.Annotations)
			}
			if _, ok := slimPod.Annotations[v1alpha1.AnnotationOffsets]; ok {
				t.Error("the pod keeps its offsets annotation")
			}
			if _, ok := whole.Spec.Template.Annotations[v1alpha1.AnnotationOffsets]; ok != (rr.Name == "explicit") {
				t.Errorf("fixture: offsets annotation on the template: %v", ok)
			}
			// What it drops: the fixture has each.
			w, c := &whole.Spec.Template.Spec, &whole.Spec.Template.Spec.Containers[0]
			if w.Volumes == nil || w.SecurityContext == nil || c.Resources.Limits == nil || c.Image == "" || c.SecurityContext == nil {
				t.Fatalf("fixture lacks what is dropped: %+v", w)
			}
			for _, spec := range []*corev1.PodSpec{&slim.Spec.Template.Spec, &slimPod.Spec} {
				sc := &spec.Containers[0]
				if spec.Volumes != nil || spec.SecurityContext != nil || sc.Resources.Limits != nil || sc.Image != "" || sc.SecurityContext != nil || sc.VolumeMounts != nil {
					t.Errorf("not slimmed: %+v", spec)
				}
			}
			if len(slim.ManagedFields) != 0 || slim.Spec.Template.Annotations != nil {
				t.Errorf("managed fields or template metadata kept: %+v", slim.ObjectMeta)
			}
		})
	}
}
