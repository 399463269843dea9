// Package undo decides undos (spec.target.undoOf): whether a request may undo
// the one it names (Decide, over that request, its Job and its
// ReplayRecord), whether an earlier undo of the same run may already have
// restored something (Earlier, EarlierJob), which input an undo's Job must
// read (CheckInput), what an adopted Job says it undoes (Adopted), and the
// command status.undoCommand offers (Command). It is pure: the launcher
// reads the objects and writes the input.
package undo

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/record"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// An undo (spec.target.undoOf) restores the offsets an earlier request of the
// same group found before it ran. The launcher decides at acceptance whether
// the earlier request can be undone at all (Decide: it succeeded, it
// committed, its record is whole, it is the same group on the same cluster);
// the runner decides, per partition and against the offsets committed when it
// runs, which partitions the undo rules restore and which they leave alone
// (docs/usage.md, "Undo: the rules"). The runner reads the earlier run from a file the
// launcher writes from that run's ReplayRecord: the record has every
// partition, the request's status only the first ones.

// Refusal is why an undo cannot be accepted: the rule, in a sentence
// naming the field and the request.
type Refusal struct{ msg string }

func (e *Refusal) Error() string { return e.msg }

// Refuse is the Refusal of an undo for the rule format says, naming
// target.undoOf.
func Refuse(format string, a ...any) error {
	return &Refusal{msg: "target.undoOf: " + fmt.Sprintf(format, a...)}
}

func refuse(format string, a ...any) (*v1alpha1.UndoStatus, error) {
	return nil, Refuse(format, a...)
}

// Decide decides whether rr, whose target.undoOf names undone, may undo
// it, given undone's Job (status.jobName; nil when it is gone) and that Job's
// ReplayRecord (rec; nil when there is none). undone is nil when no request
// of that name exists. It returns what status.undo says, or an *Refusal
// naming the rule that refuses. It is pure.
//
// replay.Undoable, which the plugin shares, says whether undone committed
// something to restore; the rest is what only the launcher reads. The rules
// are what makes a restore mean "as if the replay had not
// happened": only a run that succeeded and committed has previous offsets to
// go back to, only a whole record has all of them, and only the same group on
// the same cluster has them as its own.
func Decide(rr, undone *v1alpha1.ReplayRequest, job *batchv1.Job, rec *v1alpha1.ReplayRecord) (*v1alpha1.UndoStatus, error) {
	name := ""
	if rr.Spec.Target.UndoOf != nil {
		name = *rr.Spec.Target.UndoOf
	}
	switch {
	case name == "":
		return refuse("is empty")
	case name == rr.Name:
		return refuse("names this request itself; name the earlier request to undo")
	case undone == nil:
		return refuse("there is no ReplayRequest %q in namespace %s", name, rr.Namespace)
	case undone.Namespace != rr.Namespace || undone.Name != name:
		// The caller read the wrong object; never undo another one.
		return refuse("read %s/%s for %q", undone.Namespace, undone.Name, name)
	}
	if err := replay.Undoable(undone); err != nil {
		return refuse("%s", err)
	}
	group := replay.Group(rr)
	if g := replay.Group(undone); g != group {
		return refuse("%s moved group %q, not %q: an undo restores the same group", name, g, group)
	}
	if a, b := replay.ClusterID(undone), replay.ClusterID(rr); a != "" && b != "" {
		// Two Strimzi requests: the same cluster by its ID, through any
		// listener.
		if a != b {
			return refuse("%s ran on Kafka cluster %s, not %s: an undo restores the same Kafka cluster", name, a, b)
		}
	} else if a, b := replay.BootstrapServers(undone), replay.BootstrapServers(rr); !replay.SameServers(a, b) {
		return refuse("%s ran against kafka.bootstrapServers %q, not %q: an undo restores the same Kafka cluster", name, a, b)
	}
	jobName := undone.Status.JobName
	if rec == nil {
		return refuse("%s has no ReplayRecord %s (records go with their Job, when history is pruned or the Job deleted): its previous offsets are not known", name, jobName)
	}
	if job == nil {
		return refuse("%s's Job %s is gone: a record without its Job is not restored from", name, jobName)
	}
	switch {
	case rec.Name != jobName || rec.Job != jobName || job.Name != jobName || !record.OwnedBy(rec, job):
		return refuse("the ReplayRecord %s is not the record of %s's Job", rec.Name, name)
	case job.Annotations[v1alpha1.AnnotationRequest] != name || job.Annotations[v1alpha1.AnnotationSpecDigest] != runnerjob.SpecDigest(&undone.Spec):
		// Bound to this request as it is, not to a Job of that name.
		return refuse("the Job %s was not made for %s as it is (its request and spec digest annotations differ)", jobName, name)
	case rec.Request != name:
		return refuse("the ReplayRecord %s is of request %q, not %q", jobName, rec.Request, name)
	case rec.DryRun:
		return refuse("%s's record %s is of a dry run: it committed nothing, there is nothing to undo", name, jobName)
	case !rec.Outcome.Succeeded:
		return refuse("%s's record %s says its run did not succeed (%s)", name, jobName, rec.Outcome.Reason)
	case !rec.Complete:
		return refuse("%s's record %s is incomplete (an attempt's full result was lost): restoring from it could miss partitions", name, jobName)
	case rec.Group != group:
		return refuse("%s's record %s is of group %q, not %q", name, jobName, rec.Group, group)
	}
	if r := undone.Status.Result; r != nil && r.RunID != "" && rec.RunID != r.RunID {
		return refuse("%s's record %s is of run %q, but the request ran %q", name, jobName, rec.RunID, r.RunID)
	}
	return &v1alpha1.UndoStatus{Request: name, JobName: jobName, RunID: rec.RunID}, nil
}

