package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// A SIGTERM during the commit does not cut it: the runner finishes the commit
// and reads it back, and the kubelet's SIGKILL waits for it. The broker holds
// the runner's commit for 40 s while its pod is deleted; the Kubernetes
// default grace period (30 s) would kill the runner before the commit's
// answer, this pod's (the runner's --timeout and a margin) does not: 40 s
// after the SIGTERM the runner still runs, and after the answer it reads its
// commit back.
func TestSIGTERMDuringTheCommitDoesNotCutIt(t *testing.T) {
	f := needFlow(t)
	f.kafka.RequireFake(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const (
		ns    = "team-grace"
		group = "svc-grace"
		hold  = 40 * time.Second
	)
	ensureNamespace(t, ctx, f, ns)
	f.commitAtEnd(t, ctx, group)

	var (
		mu         sync.Mutex
		releasedAt time.Time
		readBack   = make(chan time.Time, 1)
	)
	held, release := f.holdFirstCommit(group)
	defer release()
	fk := f.kafka.Fake
	fk.ControlKey(kmsg.OffsetFetch.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fk.KeepControl()
		r := req.(*kmsg.OffsetFetchRequest)
		asks := r.Group == group
		for _, g := range r.Groups {
			asks = asks || g.Group == group
		}
		mu.Lock()
		after := !releasedAt.IsZero()
		mu.Unlock()
		if asks && after {
			select {
			case readBack <- time.Now():
			default:
			}
		}
		return nil, nil, false
	})

	f.apply(t, ctx, rrManifest(ns, "grace", group, f.kafka.Bootstrap(), "offset: 10", ""))
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("the runner never committed")
	}
	var pods corev1.PodList
	if err := f.cl.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelRequest: "grace"}); err != nil || len(pods.Items) != 1 {
		t.Fatalf("runner pods: %v, %d", err, len(pods.Items))
	}
	pod := pods.Items[0].Name
	// SIGTERM now, while the commit waits for its answer.
	if out, err := f.c.Kubectl(ctx, "-n", ns, "delete", "pod", pod, "--wait=false"); err != nil {
		t.Fatalf("delete pod: %v\n%s", err, out)
	}
	deleted := time.Now()
	select {
	case <-time.After(hold):
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	// Past the default grace period the runner still runs, its commit
	// unanswered: the kubelet has not killed it.
	var p corev1.Pod
	if err := f.cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: pod}, &p); err != nil {
		t.Fatalf("the runner pod is gone %s after its SIGTERM, its commit unanswered: %v", time.Since(deleted).Round(time.Second), err)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil {
			t.Fatalf("the runner is not running %s after its SIGTERM, its commit unanswered: %+v", time.Since(deleted).Round(time.Second), cs.State)
		}
	}
	mu.Lock()
	releasedAt = time.Now()
	mu.Unlock()
	release()

	select {
	case at := <-readBack:
		t.Logf("the runner read its commit back %s after its SIGTERM", at.Sub(deleted).Round(time.Second))
	case <-time.After(2 * time.Minute):
		out, _ := f.c.Kubectl(context.Background(), "-n", ns, "get", "pods,jobs", "-o", "wide")
		t.Fatalf("no read-back after the commit's answer: the runner was killed during its commit\n%s", out)
	}
	got := f.committed(t, ctx, group)
	for p := int32(0); p < parts; p++ {
		if got[p] != 10 {
			t.Errorf("partition %d at %d, want 10", p, got[p])
		}
	}
}
