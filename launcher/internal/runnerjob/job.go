package runnerjob

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// Stage is one step of a request that runs as its own Job, with its own
// name, label and result (ReplayRecord).
type Stage string

const (
	// StageApply moves the offsets (or, with dryRun, only plans).
	StageApply Stage = "apply"
	// StagePlan is the planning Job of a request with approval: Manual: a
	// dry run with the request's guards, whose record is the plan shown
	// for review and, once approved, applied exactly (an input of kind
	// plan to the apply Job).
	StagePlan Stage = "plan"
)

const (
	// Mount points inside the runner pod.
	kafkaConfigDir  = "/etc/kafka-replay/kafka"
	kafkaSecretDir  = "/etc/kafka-replay/kafka-secret"
	targetDir       = "/etc/kafka-replay/target"
	offsetsFileName = "offsets.json"

	kafkaConfigVolume = "kafka-config"
	kafkaSecretVolume = "kafka-secret"
	targetVolume      = "target"
	inputVolume       = "input"

	runnerUID = replay.RunnerUID
)

// Timeout is the runner's --timeout (REPLAY_TIMEOUT) in every Job the
// launcher makes, and in the chart's runbooks. It bounds reading Kafka and,
// once the commit has begun, the commit and its read-back, which the runner
// finishes even after a SIGTERM rather than leave the outcome unknown.
const Timeout = 2 * time.Minute

// terminationGraceMargin is what a runner needs on top of a whole commit
// after a SIGTERM: writing its result, frame and termination message.
const terminationGraceMargin = 30 * time.Second

// TerminationGracePeriodSeconds is the runner pod's grace period: longer
// than the longest commit and read-back a SIGTERM can land in
// (config.CommitBound), so the kubelet's SIGKILL never cuts one. The
// Kubernetes default (30 s) is far shorter.
func TerminationGracePeriodSeconds() int64 {
	return int64((config.CommitBound(Timeout) + terminationGraceMargin) / time.Second)
}

// maxJobNameLength keeps the Job name short enough for the Job controller's
// job-name label and for pod names made from it.
const maxJobNameLength = 52

// OffsetsTarget starts status.resolvedTarget for explicit offsets, which
// the runner receives as a file rather than inline.
const OffsetsTarget = "offsets:"

