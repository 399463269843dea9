package chart

import (
	"encoding/json"
	"maps"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kafka-replay/kafka-replay/launcher"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/runner/config"
)

// Runbook is one entry of values.runbooks.
type Runbook struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Group       string `json:"group"`
	GroupType   string `json:"groupType"`
	Topics      []struct {
		Name       string  `json:"name"`
		Partitions []int32 `json:"partitions"`
	} `json:"topics"`
	Target string `json:"target"`
	Kafka  struct {
		BootstrapServers string                         `json:"bootstrapServers"`
		ConfigMapRef     *v1alpha1.LocalObjectReference `json:"configMapRef"`
		SecretRef        *v1alpha1.LocalObjectReference `json:"secretRef"`
	} `json:"kafka"`
	DryRun                bool                         `json:"dryRun"`
	AllowSkip             bool                         `json:"allowSkip"`
	MaxReconsume          *int64                       `json:"maxMessagesToReconsume"`
	WaitForEmpty          string                       `json:"waitForEmpty"`
	CommitMode            v1alpha1.CommitMode          `json:"commitMode"`
	Resources             *corev1.ResourceRequirements `json:"resources"`
	ActiveDeadlineSeconds *int64                       `json:"activeDeadlineSeconds"`
	BackoffLimit          *int32                       `json:"backoffLimit"`
	Image                 *struct {
		Repository string `json:"repository"`
		Tag        string `json:"tag"`
		Digest     string `json:"digest"`
		PullPolicy string `json:"pullPolicy"`
	} `json:"image"`
	ServiceAccountName string `json:"serviceAccountName"`
}

// launcherOptions reads the launcher's Options from the rendered Deployment's
// flags, the way cmd/launcher turns them into Options: the Jobs the deployed
// launcher would make.
func launcherOptions(t *testing.T, objs []*unstructured.Unstructured) launcher.Options {
	t.Helper()
	var dep appsv1.Deployment
	into(t, one(t, objs, "Deployment"), &dep)
	opts := launcher.DefaultOptions()
	for _, a := range dep.Spec.Template.Spec.Containers[0].Args {
		name, v, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		var err error
		switch name {
		case "runner-image":
			opts.RunnerImage = v
		case "runner-image-pull-policy":
			opts.RunnerImagePullPolicy = corev1.PullPolicy(v)
		case "runner-service-account":
			opts.RunnerServiceAccount = v
		case "backoff-limit":
			var n int
			n, err = strconv.Atoi(v)
			opts.BackoffLimit = int32(n)
		case "active-deadline":
			opts.ActiveDeadline, err = time.ParseDuration(v)
		case "history-limit":
			opts.HistoryLimit, err = strconv.Atoi(v)
		case "allowed-runner-images":
			opts.AllowedRunnerImages = strings.Split(v, ",")
		case "require-runner-image-digest":
			opts.RequireRunnerImageDigest = v == "" || v == "true"
		case "allow-unbound-secrets":
			opts.AllowUnboundSecrets = v == "" || v == "true"
		case "watch-namespaces":
			opts.WatchNamespaces = strings.Split(v, ",")
		case "runner-cpu-request", "runner-memory-request", "runner-cpu-limit", "runner-memory-limit":
			var q resource.Quantity
			if q, err = resource.ParseQuantity(v); err == nil {
				list := &opts.Resources.Requests
				if strings.HasSuffix(name, "-limit") {
					list = &opts.Resources.Limits
				}
				if *list == nil {
					*list = corev1.ResourceList{}
				}
				res := corev1.ResourceCPU
				if strings.Contains(name, "memory") {
					res = corev1.ResourceMemory
				}
				(*list)[res] = q
			}
		}
		if err != nil {
			t.Fatalf("launcher flag %s: %v", a, err)
		}
	}
	return opts
}

