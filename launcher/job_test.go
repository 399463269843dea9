package launcher

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

func buildJob(t *testing.T, w *testutil.RequestWrapper) *batchv1.Job {
	t.Helper()
	rr := w.UID("0b0d3b6e-6d8e-4c55-9a0e-2f1b1f3f2a10").Obj()
	if rr.CreationTimestamp.IsZero() {
		rr.CreationTimestamp = metav1.NewTime(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	}
	if rr.Status.ResolvedTarget == "" {
		target, err := ResolveTarget(rr.Spec.Target, rr.CreationTimestamp.Time)
		if err != nil {
			t.Fatalf("ResolveTarget: %v", err)
		}
		rr.Status.ResolvedTarget = target
	}
	job, err := BuildJob(rr, runnerjob.StageApply, DefaultOptions())
	if err != nil {
		t.Fatalf("BuildJob: %v", err)
	}
	return job
}

func TestUnitBuildJobEnvironment(t *testing.T) {
	// The run ID is the request's key, a plain value: not the Job's UID.
	runID := "ns/a/" + runnerjob.SpecDigest(&testutil.MakeRequest("ns", "a").Obj().Spec)
	cases := []struct {
		name string
		req  *testutil.RequestWrapper
		want map[string]string
	}{
		{
			name: "earliest, every topic",
			req:  testutil.MakeRequest("ns", "a"),
			want: map[string]string{
				config.EnvBootstrapServers: "kafka.ns.svc:9092", config.EnvGroup: "orders", config.EnvTo: "earliest",
				config.EnvRunID: runID, config.EnvTerminationMessagePath: "/dev/termination-log",
			},
		},
		{
			name: "latest with topics and partitions",
			req:  testutil.MakeRequest("ns", "a").Position(v1alpha1.PositionLatest).Topic("orders", 0, 1, 2).Topic("payments").AllowSkip(),
			want: map[string]string{config.EnvTo: "latest", config.EnvTopics: "orders:0,1,2 payments", config.EnvAllowSkip: "true"},
		},
		{
			name: "time keeps its zone",
			req:  testutil.MakeRequest("ns", "a").Time("2026-03-01T10:30:00+01:00"),
			want: map[string]string{config.EnvTo: "time:2026-03-01T10:30:00+01:00"},
		},
		{
			name: "ago resolved against acceptance",
			req:  testutil.MakeRequest("ns", "a").Ago(2 * time.Hour),
			want: map[string]string{config.EnvTo: "time:2026-03-01T10:00:00Z"},
		},
		{
			name: "offset",
			req:  testutil.MakeRequest("ns", "a").Offset(42),
			want: map[string]string{config.EnvTo: "offset:42"},
		},
		{
			name: "shift back",
			req:  testutil.MakeRequest("ns", "a").ShiftBy(-100),
			want: map[string]string{config.EnvTo: "shift:-100"},
		},
		{
			name: "shift forward has an explicit plus",
			req:  testutil.MakeRequest("ns", "a").ShiftBy(7).AllowSkip(),
			want: map[string]string{config.EnvTo: "shift:+7", config.EnvAllowSkip: "true"},
		},
		{
			name: "from group",
			req:  testutil.MakeRequest("ns", "a").FromGroup("orders-shadow"),
			want: map[string]string{config.EnvTo: "group:orders-shadow"},
		},
		{
			name: "explicit offsets go through a file",
			req:  testutil.MakeRequest("ns", "a").Offsets(v1alpha1.PartitionOffset{Topic: "orders", Partition: 3, Offset: 17}),
			want: map[string]string{config.EnvTo: "file:/etc/kafka-replay/target/offsets.json"},
		},
		{
			name: "dry run and wait",
			req:  testutil.MakeRequest("ns", "a").DryRun().Wait(5 * time.Minute),
			want: map[string]string{config.EnvDryRun: "true", config.EnvWaitForEmpty: "5m0s"},
		},
		{
			name: "a limit on messages to re-consume, 0 included",
			req:  testutil.MakeRequest("ns", "a").ShiftBy(-100).MaxReconsume(0),
			want: map[string]string{config.EnvMaxMessagesToReconsume: "0"},
		},
		{
			name: "both guards, in a dry run too",
			req:  testutil.MakeRequest("ns", "a").Offset(42).DryRun().MaxReconsume(1_000_000).AllowSkip(),
			want: map[string]string{config.EnvDryRun: "true", config.EnvMaxMessagesToReconsume: "1000000", config.EnvAllowSkip: "true"},
		},
		{
			name: "a ConfigMap and a Secret in directories of their own",
			req:  testutil.MakeRequest("ns", "a").ConfigMap("kafka-props").Secret("kafka-creds"),
			want: map[string]string{config.EnvKafkaConfigDir: "/etc/kafka-replay/kafka", config.EnvKafkaSecretDir: "/etc/kafka-replay/kafka-secret"},
		},
		{
			name: "a Secret alone",
			req:  testutil.MakeRequest("ns", "a").Secret("kafka-creds"),
			want: map[string]string{config.EnvKafkaSecretDir: "/etc/kafka-replay/kafka-secret"},
		},
		{
			name: "an Atomic commit",
			req:  testutil.MakeRequest("ns", "a").CommitMode(v1alpha1.CommitMode(config.CommitModeAtomic)),
			want: map[string]string{config.EnvCommitMode: "Atomic"},
		},
		{
			name: "a stated group type",
			req:  testutil.MakeRequest("ns", "a").GroupType(v1alpha1.GroupType(config.GroupTypeShare)),
			want: map[string]string{config.EnvGroupType: "Share"},
		},
		{
			name: "a ConfigMap alone",
			req:  testutil.MakeRequest("ns", "a").ConfigMap("kafka-props"),
			want: map[string]string{config.EnvKafkaConfigDir: "/etc/kafka-replay/kafka"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := testutil.RunnerEnv(buildJob(t, tc.req))
			for k, v := range tc.want {
				if env[k] != v {
					t.Errorf("%s = %q, want %q (env %v)", k, env[k], v, env)
				}
			}
			if _, ok := tc.want[config.EnvDryRun]; !ok {
				if _, set := env[config.EnvDryRun]; set {
					t.Errorf("%s set without dryRun", config.EnvDryRun)
				}
			}
			for _, dir := range []string{config.EnvKafkaConfigDir, config.EnvKafkaSecretDir} {
				if _, ok := tc.want[dir]; !ok {
					if _, set := env[dir]; set {
						t.Errorf("%s set without its ConfigMap or Secret", dir)
					}
				}
			}
			// The guards are the runner's defaults unless the spec says
			// otherwise: no limit, skipping refused; force only if asked.
			for _, g := range []string{config.EnvMaxMessagesToReconsume, config.EnvAllowSkip, config.EnvForce, config.EnvCommitMode, config.EnvGroupType} {
				if _, ok := tc.want[g]; !ok {
					if v, set := env[g]; set {
						t.Errorf("%s = %q set without the spec asking", g, v)
					}
				}
			}
			// Only the operator opts out of the binding.
			if _, set := env[config.EnvAllowUnboundSecret]; set {
				t.Errorf("%s set from a request", config.EnvAllowUnboundSecret)
			}
			// Every name is one the runner reads.
			for k := range env {
				if !strings.HasPrefix(k, config.EnvPrefix+"_") {
					t.Errorf("unexpected variable %s", k)
				}
			}
		})
	}
}

func TestUnitBuildJobOffsetsFile(t *testing.T) {
	job := buildJob(t, testutil.MakeRequest("ns", "a").Offsets(
		v1alpha1.PartitionOffset{Topic: "orders", Partition: 0, Offset: 5},
		v1alpha1.PartitionOffset{Topic: "orders", Partition: 1, Offset: 9},
	))
	raw := job.Spec.Template.Annotations[v1alpha1.AnnotationOffsets]
	var got []config.PartitionOffset
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("offsets annotation %q: %v", raw, err)
	}
	// The runner's own validator accepts what it will read.
	if err := config.ValidateOffsets(got, "file"); err != nil || len(got) != 2 || got[1].Offset != 9 {
		t.Fatalf("offsets = %+v, %v", got, err)
	}
	vol := job.Spec.Template.Spec.Volumes[0]
	if vol.DownwardAPI == nil || vol.DownwardAPI.Items[0].FieldRef.FieldPath != "metadata.annotations['kafkareplay.dev/offsets']" || vol.DownwardAPI.Items[0].Path != "offsets.json" {
		t.Fatalf("target volume = %+v", vol)
	}
	m := job.Spec.Template.Spec.Containers[0].VolumeMounts[0]
	if m.MountPath != "/etc/kafka-replay/target" || !m.ReadOnly {
		t.Fatalf("mount = %+v", m)
	}
	// The pod's annotation can be patched before the kubelet writes the
	// file: the runner is told the exact bytes it must find.
	if got, want := testutil.RunnerEnv(job)[config.EnvFileDigest], config.FileDigestOf([]byte(raw)); got != want {
		t.Fatalf("%s = %q, want the annotation's digest %q", config.EnvFileDigest, got, want)
	}
}

