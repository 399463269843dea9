package launcher_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kafka-replay/kafka-replay/runner/report"
	"github.com/kafka-replay/kafka-replay/test/gitops"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// healthChecks reads the health checks the chart ships.
type healthChecks struct {
	lua  string
	flux gitops.FluxCheck
}

func loadHealthChecks(t *testing.T) healthChecks {
	t.Helper()
	script, err := os.ReadFile(filepath.Join(gitops.RepoRoot(), gitops.LuaFile))
	if err != nil {
		t.Fatal(err)
	}
	checks, err := gitops.LoadFluxChecks(filepath.Join(gitops.RepoRoot(), gitops.FluxFile))
	if err != nil || len(checks) != 1 {
		t.Fatalf("flux checks %+v: %v", checks, err)
	}
	return healthChecks{lua: string(script), flux: checks[0]}
}

// read gets a request as Argo CD and Flux get it: the API server's JSON,
// unstructured (no status at all before the launcher writes one).
func (h healthChecks) read(t *testing.T, rr *v1alpha1.ReplayRequest) map[string]any {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("ReplayRequest"))
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(rr), u); err != nil {
		t.Fatal(err)
	}
	return u.Object
}

// judge runs both checks on obj and says how they differ from the wanted
// Argo CD status (its message containing msg) and Flux result.
func (h healthChecks) judge(obj map[string]any, argo, msg, flux string) error {
	got, err := gitops.ArgoHealth(h.lua, obj)
	if err != nil {
		return fmt.Errorf("argo: %w", err)
	}
	fluxGot, err := gitops.FluxHealth(h.flux, obj)
	if err != nil {
		return fmt.Errorf("flux: %w", err)
	}
	if got.Status != argo || !strings.Contains(got.Message, msg) || fluxGot != flux {
		return fmt.Errorf("argo %+v, flux %s; want argo %s ~%q, flux %s; status %v", got, fluxGot, argo, msg, flux, obj["status"])
	}
	return nil
}

// expect waits until both checks say what is wanted of rr (the launcher
// writes status asynchronously; a state that never comes fails the test).
func (h healthChecks) expect(t *testing.T, rr *v1alpha1.ReplayRequest, argo, msg, flux string) {
	t.Helper()
	eventually(t, 30*time.Second, fmt.Sprintf("%s: argo %s, flux %s", rr.Name, argo, flux), func() error {
		return h.judge(h.read(t, rr), argo, msg, flux)
	})
}

