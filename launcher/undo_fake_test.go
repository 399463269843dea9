package launcher

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/undo"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// Accepting an undo over the fake client: what decideUndo, undoInput and
// undoJobInput read (past the cache, where a refusal must not come from a
// stale one), each refusal that is final (an *undo.Refusal) against each
// read that failed and is retried, the once-only rules (an earlier undo
// request, or its Job kept as history) and force. undo.Decide's own rules
// are table-tested in TestUnitDecideUndo.

const undoneJob = "rewind-1a2b3c4d"

// undoWorld is a succeeded request "rewind" of namespace ns with its Job
// and record, and the undo "undo-1" of it, made at t0, plus extra.
func undoWorld(t *testing.T, extra ...client.Object) (*fakeAPI, *v1alpha1.ReplayRequest) {
	t.Helper()
	undone := succeeded(testutil.MakeRequest("ns", "rewind").ShiftBy(-10).Created(t0.Add(-time.Hour)).Obj(), undoneJob, 3)
	rr := testutil.MakeRequest("ns", "undo-1").UndoOf("rewind").Created(t0).Obj()
	objs := append([]client.Object{undone, jobFor(undone), recordFor(undone), rr}, extra...)
	return newFakeAPI(t, fakeOptions(), objs...), rr
}

var wantUndo = v1alpha1.UndoStatus{Request: "rewind", JobName: undoneJob, RunID: "ns/rewind/0123456789abcdef"}

// earlierUndoJob is the apply Job of an earlier undo "undo-0" of rewind's
// run, kept as history after its request was deleted, in namespace ns.
func earlierUndoJob(ns string) *batchv1.Job {
	rr := testutil.MakeRequest("ns", "undo-0").UndoOf("rewind").Obj()
	annotations := runnerjob.UndoAnnotations(&wantUndo)
	annotations[v1alpha1.AnnotationRequest] = "undo-0"
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "undo-0-apply",
		Labels: map[string]string{
			v1alpha1.LabelRunner: v1alpha1.LabelRunnerValue, v1alpha1.LabelStage: string(runnerjob.StageApply),
			v1alpha1.LabelGroup: v1alpha1.LabelValue(replay.Group(rr)),
		},
		Annotations: annotations}}
}

func isRefusal(err error) bool {
	var r *undo.Refusal
	return errors.As(err, &r)
}

func TestUnitDecideUndoReads(t *testing.T) {
	earlierReq := func(force bool) []client.Object {
		w := testutil.MakeRequest("ns", "undo-0").UndoOf("rewind").Created(t0.Add(-time.Minute))
		if force {
			w.Force()
		}
		return []client.Object{w.Obj()}
	}
	cases := []struct {
		name   string
		extra  []client.Object
		rr     func(*v1alpha1.ReplayRequest) // edits the undo
		refuse string                        // empty: accepted
	}{
		{name: "accepted"},
		{name: "an earlier undo of the same request", extra: earlierReq(false), refuse: "undo-0 already undoes rewind"},
		// Force on the earlier one does not matter: only this one's.
		{name: "an earlier forced undo of the same request", extra: earlierReq(true), refuse: "undo-0 already undoes rewind"},
		{name: "an earlier undo, this one forced", extra: earlierReq(false), rr: func(rr *v1alpha1.ReplayRequest) { rr.Spec.Force = true }},
		{name: "an earlier undo of another request", extra: []client.Object{testutil.MakeRequest("ns", "undo-0").UndoOf("other").Created(t0.Add(-time.Minute)).Obj()}},
		// Another namespace's "rewind" is another request.
		{name: "an earlier undo of rewind in another namespace", extra: []client.Object{testutil.MakeRequest("other", "undo-0").UndoOf("rewind").Bootstrap("kafka.ns.svc:9092").Created(t0.Add(-time.Minute)).Obj()}},
		{name: "a later undo of the same request", extra: []client.Object{testutil.MakeRequest("ns", "undo-2").UndoOf("rewind").Created(t0.Add(time.Minute)).Obj()}},
		{name: "an earlier undo's Job, its request deleted", extra: []client.Object{earlierUndoJob("ns")}, refuse: "Job undo-0-apply already undid rewind (for request undo-0"},
		{name: "an earlier undo's Job, this one forced", extra: []client.Object{earlierUndoJob("ns")}, rr: func(rr *v1alpha1.ReplayRequest) { rr.Spec.Force = true }},
		// Another tenant's Job naming the same run cannot block this one.
		{name: "an undo's Job in another namespace", extra: []client.Object{earlierUndoJob("other")}},
		{name: "an undo of itself", rr: func(rr *v1alpha1.ReplayRequest) { rr.Spec.Target.UndoOf = &rr.Name }, refuse: "names this request itself"},
		{name: "an undo of no such request", rr: func(rr *v1alpha1.ReplayRequest) { n := "gone"; rr.Spec.Target.UndoOf = &n }, refuse: `there is no ReplayRequest "gone" in namespace ns`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, rr := undoWorld(t, tc.extra...)
			if tc.rr != nil {
				tc.rr(rr)
			}
			u, rec, err := f.r.decideUndo(context.Background(), rr)
			if tc.refuse != "" {
				if !isRefusal(err) || !strings.Contains(err.Error(), tc.refuse) || u != nil {
					t.Fatalf("decideUndo = %+v, %v; want a refusal naming %q", u, err, tc.refuse)
				}
				if !strings.HasPrefix(err.Error(), "target.undoOf: ") {
					t.Errorf("refusal %q does not name the field", err)
				}
				return
			}
			if err != nil || u == nil || *u != wantUndo || rec == nil || rec.Name != undoneJob {
				t.Fatalf("decideUndo = %+v, %v, %v; want %+v and record %s", u, rec, err, wantUndo, undoneJob)
			}
		})
	}
}

