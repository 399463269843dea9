package launcher

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/fanout"
	"github.com/kafka-replay/kafka-replay/launcher/internal/lifecycle"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

// A parent with spec.groupSelector resolves it once, at acceptance, over
// the listing of one list Job (runnerjob.BuildList: the runner's
// REPLAY_LIST with the request's Kafka settings; the launcher never holds
// the credentials). The Job's name is deterministic, so a restarted
// launcher finds it rather than make a second; its changes wake the
// parent (its owner watch), and nothing polls. Once the Job has finished,
// its listing is read, resolved (fanout.Resolve), and written to
// status.resolvedGroups with Accepted, never again: groups that appear
// later are never added.

// maxListingLogBytes bounds the read of a list Job's log: a listing of
// tens of thousands of groups fits.
const maxListingLogBytes = 16 << 20

// refusal is a parent refused at acceptance with a reason of its own;
// nothing was made.
type refusal struct{ reason, msg string }

func (e *refusal) Error() string { return errRefused.Error() + ": " + e.msg }
func (e *refusal) Unwrap() error { return errRefused }

func refuse(reason, format string, a ...any) error {
	return &refusal{reason: reason, msg: fmt.Sprintf(format, a...)}
}

// resolveSelector is the groups spec.groupSelector resolves to, or, while
// its list Job runs, what the parent waits for (listing). A refusal
// (errRefused, with its reason) ends the parent with nothing made.
func (r *ParentReconciler) resolveSelector(ctx context.Context, p *v1alpha1.ReplayRequest) (groups []string, listing string, err error) {
	want, err := runnerjob.BuildList(p, r.Options.Defaults)
	if err != nil {
		return nil, "", refuse(string(report.ReasonInvalidInput), "%v", err)
	}
	job := &batchv1.Job{}
	err = r.Client.Get(ctx, client.ObjectKeyFromObject(want), job)
	if apierrors.IsNotFound(err) {
		job = want.DeepCopy()
		err = r.Client.Create(ctx, job)
		if apierrors.IsAlreadyExists(err) {
			// The cache had not caught up with this launcher's own
			// create, or someone else's Job has the name: the check
			// below tells.
			err = r.APIReader.Get(ctx, client.ObjectKeyFromObject(want), job)
		} else if err == nil {
			log.FromContext(ctx).Info("list Job created", "job", job.Name)
		}
	}
	if err != nil {
		return nil, "", fmt.Errorf("the list Job of spec.groupSelector: %w", err)
	}
	if !lifecycle.ControlledBy(job, p) {
		return nil, "", refuse(state.ReasonJobConflict, "a Job named %s already exists that the launcher did not make for this request; it is not adopted, and nothing was run", job.Name)
	}
	finished, ok, cond := state.JobFinished(job)
	if !finished {
		return nil, fmt.Sprintf("listing the cluster's groups to resolve spec.groupSelector (Job %s); the listing is resolved once", job.Name), nil
	}
	// The whole Job and its pods from the API server: the cache keeps
	// neither's pod spec, which says what ran.
	full := &batchv1.Job{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(job), full); err != nil {
		return nil, "", err
	}
	if err := runnerjob.SameListPod(&want.Spec.Template.Spec, &full.Spec.Template.Spec); err != nil || !lifecycle.ControlledBy(full, p) {
		return nil, "", refuse(state.ReasonJobConflict, "Job %s is not the list Job the launcher makes for this request (%v); its listing is not read, and nothing was run", job.Name, err)
	}
	var pods corev1.PodList
	if err := r.APIReader.List(ctx, &pods, client.InNamespace(full.Namespace), client.MatchingLabels{batchv1.ControllerUidLabel: string(full.UID)}); err != nil {
		return nil, "", err
	}
	if !ok {
		why := ""
		if cond != nil {
			why = cond.Reason
			if cond.Message != "" {
				why += ": " + cond.Message
			}
		}
		if said := lastWords(full, pods.Items, &want.Spec.Template.Spec); said != "" {
			why += "; the runner said: " + said
		}
		return nil, "", refuse(state.ReasonListFailed, "the list Job %s of spec.groupSelector failed (%s); nothing was changed", job.Name, why)
	}
	listed, err := r.readListing(ctx, full, pods.Items, &want.Spec.Template.Spec)
	if err != nil {
		return nil, "", err
	}
	groups, err = fanout.Resolve(fanout.Replayable(listed, &p.Spec), p.Spec.GroupSelector)
	if se := (*fanout.SelectError)(nil); errors.As(err, &se) {
		return nil, "", refuse(se.Reason, "%s", se.Message)
	}
	if err != nil {
		return nil, "", refuse(string(report.ReasonInvalidInput), "%v", err)
	}
	return groups, "", nil
}

