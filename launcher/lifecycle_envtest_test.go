package launcher_test

// The lifecycle on envtest: at most one run per request, a group lock that
// never leaks and never releases early, bounds on every phase.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kafka-replay/kafka-replay/runner/report"

	"github.com/kafka-replay/kafka-replay/launcher"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// startPod plays the Job controller and the kubelet up to a running runner:
// the Job's pod, Running.
func startPod(t testing.TB, job *batchv1.Job, name string) *corev1.Pod {
	t.Helper()
	pod := testutil.PodFor(job, name)
	create(t, pod)
	pod.Status.Phase = corev1.PodRunning
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: state.ContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}
	if err := k8s.Status().Update(context.Background(), pod); err != nil {
		t.Fatalf("pod status: %v", err)
	}
	return pod
}

// endPod plays the kubelet and the garbage collector: the pod stops and goes.
func endPod(t testing.TB, pod *corev1.Pod) {
	t.Helper()
	if err := k8s.Delete(context.Background(), pod, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
}

// expectWaits asserts that rr is still waiting for its group (no Job) after
// the launcher has seen ev, an event that happened after rr's last chance to
// start wrongly.
func expectWaiting(t testing.TB, rr *v1alpha1.ReplayRequest) {
	t.Helper()
	eventually(t, 20*time.Second, rr.Name+" waits", func() error {
		cur := getRR(t, rr)
		if c := condition(cur, v1alpha1.ConditionAccepted); c == nil || c.Reason != state.ReasonWaitingForGroup {
			return fmt.Errorf("Accepted = %+v", c)
		}
		return nil
	})
	if cur := getRR(t, rr); cur.Status.JobName != "" {
		t.Fatalf("%s started: %+v", rr.Name, cur.Status)
	}
}

// Item 2: a request re-created with the same name and spec after it ran
// (status dropped: GitOps re-sync, restore, delete and apply) ends AlreadyRan
// and starts no Job, also after a launcher restart; another spec, or another
// name (generateName), runs.
func TestEnvtestRecreatedRequestAlreadyRan(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	ctx := context.Background()
	l := startLauncher(t, testOptions(), 2)

	rr := testutil.MakeRequest(ns, "rewind").ShiftBy(-100).Obj()
	create(t, rr)
	job := waitJob(t, rr)
	runPod(t, job, 0, 0, testutil.Compact(testutil.Result("orders", report.ExitOK, 100)))
	finishJob(t, job, "")
	waitPhase(t, rr, v1alpha1.PhaseSucceeded)
	eventually(t, 20*time.Second, "finalizer removed once finished", func() error {
		if controllerutil.ContainsFinalizer(getRR(t, rr), launcher.Finalizer) {
			return fmt.Errorf("a finished request keeps the finalizer")
		}
		return nil
	})

	recreate := func(what string) *v1alpha1.ReplayRequest {
		t.Helper()
		if err := k8s.Delete(ctx, rr); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		eventually(t, 20*time.Second, "request gone", func() error {
			var cur v1alpha1.ReplayRequest
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(rr), &cur); err == nil {
				return fmt.Errorf("still there: %v", cur.Finalizers)
			}
			return nil
		})
		again := testutil.MakeRequest(ns, "rewind").ShiftBy(-100).Obj()
		create(t, again)
		cur := waitPhase(t, again, v1alpha1.PhaseSucceeded) // as the earlier run
		c := condition(cur, v1alpha1.ConditionSucceeded)
		if c.Reason != state.ReasonAlreadyRan || !strings.Contains(c.Message, job.Name) || !strings.Contains(c.Message, "generateName") {
			t.Fatalf("%s: Succeeded = %+v, want AlreadyRan naming %s", what, c, job.Name)
		}
		if f := condition(cur, v1alpha1.ConditionFinished); f == nil || f.Status != metav1.ConditionTrue || f.Reason != state.ReasonAlreadyRan {
			t.Fatalf("%s: Finished = %+v", what, f)
		}
		if cur.Status.JobName != "" {
			t.Fatalf("%s: the re-created request names a Job: %+v", what, cur.Status)
		}
		jobs := jobsOf(t, ns, map[string]string{v1alpha1.LabelRequest: "rewind"})
		if len(jobs) != 1 || jobs[0].UID != job.UID || !state.IsRecorded(&jobs[0]) {
			t.Fatalf("%s: Jobs %d (want only the first, %s)", what, len(jobs), job.UID)
		}
		waitEvent(t, ns, again.Name, state.ReasonAlreadyRan)
		rr = again
		return again
	}
	recreate("re-created")

	// A new launcher, whose memory is empty, knows it from the cluster.
	l.stop(t)
	startLauncher(t, testOptions(), 2)
	recreate("re-created after a restart")

	// The same name with another spec is another replay; generateName
	// gives the same spec another name. Both run.
	if err := k8s.Delete(ctx, rr); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "request gone", func() error {
		return client.IgnoreNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(rr), &v1alpha1.ReplayRequest{})) // nil once gone
	})
	other := testutil.MakeRequest(ns, "rewind").ShiftBy(-200).Obj()
	create(t, other)
	otherJob := waitJob(t, other)
	runPod(t, otherJob, 0, 0, testutil.Compact(testutil.Result("orders", report.ExitOK, 200)))
	finishJob(t, otherJob, "")
	waitPhase(t, other, v1alpha1.PhaseSucceeded)
	generated := testutil.MakeRequest(ns, "").ShiftBy(-100).Obj()
	generated.GenerateName = "rewind-"
	create(t, generated)
	if j := waitJob(t, generated); j.UID == job.UID || j.UID == otherJob.UID {
		t.Fatal("generateName did not make a new run")
	}
}

