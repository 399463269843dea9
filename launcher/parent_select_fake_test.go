package launcher

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// spec.groupSelector, over the fake client: the list Job, its listing read
// once into status.resolvedGroups, and every way it is refused.

// podLogs is pods/log for the fake: each pod's whole log.
type podLogs map[string]string

func (l podLogs) Tail(_ context.Context, _, pod, _ string, _, _ int64) (string, error) {
	return l[pod], nil
}

func (l podLogs) Full(_ context.Context, _, pod, _ string, limit int64) (io.ReadCloser, error) {
	s, ok := l[pod]
	if !ok {
		return nil, fmt.Errorf("pods %q not found", pod)
	}
	return io.NopCloser(io.LimitReader(strings.NewReader(s), limit)), nil
}

func newFakeSelector(t *testing.T, objs ...client.Object) (*fakeParents, podLogs) {
	f := newFakeParents(t, objs...)
	logs := podLogs{}
	f.r.Options = DefaultOptions()
	f.r.Logs = logs
	return f, logs
}

func selectorParent(prefixes ...string) *v1alpha1.ReplayRequest {
	p := testutil.MakeRequest("shop", "incident").Select(prefixes...).Obj()
	p.UID = "parent-uid"
	p.Annotations = map[string]string{v1alpha1.AnnotationRequestedBy: "alice"}
	return p
}

// listJob is p's list Job, which the pass must have made.
func (f *fakeParents) listJob(p *v1alpha1.ReplayRequest) *batchv1.Job {
	f.t.Helper()
	var jobs batchv1.JobList
	if err := f.c.List(context.Background(), &jobs, client.InNamespace(p.Namespace), client.MatchingLabels{v1alpha1.LabelStage: string(runnerjob.StageList)}); err != nil {
		f.t.Fatal(err)
	}
	if len(jobs.Items) != 1 {
		f.t.Fatalf("%d list Jobs, want 1", len(jobs.Items))
	}
	return &jobs.Items[0]
}

// runList plays the Job controller and the kubelet: a pod of job that ran
// its template and ended with code and msg, then the Job finished.
func (f *fakeParents) runList(job *batchv1.Job, code int32, msg string) *corev1.Pod {
	f.t.Helper()
	ctx := context.Background()
	pod := testutil.PodFor(job, job.Name+"-0")
	testutil.Terminated(pod, code, msg, f.clock.Now())
	if err := f.c.Create(ctx, pod); err != nil {
		f.t.Fatal(err)
	}
	if code == 0 {
		testutil.Complete(job, f.clock.Now())
	} else {
		testutil.Fail(job, batchv1.JobReasonPodFailurePolicy, f.clock.Now())
	}
	if err := f.c.Status().Update(ctx, job); err != nil {
		f.t.Fatal(err)
	}
	return pod
}

func TestUnitSelectorListsOnceThenRunsItsGroups(t *testing.T) {
	p := selectorParent("billing-", "audit")
	f, _ := newFakeSelector(t, p)

	f.pass(p)
	job := f.listJob(p)
	env := testutil.RunnerEnv(job)
	if env[config.EnvList] != "true" || env[config.EnvOutput] != config.OutputJSON || env[config.EnvBootstrapServers] != p.Spec.Kafka.BootstrapServers {
		t.Fatalf("list Job env %v", env)
	}
	for _, run := range []string{config.EnvGroup, config.EnvTo, config.EnvRunID, config.EnvEmitRecord, config.EnvDryRun} {
		if _, ok := env[run]; ok {
			t.Errorf("the list Job has a run's %s", run)
		}
	}
	if !metav1.IsControlledBy(job, p) || job.Labels[v1alpha1.LabelRunner] != v1alpha1.LabelRunnerValue || job.Labels[v1alpha1.LabelGroup] != "" {
		t.Fatalf("list Job owners %v labels %v", job.OwnerReferences, job.Labels)
	}
	cur := f.get(p)
	c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionAccepted)
	if c == nil || c.Status != metav1.ConditionUnknown || c.Reason != state.ReasonListingGroups || !strings.Contains(c.Message, job.Name) || cur.Status.Phase != v1alpha1.PhasePending {
		t.Fatalf("while listing: phase %s, Accepted %+v", cur.Status.Phase, c)
	}
	// A pass while the Job runs (a restarted launcher's too) makes no
	// second Job and writes nothing.
	writes := f.writes
	f.pass(p)
	f.listJob(p)
	if f.writes != writes || len(f.children(p)) != 0 {
		t.Fatalf("a pass while listing wrote status or made children")
	}

	msg, _ := testutil.Listing("audit", "billing-us", "billing-eu", "search", "audit-old")
	f.runList(job, 0, msg)
	f.pass(p)
	cur = f.get(p)
	if want := []string{"audit", "audit-old", "billing-eu", "billing-us"}; !slices.Equal(cur.Status.ResolvedGroups, want) {
		t.Fatalf("resolvedGroups %v, want %v", cur.Status.ResolvedGroups, want)
	}
	if c := meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionAccepted); c.Status != metav1.ConditionTrue {
		t.Fatalf("Accepted %+v", c)
	}
	if kids := f.children(p); len(kids) != 1 || kids["audit"] == nil {
		t.Fatalf("children %v, want audit's alone (parallelism 1)", kids)
	}

	// The listing is never read again: a group that appears later (a
	// new listing on the list Job's pod) is not added.
	pod := &corev1.Pod{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: job.Namespace, Name: job.Name + "-0"}, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.ContainerStatuses[0].State.Terminated.Message, _ = testutil.Listing("audit", "audit-new", "billing-eu", "billing-us")
	if err := f.c.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	f.end(p, "audit", true, "Applied", 1)
	f.pass(p)
	if got := f.get(p).Status.ResolvedGroups; !slices.Equal(got, cur.Status.ResolvedGroups) {
		t.Fatalf("resolvedGroups changed to %v", got)
	}
	if kids := f.children(p); len(kids) != 2 || kids["audit-old"] == nil {
		t.Fatalf("children %v", kids)
	}
}

