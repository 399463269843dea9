package chart

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kafka-replay/kafka-replay/launcher"
	"github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// TestParentApprovalUnderThePolicies: one plan, one approval, end to end
// under the chart's admission policies, with the real launcher as the
// chart's ServiceAccount. alice creates a Manual request over two groups;
// its children plan (their planning Jobs played as the runner would);
// bob, bound to the approver ClusterRole, is refused approving a child
// and approves the parent; the launcher then approves each child, which
// the policies admit from it alone, in bob's name, and makes each child's
// apply Job with bob as its approver.
func TestParentApprovalUnderThePolicies(t *testing.T) {
	cfg := controlPlane(t)
	helmBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admin, _ := newClient(t, cfg)
	const ns, scope = "kafka-replay-parent-policies", "kafka-replay-parent-policies-test"
	scopedNamespace(ctx, t, admin, ns, scope)
	objs := admissionRelease(ctx, t, admin, "adm-parent", scope, true)

	var launcherSA string
	for _, u := range byKind(objs, "ServiceAccount") {
		if strings.HasSuffix(u.GetName(), "-launcher") {
			launcherSA = u.GetName()
		}
	}
	saCfg := rest.CopyConfig(cfg)
	saCfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + releaseNamespace + ":" + launcherSA, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + releaseNamespace, "system:authenticated"}}
	logs := testutil.NewRunnerLogs()
	opts := launcherOptions(t, objs)
	opts.Logs, opts.WatchNamespaces, opts.PodResultGrace, opts.HistoryLimit = logs, []string{ns}, 2*time.Second, 0
	mgr, err := ctrl.NewManager(saCfg, ctrl.Options{
		Scheme:                 launcher.NewScheme(),
		Cache:                  launcher.CacheOptions(opts.WatchNamespaces...),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Another test of the package runs a launcher in this process.
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	mctx, stop := context.WithCancel(ctx)
	if err := launcher.Setup(mctx, mgr, opts, 2); err != nil {
		stop()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("launcher: %v", err)
		}
	}()

	const user = "alice"
	alice := asUser(t, cfg, user, "team-orders")
	grant(ctx, t, admin, ns, "create-requests", user, rbacv1.PolicyRule{
		APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"replayrequests"}, Verbs: []string{"create"},
	})
	var approverRole string
	for _, u := range byKind(objs, "ClusterRole") {
		if strings.HasSuffix(u.GetName(), "-approver") {
			approverRole = u.GetName()
		}
	}
	bob := asUser(t, cfg, "bob", "team-sre")
	if err := admin.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bob-approves"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: approverRole},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "bob"}},
	}); err != nil {
		t.Fatal(err)
	}

	// The policies reach the admission chain some time after they are
	// made: the validating one refuses a Secret alice may not use, and the
	// mutating one stamps her as the requester.
	enforced(t, "the request policies", func() error {
		err := alice.Create(ctx, testutil.MakeRequest(ns, "probe").Secret("kafka-prod").Obj(), client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), "may neither get nor use Secret kafka-prod") {
			return fmt.Errorf("not the validating policy's refusal yet: %w", err)
		}
		probe := testutil.MakeRequest(ns, "probe").Obj()
		if err := alice.Create(ctx, probe, client.DryRunAll); err != nil {
			return err
		}
		if by := probe.Annotations[v1alpha1.AnnotationRequestedBy]; by != user {
			return fmt.Errorf("requester stamped %q, not yet alice", by)
		}
		return nil
	})
	p := testutil.MakeRequest(ns, "incident").Groups("a", "b").Topic("orders").ShiftBy(-10).Manual().Obj()
	p.Spec.Parallelism = 2
	if err := alice.Create(ctx, p.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	if err := admin.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
		t.Fatal(err)
	}

	// jobOf is the Job of stage ("plan" or "apply") of the child of group.
	jobOf := func(stage, g string) (*batchv1.Job, error) {
		var list batchv1.JobList
		if err := admin.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{
			v1alpha1.LabelParent: v1alpha1.LabelValue(p.Name), v1alpha1.LabelStage: stage, v1alpha1.LabelGroup: v1alpha1.LabelValue(g),
		}); err != nil {
			return nil, err
		}
		if len(list.Items) != 1 {
			return nil, fmt.Errorf("%d %s Jobs of group %s", len(list.Items), stage, g)
		}
		return &list.Items[0], nil
	}
	// Each child plans: its planning Job ends with the plan the runner prints.
	children := map[string]*v1alpha1.ReplayRequest{}
	for _, g := range []string{"a", "b"} {
		var planJob *batchv1.Job
		eventuallyDo(t, 30*time.Second, "the planning Job of group "+g, func() error {
			var err error
			planJob, err = jobOf("plan", g)
			return err
		})
		var child v1alpha1.ReplayRequest
		if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: planJob.Annotations[v1alpha1.AnnotationRequest]}, &child); err != nil {
			t.Fatal(err)
		}
		children[g] = &child
		plan := testutil.Result(g, report.ExitOK, 10, 20)
		plan.DryRun, plan.Reason = true, report.ReasonDryRun
		plan.Target = report.Target{Given: "shift:-10", Resolved: "shift:-10"}
		for _, e := range planJob.Spec.Template.Spec.Containers[0].Env {
			if e.Name == config.EnvRunID {
				plan.RunID = e.Value
			}
		}
		for i := range plan.Partitions {
			plan.Partitions[i].Applied = false
		}
		plan.Summarize()
		plan.Plan = report.PlanDigest(plan.Group, plan.Target.Resolved, plan.Partitions)
		// No ServiceAccount controller in envtest: the runner pod's own.
		sa := planJob.Spec.Template.Spec.ServiceAccountName
		if sa == "" {
			sa = "default"
		}
		if err := admin.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}}); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
		if err := testutil.Attempt(ctx, admin, logs, planJob, planJob.Name+"-0", 0, plan, time.Now()); err != nil {
			t.Fatal(err)
		}
		if err := testutil.FinishJob(ctx, admin, planJob, ""); err != nil {
			t.Fatal(err)
		}
	}
	var digest string
	eventuallyDo(t, 30*time.Second, "the parent's one plan", func() error {
		var cur v1alpha1.ReplayRequest
		if err := admin.Get(ctx, client.ObjectKeyFromObject(p), &cur); err != nil {
			return err
		}
		if cur.Status.Phase != v1alpha1.PhaseAwaitingApproval || cur.Status.Plan == nil {
			return fmt.Errorf("phase %s, plan %+v, message %q", cur.Status.Phase, cur.Status.Plan, cur.Status.Message)
		}
		digest = cur.Status.Plan.Digest
		return nil
	})

	annotate := func(c client.Client, rr *v1alpha1.ReplayRequest, kv ...string) error {
		change := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			change[kv[i]] = kv[i+1]
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": change}})
		return c.Patch(ctx, rr.DeepCopy(), client.RawPatch("application/merge-patch+json", patch))
	}
	// bob may approve, but not a child: the parent.
	var childPlan v1alpha1.ReplayRequest
	if err := admin.Get(ctx, client.ObjectKeyFromObject(children["a"]), &childPlan); err != nil || childPlan.Status.Plan == nil {
		t.Fatalf("child a: %v, plan %+v", err, childPlan.Status.Plan)
	}
	if want := "approve or reject incident (kubectl replay approve incident -n " + ns + ")"; !strings.Contains(childPlan.Status.Message, want) {
		t.Errorf("child a's message %q does not say %q", childPlan.Status.Message, want)
	}
	err = annotate(bob, children["a"], v1alpha1.AnnotationApprove, childPlan.Status.Plan.Digest)
	if err == nil || !strings.Contains(err.Error(), "it is a child of incident") {
		t.Fatalf("bob approving child %s: %v, want a refusal naming the parent", children["a"].Name, err)
	}
	// bob's binding and the approver stamp's policy are in force some
	// time after they are made: until then the approval is refused.
	eventuallyDo(t, time.Minute, "bob approves the parent", func() error {
		return annotate(bob, p, v1alpha1.AnnotationApprove, digest)
	})

	// The launcher approves each child in bob's name, and its apply Job
	// says so.
	for _, g := range []string{"a", "b"} {
		eventuallyDo(t, 30*time.Second, "the apply Job of group "+g, func() error {
			var cur v1alpha1.ReplayRequest
			if err := admin.Get(ctx, client.ObjectKeyFromObject(children[g]), &cur); err != nil {
				return err
			}
			if a := cur.Status.Approval; a == nil || a.By != "bob" || cur.Annotations[v1alpha1.AnnotationApprovedBy] != "bob" {
				return fmt.Errorf("approval %+v, annotations %v, message %q", cur.Status.Approval, cur.Annotations, cur.Status.Message)
			}
			job, err := jobOf("apply", g)
			if err != nil {
				return err
			}
			if by := job.Annotations[v1alpha1.AnnotationApprovedBy]; by != "bob" {
				return fmt.Errorf("apply Job approved-by %q", by)
			}
			return nil
		})
	}
}
