package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kafka-replay/kafka-replay/test/cluster"
)

// argoStepPod turns the runner step of docs/argo-workflowtemplate.yaml into
// the pod Argo would run: the same container, volumes and security context,
// with the workflow's parameters filled in.
func argoStepPod(t *testing.T, name string, params map[string]string) *corev1.Pod {
	t.Helper()
	root, err := cluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "docs", "argo-workflowtemplate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(raw), "{{workflow.uid}}", "e2e-"+name)
	for k, v := range params {
		text = strings.ReplaceAll(text, "{{workflow.parameters."+k+"}}", v)
	}
	var wt struct {
		Spec struct {
			Templates []struct {
				Name            string                     `json:"name"`
				Container       *corev1.Container          `json:"container"`
				Volumes         []corev1.Volume            `json:"volumes"`
				SecurityContext *corev1.PodSecurityContext `json:"securityContext"`
			} `json:"templates"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(text), &wt); err != nil {
		t.Fatal(err)
	}
	for _, tp := range wt.Spec.Templates {
		if tp.Name != "kafka-replay-runner" || tp.Container == nil {
			continue
		}
		c := *tp.Container
		c.Name = "main"
		// Argo's wait container, which collects the output file.
		wait := corev1.Container{
			Name: "wait", Image: argoWaitImage, ImagePullPolicy: corev1.PullNever,
			Args: []string{"/tmp/result.json", "2m"},
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: new(bool),
				ReadOnlyRootFilesystem:   ptrTrue(),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
		}
		for _, m := range c.VolumeMounts {
			if m.MountPath == "/tmp" {
				m.ReadOnly = true
				wait.VolumeMounts = append(wait.VolumeMounts, m)
			}
		}
		if strings.Contains(c.Image, "{{") || strings.Contains(strings.Join(envValues(c.Env), " "), "{{workflow.") {
			t.Fatalf("unfilled parameters in the step: %+v", c)
		}
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argo-sim"},
			Spec: corev1.PodSpec{
				RestartPolicy:                corev1.RestartPolicyNever,
				AutomountServiceAccountToken: new(bool),
				SecurityContext:              tp.SecurityContext,
				Volumes:                      tp.Volumes,
				Containers:                   []corev1.Container{c, wait},
			},
		}
	}
	t.Fatal("no kafka-replay-runner template with a container")
	return nil
}

const argoWaitImage = "localhost/kafka-replay-e2e-argowait:1"

func ptrTrue() *bool { b := true; return &b }

func envValues(env []corev1.EnvVar) []string {
	var out []string
	for _, e := range env {
		out = append(out, e.Value)
	}
	return out
}

// Scenario 3: the Argo step's container spec, run as a pod, writes its
// output file, on success and with a failing target alike.
func TestArgoStep(t *testing.T) {
	f := needFlow(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ensureNamespace(t, ctx, f, "argo-sim")
	archive := filepath.Join(t.TempDir(), "argowait.tar")
	if err := cluster.BuildGoImage(ctx, "github.com/kafka-replay/kafka-replay/test/e2e/internal/argowait", argoWaitImage, archive); err != nil {
		t.Fatal(err)
	}
	if err := f.c.ImportImage(ctx, archive); err != nil {
		t.Fatal(err)
	}
	f.commitAtEnd(t, ctx, "svc-argo")
	for _, tc := range []struct {
		name, target string
		wantPhase    corev1.PodPhase
	}{
		{"argo-ok", "earliest", corev1.PodSucceeded},
		{"argo-bad-target", "time:not-a-time", corev1.PodFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := argoStepPod(t, tc.name, map[string]string{
				"bootstrap-servers": f.kafka.Bootstrap(), "group": "svc-argo", "target": tc.target,
				"topics": topic, "dry-run": "false", "wait-for-empty": "0s", "kafka-secret": "kafka-credentials",
				"runner-image": cluster.RunnerImage,
			})
			if err := f.cl.Create(ctx, pod); err != nil {
				t.Fatal(err)
			}
			for pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
				select {
				case <-ctx.Done():
					t.Fatalf("pod %s: %v (phase %s)", tc.name, ctx.Err(), pod.Status.Phase)
				case <-time.After(200 * time.Millisecond):
				}
				if err := f.cl.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
					t.Fatal(err)
				}
			}
			if pod.Status.Phase != tc.wantPhase {
				t.Errorf("phase %s, want %s", pod.Status.Phase, tc.wantPhase)
			}
			b, err := f.c.Kubectl(ctx, "-n", "argo-sim", "logs", tc.name, "-c", "wait")
			if err != nil {
				t.Fatalf("output file, as the wait container read it: %v", err)
			}
			var res map[string]any
			if err := json.Unmarshal([]byte(b), &res); err != nil {
				t.Fatalf("output file is not JSON: %v: %s", err, b)
			}
			t.Logf("%s: output parameter result = %s", tc.name, strings.TrimSpace(b))
			if tc.wantPhase == corev1.PodFailed && res["error"] == nil {
				t.Errorf("a failing run's result has no error: %s", b)
			}
		})
	}
	got := f.committed(t, ctx, "svc-argo")
	for p := int32(0); p < parts; p++ {
		if got[p] != 0 {
			t.Errorf("partition %d at %d after the earliest step, want 0", p, got[p])
		}
	}
}
