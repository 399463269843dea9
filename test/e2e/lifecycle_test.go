package e2e

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// The group lock on a real cluster, where a kubelet runs the runner and the
// garbage collector removes what is deleted: a replay of a group never
// starts while a runner pod of another replay of that group is active or
// terminating.

// runningRunner waits until the runner pod of a request runs. The runner
// then waits (whenGroupActive: Wait) for the live consumer to leave.
func (f *flowEnv) runningRunner(t *testing.T, ctx context.Context, ns, name string) *corev1.Pod {
	t.Helper()
	for {
		var pods corev1.PodList
		if err := f.cl.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelRequest: name}); err != nil {
			t.Fatal(err)
		}
		for i := range pods.Items {
			if pods.Items[i].Status.Phase == corev1.PodRunning {
				return &pods.Items[i]
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the runner pod of %s/%s never ran", ns, name)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitingFor waits until a request says it waits for its group, and
// asserts it has no Job.
func (f *flowEnv) waitingFor(t *testing.T, ctx context.Context, ns, name string) {
	t.Helper()
	for {
		var rr v1alpha1.ReplayRequest
		if err := f.cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &rr); err != nil {
			t.Fatal(err)
		}
		if rr.Status.JobName != "" {
			t.Fatalf("%s/%s started (Job %s) while its group is held", ns, name, rr.Status.JobName)
		}
		if _, reason := condition(&rr, v1alpha1.ConditionAccepted); reason == "WaitingForGroup" {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s/%s never said it waits: %+v", ns, name, rr.Status)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Done when: a runbook Job created while a request of the same group runs
// waits (suspended), then runs once the request has finished.
func TestRunbookJobWaitsForRunningRequest(t *testing.T) {
	f := needFlow(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	const ns, group, name = "team-a", "svc-runbook", "before-the-runbook"
	ensureNamespace(t, ctx, f, ns)
	f.commitAtEnd(t, ctx, group)
	m, err := f.kafka.Join(ctx, group, "still-consuming", topic)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Leave()
	// The chart's runbook "rewind" moves svc-runbook on the same Kafka to
	// offset 10; this request moves it to the start first.
	f.apply(t, ctx, rrManifest(ns, name, group, f.kafka.Bootstrap(), "position: Earliest", "  whenGroupActive: Wait\n  waitTimeout: 3m\n"))
	f.runningRunner(t, ctx, ns, name)

	var cjs batchv1.CronJobList
	if err := f.cl.List(ctx, &cjs, client.InNamespace(releaseNS), client.MatchingLabels{v1alpha1.LabelRunbook: "rewind"}); err != nil || len(cjs.Items) != 1 {
		t.Fatalf("runbook CronJob: %d found, %v", len(cjs.Items), err)
	}
	const jobName = "rewind-while-busy"
	if _, err := f.c.Kubectl(ctx, "-n", releaseNS, "create", "job", "--from=cronjob/"+cjs.Items[0].Name, jobName); err != nil {
		t.Fatal(err)
	}
	// The launcher has seen it and holds it back: its WaitingForGroup event,
	// and still suspended, with no pod.
	for !hasEvent(t, ctx, f, releaseNS, jobName, "WaitingForGroup") {
		select {
		case <-ctx.Done():
			t.Fatal("the launcher never queued the runbook Job")
		case <-time.After(200 * time.Millisecond):
		}
	}
	var job batchv1.Job
	if err := f.cl.Get(ctx, client.ObjectKey{Namespace: releaseNS, Name: jobName}, &job); err != nil {
		t.Fatal(err)
	}
	if job.Spec.Suspend == nil || !*job.Spec.Suspend || job.Status.Active != 0 {
		t.Fatalf("the runbook Job runs while a request of its group does: suspend %v, active %d", job.Spec.Suspend, job.Status.Active)
	}

	m.Leave()
	rr := f.waitFinal(t, ctx, ns, name)
	if rr.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("request: %s: %s", rr.Status.Phase, rr.Status.Message)
	}
	job = *f.recordedJob(t, ctx, releaseNS, jobName)
	if job.Annotations[v1alpha1.AnnotationOutcome] != "Succeeded" || job.Annotations[v1alpha1.AnnotationStartedAt] == "" {
		t.Fatalf("runbook Job: %v", job.Annotations)
	}
	// The runbook ran after the request: its offset is the last word.
	got := f.committed(t, ctx, group)
	for p := int32(0); p < parts; p++ {
		if got[p] != 10 {
			t.Errorf("partition %d at %d, want 10 (the runbook after the request)", p, got[p])
		}
	}
}

// Done when: a request deleted with --cascade=orphan mid-run keeps the next
// request of its group waiting until the old runner pod is gone.
func TestOrphanedRunnerHoldsGroup(t *testing.T) {
	f := needFlow(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	const ns, group = "team-a", "svc-orphan"
	ensureNamespace(t, ctx, f, ns)
	f.commitAtEnd(t, ctx, group)
	m, err := f.kafka.Join(ctx, group, "still-consuming", topic)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Leave()
	f.apply(t, ctx, rrManifest(ns, "orphaned", group, f.kafka.Bootstrap(), "position: Earliest", "  whenGroupActive: Wait\n  waitTimeout: 3m\n"))
	pod := f.runningRunner(t, ctx, ns, "orphaned")
	// Earliest, then 5: next moves the group forward.
	f.apply(t, ctx, rrManifest(ns, "next", group, f.kafka.Bootstrap(), "offset: 5", "  whenGroupActive: Wait\n  waitTimeout: 3m\n  limits:\n    allowSkip: true\n"))
	f.waitingFor(t, ctx, ns, "next")

	if _, err := f.c.Kubectl(ctx, "-n", ns, "delete", "replayrequest", "orphaned", "--cascade=orphan", "--wait=true"); err != nil {
		t.Fatal(err)
	}
	// The request is gone, its runner is not: next still waits.
	var p corev1.Pod
	if err := f.cl.Get(ctx, client.ObjectKeyFromObject(pod), &p); err != nil || p.Status.Phase != corev1.PodRunning {
		t.Fatalf("the orphaned runner pod: %v, phase %s", err, p.Status.Phase)
	}
	f.waitingFor(t, ctx, ns, "next")

	m.Leave() // the orphaned runner commits and ends; then next runs
	rr := f.waitFinal(t, ctx, ns, "next")
	if rr.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("next: %s: %s", rr.Status.Phase, rr.Status.Message)
	}
	if err := f.cl.Get(ctx, client.ObjectKeyFromObject(pod), &p); err == nil && p.Status.Phase == corev1.PodRunning {
		t.Fatal("next ran while the orphaned runner pod still ran")
	}
	got := f.committed(t, ctx, group)
	for q := int32(0); q < parts; q++ {
		if got[q] != 5 {
			t.Errorf("partition %d at %d, want 5 (next after the orphaned runner)", q, got[q])
		}
	}
}

// hasEvent reports whether an event with reason is about the named object.
func hasEvent(t *testing.T, ctx context.Context, f *flowEnv, ns, name, reason string) bool {
	t.Helper()
	var list eventsv1.EventList
	if err := f.cl.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			return true
		}
	}
	return false
}
