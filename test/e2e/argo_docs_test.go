package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distribution/reference"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kafka-replay/kafka-replay/runner/report"
	"github.com/kafka-replay/kafka-replay/test/cluster"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// The docs' argo commands run as written (issue 32): the blocks of the
// README and docs/usage.md marked <!-- e2e: run with argo: ... -->, in
// order, with Argo Workflows' own argo CLI (test/tools/argo/build.sh
// builds it with the controller) on PATH beside kubectl and jq, in the
// cluster's network namespace. ARGO_SERVER is unset: the CLI talks to the
// API server with the cluster's kubeconfig, as it does without an
// argo-server. The only change to a command is the example servers,
// kafka:9092 (and docSubstitutions'), which become this cluster's Kafka.
//
// What the commands assume besides, as a reader's cluster has it: the
// template's default images (runner-image, notify-image) are on the node,
// here the runner and shell images under those names, so nothing is
// pulled; a Secret kafka-credentials in namespace argo, here bound to this
// Kafka's servers alone (kfake takes no credentials; the documented one is
// a template of SASL_SSL credentials, not run); topics orders and payments
// with group orders-service committed at their end, so that ago:1h moves
// nothing (every record is older) and shift:-500 rewinds to the start.

// argoDocServers is the Argo examples' Kafka.
const argoDocServers = "kafka:9092"

// argoDocGroup is the group the Argo examples replay.
const argoDocGroup = "orders-service"

func TestArgoDocBlocks(t *testing.T) {
	a := needArgo(t)
	root, err := cluster.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var blocks []docBlock
	for _, file := range docFiles {
		bs, err := docBlocks(root, file)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			if b.argo {
				blocks = append(blocks, b)
			}
		}
	}
	if len(blocks) == 0 {
		t.Fatal("no block is marked <!-- e2e: run with argo: ... -->")
	}

	bin, err := argoBinaries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(bin, "argo")); err != nil {
		t.Fatalf("the argo CLI: %v (make argo-binaries builds it beside the controller)", err)
	}
	dir := t.TempDir() // the working directory: the blocks write plan.json and apply.json here
	if err := os.Symlink(filepath.Join(root, "docs"), filepath.Join(dir, "docs")); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + bin + ":" + a.c.BinDir() + ":" + os.Getenv("PATH"), "ARGO_SERVER="}

	a.argoDocImages(t, ctx, root)
	if err := seedPayments(ctx, a.flowEnv); err != nil {
		t.Fatal(err)
	}
	a.commitDocGroupAtEnd(t, ctx)
	if _, err := a.c.Kubectl(ctx, "-n", argoNS, "create", "secret", "generic", "kafka-credentials",
		"--from-literal=bootstrap.servers="+a.kafka.Bootstrap(), "--from-literal=socket.keepalive.enable=true"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = a.c.Kubectl(context.Background(), "-n", argoNS, "delete", "secret", "kafka-credentials", "--ignore-not-found")
	})

	t0 := time.Now().Add(-time.Second).Truncate(time.Second) // creationTimestamp has seconds
	sub := strings.NewReplacer(append(docSubstitutions(a.kafka.Bootstrap()), argoDocServers, a.kafka.Bootstrap())...)
	for _, b := range blocks {
		if strings.Contains(b.text, "kubectl -n argo create serviceaccount "+a.sa) {
			// usage.md's block makes the ServiceAccount and its Role as a
			// fresh namespace needs them; setupArgo made them with the
			// same commands (argoDocCommands), and the README's submit
			// before it used them.
			if _, err := a.c.Kubectl(ctx, "-n", argoNS, "delete", "serviceaccount/"+a.sa, "role/argo-executor", "rolebinding/kafka-replay-executor"); err != nil {
				t.Fatal(err)
			}
		}
		cmd := a.c.Command(ctx, "sh", "-ec", sub.Replace(b.text))
		cmd.Env = append(cmd.Env, env...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		t.Logf("%s:%d: ran %q:\n%s", b.file, b.line, b.first, out)
		if err != nil {
			t.Fatalf("%s:%d: the documented commands starting %q failed: %v\n%s", b.file, b.line, b.first, err, out)
		}
	}

	// Every workflow the commands submitted succeeded: `--watch` ends
	// with the workflow, whatever its phase.
	var list unstructured.UnstructuredList
	list.SetGroupVersionKind(workflowGVK.GroupVersion().WithKind("WorkflowList"))
	if err := a.cl.List(ctx, &list, client.InNamespace(argoNS)); err != nil {
		t.Fatal(err)
	}
	submitted := 0
	for _, u := range list.Items {
		if u.GetCreationTimestamp().Time.Before(t0) {
			continue
		}
		submitted++
		if w := a.get(t, ctx, u.GetName()); w.Status.Phase != "Succeeded" {
			t.Errorf("workflow %s: %s %s: %s", u.GetName(), w.Status.Phase, w.Status.Message, w.nodeSummary())
		}
	}
	if want := strings.Count(strings.Join(blockTexts(blocks), ""), "argo -n argo submit"); submitted != want {
		t.Errorf("%d workflows submitted, want one per documented argo submit (%d)", submitted, want)
	}

	// The review's plan.json is the dry run's result, as `argo get`
	// and jq read it from the workflow; its apply rewound the group to
	// the start of orders (shift:-500 from 100), payments untouched.
	b, err := os.ReadFile(filepath.Join(dir, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var plan report.Result
	if err := json.Unmarshal(b, &plan); err != nil || plan.Group != argoDocGroup || !plan.DryRun || len(plan.Partitions) != parts {
		t.Fatalf("plan.json: group %q, dry run %v, %d partitions (%v); want %s's dry run over %d partitions:\n%s", plan.Group, plan.DryRun, len(plan.Partitions), err, argoDocGroup, parts, b)
	}
	got, err := a.kafka.Committed(ctx, argoDocGroup)
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < parts; p++ {
		if o := got[topic][p].Offset; o != 0 {
			t.Errorf("%s %s/%d at %d, want 0 (the applied plan)", argoDocGroup, topic, p, o)
		}
	}
	for p := int32(0); p < paymentsParts; p++ {
		if o := got["payments"][p].Offset; o != paymentsPerPart {
			t.Errorf("%s payments/%d at %d, want %d (no plan moved it)", argoDocGroup, p, o, paymentsPerPart)
		}
	}
}

func blockTexts(bs []docBlock) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.text)
	}
	return out
}

