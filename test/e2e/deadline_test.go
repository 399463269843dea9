package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// A run that hits its Job's activeDeadlineSeconds keeps its log tail: the
// Job controller deletes the pod and marks the Job Failed only once the pod,
// and its log, are gone, so the launcher reads the tail as the runner is
// stopped. The broker holds the runner's read of the group's offsets past a
// 15 s deadline.
func TestDeadlineExceededKeepsLogTail(t *testing.T) {
	f := needFlow(t)
	f.kafka.RequireFake(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const (
		ns    = "team-deadline"
		group = "svc-deadline"
	)
	ensureNamespace(t, ctx, f, ns)
	f.commitAtEnd(t, ctx, group)

	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	defer free()
	fk := f.kafka.Fake
	fk.ControlKey(kmsg.OffsetFetch.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fk.KeepControl()
		r := req.(*kmsg.OffsetFetchRequest)
		asks := r.Group == group
		for _, g := range r.Groups {
			asks = asks || g.Group == group
		}
		if asks {
			fk.SleepControl(func() {
				select {
				case <-release:
				case <-ctx.Done():
				}
			})
		}
		return nil, nil, false
	})

	f.apply(t, ctx, rrManifest(ns, "deadline", group, f.kafka.Bootstrap(), "offset: 10", "  runner:\n    activeDeadlineSeconds: 15\n"))
	rr := f.waitFinal(t, ctx, ns, "deadline")
	if _, reason := condition(rr, v1alpha1.ConditionSucceeded); reason != "DeadlineExceeded" {
		t.Fatalf("Succeeded reason %q, want DeadlineExceeded (message %q)", reason, rr.Status.Message)
	}
	// The runner's first line, written before its read was held.
	if !strings.Contains(rr.Status.LogTail, "msg=starting") {
		t.Fatalf("status.logTail of a DeadlineExceeded run = %q, want the runner's own lines", rr.Status.LogTail)
	}
	t.Logf("logTail kept:\n%s", rr.Status.LogTail)
	free() // the check below reads the group's offsets too
	for p, off := range f.committed(t, ctx, group) {
		if off != perPart {
			t.Errorf("partition %d moved to %d: nothing may change", p, off)
		}
	}
}
