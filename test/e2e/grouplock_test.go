package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/test/cluster"
)

// Issue 27 on a real cluster: the group lock is released by what the
// cluster shows, and consumers never come back under a live runner.

// holdFirstCommit makes the Kafka cluster hold the first OffsetCommit of
// group until release is called (release is idempotent); held is closed
// once that commit is held, the runner then in the middle of it.
func (f *flowEnv) holdFirstCommit(group string) (held <-chan struct{}, release func()) {
	h, r := make(chan struct{}), make(chan struct{})
	var holdOnce, releaseOnce sync.Once
	fk := f.kafka.Fake
	fk.ControlKey(kmsg.OffsetCommit.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fk.KeepControl()
		if req.(*kmsg.OffsetCommitRequest).Group != group {
			return nil, nil, false
		}
		first := false
		holdOnce.Do(func() { first = true })
		if first {
			close(h)
			fk.SleepControl(func() { <-r })
		}
		return nil, nil, false
	})
	return h, func() { releaseOnce.Do(func() { close(r) }) }
}

// Case 1: a request whose runner image does not exist ends early
// (ImagePullFailed) with its Job suspended, and a request of the same group
// from another namespace, made meanwhile, then runs: nothing of the first
// holds the group once the Job controller has removed its pod.
func TestNeverStartedRunnerReleasesTheGroup(t *testing.T) {
	f := needFlow(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	const group = "svc-bad-image"
	nsX, nsY := "team-bad-image", "team-next"
	ensureNamespace(t, ctx, f, nsX)
	ensureNamespace(t, ctx, f, nsY)
	f.commitAtEnd(t, ctx, group)

	repo := cluster.RunnerImage[:strings.LastIndex(cluster.RunnerImage, ":")]
	f.apply(t, ctx, rrManifest(nsX, "bad-image", group, f.kafka.Bootstrap(), "position: Earliest", "  runner:\n    image: "+repo+":no-such-tag\n"))
	// Made while the first holds the group: it waits, then runs.
	f.apply(t, ctx, rrManifest(nsY, "next", group, f.kafka.Bootstrap(), "offset: 5", ""))

	bad := f.waitFinal(t, ctx, nsX, "bad-image")
	if _, reason := condition(bad, v1alpha1.ConditionSucceeded); reason != "ImagePullFailed" || bad.Status.Phase != v1alpha1.PhaseFailed {
		t.Fatalf("bad-image: %s (%s): %s", bad.Status.Phase, reason, bad.Status.Message)
	}
	next := f.waitFinal(t, ctx, nsY, "next")
	if next.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("next: %s: %s", next.Status.Phase, next.Status.Message)
	}
	if next.Status.StartTime == nil || bad.Status.CompletionTime == nil || next.Status.StartTime.Before(bad.Status.CompletionTime) {
		t.Fatalf("next started at %v, before bad-image ended at %v", next.Status.StartTime, bad.Status.CompletionTime)
	}
	got := f.committed(t, ctx, group)
	for p := int32(0); p < parts; p++ {
		if got[p] != 5 {
			t.Errorf("partition %d at %d, want 5", p, got[p])
		}
	}
}

