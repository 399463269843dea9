package launcher

import (
	"context"
	"errors"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/undo"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// decideUndo reads what an undo names and decides (undo.Decide). Both reads go
// past the cache: a refusal is final, so it must never come from a cache
// that has not seen the undone request succeed yet, and records are not
// cached at all. The error is an *undo.Refusal, or a read that failed (and
// is retried).
func (r *ReplayRequestReconciler) decideUndo(ctx context.Context, rr *v1alpha1.ReplayRequest) (*v1alpha1.UndoStatus, *v1alpha1.ReplayRecord, error) {
	if rr.Spec.Target.UndoOf == nil {
		return nil, nil, errors.New("not an undo")
	}
	var undone v1alpha1.ReplayRequest
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: rr.Namespace, Name: *rr.Spec.Target.UndoOf}, &undone)
	switch {
	case apierrors.IsNotFound(err):
		u, err := undo.Decide(rr, nil, nil, nil)
		return u, nil, err
	case err != nil:
		return nil, nil, err
	}
	var job *batchv1.Job
	var rec *v1alpha1.ReplayRecord
	if name := undone.Status.JobName; name != "" {
		key := types.NamespacedName{Namespace: rr.Namespace, Name: name}
		var j batchv1.Job
		err := r.Client.Get(ctx, key, &j)
		if apierrors.IsNotFound(err) {
			// Runner Jobs are cached; one the cache does not show yet is
			// confirmed against the API server.
			err = r.APIReader.Get(ctx, key, &j)
		}
		switch {
		case err == nil:
			job = &j
		case !apierrors.IsNotFound(err):
			return nil, nil, err
		}
		var got v1alpha1.ReplayRecord
		err = r.APIReader.Get(ctx, key, &got)
		switch {
		case err == nil:
			rec = &got
		case !apierrors.IsNotFound(err):
			return nil, nil, err
		}
	}
	u, err := undo.Decide(rr, &undone, job, rec)
	if err != nil {
		return u, rec, err
	}
	var others v1alpha1.ReplayRequestList
	if err := r.Client.List(ctx, &others, client.InNamespace(rr.Namespace)); err != nil {
		return nil, nil, err
	}
	if first := undo.Earlier(rr, others.Items); first != nil {
		return nil, rec, undo.Refuse("%s already undoes %s (phase %s): a second undo could hand back again messages the consumers have handled since the first (after it, a skipped partition consumed up to where the skip had put it looks untouched); set force: true to restore the previous offsets anyway, or use target.offsets", first.Name, undone.Name, first.Status.Phase)
	}
	// An earlier undo whose request was deleted: its Job stays as history.
	var jobs batchv1.JobList
	if err := r.Client.List(ctx, &jobs, client.InNamespace(rr.Namespace), client.MatchingLabels{v1alpha1.LabelRunner: v1alpha1.LabelRunnerValue, v1alpha1.LabelGroup: v1alpha1.LabelValue(replay.Group(rr))}); err != nil {
		return nil, nil, err
	}
	if j := undo.EarlierJob(rr, u.JobName, jobs.Items); j != nil {
		return nil, rec, undo.Refuse("Job %s already undid %s (for request %s; the Job stays as history after its request is gone) and may have restored something: a second undo could hand back again messages the consumers have handled since; set force: true to restore the previous offsets anyway, or use target.offsets", j.Name, undone.Name, j.Annotations[v1alpha1.AnnotationRequest])
	}
	return u, rec, nil
}

// undoInput is the input of an undo's Job: the undone run's result, from
// its record, read and decided again when the Job is made (status alone
// never chooses which record is restored), and what status.undo says.
func (r *ReplayRequestReconciler) undoInput(ctx context.Context, rr *v1alpha1.ReplayRequest) (*report.Result, *v1alpha1.UndoStatus, error) {
	u, rec, err := r.decideUndo(ctx, rr)
	if err != nil {
		return nil, nil, err
	}
	if s := rr.Status.Undo; s != nil && *s != *u {
		return nil, nil, undo.Refuse("status.undo %+v is not what %s is now (%+v)", *s, u.Request, *u)
	}
	res, err := RecordResult(rec)
	if err != nil {
		return nil, nil, undo.Refuse("%s", err)
	}
	return res, u, nil
}

// undoJobInput writes the undo: input of rr's Job jobName (the planning Job
// of a Manual undo, else its apply Job) and says where it is, with what
// status.undo says of it (for the Job's annotations).
func (r *ReplayRequestReconciler) undoJobInput(ctx context.Context, rr *v1alpha1.ReplayRequest, jobName string) (*runnerjob.Input, error) {
	res, u, err := r.undoInput(ctx, rr)
	if err != nil {
		return nil, err
	}
	cm, digest, err := runnerjob.InputConfigMap(rr, jobName, res)
	if err != nil {
		return nil, undo.Refuse("%s", err)
	}
	if err := r.ensureInput(ctx, cm); err != nil {
		return nil, err
	}
	rr.Status.Undo = u
	return &runnerjob.Input{Kind: runnerjob.InputUndo, ConfigMap: cm.Name, Digest: digest, Undo: u}, nil
}
