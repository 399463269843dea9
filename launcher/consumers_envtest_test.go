package launcher_test

// Consumers on envtest: paused before the runner, restored after it in every
// outcome, across launcher restarts, never over someone else's change; KEDA
// against KEDA's own CRD.

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kafka-replay/kafka-replay/runner/report"

	"github.com/kafka-replay/kafka-replay/launcher"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/consumers"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// kedaModule is the KEDA release whose CRDs the tests install, from the Go
// module proxy (a module zip carries its config/ directory). KEDA is not a
// dependency of the module: the launcher handles ScaledObjects unstructured.
const kedaModule = "github.com/kedacore/keda/v2@v2.17.2"

var (
	kedaOnce sync.Once
	kedaErr  error
)

// installKEDA installs KEDA's ScaledObject CRD into the shared control plane
// once, or skips the test when the module cannot be had.
func installKEDA(t *testing.T) {
	t.Helper()
	kedaOnce.Do(func() {
		out, err := exec.Command("go", "mod", "download", "-json", kedaModule).Output()
		if err != nil {
			kedaErr = fmt.Errorf("go mod download %s: %w", kedaModule, err)
			return
		}
		var mod struct{ Dir string }
		if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
			kedaErr = fmt.Errorf("go mod download %s: no Dir in %s", kedaModule, out)
			return
		}
		_, kedaErr = envtest.InstallCRDs(adminCfg, envtest.CRDInstallOptions{
			Paths:              []string{filepath.Join(mod.Dir, "config", "crd", "bases", "keda.sh_scaledobjects.yaml")},
			ErrorIfPathMissing: true,
		})
	})
	if kedaErr != nil {
		t.Skipf("KEDA CRD: %v", kedaErr)
	}
}

func consumerPodTemplate(app string) corev1.PodTemplateSpec { return testutil.ConsumerPodTemplate(app) }

func makeDeployment(t *testing.T, ns, name string, replicas int32, labels map[string]string) *appsv1.Deployment {
	t.Helper()
	d := testutil.Deployment(ns, name, replicas, labels)
	create(t, d)
	return d
}

func makeStatefulSet(t *testing.T, ns, name string, replicas int32) *appsv1.StatefulSet {
	t.Helper()
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To(replicas),
			ServiceName: name,
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template:    consumerPodTemplate(name),
		},
	}
	create(t, s)
	return s
}

func makeScaledObject(t *testing.T, ns, name, deployment string, annotations map[string]string) {
	t.Helper()
	so := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"scaleTargetRef": map[string]any{"name": deployment},
			"triggers":       []any{map[string]any{"type": "cron", "metadata": map[string]any{"timezone": "UTC", "start": "0 8 * * *", "end": "0 18 * * *", "desiredReplicas": "3"}}},
		},
	}}
	so.SetGroupVersionKind(consumers.ScaledObjectGVK)
	so.SetNamespace(ns)
	so.SetName(name)
	so.SetAnnotations(annotations)
	create(t, so)
}

func scaledObjectAnnotations(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	so := &unstructured.Unstructured{}
	so.SetGroupVersionKind(consumers.ScaledObjectGVK)
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, so); err != nil {
		t.Fatal(err)
	}
	return so.GetAnnotations()
}

// replicasOf reads a workload's scale (its spec.replicas).
func replicasOf(t *testing.T, obj client.Object) int32 {
	t.Helper()
	var s autoscalingv1.Scale
	if err := k8s.SubResource("scale").Get(context.Background(), obj, &s); err != nil {
		t.Fatal(err)
	}
	return s.Spec.Replicas
}

func setReplicas(t *testing.T, obj client.Object, n int32) {
	t.Helper()
	patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, n))
	if err := k8s.SubResource("scale").Patch(context.Background(), obj, patch, &client.SubResourcePatchOptions{SubResourceBody: &autoscalingv1.Scale{}}); err != nil {
		t.Fatal(err)
	}
}

func waitReplicas(t *testing.T, obj client.Object, want int32) {
	t.Helper()
	eventually(t, 20*time.Second, fmt.Sprintf("%s at %d replicas", obj.GetName(), want), func() error {
		if got := replicasOf(t, obj); got != want {
			return fmt.Errorf("%d replicas", got)
		}
		return nil
	})
}