// Item 3: a request deleted mid-run (also with --cascade=orphan), or a Job
// deleted mid-run leaving its pod, keeps the next request of the group
// waiting until no runner pod of that Job is active or terminating.
func TestEnvtestDeletedRequestHoldsGroupUntilPodGone(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	ctx := context.Background()
	startLauncher(t, testOptions(), 4)

	cases := []struct {
		name   string
		group  string
		delete func(t *testing.T, rr *v1alpha1.ReplayRequest, job *batchv1.Job)
		// requestGoes: the deleted request goes at once (orphan), else
		// only once the pod is gone.
		requestGoes bool
	}{
		{"request deleted", "g-request", func(t *testing.T, rr *v1alpha1.ReplayRequest, _ *batchv1.Job) {
			if err := k8s.Delete(ctx, rr); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"request deleted with --cascade=orphan", "g-request-orphan", func(t *testing.T, rr *v1alpha1.ReplayRequest, _ *batchv1.Job) {
			if err := k8s.Delete(ctx, rr, client.PropagationPolicy(metav1.DeletePropagationOrphan)); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"Job deleted with --cascade=orphan", "g-job-orphan", func(t *testing.T, _ *v1alpha1.ReplayRequest, job *batchv1.Job) {
			if err := k8s.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationOrphan)); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			group := c.group
			first := testutil.MakeRequest(ns, group+"-1").Group(group).Obj()
			create(t, first)
			job := waitJob(t, first)
			pod := startPod(t, job, job.Name+"-0")
			next := testutil.MakeRequest(ns, group+"-2").Group(group).Obj()
			create(t, next)
			expectWaiting(t, next)

			c.delete(t, first, job)
			// The launcher has acted on the deletion: the request's Job is
			// deleted (or the request is released for the orphan), or the
			// request has ended JobDeleted.
			eventually(t, 20*time.Second, "deletion seen", func() error {
				var cur v1alpha1.ReplayRequest
				err := k8s.Get(ctx, client.ObjectKeyFromObject(first), &cur)
				switch {
				case c.name == "Job deleted with --cascade=orphan":
					// Issue 27, cases 3 and 4: the request says its Job
					// is gone, and waits for the pod, which may still
					// commit, before it ends.
					if err != nil || state.IsFinished(&cur) {
						return fmt.Errorf("request (%w): %+v", err, cur.Status)
					}
					if rc := condition(&cur, v1alpha1.ConditionRunning); rc == nil || rc.Reason != state.ReasonJobDeleted || !strings.Contains(rc.Message, pod.Name) {
						return fmt.Errorf("Running = %+v", rc)
					}
				case c.requestGoes:
					if err == nil && controllerutil.ContainsFinalizer(&cur, launcher.Finalizer) {
						return fmt.Errorf("still has the launcher's finalizer")
					}
				default:
					var j batchv1.Job
					if jerr := k8s.Get(ctx, client.ObjectKeyFromObject(job), &j); jerr == nil {
						return fmt.Errorf("the request's Job was not deleted")
					}
					if err != nil || cur.DeletionTimestamp == nil || !controllerutil.ContainsFinalizer(&cur, launcher.Finalizer) {
						return fmt.Errorf("the request went while its pod runs (%w)", err)
					}
				}
				return nil
			})
			// Touch next: it reconciles with everything above in view,
			// and still waits, for the old pod.
			touch(t, next)
			expectWaiting(t, next)

			endPod(t, pod)
			if c.name == "Job deleted with --cascade=orphan" {
				// The pod left no result: JobDeleted, once it is gone.
				if sc := condition(waitPhase(t, first, v1alpha1.PhaseFailed), v1alpha1.ConditionSucceeded); sc.Reason != state.ReasonJobDeleted {
					t.Fatalf("Succeeded = %+v", sc)
				}
			}
			if c.name == "request deleted with --cascade=orphan" {
				// The orphaned Job itself still runs until its pod ends; in
				// a real cluster the Job controller then marks it failed.
				finishJob(t, job, batchv1.JobReasonBackoffLimitExceeded)
			}
			waitJob(t, next)
			if !c.requestGoes {
				eventually(t, 20*time.Second, "deleted request gone", func() error {
					return client.IgnoreNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(first), &v1alpha1.ReplayRequest{}))
				})
			}
		})
	}
}

