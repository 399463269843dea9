// Command launcher runs the kafka-replay launcher: the controller that turns
// each ReplayRequest into a Job of the runner and records the outcome.
//
// Every setting is a flag and an environment variable (prefix LAUNCHER_);
// flags win. The logic lives in package launcher; this is wiring only.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/kelseyhightower/envconfig"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kafka-replay/kafka-replay/launcher"
)

// settings are the launcher's configuration. The envconfig tags name the
// environment variables under the LAUNCHER_ prefix.
type settings struct {
	MetricsBindAddress       string        `envconfig:"METRICS_BIND_ADDRESS" default:":8080"`
	MetricsSecure            bool          `envconfig:"METRICS_SECURE" default:"true"`
	MetricsCertDir           string        `envconfig:"METRICS_CERT_DIR"`
	HealthProbeBindAddress   string        `envconfig:"HEALTH_PROBE_BIND_ADDRESS" default:":8081"`
	LeaderElect              bool          `envconfig:"LEADER_ELECT" default:"true"`
	LeaderElectionNamespace  string        `envconfig:"LEADER_ELECTION_NAMESPACE"`
	LeaderElectionID         string        `envconfig:"LEADER_ELECTION_ID" default:"launcher.kafkareplay.dev"`
	RunnerImage              string        `envconfig:"RUNNER_IMAGE"`
	RunnerImagePullPolicy    string        `envconfig:"RUNNER_IMAGE_PULL_POLICY" default:"IfNotPresent"`
	RunnerServiceAccount     string        `envconfig:"RUNNER_SERVICE_ACCOUNT"`
	AllowedRunnerImages      string        `envconfig:"ALLOWED_RUNNER_IMAGES"`
	RequireRunnerDigest      bool          `envconfig:"REQUIRE_RUNNER_IMAGE_DIGEST"`
	AllowUnboundSecrets      bool          `envconfig:"ALLOW_UNBOUND_SECRETS"`
	WatchNamespaces          string        `envconfig:"WATCH_NAMESPACES"`
	BackoffLimit             int           `envconfig:"BACKOFF_LIMIT" default:"2"`
	ActiveDeadline           time.Duration `envconfig:"ACTIVE_DEADLINE" default:"10m"`
	HistoryLimit             int           `envconfig:"HISTORY_LIMIT" default:"10"`
	StartTimeout             time.Duration `envconfig:"START_TIMEOUT" default:"5m"`
	StartFailAfter           time.Duration `envconfig:"START_FAIL_AFTER" default:"1m"`
	Workers                  int           `envconfig:"WORKERS" default:"8"`
	KEDA                     bool          `envconfig:"KEDA" default:"true"`
	Knative                  bool          `envconfig:"KNATIVE" default:"true"`
	KnativeScale             bool          `envconfig:"KNATIVE_SCALE" default:"true"`
	KnativeNamespace         string        `envconfig:"KNATIVE_NAMESPACE" default:"knative-eventing"`
	Strimzi                  bool          `envconfig:"STRIMZI" default:"true"`
	StrimziClusterNamespaces string        `envconfig:"STRIMZI_CLUSTER_NAMESPACES"`
	KubeAPIQPS               float64       `envconfig:"KUBE_API_QPS" default:"300"`
	KubeAPIBurst             int           `envconfig:"KUBE_API_BURST" default:"600"`
	// Runner container resources; empty keeps launcher.DefaultOptions'.
	RunnerCPURequest    string `envconfig:"RUNNER_CPU_REQUEST"`
	RunnerMemoryRequest string `envconfig:"RUNNER_MEMORY_REQUEST"`
	RunnerCPULimit      string `envconfig:"RUNNER_CPU_LIMIT"`
	RunnerMemoryLimit   string `envconfig:"RUNNER_MEMORY_LIMIT"`
}

const envPrefix = "LAUNCHER"

func main() {
	if err := run(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "launcher:", err)
		os.Exit(1)
	}
}

// config is everything the flags and the environment decide.
type config struct {
	settings
	opts       launcher.Options
	kubeconfig string
	zap        zap.Options
}