// The ConfigMap and the Secret are two directories, so that the runner can
// tell the Secret's binding from what the ConfigMap says.
func TestUnitBuildJobKafkaVolumes(t *testing.T) {
	job := buildJob(t, testutil.MakeRequest("ns", "a").ConfigMap("props").Secret("creds"))
	spec := job.Spec.Template.Spec
	if len(spec.Volumes) != 2 || spec.Volumes[0].Projected == nil || spec.Volumes[1].Projected == nil {
		t.Fatalf("volumes = %+v", spec.Volumes)
	}
	cm, sec := spec.Volumes[0].Projected, spec.Volumes[1].Projected
	if len(cm.Sources) != 1 || cm.Sources[0].ConfigMap == nil || cm.Sources[0].ConfigMap.Name != "props" {
		t.Fatalf("ConfigMap volume = %+v", cm)
	}
	if len(sec.Sources) != 1 || sec.Sources[0].Secret == nil || sec.Sources[0].Secret.Name != "creds" {
		t.Fatalf("Secret volume = %+v", sec)
	}
	for i, want := range []string{"/etc/kafka-replay/kafka", "/etc/kafka-replay/kafka-secret"} {
		m := spec.Containers[0].VolumeMounts[i]
		if !m.ReadOnly || m.MountPath != want || m.Name != spec.Volumes[i].Name {
			t.Fatalf("mount %d = %+v, want %s", i, m, want)
		}
		if mode := spec.Volumes[i].Projected.DefaultMode; mode == nil || *mode != 0o440 {
			t.Errorf("volume %s mode %v, want 0440", spec.Volumes[i].Name, mode)
		}
	}
	// Credentials are referenced, never copied.
	b, _ := json.Marshal(job)
	if strings.Contains(string(b), "stringData") || strings.Contains(string(b), "\"data\"") {
		t.Fatalf("job carries data: %s", b)
	}
}