// waitRestored waits for the ConsumersRestored condition and the finalizer
// to go, and returns the request (nil once a deleted request is gone).
func waitRestored(t *testing.T, rr *v1alpha1.ReplayRequest, reason string) *v1alpha1.ReplayRequest {
	t.Helper()
	var cur *v1alpha1.ReplayRequest
	eventually(t, 30*time.Second, rr.Name+" consumers restored", func() error {
		cur = getRR(t, rr)
		c := condition(cur, v1alpha1.ConditionConsumersRestored)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason {
			return fmt.Errorf("ConsumersRestored %+v, status %+v", c, cur.Status)
		}
		if controllerutil.ContainsFinalizer(cur, launcher.Finalizer) {
			return fmt.Errorf("finalizer still there")
		}
		return nil
	})
	return cur
}

// waitPaused waits until the launcher has paused the consumers and created
// the Job, and returns both.
func waitPaused(t *testing.T, rr *v1alpha1.ReplayRequest) (*v1alpha1.ReplayRequest, *batchv1.Job) {
	t.Helper()
	job := waitJob(t, rr)
	var cur *v1alpha1.ReplayRequest
	eventually(t, 20*time.Second, rr.Name+" consumers paused", func() error {
		cur = getRR(t, rr)
		if c := condition(cur, v1alpha1.ConditionConsumersPaused); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("ConsumersPaused %+v", c)
		}
		return nil
	})
	return cur, job
}

func consumerRequest(ns, name, group string, refs ...v1alpha1.ConsumerRef) *v1alpha1.ReplayRequest {
	return testutil.MakeRequest(ns, name).Group(group).ShiftBy(-10).Wait(time.Minute).Consumers(refs...).Obj()
}

func deploymentRef(name string) v1alpha1.ConsumerRef {
	return v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerDeployment, Name: name}
}

// Pause and restore after success, failure and the request's deletion: the
// record comes first, every workload is at 0 while the runner runs, and is
// back at its recorded count after, the group held until then.
func TestEnvtestConsumersPausedAndRestored(t *testing.T) {
	env(t)
	installKEDA(t) // so that the launcher's ScaledObject lookups are real ones
	ns := newNamespace(t, nil)
	ctx := context.Background()
	startLauncher(t, testOptions(), 4)

	cases := []struct {
		name string
		end  func(t *testing.T, rr *v1alpha1.ReplayRequest, job *batchv1.Job)
	}{
		{"success", func(t *testing.T, _ *v1alpha1.ReplayRequest, job *batchv1.Job) {
			res := testutil.Result("g", report.ExitOK, 10)
			res.RunID = string(job.UID)
			runPod(t, job, 0, 0, testutil.Compact(res))
			finishJob(t, job, "")
		}},
		{"failure", func(t *testing.T, _ *v1alpha1.ReplayRequest, job *batchv1.Job) {
			runPod(t, job, 0, int32(report.ExitKafkaError), "")
			finishJob(t, job, batchv1.JobReasonBackoffLimitExceeded)
		}},
		{"deletion", func(t *testing.T, rr *v1alpha1.ReplayRequest, _ *batchv1.Job) {
			if err := k8s.Delete(ctx, rr); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dep := makeDeployment(t, ns, "consumer-"+c.name, 3, nil)
			sts := makeStatefulSet(t, ns, "store-"+c.name, 2)
			group := "g-" + c.name
			rr := consumerRequest(ns, "replay-"+c.name, group, deploymentRef(dep.Name), v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerStatefulSet, Name: sts.Name})
			create(t, rr)
			cur, job := waitPaused(t, rr)
			if replicasOf(t, dep) != 0 || replicasOf(t, sts) != 0 {
				t.Fatalf("running with consumers at %d and %d replicas", replicasOf(t, dep), replicasOf(t, sts))
			}
			got := map[string]int32{}
			for _, s := range cur.Status.Consumers {
				if s.Method != v1alpha1.PauseScale || s.State != v1alpha1.ConsumerPaused || s.Replicas == nil {
					t.Fatalf("consumer status %+v", s)
				}
				got[s.Workload] = *s.Replicas
			}
			if got["Deployment/"+dep.Name] != 3 || got["StatefulSet/"+sts.Name] != 2 {
				t.Fatalf("recorded %v", got)
			}
			if msg := condition(cur, v1alpha1.ConditionConsumersPaused).Message; !strings.Contains(msg, "Deployment/"+dep.Name+" (3 replicas)") {
				t.Fatalf("ConsumersPaused says %q", msg)
			}
			waitEvent(t, ns, rr.Name, v1alpha1.ConditionConsumersPaused)

			// The group is held: another request of it waits.
			next := testutil.MakeRequest(ns, "next-"+c.name).Group(group).Obj()
			create(t, next)
			expectWaiting(t, next)

			c.end(t, rr, job)
			if c.name == "deletion" {
				// The launcher deletes the Job; its pod never existed,
				// so the request restores and goes.
				eventually(t, 30*time.Second, "deleted request gone", func() error {
					return client.IgnoreNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(rr), &v1alpha1.ReplayRequest{}))
				})
				waitEvent(t, ns, rr.Name, v1alpha1.ConditionConsumersRestored)
			} else {
				done := waitRestored(t, rr, state.ReasonRestored)
				if done.Status.Phase != map[string]v1alpha1.Phase{"success": v1alpha1.PhaseSucceeded, "failure": v1alpha1.PhaseFailed}[c.name] {
					t.Fatalf("phase %s", done.Status.Phase)
				}
				if p := condition(done, v1alpha1.ConditionConsumersPaused); p.Status != metav1.ConditionFalse {
					t.Fatalf("ConsumersPaused %+v after the restore", p)
				}
				waitEvent(t, ns, rr.Name, v1alpha1.ConditionConsumersRestored)
			}
			if replicasOf(t, dep) != 3 || replicasOf(t, sts) != 2 {
				t.Fatalf("restored to %d and %d replicas, want 3 and 2", replicasOf(t, dep), replicasOf(t, sts))
			}
			waitJob(t, next) // the group moves on only after the restore
		})
	}
}

