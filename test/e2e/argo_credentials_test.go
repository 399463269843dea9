package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// Issue 10's rule on the Argo path: the template's kafka-secret Secret is
// the runner's secret directory, so its credentials go only to the servers
// its own bootstrap.servers names, whatever bootstrap-servers the submitter
// picks; its kafka-config ConfigMap is the config directory, which may not
// redirect them. kfake needs no credentials: the Secret holds its binding
// and a harmless property (any property but group.id, metadata.broker.list
// and go.* may sit in a secret directory), which is enough for the runner to
// treat it as credentials.

// passThroughBootstrap stands in front of the first broker as a server of
// the submitter's own: it passes every connection through to Kafka (so a
// runner that trusted it would reach the brokers and commit) and counts
// them.
func passThroughBootstrap(t *testing.T, a *argoEnv) *flakyBootstrap {
	t.Helper()
	ln, err := a.c.KafkaListen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	// refused is set, and to no client's IP: nothing is reset.
	p := &flakyBootstrap{ln: ln, target: strings.Split(a.kafka.Bootstrap(), ",")[0], dial: a.c.KafkaDial, counts: map[string]int{}, refused: "none"}
	go p.serve()
	t.Cleanup(func() { ln.Close() })
	return p
}

// createArgoObject creates obj in the Argo namespace and deletes it when
// the test ends.
func (a *argoEnv) createArgoObject(t *testing.T, ctx context.Context, obj client.Object) {
	t.Helper()
	obj.SetNamespace(argoNS)
	if err := a.cl.Create(ctx, obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
	t.Cleanup(func() { _ = a.cl.Delete(context.Background(), obj) })
}

// refusedUnbound: the Workflow failed through the invalid-input branch
// after one attempt (exit 2 is never retried), whose result says
// CredentialsNotBound naming field, and nothing was committed.
func (a *argoEnv) refusedUnbound(t *testing.T, ctx context.Context, name, group, field string) *report.Result {
	t.Helper()
	w := a.waitWorkflow(t, ctx, name, "finish", finished)
	if w.Status.Phase != "Failed" {
		t.Errorf("%s: phase %s, want Failed (the invalid-input branch exits 2)", name, w.Status.Phase)
	}
	w.checkBranch(t, "invalid-input", "Failed")
	att := w.attempts(t)
	if len(att) != 1 || att[0].exitCode() != fmt.Sprint(int(report.ExitInvalidInput)) {
		t.Fatalf("%s: %d attempts (first exit %q), want one, exit 2: %s", name, len(att), att[0].exitCode(), w.nodeSummary())
	}
	res := att[0].result(t)
	if res.ExitCode != report.ExitInvalidInput || res.Reason != report.ReasonCredentialsNotBound || res.Totals.Applied != 0 || len(res.Partitions) != 0 {
		t.Errorf("%s: result exit %d reason %s, %d applied, %d partitions; want exit 2 %s, nothing: %s",
			name, res.ExitCode, res.Reason, res.Totals.Applied, len(res.Partitions), report.ReasonCredentialsNotBound, res.Error)
	}
	if !strings.Contains(res.Error, field) {
		t.Errorf("%s: result error %q does not name %s", name, res.Error, field)
	}
	a.checkOffsets(t, ctx, group, perPart)
	return res
}

// Scenario 12: one Secret bound to this Kafka's servers. Named by
// kafka-secret with those servers, it applies (with a ConfigMap of other
// properties beside it); with a server of the submitter's own it ends exit
// 2, CredentialsNotBound, before any connection (the server counts none),
// and without revealing the servers it is bound to. A Secret without
// bootstrap.servers is refused the same way, with that server too; so is a
// ConfigMap setting security.protocol beside the bound Secret, and a Secret
// that does not exist (an empty, unbound secret directory).
func TestArgoCredentialsBoundToTheirServers(t *testing.T) {
	a := needArgo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	const secret, unbound, clientConfig, redirect = "kafka-argo-bound", "kafka-argo-unbound", "kafka-argo-client", "kafka-argo-redirect"
	a.createArgoObject(t, ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secret},
		StringData: map[string]string{"bootstrap.servers": a.kafka.Bootstrap(), "socket.keepalive.enable": "true"},
	})
	// As docs/usage.md's Argo Secret was until this rule reached the
	// template: credentials, no servers.
	a.createArgoObject(t, ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: unbound},
		StringData: map[string]string{"socket.keepalive.enable": "true"},
	})
	a.createArgoObject(t, ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: clientConfig},
		Data:       map[string]string{"client.id": "kafka-replay-argo-e2e"},
	})
	a.createArgoObject(t, ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: redirect},
		Data:       map[string]string{"security.protocol": "PLAINTEXT"},
	})

	t.Run("bound", func(t *testing.T) {
		const group, name = "svc-argo-cred-bound", "argo-cred-bound"
		a.commitAtEnd(t, ctx, group)
		a.kafka.ResetRequests()
		a.submit(t, ctx, name, map[string]string{"group": group, "target": "offset:25", "kafka-secret": secret, "kafka-config": clientConfig})
		w, res := a.runOK(t, ctx, name)
		if n := a.kafka.Requests()["OffsetCommit"]; n != 1 {
			t.Errorf("%d OffsetCommit requests, want 1 (requests: %s)", n, a.kafka.Requests())
		}
		a.checkResultMatchesKafka(t, ctx, w, res, group, 25)
	})

	t.Run("other-servers", func(t *testing.T) {
		const group, name = "svc-argo-cred-elsewhere", "argo-cred-elsewhere"
		a.commitAtEnd(t, ctx, group)
		proxy := passThroughBootstrap(t, a)
		a.kafka.ResetRequests()
		a.submit(t, ctx, name, map[string]string{"group": group, "target": "offset:25", "kafka-secret": secret, "bootstrap-servers": proxy.ln.Addr().String()})
		res := a.refusedUnbound(t, ctx, name, group, config.EnvBootstrapServers)
		// Refused for the Secret's binding (a Secret read as the config
		// directory would restrict the run too, but bind nothing).
		if !strings.Contains(res.Error, "credentials of --"+config.FlagKafkaSecretDir+" are bound to") || !strings.Contains(res.Error, "nothing was contacted") {
			t.Errorf("the result does not say the Secret's credentials are bound elsewhere, nothing contacted: %s", res.Error)
		}
		if _, counts := proxy.stats(); len(counts) != 0 {
			t.Errorf("the submitter's server had connections %v, want none", counts)
		}
		if n := a.kafka.Requests()["OffsetCommit"]; n != 0 {
			t.Errorf("%d OffsetCommit requests, want none", n)
		}
		// The submitter may not be able to read the Secret: the result
		// names their server, never the ones the Secret is for.
		for _, s := range strings.Split(a.kafka.Bootstrap(), ",") {
			if strings.Contains(res.Error, s) {
				t.Errorf("the result reveals the Secret's server %s: %s", s, res.Error)
			}
		}
		if !strings.Contains(res.Error, proxy.ln.Addr().String()) {
			t.Errorf("the result does not name the refused server %s: %s", proxy.ln.Addr(), res.Error)
		}
		t.Logf("Secret bound elsewhere: one attempt, exit 2; result error: %s", res.Error)
	})

	// The hole this closes: a Secret that names no servers, mounted as the
	// config directory, went to whatever server the submitter picked.
	t.Run("unbound-secret", func(t *testing.T) {
		const group, name = "svc-argo-cred-unbound", "argo-cred-unbound"
		a.commitAtEnd(t, ctx, group)
		proxy := passThroughBootstrap(t, a)
		a.kafka.ResetRequests()
		a.submit(t, ctx, name, map[string]string{"group": group, "target": "offset:25", "kafka-secret": unbound, "bootstrap-servers": proxy.ln.Addr().String()})
		res := a.refusedUnbound(t, ctx, name, group, config.EnvKafkaSecretDir)
		if !strings.Contains(res.Error, "not bound to any servers") {
			t.Errorf("the result does not say the credentials are bound to no servers: %s", res.Error)
		}
		if _, counts := proxy.stats(); len(counts) != 0 {
			t.Errorf("the submitter's server had connections %v, want none", counts)
		}
		if n := a.kafka.Requests()["OffsetCommit"]; n != 0 {
			t.Errorf("%d OffsetCommit requests, want none", n)
		}
		t.Logf("Secret without bootstrap.servers: one attempt, exit 2; result error: %s", res.Error)
	})

	t.Run("config-redirects", func(t *testing.T) {
		const group, name = "svc-argo-cred-redirect", "argo-cred-redirect"
		a.commitAtEnd(t, ctx, group)
		a.kafka.ResetRequests()
		a.submit(t, ctx, name, map[string]string{"group": group, "target": "offset:25", "kafka-secret": secret, "kafka-config": redirect})
		res := a.refusedUnbound(t, ctx, name, group, config.EnvKafkaConfigDir)
		if !strings.Contains(res.Error, "security.protocol") {
			t.Errorf("the result does not name security.protocol: %s", res.Error)
		}
		if n := a.kafka.Requests()["OffsetCommit"]; n != 0 {
			t.Errorf("%d OffsetCommit requests, want none", n)
		}
		t.Logf("ConfigMap beside the Secret: one attempt, exit 2; result error: %s", res.Error)
	})

	t.Run("missing-secret", func(t *testing.T) {
		const group, name = "svc-argo-cred-missing", "argo-cred-missing"
		a.commitAtEnd(t, ctx, group)
		a.kafka.ResetRequests()
		a.submit(t, ctx, name, map[string]string{"group": group, "target": "offset:25", "kafka-secret": "kafka-argo-no-such-secret"})
		res := a.refusedUnbound(t, ctx, name, group, config.EnvKafkaSecretDir)
		if !strings.Contains(res.Error, "not bound to any servers") {
			t.Errorf("the result does not say the credentials are bound to no servers: %s", res.Error)
		}
		if n := a.kafka.Requests()["OffsetCommit"]; n != 0 {
			t.Errorf("%d OffsetCommit requests, want none", n)
		}
		t.Logf("Secret that does not exist: one attempt, exit 2; result error: %s", res.Error)
	})
}
