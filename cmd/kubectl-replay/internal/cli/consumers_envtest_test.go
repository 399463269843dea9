package cli_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/exit"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// --consumers: the launcher pauses the Deployment before the run and
// restores it after; --wait shows both steps and ends only once the
// consumer is back.
func TestEnvtestWaitPausesAndRestoresConsumers(t *testing.T) {
	env(t)
	ns := newNamespace(t)
	logs := testutil.NewRunnerLogs()
	startLauncher(t, ns, logs)
	ctx := context.Background()
	if err := k8s.Create(ctx, testutil.Deployment(ns, "orders-consumer", 3, nil)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var waited result
	wg.Add(1)
	go func() {
		defer wg.Done()
		waited = plugin(t, ns, operator, "create", "paused", "--bootstrap-servers", "kafka."+ns+".svc:9092", "--group", "orders",
			"--to", "shift:-10", "--consumers", "deploy/orders-consumer", "--wait-for-empty", "1m", "--wait", "--timeout", "5m")
	}()
	job := waitJob(t, ns, "paused")
	var d appsv1.Deployment
	if err := k8s.Get(ctx, keyOf(ns, "orders-consumer"), &d); err != nil || *d.Spec.Replicas != 0 {
		t.Fatalf("the consumer is not paused when the Job runs: %v, replicas %v", err, d.Spec.Replicas)
	}
	runJob(t, logs, job, runResult("orders", report.ExitOK, 10))
	wg.Wait()
	wantCode(t, "create --consumers --wait", waited, exit.OK)
	if err := k8s.Get(ctx, keyOf(ns, "orders-consumer"), &d); err != nil || *d.Spec.Replicas != 3 {
		t.Fatalf("--wait ended before the consumer was restored: %v, replicas %v", err, d.Spec.Replicas)
	}
	for _, step := range []string{"pause consumers", "apply", "restore consumers"} {
		if l := lineOf(waited.out, step+" ✓"); l == "" {
			t.Errorf("no line saying %s is done:\n%s", step, waited.out)
		}
	}
	contains(t, "create --consumers --wait", waited.out, "succeeded Applied")
	t.Logf("--wait, not on a terminal:\n%s", waited.out)
}

// lineOf is the first line of out that has sub, after the time.
func lineOf(out, sub string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(strings.Join(strings.Fields(l), " "), sub) {
			return l
		}
	}
	return ""
}