// A workload scaled by someone else while paused is left as they set it,
// and the request says so; the other consumer is restored.
func TestEnvtestConsumerScaledBySomeoneElseIsNotOverwritten(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 2)
	a := makeDeployment(t, ns, "a", 3, nil)
	b := makeDeployment(t, ns, "b", 1, nil)
	rr := consumerRequest(ns, "replay", "g", deploymentRef("a"), deploymentRef("b"))
	create(t, rr)
	_, job := waitPaused(t, rr)
	setReplicas(t, a, 5) // an operator, meanwhile
	runPod(t, job, 0, int32(report.ExitKafkaError), "")
	finishJob(t, job, batchv1.JobReasonBackoffLimitExceeded)

	done := waitRestored(t, rr, state.ReasonNotRestored)
	if msg := condition(done, v1alpha1.ConditionConsumersRestored).Message; !strings.Contains(msg, "Deployment/a was scaled to 5 by someone else") {
		t.Fatalf("ConsumersRestored says %q", msg)
	}
	if replicasOf(t, a) != 5 || replicasOf(t, b) != 1 {
		t.Fatalf("a at %d (want 5, someone else's), b at %d (want 1)", replicasOf(t, a), replicasOf(t, b))
	}
	for _, c := range done.Status.Consumers {
		want := map[string]v1alpha1.ConsumerState{"a": v1alpha1.ConsumerNotRestored, "b": v1alpha1.ConsumerRestored}[c.Name]
		if c.State != want {
			t.Fatalf("%s state %s, want %s", c.Name, c.State, want)
		}
	}
}

