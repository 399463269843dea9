package launcher

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/grouplock"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// resultAnnotations are the annotations that record an outcome on its Job, so
// that the Job alone tells what happened once the request is gone, and so that
// runbook Jobs (made from the chart's CronJobs, with no request) have the
// same record. They hold the runner's compact result, which never contains
// credentials, and nothing from the request's Kafka configuration.
func resultAnnotations(o record.Outcome) map[string]string {
	a := map[string]string{
		v1alpha1.AnnotationOutcome: v1alpha1.OutcomeFailed,
		v1alpha1.AnnotationReason:  o.Reason,
	}
	if o.Succeeded {
		a[v1alpha1.AnnotationOutcome] = v1alpha1.OutcomeSucceeded
	}
	if !o.FinishedAt.IsZero() {
		a[v1alpha1.AnnotationFinishedAt] = o.FinishedAt.UTC().Format(time.RFC3339)
	}
	if o.Result != nil {
		if b, err := report.Compact(o.Result, report.MaxTerminationMessageBytes); err == nil {
			a[v1alpha1.AnnotationResult] = string(b)
		}
		a[v1alpha1.AnnotationMessagesReconsumed] = strconv.FormatInt(o.Result.Totals.MessagesToReconsume, 10)
		// Skips are history too: a replay that moved a group forward past
		// 276 messages would otherwise read as one that moved nothing.
		a[v1alpha1.AnnotationMessagesSkipped] = strconv.FormatInt(o.Result.Totals.MessagesSkipped, 10)
		if o.Result.DryRun {
			// Its counts are the plan's; the mark keeps them from
			// reading as what happened.
			a[v1alpha1.AnnotationDryRun] = "true"
		}
	}
	return a
}

// recordOnJob writes the outcome annotations on a finished Job, in one
// patch. With releaseFrom, the patch also removes that request's owner
// reference: while the Job runs the reference makes a deleted request take its
// Job (and pod) with it; once the request's status says it has finished, the
// Job is the group's history and outlives the request until the history
// limit removes it.
func recordOnJob(ctx context.Context, c client.Client, job *batchv1.Job, o record.Outcome, releaseFrom *v1alpha1.ReplayRequest) error {
	patched := job.DeepCopy()
	if patched.Annotations == nil {
		patched.Annotations = map[string]string{}
	}
	for k, v := range resultAnnotations(o) {
		patched.Annotations[k] = v
	}
	if releaseFrom != nil {
		patched.OwnerReferences = slices.DeleteFunc(patched.OwnerReferences, func(ref metav1.OwnerReference) bool {
			return ref.UID == releaseFrom.UID
		})
	}
	if err := c.Patch(ctx, patched, client.MergeFrom(job)); err != nil {
		return err
	}
	*job = *patched
	return nil
}

// jobFinishedAt is when a Job finished, for retention order.
func jobFinishedAt(job *batchv1.Job) time.Time {
	if t, err := time.Parse(time.RFC3339, job.Annotations[v1alpha1.AnnotationFinishedAt]); err == nil {
		return t
	}
	if job.Status.CompletionTime != nil {
		return job.Status.CompletionTime.Time
	}
	if _, _, c := state.JobFinished(job); c != nil {
		return c.LastTransitionTime.Time
	}
	return job.CreationTimestamp.Time
}

// expiredJobs returns the finished, recorded, launcher-made Jobs that no
// request owns any more, beyond the newest limit, the oldest first: limit
// apply Jobs, and apart from them limit planning and dry-run Jobs
// (runnerjob.DryRun), so that plans never push a replay that moved offsets out of
// the history. Runbook Jobs are left to their CronJob's own history limits,
// and a Job a request still owns goes with that request.
func expiredJobs(items []batchv1.Job, limit int) []*batchv1.Job {
	var applied, dry []*batchv1.Job
	for i := range items {
		j := &items[i]
		if _, launcherMade := j.Labels[v1alpha1.LabelRequest]; !launcherMade || j.DeletionTimestamp != nil {
			continue
		}
		if metav1.GetControllerOf(j) != nil || !state.IsRecorded(j) {
			continue
		}
		if runnerjob.DryRun(j) {
			dry = append(dry, j)
		} else {
			applied = append(applied, j)
		}
	}
	return append(expired(applied, limit, jobFinishedAt), expired(dry, limit, jobFinishedAt)...)
}