// equivalentRequest is the ReplayRequest that asks for what a runbook does,
// accepted by the launcher at now (status.resolvedTarget set).
func equivalentRequest(t *testing.T, rb Runbook, now time.Time) *v1alpha1.ReplayRequest {
	t.Helper()
	rr := &v1alpha1.ReplayRequest{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ReplayRequest"},
		ObjectMeta: metav1.ObjectMeta{Namespace: releaseNamespace, Name: "rr-" + rb.Name, UID: types.UID("uid-" + rb.Name)},
		Spec: v1alpha1.ReplayRequestSpec{
			Kafka: v1alpha1.KafkaConnection{
				BootstrapServers: rb.Kafka.BootstrapServers,
				ConfigMapRef:     rb.Kafka.ConfigMapRef,
				SecretRef:        rb.Kafka.SecretRef,
			},
			Group:           rb.Group,
			GroupType:       v1alpha1.GroupType(rb.GroupType),
			DryRun:          rb.DryRun,
			WhenGroupActive: v1alpha1.GroupActiveFail,
		},
	}
	for _, tp := range rb.Topics {
		rr.Spec.Topics = append(rr.Spec.Topics, v1alpha1.TopicSelector{Name: tp.Name, Partitions: tp.Partitions})
	}
	tg, err := config.ParseTarget(rb.Target)
	if err != nil {
		t.Fatalf("runbook %s: target %q: %v", rb.Name, rb.Target, err)
	}
	switch tg.Kind {
	case config.KindEarliest:
		p := v1alpha1.PositionEarliest
		rr.Spec.Target.Position = &p
	case config.KindLatest:
		p := v1alpha1.PositionLatest
		rr.Spec.Target.Position = &p
	case config.KindTime:
		s := strings.TrimPrefix(rb.Target, "time:")
		rr.Spec.Target.Time = &s
	case config.KindAgo:
		rr.Spec.Target.Ago = &metav1.Duration{Duration: tg.Ago}
	case config.KindOffset:
		rr.Spec.Target.Offset = &tg.Offset
	case config.KindShift:
		rr.Spec.Target.ShiftBy = &tg.Shift
	case config.KindGroup:
		rr.Spec.Target.FromGroup = &tg.Group
	default:
		t.Fatalf("runbook %s: target kind %s has no ReplayRequest equivalent", rb.Name, tg.Kind)
	}
	if rb.AllowSkip || rb.MaxReconsume != nil {
		rr.Spec.Limits = &v1alpha1.Limits{AllowSkip: rb.AllowSkip, MaxMessagesToReconsume: rb.MaxReconsume}
	}
	if rb.WaitForEmpty != "" {
		d, err := time.ParseDuration(rb.WaitForEmpty)
		if err != nil {
			t.Fatal(err)
		}
		rr.Spec.WhenGroupActive = v1alpha1.GroupActiveWait
		rr.Spec.WaitTimeout = &metav1.Duration{Duration: d}
	}
	rr.Spec.CommitMode = rb.CommitMode
	if rb.Resources != nil || rb.ActiveDeadlineSeconds != nil || rb.ServiceAccountName != "" || (rb.Image != nil && (rb.Image.Repository != "" || rb.Image.Tag != "" || rb.Image.Digest != "")) {
		rr.Spec.Runner = &v1alpha1.RunnerOverrides{
			Resources:             rb.Resources,
			ActiveDeadlineSeconds: rb.ActiveDeadlineSeconds,
			ServiceAccountName:    rb.ServiceAccountName,
		}
	}
	rr.CreationTimestamp = metav1.NewTime(now)
	rr.Status.ResolvedTarget, err = launcher.ResolveTarget(rr.Spec.Target, now)
	if err != nil {
		t.Fatalf("runbook %s: %v", rb.Name, err)
	}
	return rr
}