// SpecDigest is the first 16 hex digits of the SHA-256 of the spec's JSON.
// encoding/json writes struct fields in declaration order and map keys
// sorted, and the API server has already applied the schema's defaults, so
// the same spec always gives the same digest, whoever wrote it and however.
func SpecDigest(spec *v1alpha1.ReplayRequestSpec) string {
	b, err := json.Marshal(spec)
	if err != nil {
		// A spec the API server stored always marshals; never reached.
		panic(fmt.Sprintf("marshal ReplayRequest spec: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}

// RunID is the run ID (REPLAY_RUN_ID) of a request:
// <namespace>/<name>/<spec digest>. It belongs to what the request asks for,
// not to one object: a request deleted and applied again with the same name
// and spec (a GitOps re-sync, a restore) has the same run ID, so the runner
// finds its own earlier commit in the group's commit metadata and does not
// apply it again. Another spec, or another name, is another run.
func RunID(rr *v1alpha1.ReplayRequest) string {
	return rr.Namespace + "/" + rr.Name + "/" + SpecDigest(&rr.Spec)
}

// Name is the deterministic name of a request's Job for a stage: the
// request's name, cut to fit, and a hash of its name, spec digest and the
// stage. It comes from the request's key, not its UID, so it is the same for
// every incarnation of the same request: a retried reconcile, a restarted
// launcher or a request re-created with the same name and spec all compute
// it, and creating the Job again fails with AlreadyExists (see AlreadyRan)
// instead of making a second one.
//
// The planning Job (StagePlan) is the exception: its name also carries the
// request's UID. A plan changes nothing, so planning again is safe, and a
// request re-created after a rejection or an expiry must plan afresh rather
// than find the earlier incarnation's plan (its apply Job keeps the
// request's key, so an approved replay still never runs twice). So is the
// list Job (StageList), for the same reasons: a re-created request lists
// the groups afresh.
func Name(rr *v1alpha1.ReplayRequest, stage Stage) string {
	key := rr.Name + "/" + SpecDigest(&rr.Spec) + "/" + string(stage)
	if stage == StagePlan || stage == StageList {
		key += "/" + string(rr.UID)
	}
	sum := sha256.Sum256([]byte(key))
	suffix := hex.EncodeToString(sum[:])[:8]
	base := strings.ReplaceAll(rr.Name, ".", "-")
	if n := maxJobNameLength - len(suffix) - 1; len(base) > n {
		base = base[:n]
	}
	base = strings.TrimRight(base, "-")
	return base + "-" + suffix
}

// Labels are the labels every launcher-made runner Job and pod carries.
func Labels(rr *v1alpha1.ReplayRequest, stage Stage) map[string]string {
	l := map[string]string{
		v1alpha1.LabelRunner:  v1alpha1.LabelRunnerValue,
		v1alpha1.LabelRequest: v1alpha1.LabelValue(rr.Name),
		v1alpha1.LabelGroup:   v1alpha1.LabelValue(replay.Group(rr)),
		v1alpha1.LabelStage:   string(stage),
	}
	// A child request's runs are listed with its parent's (docs/groups.md),
	// also once the requests are gone.
	if parent, ok := rr.Labels[v1alpha1.LabelParent]; ok {
		l[v1alpha1.LabelParent] = parent
	}
	return l
}

// parentName is the full name of a child request's parent (its controller),
// or "" for a request that is no child.
func parentName(rr *v1alpha1.ReplayRequest) string {
	if _, ok := rr.Labels[v1alpha1.LabelParent]; !ok {
		return ""
	}
	if o := metav1.GetControllerOf(rr); o != nil && o.Kind == "ReplayRequest" {
		return o.Name
	}
	return ""
}

// Defaults are the launcher's settings for the runner Jobs it makes, which a
// request's spec.runner may override. cmd/launcher fills them from flags and
// the environment.
type Defaults struct {
	// RunnerImage is the runner's container image, unless a request
	// overrides it.
	RunnerImage string
	// RunnerImagePullPolicy is the runner container's pull policy.
	RunnerImagePullPolicy corev1.PullPolicy
	// AllowedRunnerImages are the images a request's spec.runner.image
	// may name, compared by registry and repository exactly (image.go):
	// a repository (any tag or digest), a registry host[:port], a path
	// ending in "/" (the repositories under it), or "*" (any). Empty allows
	// the RunnerImage's own repository. Whoever may create a ReplayRequest
	// does not thereby get to run an image of their choosing with the
	// launcher's right to create Jobs.
	AllowedRunnerImages []string
	// RequireRunnerImageDigest refuses a spec.runner.image without a
	// digest, so that what runs cannot change under a tag.
	RequireRunnerImageDigest bool
	// AllowUnboundSecrets lets runner pods use a Secret that names no
	// bootstrap.servers with any servers (the runner's
	// REPLAY_ALLOW_UNBOUND_SECRET), for a whole install: an operator's
	// opt-out of the credentials binding (docs/security.md). A Secret that
	// names its servers is held to them regardless.
	AllowUnboundSecrets bool
	// RunnerServiceAccount runs runner pods as this ServiceAccount unless a
	// request overrides it; empty means the namespace's default.
	RunnerServiceAccount string
	// Resources are the runner container's default requests and limits.
	Resources corev1.ResourceRequirements
	// BackoffLimit is how many times a retryable runner failure is retried.
	// Invalid input and an active group are never retried.
	BackoffLimit int32
	// ActiveDeadline bounds a Job, retries included, unless a request sets
	// runner.activeDeadlineSeconds. A request's waitTimeout is added to it.
	ActiveDeadline time.Duration
}

// Params is what the launcher has decided for one Job before it is built:
// nothing here is read from the request again.
type Params struct {
	// Target is the runner's REPLAY_TO, checked against the spec
	// (status.resolvedTarget as the spec resolves it); an Input replaces it.
	Target string
	// Input is the file the runner reads its target from, if any.
	Input *Input
	// SecretDir and SecretDirAnnotations are the runner's secret directory
	// for a clusterRef request and the pod annotations its downward API
	// files read, and SecretDirBinding the runner's environment that binds
	// it to the resolution (clusterref.Binding: the cluster's ID, the
	// digests of what the annotations hold); empty for any other request.
	SecretDir            []corev1.VolumeProjection
	SecretDirAnnotations map[string]string
	SecretDirBinding     []corev1.EnvVar
}

// Build makes the Job that runs one stage of a request. It is pure: the
// same request, status, parameters and defaults always give the same Job.
// The one check it makes is the runner image's (RunnerImageFor); the
// launcher checks the rest before (the spec, the target, the approval, the
// input).
//
// Credentials never appear in the Job: the Kafka ConfigMap and Secret are
// referenced by name and mounted into the pod by the kubelet.
func Build(rr *v1alpha1.ReplayRequest, stage Stage, p Params, d Defaults) (*batchv1.Job, error) {
	image := d.RunnerImage
	if o := rr.Spec.Runner; o != nil {
		var err error
		if image, err = d.RunnerImageFor(o.Image); err != nil {
			return nil, fmt.Errorf("runner.image: %w", err)
		}
	}
	target, in := p.Target, p.Input
	labels := Labels(rr, stage)
	annotations := map[string]string{
		v1alpha1.AnnotationGroup:   replay.Group(rr),
		v1alpha1.AnnotationRequest: rr.Name,
		// With the request's name, the spec digest says which replay the
		// Job ran: a request re-created with both the same is AlreadyRan.
		v1alpha1.AnnotationSpecDigest: SpecDigest(&rr.Spec),
		// The Job is where a resolved target is first stored when the
		// request starts at once; see ReplayRequestReconciler.accept.
		v1alpha1.AnnotationResolvedTarget: rr.Status.ResolvedTarget,
		// Who asked, as admission stamped it (never status alone).
		v1alpha1.AnnotationRequestedBy: rr.Requester(),
	}
	if parent := parentName(rr); parent != "" {
		annotations[v1alpha1.AnnotationParent] = parent
	}
	if a := rr.Status.Approval; stage == StageApply && a != nil && a.Decision == v1alpha1.ApprovalApproved {
		// Who approved which plan, and when: the Job alone tells it after
		// the request is gone.
		annotations[v1alpha1.AnnotationApprovedBy] = a.By
		annotations[v1alpha1.AnnotationPlanDigest] = a.Digest
		if a.At != nil {
			annotations[v1alpha1.AnnotationApprovedAt] = a.At.UTC().Format(time.RFC3339)
		}
	}
	if in != nil && in.Undo != nil {
		// What an undo restores, on its Job: status.undo is taken back
		// from it when a pass stopped before its status write.
		maps.Copy(annotations, UndoAnnotations(in.Undo))
	}
	// The pod carries the request's name too: pod events are mapped back
	// to the request through it.
	podAnnotations := map[string]string{v1alpha1.AnnotationRequest: rr.Name}

	env := []corev1.EnvVar{
		{Name: config.EnvBootstrapServers, Value: replay.BootstrapServers(rr)},
		{Name: config.EnvGroup, Value: replay.Group(rr)},
	}
	if entries := ScopeEntries(replay.Topics(rr)); len(entries) > 0 && in == nil {
		env = append(env, corev1.EnvVar{Name: config.EnvTopics, Value: strings.Join(entries, " ")})
	}

	var volumes []corev1.Volume
	var mounts []corev1.VolumeMount

	switch {
	case in != nil:
		target = string(in.Kind) + ":" + inputDir + "/" + InputKey
		volumes = append(volumes, corev1.Volume{
			Name: inputVolume,
			VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: in.ConfigMap},
				Items:                []corev1.KeyToPath{{Key: InputKey, Path: InputKey}},
				DefaultMode:          ptr.To[int32](0o440),
			}},
		})
		mounts = append(mounts, corev1.VolumeMount{Name: inputVolume, MountPath: inputDir, ReadOnly: true})
		env = append(env, corev1.EnvVar{Name: config.EnvFileDigest, Value: in.Digest})
	case strings.HasPrefix(target, OffsetsTarget):
		// The runner reads explicit offsets only from a file. The list
		// travels in a pod annotation and a downward API volume turns it into
		// that file: nothing else to create, clean up or grant access to.
		b, err := json.Marshal(PartitionOffsets(rr.Spec.Target.Offsets))
		if err != nil {
			return nil, err
		}
		podAnnotations[v1alpha1.AnnotationOffsets] = string(b)
		// Whoever may patch pods could change the annotation before the
		// kubelet writes the file: the runner refuses other bytes.
		env = append(env, corev1.EnvVar{Name: config.EnvFileDigest, Value: config.FileDigestOf(b)})
		target = "file:" + targetDir + "/" + offsetsFileName
		volumes = append(volumes, corev1.Volume{
			Name: targetVolume,
			VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
				Items: []corev1.DownwardAPIVolumeFile{{
					Path:     offsetsFileName,
					FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + v1alpha1.AnnotationOffsets + "']"},
				}},
			}},
		})
		mounts = append(mounts, corev1.VolumeMount{Name: targetVolume, MountPath: targetDir, ReadOnly: true})
	}
	env = append(env, corev1.EnvVar{Name: config.EnvTo, Value: target})
	if rr.Spec.DryRun || stage == StagePlan {
		env = append(env, corev1.EnvVar{Name: config.EnvDryRun, Value: "true"})
	}
	env = append(env, guardEnv(&rr.Spec)...)
	if m := rr.Spec.CommitMode; m != "" {
		env = append(env, corev1.EnvVar{Name: config.EnvCommitMode, Value: string(m)})
	}
	if k := rr.Spec.GroupType; k != "" {
		env = append(env, corev1.EnvVar{Name: config.EnvGroupType, Value: string(k)})
	}
	// On the planning Job too: its dry run lists the topics, which the
	// plan's digest binds, and the apply of that plan needs the same
	// setting to delete them.
	if rr.Spec.DeleteAllInternalTopics {
		env = append(env, corev1.EnvVar{Name: config.EnvDeleteAllInternalTopics, Value: "true"})
	}
	var wait time.Duration
	// A dry run never waits for the group: it commits nothing.
	if rr.Spec.WhenGroupActive == v1alpha1.GroupActiveWait && rr.Spec.WaitTimeout != nil && stage != StagePlan {
		wait = rr.Spec.WaitTimeout.Duration
		env = append(env, corev1.EnvVar{Name: config.EnvWaitForEmpty, Value: wait.String()})
	}
	env = append(env,
		corev1.EnvVar{Name: config.EnvRunID, Value: RunID(rr)},
		corev1.EnvVar{Name: config.EnvTerminationMessagePath, Value: corev1.TerminationMessagePathDefault},
		// The grace period below is derived from this bound.
		corev1.EnvVar{Name: config.EnvTimeout, Value: Timeout.String()},
		// The whole result as a frame in the log, read into the
		// ReplayRecord: the termination message holds only 4 KiB.
		corev1.EnvVar{Name: config.EnvEmitRecord, Value: "true"},
		// The request's user reads the runner's errors in status: in the
		// request's field names, not the runner's flags.
		corev1.EnvVar{Name: config.EnvFieldNames, Value: string(config.FieldNamesSpec)},
	)

	// The ConfigMap and the Secret are mounted apart: the runner reads the
	// credentials' binding (the Secret's bootstrap.servers) from the
	// Secret's directory only, and refuses a ConfigMap that would change
	// how they are presented (runner/config/credentials.go).
	if ref := replay.ConfigMapRef(rr); ref != nil {
		volumes, mounts = withPropertyVolume(volumes, mounts, kafkaConfigVolume, kafkaConfigDir, corev1.VolumeProjection{
			ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name}},
		})
		env = append(env, corev1.EnvVar{Name: config.EnvKafkaConfigDir, Value: kafkaConfigDir})
	}
	if secret := replay.SecretProjection(rr); secret != nil {
		volumes, mounts = withPropertyVolume(volumes, mounts, kafkaSecretVolume, kafkaSecretDir, corev1.VolumeProjection{Secret: secret})
		env = append(env, corev1.EnvVar{Name: config.EnvKafkaSecretDir, Value: kafkaSecretDir})
		if d.AllowUnboundSecrets {
			env = append(env, corev1.EnvVar{Name: config.EnvAllowUnboundSecret, Value: "true"})
		}
	} else if sources := p.SecretDir; len(sources) > 0 {
		// Bound by its own bootstrap.servers: never unbound.
		volumes, mounts = withPropertyVolume(volumes, mounts, kafkaSecretVolume, kafkaSecretDir, sources...)
		maps.Copy(podAnnotations, p.SecretDirAnnotations)
		env = append(env, corev1.EnvVar{Name: config.EnvKafkaSecretDir, Value: kafkaSecretDir})
		env = append(env, p.SecretDirBinding...)
	}

	serviceAccount := d.RunnerServiceAccount
	resources := *d.Resources.DeepCopy()
	deadline := int64(d.ActiveDeadline.Seconds()) + int64(wait.Seconds())
	if o := rr.Spec.Runner; o != nil {
		if o.ServiceAccountName != "" {
			serviceAccount = o.ServiceAccountName
		}
		if o.Resources != nil {
			resources = *o.Resources.DeepCopy()
		}
		if o.ActiveDeadlineSeconds != nil {
			deadline = *o.ActiveDeadlineSeconds
		}
	}

	job := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: batchv1.SchemeGroupVersion.String(), Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        Name(rr, stage),
			Namespace:   rr.Namespace,
			Labels:      labels,
			Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         v1alpha1.GroupVersion.String(),
				Kind:               "ReplayRequest",
				Name:               rr.Name,
				UID:                rr.UID,
				Controller:         ptr.To(true),
				BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: batchv1.JobSpec{
			Parallelism:           ptr.To[int32](1),
			Completions:           ptr.To[int32](1),
			BackoffLimit:          ptr.To(d.BackoffLimit),
			ActiveDeadlineSeconds: ptr.To(deadline),
			PodFailurePolicy:      PodFailurePolicy(),
			// A replacement pod starts only once the failed one is gone, so
			// two runners never touch the group at the same time.
			PodReplacementPolicy: ptr.To(batchv1.Failed),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      maps.Clone(labels),
					Annotations: podAnnotations,
				},
				Spec: corev1.PodSpec{
					RestartPolicy:                 corev1.RestartPolicyNever,
					TerminationGracePeriodSeconds: ptr.To(TerminationGracePeriodSeconds()),
					ServiceAccountName:            serviceAccount,
					AutomountServiceAccountToken:  ptr.To(false),
					EnableServiceLinks:            ptr.To(false),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						RunAsUser:      ptr.To[int64](runnerUID),
						RunAsGroup:     ptr.To[int64](runnerUID),
						FSGroup:        ptr.To[int64](runnerUID),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:                     state.ContainerName,
						Image:                    image,
						ImagePullPolicy:          d.RunnerImagePullPolicy,
						Env:                      env,
						Resources:                resources,
						VolumeMounts:             mounts,
						TerminationMessagePath:   corev1.TerminationMessagePathDefault,
						TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							RunAsNonRoot:             ptr.To(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
							SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
						},
					}},
					Volumes: volumes,
				},
			},
		},
	}
	return job, nil
}

