package cli_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/exit"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// childOf waits for the launcher to make group's child request of
// parent, and returns its name (status.groups says it).
func childOf(t *testing.T, ns, parent, group string) string {
	t.Helper()
	name := ""
	eventually(t, 30*time.Second, "the child of "+group, func() error {
		var rr v1alpha1.ReplayRequest
		if err := k8s.Get(t.Context(), keyOf(ns, parent), &rr); err != nil {
			return err
		}
		for _, g := range rr.Status.Groups {
			if g.Group == group && g.Child != "" {
				name = g.Child
				return nil
			}
		}
		return errorf("no child of %s in %+v", group, rr.Status.Groups)
	})
	return name
}

// A request over three groups with the launcher running it, through the
// plugin: create --group three times --wait follows every group; the
// first applies, the second fails (its group is active), the third is
// not attempted (no --continue-on-error); --wait exits 1 with the
// parent's reason and prints a row per group; describe shows the rows;
// history lists the runs under the parent; plan says an Automatic
// parent has none.
func TestEnvtestParentFailedGroupStopsTheRest(t *testing.T) {
	env(t)
	ns := newNamespace(t)
	logs := testutil.NewRunnerLogs()
	startLauncher(t, ns, logs)
	servers := "kafka." + ns + ".svc:9092"

	var wg sync.WaitGroup
	var waited result
	wg.Add(1)
	go func() {
		defer wg.Done()
		waited = plugin(t, ns, operator, "create", "fan", "--bootstrap-servers", servers, "--group", "billing", "--group", "audit", "--group", "search",
			"--topic", "orders", "--to", "shift:-100", "--wait", "--timeout", "5m")
	}()
	runJob(t, logs, waitJob(t, ns, childOf(t, ns, "fan", "billing")), runResult("billing", report.ExitOK, 100, 300, 20))
	runJob(t, logs, waitJob(t, ns, childOf(t, ns, "fan", "audit")), runResult("audit", report.ExitGroupActive, 5))
	wg.Wait()
	wantCode(t, "create --wait of three groups, the second failing", waited, exit.Failed)
	contains(t, "its display and outcome", waited.out, "replayrequest.kafkareplay.dev/fan created", "3 groups: 1 Succeeded, 1 Failed, 1 NotAttempted")
	hasRow(t, "its groups", waited.out, "billing", childOf(t, ns, "fan", "billing"), "Succeeded", "Applied", "3", "420", "0")
	hasRow(t, "its groups", waited.out, "search", "-", "NotAttempted")
	contains(t, "its error", waited.errOut, "replayrequest fan failed: ")

	r := plugin(t, ns, viewer, "describe", "fan")
	wantCode(t, "describe", r, exit.OK)
	contains(t, "describe", r.out, "Groups:       3, listed (spec.groups)", "On error:     stop", "Phase:        Failed", "Groups (3 groups: 1 Succeeded, 1 Failed, 1 NotAttempted):")
	hasRow(t, "describe", r.out, "audit", childOf(t, ns, "fan", "audit"), "Failed", "GroupActive")

	r = plugin(t, ns, viewer, "history")
	wantCode(t, "history", r, exit.OK)
	contains(t, "history", r.out, "request/fan (2 groups):", "  request/"+childOf(t, ns, "fan", "billing"))

	r = plugin(t, ns, viewer, "plan", "fan")
	wantCode(t, "plan of an Automatic parent", r, exit.WrongState)
	contains(t, "plan of an Automatic parent", r.errOut, "fan has no plan")

	// Undo: the groups that applied are undone (billing), in one command.
	r = plugin(t, ns, operator, "undo", "fan", "-o", "yaml")
	wantCode(t, "undo -o yaml", r, exit.OK)
	if !strings.Contains(r.out, "undoOf: fan") || strings.Contains(r.out, "groups:") {
		t.Errorf("the undo of a parent:\n%s", r.out)
	}
}

