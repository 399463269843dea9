package cli_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/exit"
	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/render"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

func wantCode(t *testing.T, what string, r result, code exit.Code) {
	t.Helper()
	if r.code != code {
		t.Fatalf("%s: exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", what, r.code, code, r.out, r.errOut)
	}
}

func contains(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s does not contain %q:\n%s", what, sub, s)
		}
	}
}

// hasRow checks that a line of out has these cells, in order, side by
// side (whatever the padding).
func hasRow(t *testing.T, what, out string, cells ...string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		for i := 0; i+len(cells) <= len(f); i++ {
			if slices.Equal(f[i:i+len(cells)], cells) {
				return
			}
		}
	}
	t.Errorf("%s has no row %q:\n%s", what, cells, out)
}

// A request created and followed with --wait, the launcher running it: the
// plugin exits 0 once it succeeded, then describe shows every partition of
// the record with its bar, and history the run; a failed one exits 1;
// undo of each.
func TestEnvtestCreateWaitDescribeHistoryUndo(t *testing.T) {
	env(t)
	ns := newNamespace(t)
	logs := testutil.NewRunnerLogs()
	startLauncher(t, ns, logs)
	servers := "kafka." + ns + ".svc:9092"

	// -o yaml prints without creating.
	r := plugin(t, ns, operator, "create", "rewind", "--bootstrap-servers", servers, "--group", "orders", "--topic", "orders", "--to", "shift:-100", "-o", "yaml")
	wantCode(t, "create -o yaml", r, exit.OK)
	var printed v1alpha1.ReplayRequest
	if err := yaml.UnmarshalStrict([]byte(r.out), &printed); err != nil || printed.Spec.Target.ShiftBy == nil || *printed.Spec.Target.ShiftBy != -100 || printed.Namespace != ns {
		t.Fatalf("create -o yaml printed %v:\n%s", err, r.out)
	}
	var none v1alpha1.ReplayRequestList
	if err := k8s.List(context.Background(), &none, client.InNamespace(ns)); err != nil || len(none.Items) != 0 {
		t.Fatalf("-o yaml created something: %v %+v", err, none.Items)
	}

	// create --wait, while the test plays the runner.
	var wg sync.WaitGroup
	var waited result
	wg.Add(1)
	go func() {
		defer wg.Done()
		waited = plugin(t, ns, operator, "create", "rewind", "--bootstrap-servers", servers, "--group", "orders", "--topic", "orders", "--to", "shift:-100", "--wait")
	}()
	job := waitJob(t, ns, "rewind")
	runJob(t, logs, job, runResult("orders", report.ExitOK, 100, 300, 20))
	wg.Wait()
	wantCode(t, "create --wait", waited, exit.OK)
	contains(t, "create --wait", waited.out, "replayrequest.kafkareplay.dev/rewind created", "accepted", "apply", "succeeded Applied", "3 partitions, 420 messages re-consumed, 0 skipped")

	rr := getRR(t, ns, "rewind")
	if rr.Spec.Group != "orders" || *rr.Spec.Target.ShiftBy != -100 || rr.Spec.Topics[0].Name != "orders" {
		t.Errorf("created spec %+v", rr.Spec)
	}

	// describe: the record's partitions, each with its bar.
	r = plugin(t, ns, viewer, "describe", "rewind")
	wantCode(t, "describe", r, exit.OK)
	contains(t, "describe", r.out, "Phase:        Succeeded", "Outcome:      Applied", "Partitions (record "+job.Name+")")
	hasRow(t, "describe", r.out, "orders", "1", "1000", "700", "+300", "0..2000", "[..........<===o...............]")
	r = plugin(t, ns, viewer, "describe", "rewind", "-o", "json")
	wantCode(t, "describe -o json", r, exit.OK)
	var d render.Description
	if err := json.Unmarshal([]byte(r.out), &d); err != nil || d.Record != job.Name || len(d.Partitions) != 3 || d.Partitions[1].LogEndOffset != 2000 || d.Request.Name != "rewind" {
		t.Errorf("describe -o json: %v %+v", err, d)
	}

	// A failed run: exit 1, the reason said.
	wg.Add(1)
	go func() {
		defer wg.Done()
		waited = plugin(t, ns, operator, "create", "busy", "--bootstrap-servers", servers, "--group", "orders", "--to", "earliest", "--wait")
	}()
	job2 := waitJob(t, ns, "busy")
	runJob(t, logs, job2, runResult("orders", report.ExitGroupActive, 5))
	wg.Wait()
	wantCode(t, "create --wait of a failing request", waited, exit.Failed)
	contains(t, "its error", waited.errOut, "replayrequest busy failed: GroupActive")

	// history: both runs, newest first, whoever reads it.
	r = plugin(t, ns, viewer, "history", "--group", "orders")
	wantCode(t, "history", r, exit.OK)
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "request/busy") || !strings.Contains(lines[1], "Failed GroupActive") || !strings.Contains(lines[2], "request/rewind") || !strings.Contains(lines[2], "420") {
		t.Errorf("history:\n%s", r.out)
	}
	r = plugin(t, ns, viewer, "history", "--group", "orders", "-o", "json")
	var entries []render.HistoryEntry
	if err := json.Unmarshal([]byte(r.out), &entries); err != nil || len(entries) != 2 || entries[1].Reconsumed == nil || *entries[1].Reconsumed != 420 || entries[1].OffsetsChanged != "Yes" || entries[0].OffsetsChanged != "No" {
		t.Errorf("history -o json: %v %s", err, r.out)
	}
	if r := plugin(t, ns, viewer, "history", "--group", "another"); r.code != exit.OK || r.out != "no runs\n" || !strings.Contains(r.errOut, "searched namespace "+ns+"; -A searches every namespace") {
		t.Errorf("history of another group: %d %q %q", r.code, r.out, r.errOut)
	}

	// undo: of the failed one refused before anything is created, of a
	// missing one not found, of the succeeded one created.
	r = plugin(t, ns, operator, "undo", "busy")
	wantCode(t, "undo of a failed request", r, exit.WrongState)
	contains(t, "undo of a failed request", r.errOut, "busy did not succeed (GroupActive")
	wantCode(t, "undo of a missing request", plugin(t, ns, operator, "undo", "missing"), exit.NotFound)
	r = plugin(t, ns, operator, "undo", "rewind", "--force")
	wantCode(t, "undo", r, exit.OK)
	contains(t, "undo", r.out, "replayrequest.kafkareplay.dev/rewind-undo created (undoes rewind)")
	u := getRR(t, ns, "rewind-undo")
	if u.Spec.Target.UndoOf == nil || *u.Spec.Target.UndoOf != "rewind" || !u.Spec.Force || u.Spec.Group != "orders" || u.Spec.Kafka.BootstrapServers != servers {
		t.Errorf("undo request spec %+v", u.Spec)
	}
	r = plugin(t, ns, operator, "undo", "rewind")
	wantCode(t, "undo again (the name is taken)", r, exit.APIError)
	contains(t, "undo again", r.errOut, `replayrequest "rewind-undo" already exists`, "--name chooses another name")

	// A dry run: its plan is shown by plan, and it cannot be undone.
	wg.Add(1)
	go func() {
		defer wg.Done()
		waited = plugin(t, ns, operator, "create", "dry", "--bootstrap-servers", servers, "--group", "orders-dry", "--to", "shift:-100", "--dry-run", "--wait")
	}()
	dry := planResult("orders-dry", 100, 5)
	runJob(t, logs, waitJob(t, ns, "dry"), dry)
	wg.Wait()
	wantCode(t, "create --dry-run --wait", waited, exit.OK)
	contains(t, "create --dry-run --wait", waited.out, "dry run", "succeeded DryRun")
	r = plugin(t, ns, viewer, "plan", "dry")
	wantCode(t, "plan of a dry run", r, exit.OK)
	contains(t, "plan of a dry run", r.out, "Dry run "+ns+"/dry: group orders-dry, target shift:-100", "total 2 partitions: 105 messages re-consumed, 0 skipped")
	r = plugin(t, ns, operator, "undo", "dry")
	wantCode(t, "undo of a dry run", r, exit.WrongState)
	contains(t, "undo of a dry run", r.errOut, "dry was a dry run: it moved nothing")
}

