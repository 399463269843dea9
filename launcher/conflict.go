package launcher

import (
	"context"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// conflictRetryAfter is how soon a reconcile that lost an optimistic-
// concurrency race runs again. The newer version's watch event normally
// brings it back sooner; the requeue covers a write to an object that is
// not watched (a ReplayRecord).
const conflictRetryAfter = time.Second

// quietConflict turns a conflict ("the object has been modified") into a
// retry logged at debug level. Every write the launcher makes is decided
// again from what it reads, so a conflict only means the cache was behind a
// newer version: the next pass reads that version and decides again. As an
// error, controller-runtime would log it as "Reconciler error" while the
// request goes on to succeed, which is noise for whoever troubleshoots.
// Every other error is returned as it is.
func quietConflict(ctx context.Context, res reconcile.Result, err error) (reconcile.Result, error) {
	if err == nil || !apierrors.IsConflict(err) {
		return res, err
	}
	log.FromContext(ctx).V(1).Info("write conflicted with a newer version; retrying", "error", err.Error())
	return reconcile.Result{RequeueAfter: conflictRetryAfter}, nil
}

// writtenOver remembers, per request, the versions that the request
// controller's own writes (status, finalizer) have replaced. The cache
// shows such a write only when its watch event arrives, which enqueues the
// request again; a pass that reads a replaced version before then (woken by
// the Job the same pass created, or the finalizer patch before its status
// write) would decide from a past it has itself changed, and spend API
// calls on a conflict: a status write refused, and after a finish the log
// read and the record again. Such a pass is skipped; the write's event
// brings the request back. Versions are only compared for equality: once
// the cache shows any other version, it is past the replaced ones (a
// watch delivers versions in order), and they are forgotten.
type writtenOver struct {
	mu       sync.Mutex
	replaced map[types.NamespacedName][]string
}

// wrote records that a write of the request key made version now from
// version was. A write that changed nothing leaves the version as it was
// (the API server makes no new one, and sends no event): nothing is
// recorded then.
func (w *writtenOver) wrote(key types.NamespacedName, was, now string) {
	if was == now || was == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.replaced == nil {
		w.replaced = map[types.NamespacedName][]string{}
	}
	w.replaced[key] = append(w.replaced[key], was)
}

// behind reports whether rv, the cache's version of the request key, is one
// the launcher's own write has replaced. Any other version (or "", a
// request that is gone) forgets the key's replaced versions.
func (w *writtenOver) behind(key types.NamespacedName, rv string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if rv != "" && slices.Contains(w.replaced[key], rv) {
		return true
	}
	delete(w.replaced, key)
	return false
}