// parse reads the environment, then the flags (which win), and validates.
func parse(args []string, stderr io.Writer) (*config, error) {
	defaults := launcher.DefaultOptions()
	c := &config{}
	s := &c.settings
	if err := envconfig.Process(envPrefix, s); err != nil {
		return nil, err
	}
	if s.RunnerImage == "" {
		s.RunnerImage = defaults.RunnerImage
	}

	fs := flag.NewFlagSet("launcher", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := func(name string) string { return " (env " + envPrefix + "_" + name + ")" }
	fs.StringVar(&s.MetricsBindAddress, "metrics-bind-address", s.MetricsBindAddress, "address of the Prometheus /metrics endpoint; 0 disables it"+env("METRICS_BIND_ADDRESS"))
	fs.BoolVar(&s.MetricsSecure, "metrics-secure", s.MetricsSecure, "serve /metrics over HTTPS to callers whose token the API server authenticates and authorises for GET /metrics; false: plain HTTP to anyone"+env("METRICS_SECURE"))
	fs.StringVar(&s.MetricsCertDir, "metrics-cert-dir", s.MetricsCertDir, "directory of the metrics endpoint's tls.crt and tls.key; default: a self-signed certificate made at start"+env("METRICS_CERT_DIR"))
	fs.StringVar(&s.HealthProbeBindAddress, "health-probe-bind-address", s.HealthProbeBindAddress, "address of /healthz and /readyz"+env("HEALTH_PROBE_BIND_ADDRESS"))
	fs.BoolVar(&s.LeaderElect, "leader-elect", s.LeaderElect, "elect one active launcher among replicas, through a Lease"+env("LEADER_ELECT"))
	fs.StringVar(&s.LeaderElectionNamespace, "leader-election-namespace", s.LeaderElectionNamespace, "namespace of the leader election Lease; default: the pod's own"+env("LEADER_ELECTION_NAMESPACE"))
	fs.StringVar(&s.LeaderElectionID, "leader-election-id", s.LeaderElectionID, "name of the leader election Lease"+env("LEADER_ELECTION_ID"))
	fs.StringVar(&s.RunnerImage, "runner-image", s.RunnerImage, "runner container image, unless a request overrides it"+env("RUNNER_IMAGE"))
	fs.StringVar(&s.RunnerImagePullPolicy, "runner-image-pull-policy", s.RunnerImagePullPolicy, "Always, IfNotPresent or Never"+env("RUNNER_IMAGE_PULL_POLICY"))
	fs.StringVar(&s.AllowedRunnerImages, "allowed-runner-images", s.AllowedRunnerImages, "comma-separated images a request's spec.runner.image may name, by registry and repository exactly: a repository (any tag or digest), a registry host[:port], a path ending in / (repositories under it), or *; default: --runner-image's repository"+env("ALLOWED_RUNNER_IMAGES"))
	fs.BoolVar(&s.RequireRunnerDigest, "require-runner-image-digest", s.RequireRunnerDigest, "refuse a request's spec.runner.image without a digest (@sha256:...)"+env("REQUIRE_RUNNER_IMAGE_DIGEST"))
	fs.BoolVar(&s.AllowUnboundSecrets, "allow-unbound-secrets", s.AllowUnboundSecrets, "let runners use a Secret that names no bootstrap.servers with any servers (the runner's REPLAY_ALLOW_UNBOUND_SECRET), for every request; see docs/security.md"+env("ALLOW_UNBOUND_SECRETS"))
	fs.StringVar(&s.WatchNamespaces, "watch-namespaces", s.WatchNamespaces, "comma-separated namespaces whose requests and Jobs the launcher acts on; default: every namespace"+env("WATCH_NAMESPACES"))
	fs.StringVar(&s.RunnerServiceAccount, "runner-service-account", s.RunnerServiceAccount, "ServiceAccount of runner pods; default: the namespace's default"+env("RUNNER_SERVICE_ACCOUNT"))
	fs.IntVar(&s.BackoffLimit, "backoff-limit", s.BackoffLimit, "retries of a retryable runner failure (never for invalid input or an active group)"+env("BACKOFF_LIMIT"))
	fs.DurationVar(&s.ActiveDeadline, "active-deadline", s.ActiveDeadline, "bound on a runner Job, retries included; a request's waitTimeout is added"+env("ACTIVE_DEADLINE"))
	fs.IntVar(&s.HistoryLimit, "history-limit", s.HistoryLimit, "finished apply Jobs kept per namespace and group, and as many planning and dry-run Jobs, oldest deleted first (requests are never deleted); 0 keeps all"+env("HISTORY_LIMIT"))
	fs.DurationVar(&s.StartTimeout, "start-timeout", s.StartTimeout, "bound on a replay's start: its Job accepted by the API server and its runner pod started, else the request fails (JobNotCreated, PodNotStarted) and the group moves on; also, from a request's creation, on its wait for a Strimzi clusterRef's Kafka and KafkaUser to be reconciled (then ClusterRefNotResolved)"+env("START_TIMEOUT"))
	fs.DurationVar(&s.StartFailAfter, "start-fail-after", s.StartFailAfter, "how long a runner pod may fail to start in a way waiting does not mend (image pull, unschedulable, missing Secret or ConfigMap) before the request fails with that reason (ImagePullFailed, Unschedulable, ConfigMissing), within --start-timeout; 0 waits for --start-timeout"+env("START_FAIL_AFTER"))
	fs.BoolVar(&s.KEDA, "keda", s.KEDA, "pause consumers scaled by KEDA through their ScaledObject; false fails requests naming a ScaledObject"+env("KEDA"))
	fs.BoolVar(&s.Knative, "knative", s.Knative, "resolve spec.consumerRef (KafkaSource, Trigger, Subscription); false fails requests with a consumerRef"+env("KNATIVE"))
	fs.BoolVar(&s.KnativeScale, "knative-scale", s.KnativeScale, "pause a KafkaSource through its scale subresource; false fails requests that would pause one"+env("KNATIVE_SCALE"))
	fs.BoolVar(&s.Strimzi, "strimzi", s.Strimzi, "resolve spec.kafka.clusterRef and KafkaConnector consumerRefs, and stop KafkaConnectors named in spec.consumers; false fails those requests"+env("STRIMZI"))
	fs.StringVar(&s.StrimziClusterNamespaces, "strimzi-cluster-namespaces", s.StrimziClusterNamespaces, "comma-separated namespaces, besides a request's own, whose Strimzi Kafkas spec.kafka.clusterRef.namespace may name; default: none (a request's own only)"+env("STRIMZI_CLUSTER_NAMESPACES"))
	fs.StringVar(&s.KnativeNamespace, "knative-namespace", s.KnativeNamespace, "Knative Eventing's namespace, where kafka-channel-config and config-kafka-features are read"+env("KNATIVE_NAMESPACE"))
	fs.IntVar(&s.Workers, "workers", s.Workers, "requests reconciled concurrently"+env("WORKERS"))
	fs.Float64Var(&s.KubeAPIQPS, "kube-api-qps", s.KubeAPIQPS, "client-side rate limit of Kubernetes API calls per second"+env("KUBE_API_QPS"))
	fs.IntVar(&s.KubeAPIBurst, "kube-api-burst", s.KubeAPIBurst, "burst above --kube-api-qps"+env("KUBE_API_BURST"))
	fs.StringVar(&s.RunnerCPURequest, "runner-cpu-request", s.RunnerCPURequest, "runner container CPU request, unless a request overrides its resources"+env("RUNNER_CPU_REQUEST"))
	fs.StringVar(&s.RunnerMemoryRequest, "runner-memory-request", s.RunnerMemoryRequest, "runner container memory request"+env("RUNNER_MEMORY_REQUEST"))
	fs.StringVar(&s.RunnerCPULimit, "runner-cpu-limit", s.RunnerCPULimit, "runner container CPU limit"+env("RUNNER_CPU_LIMIT"))
	fs.StringVar(&s.RunnerMemoryLimit, "runner-memory-limit", s.RunnerMemoryLimit, "runner container memory limit"+env("RUNNER_MEMORY_LIMIT"))
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "path to a kubeconfig; default: $KUBECONFIG, in-cluster, then ~/.kube/config")
	c.zap.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q; every setting is a --flag", fs.Arg(0))
	}
	if err := validate(s); err != nil {
		return nil, err
	}
	c.opts = defaults
	c.opts.RunnerImage = s.RunnerImage
	c.opts.RunnerImagePullPolicy = corev1.PullPolicy(s.RunnerImagePullPolicy)
	c.opts.RunnerServiceAccount = s.RunnerServiceAccount
	c.opts.AllowedRunnerImages = splitList(s.AllowedRunnerImages)
	c.opts.RequireRunnerImageDigest = s.RequireRunnerDigest
	c.opts.AllowUnboundSecrets = s.AllowUnboundSecrets
	c.opts.WatchNamespaces = splitList(s.WatchNamespaces)
	c.opts.BackoffLimit = int32(s.BackoffLimit)
	c.opts.ActiveDeadline = s.ActiveDeadline
	c.opts.HistoryLimit = s.HistoryLimit
	c.opts.StartTimeout = s.StartTimeout
	c.opts.StartFailAfter = s.StartFailAfter
	c.opts.NoKEDA = !s.KEDA
	c.opts.NoKnative = !s.Knative
	c.opts.NoKnativeScale = !s.KnativeScale
	c.opts.KnativeNamespace = s.KnativeNamespace
	c.opts.StrimziClusterNamespaces = splitList(s.StrimziClusterNamespaces)
	c.opts.NoStrimzi = !s.Strimzi
	c.opts.Resources = runnerResources(s, defaults.Resources)
	return c, nil
}