// EarlierJob is, among the runner Jobs of rr's namespace, the Job of
// another undo of the same run (its kafkareplay.dev/undo-job is undoJob,
// the undone request's Job) that may have restored something: it is not a
// planning Job or a dry run's, and it has not recorded a result that
// applied nothing. It catches what Earlier cannot once that undo's
// request is deleted. rr's own Jobs do not count. Nil for a forced undo.
// It is pure.
func EarlierJob(rr *v1alpha1.ReplayRequest, undoJob string, jobs []batchv1.Job) *batchv1.Job {
	if rr.Spec.Force || undoJob == "" {
		return nil
	}
	own := []string{runnerjob.Name(rr, runnerjob.StagePlan), runnerjob.Name(rr, runnerjob.StageApply)}
	for i := range jobs {
		j := &jobs[i]
		switch {
		case j.Namespace != rr.Namespace || j.Annotations[v1alpha1.AnnotationUndoJob] != undoJob || slices.Contains(own, j.Name):
			continue
		case restoredNothing(j):
			continue
		}
		return j
	}
	return nil
}

// restoredNothing reports whether an undo's Job is known to have committed
// nothing: a dry run's or a planning Job (runnerjob.DryRun), or one whose recorded
// result applied no partition. A Job still running, or one whose result is
// not known, may have.
func restoredNothing(j *batchv1.Job) bool {
	if runnerjob.DryRun(j) {
		return true
	}
	if !state.IsRecorded(j) {
		return false
	}
	r, err := report.Decode([]byte(j.Annotations[v1alpha1.AnnotationResult]))
	return err == nil && r.Totals.Applied == 0
}

// Earlier is, among the requests of rr's namespace, an undo of the same
// request as rr made before it (by creation time, then name) that may have
// restored something: it has not finished, or it ran a Job whose result
// does not say it applied nothing. Nil when there is none, and for a forced
// undo, which restores whatever the offsets are now. It is pure.
func Earlier(rr *v1alpha1.ReplayRequest, others []v1alpha1.ReplayRequest) *v1alpha1.ReplayRequest {
	of := rr.Spec.Target.UndoOf
	if rr.Spec.Force {
		return nil
	}
	for i := range others {
		o := &others[i]
		switch {
		case of == nil || o.Spec.Target.UndoOf == nil || *o.Spec.Target.UndoOf != *of || o.Namespace != rr.Namespace || o.Name == rr.Name:
			continue
		case o.CreationTimestamp.After(rr.CreationTimestamp.Time),
			o.CreationTimestamp.Equal(&rr.CreationTimestamp) && o.Name > rr.Name:
			continue // the later one is refused, not this one
		case state.IsFinished(o) && (o.Status.JobName == "" || (o.Status.Result != nil && o.Status.Result.Totals.Applied == 0)):
			continue // refused, or restored nothing
		}
		return o
	}
	return nil
}

// CheckInput refuses a Job whose input does not follow from the spec: an
// undo's Job (its planning Job, or the apply Job of an Automatic undo) reads
// the record of the request target.undoOf names, and nothing else does. A
// Manual undo's apply Job reads its approved plan (checkApproved). It is
// pure.
func CheckInput(rr *v1alpha1.ReplayRequest, stage runnerjob.Stage, in *runnerjob.Input) error {
	undoOf := rr.Spec.Target.UndoOf
	readsRecord := undoOf != nil && (stage == runnerjob.StagePlan || rr.Spec.Approval != v1alpha1.ApprovalManual)
	switch {
	case readsRecord && (in == nil || in.Kind != runnerjob.InputUndo):
		return errors.New("target.undoOf: the Job of an undo needs the undone run's record as its input")
	case readsRecord && (in.Undo == nil || in.Undo.Request != *undoOf):
		return fmt.Errorf("target.undoOf: the input restores %+v, not request %q", in.Undo, *undoOf)
	case !readsRecord && in != nil && in.Kind == runnerjob.InputUndo:
		return errors.New("an undo: input for a Job that is not an undo's")
	}
	return nil
}