// KEDA: a Deployment that a ScaledObject targets is paused through it, with
// both annotations, its scale untouched (KEDA does the scaling); after the
// replay the annotations go, or return to what they were.
func TestEnvtestConsumersKEDA(t *testing.T) {
	env(t)
	installKEDA(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 2)

	cases := []struct {
		name   string
		before map[string]string
		ref    func(deployment, so string) v1alpha1.ConsumerRef
	}{
		{"Deployment named, no annotations before", nil, func(d, _ string) v1alpha1.ConsumerRef { return deploymentRef(d) }},
		{"ScaledObject named, annotations before", map[string]string{consumers.AnnotationKEDAPaused: "false", consumers.AnnotationKEDAPausedReplicas: "2"},
			func(_, so string) v1alpha1.ConsumerRef {
				return v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerScaledObject, Name: so}
			}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dep := makeDeployment(t, ns, fmt.Sprintf("consumer-%d", i), 3, nil)
			so := fmt.Sprintf("so-%d", i)
			makeScaledObject(t, ns, so, dep.Name, c.before)
			rr := consumerRequest(ns, fmt.Sprintf("replay-%d", i), fmt.Sprintf("g-%d", i), c.ref(dep.Name, so))
			create(t, rr)
			cur, job := waitPaused(t, rr)
			ann := scaledObjectAnnotations(t, ns, so)
			if ann[consumers.AnnotationKEDAPaused] != "true" || ann[consumers.AnnotationKEDAPausedReplicas] != "0" {
				t.Fatalf("ScaledObject annotations while paused: %v", ann)
			}
			if n := replicasOf(t, dep); n != 3 {
				t.Fatalf("the Deployment's scale was changed to %d: KEDA scales it", n)
			}
			s := cur.Status.Consumers[0]
			if s.Method != v1alpha1.PauseKEDA || s.ScaledObject != so || s.Workload != "Deployment/"+dep.Name {
				t.Fatalf("consumer status %+v", s)
			}
			res := testutil.Result("g", report.ExitOK, 10)
			res.RunID = string(job.UID)
			runPod(t, job, 0, 0, testutil.Compact(res))
			finishJob(t, job, "")
			waitRestored(t, rr, state.ReasonRestored)
			after := scaledObjectAnnotations(t, ns, so)
			for _, k := range []string{consumers.AnnotationKEDAPaused, consumers.AnnotationKEDAPausedReplicas} {
				want, had := c.before[k]
				got, has := after[k]
				if had != has || got != want {
					t.Fatalf("%s after the restore: %q (present %v), want %q (present %v)", k, got, has, want, had)
				}
			}
		})
	}
}

// A launcher stopped in the middle of any phase leaves a state its
// successor finishes from: the record was written before anything changed.
// Each case is the state a launcher stopped at that point leaves (the
// request's status as last written, the workload as last changed), made
// while no launcher runs, and a new launcher must end with the workload
// restored to its recorded count.
func TestEnvtestConsumersRestartMidPhase(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	ctx := context.Background()

	type stoppedAt struct {
		name     string
		consumer v1alpha1.ConsumerState
		replicas int32 // the workload as the stopped launcher left it
		finished bool
		started  bool
	}
	cases := []stoppedAt{
		{"after the record, before the pause", v1alpha1.ConsumerRecorded, 3, false, false},
		{"after the pause, before its status write", v1alpha1.ConsumerRecorded, 0, false, false},
		{"after the finish, before the restore", v1alpha1.ConsumerPaused, 0, true, true},
		{"after the restore, before its status write", v1alpha1.ConsumerPaused, 3, true, true},
	}
	var rrs []*v1alpha1.ReplayRequest
	var deps []*appsv1.Deployment
	for i, c := range cases {
		dep := makeDeployment(t, ns, fmt.Sprintf("consumer-%d", i), c.replicas, nil)
		rr := consumerRequest(ns, fmt.Sprintf("replay-%d", i), fmt.Sprintf("g-%d", i), deploymentRef(dep.Name))
		rr.Finalizers = []string{launcher.Finalizer}
		create(t, rr)
		rr.Status.ResolvedTarget = "shift:-10"
		state.SetCondition(rr, v1alpha1.ConditionAccepted, metav1.ConditionTrue, state.ReasonAccepted, "target resolved to shift:-10")
		rr.Status.Consumers = []v1alpha1.ConsumerStatus{{
			Kind: v1alpha1.ConsumerDeployment, Name: dep.Name, Method: v1alpha1.PauseScale,
			Workload: "Deployment/" + dep.Name, Replicas: ptr.To[int32](3), State: c.consumer,
		}}
		if c.started {
			rr.Status.JobName = runnerjob.Name(rr, runnerjob.StageApply)
			rr.Status.StartTime = &metav1.Time{Time: time.Now()}
		}
		if c.finished {
			launcher.FinishRequest(rr, record.Outcome{Reason: string(report.ReasonKafkaError), Message: "the runner failed"}, "", time.Now())
		}
		if err := k8s.Status().Update(ctx, rr); err != nil {
			t.Fatal(err)
		}
		rrs, deps = append(rrs, rr), append(deps, dep)
	}

	startLauncher(t, testOptions(), 4)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rr, dep := rrs[i], deps[i]
			if !c.finished {
				// It goes on: pauses (again, harmlessly) and runs.
				_, job := waitPaused(t, rr)
				if n := replicasOf(t, dep); n != 0 {
					t.Fatalf("running with the consumer at %d replicas", n)
				}
				runPod(t, job, 0, int32(report.ExitKafkaError), "")
				finishJob(t, job, batchv1.JobReasonBackoffLimitExceeded)
			}
			done := waitRestored(t, rr, state.ReasonRestored)
			if n := replicasOf(t, dep); n != 3 {
				t.Fatalf("restored to %d replicas, want the recorded 3", n)
			}
			if s := done.Status.Consumers[0].State; s != v1alpha1.ConsumerRestored {
				t.Fatalf("state %s", s)
			}
		})
	}
}

