package launcher

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// EventSource is the name events are reported from.
const EventSource = "kafka-replay-launcher"

// NewScheme knows the built-in types and ReplayRequest.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	return s
}

// RunnerSelector selects runner Jobs and pods.
func RunnerSelector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{v1alpha1.LabelRunner: v1alpha1.LabelRunnerValue})
}

// CacheOptions restrict the launcher's cache to what it needs: every
// ReplayRequest, but only runner Jobs and pods and the chart's runbook
// CronJobs (label-selected on the server, so other workloads' objects never
// reach the launcher's memory), and none of the objects' managed fields.
func CacheOptions(namespaces ...string) cache.Options {
	sel := RunnerSelector()
	runbook, err := labels.NewRequirement(v1alpha1.LabelRunbook, selection.Exists, nil)
	utilruntime.Must(err)
	opts := cache.Options{
		ByObject: map[client.Object]cache.ByObject{
			&batchv1.Job{}:     {Label: sel},
			&corev1.Pod{}:      {Label: sel},
			&batchv1.CronJob{}: {Label: labels.NewSelector().Add(*runbook)},
		},
		DefaultTransform: cache.TransformStripManagedFields(),
	}
	// Only chosen namespaces (Options.WatchNamespaces): the launcher then
	// neither sees nor acts on requests elsewhere, and its watches need
	// rights in those namespaces only.
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

// Setup registers the launcher's controllers with a manager: the
// ReplayRequest controller and the runbook Job controller, which share one
// per-group queue.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options, workers int) error {
	cs, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return err
	}
	var logs LogFetcher = PodLogs{Client: cs, Timeout: 5 * time.Second}
	if opts.Logs != nil {
		logs = opts.Logs
	}
	rec := mgr.GetEventRecorder(EventSource)
	requestsWaiting.setReader(mgr.GetCache())
	q := newGroupQueue()
	var now func() time.Time
	if opts.Clock != nil {
		now = opts.Clock.Now
	}
	records := NewRecordCollector(mgr.GetClient(), mgr.GetAPIReader(), logs)
	records.TailLines, records.TailBytes = opts.LogTailLines, opts.LogTailBytes
	if err := (&ReplayRequestReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  rec,
		Logs:      logs,
		Records:   records,
		Options:   opts,
		Now:       now,
		queue:     q,
	}).SetupWithManager(ctx, mgr, workers); err != nil {
		return err
	}
	return (&RunbookJobReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  rec,
		Records:   records,
		Options:   opts,
		Now:       now,
		queue:     q,
	}).SetupWithManager(mgr)
}
