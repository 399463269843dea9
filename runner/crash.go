package runner

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// A Go panic exits with status 2, which is the runner's InvalidInput:
// "nothing changed, do not retry". That is a lie after a commit and wrong
// before one, so every panic the runner can catch becomes exit 1
// (InternalError) with a result saying what is known to have been applied:
// Main recovers its own goroutine, and every goroutine the runner starts runs
// through recovering or recordPanic. Panics that cannot be caught (fatal
// runtime errors) are made to end the process by SIGABRT rather than exit 2
// (cmd/runner sets the traceback level "crash").

// panicError is a recovered panic.
type panicError struct {
	value any
	stack []byte
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

func newPanicError(v any) *panicError { return &panicError{value: v, stack: debug.Stack()} }

// goroutinePanics holds the first panic recovered in a goroutine the runner
// started; Main turns it into the run's outcome. It is process-wide because
// a goroutine has nowhere else to put it, and Main is the process (it is not
// called concurrently).
var goroutinePanics struct {
	mu    sync.Mutex
	first *panicError
}

// recordPanic keeps a goroutine's recovered panic for Main.
func recordPanic(v any) { keepPanic(newPanicError(v)) }

func keepPanic(p *panicError) {
	goroutinePanics.mu.Lock()
	defer goroutinePanics.mu.Unlock()
	if goroutinePanics.first == nil {
		goroutinePanics.first = p
	}
}

// forgetGoroutinePanics drops a panic left by an earlier in-process run
// (tests run Main many times in one process).
func forgetGoroutinePanics() { _ = takeGoroutinePanic() }

// takeGoroutinePanic returns the recorded panic, if any, and forgets it.
func takeGoroutinePanic() *panicError {
	goroutinePanics.mu.Lock()
	defer goroutinePanics.mu.Unlock()
	p := goroutinePanics.first
	goroutinePanics.first = nil
	return p
}

// group is an errgroup.Group whose goroutines recover their panics: the
// runner starts its concurrent Kafka reads through it.
type group struct{ *errgroup.Group }

func newGroup(ctx context.Context) (*group, context.Context) {
	g, gctx := errgroup.WithContext(ctx)
	return &group{g}, gctx
}

// Go runs f in a goroutine of the group, through recovering.
func (g *group) Go(f func() error) { g.Group.Go(recovering(f)) }

// recovering wraps a goroutine's body (an errgroup function) so that a panic
// is recorded for Main and returned as the goroutine's error, which stops
// its group: the run fails instead of the process crashing.
func recovering(f func() error) func() error {
	return func() (err error) {
		defer func() {
			if v := recover(); v != nil {
				p := newPanicError(v)
				keepPanic(p)
				err = p
			}
		}()
		hook(hookGoroutine)
		return f()
	}
}

// crashed makes res the outcome of a run that panicked: exit 1 with what is
// known. Before the first commit request nothing can have changed. After it,
// a commit whose outcome was decided (res.Reason set from the read-back)
// stands as reported; one cut short by the panic is unknown for every
// partition that shows no outcome.
func (r *run) crashed(res *report.Result, p *panicError) *report.Result {
	r.log.Error("internal error: the runner panicked; this is a bug", "panic", fmt.Sprint(p.value), "stack", string(p.stack))
	decided := res.Reason != ""
	res.ExitCode = report.ExitInternal
	res.Reason = report.ReasonInternalError
	switch {
	case !r.committing:
		res.Error = "internal error before the commit, nothing was changed: " + p.Error()
	case decided:
		res.Error = "internal error after the commit was verified; the partitions show what was applied: " + p.Error()
	default:
		for i := range res.Partitions {
			if res.Partitions[i].Error == "" {
				res.Partitions[i].Error = "outcome unknown: the runner failed during the commit; read the group's offsets"
			}
		}
		res.Error = "internal error during the commit: offsets may have changed, read the group's offsets back (a retry with the same run ID is safe): " + p.Error()
	}
	return res
}

// emit summarises and writes the result. A panic while doing so (a bug in
// the output code) still ends the run as an InternalError: it tries once
// more with the outcome alone, and reports false if even that failed.
func (r *run) emit(res *report.Result, stdout io.Writer, red *config.Redactor) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			r.log.Error("internal error: writing the result panicked; this is a bug", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			ok = false
			bare := &report.Result{Schema: res.Schema, Group: res.Group, RunID: res.RunID, Target: res.Target, DryRun: res.DryRun,
				ExitCode: report.ExitInternal, Reason: report.ReasonInternalError, Partitions: []report.Partition{},
				StartedAt: res.StartedAt, FinishedAt: res.FinishedAt, Truncated: true,
				Error: fmt.Sprintf("internal error while writing the result (the run itself ended %s: %s): panic: %v", res.Reason, res.Error, v)}
			func() {
				defer func() { _ = recover() }()
				emit(r.cfg, bare, stdout, r.log, red)
			}()
		}
	}()
	hook(hookEmit)
	res.Summarize()
	emit(r.cfg, res, stdout, r.log, red)
	return true
}

// Test hook points: where a test may make the runner panic.
const (
	hookStart     = "start"     // Main, before the run
	hookGoroutine = "goroutine" // every goroutine started through recovering
	hookCommitted = "committed" // right after the commit request returned
	hookSent      = "sent"      // an Atomic commit's offsets sent, its transaction not committed
	hookEmit      = "emit"      // before the result is written
)

// testHook is nil in production: only tests set it (export_test.go, or the
// crashhook build tag for a real binary).
var testHook func(point string)

func hook(point string) {
	if testHook != nil {
		testHook(point)
	}
}