func TestUnitDecideUndoNotAnUndo(t *testing.T) {
	f, _ := undoWorld(t)
	if _, _, err := f.r.decideUndo(context.Background(), testutil.MakeRequest("ns", "a").Obj()); err == nil || isRefusal(err) {
		t.Fatalf("a replay decided as an undo: %v", err)
	}
}

// The cache may not show the undone request's Job yet (or at all, once
// its request was deleted with the Job kept): it is confirmed against the
// API server, never refused from the cache. A Job gone from both is.
func TestUnitDecideUndoJobPastTheCache(t *testing.T) {
	f, rr := undoWorld(t)
	var apiReads []string
	f.r.Client = interceptor.NewClient(f.c, interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if _, ok := obj.(*batchv1.Job); ok {
			return apierrors.NewNotFound(schema.GroupResource{Group: "batch", Resource: "jobs"}, key.Name)
		}
		return c.Get(ctx, key, obj, opts...)
	}})
	f.r.APIReader = interceptor.NewClient(f.c, interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if _, ok := obj.(*batchv1.Job); ok {
			apiReads = append(apiReads, key.Name)
		}
		return c.Get(ctx, key, obj, opts...)
	}})
	if u, _, err := f.r.decideUndo(context.Background(), rr); err != nil || u == nil || *u != wantUndo {
		t.Fatalf("a Job the cache lacks: %+v, %v", u, err)
	}
	if len(apiReads) != 1 || apiReads[0] != undoneJob {
		t.Errorf("Job reads past the cache %v, want [%s]", apiReads, undoneJob)
	}
	if err := f.c.Delete(context.Background(), &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: undoneJob}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.r.decideUndo(context.Background(), rr); !isRefusal(err) || !strings.Contains(err.Error(), "Job "+undoneJob+" is gone") {
		t.Fatalf("a Job gone from the API server: %v, want a refusal", err)
	}
}

// A read that fails is retried, never a (final) refusal, and decides
// nothing: each read decideUndo makes, failed in turn.
func TestUnitDecideUndoReadFails(t *testing.T) {
	boom := errors.New("apiserver down")
	cases := []struct {
		name   string
		reader bool // fail the APIReader, else the cached client
		fails  func(obj runtime.Object) bool
	}{
		{"the undone request", true, func(o runtime.Object) bool { _, ok := o.(*v1alpha1.ReplayRequest); return ok }},
		{"the Job, past the cache", true, func(o runtime.Object) bool { _, ok := o.(*batchv1.Job); return ok }},
		{"the Job, from the cache", false, func(o runtime.Object) bool { _, ok := o.(*batchv1.Job); return ok }},
		{"the record", true, func(o runtime.Object) bool { _, ok := o.(*v1alpha1.ReplayRecord); return ok }},
		{"the earlier undo requests", false, func(o runtime.Object) bool { _, ok := o.(*v1alpha1.ReplayRequestList); return ok }},
		{"the earlier undo Jobs", false, func(o runtime.Object) bool { _, ok := o.(*batchv1.JobList); return ok }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, rr := undoWorld(t)
			fail := interceptor.NewClient(f.c, interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if tc.fails(obj) {
						return boom
					}
					return c.Get(ctx, key, obj, opts...)
				},
				List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
					if tc.fails(list) {
						return boom
					}
					return c.List(ctx, list, opts...)
				},
			})
			if tc.reader {
				f.r.APIReader = fail
				// The cached client misses the Job, so that the read past
				// the cache is made.
				if tc.name == "the Job, past the cache" {
					f.r.Client = interceptor.NewClient(f.c, interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
						if _, ok := obj.(*batchv1.Job); ok {
							return apierrors.NewNotFound(schema.GroupResource{Group: "batch", Resource: "jobs"}, key.Name)
						}
						return c.Get(ctx, key, obj, opts...)
					}})
				}
			} else {
				f.r.Client = fail
			}
			u, _, err := f.r.decideUndo(context.Background(), rr)
			if !errors.Is(err, boom) || isRefusal(err) || u != nil {
				t.Fatalf("decideUndo = %+v, %v; want the read's error, retried", u, err)
			}
		})
	}
}