// splitList is a comma-separated list without its blanks.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// runnerQuantity is one runner resource setting and where it goes.
type runnerQuantity struct {
	flag, value string
	limit       bool // a limit, else a request
	name        corev1.ResourceName
}

func runnerQuantities(s *settings) []runnerQuantity {
	return []runnerQuantity{
		{"runner-cpu-request", s.RunnerCPURequest, false, corev1.ResourceCPU},
		{"runner-memory-request", s.RunnerMemoryRequest, false, corev1.ResourceMemory},
		{"runner-cpu-limit", s.RunnerCPULimit, true, corev1.ResourceCPU},
		{"runner-memory-limit", s.RunnerMemoryLimit, true, corev1.ResourceMemory},
	}
}

// runnerResources applies the runner resource settings over the defaults.
// validate has already parsed every value.
func runnerResources(s *settings, defaults corev1.ResourceRequirements) corev1.ResourceRequirements {
	r := *defaults.DeepCopy()
	for _, q := range runnerQuantities(s) {
		if q.value == "" {
			continue
		}
		list := &r.Requests
		if q.limit {
			list = &r.Limits
		}
		if *list == nil {
			*list = corev1.ResourceList{}
		}
		(*list)[q.name] = resource.MustParse(q.value)
	}
	return r
}

