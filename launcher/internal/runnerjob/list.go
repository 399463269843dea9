package runnerjob

import (
	"errors"
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kafka-replay/kafka-replay/runner/config"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// StageList is the list Job of a request with spec.groupSelector: the
// runner's REPLAY_LIST, read-only, whose listing the launcher resolves
// the selector over once, at acceptance (docs/groups.md). The launcher
// never holds the credentials, so the listing is the runner's.
const StageList Stage = "list"

// listEnv are the variables of a run a list takes too: the connection
// (servers, property directories, the credentials' binding) and how it
// answers. Everything else a run's Job has (group, target, run ID, guards)
// is left out: the list is read-only and takes no target.
var listEnv = []string{
	config.EnvBootstrapServers, config.EnvKafkaConfigDir, config.EnvKafkaSecretDir,
	config.EnvAllowUnboundSecret, config.EnvTimeout, config.EnvTerminationMessagePath, config.EnvFieldNames,
}

// BuildList makes the list Job of a parent with spec.groupSelector: a
// runner Job of the request (Build: the same image check, Kafka settings,
// Secret mounts, pod restrictions, owner and labels) that lists the
// cluster's groups instead of a run, with the whole listing on stdout as
// JSON (REPLAY_OUTPUT=json, read back from the pod's log) and as many
// groups as fit in the termination message. It is pure.
//
// A clusterRef is refused: a parent does not resolve one (each child
// does), and a list Job without its servers and binding would list
// nothing or the wrong cluster.
func BuildList(rr *v1alpha1.ReplayRequest, d Defaults) (*batchv1.Job, error) {
	if rr.Spec.GroupSelector == nil {
		return nil, errors.New("no spec.groupSelector to list the groups for")
	}
	if replay.UsesClusterRef(rr) {
		return nil, errors.New("spec.groupSelector: not with spec.kafka.clusterRef (not built): give kafka.bootstrapServers and secretRef, or list the groups in spec.groups")
	}
	job, err := Build(rr, StageList, Params{}, d)
	if err != nil {
		return nil, err
	}
	// No group: a list holds no group's lock and is no replay of one.
	delete(job.Labels, v1alpha1.LabelGroup)
	delete(job.Spec.Template.Labels, v1alpha1.LabelGroup)
	delete(job.Annotations, v1alpha1.AnnotationGroup)
	delete(job.Annotations, v1alpha1.AnnotationResolvedTarget)
	c := &job.Spec.Template.Spec.Containers[0]
	env := []corev1.EnvVar{{Name: config.EnvList, Value: "true"}, {Name: config.EnvOutput, Value: config.OutputJSON}}
	for _, e := range c.Env {
		if slices.Contains(listEnv, e.Name) {
			env = append(env, e)
		}
	}
	c.Env = env
	// A list does not wait for any group.
	job.Spec.ActiveDeadlineSeconds = nil
	if deadline := listDeadline(rr, d); deadline > 0 {
		job.Spec.ActiveDeadlineSeconds = &deadline
	}
	return job, nil
}

func listDeadline(rr *v1alpha1.ReplayRequest, d Defaults) int64 {
	if o := rr.Spec.Runner; o != nil && o.ActiveDeadlineSeconds != nil {
		return *o.ActiveDeadlineSeconds
	}
	return int64(d.ActiveDeadline.Seconds())
}

// SameListPod says whether a pod spec runs what want (a list Job's pod
// template, as BuildList made it) runs: the one runner container with the
// same image, command, arguments, environment and mounts, and the same
// volumes. A Job or pod planted under the list Job's name, or with its
// labels, whose listing would choose a parent's groups, is thereby either
// the same listing of the same cluster with the same credentials, or
// refused. It is pure.
func SameListPod(want, got *corev1.PodSpec) error {
	if len(got.Containers) != 1 || len(got.InitContainers) != 0 || len(got.EphemeralContainers) != 0 {
		return fmt.Errorf("it has %d containers (and %d init containers), not the runner alone", len(got.Containers), len(got.InitContainers))
	}
	w, g := &want.Containers[0], &got.Containers[0]
	switch {
	case g.Name != state.ContainerName:
		return fmt.Errorf("its container is %q, not %q", g.Name, state.ContainerName)
	case g.Image != w.Image:
		return fmt.Errorf("its image is %q, not %q", g.Image, w.Image)
	case !slices.Equal(g.Command, w.Command) || !slices.Equal(g.Args, w.Args):
		return errors.New("its command or arguments are not the runner's list")
	case len(g.EnvFrom) != 0 || !equality.Semantic.DeepEqual(g.Env, w.Env):
		return errors.New("its environment is not the list's")
	case !equality.Semantic.DeepEqual(g.VolumeMounts, w.VolumeMounts) || !sameVolumes(want.Volumes, got.Volumes):
		return errors.New("its volumes are not the list's")
	}
	return nil
}

// sameVolumes compares volumes by name and source, with the API server's
// defaults (a projected volume's DefaultMode is set by BuildList) left as
// they are.
func sameVolumes(want, got []corev1.Volume) bool {
	if len(want) != len(got) {
		return false
	}
	for i := range want {
		if want[i].Name != got[i].Name || !equality.Semantic.DeepEqual(want[i].VolumeSource, got[i].VolumeSource) {
			return false
		}
	}
	return true
}