// Friction 1 of issue 32 on a real kubelet, with the chart's RBAC: a
// request whose kafka.secretRef names a Secret that does not exist fails
// ConfigMissing, its message naming the Secret as the kubelet's FailedMount
// event does, rather than PodNotStarted at the start timeout (the pod
// itself only ever says ContainerCreating; the cause is in its events,
// which the launcher may list). A request of the same group from another
// namespace, made meanwhile, then runs. That ordinary run raises no Warning
// event (friction 6: PodWaiting while a pod starts as every pod does is
// Normal); the same query finds the failed request's Warning.
func TestMissingSecretFailsEarly(t *testing.T) {
	f := needFlow(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	const group, secret = "svc-no-secret", "no-such-secret"
	nsX, nsY := "team-no-secret", "team-after-secret"
	ensureNamespace(t, ctx, f, nsX)
	ensureNamespace(t, ctx, f, nsY)
	f.commitAtEnd(t, ctx, group)

	f.apply(t, ctx, strings.Replace(rrManifest(nsX, "no-secret", group, f.kafka.Bootstrap(), "position: Earliest", ""),
		"  kafka:\n", "  kafka:\n    secretRef:\n      name: "+secret+"\n", 1))
	f.apply(t, ctx, rrManifest(nsY, "after", group, f.kafka.Bootstrap(), "offset: 5", ""))

	bad := f.waitFinal(t, ctx, nsX, "no-secret")
	want := fmt.Sprintf("secret %q not found", secret)
	if _, reason := condition(bad, v1alpha1.ConditionSucceeded); reason != "ConfigMissing" || bad.Status.Phase != v1alpha1.PhaseFailed || !strings.Contains(bad.Status.Message, want) {
		t.Fatalf("no-secret: %s (%s): %s; want Failed (ConfigMissing) with %s", bad.Status.Phase, reason, bad.Status.Message, want)
	}
	t.Logf("no-secret: %s", bad.Status.Message)
	after := f.waitFinal(t, ctx, nsY, "after")
	if after.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("after: %s: %s", after.Status.Phase, after.Status.Message)
	}
	if after.Status.StartTime == nil || bad.Status.CompletionTime == nil || after.Status.StartTime.Before(bad.Status.CompletionTime) {
		t.Fatalf("after started at %v, before no-secret ended at %v", after.Status.StartTime, bad.Status.CompletionTime)
	}
	got := f.committed(t, ctx, group)
	for p := int32(0); p < parts; p++ {
		if got[p] != 5 {
			t.Errorf("partition %d at %d, want 5", p, got[p])
		}
	}

	if w := requestEvents(t, ctx, f, nsX, "no-secret", corev1.EventTypeWarning); len(w) == 0 {
		t.Errorf("no-secret: no Warning event, though it failed; the events query finds nothing")
	}
	if w := requestEvents(t, ctx, f, nsY, "after", corev1.EventTypeWarning); len(w) > 0 {
		t.Errorf("after: an ordinary run raised Warning events: %v", w)
	}
}