// gcPercent is the launcher's garbage collection target: GOGC when it is
// set, else 25. The launcher's live heap is mostly its cache (requests,
// runner Jobs and pods), and what it allocates on top is short-lived (a
// pass's copies, decoded watch events); at Go's default, 100, the heap
// grows to twice the cache before a collection, at 25 to one and a
// quarter. On make bench-launcher that is about 4 MiB of peak resident
// memory less than at 50 (launcher/README.md), for collections that run
// twice as often over a live heap of about 20 MiB, each as long as before.
func gcPercent(getenv func(string) string) (percent int, ours bool) {
	if getenv("GOGC") != "" {
		return 0, false
	}
	return 25, true
}

func run(args []string) error {
	c, err := parse(args, os.Stderr)
	if err != nil {
		return err
	}
	if p, ours := gcPercent(os.Getenv); ours {
		debug.SetGCPercent(p)
	}
	s, opts := c.settings, c.opts
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&c.zap)))

	if c.kubeconfig != "" {
		// controller-runtime reads its own flag on the default FlagSet.
		if err := flag.CommandLine.Set("kubeconfig", c.kubeconfig); err != nil {
			return err
		}
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	// controller-runtime's defaults (20/s, burst 30) make a burst of requests
	// wait on the client rather than on the API server. A replay costs about
	// ten calls (finalizer on and off, the Job, two status writes, the Job's
	// outcome, the record, the pods' logs, a read past the cache): 300/s
	// keeps 25 new requests a second off the client-side limiter, and the
	// API server's priority and fairness still protects it.
	cfg.QPS, cfg.Burst = float32(s.KubeAPIQPS), s.KubeAPIBurst
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        launcher.NewScheme(),
		Cache:                         launcher.CacheOptions(opts.WatchNamespaces...),
		Metrics:                       launcher.MetricsServerOptions(s.MetricsBindAddress, s.MetricsSecure, s.MetricsCertDir),
		HealthProbeBindAddress:        s.HealthProbeBindAddress,
		LeaderElection:                s.LeaderElect,
		LeaderElectionID:              s.LeaderElectionID,
		LeaderElectionNamespace:       s.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return err
	}
	ctx := ctrl.SetupSignalHandler()
	if err := launcher.Setup(ctx, mgr, opts, s.Workers); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	// Ready once the caches have synced: before that the launcher cannot
	// tell which Jobs already exist.
	if err := mgr.AddReadyzCheck("readyz", func(req *http.Request) error {
		if !mgr.GetCache().WaitForCacheSync(req.Context()) {
			return errors.New("caches not synced")
		}
		return nil
	}); err != nil {
		return err
	}
	ctrl.Log.WithName("launcher").Info("starting", "runnerImage", opts.RunnerImage, "historyLimit", opts.HistoryLimit, "workers", s.Workers,
		"metricsSecure", s.MetricsSecure, "watchNamespaces", opts.WatchNamespaces, "allowUnboundSecrets", opts.AllowUnboundSecrets)
	return mgr.Start(ctx)
}