// --continue-on-error: a failed group does not stop the others.
func TestEnvtestParentContinueOnError(t *testing.T) {
	env(t)
	ns := newNamespace(t)
	logs := testutil.NewRunnerLogs()
	startLauncher(t, ns, logs)
	servers := "kafka." + ns + ".svc:9092"

	r := plugin(t, ns, operator, "create", "fan", "--bootstrap-servers", servers, "--group", "billing", "--group", "audit", "--group", "search",
		"--to", "shift:-100", "--continue-on-error", "--parallelism", "2")
	wantCode(t, "create", r, exit.OK)
	rr := getRR(t, ns, "fan")
	if !rr.Spec.ContinueOnError || rr.Spec.Parallelism != 2 || len(rr.Spec.Groups) != 3 {
		t.Fatalf("spec %+v", rr.Spec)
	}
	runJob(t, logs, waitJob(t, ns, childOf(t, ns, "fan", "audit")), runResult("audit", report.ExitGroupActive, 5))
	runJob(t, logs, waitJob(t, ns, childOf(t, ns, "fan", "billing")), runResult("billing", report.ExitOK, 100))
	runJob(t, logs, waitJob(t, ns, childOf(t, ns, "fan", "search")), runResult("search", report.ExitOK, 10))
	waitPhase(t, ns, "fan", v1alpha1.PhaseFailed)
	r = plugin(t, ns, viewer, "describe", "fan")
	contains(t, "describe", r.out, "On error:     continue", "3 groups: 2 Succeeded, 1 Failed")
}

// A Manual request over two groups with the launcher running it: each
// group's request plans, the parent waits with one digest; plan shows it
// and each group's; approve --digest of a group's digest is refused;
// approve --wait approves the one plan and follows both groups to their
// end; undo --wait of the parent undoes both in one command; history
// lists the runs under the two parents.
func TestEnvtestParentManualApproveUndo(t *testing.T) {
	env(t)
	ns := newNamespace(t)
	logs := testutil.NewRunnerLogs()
	startLauncher(t, ns, logs)
	servers := "kafka." + ns + ".svc:9092"

	r := plugin(t, ns, operator, "create", "inc", "--bootstrap-servers", servers, "--group", "billing", "--group", "audit",
		"--topic", "orders", "--to", "shift:-100", "--approval", "Manual")
	wantCode(t, "create", r, exit.OK)
	plans := map[string]*report.Result{"billing": planResult("billing", 100, 300, 20), "audit": planResult("audit", 50)}
	children := map[string]string{}
	for _, g := range []string{"billing", "audit"} {
		children[g] = childOf(t, ns, "inc", g)
		runJob(t, logs, planJob(t, ns, children[g]), plans[g])
	}
	rr := waitPhase(t, ns, "inc", v1alpha1.PhaseAwaitingApproval)
	digest := rr.Status.Plan.Digest
	if !strings.HasPrefix(digest, "sha256:") {
		t.Fatalf("the parent's plan %+v", rr.Status.Plan)
	}

	r = plugin(t, ns, viewer, "plan", "inc")
	wantCode(t, "plan", r, exit.OK)
	contains(t, "plan", r.out, "Plan "+digest+" of "+ns+"/inc: 2 groups", "total 2 groups (2 planned), 4 partitions: 470 messages re-consumed, 0 skipped",
		"Largest moves across the groups:", "approve: kubectl replay approve inc -n "+ns)
	hasRow(t, "plan", r.out, "billing", children["billing"], plans["billing"].Plan, "3", "420", "0")
	hasRow(t, "plan", r.out, "audit", children["audit"], plans["audit"].Plan, "1", "50", "0")

	// A group's digest is not the parent's: nothing is approved.
	r = plugin(t, ns, operator, "approve", "inc", "--digest", plans["billing"].Plan)
	wantCode(t, "approve --digest of a group's plan", r, exit.WrongState)
	contains(t, "approve --digest of a group's plan", r.errOut, "is not a plan digest (sha256: and 64 lowercase hex digits", "nothing was approved")
	if getRR(t, ns, "inc").Annotations[v1alpha1.AnnotationApprove] != "" {
		t.Fatal("a refused approve annotated the parent")
	}

	var wg sync.WaitGroup
	var waited result
	wg.Add(1)
	go func() {
		defer wg.Done()
		waited = plugin(t, ns, operator, "approve", "inc", "--digest", digest, "--wait", "--timeout", "5m")
	}()
	applied := map[string]*report.Result{}
	for _, g := range []string{"billing", "audit"} {
		eventually(t, 30*time.Second, "the apply Job of "+g, func() error {
			if getRR(t, ns, children[g]).Status.JobName == "" {
				return errorf("no apply Job of %s yet", g)
			}
			return nil
		})
		applied[g] = appliedResult(plans[g])
		runJob(t, logs, waitJob(t, ns, children[g]), applied[g])
	}
	wg.Wait()
	wantCode(t, "approve --wait", waited, exit.OK)
	contains(t, "approve --wait", waited.out, "approved plan "+digest+" of "+ns+"/inc: 2 groups", "2 groups: 2 Succeeded", "succeeded ")

	r = plugin(t, ns, viewer, "describe", "inc")
	wantCode(t, "describe", r, exit.OK)
	contains(t, "describe", r.out, "Phase:        Succeeded", "Decision:     Approved by ", "plan "+digest)
	hasRow(t, "describe", r.out, "billing", children["billing"], "Succeeded")

	wg.Add(1)
	go func() {
		defer wg.Done()
		waited = plugin(t, ns, operator, "undo", "inc", "--wait", "--timeout", "5m")
	}()
	for _, g := range []string{"billing", "audit"} {
		runJob(t, logs, waitJob(t, ns, childOf(t, ns, "inc-undo", g)), undoResult(applied[g]))
	}
	wg.Wait()
	wantCode(t, "undo --wait", waited, exit.OK)
	contains(t, "undo --wait", waited.out, "replayrequest.kafkareplay.dev/inc-undo created (undoes inc)", "2 groups: 2 Succeeded")

	r = plugin(t, ns, viewer, "history")
	wantCode(t, "history", r, exit.OK)
	contains(t, "history", r.out, "request/inc (2 groups):", "request/inc-undo (2 groups):")
}