// argoDocImages gives the node's runner and shell images the names the
// WorkflowTemplate's parameters default to (runner-image, notify-image),
// which the README's submit leaves as they are.
func (a *argoEnv) argoDocImages(t *testing.T, ctx context.Context, root string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "argo-workflowtemplate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tmpl struct {
		Spec struct {
			Arguments struct {
				Parameters []struct{ Name, Value string }
			}
		}
	}
	if err := yaml.Unmarshal(b, &tmpl); err != nil {
		t.Fatal(err)
	}
	ours := map[string]string{"runner-image": cluster.RunnerImage, "notify-image": argoShellImage}
	for _, p := range tmpl.Spec.Arguments.Parameters {
		src, ok := ours[p.Name]
		if !ok {
			continue
		}
		delete(ours, p.Name)
		named, err := reference.ParseNormalizedNamed(p.Value)
		if err != nil {
			t.Fatalf("the template's %s %q: %v", p.Name, p.Value, err)
		}
		if err := a.c.TagImage(ctx, src, named.String()); err != nil {
			t.Fatal(err)
		}
	}
	if len(ours) > 0 {
		t.Fatalf("the template has no default for %v", ours)
	}
}

// commitDocGroupAtEnd commits the Argo examples' group at the end of
// orders and payments, and puts its commits back as they were when the
// test ends (TestDocsRunAsWritten replays the same group).
func (a *argoEnv) commitDocGroupAtEnd(t *testing.T, ctx context.Context) {
	t.Helper()
	before, err := a.kafka.Committed(ctx, argoDocGroup)
	if err != nil {
		t.Fatal(err)
	}
	offs := kafkatest.Offsets{topic: {}, "payments": {}}
	for p := int32(0); p < parts; p++ {
		offs[topic][p] = perPart
	}
	for p := int32(0); p < paymentsParts; p++ {
		offs["payments"][p] = paymentsPerPart
	}
	if err := a.kafka.Commit(ctx, argoDocGroup, offs, "e2e"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		restore := kafkatest.Offsets{}
		for tp, ps := range offs {
			for p := range ps {
				if c, ok := before[tp][p]; ok {
					if restore[tp] == nil {
						restore[tp] = map[int32]int64{}
					}
					restore[tp][p] = c.Offset
				} else if err := a.kafka.DeleteCommitted(ctx, argoDocGroup, tp, p); err != nil {
					t.Errorf("delete %s's commit on %s/%d: %v", argoDocGroup, tp, p, err)
				}
			}
		}
		if len(restore) > 0 {
			if err := a.kafka.Commit(ctx, argoDocGroup, restore, "e2e"); err != nil {
				t.Errorf("restore %s's commits: %v", argoDocGroup, err)
			}
		}
	})
}

var (
	paymentsOnce sync.Once
	paymentsErr  error
)

// seedPayments creates and fills topic payments once for the whole run.
func seedPayments(ctx context.Context, f *flowEnv) error {
	paymentsOnce.Do(func() { paymentsErr = f.kafka.Seed(ctx, "payments", paymentsParts, paymentsPerPart, base, time.Second) })
	return paymentsErr
}
