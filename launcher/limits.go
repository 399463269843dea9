package launcher

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/kafka-replay/kafka-replay/runner/config"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// GuardEnv is the runner's environment for a request's guards and force:
// spec.limits.maxMessagesToReconsume, spec.limits.allowSkip and spec.force.
// Every Job of a request gets it, the planning Job too: a plan must fail on
// the guards the apply would fail on, before anyone approves it. Unset
// fields set nothing, so the runner's defaults hold: no limit on messages,
// and skipping refused (WouldSkipMessages). It is pure.
func GuardEnv(spec *v1alpha1.ReplayRequestSpec) []corev1.EnvVar {
	var env []corev1.EnvVar
	if l := spec.Limits; l != nil {
		if l.MaxMessagesToReconsume != nil {
			env = append(env, corev1.EnvVar{Name: config.EnvMaxMessagesToReconsume, Value: strconv.FormatInt(*l.MaxMessagesToReconsume, 10)})
		}
		if l.AllowSkip {
			env = append(env, corev1.EnvVar{Name: config.EnvAllowSkip, Value: "true"})
		}
	}
	if spec.Force {
		env = append(env, corev1.EnvVar{Name: config.EnvForce, Value: "true"})
	}
	return env
}
