package cli_test

import (
	"context"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/exit"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// How --wait ends when the request does not: --timeout (exit 6, the request
// left as it is), an interrupt (exit 130), the request deleted (exit 1).
// No launcher runs here, so the requests never finish.
func TestEnvtestWaitEndsWithoutAnOutcome(t *testing.T) {
	env(t)
	ns := newNamespace(t)
	create := func(name string, extra ...string) []string {
		return append([]string{"create", name, "--bootstrap-servers", "kafka." + ns + ".svc:9092", "--group", name, "--to", "earliest", "--wait"}, extra...)
	}

	r := plugin(t, ns, operator, create("slow", "--timeout", "1s")...)
	wantCode(t, "--timeout", r, exit.Timeout)
	contains(t, "--timeout", r.errOut, "--timeout ran out before the request finished; it goes on")
	if rr := getRR(t, ns, "slow"); rr.DeletionTimestamp != nil {
		t.Errorf("the request was touched: %+v", rr.ObjectMeta)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan result, 1)
	go func() { done <- pluginCtx(ctx, t, ns, operator, create("interrupted")...) }()
	eventually(t, 10*time.Second, "the request created", func() error {
		var rr v1alpha1.ReplayRequest
		return k8s.Get(ctx, keyOf(ns, "interrupted"), &rr)
	})
	cancel()
	r = <-done
	wantCode(t, "interrupted", r, exit.Interrupted)
	contains(t, "interrupted", r.errOut, "interrupted; the request goes on")

	go func() { done <- plugin(t, ns, operator, create("deleted")...) }()
	eventually(t, 10*time.Second, "the request deleted", func() error {
		rr := &v1alpha1.ReplayRequest{}
		if err := k8s.Get(context.Background(), keyOf(ns, "deleted"), rr); err != nil {
			return err
		}
		return k8s.Delete(context.Background(), rr)
	})
	r = <-done
	wantCode(t, "deleted while followed", r, exit.Failed)
	contains(t, "deleted while followed", r.errOut, `replayrequest "deleted" was deleted before it finished`)
}

// An interrupt that cuts off the create says whether the request exists:
// here the interrupt comes first, so nothing was sent, and the exit is
// the interrupt's (130), not an API server error's.
func TestEnvtestCreateInterruptedBeforeItWasSent(t *testing.T) {
	env(t)
	ns := newNamespace(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := pluginCtx(ctx, t, ns, operator, "create", "early", "--bootstrap-servers", "kafka."+ns+".svc:9092", "--group", "early", "--to", "earliest", "--wait")
	wantCode(t, "interrupted create", r, exit.Interrupted)
	contains(t, "interrupted create", r.errOut, "interrupted before replayrequest early was created; nothing was made")
	var rr v1alpha1.ReplayRequest
	if err := k8s.Get(context.Background(), keyOf(ns, "early"), &rr); err == nil {
		t.Errorf("the request exists: %+v", rr.ObjectMeta)
	}
	// Any verb's API call cut off by an interrupt ends with the interrupt's
	// code, not an API error's.
	r = pluginCtx(ctx, t, ns, operator, "describe", "early")
	wantCode(t, "interrupted describe", r, exit.Interrupted)
}
