package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/runner/report"
	"github.com/kafka-replay/kafka-replay/test/cluster"
)

// The Argo Workflows path on Argo's real controller and executor
// (argo_setup_test.go): Workflows made from docs/argo-workflowtemplate.yaml,
// applied unchanged, as `argo submit --from workflowtemplate/kafka-replay`
// makes them; the committed offsets read back with the independent franz-go
// client after each.

var workflowGVK = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Workflow"}

// submit creates a Workflow from the kafka-replay WorkflowTemplate, as
// docs/usage.md's `argo -n argo submit --from workflowtemplate/kafka-replay
// --serviceaccount kafka-replay -p k=v ...` does, and returns when it was
// created.
// bootstrap-servers, runner-image and notify-image default to this cluster's.
func (a *argoEnv) submit(t *testing.T, ctx context.Context, name string, params map[string]string) time.Time {
	t.Helper()
	return a.submitEntrypoint(t, ctx, name, "", params)
}

// submitEntrypoint is submit with `argo submit --entrypoint` (none: the
// template's own).
func (a *argoEnv) submitEntrypoint(t *testing.T, ctx context.Context, name, entrypoint string, params map[string]string) time.Time {
	t.Helper()
	p := map[string]string{
		"bootstrap-servers": a.kafka.Bootstrap(),
		"runner-image":      cluster.RunnerImage,
		"notify-image":      argoShellImage,
		"topics":            topic,
		"wait-for-empty":    "0s",
	}
	for k, v := range params {
		p[k] = v
	}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var args []any
	for _, k := range keys {
		args = append(args, map[string]any{"name": k, "value": p[k]})
	}
	wf := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{
			"name": name, "namespace": argoNS,
			"labels": map[string]any{"workflows.argoproj.io/workflow-template": "kafka-replay"},
		},
		"spec": map[string]any{
			"workflowTemplateRef": map[string]any{"name": "kafka-replay"},
			"serviceAccountName":  a.sa,
			"arguments":           map[string]any{"parameters": args},
		},
	}}
	if entrypoint != "" {
		wf.Object["spec"].(map[string]any)["entrypoint"] = entrypoint
	}
	wf.SetGroupVersionKind(workflowGVK)
	t0 := time.Now()
	if err := a.cl.Create(ctx, wf); err != nil {
		t.Fatalf("create Workflow %s: %v", name, err)
	}
	return t0
}

// workflow is the part of a Workflow these tests read.
type workflow struct {
	UID    string `json:"-"`
	Status struct {
		Phase      string             `json:"phase"`
		Message    string             `json:"message"`
		StartedAt  time.Time          `json:"startedAt"`
		FinishedAt time.Time          `json:"finishedAt"`
		Nodes      map[string]*wfNode `json:"nodes"`
		Sync       *wfSynchronization `json:"synchronization"`
	} `json:"status"`
}

// wfNode is one node of status.nodes: a step, a Retry node or a Pod.
type wfNode struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	DisplayName  string    `json:"displayName"`
	Type         string    `json:"type"`
	TemplateName string    `json:"templateName"`
	Phase        string    `json:"phase"`
	Message      string    `json:"message"`
	Children     []string  `json:"children"`
	StartedAt    time.Time `json:"startedAt"`
	FinishedAt   time.Time `json:"finishedAt"`
	Inputs       *struct {
		Parameters []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"parameters"`
	} `json:"inputs"`
	Outputs *struct {
		ExitCode   *string `json:"exitCode"`
		Parameters []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"parameters"`
	} `json:"outputs"`
}

type wfSynchronization struct {
	Mutex *struct {
		Holding []struct {
			Mutex  string `json:"mutex"`
			Holder string `json:"holder"`
		} `json:"holding"`
		Waiting []struct {
			Mutex  string `json:"mutex"`
			Holder string `json:"holder"`
		} `json:"waiting"`
	} `json:"mutex"`
}

