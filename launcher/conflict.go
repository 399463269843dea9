package launcher

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