// The chart's Argo CD and Flux health checks on real requests that the
// launcher drives through each state: not yet seen, waiting for the group,
// running, succeeded, a dry run, failed by the runner, both deleted and
// re-created (AlreadyRan), refused at acceptance, and a success whose consumers cannot be restored yet (the
// API server refuses scale changes), which is only Healthy once they are.
func TestEnvtestGitOpsHealth(t *testing.T) {
	env(t)
	h := loadHealthChecks(t)
	ctx := context.Background()
	ns := newNamespace(t, nil)
	if err := k8s.Patch(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"metadata":{"labels":{"consumers-test":%q}}}`, ns))); err != nil {
		t.Fatal(err)
	}

	// Created while no launcher runs: exactly what a sync sees first.
	first := testutil.MakeRequest(ns, "first").Group("g").Obj()
	create(t, first)
	unseen := h.read(t, first)
	if _, ok := unseen["status"]; ok {
		t.Fatalf("a request no launcher has seen has a status: %v", unseen["status"])
	}
	if err := h.judge(unseen, gitops.Progressing, "waiting for the kafka-replay launcher", gitops.InProgress); err != nil {
		t.Fatal(err)
	}

	startLauncher(t, testOptions(), 2)
	job := waitJob(t, first)
	h.expect(t, first, gitops.Progressing, job.Name, gitops.InProgress)

	second := testutil.MakeRequest(ns, "second").Group("g").Obj()
	create(t, second)
	expectWaiting(t, second)
	h.expect(t, second, gitops.Progressing, state.ReasonWaitingForGroup+": ", gitops.InProgress)

	res := testutil.Result("g", report.ExitOK, 10, 20)
	runPod(t, job, 0, 0, testutil.Compact(res))
	finishJob(t, job, "")
	waitPhase(t, first, v1alpha1.PhaseSucceeded)
	h.expect(t, first, gitops.Healthy, "Applied: 2 partitions moved", gitops.Current)

	job2 := waitJob(t, second)
	runPod(t, job2, 0, int32(report.ExitGroupActive), testutil.Compact(testutil.Result("g", report.ExitGroupActive, 1)))
	finishJob(t, job2, batchv1.JobReasonPodFailurePolicy)
	waitPhase(t, second, v1alpha1.PhaseFailed)
	h.expect(t, second, gitops.Degraded, "GroupActive: ", gitops.Failed)

	dry := testutil.MakeRequest(ns, "dry").Group("g-dry").DryRun().Obj()
	create(t, dry)
	dryJob := waitJob(t, dry)
	plan := testutil.Result("g-dry", report.ExitOK, 5)
	plan.DryRun, plan.Reason = true, report.ReasonDryRun
	for i := range plan.Partitions {
		plan.Partitions[i].Applied = false
	}
	plan.Summarize()
	runPod(t, dryJob, 0, 0, testutil.Compact(plan))
	finishJob(t, dryJob, "")
	waitPhase(t, dry, v1alpha1.PhaseSucceeded)
	h.expect(t, dry, gitops.Healthy, "DryRun: dry run", gitops.Current)

	// A prune and a re-sync: the same request deleted and created again is
	// AlreadyRan, Healthy or Degraded as its earlier run was, with no Job.
	for _, c := range []struct {
		rr         *v1alpha1.ReplayRequest
		argo, flux string
	}{{first, gitops.Healthy, gitops.Current}, {second, gitops.Degraded, gitops.Failed}} {
		if err := k8s.Delete(ctx, c.rr); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, c.rr.Name+" gone", func() error {
			switch err := k8s.Get(ctx, client.ObjectKeyFromObject(c.rr), &v1alpha1.ReplayRequest{}); {
			case err == nil:
				return errors.New("still there")
			case !apierrors.IsNotFound(err):
				return fmt.Errorf("get: %w", err)
			}
			return nil
		})
		again := testutil.MakeRequest(ns, c.rr.Name).Group("g").Obj()
		create(t, again)
		h.expect(t, again, c.argo, state.ReasonAlreadyRan+": ", c.flux)
		if n := len(jobsOf(t, ns, map[string]string{v1alpha1.LabelRequest: c.rr.Name})); n != 1 {
			t.Fatalf("%s re-created: %d Jobs, want the earlier one only", c.rr.Name, n)
		}
	}

	refused := testutil.MakeRequest(ns, "refused").Group("g-refused").Ago(1_000_000 * time.Hour).Obj()
	create(t, refused)
	waitPhase(t, refused, v1alpha1.PhaseFailed)
	h.expect(t, refused, gitops.Degraded, state.ReasonInvalidTarget+": ", gitops.Failed)

	// Consumers: Succeeded comes before the restore; until the consumer is
	// back the request is still in progress for both.
	dep := makeDeployment(t, ns, "consumer", 2, nil)
	paused := consumerRequest(ns, "paused", "g-consumers", deploymentRef("consumer"))
	create(t, paused)
	_, pausedJob := waitPaused(t, paused)
	h.expect(t, paused, gitops.Progressing, pausedJob.Name, gitops.InProgress)
	deny := denyScaleChanges(t, ns)
	runPod(t, pausedJob, 0, 0, testutil.Compact(testutil.Result("g-consumers", report.ExitOK, 10)))
	finishJob(t, pausedJob, "")
	eventually(t, 30*time.Second, "restore refused", func() error {
		cur := getRR(t, paused)
		if c := condition(cur, v1alpha1.ConditionConsumersRestored); c == nil || c.Reason != state.ReasonRestoreFailed || cur.Status.Phase != v1alpha1.PhaseSucceeded {
			return fmt.Errorf("phase %s, ConsumersRestored %+v", cur.Status.Phase, c)
		}
		return nil
	})
	h.expect(t, paused, gitops.Progressing, "Applied: 1 partitions moved, 10 messages will be consumed again, 0 skipped; restoring the consumers (RestoreFailed: ", gitops.InProgress)
	deny()
	touch(t, paused)
	waitRestored(t, paused, state.ReasonRestored)
	waitReplicas(t, dep, 2)
	h.expect(t, paused, gitops.Healthy, "Applied: ", gitops.Current)
}

// The request docs/gitops.md shows is one the API server admits.
func TestEnvtestGitOpsDocsRequestIsValid(t *testing.T) {
	env(t)
	blocks, err := gitops.YAMLBlocks(filepath.Join(gitops.RepoRoot(), "docs", "gitops.md"))
	if err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t, nil)
	n := 0
	for _, b := range blocks {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(b), &u.Object); err != nil {
			t.Fatal(err)
		}
		if u.GetKind() != "ReplayRequest" {
			continue
		}
		n++
		u.SetNamespace(ns)
		if err := k8s.Create(context.Background(), u, client.DryRunAll); err != nil {
			t.Errorf("docs/gitops.md's %s: %v", u.GetName(), err)
		}
	}
	if n == 0 {
		t.Fatal("docs/gitops.md shows no ReplayRequest")
	}
}

// approval: Manual through both checks: planning, awaiting approval (the
// message is the approve command), approved and applied (Healthy), and a
// rejected one (Degraded).
func TestEnvtestGitOpsHealthApproval(t *testing.T) {
	e := newApprovalEnv(t)
	h := loadHealthChecks(t)

	rr := manualRequest(e.ns, "manual", "g-approved").Obj()
	create(t, rr)
	planJob := planJobOf(t, rr)
	h.expect(t, rr, gitops.Progressing, planJob.Name, gitops.InProgress)
	plan := planOf("g-approved")
	e.playPlan(t, planJob, plan)
	awaiting(t, rr)
	h.expect(t, rr, gitops.Progressing, state.ReasonPlanReady+": ", gitops.InProgress)
	h.expect(t, rr, gitops.Progressing, "kafkareplay.dev/approve="+plan.Plan, gitops.InProgress)

	annotate(t, rr, v1alpha1.AnnotationApprove, plan.Plan, v1alpha1.AnnotationApprovedBy, "bob")
	job := waitJob(t, rr)
	h.expect(t, rr, gitops.Progressing, job.Name, gitops.InProgress)
	attempt(t, e.logs, job, job.Name+"-0", 0, appliedOf(plan), time.Now())
	finishJob(t, job, "")
	waitPhase(t, rr, v1alpha1.PhaseSucceeded)
	h.expect(t, rr, gitops.Healthy, "Applied: 3 partitions moved", gitops.Current)

	rejected := manualRequest(e.ns, "rejected", "g-rejected").Obj()
	create(t, rejected)
	e.playPlan(t, planJobOf(t, rejected), planOf("g-rejected"))
	awaiting(t, rejected)
	annotate(t, rejected, v1alpha1.AnnotationReject, "the wrong topic", v1alpha1.AnnotationApprovedBy, "carol")
	waitPhase(t, rejected, v1alpha1.PhaseFailed)
	h.expect(t, rejected, gitops.Degraded, state.ReasonRejected+": ", gitops.Failed)
	h.expect(t, rejected, gitops.Degraded, "the wrong topic", gitops.Failed)
}