// The operator's opt-out of the credentials binding reaches the runner.
func TestUnitBuildJobAllowUnboundSecrets(t *testing.T) {
	opts := DefaultOptions()
	opts.AllowUnboundSecrets = true
	rr := testutil.MakeRequest("ns", "a").Secret("creds").Resolved("earliest").Obj()
	job, err := BuildJob(rr, runnerjob.StageApply, opts)
	if err != nil {
		t.Fatal(err)
	}
	if env := testutil.RunnerEnv(job); env[config.EnvAllowUnboundSecret] != "true" {
		t.Errorf("env = %v", env)
	}
}

func TestUnitBuildJobSettings(t *testing.T) {
	job := buildJob(t, testutil.MakeRequest("team-a", "replay-orders"))
	spec := job.Spec
	pod := spec.Template.Spec
	c := pod.Containers[0]

	if job.Namespace != "team-a" || !strings.HasPrefix(job.Name, "replay-orders-") {
		t.Errorf("job %s/%s", job.Namespace, job.Name)
	}
	if ref := job.OwnerReferences[0]; ref.Kind != "ReplayRequest" || ref.Name != "replay-orders" || !*ref.Controller || !*ref.BlockOwnerDeletion {
		t.Errorf("owner = %+v", ref)
	}
	for _, labels := range []map[string]string{job.Labels, spec.Template.Labels} {
		if labels[v1alpha1.LabelRunner] != "true" || labels[v1alpha1.LabelRequest] != "replay-orders" || labels[v1alpha1.LabelGroup] != "orders" || labels[v1alpha1.LabelStage] != "apply" {
			t.Errorf("labels = %v", labels)
		}
	}
	if job.Annotations[v1alpha1.AnnotationGroup] != "orders" || job.Annotations[v1alpha1.AnnotationRequest] != "replay-orders" {
		t.Errorf("annotations = %v", job.Annotations)
	}
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy = %s", pod.RestartPolicy)
	}
	if ptr.Deref(pod.AutomountServiceAccountToken, true) {
		t.Errorf("automountServiceAccountToken must be false")
	}
	if c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError || c.TerminationMessagePath != config.DefaultTerminationMessagePath {
		t.Errorf("termination message %s %s", c.TerminationMessagePolicy, c.TerminationMessagePath)
	}
	// Restricted Pod Security Standard.
	psc, sc := pod.SecurityContext, c.SecurityContext
	if !*psc.RunAsNonRoot || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context %+v", psc)
	}
	if *sc.AllowPrivilegeEscalation || !*sc.ReadOnlyRootFilesystem || !*sc.RunAsNonRoot || sc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("container security context %+v", sc)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v", c.Resources)
	}
	if *spec.ActiveDeadlineSeconds != 600 || *spec.BackoffLimit != 2 {
		t.Errorf("deadline %d backoff %d", *spec.ActiveDeadlineSeconds, *spec.BackoffLimit)
	}
	if *spec.PodReplacementPolicy != batchv1.Failed {
		t.Errorf("podReplacementPolicy %s", *spec.PodReplacementPolicy)
	}
}