// touch changes a request's labels, which makes the launcher reconcile it.
func touch(t testing.TB, rr *v1alpha1.ReplayRequest) {
	t.Helper()
	eventually(t, 10*time.Second, "touch "+rr.Name, func() error {
		cur := getRR(t, rr)
		if cur.Labels == nil {
			cur.Labels = map[string]string{}
		}
		cur.Labels["touched"] = fmt.Sprint(time.Now().UnixNano())
		return k8s.Update(context.Background(), cur)
	})
}

// Item 5: a pod that never starts fails the request with PodNotStarted,
// naming what it waited for, which status said meanwhile; a Job the API
// server keeps refusing fails it with JobNotCreated. Either way the group
// goes to the next request.
func TestEnvtestStartTimeout(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	ctx := context.Background()
	opts := testOptions()
	opts.StartTimeout = 3 * time.Second
	startLauncher(t, opts, 2)

	rr := testutil.MakeRequest(ns, "bad-image").Obj()
	create(t, rr)
	job := waitJob(t, rr)
	pod := testutil.PodFor(job, job.Name+"-0")
	create(t, pod)
	pod.Status.Phase = corev1.PodPending
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: state.ContainerName, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "kafka-replay/runner:test"`}}}}
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	next := testutil.MakeRequest(ns, "next").Obj()
	create(t, next)

	cur := waitPhase(t, rr, v1alpha1.PhaseFailed)
	sc := condition(cur, v1alpha1.ConditionSucceeded)
	if sc.Reason != state.ReasonPodNotStarted || !strings.Contains(sc.Message, "ImagePullBackOff") {
		t.Fatalf("Succeeded = %+v", sc)
	}
	// While it waited, status (and an event) said why, not "running".
	eventually(t, 10*time.Second, "a waiting event says why", func() error {
		for _, e := range eventsFor(t, ns, rr.Name) {
			if e.Reason == state.ReasonPodWaiting && strings.Contains(e.Note, "ImagePullBackOff") && strings.Contains(e.Note, "Back-off pulling image") {
				return nil
			}
		}
		return fmt.Errorf("no %s event naming ImagePullBackOff", state.ReasonPodWaiting)
	})
	// The Job is stopped (suspended: its pod goes) and kept as history.
	eventually(t, 10*time.Second, "Job stopped and recorded", func() error {
		var j batchv1.Job
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), &j); err != nil {
			return err
		}
		if j.Spec.Suspend == nil || !*j.Spec.Suspend || j.Annotations[v1alpha1.AnnotationReason] != state.ReasonPodNotStarted {
			return fmt.Errorf("suspend %v, annotations %v", j.Spec.Suspend, j.Annotations)
		}
		return nil
	})
	// The group moves on once the pod is gone, not before.
	touch(t, next)
	expectWaiting(t, next)
	endPod(t, pod)
	waitJob(t, next)

	// A Job refused for longer than the start timeout.
	quotaNS := newNamespace(t, nil)
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: quotaNS, Name: "no-jobs"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/jobs.batch": resource.MustParse("0")}},
	}
	create(t, quota)
	quota.Status = corev1.ResourceQuotaStatus{Hard: quota.Spec.Hard, Used: corev1.ResourceList{"count/jobs.batch": resource.MustParse("0")}}
	if err := k8s.Status().Update(ctx, quota); err != nil {
		t.Fatal(err)
	}
	refused := testutil.MakeRequest(quotaNS, "over-quota").Obj()
	create(t, refused)
	cur = waitPhase(t, refused, v1alpha1.PhaseFailed)
	if sc := condition(cur, v1alpha1.ConditionSucceeded); sc.Reason != state.ReasonJobNotCreated || !strings.Contains(sc.Message, "exceeded quota") {
		t.Fatalf("Succeeded = %+v", sc)
	}
	waitEvent(t, quotaNS, refused.Name, state.ReasonJobCreateFailed)
}

// Item 6: a waiting request's status names the request it waits for only
// in its own namespace; for another namespace it says that another replay
// is in progress, and since when.
func TestEnvtestWaitingMessageIsTenantPrivate(t *testing.T) {
	env(t)
	nsA, nsB := newNamespace(t, nil), newNamespace(t, nil)
	startLauncher(t, testOptions(), 2)
	shared := "kafka.shared-" + nsA + ".svc:9092"

	secret := testutil.MakeRequest(nsA, "project-unicorn").Bootstrap(shared).Obj()
	create(t, secret)
	waitJob(t, secret)
	mine := testutil.MakeRequest(nsB, "mine").Bootstrap(shared).Obj()
	create(t, mine)
	sameNS := testutil.MakeRequest(nsA, "colleague").Bootstrap(shared).Obj()
	create(t, sameNS)

	eventually(t, 20*time.Second, "other tenant waits", func() error {
		c := condition(getRR(t, mine), v1alpha1.ConditionAccepted)
		if c == nil || c.Reason != state.ReasonWaitingForGroup {
			return fmt.Errorf("Accepted = %+v", c)
		}
		if strings.Contains(c.Message, nsA) || strings.Contains(c.Message, "unicorn") {
			t.Fatalf("another tenant's request leaks into status: %q", c.Message)
		}
		if !strings.Contains(c.Message, "another replay") || !strings.Contains(c.Message, "since") {
			return fmt.Errorf("message %q", c.Message)
		}
		return nil
	})
	for _, e := range eventsFor(t, nsB, mine.Name) {
		if strings.Contains(e.Note, nsA) || strings.Contains(e.Note, "unicorn") {
			t.Fatalf("another tenant's request leaks into an event: %q", e.Note)
		}
	}
	// In the same namespace the blocker is named: it is the colleague's to
	// see anyway.
	eventually(t, 20*time.Second, "same namespace names the blocker", func() error {
		c := condition(getRR(t, sameNS), v1alpha1.ConditionAccepted)
		if c == nil || c.Reason != state.ReasonWaitingForGroup || !strings.Contains(c.Message, nsA+"/") {
			return fmt.Errorf("Accepted = %+v", c)
		}
		return nil
	})
}

// Item 9: a Job planted under the request's deterministic name is never
// adopted: the request fails JobConflict and the Job is left as it was.
func TestEnvtestPlantedJobIsNotAdopted(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	ctx := context.Background()
	startLauncher(t, testOptions(), 2)

	rr := testutil.MakeRequest(ns, "target").Obj()
	planted := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: runnerjob.Name(rr, runnerjob.StageApply),
			Labels: map[string]string{v1alpha1.LabelRunner: "true", v1alpha1.LabelRequest: "target"}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "runner", Image: "evil.example.com/fake-result:1"}},
		}}},
	}
	create(t, planted)
	create(t, rr)
	cur := waitPhase(t, rr, v1alpha1.PhaseFailed)
	if sc := condition(cur, v1alpha1.ConditionSucceeded); sc.Reason != state.ReasonJobConflict || !strings.Contains(sc.Message, planted.Name) {
		t.Fatalf("Succeeded = %+v", sc)
	}
	if cur.Status.JobName != "" || cur.Status.Result != nil {
		t.Fatalf("the planted Job counts as the request's: %+v", cur.Status)
	}
	var j batchv1.Job
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(planted), &j); err != nil {
		t.Fatal(err)
	}
	if state.IsRecorded(&j) || len(j.OwnerReferences) != 0 {
		t.Fatalf("the planted Job was touched: %v %v", j.Annotations, j.OwnerReferences)
	}
}

// A Job planted under the request's name without the runner label, which
// the launcher's cache never shows (it holds runner-labelled Jobs only), is
// found by the create's AlreadyExists and refused the same way: the pass
// keeps the Job the API server answered with, instead of reading the cache
// again and creating again, which left the request Pending with no event to
// wake it; and the group is not held for a start the cache would never
// show.
func TestEnvtestPlantedJobOutsideTheCacheIsNotAdopted(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	unlabelled := func(name string) *batchv1.Job {
		return &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "runner", Image: "evil.example.com/fake-result:1"}},
			}}},
		}
	}
	// The apply Job's name is the request's; a Manual request's planning
	// Job's carries its UID, known once it is created: both are planted
	// before a launcher runs.
	rr := testutil.MakeRequest(ns, "unlabelled").Obj()
	manual := testutil.MakeRequest(ns, "unlabelled-manual").Manual().Obj()
	create(t, rr)
	create(t, manual)
	planted := map[string]*batchv1.Job{
		rr.Name:     unlabelled(runnerjob.Name(rr, runnerjob.StageApply)),
		manual.Name: unlabelled(runnerjob.Name(getRR(t, manual), runnerjob.StagePlan)),
	}
	for _, j := range planted {
		create(t, j)
	}
	startLauncher(t, testOptions(), 2)
	for _, r := range []*v1alpha1.ReplayRequest{rr, manual} {
		cur := waitPhase(t, r, v1alpha1.PhaseFailed)
		if sc := condition(cur, v1alpha1.ConditionSucceeded); sc.Reason != state.ReasonJobConflict || !strings.Contains(sc.Message, planted[r.Name].Name) {
			t.Fatalf("%s: Succeeded = %+v", r.Name, sc)
		}
		if cur.Status.JobName != "" || cur.Status.Result != nil || cur.Status.Plan != nil {
			t.Fatalf("%s: the planted Job counts as the request's: %+v", r.Name, cur.Status)
		}
	}
	// Neither holds the group: the next replay of it starts.
	next := testutil.MakeRequest(ns, "next").Obj()
	create(t, next)
	waitJob(t, next)
}

// staleRequests is the launcher's cached client, except that it shows chosen
// requests as they were: a cache that has not caught up with the launcher's
// own status write.
type staleRequests struct {
	client.Client
	mu     sync.Mutex
	frozen map[types.NamespacedName]*v1alpha1.ReplayRequest
	served int // stale reads served
}

func (s *staleRequests) servedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served
}

func (s *staleRequests) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if rr, ok := obj.(*v1alpha1.ReplayRequest); ok {
		s.mu.Lock()
		old := s.frozen[key]
		s.mu.Unlock()
		if old != nil {
			s.mu.Lock()
			s.served++
			s.mu.Unlock()
			old.DeepCopyInto(rr)
			return nil
		}
	}
	return s.Client.Get(ctx, key, obj, opts...)
}

func (s *staleRequests) freeze(rr *v1alpha1.ReplayRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rr == nil {
		s.frozen = nil
		return
	}
	if s.frozen == nil {
		s.frozen = map[types.NamespacedName]*v1alpha1.ReplayRequest{}
	}
	s.frozen[client.ObjectKeyFromObject(rr)] = rr.DeepCopy()
}

// Item 13: a Job deleted mid-run, seen through a cache that does not show the
// launcher's own status write yet, is never created again: the request ends
// JobDeleted.
func TestEnvtestStaleCacheNeverStartsTwice(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	ctx := context.Background()

	mgr, err := ctrl.NewManager(userCfg, ctrl.Options{
		Scheme:                 launcher.NewScheme(),
		Cache:                  launcher.CacheOptions(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 zap.New(zap.WriteTo(&testutil.SyncBuffer{}), zap.Level(zapcore.Level(-2))),
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	stale := &staleRequests{Client: mgr.GetClient()}
	r := &launcher.ReplayRequestReconciler{
		Client: stale, APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder(launcher.EventSource),
		Logs: fakeLogs{}, Options: testOptions(),
	}
	mctx, cancel := context.WithCancel(ctx)
	if err := r.SetupWithManager(mctx, mgr, 2); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	for _, withFinalizer := range []bool{false, true} {
		name := fmt.Sprintf("deleted-mid-run-%v", withFinalizer)
		rr := testutil.MakeRequest(ns, name).Group(name).Obj()
		create(t, rr)
		asCreated := rr.DeepCopy() // no status, no finalizer
		job := waitJob(t, rr)
		cur := getRR(t, rr)
		if !controllerutil.ContainsFinalizer(cur, launcher.Finalizer) {
			t.Fatal("no finalizer on a started request")
		}
		if withFinalizer {
			// The cache shows the finalizer but not the status write
			// after it (an older resourceVersion than the server's).
			asCreated.Finalizers = cur.Finalizers
		}
		stale.freeze(asCreated)
		// Background propagation: the Job is gone at once, as with kubectl.
		if err := k8s.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
		// The deletion's events reach the launcher, which reads the stale
		// request: not started, no Job. It must not start it again.
		eventually(t, 20*time.Second, "Job deleted", func() error {
			var j batchv1.Job
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(job), &j); err == nil {
				return fmt.Errorf("still there")
			}
			return nil
		})
		// Another reconcile through the stale read, and wait until the
		// launcher has made it.
		n := stale.servedCount()
		touch(t, rr)
		eventually(t, 20*time.Second, "a reconcile through the stale read", func() error {
			if stale.servedCount() <= n {
				return fmt.Errorf("no stale read yet")
			}
			return nil
		})
		stale.freeze(nil)
		touch(t, rr)
		cur = waitPhase(t, rr, v1alpha1.PhaseFailed)
		if sc := condition(cur, v1alpha1.ConditionSucceeded); sc.Reason != state.ReasonJobDeleted {
			t.Fatalf("%s: Succeeded = %+v, want JobDeleted", name, sc)
		}
		if jobs := jobsOf(t, ns, map[string]string{v1alpha1.LabelRequest: name}); len(jobs) != 0 {
			t.Fatalf("%s: the launcher made the Job again from a stale read (%d Jobs)", name, len(jobs))
		}
	}
}