// Every refusal ends the parent with nothing made but its list Job, and a
// reason and a message that say why.
func TestUnitSelectorRefused(t *testing.T) {
	many := make([]string, 501)
	for i := range many {
		many[i] = fmt.Sprintf("billing-%03d", i)
	}
	for _, tc := range []struct {
		name   string
		parent func(*v1alpha1.ReplayRequest)
		// play finishes the list Job (nil: the first pass refuses).
		play   func(f *fakeParents, logs podLogs, job *batchv1.Job)
		reason string
		msg    string
	}{
		{
			name: "no group matches",
			play: func(f *fakeParents, _ podLogs, job *batchv1.Job) {
				msg, _ := testutil.Listing("audit", "search")
				f.runList(job, 0, msg)
			},
			reason: state.ReasonNoGroupsMatched, msg: "spec.groupSelector: matches no group of the 2 groups the cluster lists",
		},
		{
			name: "only other kinds match",
			play: func(f *fakeParents, _ podLogs, job *batchv1.Job) {
				var g strings.Builder
				g.WriteString(`{"schema":"kafkareplay.dev/groups/v1","groups":[`)
				g.WriteString(`{"group":"billing-connect","groupType":"Classic","protocolType":"connect","state":"Stable","memberCount":1,"topics":[]},`)
				g.WriteString(`{"group":"billing-share","groupType":"Share","state":"Empty","memberCount":0,"topics":[]}]}`)
				f.runList(job, 0, g.String())
			},
			reason: state.ReasonNoGroupsMatched, msg: "matches no group",
		},
		{
			name: "more than 500, read from the log",
			play: func(f *fakeParents, logs podLogs, job *batchv1.Job) {
				msg, out := testutil.Listing(many...)
				logs[job.Name+"-0"] = "time=x level=INFO msg=starting\n" + out
				f.runList(job, 0, msg)
			},
			reason: state.ReasonTooManyGroups, msg: "matches 501 groups, more than the 500 a request takes; narrow the selector",
		},
		{
			name: "cut short and no log",
			play: func(f *fakeParents, _ podLogs, job *batchv1.Job) {
				msg, _ := testutil.Listing(many...)
				f.runList(job, 0, msg)
			},
			reason: state.ReasonListingIncomplete, msg: "its log could not be read",
		},
		{
			name: "a log that is not the termination message's listing",
			play: func(f *fakeParents, logs podLogs, job *batchv1.Job) {
				msg, _ := testutil.Listing(many...)
				_, out := testutil.Listing(many[:400]...)
				logs[job.Name+"-0"] = out
				f.runList(job, 0, msg)
			},
			reason: state.ReasonListingIncomplete, msg: "400 groups, where the termination message counts 501",
		},
		{
			name: "the list failed",
			play: func(f *fakeParents, _ podLogs, job *batchv1.Job) {
				f.runList(job, 4, `level=ERROR msg="could not list the groups" reason=KafkaError error="dial tcp: refused"`)
			},
			reason: state.ReasonListFailed, msg: `the runner said: exit 4 (KafkaError): level=ERROR msg="could not list the groups"`,
		},
		{
			name: "a pod not of the Job",
			play: func(f *fakeParents, _ podLogs, job *batchv1.Job) {
				// Someone else's pod with the Job's labels and a listing
				// of their choosing; the Job's own pod failed.
				msg, _ := testutil.Listing("billing-x")
				planted := testutil.PodFor(job, "planted")
				planted.OwnerReferences = nil
				testutil.Terminated(planted, 0, msg, f.clock.Now())
				if err := f.c.Create(context.Background(), planted); err != nil {
					f.t.Fatal(err)
				}
				// One of the Job, that ran another image.
				other := testutil.PodFor(job, "other-image")
				other.Spec.Containers[0].Image = "evil/lister"
				testutil.Terminated(other, 0, msg, f.clock.Now())
				if err := f.c.Create(context.Background(), other); err != nil {
					f.t.Fatal(err)
				}
				testutil.Complete(job, f.clock.Now())
				if err := f.c.Status().Update(context.Background(), job); err != nil {
					f.t.Fatal(err)
				}
			},
			reason: state.ReasonListingIncomplete, msg: "no pod of it that ran the list ended well",
		},
		{
			name: "status.resolvedGroups written ahead",
			parent: func(p *v1alpha1.ReplayRequest) {
				p.Status.ResolvedGroups = []string{"billing-eu", "payments"}
			},
			play: func(f *fakeParents, _ podLogs, job *batchv1.Job) {
				msg, _ := testutil.Listing("billing-eu", "billing-us")
				f.runList(job, 0, msg)
			},
			reason: "InvalidInput", msg: "status.resolvedGroups was written before the launcher accepted the request",
		},
		{
			name: "a bad pattern",
			parent: func(p *v1alpha1.ReplayRequest) {
				p.Spec.GroupSelector.Exclude = []v1alpha1.GroupPattern{{Regex: "billing-("}}
			},
			play: func(f *fakeParents, _ podLogs, job *batchv1.Job) {
				msg, _ := testutil.Listing("billing-eu")
				f.runList(job, 0, msg)
			},
			reason: "InvalidInput", msg: `spec.groupSelector.exclude[0].regex: "billing-(" is not a regular expression`,
		},
		{
			name: "clusterRef",
			parent: func(p *v1alpha1.ReplayRequest) {
				p.Spec.Kafka = v1alpha1.KafkaConnection{ClusterRef: &v1alpha1.StrimziClusterRef{Name: "my-cluster", Listener: "tls"}}
			},
			reason: "InvalidInput", msg: "not with spec.kafka.clusterRef",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := selectorParent("billing-")
			if tc.parent != nil {
				tc.parent(p)
			}
			f, logs := newFakeSelector(t, p)
			f.pass(p)
			if tc.play != nil {
				tc.play(f, logs, f.listJob(p))
				f.pass(p)
			}
			got := f.get(p)
			if finishedAs(got) != tc.reason || !strings.Contains(got.Status.Message, tc.msg) {
				t.Fatalf("finished %q: %s\nwant %q: %s", finishedAs(got), got.Status.Message, tc.reason, tc.msg)
			}
			if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionAccepted); c == nil || c.Status != metav1.ConditionFalse || c.Reason != tc.reason {
				t.Fatalf("Accepted %+v", c)
			}
			if kids := f.children(p); len(kids) != 0 {
				t.Fatalf("children %v", kids)
			}
		})
	}
}