func TestUnitPodFailurePolicyFollowsTheRunnersExitCodes(t *testing.T) {
	p := runnerjob.PodFailurePolicy()
	fail := p.Rules[0]
	if fail.Action != batchv1.PodFailurePolicyActionFailJob || *fail.OnExitCodes.ContainerName != state.ContainerName || fail.OnExitCodes.Operator != batchv1.PodFailurePolicyOnExitCodesOpIn {
		t.Fatalf("rule 0 = %+v", fail)
	}
	got := fail.OnExitCodes.Values
	// A guard's refusal (7) is not retried either: the same input is
	// refused again; nor is a run another replay superseded (8): a retry
	// would fence that one in turn.
	want := []int32{int32(report.ExitInvalidInput), int32(report.ExitGroupActive), int32(report.ExitRefused), int32(report.ExitSuperseded)}
	if !slices.Equal(got, want) {
		t.Fatalf("FailJob exit codes = %v, want %v", got, want)
	}
	ignore := p.Rules[1]
	if ignore.Action != batchv1.PodFailurePolicyActionIgnore || ignore.OnPodConditions[0].Type != corev1.DisruptionTarget {
		t.Fatalf("rule 1 = %+v", ignore)
	}
}

func TestUnitBuildJobOverrides(t *testing.T) {
	res := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
	job := buildJob(t, testutil.MakeRequest("ns", "a").Wait(time.Minute).Runner(v1alpha1.RunnerOverrides{
		Image: "ghcr.io/kafka-replay/runner:dev", ServiceAccountName: "replayer", Resources: &res, ActiveDeadlineSeconds: ptr.To[int64](30),
	}))
	pod := job.Spec.Template.Spec
	if pod.Containers[0].Image != "ghcr.io/kafka-replay/runner:dev" || pod.ServiceAccountName != "replayer" ||
		!pod.Containers[0].Resources.Limits.Memory().Equal(resource.MustParse("1Gi")) || *job.Spec.ActiveDeadlineSeconds != 30 {
		t.Fatalf("overrides not applied: %+v", pod)
	}
	// Without an override the deadline makes room for the wait.
	job = buildJob(t, testutil.MakeRequest("ns", "a").Wait(time.Minute))
	if *job.Spec.ActiveDeadlineSeconds != 660 {
		t.Fatalf("deadline = %d, want 600+60", *job.Spec.ActiveDeadlineSeconds)
	}
}