func (a *argoEnv) get(t *testing.T, ctx context.Context, name string) *workflow {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(workflowGVK)
	if err := a.cl.Get(ctx, client.ObjectKey{Namespace: argoNS, Name: name}, u); err != nil {
		t.Fatalf("get Workflow %s: %v", name, err)
	}
	b, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatalf("Workflow %s status: %v", name, err)
	}
	// A Workflow above Argo's size limit keeps its nodes gzip-compressed
	// and base64-encoded in status.compressedNodes instead.
	if c, _, _ := unstructured.NestedString(u.Object, "status", "compressedNodes"); c != "" && len(w.Status.Nodes) == 0 {
		if err := decompressNodes(c, &w.Status.Nodes); err != nil {
			t.Fatalf("Workflow %s: status.compressedNodes: %v", name, err)
		}
	}
	w.UID = string(u.GetUID())
	return &w
}

func decompressNodes(c string, into *map[string]*wfNode) error {
	b, err := base64.StdEncoding.DecodeString(c)
	if err != nil {
		return err
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return json.NewDecoder(zr).Decode(into)
}

// waitWorkflow polls the Workflow until cond holds; on timeout it fails
// with the Workflow and its pods.
func (a *argoEnv) waitWorkflow(t *testing.T, ctx context.Context, name, what string, cond func(*workflow) bool) *workflow {
	t.Helper()
	for {
		w := a.get(t, ctx, name)
		if cond(w) {
			return w
		}
		select {
		case <-ctx.Done():
			dctx := context.Background()
			out, _ := a.c.Kubectl(dctx, "-n", argoNS, "get", "workflow", name, "-o", "yaml")
			pods, _ := a.c.Kubectl(dctx, "-n", argoNS, "describe", "pods", "-l", "workflows.argoproj.io/workflow="+name)
			t.Fatalf("Workflow %s: %s: %v\n%s\n%s", name, what, ctx.Err(), out, pods)
		case <-a.exited:
			t.Fatalf("workflow-controller exited while waiting for Workflow %s: %s", name, what)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func finished(w *workflow) bool {
	switch w.Status.Phase {
	case "Succeeded", "Failed", "Error":
		return true
	}
	return false
}

// node is the Workflow's node with this display name; it fails if there is
// none or more than one.
func (w *workflow) node(t *testing.T, displayName string) *wfNode {
	t.Helper()
	var found *wfNode
	for _, n := range w.Status.Nodes {
		if n.DisplayName == displayName {
			if found != nil {
				t.Fatalf("two nodes named %s", displayName)
			}
			found = n
		}
	}
	if found == nil {
		t.Fatalf("no node %s in %v", displayName, w.nodeSummary())
	}
	return found
}

// attempts are the Pod nodes of the replay step's Retry node, in order.
func (w *workflow) attempts(t *testing.T) []*wfNode {
	t.Helper()
	r := w.node(t, "replay")
	if r.Type != "Retry" {
		t.Fatalf("replay node is %s, want Retry", r.Type)
	}
	var out []*wfNode
	for _, id := range r.Children {
		if n := w.Status.Nodes[id]; n != nil && n.Type == "Pod" {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name }) // replay(0), replay(1), ...
	return out
}

func (w *workflow) nodeSummary() string {
	var s []string
	for _, n := range w.Status.Nodes {
		s = append(s, fmt.Sprintf("%s(%s %s %s)", n.DisplayName, n.Type, n.Phase, n.Message))
	}
	sort.Strings(s)
	return strings.Join(s, " ")
}

func (n *wfNode) exitCode() string {
	if n.Outputs == nil || n.Outputs.ExitCode == nil {
		return ""
	}
	return *n.Outputs.ExitCode
}

// result is the node's output parameter `result`: the runner's JSON result.
func (n *wfNode) result(t *testing.T) *report.Result {
	t.Helper()
	if n.Outputs == nil {
		t.Fatalf("node %s has no outputs", n.Name)
	}
	for _, p := range n.Outputs.Parameters {
		if p.Name == "result" {
			r, err := report.Decode([]byte(p.Value))
			if err != nil {
				t.Fatalf("node %s: output parameter result is not the runner's result: %v\n%s", n.Name, err, p.Value)
			}
			return r
		}
	}
	t.Fatalf("node %s has no output parameter result: %+v", n.Name, n.Outputs)
	return nil
}

// checkBranch: exactly the branch step want ran after the replay step, with
// phase wantPhase; the other branches were skipped.
func (w *workflow) checkBranch(t *testing.T, want, wantPhase string) {
	t.Helper()
	for _, b := range []string{"applied", "invalid-input", "group-active", "refused", "failed"} {
		n := w.node(t, b)
		switch {
		case b == want && n.Phase != wantPhase:
			t.Errorf("branch %s: phase %s, want %s (%s)", b, n.Phase, wantPhase, n.Message)
		case b != want && n.Phase != "Skipped":
			t.Errorf("branch %s ran (phase %s); only %s should have", b, n.Phase, want)
		}
	}
}

func (a *argoEnv) checkOffsets(t *testing.T, ctx context.Context, group string, want int64) {
	t.Helper()
	got := a.committed(t, ctx, group)
	for p := int32(0); p < parts; p++ {
		if got[p] != want {
			t.Errorf("group %s partition %d at %d (independent client), want %d", group, p, got[p], want)
		}
	}
}

// checkResultMatchesKafka: every partition of the result is applied at want,
// and the independent client reads exactly that, committed with this
// workflow's run ID (its UID) in the metadata.
func (a *argoEnv) checkResultMatchesKafka(t *testing.T, ctx context.Context, w *workflow, res *report.Result, group string, want int64) {
	t.Helper()
	if len(res.Partitions) != parts || res.Totals.Applied != parts {
		t.Fatalf("result: %d partitions, %d applied, want %d: %+v", len(res.Partitions), res.Totals.Applied, parts, res)
	}
	if res.RunID != w.UID {
		t.Errorf("result run ID %q, want the workflow's UID %q", res.RunID, w.UID)
	}
	got, err := a.kafka.Committed(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Partitions {
		c := got[topic][p.Partition]
		if !p.Applied || p.NewOffset != want || c.Offset != want {
			t.Errorf("partition %d: result applied=%v newOffset %d, Kafka has %d, want %d", p.Partition, p.Applied, p.NewOffset, c.Offset, want)
		}
		if !strings.Contains(c.Metadata, w.UID) {
			t.Errorf("partition %d: commit metadata %q does not carry the run ID %s", p.Partition, c.Metadata, w.UID)
		}
	}
}

// Scenario 1: a dry run, then a real run, each a Workflow from the
// template; the replay step's output parameter `result` is the runner's JSON
// result, the applied branch runs, the Workflow succeeds.
func TestArgoDryRunThenApply(t *testing.T) {
	a := needArgo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const group = "svc-argo"
	a.commitAtEnd(t, ctx, group)

	for _, tc := range []struct {
		name   string
		dryRun bool
		want   int64 // committed offsets afterwards
	}{
		{"argo-dry-run", true, perPart},
		{"argo-apply", false, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := a.submit(t, ctx, tc.name, map[string]string{"group": group, "target": "offset:30", "dry-run": fmt.Sprint(tc.dryRun)})
			w := a.waitWorkflow(t, ctx, tc.name, "finish", finished)
			took := time.Since(t0)
			if w.Status.Phase != "Succeeded" {
				t.Fatalf("phase %s: %s; nodes: %s", w.Status.Phase, w.Status.Message, w.nodeSummary())
			}
			t.Logf("ARGO %s: Workflow created -> Succeeded in %s (Argo: started %s, finished %s)", tc.name,
				took.Round(10*time.Millisecond), w.Status.StartedAt.Format(time.RFC3339), w.Status.FinishedAt.Format(time.RFC3339))
			w.checkBranch(t, "applied", "Succeeded")
			att := w.attempts(t)
			if len(att) != 1 || att[0].exitCode() != "0" {
				t.Fatalf("replay attempts: %d, first exit code %q; want one, exit 0", len(att), att[0].exitCode())
			}
			br := w.node(t, "applied")
			t.Logf("%s: runner pod node %s -> %s, report pod node %s -> %s (Argo's times, to the second)", tc.name,
				att[0].StartedAt.Format(time.TimeOnly), att[0].FinishedAt.Format(time.TimeOnly), br.StartedAt.Format(time.TimeOnly), br.FinishedAt.Format(time.TimeOnly))
			res := w.node(t, "replay").result(t)
			t.Logf("%s: output parameter result: reason %s, exit %d, totals %+v", tc.name, res.Reason, res.ExitCode, res.Totals)
			if res.ExitCode != report.ExitOK || res.DryRun != tc.dryRun || res.Group != group || res.Error != "" {
				t.Fatalf("result: exit %d dryRun %v group %s error %q", res.ExitCode, res.DryRun, res.Group, res.Error)
			}
			if tc.dryRun {
				if res.Reason != report.ReasonDryRun || res.Totals.Applied != 0 {
					t.Errorf("dry run result: reason %s, %d applied", res.Reason, res.Totals.Applied)
				}
				for _, p := range res.Partitions {
					if p.NewOffset != 30 || p.PreviousOffset == nil || *p.PreviousOffset != perPart {
						t.Errorf("dry run plan for partition %d: %+v", p.Partition, p)
					}
				}
				a.checkOffsets(t, ctx, group, tc.want)
				return
			}
			if res.Reason != report.ReasonApplied {
				t.Errorf("reason %s, want %s", res.Reason, report.ReasonApplied)
			}
			a.checkResultMatchesKafka(t, ctx, w, res, group, tc.want)
			// The applied branch's report step prints its message and the
			// result it was handed: the same JSON.
			a.checkReport(t, ctx, w, "applied", "replay of "+group+" succeeded", res)
		})
	}
}

// checkReport reads the log of the branch step's pod: its message, then the
// result it was given, which must be the replay step's.
func (a *argoEnv) checkReport(t *testing.T, ctx context.Context, w *workflow, branch, message string, want *report.Result) {
	t.Helper()
	n := w.node(t, branch)
	var pods corev1.PodList
	if err := a.cl.List(ctx, &pods, client.InNamespace(argoNS)); err != nil {
		t.Fatal(err)
	}
	pod := ""
	for _, p := range pods.Items {
		if p.Annotations["workflows.argoproj.io/node-name"] == n.Name {
			pod = p.Name
		}
	}
	if pod == "" {
		t.Fatalf("no pod for node %s", n.Name)
	}
	logs, err := a.c.Kubectl(ctx, "-n", argoNS, "logs", pod, "-c", "main")
	if err != nil {
		t.Fatal(err)
	}
	// emissary logs into the same stream, concurrently with the script (its
	// lines carry argo=true): leave them out.
	var own []string
	for _, l := range strings.Split(logs, "\n") {
		if !strings.Contains(l, " argo=true") {
			own = append(own, l)
		}
	}
	_, printed, ok := strings.Cut(strings.Join(own, "\n"), message+"\n")
	if !ok {
		t.Fatalf("%s's log has no %q:\n%s", branch, message, logs)
	}
	var got report.Result
	err = json.NewDecoder(strings.NewReader(printed)).Decode(&got)
	if err != nil || got.Schema != report.Schema || got.RunID != want.RunID || got.Reason != want.Reason || got.ExitCode != want.ExitCode {
		t.Errorf("%s printed a result other than the replay step's (%v):\n%s", branch, err, printed)
	}
}

// Scenario 2: a target the runner refuses exits 2; the step is not retried
// (the retry expression leaves 2 out), the invalid-input branch runs and
// ends the Workflow Failed, and the group does not move.
func TestArgoInvalidTargetNotRetried(t *testing.T) {
	a := needArgo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	const group, name = "svc-argo-invalid", "argo-invalid-target"
	a.commitAtEnd(t, ctx, group)
	a.submit(t, ctx, name, map[string]string{"group": group, "target": "time:not-a-time"})
	w := a.waitWorkflow(t, ctx, name, "finish", finished)
	if w.Status.Phase != "Failed" {
		t.Errorf("phase %s, want Failed (the invalid-input branch exits with the runner's code)", w.Status.Phase)
	}
	w.checkBranch(t, "invalid-input", "Failed")
	att := w.attempts(t)
	want := fmt.Sprint(int(report.ExitInvalidInput))
	if len(att) != 1 || att[0].exitCode() != want {
		for _, n := range att {
			t.Logf("attempt %s: %s exit %s", n.Name, n.Phase, n.exitCode())
		}
		t.Fatalf("%d attempts, want exactly one, exit %s (not retried)", len(att), want)
	}
	res := att[0].result(t)
	if res.ExitCode != report.ExitInvalidInput || res.Reason != report.ReasonInvalidInput || res.Error == "" || res.Totals.Applied != 0 {
		t.Errorf("result: exit %d reason %s error %q applied %d", res.ExitCode, res.Reason, res.Error, res.Totals.Applied)
	}
	t.Logf("invalid target: one attempt, exit %s; result error: %s", att[0].exitCode(), res.Error)
	a.checkOffsets(t, ctx, group, perPart)
}

// flakyBootstrap stands in front of the first broker as the Workflow's
// bootstrap server, on the node IP inside the cluster's namespace. Every
// connection from the first client address it sees (the first attempt's
// pod) is reset at once: for that pod Kafka is unreachable. Connections from
// any other address (a retry runs in a new pod, with a new IP) are passed
// through; the brokers' own addresses, which metadata returns, are direct.
type flakyBootstrap struct {
	ln      net.Listener
	target  string
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	mu      sync.Mutex
	refused string         // the first client IP
	counts  map[string]int // connections per client IP
}

func newFlakyBootstrap(t *testing.T, a *argoEnv) *flakyBootstrap {
	t.Helper()
	ln, err := a.c.KafkaListen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	p := &flakyBootstrap{ln: ln, target: strings.Split(a.kafka.Bootstrap(), ",")[0], dial: a.c.KafkaDial, counts: map[string]int{}}
	go p.serve()
	t.Cleanup(func() { ln.Close() })
	return p
}

func (p *flakyBootstrap) serve() {
	for {
		conn, err := p.ln.Accept()
		if err != nil {
			return
		}
		ip, _, _ := net.SplitHostPort(conn.RemoteAddr().String())
		p.mu.Lock()
		if p.refused == "" {
			p.refused = ip
		}
		p.counts[ip]++
		refuse := ip == p.refused
		p.mu.Unlock()
		if refuse {
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // reset, not a clean close
			}
			conn.Close()
			continue
		}
		go p.pipe(conn)
	}
}

func (p *flakyBootstrap) pipe(in net.Conn) {
	defer in.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	out, err := p.dial(ctx, "tcp", p.target)
	cancel()
	if err != nil {
		return
	}
	defer out.Close()
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		done <- struct{}{}
	}
	go cp(out, in)
	go cp(in, out)
	<-done
}

func (p *flakyBootstrap) stats() (string, map[string]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := map[string]int{}
	for k, v := range p.counts {
		c[k] = v
	}
	return p.refused, c
}

// Scenario 3: Kafka is unreachable for the first attempt (its timeout runs
// out: exit 4, a Kafka error), reachable for the second; the step is retried
// once, the second attempt applies, one commit reaches Kafka, and the
// applied branch runs.
func TestArgoRetryAfterKafkaUnreachable(t *testing.T) {
	a := needArgo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const group, name = "svc-argo-retry", "argo-retry"
	a.commitAtEnd(t, ctx, group)
	proxy := newFlakyBootstrap(t, a)
	// From here on only the workflow's runners commit (the checks below
	// only read), so the brokers count its commits.
	a.kafka.ResetRequests()
	t0 := a.submit(t, ctx, name, map[string]string{
		"group": group, "target": "offset:20", "bootstrap-servers": proxy.ln.Addr().String(),
		// The first attempt gives up after this; the template's backoff
		// before the retry is 10s.
		"timeout": "15s",
	})
	w := a.waitWorkflow(t, ctx, name, "finish", finished)
	t.Logf("retry workflow: created -> %s in %s", w.Status.Phase, time.Since(t0).Round(10*time.Millisecond))
	refused, counts := proxy.stats()
	t.Logf("bootstrap proxy: connections reset from %s; connections by client: %v", refused, counts)
	if w.Status.Phase != "Succeeded" {
		t.Fatalf("phase %s: %s; nodes: %s", w.Status.Phase, w.Status.Message, w.nodeSummary())
	}
	att := w.attempts(t)
	if len(att) != 2 {
		t.Fatalf("%d attempts, want 2: %s", len(att), w.nodeSummary())
	}
	kafkaErr := fmt.Sprint(int(report.ExitKafkaError))
	if att[0].exitCode() != kafkaErr || att[1].exitCode() != "0" {
		t.Fatalf("attempt exit codes %q then %q, want %s then 0", att[0].exitCode(), att[1].exitCode(), kafkaErr)
	}
	first, second := att[0].result(t), att[1].result(t)
	if first.ExitCode != report.ExitKafkaError || first.Totals.Applied != 0 {
		t.Errorf("first attempt's result: exit %d, %d applied, want %d and none: %s", first.ExitCode, first.Totals.Applied, report.ExitKafkaError, first.Error)
	}
	if second.ExitCode != report.ExitOK || second.Reason != report.ReasonApplied || second.AlreadyApplied {
		t.Errorf("second attempt's result: exit %d reason %s alreadyApplied %v", second.ExitCode, second.Reason, second.AlreadyApplied)
	}
	if first.RunID != second.RunID {
		t.Errorf("the attempts have different run IDs %q and %q", first.RunID, second.RunID)
	}
	t.Logf("attempt 1: exit %d (%s); attempt 2: exit %d (%s)", first.ExitCode, first.Error, second.ExitCode, second.Reason)

	// The two attempts ran in different pods with different IPs, and only the
	// second one got through.
	var pods corev1.PodList
	if err := a.cl.List(ctx, &pods, client.InNamespace(argoNS), client.MatchingLabels{"workflows.argoproj.io/workflow": name}); err != nil {
		t.Fatal(err)
	}
	ips := map[string]string{}
	for _, p := range pods.Items {
		ips[p.Annotations["workflows.argoproj.io/node-name"]] = p.Status.PodIP
	}
	ip0, ip1 := ips[att[0].Name], ips[att[1].Name]
	if ip0 == "" || ip0 != refused || ip1 == ip0 || counts[ip1] == 0 {
		t.Errorf("attempt pods' IPs %q and %q; the proxy reset %q and passed %v", ip0, ip1, refused, counts)
	}
	// Applied once: one OffsetCommit reached the brokers in all.
	if n := a.kafka.Requests()["OffsetCommit"]; n != 1 {
		t.Errorf("%d OffsetCommit requests for the workflow, want 1 (requests: %s)", n, a.kafka.Requests())
	}
	w.checkBranch(t, "applied", "Succeeded")
	a.checkResultMatchesKafka(t, ctx, w, w.node(t, "replay").result(t), group, 20)
}

// Scenario 4: two Workflows for the same group at once. The template's
// workflow-level mutex, keyed by group, holds the second Pending (no pod)
// while the first runs (here the first waits for a live consumer to leave);
// the second runs only after the first has finished, and plans from the
// offsets the first committed.
func TestArgoMutexOneReplayPerGroup(t *testing.T) {
	a := needArgo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const group, first, second = "svc-argo-mutex", "argo-mutex-first", "argo-mutex-second"
	mutexKey := argoNS + "/Mutex/kafka-replay-" + group
	a.commitAtEnd(t, ctx, group)
	m, err := a.kafka.Join(ctx, group, "still-consuming", topic)
	if err != nil {
		t.Fatal(err)
	}
	left := false
	defer func() {
		if !left {
			m.Leave()
		}
	}()

	a.submit(t, ctx, first, map[string]string{"group": group, "target": "offset:10", "wait-for-empty": "5m"})
	// The first holds the mutex and its runner waits for the group to empty.
	a.waitWorkflow(t, ctx, first, "runner running, mutex held", func(w *workflow) bool {
		if w.Status.Sync == nil || w.Status.Sync.Mutex == nil || len(w.Status.Sync.Mutex.Holding) == 0 || w.Status.Sync.Mutex.Holding[0].Mutex != mutexKey {
			return false
		}
		for _, n := range w.Status.Nodes {
			if n.Type == "Pod" && n.TemplateName == "kafka-replay-runner" && n.Phase == "Running" {
				return true
			}
		}
		return false
	})
	// 10 -> 20 moves the group forward, once the first has run.
	a.submit(t, ctx, second, map[string]string{"group": group, "target": "offset:20", "allow-skip": "true"})
	w2 := a.waitWorkflow(t, ctx, second, "waiting for the mutex", func(w *workflow) bool {
		return w.Status.Sync != nil && w.Status.Sync.Mutex != nil && len(w.Status.Sync.Mutex.Waiting) > 0
	})
	t.Logf("second workflow: phase %q, %s; waiting on %+v", w2.Status.Phase, w2.Status.Message, w2.Status.Sync.Mutex.Waiting)
	if w2.Status.Sync.Mutex.Waiting[0].Mutex != mutexKey {
		t.Errorf("second waits on %q, want %q", w2.Status.Sync.Mutex.Waiting[0].Mutex, mutexKey)
	}
	noPods := func(when string) {
		var pods corev1.PodList
		if err := a.cl.List(ctx, &pods, client.InNamespace(argoNS), client.MatchingLabels{"workflows.argoproj.io/workflow": second}); err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) != 0 {
			t.Fatalf("%s: the second workflow has %d pods while the first holds the mutex", when, len(pods.Items))
		}
	}
	noPods("while waiting")
	// Still nothing has moved: the first waits for the consumer.
	a.checkOffsets(t, ctx, group, perPart)
	noPods("before the consumer leaves")

	m.Leave()
	left = true
	w1 := a.waitWorkflow(t, ctx, first, "finish", finished)
	if w1.Status.Phase != "Succeeded" {
		t.Fatalf("first: phase %s: %s", w1.Status.Phase, w1.Status.Message)
	}
	w2 = a.waitWorkflow(t, ctx, second, "finish", finished)
	if w2.Status.Phase != "Succeeded" {
		t.Fatalf("second: phase %s: %s; nodes: %s", w2.Status.Phase, w2.Status.Message, w2.nodeSummary())
	}
	r1, r2 := w1.node(t, "replay").result(t), w2.node(t, "replay").result(t)
	// The second planned after the first had committed: its previous offsets
	// are the first's new ones.
	for _, p := range r2.Partitions {
		if p.PreviousOffset == nil || *p.PreviousOffset != 10 || p.NewOffset != 20 {
			t.Errorf("second workflow, partition %d: previous %v new %d, want 10 -> 20", p.Partition, p.PreviousOffset, p.NewOffset)
		}
	}
	for _, p := range r1.Partitions {
		if p.PreviousOffset == nil || *p.PreviousOffset != perPart || p.NewOffset != 10 {
			t.Errorf("first workflow, partition %d: previous %v new %d, want %d -> 10", p.Partition, p.PreviousOffset, p.NewOffset, perPart)
		}
	}
	// And its runner started only after the first workflow had finished.
	replay2 := w2.attempts(t)[0]
	if replay2.StartedAt.Before(w1.Status.FinishedAt) {
		t.Errorf("second's runner started %s, before the first finished %s", replay2.StartedAt, w1.Status.FinishedAt)
	}
	t.Logf("first finished %s; second's runner started %s", w1.Status.FinishedAt.Format(time.RFC3339), replay2.StartedAt.Format(time.RFC3339))
	a.checkResultMatchesKafka(t, ctx, w2, r2, group, 20)
}