// A real restart: the launcher stops while the runner runs with the
// consumers paused; the next one restores them when the Job ends.
func TestEnvtestConsumersRestoredByNextLauncher(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	first := startLauncher(t, testOptions(), 2)
	dep := makeDeployment(t, ns, "consumer", 4, nil)
	rr := consumerRequest(ns, "replay", "g", deploymentRef("consumer"))
	create(t, rr)
	_, job := waitPaused(t, rr)
	first.stop(t)

	res := testutil.Result("g", report.ExitOK, 10)
	res.RunID = string(job.UID)
	runPod(t, job, 0, 0, testutil.Compact(res))
	finishJob(t, job, "")
	if n := replicasOf(t, dep); n != 0 {
		t.Fatalf("restored with no launcher running: %d", n)
	}
	startLauncher(t, testOptions(), 2)
	waitRestored(t, rr, state.ReasonRestored)
	waitReplicas(t, dep, 4)
}

// A consumer that does not exist fails the request before anything changes.
func TestEnvtestMissingConsumerChangesNothing(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 2)
	dep := makeDeployment(t, ns, "there", 2, map[string]string{"argocd.argoproj.io/instance": "shop"})
	rr := consumerRequest(ns, "replay", "g", deploymentRef("there"), deploymentRef("missing"))
	create(t, rr)
	cur := waitPhase(t, rr, v1alpha1.PhaseFailed)
	// It names the workload and the namespace searched (issue 32,
	// friction 7), not the API server's `deployments.apps "missing" not found`.
	if c := condition(cur, v1alpha1.ConditionSucceeded); c.Reason != state.ReasonPauseFailed || !strings.Contains(c.Message, "Deployment missing not found in namespace "+ns) {
		t.Fatalf("Succeeded %+v", c)
	}
	if cur.Status.JobName != "" || len(cur.Status.Consumers) != 0 || replicasOf(t, dep) != 2 {
		t.Fatalf("something changed: job %q, consumers %+v, replicas %d", cur.Status.JobName, cur.Status.Consumers, replicasOf(t, dep))
	}
}

// The CRD refuses consumers without whenGroupActive: Wait.
func TestEnvtestConsumersNeedWait(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	rr := testutil.MakeRequest(ns, "replay").ShiftBy(-1).Consumers(deploymentRef("c")).Obj()
	err := k8s.Create(context.Background(), rr)
	if err == nil || !strings.Contains(err.Error(), "consumers need whenGroupActive: Wait") {
		t.Fatalf("create: %v", err)
	}
}