// requestEvents waits until the request's Finish event is written (the
// launcher records events asynchronously, in order), then returns its
// events of type typ as "Reason: note".
func requestEvents(t *testing.T, ctx context.Context, f *flowEnv, ns, name, typ string) []string {
	t.Helper()
	for {
		var list eventsv1.EventList
		if err := f.cl.List(ctx, &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		finished := false
		var of []string
		for _, e := range list.Items {
			if e.Regarding.Kind != "ReplayRequest" || e.Regarding.Name != name {
				continue
			}
			finished = finished || e.Action == "Finish"
			if e.Type == typ {
				of = append(of, e.Reason+": "+e.Note)
			}
		}
		if finished {
			return of
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s/%s: no Finish event", ns, name)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Cases 3 and 4: a request paused a Deployment (2 → 0); its runner is in the
// middle of its commit (the broker holds it) when its Job is deleted, and its
// pod stops in its grace period. The request does not end, and the
// Deployment stays at 0, while the pod is alive; once the commit is answered
// the runner ends, the request says what happened (the pod's result when the
// launcher read it in time, else that offsets may have changed), and only
// then are the consumers back.
func TestDeletedJobWaitsForItsRunner(t *testing.T) {
	f := needFlow(t)
	f.kafka.RequireFake(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	const ns, group, deploy = "team-deleted-job", "svc-deleted-job", "paused-consumer"
	ensureNamespace(t, ctx, f, ns)
	f.commitAtEnd(t, ctx, group)

	// Its pods never schedule: only its scale matters here.
	labels := map[string]string{"app": deploy}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: deploy, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"kafka-replay-e2e": "nowhere"},
					Containers:   []corev1.Container{{Name: "consumer", Image: cluster.RunnerImage, ImagePullPolicy: corev1.PullNever}},
				},
			},
		},
	}
	if err := f.cl.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.cl.Delete(context.Background(), d) })
	replicas := func() int32 {
		var s autoscalingv1.Scale
		if err := f.cl.SubResource("scale").Get(ctx, d, &s); err != nil {
			t.Fatal(err)
		}
		return s.Spec.Replicas
	}

	held, release := f.holdFirstCommit(group)
	defer release()
	f.apply(t, ctx, rrManifest(ns, "deleted-job", group, f.kafka.Bootstrap(), "offset: 10",
		"  whenGroupActive: Wait\n  waitTimeout: 2m\n  consumers:\n  - kind: Deployment\n    name: "+deploy+"\n"))
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("the runner never committed")
	}
	if n := replicas(); n != 0 {
		t.Fatalf("the consumer at %d replicas while the runner commits", n)
	}
	var rr v1alpha1.ReplayRequest
	if err := f.cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "deleted-job"}, &rr); err != nil || rr.Status.JobName == "" {
		t.Fatalf("request: %v, %+v", err, rr.Status)
	}
	var pods corev1.PodList
	if err := f.cl.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelRequest: "deleted-job"}); err != nil || len(pods.Items) != 1 {
		t.Fatalf("runner pods: %v, %d", err, len(pods.Items))
	}
	pod := pods.Items[0]
	// kubectl's default: background propagation; the garbage collector
	// deletes the pod, whose runner gets SIGTERM in the middle of its commit.
	if out, err := f.c.Kubectl(ctx, "-n", ns, "delete", "job", rr.Status.JobName, "--wait=false"); err != nil {
		t.Fatalf("delete job: %v\n%s", err, out)
	}
	// The request waits for the pod, and says why; the consumer stays
	// paused.
	for {
		var p corev1.Pod
		perr := f.cl.Get(ctx, client.ObjectKeyFromObject(&pod), &p)
		if err := f.cl.Get(ctx, client.ObjectKeyFromObject(&rr), &rr); err != nil {
			t.Fatal(err)
		}
		if _, reason := condition(&rr, v1alpha1.ConditionRunning); reason == "JobDeleted" && perr == nil && p.DeletionTimestamp != nil {
			break
		}
		if st, _ := condition(&rr, v1alpha1.ConditionSucceeded); st == "True" || st == "False" {
			t.Fatalf("the request ended while its runner pod is alive: %s", rr.Status.Message)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the request never said it waits for its runner: %+v", rr.Status)
		case <-time.After(200 * time.Millisecond):
		}
	}
	if n := replicas(); n != 0 {
		t.Fatalf("the consumer restored to %d while the runner pod is alive", n)
	}

	release()
	// Until the consumer is back, its pod must not be: whenever the
	// Deployment is seen at 2, the runner pod is gone or has ended.
	for replicas() != 2 {
		select {
		case <-ctx.Done():
			t.Fatal("the consumer was never restored")
		case <-time.After(100 * time.Millisecond):
		}
	}
	var p corev1.Pod
	if err := f.cl.Get(ctx, client.ObjectKeyFromObject(&pod), &p); err == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
		t.Fatalf("the consumer was restored while the runner pod is %s", p.Status.Phase)
	} else if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	final := f.waitFinal(t, ctx, ns, "deleted-job")
	_, reason := condition(final, v1alpha1.ConditionSucceeded)
	switch {
	case final.Status.Phase == v1alpha1.PhaseSucceeded && final.Status.Result != nil && strings.Contains(final.Status.Message, "deleted before it finished"):
		t.Logf("the pod's result was read: %s", final.Status.Message)
	case reason == "JobDeleted" && strings.Contains(final.Status.Message, "offsets may have changed"):
		t.Logf("the pod went before its result was read: %s", final.Status.Message)
	default:
		t.Fatalf("the request ended %s (%s): %s", final.Status.Phase, reason, final.Status.Message)
	}
	got := f.committed(t, ctx, group)
	for q := int32(0); q < parts; q++ {
		if got[q] != 10 {
			t.Errorf("partition %d at %d, want 10: the runner's commit in its grace period", q, got[q])
		}
	}
}