func expired[T metav1.Object](done []T, limit int, at func(T) time.Time) []T {
	if limit <= 0 || len(done) <= limit {
		return nil
	}
	// Newest first; equal times by name, so the choice is stable.
	slices.SortFunc(done, func(a, b T) int {
		if c := at(b).Compare(at(a)); c != 0 {
			return c
		}
		return cmp.Compare(b.GetName(), a.GetName())
	})
	out := done[limit:]
	slices.Reverse(out)
	return out
}

// pruneHistory deletes, in the request's namespace and group, the released
// launcher-made Jobs beyond the history limit, the oldest first. It never
// deletes a request: requests are the users' objects, and a request deleted
// by the launcher would come back from Git (Argo CD, Flux) or a backup with a
// new UID. Deletion propagates in the background, so a Job takes its pods
// (and whatever else it owns) with it.
//
// justJob is the Job that has just been recorded: the cache may not show its
// new state yet, so it replaces its cached copy.
func pruneHistory(ctx context.Context, c client.Client, rec recorder.EventRecorder, just *v1alpha1.ReplayRequest, justJob *batchv1.Job, limit int) error {
	if limit <= 0 {
		return nil
	}
	ns, group := just.Namespace, replay.Group(just)
	var jobs batchv1.JobList
	if err := c.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabels{
		v1alpha1.LabelRunner: v1alpha1.LabelRunnerValue,
		v1alpha1.LabelGroup:  v1alpha1.LabelValue(group),
	}); err != nil {
		return err
	}
	for i := range jobs.Items {
		if justJob != nil && jobs.Items[i].UID == justJob.UID {
			jobs.Items[i] = *justJob
		}
	}
	bg := client.PropagationPolicy(metav1.DeletePropagationBackground)
	for _, old := range expiredJobs(jobs.Items, limit) {
		// Labels may collide for hashed names in theory; the annotation is exact.
		if old.Annotations[v1alpha1.AnnotationGroup] != group {
			continue
		}
		if err := c.Delete(ctx, old, bg, client.Preconditions{UID: &old.UID}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
			return err
		}
		if rec != nil {
			rec.Eventf(old, nil, corev1.EventTypeNormal, "HistoryLimit", "Delete", "deleted: more than %d finished replays of group %q", limit, group)
		}
	}
	return nil
}

// podsOfJob lists a Job's pods from the cache, by the controller-uid label the
// Job controller puts on them.
func podsOfJob(ctx context.Context, c client.Reader, job *batchv1.Job) ([]corev1.Pod, error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(job.Namespace), client.MatchingLabels{batchv1.ControllerUidLabel: string(job.UID)}); err != nil {
		return nil, fmt.Errorf("list pods of Job %s: %w", job.Name, err)
	}
	return pods.Items, nil
}

// settledPods are the pods of a finished Job, read again past the cache
// (reader) when the cache may not have them all yet. The Job and its pods
// come from two watches with no order between them, so the Job's finish can
// reach the cache before its last attempt's pod, or before that pod's end:
// an outcome from such a cache would miss the attempt that decides it (a
// later attempt that committed, or one that says nothing changed). The Job
// controller counts an attempt (status.failed, status.succeeded) only after
// its pod has ended, so when the cache shows fewer ended pods than the Job
// counts, or a pod not yet ended, the API server's list is the one to
// judge by; a counted pod missing there too is gone (MergeAttempts says
// so).
func settledPods(ctx context.Context, reader client.Reader, job *batchv1.Job, pods []corev1.Pod) ([]corev1.Pod, error) {
	if !podsBehind(job, pods) {
		return pods, nil
	}
	return podsOfJob(ctx, reader, job)
}

// podsBehind reports whether a finished Job's pods, as listed, may be behind
// the Job: fewer of them ended than the Job counts, or one not ended yet. It
// is pure.
func podsBehind(job *batchv1.Job, pods []corev1.Pod) bool {
	ended := 0
	for i := range pods {
		switch pods[i].Status.Phase {
		case corev1.PodSucceeded, corev1.PodFailed:
			ended++
		default:
			return true
		}
	}
	return ended < int(job.Status.Failed+job.Status.Succeeded)
}

// runnerOverdueAfter is how long a runner pod may go on not having ended
// past the end of its termination grace period before the launcher says so
// as a Warning. By then the kubelet has killed it and reported that, unless
// its node is lost (a node that stops reporting is marked NotReady after
// the node monitor's grace period, 40-50 s).
const runnerOverdueAfter = 2 * time.Minute