// TestRunbookJobMatchesLauncherJob is what keeps runbooks and the launcher in
// step. For every runbook of the all-on values it builds the ReplayRequest
// that asks for the same replay, has the launcher's own Job builder
// (launcher.BuildJob, with the Options that the chart's launcher flags give)
// make its Job, and compares that Job with the one `kubectl create job
// --from=cronjob/<runbook>` makes (the CronJob's jobTemplate, which kubectl
// copies). The whole Job spec must be equal: parallelism, completions,
// backoffLimit, activeDeadlineSeconds, podFailurePolicy,
// podReplacementPolicy, and the pod template (labels, restartPolicy,
// ServiceAccount, token, security contexts, container image, pull policy,
// REPLAY_* environment in order, resources, volumes and mounts, termination message settings).
//
// The only differences allowed, each checked exactly:
//   - labels: kafkareplay.dev/request (launcher) ↔ kafkareplay.dev/runbook;
//   - annotations: kafkareplay.dev/request ↔ kafkareplay.dev/runbook and an
//     optional kafkareplay.dev/description on the Job; the request's name on
//     the pod, which a runbook pod does not have;
//   - a runbook Job is created suspended (the launcher starts it in its
//     group's queue), a launcher Job is created when its turn comes;
//   - the run ID: a request's is its key (namespace/name/spec digest,
//     launcher.RequestRunID), a runbook Job's is its own UID, from the
//     controller-uid label, since every Job made from a runbook is another
//     run; the launcher's spec-digest annotation goes with it;
//   - an ago target: the launcher resolves it once, at acceptance, to
//     time:<RFC3339>; a runbook hands ago:<d> to the runner, which resolves it
//     when the Job starts;
//   - per-runbook image pull policy and backoffLimit, which a ReplayRequest
//     cannot override: they are given to the builder as Options.
func TestRunbookJobMatchesLauncherJob(t *testing.T) {
	for name, args := range map[string][]string{
		"all-on": {"--values", testdata(t, "all-on.yaml")},
		// Defaults: runbooks use the chart's runner ServiceAccount; requests
		// use their namespace's default unless
		// runner.serviceAccount.defaultForRequests.
		"defaults": {"--values", writeValues(t, map[string]any{"runbooks": []any{
			map[string]any{"name": "plain", "group": "orders", "target": "shift:-100", "kafka": map[string]any{"bootstrapServers": "kafka:9092"}},
			map[string]any{"name": "waiting", "group": "orders", "groupType": "Share", "target": "latest", "allowSkip": true, "maxMessagesToReconsume": 5000, "waitForEmpty": "1h2m3s", "commitMode": "Plain",
				"topics": []any{map[string]any{"name": "a", "partitions": []any{3, 1, 2}}},
				"kafka":  map[string]any{"bootstrapServers": "kafka:9092", "configMapRef": map[string]any{"name": "kc"}}},
		}})},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := helm(t, renderArgs(t, args...)...)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := decodeObjects(out)
			if err != nil {
				t.Fatal(err)
			}
			values := renderedValues(t, args)
			compareRunbooks(t, objs, values, name == "defaults")
		})
	}
}

type chartValues struct {
	Runbooks []Runbook `json:"runbooks"`
	Runner   struct {
		ServiceAccount struct {
			DefaultForRequests bool `json:"defaultForRequests"`
		} `json:"serviceAccount"`
	} `json:"runner"`
}

