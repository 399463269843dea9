package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// Plan, review, apply and undo through docs/argo-workflowtemplate.yaml on
// Argo's real controller: a dry run's `result` handed to a second Workflow
// as its plan parameter, a plan that went stale, an undo of an applied
// Workflow's result, and the review entrypoint suspended until resumed as
// `argo resume` does it. Offsets are read back with the independent franz-go
// client.

// planTopic is a topic of these scenarios' own, so that their groups can
// sit at offsets of their choosing without touching the other scenarios'.
const planTopic = "orders-argo-plans"

// inputFile is where the template's runner step finds its plan: or undo:
// file (the runner template's input artifact).
const inputFile = "/etc/kafka-replay/input/input.json"

var planTopicOnce sync.Once

func (a *argoEnv) seedPlanTopic(t *testing.T, ctx context.Context) {
	t.Helper()
	var err error
	planTopicOnce.Do(func() { err = a.kafka.Seed(ctx, planTopic, parts, perPart, base, time.Second) })
	if err != nil {
		t.Fatalf("seed %s: %v", planTopic, err)
	}
}

// commitPlanTopic commits offs for group on planTopic, as its consumers
// would, with metadata meta.
func (a *argoEnv) commitPlanTopic(t *testing.T, ctx context.Context, group string, offs map[int32]int64, meta string) {
	t.Helper()
	if err := a.kafka.Commit(ctx, group, kafkatest.Offsets{planTopic: offs}, meta); err != nil {
		t.Fatal(err)
	}
}