// create --max-total-messages-to-reconsume on an Automatic request over
// two groups, with the launcher running it: both groups plan first; plan
// shows their total against the guard; over it, the parent fails
// LimitExceeded with nothing applied, and --wait says so in the plugin's
// words.
func TestEnvtestParentTotalGuard(t *testing.T) {
	env(t)
	ns := newNamespace(t)
	logs := testutil.NewRunnerLogs()
	startLauncher(t, ns, logs)
	servers := "kafka." + ns + ".svc:9092"

	var wg sync.WaitGroup
	var waited result
	wg.Add(1)
	go func() {
		defer wg.Done()
		waited = plugin(t, ns, operator, "create", "capped", "--bootstrap-servers", servers, "--group", "billing", "--group", "audit",
			"--topic", "orders", "--to", "shift:-100", "--max-total-messages-to-reconsume", "400", "--wait", "--timeout", "5m")
	}()
	children := map[string]string{}
	plans := map[string]*report.Result{"billing": planResult("billing", 100, 300, 20), "audit": planResult("audit", 50)}
	for _, g := range []string{"billing", "audit"} {
		children[g] = childOf(t, ns, "capped", g)
		runJob(t, logs, planJob(t, ns, children[g]), plans[g])
	}
	wg.Wait()
	wantCode(t, "create --wait over the total guard", waited, exit.Failed)
	contains(t, "create --wait over the total guard", waited.errOut, "replayrequest capped failed: LimitExceeded: would re-consume 470 message(s), more than the 400 --max-total-messages-to-reconsume (spec.limits.maxTotalMessagesToReconsume) allows, over 2 group(s), largest first: billing 420, audit 50; nothing was applied")
	for g, c := range children {
		if rr := getRR(t, ns, c); rr.Status.JobName != "" || rr.Annotations[v1alpha1.AnnotationApprove] != "" {
			t.Errorf("%s applied: job %q, annotations %v", g, rr.Status.JobName, rr.Annotations)
		}
	}
	r := plugin(t, ns, viewer, "plan", "capped")
	wantCode(t, "plan", r, exit.OK)
	contains(t, "plan", r.out, "total guard 470 messages re-consumed over the groups, more than the 400 allowed")
}