// The errors: a missing request, no access (impersonated users with less
// RBAC), bad flags, a request with no plan.
func TestEnvtestErrors(t *testing.T) {
	env(t)
	ns := newNamespace(t)
	servers := "kafka." + ns + ".svc:9092"
	for _, verb := range [][]string{{"describe", "missing"}, {"plan", "missing"}, {"approve", "missing"}, {"reject", "missing", "--reason", "no"}, {"undo", "missing"}} {
		r := plugin(t, ns, viewer, verb...)
		wantCode(t, strings.Join(verb, " "), r, exit.NotFound)
		contains(t, strings.Join(verb, " "), r.errOut, `replayrequest "missing" not found in namespace "`+ns+`"`)
	}
	create := []string{"create", "r", "--bootstrap-servers", servers, "--group", "orders", "--to", "earliest"}
	r := plugin(t, ns, viewer, create...)
	wantCode(t, "create as a viewer", r, exit.Forbidden)
	contains(t, "create as a viewer", r.errOut, "forbidden", viewer)
	wantCode(t, "describe as nobody", plugin(t, ns, nobody, "describe", "r"), exit.Forbidden)
	wantCode(t, "history as nobody", plugin(t, ns, nobody, "history"), exit.Forbidden)

	// Usage errors exit 2 and never reach the API server (nobody may not
	// even read).
	for _, args := range [][]string{
		{"create", "r", "--group", "orders", "--to", "earliest"},
		{"create", "r", "--bootstrap-servers", servers, "--group", "orders", "--to", "latest"},
		{"create", "r", "--bootstrap-servers", servers, "--group", "orders", "--to", "earliest", "-o", "wide"},
		{"create", "r", "s", "--bootstrap-servers", servers},
		{"create", "r", "--no-such-flag"},
		{"create", "r", "--bootstrap-servers", servers, "--bootstrap-server", servers, "--group", "orders", "--to", "earliest"},
		{"create", "r", "--bootstrap-servers", servers, "--group", "orders", "--to", "earliest", "-o", "yaml", "--wait"},
		{"reject", "r"},
		{"history", "extra"},
		{"rewind"},
	} {
		r := plugin(t, ns, nobody, args...)
		wantCode(t, strings.Join(args, " "), r, exit.Usage)
		if strings.Contains(r.errOut, "forbidden") {
			t.Errorf("%v reached the API server: %s", args, r.errOut)
		}
	}

	wantCode(t, "create", plugin(t, ns, operator, create...), exit.OK)
	r = plugin(t, ns, operator, "plan", "r")
	wantCode(t, "plan of an Automatic request", r, exit.WrongState)
	contains(t, "plan of an Automatic request", r.errOut, "r has no plan: it is neither --approval Manual nor a dry run")
	r = plugin(t, ns, operator, "approve", "r")
	wantCode(t, "approve of an Automatic request", r, exit.WrongState)
	contains(t, "approve of an Automatic request", r.errOut, "cannot approve r: it is not a request with --approval Manual")
	if an := getRR(t, ns, "r").Annotations; an[v1alpha1.AnnotationApprove] != "" {
		t.Errorf("a refused approve annotated the request: %v", an)
	}
}