// A Job planted under the list Job's name is never adopted: not
// controlled by the parent, or controlled by it but running something
// else.
func TestUnitSelectorRefusesAPlantedListJob(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(j *batchv1.Job)
	}{
		{"not the parent's", func(j *batchv1.Job) { j.OwnerReferences = nil }},
		{"another parent's UID", func(j *batchv1.Job) { j.OwnerReferences[0].UID = "other-uid" }},
		{"the parent's, another image", func(j *batchv1.Job) { j.Spec.Template.Spec.Containers[0].Image = "evil/lister" }},
		{"the parent's, another environment", func(j *batchv1.Job) {
			c := &j.Spec.Template.Spec.Containers[0]
			c.Env = append(c.Env, corev1.EnvVar{Name: config.EnvBootstrapServers, Value: "evil:9092"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := selectorParent("billing-")
			job, err := runnerjob.BuildList(p, DefaultOptions().Defaults)
			if err != nil {
				t.Fatal(err)
			}
			tc.plant(job)
			f, _ := newFakeSelector(t, p, job)
			msg, _ := testutil.Listing("billing-evil")
			f.pass(p)
			if got := f.get(p); !state.IsFinished(got) {
				f.runList(f.listJob(p), 0, msg)
				f.pass(p)
			}
			got := f.get(p)
			if finishedAs(got) != state.ReasonJobConflict || !strings.Contains(got.Status.Message, job.Name) || len(got.Status.ResolvedGroups) != 0 {
				t.Fatalf("finished %q: %s; resolvedGroups %v", finishedAs(got), got.Status.Message, got.Status.ResolvedGroups)
			}
			if kids := f.children(p); len(kids) != 0 {
				t.Fatalf("children %v", kids)
			}
		})
	}
}

// BuildList's Job is a runner Job of the request's, with the list's
// environment only, and SameListPod tells it from anything else.
func TestUnitBuildListAndSameListPod(t *testing.T) {
	p := selectorParent("billing-")
	p.Spec.Kafka.SecretRef = &v1alpha1.LocalObjectReference{Name: "kafka-creds"}
	p.Spec.Runner = &v1alpha1.RunnerOverrides{ActiveDeadlineSeconds: ptr.To[int64](60)}
	d := DefaultOptions().Defaults
	d.AllowUnboundSecrets = true
	job, err := runnerjob.BuildList(p, d)
	if err != nil {
		t.Fatal(err)
	}
	env := testutil.RunnerEnv(job)
	if env[config.EnvKafkaSecretDir] == "" || env[config.EnvAllowUnboundSecret] != "true" || *job.Spec.ActiveDeadlineSeconds != 60 {
		t.Fatalf("env %v deadline %v", env, job.Spec.ActiveDeadlineSeconds)
	}
	if len(job.Spec.Template.Spec.Volumes) != 1 || job.Spec.Template.Spec.Volumes[0].Projected.Sources[0].Secret.Name != "kafka-creds" {
		t.Fatalf("volumes %+v", job.Spec.Template.Spec.Volumes)
	}
	// Another incarnation of the request lists afresh.
	again := p.DeepCopy()
	again.UID = "other-uid"
	if runnerjob.Name(again, runnerjob.StageList) == job.Name {
		t.Fatal("the list Job's name does not carry the request's UID")
	}
	want := &job.Spec.Template.Spec
	if err := runnerjob.SameListPod(want, want.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(s *corev1.PodSpec){
		"image":      func(s *corev1.PodSpec) { s.Containers[0].Image = "x" },
		"args":       func(s *corev1.PodSpec) { s.Containers[0].Args = []string{"--list"} },
		"env":        func(s *corev1.PodSpec) { s.Containers[0].Env = s.Containers[0].Env[1:] },
		"sidecar":    func(s *corev1.PodSpec) { s.Containers = append(s.Containers, corev1.Container{Name: "x"}) },
		"init":       func(s *corev1.PodSpec) { s.InitContainers = []corev1.Container{{Name: "x"}} },
		"volume":     func(s *corev1.PodSpec) { s.Volumes[0].Projected.Sources[0].Secret.Name = "other" },
		"mount":      func(s *corev1.PodSpec) { s.Containers[0].VolumeMounts[0].MountPath = "/x" },
		"envFrom":    func(s *corev1.PodSpec) { s.Containers[0].EnvFrom = []corev1.EnvFromSource{{}} },
		"container":  func(s *corev1.PodSpec) { s.Containers[0].Name = "x" },
		"no volumes": func(s *corev1.PodSpec) { s.Volumes = nil },
	} {
		got := want.DeepCopy()
		change(got)
		if runnerjob.SameListPod(want, got) == nil {
			t.Errorf("%s: another pod spec taken for the list's", name)
		}
	}
}

func TestUnitListingFromLog(t *testing.T) {
	names := make([]string, 120)
	for i := range names {
		names[i] = fmt.Sprintf("group-%03d", i)
	}
	msg, out := testutil.Listing(names...)
	short, err := report.DecodeGroups([]byte(msg))
	if err != nil {
		t.Fatal(err)
	}
	if short.Omitted == 0 {
		t.Fatal("the test's listing fits the termination message")
	}
	for _, tc := range []struct {
		name, log, err string
	}{
		{"stdout alone", out, ""},
		{"stderr around it", "time=1 level=WARN msg=slow\n" + out + "time=2 level=INFO msg=done\n", ""},
		{"nothing", "time=1 level=ERROR msg=x\n", "no listing"},
		{"cut", out[:len(out)/2], "not whole"},
		{"another listing", func() string { _, o := testutil.Listing(append([]string{"aaa"}, names[1:]...)...); return o }(), "not those the termination message begins with"},
		{"fewer", func() string { _, o := testutil.Listing(names[:119]...); return o }(), "119 groups, where the termination message counts 120"},
		{"no schema", `{"groups":[]}`, "no schema"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := listingFromLog(short, []byte(tc.log))
			if tc.err == "" {
				if err != nil || len(g.Groups) != len(names) {
					t.Fatalf("%d groups, %v", len(g.Groups), err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err %v, want %q", err, tc.err)
			}
		})
	}
}