// The group stays locked until the restore is done: with the restore refused
// (an admission policy denies scale changes in the namespace), a finished
// request keeps its group, says RestoreFailed, and the next request of the
// group waits; once scale changes are allowed again, the consumer is
// restored and only then does the next request start.
func TestEnvtestGroupHeldUntilConsumersRestored(t *testing.T) {
	env(t)
	ctx := context.Background()
	ns := newNamespace(t, nil)
	if err := k8s.Patch(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"metadata":{"labels":{"consumers-test":%q}}}`, ns))); err != nil {
		t.Fatal(err)
	}
	startLauncher(t, testOptions(), 2)
	dep := makeDeployment(t, ns, "consumer", 3, nil)
	rr := consumerRequest(ns, "replay", "g", deploymentRef("consumer"))
	create(t, rr)
	_, job := waitPaused(t, rr)

	deny := denyScaleChanges(t, ns)
	runPod(t, job, 0, int32(report.ExitKafkaError), "")
	finishJob(t, job, batchv1.JobReasonBackoffLimitExceeded)
	eventually(t, 30*time.Second, "restore refused", func() error {
		if c := condition(getRR(t, rr), v1alpha1.ConditionConsumersRestored); c == nil || c.Reason != state.ReasonRestoreFailed {
			return fmt.Errorf("ConsumersRestored %+v", c)
		}
		return nil
	})
	next := testutil.MakeRequest(ns, "next").Group("g").Obj()
	create(t, next)
	expectWaiting(t, next)
	if n := replicasOf(t, dep); n != 0 {
		t.Fatalf("consumer at %d with the restore refused", n)
	}
	if !controllerutil.ContainsFinalizer(getRR(t, rr), launcher.Finalizer) {
		t.Fatal("the finalizer went before the restore")
	}

	deny()
	touch(t, rr) // a retry now rather than at the end of its backoff
	waitRestored(t, rr, state.ReasonRestored)
	waitReplicas(t, dep, 3)
	waitJob(t, next)
}

// denyScaleChanges makes the API server refuse every scale change of
// Deployments in ns, and returns once it does; the function it returns
// lifts the refusal.
func denyScaleChanges(t *testing.T, ns string) func() {
	t.Helper()
	ctx := context.Background()
	name := "deny-scale-" + ns
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"consumers-test": ns}},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments/scale"}},
				}}},
			},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "scale changes are frozen for this test"}},
		},
	}
	create(t, policy)
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	create(t, binding)
	probe := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "consumer"}}
	// The probe is a dry run: admission judges it, nothing is written. A
	// real write of 0 replicas, once the refusal is lifted, could land
	// after the launcher's restore and undo it.
	probeOpts := &client.SubResourcePatchOptions{PatchOptions: client.PatchOptions{DryRun: []string{metav1.DryRunAll}}, SubResourceBody: &autoscalingv1.Scale{}}
	eventually(t, 30*time.Second, "scale changes refused", func() error {
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"replicas":0}}`))
		err := k8s.SubResource("scale").Patch(ctx, probe, patch, probeOpts)
		if err == nil || !strings.Contains(err.Error(), "frozen") {
			return fmt.Errorf("scale patch: %w", err)
		}
		return nil
	})
	lifted := false
	lift := func() {
		if lifted {
			return
		}
		lifted = true
		if err := k8s.Delete(ctx, binding); err != nil {
			t.Fatal(err)
		}
		_ = k8s.Delete(ctx, policy)
		eventually(t, 30*time.Second, "scale changes allowed", func() error {
			return k8s.SubResource("scale").Patch(ctx, probe, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"replicas":0}}`)), probeOpts)
		})
	}
	t.Cleanup(lift)
	return lift
}

// With KEDA support off, a request naming a ScaledObject fails before
// anything changes, and a Deployment that a ScaledObject targets is paused
// through its own scale (its annotations untouched).
func TestEnvtestConsumersKEDAOff(t *testing.T) {
	env(t)
	installKEDA(t)
	ns := newNamespace(t, nil)
	opts := testOptions()
	opts.NoKEDA = true
	startLauncher(t, opts, 2)
	dep := makeDeployment(t, ns, "consumer", 2, nil)
	makeScaledObject(t, ns, "so", dep.Name, nil)

	named := consumerRequest(ns, "named", "g-named", v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerScaledObject, Name: "so"})
	create(t, named)
	cur := waitPhase(t, named, v1alpha1.PhaseFailed)
	if c := condition(cur, v1alpha1.ConditionSucceeded); c.Reason != state.ReasonPauseFailed || !strings.Contains(c.Message, "KEDA support is turned off") {
		t.Fatalf("Succeeded %+v", c)
	}

	viaScale := consumerRequest(ns, "via-scale", "g-scale", deploymentRef(dep.Name))
	create(t, viaScale)
	st, job := waitPaused(t, viaScale)
	if s := st.Status.Consumers[0]; s.Method != v1alpha1.PauseScale || replicasOf(t, dep) != 0 {
		t.Fatalf("consumer %+v at %d replicas", s, replicasOf(t, dep))
	}
	if ann := scaledObjectAnnotations(t, ns, "so"); ann[consumers.AnnotationKEDAPaused] != "" {
		t.Fatalf("ScaledObject annotated with KEDA support off: %v", ann)
	}
	runPod(t, job, 0, int32(report.ExitKafkaError), "")
	finishJob(t, job, batchv1.JobReasonBackoffLimitExceeded)
	waitRestored(t, viaScale, state.ReasonRestored)
	waitReplicas(t, dep, 2)
}

// A way of pausing that cannot be a member of the stated kind of group
// (pauseKindErrors) fails the request when the launcher accepts it, with
// reason InvalidInput naming the field and the kind, before anything is
// paused or run: a KafkaSource and a KafkaConnector among the consumers of
// a streams or share group, and a Knative consumerRef of one. The
// Deployment listed beside them keeps its replicas.
func TestEnvtestPauseKindRefusedAtAcceptance(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	startLauncher(t, testOptions(), 2)
	dep := makeDeployment(t, ns, "app", 3, nil)
	source := consumerRequest(ns, "streams-source", "app", deploymentRef("app"), v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerKafkaSource, Name: "src"})
	source.Spec.GroupType = v1alpha1.GroupType("Streams")
	connector := consumerRequest(ns, "share-connector", "shared", v1alpha1.ConsumerRef{Kind: v1alpha1.ConsumerKafkaConnector, Name: "sink"})
	connector.Spec.GroupType = v1alpha1.GroupType("Share")
	ref := testutil.MakeRequest(ns, "share-trigger").ShiftBy(-10).Obj()
	ref.Spec.Kafka, ref.Spec.Group, ref.Spec.Topics = v1alpha1.KafkaConnection{}, "", nil
	ref.Spec.ConsumerRef = &v1alpha1.KnativeRef{Kind: "Trigger", Name: "orders"}
	ref.Spec.GroupType = v1alpha1.GroupType("Share")
	for _, tc := range []struct {
		rr   *v1alpha1.ReplayRequest
		says string
	}{
		{source, "consumers[1]: KafkaSource src consumes through a consumer group, never a Streams group (groupType: Streams)"},
		{connector, "consumers[0]: KafkaConnector sink consumes through a consumer group, never a Share group (groupType: Share)"},
		{ref, "consumerRef: a Knative Trigger consumes through a consumer group, never a Share group (groupType: Share)"},
	} {
		create(t, tc.rr)
		cur := waitPhase(t, tc.rr, v1alpha1.PhaseFailed)
		c := condition(cur, v1alpha1.ConditionSucceeded)
		if c.Reason != string(report.ReasonInvalidInput) || !strings.Contains(c.Message, tc.says) {
			t.Errorf("%s: Succeeded %s %q, want InvalidInput saying %q", tc.rr.Name, c.Reason, c.Message, tc.says)
		}
		if a := condition(cur, v1alpha1.ConditionAccepted); a.Status != metav1.ConditionFalse {
			t.Errorf("%s: Accepted %+v", tc.rr.Name, a)
		}
		if cur.Status.JobName != "" || len(cur.Status.Consumers) != 0 {
			t.Errorf("%s: something ran: job %q, consumers %+v", tc.rr.Name, cur.Status.JobName, cur.Status.Consumers)
		}
	}
	if n := replicasOf(t, dep); n != 3 {
		t.Errorf("the Deployment beside the refused KafkaSource has %d replicas, want 3", n)
	}
}
