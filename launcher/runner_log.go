package launcher

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

// While a runner runs, the launcher reads the end of its log (pods/log) at
// two kinds of moments, so that status says what the runner is doing and
// keeps its last words when the pod goes before the Job has finished:
//
//   - when the runner is being stopped: its pod is terminating, or its Job
//     has the FailureTarget condition (activeDeadlineSeconds ran out, or
//     the pod failure policy fired) and the Job controller is about to
//     delete it; again on each of its pod's and Job's events until the pod
//     is gone, so the lines it writes on its way out are kept too. These
//     are watch events. The Job controller
//     marks such a Job Failed only after its pods have terminated, by which
//     time a deleted pod, and its log, are gone: this read is the only one
//     that can keep a DeadlineExceeded run's log tail.
//   - while a runner runs longer than RunnerLogInterval (waiting for its
//     group to empty, or retrying Kafka): once per interval. A pod log has
//     no watch, so this is a timed read; it is bounded to one read of at
//     most LogTailBytes per interval per long-running runner, and most runs
//     finish in seconds, before their first.
//
// What it reads goes to status.logTail, and its last line into the Running
// condition's message; a finish that cannot read the log (the pod is gone)
// keeps it.

// defaultRunnerLogInterval is how long a runner runs before its log is first
// read, and how often after that.
const defaultRunnerLogInterval = 30 * time.Second

// logRead says whether to read a running runner's log now, and when next.
type logRead struct {
	// Pod is the pod whose log to read, if any.
	Pod string
	// PodUID identifies the pod for the time of its last read.
	PodUID types.UID
	// Now is true when the log should be read in this pass.
	Now bool
	// After, when not zero, is when the next timed read is due.
	After time.Duration
	// Ended is true when the runner container has ended (in a pod being
	// deleted): its log may be gone from the node (laterTail).
	Ended bool
}

// logReadDue decides when to read the log of a Job's running (or stopping)
// runner, given when that pod's log was last read (zero: never). It is pure.
func logReadDue(job *batchv1.Job, pods []corev1.Pod, lastRead func(types.UID) time.Time, now time.Time, interval time.Duration) logRead {
	pod, cs := stoppingOrRunning(pods)
	if pod == nil {
		return logRead{}
	}
	lr := logRead{Pod: pod.Name, PodUID: pod.UID}
	last := lastRead(pod.UID)
	lr.Ended = cs.State.Terminated != nil
	if isStopping(job, pod) {
		// On every pass while it stops: the passes are its pod's and
		// Job's few events, and this pass's own status write when the
		// tail changed (the lines it writes on its way out). A read
		// whose status write was lost to a conflict is thereby read
		// again, which a read-once rule would not do.
		lr.Now = true
		return lr
	}
	if cs.State.Running == nil || interval <= 0 {
		return lr
	}
	next := cs.State.Running.StartedAt.Add(interval)
	if !last.IsZero() {
		next = last.Add(interval)
	}
	if !now.Before(next) {
		lr.Now, lr.After = true, interval
		return lr
	}
	lr.After = next.Sub(now)
	return lr
}

// stoppingOrRunning is the newest pod whose runner container runs, or has
// ended in a pod that is being deleted (a stop, not a finish).
func stoppingOrRunning(pods []corev1.Pod) (*corev1.Pod, *corev1.ContainerStatus) {
	sorted := slices.Clone(pods)
	slices.SortFunc(sorted, func(a, b corev1.Pod) int { return b.CreationTimestamp.Compare(a.CreationTimestamp.Time) })
	for i := range sorted {
		p := &sorted[i]
		if p.Spec.NodeName == "" {
			continue // no kubelet to ask
		}
		for j := range p.Status.ContainerStatuses {
			cs := &p.Status.ContainerStatuses[j]
			if cs.Name != state.ContainerName {
				continue
			}
			if cs.State.Running != nil || cs.State.Terminated != nil && p.DeletionTimestamp != nil {
				return p, cs
			}
		}
	}
	return nil, nil
}