func validate(s *settings) error {
	var errs []string
	switch corev1.PullPolicy(s.RunnerImagePullPolicy) {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	default:
		errs = append(errs, fmt.Sprintf("--runner-image-pull-policy: %q is not Always, IfNotPresent or Never", s.RunnerImagePullPolicy))
	}
	if s.RunnerImage == "" {
		errs = append(errs, "--runner-image: is required")
	} else if _, err := launcher.CheckRunnerImage(s.RunnerImage, []string{"*"}, s.RunnerImage, false); err != nil {
		errs = append(errs, "--runner-image: "+err.Error())
	}
	if err := launcher.ParseImageRules(splitList(s.AllowedRunnerImages)); err != nil {
		errs = append(errs, "--allowed-runner-images: "+err.Error())
	}
	if s.BackoffLimit < 0 {
		errs = append(errs, "--backoff-limit: must not be negative")
	}
	if s.ActiveDeadline < time.Second {
		errs = append(errs, "--active-deadline: must be at least 1s")
	}
	if s.StartTimeout < time.Second {
		errs = append(errs, "--start-timeout: must be at least 1s")
	}
	if s.StartFailAfter < 0 {
		errs = append(errs, "--start-fail-after: must not be negative")
	}
	if s.HistoryLimit < 0 {
		errs = append(errs, "--history-limit: must not be negative")
	}
	if s.KubeAPIQPS <= 0 || s.KubeAPIBurst < 1 {
		errs = append(errs, "--kube-api-qps and --kube-api-burst: must be positive")
	}
	if s.Workers < 1 {
		errs = append(errs, "--workers: must be at least 1")
	}
	for _, q := range runnerQuantities(s) {
		if q.value == "" {
			continue
		}
		if v, err := resource.ParseQuantity(q.value); err != nil || v.Sign() <= 0 {
			errs = append(errs, fmt.Sprintf("--%s: %q is not a positive quantity such as 500m or 128Mi", q.flag, q.value))
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}
