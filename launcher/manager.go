package launcher

import (
	"context"
	"maps"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/grouplock"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
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
// reach the launcher's memory), none of the objects' managed fields, and of
// a runner Job's or pod's spec only what the launcher reads (slimRunner).
func CacheOptions(namespaces ...string) cache.Options {
	sel := RunnerSelector()
	runbook, err := labels.NewRequirement(v1alpha1.LabelRunbook, selection.Exists, nil)
	utilruntime.Must(err)
	opts := cache.Options{
		ByObject: map[client.Object]cache.ByObject{
			&batchv1.Job{}:     {Label: sel, Transform: slimRunner},
			&corev1.Pod{}:      {Label: sel, Transform: slimRunner},
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

// slimRunner is the cache's transform of a runner Job or pod: the pod spec
// (a Job's template) keeps only what the launcher reads from the cache, the
// node a pod runs on and each container's name and plain environment values
// (which group a runner replays, whether it is a dry run: PodSpecQueueKey,
// runnerjob.DryRun), and a Job's template its metadata not at all; a pod drops its
// explicit offsets annotation, which only its runner reads (through the
// downward API), and both drop their managed fields. Volumes, resources,
// security contexts, images and arguments are more than half of a runner
// object's memory and the launcher never reads them from the cache: it
// patches Jobs with merge patches computed between two slimmed copies, so
// nothing it drops is ever written back. Status and metadata stay whole.
func slimRunner(in any) (any, error) {
	switch o := in.(type) {
	case *batchv1.Job:
		o.ManagedFields = nil
		o.Spec.Template.ObjectMeta = metav1.ObjectMeta{}
		o.Spec.Template.Spec = slimPodSpec(&o.Spec.Template.Spec)
	case *corev1.Pod:
		o.ManagedFields = nil
		if _, ok := o.Annotations[v1alpha1.AnnotationOffsets]; ok {
			o.Annotations = maps.Clone(o.Annotations)
			delete(o.Annotations, v1alpha1.AnnotationOffsets)
		}
		o.Spec = slimPodSpec(&o.Spec)
	}
	return in, nil
}

func slimPodSpec(s *corev1.PodSpec) corev1.PodSpec {
	out := corev1.PodSpec{NodeName: s.NodeName}
	for i := range s.Containers {
		c := corev1.Container{Name: s.Containers[i].Name}
		for _, e := range s.Containers[i].Env {
			if e.ValueFrom == nil {
				c.Env = append(c.Env, corev1.EnvVar{Name: e.Name, Value: e.Value})
			}
		}
		out.Containers = append(out.Containers, c)
	}
	return out
}

// Setup registers the launcher's controllers with a manager: the
// ReplayRequest controller and the runbook Job controller, which share one
// per-group queue.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options, workers int) error {
	cs, err := corev1client.NewForConfig(mgr.GetConfig())
	if err != nil {
		return err
	}
	var logs record.LogFetcher = record.PodLogs{Client: cs, Timeout: 5 * time.Second}
	if opts.Logs != nil {
		logs = opts.Logs
	}
	rec := mgr.GetEventRecorder(EventSource)
	requestsWaiting.setReader(mgr.GetCache())
	q := grouplock.NewQueue()
	var now func() time.Time
	if opts.Clock != nil {
		now = opts.Clock.Now
	}
	records := record.NewCollector(mgr.GetClient(), mgr.GetAPIReader(), logs)
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
	if err := (&ParentReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  rec,
		Options:   opts,
		Logs:      logs,
		Now:       now,
	}).SetupWithManager(mgr, workers); err != nil {
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
