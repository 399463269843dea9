package launcher

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

func TestQuietConflict(t *testing.T) {
	gr := schema.GroupResource{Group: "batch", Resource: "jobs"}
	conflict := apierrors.NewConflict(gr, "j", errors.New("the object has been modified"))
	other := apierrors.NewForbidden(gr, "j", errors.New("no"))
	for _, tc := range []struct {
		name      string
		in        error
		wantErr   error
		wantAfter time.Duration
		wantLog   bool
	}{
		{name: "no error", in: nil, wantAfter: 5 * time.Second},
		{name: "conflict", in: conflict, wantAfter: conflictRetryAfter, wantLog: true},
		{name: "wrapped conflict", in: fmt.Errorf("update ReplayRecord ns/r: %w", conflict), wantAfter: conflictRetryAfter, wantLog: true},
		{name: "other error", in: other, wantErr: other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &levelSink{}
			ctx := log.IntoContext(context.Background(), logr.New(sink))
			res, err := quietConflict(ctx, reconcile.Result{RequeueAfter: 5 * time.Second}, tc.in)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("error = %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr == nil && res.RequeueAfter != tc.wantAfter {
				t.Errorf("RequeueAfter = %s, want %s", res.RequeueAfter, tc.wantAfter)
			}
			if sink.errors != 0 {
				t.Errorf("%d lines at error level, want none", sink.errors)
			}
			if tc.wantLog {
				if len(sink.levels) != 1 || sink.levels[0] != 1 {
					t.Errorf("info levels = %v, want one line at V(1)", sink.levels)
				}
			} else if len(sink.levels) != 0 {
				t.Errorf("info levels = %v, want none", sink.levels)
			}
		})
	}
}

// levelSink records the level of every Info line and counts Error lines.
type levelSink struct {
	levels []int
	errors int
}

func (s *levelSink) Init(logr.RuntimeInfo)              {}
func (s *levelSink) Enabled(int) bool                   { return true }
func (s *levelSink) Info(level int, _ string, _ ...any) { s.levels = append(s.levels, level) }
func (s *levelSink) Error(error, string, ...any)        { s.errors++ }
func (s *levelSink) WithValues(...any) logr.LogSink     { return s }
func (s *levelSink) WithName(string) logr.LogSink       { return s }

func TestWrittenOver(t *testing.T) {
	a := types.NamespacedName{Namespace: "shop", Name: "a"}
	b := types.NamespacedName{Namespace: "shop", Name: "b"}
	var w writtenOver
	w.wrote(a, "1", "2") // the finalizer
	w.wrote(a, "2", "3") // the status
	w.wrote(b, "7", "7") // a write that changed nothing makes no version
	w.wrote(b, "", "8")  // nor does one of nothing read
	for _, tc := range []struct {
		key    types.NamespacedName
		rv     string
		behind bool
	}{
		{a, "1", true},
		{a, "2", true},
		{b, "7", false},
		{a, "3", false}, // the cache has caught up...
		{a, "1", false}, // ...and the replaced versions are forgotten
		{a, "", false},
	} {
		if got := w.behind(tc.key, tc.rv); got != tc.behind {
			t.Errorf("behind(%s, %q) = %v, want %v", tc.key.Name, tc.rv, got, tc.behind)
		}
	}
	w.wrote(b, "8", "9")
	if w.behind(b, "") || w.behind(b, "8") {
		t.Error("a request gone from the cache keeps its replaced versions")
	}
}

// staleCache serves one request as an earlier version (a cache behind the
// API server) and counts every write.
type staleCache struct {
	client.Client
	stale  *v1alpha1.ReplayRequest
	writes []string
}

func (s *staleCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if rr, ok := obj.(*v1alpha1.ReplayRequest); ok && key == client.ObjectKeyFromObject(s.stale) {
		s.stale.DeepCopyInto(rr)
		return nil
	}
	return s.Client.Get(ctx, key, obj, opts...)
}

func (s *staleCache) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	s.writes = append(s.writes, fmt.Sprintf("create %T", obj))
	return s.Client.Create(ctx, obj, opts...)
}

func (s *staleCache) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	s.writes = append(s.writes, fmt.Sprintf("update %T", obj))
	return s.Client.Update(ctx, obj, opts...)
}

func (s *staleCache) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	s.writes = append(s.writes, fmt.Sprintf("patch %T", obj))
	return s.Client.Patch(ctx, obj, patch, opts...)
}

func (s *staleCache) Status() client.SubResourceWriter { return staleStatus{s} }

type staleStatus struct{ s *staleCache }

func (w staleStatus) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	w.s.writes = append(w.s.writes, fmt.Sprintf("create status %T", obj))
	return w.s.Client.Status().Create(ctx, obj, sub, opts...)
}

func (w staleStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	w.s.writes = append(w.s.writes, fmt.Sprintf("update status %T", obj))
	return w.s.Client.Status().Update(ctx, obj, opts...)
}

func (w staleStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	w.s.writes = append(w.s.writes, fmt.Sprintf("patch status %T", obj))
	return w.s.Client.Status().Patch(ctx, obj, patch, opts...)
}

func (w staleStatus) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	w.s.writes = append(w.s.writes, "apply status")
	return w.s.Client.Status().Apply(ctx, obj, opts...)
}

// A pass that reads from the cache a version of its request that the
// launcher's own write replaced decides nothing and writes nothing: the
// write's event brings the request back. Decided from the past, it would
// adopt the Job it created once more, or finish the request once more: a
// status write the API server refuses (on make bench-launcher, a finish's
// log read and the ReplayRecord's create were spent again too).
func TestPassSkipsWhatItsOwnWriteReplaced(t *testing.T) {
	rr := testutil.MakeRequest("shop", "r").UID("rr-uid").Created(t0).ShiftBy(-10).Obj()
	f := newFakeAPI(t, fakeOptions(), rr)
	fresh := f.r.Client
	stalePass := func(stale *v1alpha1.ReplayRequest) {
		t.Helper()
		sc := &staleCache{Client: fresh, stale: stale}
		f.r.Client = sc
		defer func() { f.r.Client = fresh }()
		res := f.reconcile(rr)
		if len(sc.writes) != 0 || res.RequeueAfter != 0 {
			t.Errorf("a pass over version %s: writes %q, requeue %s; want none", stale.ResourceVersion, sc.writes, res.RequeueAfter)
		}
		if ev := f.sent(); len(ev) != 0 {
			t.Errorf("a pass over version %s sent %q", stale.ResourceVersion, ev)
		}
	}

	created := f.request(rr)
	f.reconcile(rr) // the finalizer, the Job, the status
	started := f.request(rr)
	if !state.IsStarted(started) {
		t.Fatalf("not started: %+v", started.Status)
	}
	f.sent()
	stalePass(created)

	f.clock.Step(30 * time.Second)
	res := testutil.Result(started.Spec.Group, report.ExitOK, 10)
	res.RunID = runnerjob.RunID(started)
	f.ran(f.job(started.Namespace, started.Status.JobName), 0, res, "")
	f.reconcile(rr) // the record, the status, the Job's outcome, the finalizer
	if cur := f.request(rr); !state.IsFinished(cur) {
		t.Fatalf("not finished: %+v", cur.Status)
	}
	f.sent()
	stalePass(started)

	// Once the cache shows a version the launcher did not replace, passes
	// decide again.
	f.reconcile(rr)
	if f.r.written.behind(client.ObjectKeyFromObject(rr), started.ResourceVersion) {
		t.Error("replaced versions kept after the cache caught up")
	}
}
