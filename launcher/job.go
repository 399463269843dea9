package launcher

import (
	"errors"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/clusterref"
	"github.com/kafka-replay/kafka-replay/launcher/internal/knative"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/undo"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// BuildJob makes the Job that runs one stage of a request
// (runnerjob.Build), after checking that the request may have it: its spec
// validates again, its target is the one it was accepted with, its image is
// allowed, and a Manual request's apply Job runs only its approved plan. It
// is pure: the same request, status and options always give the same Job.
// The request must have been accepted (status.resolvedTarget set).
func BuildJob(rr *v1alpha1.ReplayRequest, stage runnerjob.Stage, opts Options) (*batchv1.Job, error) {
	return BuildJobWithInput(rr, stage, opts, nil)
}

// BuildJobWithInput is BuildJob for a Job whose runner reads its target
// from an input file the launcher wrote (runnerjob.Input): the plan an approval
// names, or the record an undo restores. The ConfigMap is mounted
// read-only and the runner is given its bytes' digest, so that a ConfigMap
// changed by anyone else since is refused, not applied. The file is the
// whole scope: no topics go with it.
//
// A Manual request's apply Job is made only from an approved plan: in must
// be that plan, and the approval in status must be the request's own
// annotation of the plan's digest (a status writer cannot approve).
func BuildJobWithInput(rr *v1alpha1.ReplayRequest, stage runnerjob.Stage, opts Options, in *runnerjob.Input) (*batchv1.Job, error) {
	target, err := jobTarget(rr)
	if err != nil {
		return nil, err
	}
	if err := checkApproved(rr, stage, in); err != nil {
		return nil, fmt.Errorf("%w: request %s/%s: %w", errJobRefused, rr.Namespace, rr.Name, err)
	}
	if err := undo.CheckInput(rr, stage, in); err != nil {
		return nil, fmt.Errorf("%w: request %s/%s: %w", errJobRefused, rr.Namespace, rr.Name, err)
	}
	params := runnerjob.Params{Target: target, Input: in}
	if params.SecretDir, params.SecretDirAnnotations = clusterSecretDir(rr); len(params.SecretDir) > 0 {
		params.SecretDirBinding = clusterref.Binding(replay.ResolvedKafka(rr))
	}
	job, err := runnerjob.Build(rr, stage, params, opts.Defaults)
	if err != nil {
		return nil, fmt.Errorf("%w: request %s/%s: %w", errJobRefused, rr.Namespace, rr.Name, err)
	}
	return job, nil
}

// errJobRefused marks a request BuildJob will not make a Job for: its spec
// no longer validates, its image is not allowed, or its status does not
// follow from its spec. Retrying cannot help.
var errJobRefused = errors.New("no Job for this request")

// jobTarget is the target a request's Job runs, decided from the spec every
// time a Job is built, never from a status field alone: whoever may write
// replayrequests/status is not thereby able to choose another target, or
// to skip the spec's validation. The spec is validated again, and the
// target resolved again against the request's creationTimestamp, which
// gives the accepted one exactly (ResolveTarget is a pure function of
// both); status.resolvedTarget must be it.
func jobTarget(rr *v1alpha1.ReplayRequest) (string, error) {
	if rr.Status.ResolvedTarget == "" {
		return "", fmt.Errorf("request %s/%s has no resolved target yet", rr.Namespace, rr.Name)
	}
	if err := ValidateSpec(&rr.Spec); err != nil {
		return "", fmt.Errorf("%w: request %s/%s: %w", errJobRefused, rr.Namespace, rr.Name, err)
	}
	if err := knative.ValidateResolved(rr); err != nil {
		return "", fmt.Errorf("%w: request %s/%s: %w", errJobRefused, rr.Namespace, rr.Name, err)
	}
	if err := validateResolvedKafka(rr); err != nil {
		return "", fmt.Errorf("%w: request %s/%s: %w", errJobRefused, rr.Namespace, rr.Name, err)
	}
	target, err := ResolveTarget(rr.Spec.Target, rr.CreationTimestamp.Time)
	if err != nil {
		return "", fmt.Errorf("%w: request %s/%s: %w", errJobRefused, rr.Namespace, rr.Name, err)
	}
	if target != rr.Status.ResolvedTarget {
		return "", fmt.Errorf("%w: request %s/%s: status.resolvedTarget %q is not the spec's target (%s)", errJobRefused, rr.Namespace, rr.Name, rr.Status.ResolvedTarget, target)
	}
	return target, nil
}