// listPod is the pod of job whose listing counts: one the Job controls,
// that ran what the Job's template says (runnerjob.SameListPod), and whose
// runner ended with exit code 0.
func listPod(job *batchv1.Job, pods []corev1.Pod, want *corev1.PodSpec) (*corev1.Pod, *corev1.ContainerStateTerminated) {
	for i := range pods {
		pod := &pods[i]
		if !metav1.IsControlledBy(pod, job) || runnerjob.SameListPod(want, &pod.Spec) != nil {
			continue
		}
		if t := state.RunnerTermination(pod); t != nil && t.ExitCode == 0 && pod.Status.Phase == corev1.PodSucceeded {
			return pod, t
		}
	}
	return nil, nil
}

// lastWords is what the last failed runner of a failed list Job said (its
// termination message: the runner's error lines, which it redacts), or "".
func lastWords(job *batchv1.Job, pods []corev1.Pod, want *corev1.PodSpec) string {
	var said string
	var at metav1.Time
	for i := range pods {
		pod := &pods[i]
		if !metav1.IsControlledBy(pod, job) || runnerjob.SameListPod(want, &pod.Spec) != nil {
			continue
		}
		if t := state.RunnerTermination(pod); t != nil && t.ExitCode != 0 && !t.FinishedAt.Before(&at) {
			said, at = fmt.Sprintf("exit %d (%s): %s", t.ExitCode, report.ReasonForExitCode(report.ExitCode(t.ExitCode)), state.LastLine(t.Message)), t.FinishedAt
		}
	}
	return said
}

// readListing is the whole listing of a finished list Job: its pod's
// termination message when every group fit in it, else the JSON the
// runner wrote to its log (bounded), checked against that message's
// copy. A listing that cannot be read whole is refused ListingIncomplete:
// a group it does not show is one the request would silently leave out.
func (r *ParentReconciler) readListing(ctx context.Context, job *batchv1.Job, pods []corev1.Pod, want *corev1.PodSpec) (report.Groups, error) {
	pod, term := listPod(job, pods, want)
	if pod == nil {
		return report.Groups{}, refuse(state.ReasonListingIncomplete, "the list Job %s finished, but no pod of it that ran the list ended well; nothing was changed", job.Name)
	}
	short, err := report.DecodeGroups([]byte(term.Message))
	if err != nil {
		return report.Groups{}, refuse(state.ReasonListingIncomplete, "the listing of pod %s could not be read: %v; nothing was changed", pod.Name, err)
	}
	if short.Omitted == 0 {
		return short, nil
	}
	full, ok := r.Logs.(record.FullLogFetcher)
	if !ok {
		return short, nil // Resolve refuses it, saying so
	}
	rc, err := full.Full(ctx, pod.Namespace, pod.Name, state.ContainerName, maxListingLogBytes)
	if err != nil {
		return report.Groups{}, refuse(state.ReasonListingIncomplete, "the listing of %d groups does not fit pod %s's termination message, and its log could not be read: %v; nothing was changed", len(short.Groups)+short.Omitted, pod.Name, err)
	}
	defer func() { _ = rc.Close() }()
	b, err := io.ReadAll(rc)
	if err != nil {
		return report.Groups{}, refuse(state.ReasonListingIncomplete, "the log of pod %s could not be read: %v; nothing was changed", pod.Name, err)
	}
	listed, err := listingFromLog(short, b)
	if err != nil {
		return report.Groups{}, refuse(state.ReasonListingIncomplete, "the listing in pod %s's log: %v; nothing was changed", pod.Name, err)
	}
	return listed, nil
}

// listingFromLog is the listing a list runner wrote to its log
// (REPLAY_OUTPUT=json: indented JSON on stdout, which the pod log may mix
// with the runner's stderr lines, none of which starts with "{"), checked
// against short, the copy cut to fit the termination message: the same
// groups first, and as many in all. It is pure.
func listingFromLog(short report.Groups, log []byte) (report.Groups, error) {
	start := -1
	for off := 0; off < len(log); {
		line := log[off:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i+1]
		}
		if bytes.HasPrefix(line, []byte("{")) {
			start = off
			break
		}
		off += len(line)
	}
	if start < 0 {
		return report.Groups{}, errors.New("no listing (the log holds no JSON object)")
	}
	var raw json.RawMessage
	if err := json.NewDecoder(bytes.NewReader(log[start:])).Decode(&raw); err != nil {
		return report.Groups{}, fmt.Errorf("not whole (cut at the read's bound of %d bytes?): %w", maxListingLogBytes, err)
	}
	g, err := report.DecodeGroups(raw)
	if err != nil {
		return report.Groups{}, err
	}
	switch {
	case g.Omitted != 0:
		return report.Groups{}, fmt.Errorf("the log's copy leaves out %d groups too", g.Omitted)
	case len(g.Groups) != len(short.Groups)+short.Omitted:
		return report.Groups{}, fmt.Errorf("%d groups, where the termination message counts %d", len(g.Groups), len(short.Groups)+short.Omitted)
	case !slices.EqualFunc(g.Groups[:len(short.Groups)], short.Groups, func(a, b report.Group) bool { return a.Group == b.Group }):
		return report.Groups{}, errors.New("its groups are not those the termination message begins with")
	}
	return g, nil
}
