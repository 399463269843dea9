package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/exit"
	"github.com/kafka-replay/kafka-replay/launcher"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// helmBinary is $HELM (make test-plugin sets it), or helm built once by
// test/tools/helm/build.sh (cached).
func helmBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("HELM"); p != "" {
		return p
	}
	var stderr bytes.Buffer
	cmd := exec.Command("bash", filepath.Join(root(), "test", "tools", "helm", "build.sh"))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("building helm: %v\n%s", err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// chartPolicies renders the chart's request admission policies, bound to
// namespaces labelled label=true, applies them, and removes them when the
// test ends.
func chartPolicies(t *testing.T, label string) {
	t.Helper()
	ctx := context.Background()
	out, err := exec.Command(helmBinary(t), "template", "kr", filepath.Join(root(), "charts", "kafka-replay"),
		"--show-only", "templates/admission-requests.yaml", "--set", "fullnameOverride=kr-plugin-"+label,
		"--set-string", "admissionPolicies.namespaceSelector.matchLabels."+label+"=true").CombinedOutput()
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	n := 0
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); err != nil {
			break
		}
		if u.GetKind() == "" {
			continue
		}
		if err := k8s.Create(ctx, &u); err != nil {
			t.Fatalf("%s/%s: %v", u.GetKind(), u.GetName(), err)
		}
		n++
		obj := u.DeepCopy()
		t.Cleanup(func() { _ = k8s.Delete(context.Background(), obj) })
	}
	if n < 2 {
		t.Fatalf("rendered %d objects:\n%s", n, out)
	}
}

// The chart's admission policy, not only RBAC: a user who may patch a
// request but lacks the verb approve is refused the approval at admission
// (exit 4, the policy's words naming the approver role), and the request
// keeps no approval; the operator, who has the verb, approves.
func TestEnvtestApproveRefusedByAdmissionPolicy(t *testing.T) {
	env(t)
	ctx := context.Background()
	const label = "kr-plugin-admission"
	ns := newNamespace(t)
	var nsObj corev1.Namespace
	if err := k8s.Get(ctx, client.ObjectKey{Name: ns}, &nsObj); err != nil {
		t.Fatal(err)
	}
	nsObj.Labels = map[string]string{label: "true"}
	if err := k8s.Update(ctx, &nsObj); err != nil {
		t.Fatal(err)
	}
	const patcher = "patcher@example.com"
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "plugin-test-patcher"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"replayrequests"}, Verbs: []string{"get", "list", "watch", "patch"}},
		{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"replayrecords"}, Verbs: []string{"get"}},
	}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "patcher", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: patcher}}}
	for _, o := range []client.Object{role, binding} {
		if err := k8s.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	chartPolicies(t, label)

	servers := "kafka." + ns + ".svc:9092"
	wantCode(t, "create", plugin(t, ns, operator, "create", "guarded", "--bootstrap-servers", servers, "--group", "orders", "--to", "ago:1h", "--approval", "Manual"), exit.OK)
	const digest = "0123456789abcdef"
	awaitApproval(t, ns, "guarded", digest, "guarded-plan")
	if err := k8s.Create(ctx, planRecord(ns, "guarded-plan")); err != nil {
		t.Fatal(err)
	}

	// The policy is in force once the API server has loaded it: a dry-run
	// patch as the patcher is refused.
	asPatcher := impersonating(t, patcher)
	eventually(t, 30*time.Second, "the approval policy in force", func() error {
		patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, v1alpha1.AnnotationApprove, digest))
		rr := &v1alpha1.ReplayRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "guarded"}}
		err := asPatcher.Patch(ctx, rr, client.RawPatch(types.MergePatchType, patch), client.DryRunAll)
		if err == nil {
			return fmt.Errorf("a dry-run approval by %s was admitted", patcher)
		}
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "approve") {
			return fmt.Errorf("not the policy's refusal yet: %w", err)
		}
		return nil
	})

	r := plugin(t, ns, patcher, "approve", "guarded")
	wantCode(t, "approve without the verb approve", r, exit.Forbidden)
	contains(t, "approve without the verb approve", r.errOut, patcher+" may not approve or reject ReplayRequest guarded", "kr-plugin-"+label+"-approver")
	if an := getRR(t, ns, "guarded").Annotations; an[v1alpha1.AnnotationApprove] != "" {
		t.Fatalf("the refused approval is on the request: %v", an)
	}
	r = plugin(t, ns, patcher, "reject", "guarded", "--reason", "no")
	wantCode(t, "reject without the verb approve", r, exit.Forbidden)

	r = plugin(t, ns, operator, "approve", "guarded")
	wantCode(t, "approve with the verb approve", r, exit.OK)
	if got := getRR(t, ns, "guarded").Annotations[v1alpha1.AnnotationApprove]; got != digest {
		t.Errorf("approve annotation %q", got)
	}
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(getRR(t, ns, "guarded").Annotations)
	t.Logf("annotations after the approval: %s", b.String())
}

// impersonating is an admin client acting as user, as kubectl --as does.
func impersonating(t *testing.T, user string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(testEnv.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := client.New(cfg, client.Options{Scheme: launcher.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
