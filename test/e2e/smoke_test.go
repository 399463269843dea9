package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/test/cluster"
)

// TestSmoke: the node is Ready, and a Job whose pod runs under the
// restricted security context calls the API server through the kubernetes
// Service and completes, with its logs and termination message readable.
func TestSmoke(t *testing.T) {
	c := needCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	const image = "localhost/kafka-replay-e2e-incluster:1"
	archive := filepath.Join(t.TempDir(), "incluster.tar")
	if err := cluster.BuildGoImage(ctx, "github.com/kafka-replay/kafka-replay/test/e2e/internal/incluster", image, archive); err != nil {
		t.Fatal(err)
	}
	if err := c.ImportImage(ctx, archive); err != nil {
		t.Fatal(err)
	}
	cl, err := c.Client()
	if err != nil {
		t.Fatal(err)
	}
	var node corev1.Node
	if err := cl.Get(ctx, client.ObjectKey{Name: "kafka-replay-e2e"}, &node); err != nil {
		t.Fatal(err)
	}
	t.Logf("node %s: kubelet %s, %s", node.Name, node.Status.NodeInfo.KubeletVersion, node.Status.NodeInfo.ContainerRuntimeVersion)

	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "smoke", Namespace: "default"},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				SecurityContext: &corev1.PodSecurityContext{
					RunAsNonRoot:   ptr.To(true),
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
				Containers: []corev1.Container{{
					Name: "main", Image: image, ImagePullPolicy: corev1.PullNever,
					SecurityContext: &corev1.SecurityContext{
						AllowPrivilegeEscalation: ptr.To(false),
						ReadOnlyRootFilesystem:   ptr.To(true),
						Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					},
				}},
			}},
		},
	}
	t0 := time.Now()
	if err := cl.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	if err := waitJob(ctx, cl, job); err != nil {
		out, _ := c.Kubectl(ctx, "describe", "pods", "-l", "job-name=smoke")
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("Job create -> Complete: %s", time.Since(t0).Round(10*time.Millisecond))

	var pods corev1.PodList
	if err := cl.List(ctx, &pods, client.InNamespace("default"), client.MatchingLabels{"job-name": "smoke"}); err != nil || len(pods.Items) != 1 {
		t.Fatalf("pods of the Job: %d, %v", len(pods.Items), err)
	}
	st := pods.Items[0].Status.ContainerStatuses
	if len(st) != 1 || st[0].State.Terminated == nil || !strings.Contains(st[0].State.Terminated.Message, "200 OK") {
		t.Fatalf("termination message: %+v", st)
	}
	t.Logf("termination message: %s", st[0].State.Terminated.Message)
	logs, err := c.Kubectl(ctx, "logs", "job/smoke")
	if err != nil || !strings.Contains(logs, "200 OK") {
		t.Fatalf("kubectl logs: %q %v", logs, err)
	}
}

// waitJob waits until job completes, or fails.
func waitJob(ctx context.Context, cl client.Client, job *batchv1.Job) error {
	for {
		var j batchv1.Job
		if err := cl.Get(ctx, client.ObjectKeyFromObject(job), &j); err != nil {
			return err
		}
		for _, cond := range j.Status.Conditions {
			if cond.Status != corev1.ConditionTrue {
				continue
			}
			switch cond.Type {
			case batchv1.JobComplete:
				return nil
			case batchv1.JobFailed:
				return &jobFailed{cond.Reason + ": " + cond.Message}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

type jobFailed struct{ msg string }

func (e *jobFailed) Error() string { return "job failed: " + e.msg }