// checkPlanTopic: the independent client reads exactly want for group on
// planTopic; partitions in byRun carry that run ID in their commit metadata.
func (a *argoEnv) checkPlanTopic(t *testing.T, ctx context.Context, group string, want map[int32]int64, byRun string, runParts ...int32) {
	t.Helper()
	got, err := a.kafka.Committed(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < parts; p++ {
		if c := got[planTopic][p]; c.Offset != want[p] {
			t.Errorf("group %s %s/%d at %d (independent client), want %d", group, planTopic, p, c.Offset, want[p])
		}
	}
	for _, p := range runParts {
		if c := got[planTopic][p]; !strings.Contains(c.Metadata, byRun) {
			t.Errorf("group %s %s/%d: commit metadata %q does not carry the run ID %s", group, planTopic, p, c.Metadata, byRun)
		}
	}
}

// rawResult is the node's output parameter `result` exactly as Argo holds
// it: what a user copies into the next Workflow's plan or undo-of.
func (n *wfNode) rawResult(t *testing.T) string {
	t.Helper()
	if n.Outputs != nil {
		for _, p := range n.Outputs.Parameters {
			if p.Name == "result" {
				return p.Value
			}
		}
	}
	t.Fatalf("node %s has no output parameter result", n.Name)
	return ""
}

func (n *wfNode) input(name string) string {
	if n.Inputs != nil {
		for _, p := range n.Inputs.Parameters {
			if p.Name == name {
				return p.Value
			}
		}
	}
	return ""
}

// hasNode: a node with this display name exists.
func (w *workflow) hasNode(displayName string) bool {
	for _, n := range w.Status.Nodes {
		if n.DisplayName == displayName {
			return true
		}
	}
	return false
}

// runOK waits for the Workflow, wants it Succeeded through the applied
// branch with one attempt that exited 0, and returns its replay result.
func (a *argoEnv) runOK(t *testing.T, ctx context.Context, name string) (*workflow, *report.Result) {
	t.Helper()
	w := a.waitWorkflow(t, ctx, name, "finish", finished)
	if w.Status.Phase != "Succeeded" {
		t.Fatalf("%s: phase %s: %s; nodes: %s", name, w.Status.Phase, w.Status.Message, w.nodeSummary())
	}
	w.checkBranch(t, "applied", "Succeeded")
	if att := w.attempts(t); len(att) != 1 || att[0].exitCode() != "0" {
		t.Fatalf("%s: %d replay attempts, want one with exit 0: %s", name, len(att), w.nodeSummary())
	}
	return w, w.node(t, "replay").result(t)
}

func partitionsByNumber(t *testing.T, r *report.Result) map[int32]report.Partition {
	t.Helper()
	out := map[int32]report.Partition{}
	for _, p := range r.Partitions {
		if p.Topic != planTopic {
			t.Errorf("result partition %s/%d is not of %s", p.Topic, p.Partition, planTopic)
		}
		out[p.Partition] = p
	}
	return out
}

// Scenario 5: a dry run, then its result applied by a second Workflow as
// its plan parameter (exactly its partitions and offsets, one OffsetCommit),
// then that Workflow's result undone by a third as its undo-of parameter
// (the previous offsets back where the undo rules allow, a partition its
// consumers moved on since left alone with the reason).
func TestArgoPlanApplyThenUndo(t *testing.T) {
	a := needArgo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	a.seedPlanTopic(t, ctx)
	const group = "svc-argo-plan"
	before := map[int32]int64{0: 80, 1: 70, 2: 60}
	a.commitPlanTopic(t, ctx, group, before, "consumer")

	// The plan: partitions 0 and 1 only, 30 back each.
	a.submit(t, ctx, "argo-plan-dry-run", map[string]string{
		"group": group, "target": "shift:-30", "topics": planTopic + ":0,1", "dry-run": "true",
	})
	_, plan := a.runOK(t, ctx, "argo-plan-dry-run")
	if !plan.DryRun || plan.Reason != report.ReasonDryRun || plan.Plan == "" || plan.Target.Resolved != "shift:-30" {
		t.Fatalf("dry run result: dryRun %v reason %s plan %q resolved %q", plan.DryRun, plan.Reason, plan.Plan, plan.Target.Resolved)
	}
	pp := partitionsByNumber(t, plan)
	if len(pp) != 2 || pp[0].NewOffset != 50 || pp[1].NewOffset != 40 {
		t.Fatalf("dry run plan %+v, want partitions 0 and 1 at 50 and 40", plan.Partitions)
	}
	a.checkPlanTopic(t, ctx, group, before, "")
	planRaw := a.get(t, ctx, "argo-plan-dry-run").node(t, "replay").rawResult(t)
	t.Logf("plan %s: %d bytes of JSON, totals %+v", plan.Plan, len(planRaw), plan.Totals)

	// Apply it: only the brokers count from here on, and only the runner commits.
	a.kafka.ResetRequests()
	t0 := a.submit(t, ctx, "argo-plan-apply", map[string]string{"group": group, "plan": planRaw, "topics": ""})
	w, res := a.runOK(t, ctx, "argo-plan-apply")
	t.Logf("apply of the plan: created -> Succeeded in %s", time.Since(t0).Round(10*time.Millisecond))
	if n := a.kafka.Requests()["OffsetCommit"]; n != 1 {
		t.Errorf("%d OffsetCommit requests for the apply, want 1 (requests: %s)", n, a.kafka.Requests())
	}
	if res.Reason != report.ReasonApplied || res.DryRun || res.Plan != plan.Plan || res.RunID != w.UID ||
		res.Target.Given != "plan:"+inputFile || res.Target.Resolved != plan.Target.Resolved {
		t.Errorf("apply result: reason %s dryRun %v plan %q (want %q) run %q (want %q) target %+v",
			res.Reason, res.DryRun, res.Plan, plan.Plan, res.RunID, w.UID, res.Target)
	}
	rp := partitionsByNumber(t, res)
	if len(rp) != 2 || !rp[0].Applied || !rp[1].Applied || rp[0].NewOffset != 50 || rp[1].NewOffset != 40 {
		t.Errorf("apply result partitions %+v, want 0 and 1 applied at 50 and 40", res.Partitions)
	}
	// Exactly the plan: partition 2, outside it, keeps its consumers' commit.
	applied := map[int32]int64{0: 50, 1: 40, 2: 60}
	a.checkPlanTopic(t, ctx, group, applied, w.UID, 0, 1)
	if c, _ := a.kafka.Committed(ctx, group); c[planTopic][2].Metadata != "consumer" {
		t.Errorf("partition 2 (not in the plan) was committed: metadata %q", c[planTopic][2].Metadata)
	}
	a.checkReport(t, ctx, w, "applied", "replay of "+group+" succeeded", res)
	applyRaw := w.node(t, "replay").rawResult(t)

	// The consumers go on from 40 on partition 1, past its previous 70:
	// restoring 70 would make them handle 70..75 twice, so the undo leaves
	// it alone. Partition 0 has not moved since the replay: restored to 80.
	a.commitPlanTopic(t, ctx, group, map[int32]int64{1: 75}, "consumer")
	a.kafka.ResetRequests()
	a.submit(t, ctx, "argo-undo", map[string]string{"group": group, "undo-of": applyRaw, "topics": ""})
	wu, undo := a.runOK(t, ctx, "argo-undo")
	if n := a.kafka.Requests()["OffsetCommit"]; n != 1 {
		t.Errorf("%d OffsetCommit requests for the undo, want 1 (requests: %s)", n, a.kafka.Requests())
	}
	if undo.Reason != report.ReasonApplied || undo.Target.Given != "undo:"+inputFile || undo.Totals.LeftAlone != 1 {
		t.Errorf("undo result: reason %s target %+v leftAlone %d", undo.Reason, undo.Target, undo.Totals.LeftAlone)
	}
	up := partitionsByNumber(t, undo)
	if p := up[0]; !p.Applied || p.NewOffset != 80 || p.LeftAlone != "" {
		t.Errorf("undo of partition 0: %+v, want 80 restored", p)
	}
	if p := up[1]; p.Applied || p.LeftAlone == "" || p.NewOffset != 75 {
		t.Errorf("undo of partition 1: %+v, want left alone at 75 with the reason", p)
	}
	t.Logf("undo: partition 0 restored to %d; partition 1 left alone: %s", up[0].NewOffset, up[1].LeftAlone)
	a.checkPlanTopic(t, ctx, group, map[int32]int64{0: 80, 1: 75, 2: 60}, wu.UID, 0)

	// force=true restores partition 1 too (5 messages handled twice, as the
	// user asked); partition 0, already at its previous offset, stays there.
	a.kafka.ResetRequests()
	a.submit(t, ctx, "argo-undo-forced", map[string]string{"group": group, "undo-of": applyRaw, "topics": "", "force": "true"})
	wf, forced := a.runOK(t, ctx, "argo-undo-forced")
	fp := partitionsByNumber(t, forced)
	if p := fp[1]; !p.Applied || p.NewOffset != 70 || p.LeftAlone != "" {
		t.Errorf("forced undo of partition 1: %+v, want 70 restored", p)
	}
	if n := a.kafka.Requests()["OffsetCommit"]; n != 1 {
		t.Errorf("%d OffsetCommit requests for the forced undo, want 1", n)
	}
	t.Logf("forced undo: partition 0 at %d (%s); partition 1 restored to %d", fp[0].NewOffset, fp[0].LeftAlone, fp[1].NewOffset)
	a.checkPlanTopic(t, ctx, group, map[int32]int64{0: 80, 1: 70, 2: 60}, wf.UID, 1)
}

// Scenario 6: a relative plan (shift) applied after the group moved is
// stale: exit 7 PlanStale, one attempt (7 is not retried), the refused
// branch, nothing committed; the partition that moved says how. And a
// Workflow given both a target and a plan is refused before Kafka is read.
func TestArgoStalePlanRefused(t *testing.T) {
	a := needArgo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	a.seedPlanTopic(t, ctx)
	const group = "svc-argo-stale"
	a.commitPlanTopic(t, ctx, group, map[int32]int64{0: 80, 1: 70, 2: 60}, "consumer")

	a.submit(t, ctx, "argo-stale-dry-run", map[string]string{
		"group": group, "target": "shift:-30", "topics": planTopic, "dry-run": "true",
	})
	wd, plan := a.runOK(t, ctx, "argo-stale-dry-run")
	planRaw := wd.node(t, "replay").rawResult(t)
	if len(plan.Partitions) != parts {
		t.Fatalf("dry run planned %d partitions, want %d", len(plan.Partitions), parts)
	}

	// The consumers ran on partition 1 while the plan waited.
	moved := map[int32]int64{0: 80, 1: 72, 2: 60}
	a.commitPlanTopic(t, ctx, group, map[int32]int64{1: 72}, "consumer")
	a.kafka.ResetRequests()

	const name = "argo-stale-apply"
	a.submit(t, ctx, name, map[string]string{"group": group, "plan": planRaw, "topics": ""})
	w := a.waitWorkflow(t, ctx, name, "finish", finished)
	if w.Status.Phase != "Failed" {
		t.Errorf("phase %s, want Failed (the refused branch exits 7)", w.Status.Phase)
	}
	w.checkBranch(t, "refused", "Failed")
	att := w.attempts(t)
	refused := fmt.Sprint(int(report.ExitRefused))
	if len(att) != 1 || att[0].exitCode() != refused {
		t.Fatalf("%d attempts (first exit %q), want exactly one with exit %s (not retried)", len(att), att[0].exitCode(), refused)
	}
	res := att[0].result(t)
	if res.ExitCode != report.ExitRefused || res.Reason != report.ReasonPlanStale || res.Totals.Applied != 0 {
		t.Errorf("result: exit %d reason %s applied %d, want %d %s 0", res.ExitCode, res.Reason, res.Totals.Applied, report.ExitRefused, report.ReasonPlanStale)
	}
	rp := partitionsByNumber(t, res)
	if rp[1].Error == "" || rp[0].Error != "" || rp[2].Error != "" {
		t.Errorf("want an error on partition 1 only (the one that moved): %+v", res.Partitions)
	}
	t.Logf("stale plan: exit %d %s; partition 1: %s", res.ExitCode, res.Reason, rp[1].Error)
	if n := a.kafka.Requests()["OffsetCommit"]; n != 0 {
		t.Errorf("%d OffsetCommit requests for a stale plan, want none", n)
	}
	a.checkPlanTopic(t, ctx, group, moved, "")
	a.checkReport(t, ctx, w, "refused", "refused by a guard, nothing changed: the result's reason says which (WouldSkipMessages: set allow-skip=true if that is meant; LimitExceeded: raise max-messages-to-reconsume; PlanStale: plan again)", res)

	// A target beside the plan: which one was meant? Refused, exit 2.
	const both = "argo-plan-and-target"
	a.submit(t, ctx, both, map[string]string{"group": group, "plan": planRaw, "target": "shift:-1", "topics": ""})
	wb := a.waitWorkflow(t, ctx, both, "finish", finished)
	wb.checkBranch(t, "invalid-input", "Failed")
	rb := wb.node(t, "replay").result(t)
	if rb.ExitCode != report.ExitInvalidInput || !strings.Contains(rb.Error, "set exactly one of the workflow parameters target, plan and undo-of") {
		t.Errorf("target and plan: exit %d, error %q", rb.ExitCode, rb.Error)
	}
	t.Logf("target and plan together: exit %d: %s", rb.ExitCode, rb.Error)
	a.checkPlanTopic(t, ctx, group, moved, "")
}

// resume does what `argo resume NAME --node-field-selector
// inputs.parameters.digest.value=DIGEST` does (Argo's
// workflow/util.updateSuspendedNode): the active suspend nodes whose input
// digest is DIGEST are marked Succeeded, with a finish time and a message,
// and the Workflow is updated (Argo's Workflow has no status subresource).
// It returns how many nodes it resumed.
func (a *argoEnv) resume(t *testing.T, ctx context.Context, name, digest string) int {
	t.Helper()
	for {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(workflowGVK)
		if err := a.cl.Get(ctx, client.ObjectKey{Namespace: argoNS, Name: name}, u); err != nil {
			t.Fatal(err)
		}
		if c, _, _ := unstructured.NestedString(u.Object, "status", "compressedNodes"); c != "" {
			t.Fatal("the Workflow's nodes are compressed; this resume reads them plain")
		}
		nodes, _, _ := unstructured.NestedMap(u.Object, "status", "nodes")
		resumed := 0
		for id, v := range nodes {
			n := v.(map[string]any)
			b, _ := json.Marshal(n)
			var node wfNode
			if err := json.Unmarshal(b, &node); err != nil {
				t.Fatal(err)
			}
			if node.Type != "Suspend" || node.Phase != "Running" || node.input("digest") != digest {
				continue
			}
			n["phase"] = "Succeeded"
			n["finishedAt"] = time.Now().UTC().Format(time.RFC3339)
			n["message"] = "Resumed by: e2e"
			nodes[id] = n
			resumed++
		}
		if resumed == 0 {
			return 0
		}
		if err := unstructured.SetNestedMap(u.Object, nodes, "status", "nodes"); err != nil {
			t.Fatal(err)
		}
		err := a.cl.Update(ctx, u)
		if err == nil {
			return resumed
		}
		if !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
}

// Scenario 7: the review entrypoint plans, suspends with the plan's digest
// and totals on its approve step, commits nothing while suspended, and after
// the resume (selected by that digest) applies exactly that plan.
func TestArgoReviewThenResume(t *testing.T) {
	a := needArgo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	a.seedPlanTopic(t, ctx)
	const group, name = "svc-argo-review", "argo-review"
	before := map[int32]int64{0: 80, 1: 70, 2: 60}
	a.commitPlanTopic(t, ctx, group, before, "consumer")
	a.kafka.ResetRequests()

	t0 := a.submitEntrypoint(t, ctx, name, "review", map[string]string{"group": group, "target": "shift:-20", "topics": planTopic})
	w := a.waitWorkflow(t, ctx, name, "suspended for review", func(w *workflow) bool {
		for _, n := range w.Status.Nodes {
			if n.DisplayName == "approve" && n.Type == "Suspend" && n.Phase == "Running" {
				return true
			}
		}
		return finished(w)
	})
	if finished(w) {
		t.Fatalf("finished (%s) without waiting for review: %s", w.Status.Phase, w.nodeSummary())
	}
	t.Logf("review: created -> suspended for review in %s", time.Since(t0).Round(10*time.Millisecond))
	plan := w.node(t, "plan").result(t)
	approve := w.node(t, "approve")
	if !plan.DryRun || plan.Plan == "" || approve.input("digest") != plan.Plan {
		t.Fatalf("plan: dryRun %v digest %q; approve's digest input %q", plan.DryRun, plan.Plan, approve.input("digest"))
	}
	var totals report.Totals
	if err := json.Unmarshal([]byte(approve.input("totals")), &totals); err != nil || totals != plan.Totals || totals.MessagesToReconsume != 60 {
		t.Errorf("approve's totals input %q (%v), want the plan's %+v (60 to re-consume)", approve.input("totals"), err, plan.Totals)
	}
	// Suspended: no apply step yet, and nothing committed.
	if w.hasNode("replay") {
		t.Errorf("the replay step exists before the resume: %s", w.nodeSummary())
	}
	if n := a.kafka.Requests()["OffsetCommit"]; n != 0 {
		t.Errorf("%d OffsetCommit requests before the resume, want none", n)
	}
	a.checkPlanTopic(t, ctx, group, before, "")

	if n := a.resume(t, ctx, name, plan.Plan); n != 1 {
		t.Fatalf("resumed %d suspended nodes with digest %s, want 1", n, plan.Plan)
	}
	wf, res := a.runOK(t, ctx, name)
	if res.Reason != report.ReasonApplied || res.DryRun || res.Plan != plan.Plan || res.RunID != wf.UID || res.Target.Given != "plan:"+inputFile {
		t.Errorf("apply after review: reason %s dryRun %v plan %q (want %q) run %q target %+v", res.Reason, res.DryRun, res.Plan, plan.Plan, res.RunID, res.Target)
	}
	if n := a.kafka.Requests()["OffsetCommit"]; n != 1 {
		t.Errorf("%d OffsetCommit requests for the review workflow, want 1 (requests: %s)", n, a.kafka.Requests())
	}
	a.checkPlanTopic(t, ctx, group, map[int32]int64{0: 60, 1: 50, 2: 40}, wf.UID, 0, 1, 2)
	if m := wf.node(t, "approve").Message; m != "Resumed by: e2e" {
		t.Errorf("approve node message %q", m)
	}
}

// Scenario 8: a review rejected with `argo stop` (what it does: a merge
// patch of spec.shutdown=Stop) while suspended: the Workflow fails, the
// apply step never runs, nothing is committed.
func TestArgoReviewRejected(t *testing.T) {
	a := needArgo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	a.seedPlanTopic(t, ctx)
	const group, name = "svc-argo-reject", "argo-review-rejected"
	before := map[int32]int64{0: 80, 1: 70, 2: 60}
	a.commitPlanTopic(t, ctx, group, before, "consumer")
	a.kafka.ResetRequests()

	a.submitEntrypoint(t, ctx, name, "review", map[string]string{"group": group, "target": "shift:-20", "topics": planTopic})
	a.waitWorkflow(t, ctx, name, "suspended for review", func(w *workflow) bool {
		return w.hasNode("approve") && w.node(t, "approve").Phase == "Running"
	})
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(workflowGVK)
	u.SetNamespace(argoNS)
	u.SetName(name)
	if err := a.cl.Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"shutdown":"Stop"}}`))); err != nil {
		t.Fatal(err)
	}
	w := a.waitWorkflow(t, ctx, name, "finish", finished)
	t.Logf("rejected review: phase %s: %s; approve: %s %s", w.Status.Phase, w.Status.Message, w.node(t, "approve").Phase, w.node(t, "approve").Message)
	if w.Status.Phase != "Failed" {
		t.Errorf("phase %s, want Failed", w.Status.Phase)
	}
	if w.hasNode("replay") {
		t.Errorf("the apply step ran after a stop: %s", w.nodeSummary())
	}
	if n := a.kafka.Requests()["OffsetCommit"]; n != 0 {
		t.Errorf("%d OffsetCommit requests after a rejected review, want none", n)
	}
	a.checkPlanTopic(t, ctx, group, before, "")
}

// Scenario 9: how large a plan the plan parameter carries. A submitted
// parameter sits in the Workflow twice, uncompressed (spec.arguments and
// status.storedWorkflowTemplateSpec), and Argo's controller errors a
// Workflow above 1 MiB, yet runs the pod it made in the same pass: with a
// plan of 2,400 partitions the runner committed every partition while the
// Workflow could not record even its error. So the template bounds the file
// at 256 KiB: a plan of 1,000 partitions applies, one of 1,500 is refused
// with exit 2 before the runner reads anything, and nothing moves.
func TestArgoPlanParameterSize(t *testing.T) {
	a := needArgo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	const wide, group = "orders-argo-wide", "svc-argo-wide"
	const n = 1500
	if err := a.kafka.Seed(ctx, wide, n, 2, base, time.Second); err != nil {
		t.Fatalf("seed %s: %v", wide, err)
	}
	at := map[int32]int64{}
	for p := int32(0); p < n; p++ {
		at[p] = 2
	}
	if err := a.kafka.Commit(ctx, group, kafkatest.Offsets{wide: at}, "consumer"); err != nil {
		t.Fatal(err)
	}
	plan := func(name, topics string, n int) string {
		t.Helper()
		a.submit(t, ctx, name, map[string]string{"group": group, "target": "earliest", "topics": topics, "dry-run": "true"})
		w, res := a.runOK(t, ctx, name)
		if len(res.Partitions) != n {
			t.Fatalf("%s: %d partitions planned, want %d", name, len(res.Partitions), n)
		}
		raw := w.node(t, "replay").rawResult(t)
		t.Logf("%s: a plan of %d partitions is %d bytes of JSON (%d per partition)", name, n, len(raw), len(raw)/n)
		return raw
	}
	// At (want) or not: how many partitions of wide the group has elsewhere.
	elsewhere := func(want func(p int32) int64) int {
		t.Helper()
		got, err := a.kafka.Committed(ctx, group)
		if err != nil {
			t.Fatal(err)
		}
		bad := 0
		for p := int32(0); p < n; p++ {
			if got[wide][p].Offset != want(p) {
				bad++
			}
		}
		return bad
	}
	var first []string
	for p := 0; p < 1000; p++ {
		first = append(first, fmt.Sprint(p))
	}
	small := plan("argo-wide-plan", wide+":"+strings.Join(first, ","), 1000)
	large := plan("argo-wider-plan", wide, n)

	a.kafka.ResetRequests()
	t0 := a.submit(t, ctx, "argo-wide-apply", map[string]string{"group": group, "plan": small, "topics": ""})
	_, res := a.runOK(t, ctx, "argo-wide-apply")
	if res.Totals.Applied != 1000 {
		t.Errorf("applied %d of 1000 partitions", res.Totals.Applied)
	}
	if bad := elsewhere(func(p int32) int64 { return map[bool]int64{true: 0, false: 2}[p < 1000] }); bad != 0 {
		t.Errorf("%d partitions of %s not where the plan put them (0 for the first 1000, 2 for the rest)", bad, wide)
	}
	if c := a.kafka.Requests()["OffsetCommit"]; c != 1 {
		t.Errorf("%d OffsetCommit requests for the apply, want 1", c)
	}
	// How much room was left: the Workflow as Argo stored it.
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(workflowGVK)
	if err := a.cl.Get(ctx, client.ObjectKey{Namespace: argoNS, Name: "argo-wide-apply"}, u); err != nil {
		t.Fatal(err)
	}
	stored, _ := json.Marshal(u.Object)
	t.Logf("plan of 1,000 partitions as a parameter: applied in %s; the finished Workflow is %d bytes as stored (Argo's limit 1048576)",
		time.Since(t0).Round(10*time.Millisecond), len(stored))

	// Back where the large plan started, then the large plan: refused.
	if err := a.kafka.Commit(ctx, group, kafkatest.Offsets{wide: at}, "consumer"); err != nil {
		t.Fatal(err)
	}
	a.kafka.ResetRequests()
	const tooLarge = "argo-wider-apply"
	a.submit(t, ctx, tooLarge, map[string]string{"group": group, "plan": large, "topics": ""})
	wl := a.waitWorkflow(t, ctx, tooLarge, "finish", finished)
	wl.checkBranch(t, "invalid-input", "Failed")
	rl := wl.node(t, "replay").result(t)
	want := fmt.Sprintf("plan and undo-of take at most 262144 bytes (256 KiB, some 1000 partitions), this one has %d", len(large))
	if rl.ExitCode != report.ExitInvalidInput || !strings.Contains(rl.Error, want) {
		t.Errorf("a plan of %d bytes: exit %d, error %q; want exit 2 with %q", len(large), rl.ExitCode, rl.Error, want)
	}
	t.Logf("plan of 1,500 partitions as a parameter: %s: %s", wl.Status.Phase, rl.Error)
	if c := a.kafka.Requests()["OffsetCommit"]; c != 0 {
		t.Errorf("%d OffsetCommit requests for a refused plan, want none", c)
	}
	if bad := elsewhere(func(int32) int64 { return 2 }); bad != 0 {
		t.Errorf("%d partitions moved by a refused plan", bad)
	}
}

// Scenario 10: an undo reviewed before it runs: the review entrypoint with
// undo-of plans the undo (a dry run of undo:), waits, and once resumed
// applies exactly that plan, a plan relative to the offsets it started from.
func TestArgoReviewedUndo(t *testing.T) {
	a := needArgo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	a.seedPlanTopic(t, ctx)
	const group, name = "svc-argo-review-undo", "argo-review-undo"
	before := map[int32]int64{0: 80, 1: 70, 2: 60}
	a.commitPlanTopic(t, ctx, group, before, "consumer")

	a.submit(t, ctx, "argo-rewind", map[string]string{"group": group, "target": "shift:-10", "topics": planTopic})
	w, _ := a.runOK(t, ctx, "argo-rewind")
	rewound := w.node(t, "replay").rawResult(t)
	a.checkPlanTopic(t, ctx, group, map[int32]int64{0: 70, 1: 60, 2: 50}, w.UID, 0, 1, 2)

	a.kafka.ResetRequests()
	a.submitEntrypoint(t, ctx, name, "review", map[string]string{"group": group, "undo-of": rewound, "topics": ""})
	wr := a.waitWorkflow(t, ctx, name, "suspended for review", func(w *workflow) bool {
		return finished(w) || (w.hasNode("approve") && w.node(t, "approve").Phase == "Running")
	})
	if finished(wr) {
		t.Fatalf("finished (%s) without waiting for review: %s", wr.Status.Phase, wr.nodeSummary())
	}
	plan := wr.node(t, "plan").result(t)
	if !plan.DryRun || plan.Target.Given != "undo:"+inputFile || len(plan.Partitions) != parts {
		t.Fatalf("the undo's plan: dryRun %v target %+v, %d partitions", plan.DryRun, plan.Target, len(plan.Partitions))
	}
	for _, p := range plan.Partitions {
		if p.NewOffset != before[p.Partition] {
			t.Errorf("the undo's plan for partition %d: %d, want %d back", p.Partition, p.NewOffset, before[p.Partition])
		}
	}
	if n := a.kafka.Requests()["OffsetCommit"]; n != 0 {
		t.Errorf("%d OffsetCommit requests before the resume, want none", n)
	}
	a.checkPlanTopic(t, ctx, group, map[int32]int64{0: 70, 1: 60, 2: 50}, "")
	if n := a.resume(t, ctx, name, plan.Plan); n != 1 {
		t.Fatalf("resumed %d nodes, want 1", n)
	}
	wf, res := a.runOK(t, ctx, name)
	if res.Reason != report.ReasonApplied || res.Plan != plan.Plan || res.Target.Given != "plan:"+inputFile || res.Totals.Applied != parts {
		t.Errorf("reviewed undo: reason %s plan %q (want %q) target %+v applied %d", res.Reason, res.Plan, plan.Plan, res.Target, res.Totals.Applied)
	}
	t.Logf("reviewed undo: planned as %q (resolved %q), applied as %q", plan.Target.Given, plan.Target.Resolved, res.Target.Given)
	a.checkPlanTopic(t, ctx, group, before, wf.UID, 0, 1, 2)
}