func TestUnitJobNameIsDeterministicAndValid(t *testing.T) {
	long := strings.Repeat("replay.orders-", 18)[:250]
	for _, name := range []string{"a", "replay-orders", long, "x.y.z"} {
		rr := testutil.MakeRequest("ns", name).UID("uid-1").Obj()
		n1, n2 := runnerjob.Name(rr, runnerjob.StageApply), runnerjob.Name(rr, runnerjob.StageApply)
		if n1 != n2 {
			t.Fatalf("JobName not deterministic: %s %s", n1, n2)
		}
		if errs := validation.IsDNS1123Label(n1); len(errs) > 0 || len(n1) > 52 { // runnerjob.maxJobNameLength: room for the Job controller's pod names
			t.Fatalf("JobName(%q) = %q: %v", name, n1, errs)
		}
		// The name belongs to the request's key: the same request
		// re-created (a new UID) computes the same name, so it cannot make
		// a second Job while the first is kept.
		recreated := testutil.MakeRequest("ns", name).UID("uid-2").Obj()
		if runnerjob.Name(recreated, runnerjob.StageApply) != n1 {
			t.Fatalf("a re-created request gets another Job name than %s", n1)
		}
		if other := testutil.MakeRequest("ns", name).ShiftBy(-5).Obj(); runnerjob.Name(other, runnerjob.StageApply) == n1 {
			t.Fatalf("another spec reuses Job name %s", n1)
		}
		if runnerjob.Name(rr, runnerjob.Stage("plan")) == n1 {
			t.Fatalf("another stage reuses Job name %s", n1)
		}
	}
}

func TestUnitRequestRunID(t *testing.T) {
	a := testutil.MakeRequest("team-a", "replay.orders").ShiftBy(-100).Obj()
	id := runnerjob.RunID(a)
	digest := runnerjob.SpecDigest(&a.Spec)
	if id != "team-a/replay.orders/"+digest || len(digest) != 16 {
		t.Fatalf("RequestRunID = %q (digest %q)", id, digest)
	}
	// Same key, new UID and metadata: the same run.
	again := testutil.MakeRequest("team-a", "replay.orders").ShiftBy(-100).UID("new").Obj()
	again.Labels = map[string]string{"argocd": "resync"}
	if runnerjob.RunID(again) != id {
		t.Fatalf("a re-created request has run ID %q, not %q", runnerjob.RunID(again), id)
	}
	// Any other namespace, name or spec: another run.
	for what, other := range map[string]*v1alpha1.ReplayRequest{
		"namespace": testutil.MakeRequest("team-b", "replay.orders").ShiftBy(-100).Obj(),
		"name":      testutil.MakeRequest("team-a", "replay.orders-2").ShiftBy(-100).Obj(),
		"target":    testutil.MakeRequest("team-a", "replay.orders").ShiftBy(-101).Obj(),
		"dryRun":    testutil.MakeRequest("team-a", "replay.orders").ShiftBy(-100).DryRun().Obj(),
	} {
		if runnerjob.RunID(other) == id {
			t.Errorf("another %s gives the same run ID %q", what, id)
		}
	}
}

func TestUnitLabelsHashInvalidGroupNames(t *testing.T) {
	group := "orders consumer/with spaces and a very long name that is not a label value at all"
	job := buildJob(t, testutil.MakeRequest("ns", "a").Group(group))
	v := job.Labels[v1alpha1.LabelGroup]
	if !strings.HasPrefix(v, v1alpha1.HashedLabelPrefix) || len(validation.IsValidLabelValue(v)) > 0 {
		t.Fatalf("group label = %q", v)
	}
	if job.Annotations[v1alpha1.AnnotationGroup] != group {
		t.Fatalf("group annotation = %q", job.Annotations[v1alpha1.AnnotationGroup])
	}
	if v1alpha1.LabelValue(group) != v || v1alpha1.LabelValue("orders") != "orders" {
		t.Fatal("LabelValue is not stable")
	}
}

func TestUnitBuildJobNeedsAResolvedTarget(t *testing.T) {
	if _, err := BuildJob(testutil.MakeRequest("ns", "a").Obj(), runnerjob.StageApply, DefaultOptions()); err == nil {
		t.Fatal("BuildJob without a resolved target succeeded")
	}
}