// planRecord is the planning Job's record the launcher writes, with four
// partitions.
func planRecord(ns, name string) *v1alpha1.ReplayRecord {
	return &v1alpha1.ReplayRecord{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{v1alpha1.LabelRunner: "true", v1alpha1.LabelGroup: "orders", v1alpha1.LabelStage: "plan"}},
		Job:        name, Request: "manual", Group: "orders", Target: "time:2026-03-01T08:30:00Z", DryRun: true, Complete: true,
		Outcome: v1alpha1.RecordOutcome{Succeeded: true, Reason: "DryRun", OffsetsChanged: v1alpha1.OffsetsChangedNo, Attempts: 1},
		Totals:  v1alpha1.ResultTotals{Partitions: 4, MessagesToReconsume: 650, MessagesSkipped: 0},
		Topics: []v1alpha1.RecordTopic{
			{Name: "orders", Partitions: []int32{0, 1, 2}, PreviousOffsets: []int64{1000, 1000, -1}, NewOffsets: []int64{900, 500, 40}, LogStartOffsets: []int64{0, 0, 0}, LogEndOffsets: []int64{2000, 2000, 2000}},
			{Name: "payments", Partitions: []int32{0}, PreviousOffsets: []int64{300}, NewOffsets: []int64{250}, LogStartOffsets: []int64{0}, LogEndOffsets: []int64{400}},
		},
	}
}