// undoInput decides again when the Job is made: status.undo written by an
// earlier pass must still be what the undone request is now, and the
// record must stand for the whole run.
func TestUnitUndoInput(t *testing.T) {
	ctx := context.Background()
	f, rr := undoWorld(t)
	res, u, err := f.r.undoInput(ctx, rr)
	if err != nil || u == nil || *u != wantUndo || res == nil {
		t.Fatalf("undoInput = %+v, %+v, %v", res, u, err)
	}
	decided := rr.DeepCopy()
	decided.Status.Undo = &v1alpha1.UndoStatus{Request: "rewind", JobName: undoneJob, RunID: "ns/rewind/another-run"}
	if _, _, err := f.r.undoInput(ctx, decided); !isRefusal(err) || !strings.Contains(err.Error(), "status.undo") {
		t.Errorf("status.undo of another run: %v, want a refusal", err)
	}
	decided.Status.Undo = &wantUndo
	if _, _, err := f.r.undoInput(ctx, decided); err != nil {
		t.Errorf("status.undo as decided: %v", err)
	}
	// A refusal of Decide passes through as it is.
	other := rr.DeepCopy()
	other.Spec.Group = "payments"
	if _, _, err := f.r.undoInput(ctx, other); !isRefusal(err) || !strings.Contains(err.Error(), `moved group "orders"`) {
		t.Errorf("an undo of another group: %v", err)
	}
}

// undoJobInput writes the undone run's result into the input ConfigMap of
// the undo's Job and says so in status.undo and the Input; refused, it
// writes neither.
func TestUnitUndoJobInput(t *testing.T) {
	ctx := context.Background()
	f, rr := undoWorld(t)
	jobName := runnerjob.Name(rr, runnerjob.StageApply)
	in, err := f.r.undoJobInput(ctx, rr, jobName)
	if err != nil {
		t.Fatal(err)
	}
	if in.Kind != runnerjob.InputUndo || in.ConfigMap == "" || !strings.HasPrefix(in.Digest, "sha256:") || in.Undo == nil || *in.Undo != wantUndo {
		t.Errorf("input %+v", in)
	}
	if rr.Status.Undo == nil || *rr.Status.Undo != wantUndo {
		t.Errorf("status.undo %+v, want %+v", rr.Status.Undo, wantUndo)
	}
	var cm corev1.ConfigMap
	if err := f.c.Get(ctx, types.NamespacedName{Namespace: "ns", Name: in.ConfigMap}, &cm); err != nil {
		t.Fatalf("input ConfigMap: %v", err)
	}
	if len(cm.Data)+len(cm.BinaryData) == 0 {
		t.Errorf("input ConfigMap %s is empty", cm.Name)
	}
	if err := undo.CheckInput(rr, runnerjob.StageApply, in); err != nil {
		t.Errorf("the input does not pass CheckInput: %v", err)
	}

	// Refused (an earlier undo came first): no ConfigMap, status.undo unset.
	f2, rr2 := undoWorld(t, testutil.MakeRequest("ns", "undo-0").UndoOf("rewind").Created(t0.Add(-time.Minute)).Obj())
	if in, err := f2.r.undoJobInput(ctx, rr2, jobName); !isRefusal(err) || in != nil || rr2.Status.Undo != nil {
		t.Fatalf("refused undo: %+v, %v, status.undo %+v", in, err, rr2.Status.Undo)
	}
	var cms corev1.ConfigMapList
	if err := f2.c.List(ctx, &cms, client.InNamespace("ns")); err != nil || len(cms.Items) != 0 {
		t.Errorf("a refused undo wrote %d ConfigMaps (%v)", len(cms.Items), err)
	}
}