// RunnerImageFor is the image a request's runner runs: the launcher's own
// for an empty spec.runner.image, else the request's, parsed and checked
// against AllowedRunnerImages (and RequireRunnerImageDigest), in its full
// normalised form.
func (d Defaults) RunnerImageFor(image string) (string, error) {
	if image == "" {
		return d.RunnerImage, nil
	}
	return CheckImage(image, d.AllowedRunnerImages, d.RunnerImage, d.RequireRunnerImageDigest)
}

// PodFailurePolicy fails the Job at once for the runner's exit codes that a
// retry cannot fix (report.ExitCode.Retryable: invalid input, an active
// group), ignores disruptions such as preemption or node drain (they do not
// count against backoffLimit), and lets every other failure retry. A retry is
// safe: the run ID makes the runner idempotent.
func PodFailurePolicy() *batchv1.PodFailurePolicy {
	var fatal []int32
	for code := report.ExitInternal; code <= report.LastExitCode; code++ {
		if !code.Retryable() {
			fatal = append(fatal, int32(code))
		}
	}
	slices.Sort(fatal)
	return &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		{
			Action: batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
				ContainerName: ptr.To(state.ContainerName),
				Operator:      batchv1.PodFailurePolicyOnExitCodesOpIn,
				Values:        fatal,
			},
		},
		{
			Action: batchv1.PodFailurePolicyActionIgnore,
			OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{
				Type:   corev1.DisruptionTarget,
				Status: corev1.ConditionTrue,
			}},
		},
	}}
}

// withPropertyVolume mounts one ConfigMap or Secret as a directory of
// librdkafka properties, read-only and readable by the runner's group only
// (fsGroup).
func withPropertyVolume(volumes []corev1.Volume, mounts []corev1.VolumeMount, name, dir string, src ...corev1.VolumeProjection) ([]corev1.Volume, []corev1.VolumeMount) {
	volumes = append(volumes, corev1.Volume{
		Name: name,
		VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources:     src,
			DefaultMode: ptr.To[int32](0o440),
		}},
	})
	return volumes, append(mounts, corev1.VolumeMount{Name: name, MountPath: dir, ReadOnly: true})
}