// awaitApproval writes what the launcher writes once the plan is ready.
func awaitApproval(t *testing.T, ns, name, digest, job string) {
	t.Helper()
	ctx := context.Background()
	eventually(t, 10*time.Second, "status of "+name, func() error {
		rr := getRR(t, ns, name)
		planned := metav1.NewTime(time.Date(2026, 3, 1, 9, 30, 10, 0, time.UTC))
		expires := metav1.NewTime(planned.Add(24 * time.Hour))
		rr.Status.Phase = v1alpha1.PhaseAwaitingApproval
		rr.Status.Plan = &v1alpha1.PlanSummary{Digest: digest, JobName: job, Target: "time:2026-03-01T08:30:00Z", PlannedAt: &planned, ExpiresAt: &expires,
			Totals: v1alpha1.ResultTotals{Partitions: 4, MessagesToReconsume: 650}}
		meta.SetStatusCondition(&rr.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionAwaitingApproval, Status: metav1.ConditionTrue, Reason: "PlanReady", Message: "approve with kubectl annotate"})
		return k8s.Status().Update(ctx, rr)
	})
}

// plan, approve and reject of a Manual request, the launcher's part (the
// planning Job's record and status.plan) played by the test in a namespace
// no launcher watches: the plan from the record, sorted, as a golden file;
// approve fills in the digest, only with the right to, only the digest
// shown; reject needs a reason.
func TestEnvtestPlanApproveReject(t *testing.T) {
	env(t)
	ns := newNamespace(t)
	ctx := context.Background()
	servers := "kafka." + ns + ".svc:9092"
	for _, name := range []string{"manual", "other"} {
		wantCode(t, "create "+name, plugin(t, ns, operator, "create", name, "--bootstrap-servers", servers, "--group", "orders", "--to", "ago:1h", "--approval", "Manual"), exit.OK)
	}
	r := plugin(t, ns, operator, "plan", "manual")
	wantCode(t, "plan before the plan is ready", r, exit.WrongState)
	contains(t, "plan before the plan is ready", r.errOut, "manual has no plan yet (phase Pending)")
	r = plugin(t, ns, operator, "approve", "manual")
	wantCode(t, "approve before the plan is ready", r, exit.WrongState)
	contains(t, "approve before the plan is ready", r.errOut, "not awaiting approval (phase Pending); its plan is not ready yet")

	const digest = "0123456789abcdef"
	awaitApproval(t, ns, "manual", digest, "manual-plan")
	r = plugin(t, ns, operator, "plan", "manual")
	wantCode(t, "plan without its record", r, exit.NotFound)
	contains(t, "plan without its record", r.errOut, `replayrecord (the plan's) "manual-plan" not found`)
	if err := k8s.Create(ctx, planRecord(ns, "manual-plan")); err != nil {
		t.Fatal(err)
	}
	r = plugin(t, ns, viewer, "plan", "manual")
	wantCode(t, "plan", r, exit.OK)
	golden(t, "plan-envtest.golden", strings.ReplaceAll(r.out, ns, "NAMESPACE"))
	r = plugin(t, ns, viewer, "plan", "manual", "-o", "json")
	var pl struct {
		Digest     string           `json:"digest"`
		Partitions []render.PlanRow `json:"partitions"`
		Totals     render.PlanTotals
	}
	if err := json.Unmarshal([]byte(r.out), &pl); err != nil || pl.Digest != digest || len(pl.Partitions) != 4 || pl.Partitions[0].Partition != 1 || *pl.Partitions[0].Delta != 500 || pl.Totals.MessagesToReconsume != 650 {
		t.Errorf("plan -o json: %v %+v", err, pl)
	}

	// No access: a viewer may read the plan but not approve it.
	r = plugin(t, ns, viewer, "approve", "manual")
	wantCode(t, "approve as a viewer", r, exit.Forbidden)
	contains(t, "approve as a viewer", r.errOut, "forbidden")
	// Another digest than the plan's: nothing is set.
	r = plugin(t, ns, operator, "approve", "manual", "--digest", "ffffffffffffffff")
	wantCode(t, "approve of another digest", r, exit.WrongState)
	contains(t, "approve of another digest", r.errOut, "--digest ffffffffffffffff is not the digest of manual's plan, which is "+digest)
	if an := getRR(t, ns, "manual").Annotations; an[v1alpha1.AnnotationApprove] != "" {
		t.Fatalf("refused approvals annotated the request: %v", an)
	}
	r = plugin(t, ns, operator, "approve", "manual", "--digest", digest)
	wantCode(t, "approve", r, exit.OK)
	contains(t, "approve", r.out, "approved plan "+digest+" of "+ns+"/manual: 4 partitions, 650 messages re-consumed, 0 skipped")
	hasRow(t, "approve", r.out, "orders", "1", "1000", "500", "+500")
	if got := getRR(t, ns, "manual").Annotations[v1alpha1.AnnotationApprove]; got != digest {
		t.Errorf("kafkareplay.dev/approve = %q, want %q", got, digest)
	}

	// reject: the reason is required and kept.
	awaitApproval(t, ns, "other", "fedcba9876543210", "manual-plan")
	wantCode(t, "reject without a reason", plugin(t, ns, operator, "reject", "other", "--reason", " "), exit.Usage)
	wantCode(t, "reject as a viewer", plugin(t, ns, viewer, "reject", "other", "--reason", "no"), exit.Forbidden)
	r = plugin(t, ns, operator, "reject", "other", "--reason", "re-consumes the weekend")
	wantCode(t, "reject", r, exit.OK)
	contains(t, "reject", r.out, "rejected plan fedcba9876543210 of "+ns+"/other: re-consumes the weekend")
	if got := getRR(t, ns, "other").Annotations[v1alpha1.AnnotationReject]; got != "re-consumes the weekend" {
		t.Errorf("kafkareplay.dev/reject = %q", got)
	}

	// Once decided, neither verb applies.
	eventually(t, 10*time.Second, "decided", func() error {
		rr := getRR(t, ns, "other")
		rr.Status.Phase = v1alpha1.PhaseFailed
		rr.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalRejected, By: operator, Reason: "re-consumes the weekend"}
		return k8s.Status().Update(ctx, rr)
	})
	r = plugin(t, ns, operator, "approve", "other")
	wantCode(t, "approve of a rejected plan", r, exit.WrongState)
	contains(t, "approve of a rejected plan", r.errOut, "its plan was already rejected by "+operator)
}