// Adopted is status.undo as a Job adopted before status names it says
// it (runnerjob.UndoFromJob): nil for a Job that is no undo's. A Job that says it
// undoes a request other than the one target.undoOf names, or any request
// for a request that is no undo, or another run than status.undo already
// says, was not made for this request: its word would make status claim an
// undo that never was (and refuse the real one as done, Earlier). It is
// pure.
func Adopted(rr *v1alpha1.ReplayRequest, job *batchv1.Job) (*v1alpha1.UndoStatus, error) {
	u := runnerjob.UndoFromJob(job.Annotations)
	undoOf := rr.Spec.Target.UndoOf
	switch {
	case u == nil:
		return nil, nil
	case undoOf == nil:
		return nil, fmt.Errorf("it says it undoes request %q, and this request is no undo", state.Truncate(u.Request, 253))
	case u.Request != *undoOf:
		return nil, fmt.Errorf("it says it undoes request %q, and this request undoes %s", state.Truncate(u.Request, 253), *undoOf)
	case rr.Status.Undo != nil && (rr.Status.Undo.Request != u.Request || rr.Status.Undo.JobName != u.JobName):
		return nil, fmt.Errorf("it says it undoes Job %q, and status.undo says Job %q", state.Truncate(u.JobName, 253), rr.Status.Undo.JobName)
	}
	return u, nil
}

// undoManifest is the ReplayRequest the undo command creates.
type undoManifest struct {
	APIVersion string                     `json:"apiVersion"`
	Kind       string                     `json:"kind"`
	Metadata   undoMetadata               `json:"metadata"`
	Spec       v1alpha1.ReplayRequestSpec `json:"spec"`
}

type undoMetadata struct {
	GenerateName string `json:"generateName"`
	Namespace    string `json:"namespace"`
}

// undoNameSuffix ends the generated name of an undo request.
const undoNameSuffix = "-undo-"

// maxUndoCommandBytes is the CRD's bound on status.undoCommand.
const maxUndoCommandBytes = 4096

// Command is status.undoCommand of a request that succeeded and
// committed: a command that creates the request undoing it, for a shell,
// copied as it is. It needs kubectl only (no plugin). The undo keeps what
// decides how the replay ran safely (the Kafka connection or consumerRef,
// the consumers to pause and the wait for the group, the runner overrides)
// and nothing of
// the target, the topics or the limits: the undone run's record is the
// scope. It is empty for a request that has nothing to undo. It is pure.
//
// The manifest is JSON (which is YAML too) in a quoted here-document: the
// shell expands nothing in it, and JSON strings escape every character a
// group or a server list may hold, newlines included, so no line of it can
// end the here-document early.
func Command(rr *v1alpha1.ReplayRequest) string {
	if replay.Undoable(rr) != nil {
		return ""
	}
	spec := replay.UndoSpec(&rr.Spec, rr.Name)
	prefix := rr.Name
	if n := 253 - 5 - len(undoNameSuffix); len(prefix) > n {
		// The API server adds 5 characters to generateName, and cuts a
		// longer one itself; cut here so the prefix stays readable.
		prefix = strings.TrimRight(prefix[:n], "-.")
	}
	m := undoManifest{
		APIVersion: v1alpha1.GroupVersion.String(),
		Kind:       "ReplayRequest",
		Metadata:   undoMetadata{GenerateName: prefix + undoNameSuffix, Namespace: rr.Namespace},
		Spec:       spec,
	}
	cmd := undoCommandOf(m, true)
	if len(cmd) > maxUndoCommandBytes {
		cmd = undoCommandOf(m, false)
	}
	if len(cmd) > maxUndoCommandBytes {
		// Only many long consumer names and runner resources get here;
		// without them the rest fits (group, servers and names are
		// bounded). A user copying it must add them back: say so first.
		m.Spec.Consumers, m.Spec.Runner = nil, nil
		cmd = fmt.Sprintf("# too long to show whole: add spec.consumers and spec.runner as in %s before running this\n%s", rr.Name, undoCommandOf(m, false))
	}
	return cmd
}

func undoCommandOf(m undoManifest, indent bool) string {
	var b []byte
	var err error
	if indent {
		b, err = json.MarshalIndent(m, "", "  ")
	} else {
		b, err = json.Marshal(m)
	}
	if err != nil {
		// A spec the API server stored always marshals; never reached.
		panic(fmt.Sprintf("marshal undo request: %v", err))
	}
	return "kubectl create -f - <<'EOF'\n" + string(b) + "\nEOF"
}