// isStopping says whether the runner is being stopped: its pod is
// terminating, or its Job has the FailureTarget condition.
func isStopping(job *batchv1.Job, pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil {
		return true
	}
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailureTarget && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// logReads remembers when each running pod's log was last read. It is
// memory only: after a restart a pod's log is read once more than needed.
type logReads struct {
	mu sync.Mutex
	at map[types.UID]time.Time
}

func (l *logReads) last(uid types.UID) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.at[uid]
}

func (l *logReads) set(uid types.UID, t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.at == nil {
		l.at = map[types.UID]time.Time{}
	}
	l.at[uid] = t
}

// forget drops the pods of a finished Job.
func (l *logReads) forget(pods []corev1.Pod) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range pods {
		delete(l.at, pods[i].UID)
	}
}

// followRunner reads a started runner's log when logReadDue says so, and
// puts it in status: the tail in logTail, the last line in the Running
// condition's message.
func (r *ReplayRequestReconciler) followRunner(ctx context.Context, p *pass, job *batchv1.Job, pods []corev1.Pod) {
	if r.Logs == nil {
		return
	}
	due := logReadDue(job, pods, r.logReads.last, p.now, r.Options.RunnerLogInterval)
	if due.After > 0 {
		p.requeueAfter(due.After)
	}
	if !due.Now {
		return
	}
	r.logReads.set(due.PodUID, p.now)
	t, err := r.Logs.Tail(ctx, p.rr.Namespace, due.Pod, state.ContainerName, r.Options.LogTailLines, r.Options.LogTailBytes)
	if err != nil {
		log.FromContext(ctx).V(1).Info("no log tail of the running runner", "pod", due.Pod, "error", err.Error())
		return
	}
	t = record.WithoutFrameLines(t)
	if !laterTail(p.rr.Status.LogTail, t, due.Ended) {
		return
	}
	p.rr.Status.LogTail = state.Tail(t, 4096)
	if c := meta.FindStatusCondition(p.rr.Status.Conditions, v1alpha1.ConditionRunning); c != nil && c.Status == metav1.ConditionTrue && c.Reason != state.ReasonPodWaiting {
		msg := "runner pod " + due.Pod + " is running; its log's last line: " + state.LastLine(t)
		state.SetCondition(p.rr, v1alpha1.ConditionRunning, metav1.ConditionTrue, state.ReasonPodRunning, msg)
		p.rr.Status.Message = msg
	}
}

// laterTail says whether a log read's text is the runner's log, later than
// the tail kept before, or something else. After the container has ended,
// the kubelet may no longer have it and answers a read with a line of its
// own as the log's content (HTTP 200: "unable to retrieve container logs
// for ...", "failed to try resolving symlinks in path ...", as seen on a
// real node): that must not replace the runner's own last words. A log only
// grows, so a later read of it still holds the kept tail's last line. While
// the runner runs, any read is taken: between two reads a busy runner may
// have written more than a tail's lines, except one of the kubelet's own
// lines: the launcher's cache may still show the container running when
// the kubelet has already lost it (seen as a flaky envtest under load).
// It is pure.
func laterTail(kept, read string, ended bool) bool {
	if read == "" || kubeletLogLine(read) {
		return false
	}
	if !ended || kept == "" {
		return true
	}
	return strings.Contains(read, state.LastLine(kept))
}

// kubeletLogLine recognises a read answered by the kubelet with a line of
// its own instead of the container's log: one line, in the words kubelets
// use (pkg/kubelet/kuberuntime). A runner never writes these: its lines
// are slog records or Go's crash output.
func kubeletLogLine(read string) bool {
	line := strings.TrimSuffix(read, "\n")
	if strings.Contains(line, "\n") {
		return false
	}
	return strings.HasPrefix(line, "unable to retrieve container logs for ") ||
		strings.HasPrefix(line, "failed to try resolving symlinks in path ")
}
