// Package launcher is the controller that runs each ReplayRequest as a Job of
// the runner and records the outcome: Setup, the reconcilers (a file per
// phase) and their reads and writes of the cluster. The decisions live in
// pure packages under internal/, one concern each (launcher/README.md,
// "Packages"): internal/runnerjob builds the Job, internal/lifecycle decides
// the phase, internal/grouplock the group lock, and so on.
package launcher

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/clock"

	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
)

// Options are the launcher's defaults for the Jobs it creates and its own
// behaviour. cmd/launcher fills them from flags and the environment.
type Options struct {
	// Defaults are the settings of the runner Jobs the launcher makes
	// (image, service account, resources, retries, deadline).
	runnerjob.Defaults

	// HistoryLimit is how many finished launcher-made apply Jobs are kept
	// per (namespace, group), and apart from them how many planning and
	// dry-run Jobs (expiredJobs); the oldest go first. 0 keeps all. Requests are
	// never deleted: they are the users' objects. The kept Jobs are what
	// recognises a request re-created with the same name and spec
	// (AlreadyRan).
	HistoryLimit int
	// StartTimeout bounds the start of a replay: the API server accepting
	// its Job (else JobNotCreated) and its runner pod starting (else
	// PodNotStarted, naming what the pod waited for). Either way the group
	// goes to the next replay.
	StartTimeout time.Duration
	// StartFailAfter is how long a runner pod may fail to start in a way
	// waiting does not mend (an image that cannot be pulled, no node for
	// it, a missing Secret or ConfigMap: earlyStartFailure) before the
	// request fails with that reason, without waiting for StartTimeout. 0
	// waits for StartTimeout.
	StartFailAfter time.Duration
	// LogTailLines and LogTailBytes bound the log tail copied into status.
	LogTailLines int64
	LogTailBytes int64
	// PodResultGrace is how long after a Job finished the launcher waits for
	// the pod's termination state to reach its cache before it records the
	// outcome from the Job alone.
	PodResultGrace time.Duration
	// RunnerLogInterval is how long a runner runs before the launcher first
	// reads its log into status, and how often after that (followRunner).
	// 0 reads it only when the runner is being stopped.
	RunnerLogInterval time.Duration
	// Logs reads the runner's log tail; nil reads pods/log through the API
	// server.
	Logs record.LogFetcher
	// NoKEDA turns KEDA support off: a request naming a ScaledObject fails,
	// and a Deployment or StatefulSet is paused through its scale even if a
	// ScaledObject targets it (the chart then grants no access to KEDA).
	NoKEDA bool
	// NoKnative turns Knative support off: a request with spec.consumerRef
	// fails, and the chart grants no access to Knative's resources.
	NoKnative bool
	// NoStrimzi turns Strimzi support off: a request with
	// spec.kafka.clusterRef or a KafkaConnector consumerRef fails at
	// acceptance, one that would stop a KafkaConnector fails PauseFailed
	// before anything changes, and the chart grants no access to Strimzi's
	// resources.
	NoStrimzi bool
	// StrimziClusterNamespaces are the namespaces, besides a request's own,
	// whose Kafkas its spec.kafka.clusterRef.namespace may name
	// (--strimzi-cluster-namespaces); any other is refused at acceptance.
	StrimziClusterNamespaces []string
	// NoKnativeScale turns off pausing KafkaSources through their scale
	// subresource (the chart then grants no patch on kafkasources/scale):
	// a request that would pause one fails PauseFailed before anything
	// changes.
	NoKnativeScale bool
	// KnativeNamespace is Knative Eventing's system namespace, where the
	// launcher reads the ConfigMaps kafka-channel-config (a KafkaChannel's
	// bootstrap servers and Secret) and config-kafka-features (the name
	// templates), and only those. Empty: knative-eventing.
	KnativeNamespace string
	// WatchNamespaces limits the launcher to these namespaces' requests
	// and Jobs; empty watches every namespace.
	WatchNamespaces []string
	// Clock is the launcher's clock (start timeouts, approval expiry);
	// nil is the real one. Tests step a fake one instead of sleeping.
	Clock clock.PassiveClock
}

// DefaultOptions are sensible defaults for a small runner.
func DefaultOptions() Options {
	return Options{
		Defaults: runnerjob.Defaults{
			RunnerImage:           "ghcr.io/kafka-replay/runner:latest",
			RunnerImagePullPolicy: corev1.PullIfNotPresent,
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse("50m"),
					corev1.ResourceMemory: resource.MustParse("64Mi"),
				},
				Limits: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse("1"),
					corev1.ResourceMemory: resource.MustParse("256Mi"),
				},
			},
			BackoffLimit:   2,
			ActiveDeadline: 10 * time.Minute,
		},
		HistoryLimit:   10,
		StartTimeout:   5 * time.Minute,
		StartFailAfter: time.Minute,
		LogTailLines:   40,
		LogTailBytes:   4096,
		PodResultGrace: 10 * time.Second,

		RunnerLogInterval: defaultRunnerLogInterval,
	}
}
