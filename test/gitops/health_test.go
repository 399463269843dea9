package gitops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// The shipped health checks, read once per test.
func shipped(t *testing.T) (string, FluxCheck) {
	t.Helper()
	script, err := os.ReadFile(filepath.Join(RepoRoot(), LuaFile))
	if err != nil {
		t.Fatal(err)
	}
	checks, err := LoadFluxChecks(filepath.Join(RepoRoot(), FluxFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 1 || checks[0].APIVersion != "kafkareplay.dev/v1alpha1" || checks[0].Kind != "ReplayRequest" {
		t.Fatalf("%s: want one entry for kafkareplay.dev/v1alpha1 ReplayRequest, got %+v", FluxFile, checks)
	}
	return string(script), checks[0]
}

// request builds a ReplayRequest as the API server returns it, from YAML
// for metadata extras and status (empty: no status at all), with integers
// as int64 like a decoded unstructured object.
func request(t *testing.T, metadata, status string) map[string]any {
	t.Helper()
	doc := "apiVersion: kafkareplay.dev/v1alpha1\nkind: ReplayRequest\n" +
		"metadata:\n  name: replay\n  namespace: ns\n  generation: 1\n" + indent(metadata, "  ") +
		"spec:\n  group: orders\n  kafka: {bootstrapServers: 'kafka:9092'}\n  target: {position: Earliest}\n"
	if status != "" {
		doc += "status:\n" + indent(status, "  ")
	}
	j, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(j, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func indent(s, prefix string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// statusManaged is the managedFields entry a status write leaves.
const statusManaged = `managedFields:
- {manager: launcher, operation: Update, apiVersion: kafkareplay.dev/v1alpha1, subresource: status, fieldsType: FieldsV1, fieldsV1: {}}
`

// Every state a request goes through, and the odd ones, for both checks.
func TestHealthChecksByState(t *testing.T) {
	script, flux := shipped(t)
	cases := []struct {
		name     string
		metadata string
		status   string
		argo     string
		message  string // a substring of Argo CD's message
		flux     string
		fluxErr  bool
	}{
		{
			name:     "not seen by the launcher: no status at all",
			metadata: "managedFields:\n- {manager: kubectl, operation: Apply, apiVersion: kafkareplay.dev/v1alpha1, fieldsType: FieldsV1, fieldsV1: {}}\n",
			argo:     Progressing, message: "waiting for the kafka-replay launcher", flux: InProgress,
		},
		{
			// Without managedFields (a client that strips them) Flux cannot
			// tell an unseen request from a broken one: an evaluation error,
			// which Flux retries (in progress) until its timeout.
			name: "not seen, managedFields stripped",
			argo: Progressing, message: "waiting for the kafka-replay launcher", fluxErr: true,
		},
		{
			name: "status without conditions", metadata: statusManaged, status: "phase: Pending\n",
			argo: Progressing, message: "waiting for the kafka-replay launcher", flux: InProgress,
		},
		{
			name: "status older than the request", metadata: statusManaged,
			status: "observedGeneration: 0\nphase: Succeeded\nconditions:\n- {type: Succeeded, status: 'True', reason: Applied, message: done}\n",
			argo:   Progressing, message: "observe generation 1", flux: InProgress,
		},
		{
			// Argo CD passes a json.Number as a string: the same generation.
			name: "observedGeneration as a string", metadata: statusManaged,
			status: "observedGeneration: '1'\nconditions:\n- {type: Succeeded, status: 'True', reason: Applied, message: done}\n",
			argo:   Healthy, message: "Applied: done", fluxErr: true,
		},
		{
			name: "accepted", metadata: statusManaged,
			status: "observedGeneration: 1\nphase: Pending\nconditions:\n- {type: Accepted, status: 'True', reason: Accepted, message: target resolved to earliest}\n",
			argo:   Progressing, message: "Accepted: target resolved to earliest", flux: InProgress,
		},
		{
			name: "waiting for the group", metadata: statusManaged,
			status: "observedGeneration: 1\nphase: Pending\nconditions:\n- {type: Accepted, status: 'True', reason: WaitingForGroup, message: waiting for ns/first}\n",
			argo:   Progressing, message: "WaitingForGroup: waiting for ns/first", flux: InProgress,
		},
		{
			name: "pausing consumers", metadata: statusManaged,
			status: "observedGeneration: 1\nphase: Pending\nconditions:\n- {type: Accepted, status: 'True', reason: Accepted, message: ok}\n- {type: ConsumersPaused, status: 'False', reason: Pausing, message: 'recorded, pausing: Deployment/c'}\n" +
				"consumers:\n- {kind: Deployment, name: c, method: Scale, state: Recorded}\n",
			argo: Progressing, message: "Pausing: recorded, pausing", flux: InProgress,
		},
		{
			name: "Job cannot be created yet", metadata: statusManaged,
			status: "observedGeneration: 1\nphase: Pending\nconditions:\n- {type: Accepted, status: 'True', reason: Accepted, message: ok}\n- {type: Running, status: 'False', reason: JobCreateFailed, message: exceeded quota}\n",
			argo:   Progressing, message: "JobCreateFailed: exceeded quota", flux: InProgress,
		},
		{
			name: "running", metadata: statusManaged,
			status: "observedGeneration: 1\nphase: Running\nconditions:\n- {type: Accepted, status: 'True', reason: Accepted, message: ok}\n- {type: Running, status: 'True', reason: JobCreated, message: runner Job replay created}\n",
			argo:   Progressing, message: "JobCreated: runner Job replay created", flux: InProgress,
		},
		{
			name: "awaiting approval", metadata: statusManaged,
			status: "observedGeneration: 1\nphase: AwaitingApproval\nconditions:\n- {type: Accepted, status: 'True', reason: Accepted, message: ok}\n- {type: Running, status: 'False', reason: Finished, message: the runner Job has finished}\n" +
				"- {type: AwaitingApproval, status: 'True', reason: PlanReady, message: 'kubectl annotate -n ns rr replay kafkareplay.dev/approve=0123456789abcdef'}\n",
			argo: Progressing, message: "PlanReady: kubectl annotate -n ns rr replay kafkareplay.dev/approve=0123456789abcdef", flux: InProgress,
		},
		{
			name: "approved, queued for the apply Job", metadata: statusManaged,
			status: "observedGeneration: 1\nphase: Pending\nconditions:\n- {type: Accepted, status: 'True', reason: Accepted, message: ok}\n- {type: Running, status: 'False', reason: Finished, message: the runner Job has finished}\n" +
				"- {type: AwaitingApproval, status: 'False', reason: Approved, message: approved by alice}\n",
			argo: Progressing, message: "Accepted: ok", flux: InProgress,
		},
		{
			name: "succeeded", metadata: statusManaged,
			status: "observedGeneration: 1\nphase: Succeeded\nconditions:\n- {type: Succeeded, status: 'True', reason: Applied, message: 3 partitions moved}\n- {type: Finished, status: 'True', reason: Applied, message: 3 partitions moved}\n",
			argo:   Healthy, message: "Applied: 3 partitions moved", flux: Current,
		},
		{
			name: "succeeded, phase field missing", metadata: statusManaged,
			status: "observedGeneration: 1\nconditions:\n- {type: Succeeded, status: 'True', reason: DryRun, message: 'dry run: 3 partitions planned'}\n",
			argo:   Healthy, message: "DryRun: dry run", flux: Current,
		},
		{
			name: "phase says Succeeded, conditions do not", metadata: statusManaged,
			status: "observedGeneration: 1\nphase: Succeeded\nconditions:\n- {type: Running, status: 'True', reason: PodRunning, message: planning}\n",
			argo:   Progressing, message: "PodRunning: planning", flux: InProgress,
		},
		{
			name: "Succeeded Unknown is not an outcome", metadata: statusManaged,
			status: "observedGeneration: 1\nconditions:\n- {type: Succeeded, status: Unknown, reason: Pending, message: ''}\n- {type: Running, status: 'True', reason: PodRunning, message: x}\n",
			argo:   Progressing, message: "PodRunning", flux: InProgress,
		},
		{
			name: "Finished alone is not an outcome", metadata: statusManaged,
			status: "observedGeneration: 1\nconditions:\n- {type: Finished, status: 'False', reason: Running, message: x}\n- {type: Running, status: 'True', reason: PodRunning, message: 'y'}\n",
			argo:   Progressing, message: "PodRunning: y", flux: InProgress,
		},
		{
			name: "succeeded, consumers still paused", metadata: statusManaged,
			status: "observedGeneration: 1\nconditions:\n- {type: Succeeded, status: 'True', reason: Applied, message: moved}\n- {type: ConsumersRestored, status: 'False', reason: RestoreFailed, message: frozen}\n" +
				"consumers:\n- {kind: Deployment, name: c, method: Scale, state: Paused}\n",
			argo: Progressing, message: "Applied: moved; restoring the consumers (RestoreFailed: frozen)", flux: InProgress,
		},
		{
			name: "succeeded, consumers restored", metadata: statusManaged,
			status: "observedGeneration: 1\nconditions:\n- {type: Succeeded, status: 'True', reason: Applied, message: moved}\n- {type: ConsumersRestored, status: 'True', reason: Restored, message: back}\n" +
				"consumers:\n- {kind: Deployment, name: c, method: Scale, state: Restored}\n",
			argo: Healthy, message: "Applied: moved", flux: Current,
		},
		{
			name: "succeeded, a consumer left as found", metadata: statusManaged,
			status: "observedGeneration: 1\nconditions:\n- {type: Succeeded, status: 'True', reason: Applied, message: moved}\n- {type: ConsumersRestored, status: 'True', reason: NotRestored, message: Deployment/c was scaled to 5 meanwhile}\n" +
				"consumers:\n- {kind: Deployment, name: c, method: Scale, state: NotRestored}\n",
			argo: Healthy, message: "Applied: moved; NotRestored: Deployment/c was scaled to 5 meanwhile", flux: Current,
		},
		{
			name: "failed", metadata: statusManaged,
			status: "observedGeneration: 1\nphase: Failed\nconditions:\n- {type: Succeeded, status: 'False', reason: GroupActive, message: the group has 2 members}\n- {type: Finished, status: 'True', reason: GroupActive, message: the group has 2 members}\n",
			argo:   Degraded, message: "GroupActive: the group has 2 members", flux: Failed,
		},
		{
			name: "failed, consumers still paused", metadata: statusManaged,
			status: "observedGeneration: 1\nconditions:\n- {type: Succeeded, status: 'False', reason: KafkaError, message: brokers down}\n" +
				"consumers:\n- {kind: Deployment, name: c, method: Scale, state: Paused}\n",
			argo: Degraded, message: "KafkaError: brokers down", flux: Failed,
		},
		{
			name: "rejected", metadata: statusManaged,
			status: "observedGeneration: 1\nconditions:\n- {type: AwaitingApproval, status: 'False', reason: Rejected, message: wrong group}\n- {type: Succeeded, status: 'False', reason: Rejected, message: 'rejected: wrong group'}\n",
			argo:   Degraded, message: "Rejected: rejected: wrong group", flux: Failed,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := request(t, c.metadata, c.status)
			h, err := ArgoHealth(script, obj)
			if err != nil {
				t.Fatalf("argo: %v", err)
			}
			if h.Status != c.argo || !strings.Contains(h.Message, c.message) {
				t.Errorf("argo = %+v, want %s ~%q", h, c.argo, c.message)
			}
			got, err := FluxHealth(flux, obj)
			switch {
			case c.fluxErr && err == nil:
				t.Errorf("flux = %s, want an evaluation error", got)
			case !c.fluxErr && err != nil:
				t.Errorf("flux: %v", err)
			case !c.fluxErr && got != c.flux:
				t.Errorf("flux = %s, want %s", got, c.flux)
			}
		})
	}
}

// The harness itself: it must report what Argo CD and Flux would, or the
// tests above prove nothing.
func TestHarnessBehavesLikeArgoAndFlux(t *testing.T) {
	obj := request(t, "", "")
	// No string library in Argo CD's state.
	if _, err := ArgoHealth(`return { status = string.upper("healthy") }`, obj); err == nil {
		t.Error("the string library is open; Argo CD does not open it")
	}
	// An unknown status becomes Unknown with Argo CD's message.
	if h, err := ArgoHealth(`return { status = "Fine" }`, obj); err != nil || h.Status != Unknown || h.Message != invalidHealthStatus {
		t.Errorf("unknown status: %+v, %v", h, err)
	}
	// A script that does not return a table is an error.
	if _, err := ArgoHealth(`return "Healthy"`, obj); err == nil {
		t.Error("a string return was accepted")
	}
	// A script that never ends is stopped.
	if _, err := ArgoHealth(`while true do end`, obj); err == nil {
		t.Error("an endless script was not stopped")
	}
	// obj carries integers as numbers.
	if h, err := ArgoHealth(`return { status = "Healthy", message = "g" .. (obj.metadata.generation + 1) }`, obj); err != nil || h.Message != "g2" {
		t.Errorf("generation: %+v, %v", h, err)
	}
	// Flux: the first true expression wins, in the order inProgress, failed, current.
	all := FluxCheck{InProgress: "true", Failed: "true", Current: "true"}
	if got, _ := FluxHealth(all, obj); got != InProgress {
		t.Errorf("order: %s", got)
	}
	if got, _ := FluxHealth(FluxCheck{Failed: "true", Current: "true"}, obj); got != Failed {
		t.Errorf("order without inProgress: %s", got)
	}
	if got, _ := FluxHealth(FluxCheck{Current: "false"}, obj); got != InProgress {
		t.Errorf("none true: %s", got)
	}
	// Top-level fields are the variables; an absent one is an error.
	if got, err := FluxHealth(FluxCheck{Current: "metadata.name == 'replay' && spec.group == 'orders'"}, obj); err != nil || got != Current {
		t.Errorf("variables: %s, %v", got, err)
	}
	if _, err := FluxHealth(FluxCheck{Current: "status.phase == 'Succeeded'"}, obj); err == nil {
		t.Error("an absent status was not an error")
	}
	// A differing observedGeneration wins over every expression.
	stale := request(t, "", "observedGeneration: 3\n")
	if got, _ := FluxHealth(FluxCheck{Current: "true"}, stale); got != InProgress {
		t.Errorf("observedGeneration: %s", got)
	}
	// Flux's environment has its extensions (strings, sets, optionals).
	if got, err := FluxHealth(FluxCheck{Current: "'a,b'.split(',').size() == 2 && sets.contains([1, 2], [1]) && metadata.?nothing.orValue(1) == 1"}, obj); err != nil || got != Current {
		t.Errorf("extensions: %s, %v", got, err)
	}
}

// docs/gitops.md shows the shipped checks, byte for byte: the argocd-cm key
// holds the Lua file, the Kustomization's healthCheckExprs the Flux file.
func TestDocsShowTheShippedChecks(t *testing.T) {
	script, flux := shipped(t)
	blocks, err := YAMLBlocks(filepath.Join(RepoRoot(), "docs", "gitops.md"))
	if err != nil {
		t.Fatal(err)
	}
	var sawArgo, sawFlux bool
	for _, b := range blocks {
		var doc struct {
			Kind string            `json:"kind"`
			Data map[string]string `json:"data"`
			Spec struct {
				HealthCheckExprs []FluxCheck `json:"healthCheckExprs"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal([]byte(b), &doc); err != nil {
			t.Fatalf("a yaml block of docs/gitops.md does not parse: %v\n%s", err, b)
		}
		switch doc.Kind {
		case "ConfigMap":
			sawArgo = true
			if got := doc.Data["resource.customizations.health.kafkareplay.dev_ReplayRequest"]; got != script {
				t.Errorf("docs/gitops.md's argocd-cm health check differs from %s:\n%s", LuaFile, got)
			}
		case "Kustomization":
			sawFlux = true
			if len(doc.Spec.HealthCheckExprs) != 1 || doc.Spec.HealthCheckExprs[0] != flux {
				t.Errorf("docs/gitops.md's healthCheckExprs differ from %s: %+v", FluxFile, doc.Spec.HealthCheckExprs)
			}
		}
	}
	if !sawArgo || !sawFlux {
		t.Fatalf("docs/gitops.md: argocd-cm shown %v, Kustomization shown %v", sawArgo, sawFlux)
	}
}