func TestUnitRunnerImageFor(t *testing.T) {
	o := DefaultOptions()
	o.RunnerImage = "registry.example.com:5000/kafka-replay/runner:0.1.0"
	for image, want := range map[string]string{
		"": o.RunnerImage, // the default image, as the operator gave it
		"registry.example.com:5000/kafka-replay/runner:0.2.0":  "registry.example.com:5000/kafka-replay/runner:0.2.0",
		"registry.example.com:5000/kafka-replay/runner":        "registry.example.com:5000/kafka-replay/runner",
		"registry.example.com:5000/kafka-replay/runner-evil:1": "",
		"docker.io/library/busybox:latest":                     "",
	} {
		got, err := o.RunnerImageFor(image)
		if (err == nil) != (want != "") || got != want {
			t.Errorf("RunnerImageFor(%q) = %q, %v; want %q", image, got, err, want)
		}
	}
	o.AllowedRunnerImages = []string{"mirror.internal"}
	if _, err := o.RunnerImageFor("mirror.internal/runner:1"); err != nil {
		t.Errorf("an image of an allowed registry was refused: %v", err)
	}
	if _, err := o.RunnerImageFor("registry.example.com:5000/kafka-replay/runner:0.2.0"); err == nil {
		t.Error("an explicit list must replace the default")
	}
	o.AllowedRunnerImages = []string{"*"}
	if _, err := o.RunnerImageFor("anything:1"); err != nil {
		t.Errorf(`"*" must allow any image: %v`, err)
	}
	o.RequireRunnerImageDigest = true
	if _, err := o.RunnerImageFor("anything:1"); err == nil {
		t.Error("a tag passed a digest requirement")
	}
}

// The Job is built from the spec, validated again each time: a status the
// spec does not give (anyone who may write replayrequests/status can set
// one) and a spec the launcher would refuse give no Job.
func TestUnitBuildJobFromTheSpecOnly(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	ago := testutil.MakeRequest("ns", "a").Ago(2 * time.Hour).Created(created.Time).Obj()
	ago.Status.ResolvedTarget = "time:2026-03-01T10:00:00Z"
	if _, err := BuildJob(ago, runnerjob.StageApply, DefaultOptions()); err != nil {
		t.Fatalf("the accepted target: %v", err)
	}
	cases := []struct {
		name string
		rr   func() *v1alpha1.ReplayRequest
		want string
	}{
		{"another target in status", func() *v1alpha1.ReplayRequest {
			rr := ago.DeepCopy()
			rr.Status.ResolvedTarget = "earliest"
			return rr
		}, "is not the spec's target"},
		{"an ago resolved against another instant", func() *v1alpha1.ReplayRequest {
			rr := ago.DeepCopy()
			rr.Status.ResolvedTarget = "time:2026-03-01T09:00:00Z"
			return rr
		}, "is not the spec's target"},
		{"an invalid spec", func() *v1alpha1.ReplayRequest {
			rr := ago.DeepCopy()
			rr.Spec.Kafka.BootstrapServers = "kafka"
			return rr
		}, "kafka.bootstrapServers"},
		{"an image the launcher does not allow", func() *v1alpha1.ReplayRequest {
			rr := ago.DeepCopy()
			rr.Spec.Runner = &v1alpha1.RunnerOverrides{Image: "ghcr.io/kafka-replay/runner-evil:1"}
			return rr
		}, "runner.image"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job, err := BuildJob(tc.rr(), runnerjob.StageApply, DefaultOptions())
			if !errors.Is(err, errJobRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("BuildJob = %v, %v; want an error saying %q", job != nil, err, tc.want)
			}
		})
	}
	// An allowed image is written in its full form, which the chart's
	// admission policy checks.
	rr := ago.DeepCopy()
	rr.Spec.Runner = &v1alpha1.RunnerOverrides{Image: "ghcr.io/kafka-replay/runner:2"}
	job, err := BuildJob(rr, runnerjob.StageApply, DefaultOptions())
	if err != nil || job.Spec.Template.Spec.Containers[0].Image != "ghcr.io/kafka-replay/runner:2" {
		t.Fatalf("BuildJob: %v", err)
	}
}