// renderedValues reads the values files among args (the chart's defaults
// have no runbooks, and defaultForRequests is off by default).
func renderedValues(t *testing.T, args []string) chartValues {
	t.Helper()
	var v chartValues
	for i := 0; i+1 < len(args); i += 2 {
		if args[i] != "--values" {
			continue
		}
		b, err := os.ReadFile(args[i+1])
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

func compareRunbooks(t *testing.T, objs []*unstructured.Unstructured, values chartValues, defaultSA bool) {
	t.Helper()
	baseOpts := launcherOptions(t, objs)
	cronJobs := map[string]*batchv1.CronJob{}
	for _, u := range byKind(objs, "CronJob") {
		var cj batchv1.CronJob
		into(t, u, &cj)
		cronJobs[cj.Labels[labelRunbook]] = &cj
	}
	if len(cronJobs) != len(values.Runbooks) || len(values.Runbooks) == 0 {
		t.Fatalf("%d CronJobs for %d runbooks", len(cronJobs), len(values.Runbooks))
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, rb := range values.Runbooks {
		t.Run(rb.Name, func(t *testing.T) {
			cj := cronJobs[rb.Name]
			if cj == nil {
				t.Fatalf("no CronJob labelled %s=%s", labelRunbook, rb.Name)
			}
			// What `kubectl create job --from=cronjob/...` makes.
			runbookJob := &batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      cj.Spec.JobTemplate.Labels,
					Annotations: cj.Spec.JobTemplate.Annotations,
				},
				Spec: cj.Spec.JobTemplate.Spec,
			}
			// The launcher starts and records it only because the chart's
			// CronJob, its controller, carries the labels it trusts.
			cj.UID = types.UID("cronjob-" + rb.Name)
			owned := runbookJob.DeepCopy()
			owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID, Controller: ptr.To(true)}}
			if !launcher.TrustedRunbookJob(owned, cj) {
				t.Errorf("the launcher does not trust a Job made from the chart's CronJob %s (labels %v)", cj.Name, cj.Labels)
			}

			rr := equivalentRequest(t, rb, now)
			opts := baseOpts
			pod := runbookJob.Spec.Template.Spec
			if rb.Image != nil && rb.Image.PullPolicy != "" {
				opts.RunnerImagePullPolicy = corev1.PullPolicy(rb.Image.PullPolicy)
			}
			if rb.Image != nil && (rb.Image.Repository != "" || rb.Image.Tag != "" || rb.Image.Digest != "") {
				rr.Spec.Runner.Image = pod.Containers[0].Image
				if pod.Containers[0].Image == opts.RunnerImage {
					t.Errorf("runbook image override %+v did not change the image %s", rb.Image, opts.RunnerImage)
				}
			}
			if rb.BackoffLimit != nil {
				opts.BackoffLimit = *rb.BackoffLimit
			}
			if defaultSA && rb.ServiceAccountName == "" {
				// Runbooks run in the release namespace, where the chart
				// made the runner's ServiceAccount.
				if !values.Runner.ServiceAccount.DefaultForRequests && opts.RunnerServiceAccount != "" {
					t.Errorf("launcher has --runner-service-account=%s without defaultForRequests", opts.RunnerServiceAccount)
				}
				if pod.ServiceAccountName != "kafka-replay-runner" {
					t.Errorf("runbook ServiceAccount %q, want the chart's runner ServiceAccount", pod.ServiceAccountName)
				}
				opts.RunnerServiceAccount = pod.ServiceAccountName
			}

			launcherJob, err := launcher.BuildJob(rr, launcher.StageApply, opts)
			if err != nil {
				t.Fatal(err)
			}

			// Labels: the same, with the request label in place of the
			// runbook label.
			wantLabels := maps.Clone(launcherJob.Labels)
			if wantLabels[v1alpha1.LabelRequest] != v1alpha1.LabelValue(rr.Name) {
				t.Errorf("launcher Job labels %v lack the request label", wantLabels)
			}
			delete(wantLabels, v1alpha1.LabelRequest)
			wantLabels[labelRunbook] = rb.Name
			for what, got := range map[string]map[string]string{"Job": runbookJob.Labels, "pod": runbookJob.Spec.Template.Labels} {
				if !maps.Equal(got, wantLabels) {
					t.Errorf("%s labels:\n got %v\nwant %v", what, got, wantLabels)
				}
			}
			if _, ok := runbookJob.Labels[v1alpha1.LabelRequest]; ok {
				t.Error("a runbook Job must not carry the request label: the launcher tells runbook Jobs by its absence")
			}

			// Annotations: the group's full name as the launcher writes it.
			wantAnn := maps.Clone(launcherJob.Annotations)
			delete(wantAnn, v1alpha1.AnnotationRequest)
			// A runbook's target is resolved by the runner itself, not on
			// acceptance by the launcher.
			delete(wantAnn, v1alpha1.AnnotationResolvedTarget)
			delete(wantAnn, v1alpha1.AnnotationSpecDigest)
			// Who asked is a request's, stamped at its admission; a
			// runbook Job's creator is in the API server's audit log.
			delete(wantAnn, v1alpha1.AnnotationRequestedBy)
			wantAnn[labelRunbook] = rb.Name
			if rb.Description != "" {
				wantAnn["kafkareplay.dev/description"] = rb.Description
			}
			if !maps.Equal(runbookJob.Annotations, wantAnn) {
				t.Errorf("Job annotations:\n got %v\nwant %v", runbookJob.Annotations, wantAnn)
			}

			// The spec, whole. An ago target is the one expected difference
			// in the environment.
			wantSpec := launcherJob.Spec.DeepCopy()
			wantSpec.Template.Labels = runbookJob.Spec.Template.Labels // compared above
			// The request's pod carries the request's name (the launcher
			// maps pod events back to the request through it); a runbook
			// pod has no request, and is mapped through its Job's name.
			delete(wantSpec.Template.Annotations, v1alpha1.AnnotationRequest)
			if _, ok := runbookJob.Spec.Template.Annotations[v1alpha1.AnnotationRequest]; ok {
				t.Error("a runbook pod must not carry the request annotation")
			}
			if s := runbookJob.Spec.Suspend; s == nil || !*s {
				t.Error("a runbook Job must be created suspended: the launcher starts it in its group's queue")
			}
			wantSpec.Suspend = runbookJob.Spec.Suspend
			runID := false
			for i, e := range wantSpec.Template.Spec.Containers[0].Env {
				if e.Name != config.EnvRunID {
					continue
				}
				if e.Value != launcher.RequestRunID(rr) || e.ValueFrom != nil {
					t.Errorf("launcher run ID %+v, want the request's key %s", e, launcher.RequestRunID(rr))
				}
				wantSpec.Template.Spec.Containers[0].Env[i] = corev1.EnvVar{Name: config.EnvRunID, ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['" + batchv1.ControllerUidLabel + "']"},
				}}
				runID = true
			}
			if !runID {
				t.Fatal("launcher Job has no REPLAY_RUN_ID")
			}
			// A runbook is chart values, not a request: its errors name
			// the runbook's values, not spec fields (issue 32, friction 8).
			named := false
			for i, e := range wantSpec.Template.Spec.Containers[0].Env {
				if e.Name == config.EnvFieldNames {
					wantSpec.Template.Spec.Containers[0].Env[i].Value = string(config.FieldNamesRunbook)
					named = true
				}
			}
			if !named {
				t.Fatalf("launcher Job has no %s", config.EnvFieldNames)
			}
			if strings.HasPrefix(rb.Target, "ago:") {
				env := wantSpec.Template.Spec.Containers[0].Env
				found := false
				for i := range env {
					if env[i].Name == config.EnvTo {
						if !strings.HasPrefix(env[i].Value, "time:") {
							t.Errorf("launcher resolved %s to %q, want time:...", rb.Target, env[i].Value)
						}
						env[i].Value = rb.Target
						found = true
					}
				}
				if !found {
					t.Fatal("launcher Job has no REPLAY_TO")
				}
			}
			if !apiequality.Semantic.DeepEqual(*wantSpec, runbookJob.Spec) {
				t.Errorf("runbook Job spec differs from the launcher's Job spec (- launcher, + runbook):\n%s",
					lineDiff(toJSON(t, wantSpec), toJSON(t, &runbookJob.Spec)))
			}
		})
	}
}

// labelRunbook names the runbook a Job was made from.
const labelRunbook = v1alpha1.LabelRunbook

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
