package launcher

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
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