// outcomeWait says what a finished Job's outcome o, from its pods as
// settledPods read them, still waits for before it may be written: first a
// runner pod of the Job that has not ended (alive), whatever ended the Job.
// The Job controller marks a Job Failed (DeadlineExceeded, a pod failure
// policy) while it is still killing the pod, which has its termination
// grace period to stop in: until the pod has ended its runner may still
// commit and write its result, and an outcome read before then could say
// Unknown or "nothing changed" of a run that changed offsets. The pod's
// updates bring the reconcile back (the pod watches), so this wait needs no
// polling.
//
// The wait for a live pod is not cut short: a pod that never ends (its node
// partitioned, not gone) may hold a runner that still commits, and an
// outcome written then would be a guess; Kubernetes' own Job controller
// withholds a Job's Failed condition from such a pod the same way, and
// leaves it to someone who knows the node to force-delete it, as it does
// for StatefulSet pods. What is bounded is the silence: once the pod is
// runnerOverdueAfter past its stop deadline (stopDeadline) it is overdue,
// and wait is the time left until then, one timed wake-up to say so.
// Without a live pod, the wait is for a pod's termination state for a
// while (resultGraceLeft). alive is "" and wait 0 when o may be written.
// It is pure.
func outcomeWait(pods []corev1.Pod, o record.Outcome, grace time.Duration, now time.Time) (alive string, overdue bool, wait time.Duration) {
	p := alivePod(pods)
	if p == nil {
		return "", false, resultGraceLeft(o, grace, now)
	}
	deadline := stopDeadline(p, o.FinishedAt)
	if deadline.IsZero() {
		return p.Name, false, 0
	}
	if left := deadline.Add(runnerOverdueAfter).Sub(now); left > 0 {
		return p.Name, false, left
	}
	return p.Name, true, 0
}

// stopDeadline is when a live runner pod of a Job that finished at finished
// should have ended: its deletionTimestamp, which the API server sets to the
// deletion plus the pod's grace period, or, while the Job controller has
// not deleted it yet, the Job's finish plus the runner's grace period. It is
// zero when neither is known. It is pure.
func stopDeadline(pod *corev1.Pod, finished time.Time) time.Time {
	switch {
	case pod.DeletionTimestamp != nil:
		return pod.DeletionTimestamp.Time
	case finished.IsZero():
		return time.Time{}
	default:
		return finished.Add(time.Duration(runnerjob.TerminationGracePeriodSeconds()) * time.Second)
	}
}

// aliveMessage says what a finished Job's outcome waits for while its runner
// pod named pod has not ended (outcomeWait), and, when it is overdue, what
// to do about it; kind names the Job ("runner", "planning").
func aliveMessage(kind string, job *batchv1.Job, pod string, overdue bool) string {
	how := "finished"
	if _, _, cond := state.JobFinished(job); cond != nil {
		how = strings.ToLower(string(cond.Type))
		if cond.Reason != "" {
			how += " (" + cond.Reason + ")"
		}
	}
	if overdue {
		return fmt.Sprintf("the %s Job %s has %s, but its runner pod %s has not ended %s after its grace period ran out: its node may be lost, and its runner may still commit. The outcome is read from the pod once it has ended; if its node is gone for good, delete it (kubectl -n %s delete pod %s --force) once you know its runner has stopped", kind, job.Name, how, pod, runnerOverdueAfter, job.Namespace, pod)
	}
	return fmt.Sprintf("the %s Job %s has %s, but its runner pod %s has not ended yet and may still commit or write its result: the outcome is read from it once it has ended", kind, job.Name, how, pod)
}

// alivePod is the first of pods that is alive (grouplock.PodActive: not
// Succeeded or Failed, deleted or not), nil when none is: a runner in it may
// still commit, so no outcome is written and no consumer restored under it.
func alivePod(pods []corev1.Pod) *corev1.Pod {
	for i := range pods {
		if grouplock.PodActive(&pods[i]) {
			return &pods[i]
		}
	}
	return nil
}

// resultGraceLeft says how long to wait for a pod's termination state when a
// Job has finished, its pods have ended, but no pod in the cache says how.
// The Job controller marks a Job finished after it has seen the pod finish,
// so the pod event is normally already here or a moment away; the wait ends
// early when it arrives (pods are watched). A deadline-exceeded Job is
// recorded at once: its pod, killed, has ended (outcomeWait) and may have
// been removed with what it said.
func resultGraceLeft(o record.Outcome, grace time.Duration, now time.Time) time.Duration {
	if o.ExitCode != nil || o.Reason == state.ReasonDeadlineExceeded || o.FinishedAt.IsZero() {
		return 0
	}
	return o.FinishedAt.Add(grace).Sub(now)
}
