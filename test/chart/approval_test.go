package chart

import (
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// The approver ClusterRole grants what `kubectl annotate` needs to decide a
// plan (get, patch, the verb approve on requests; reading the plan's
// record), nothing more, is not aggregated into admin or edit, and goes
// with approval.approverRole: false.
func TestRenderApproverRole(t *testing.T) {
	var role rbacv1.ClusterRole
	found := false
	for _, u := range byKind(render(t), "ClusterRole") {
		if strings.HasSuffix(u.GetName(), "-approver") {
			into(t, u, &role)
			found = true
		}
	}
	if !found {
		t.Fatal("no approver ClusterRole by default")
	}
	for k := range role.Labels {
		if strings.HasPrefix(k, "rbac.authorization.k8s.io/aggregate-to-") {
			t.Errorf("the approver role is aggregated (%s): whoever may create requests would approve them", k)
		}
	}
	verbs := map[string][]string{}
	for _, r := range role.Rules {
		if !slices.Equal(r.APIGroups, []string{v1alpha1.GroupVersion.Group}) || len(r.ResourceNames) != 0 {
			t.Errorf("rule %+v", r)
		}
		for _, res := range r.Resources {
			verbs[res] = append(verbs[res], r.Verbs...)
		}
	}
	if v := verbs["replayrequests"]; !slices.Contains(v, "approve") || !slices.Contains(v, "patch") || slices.Contains(v, "create") || slices.Contains(v, "delete") || slices.Contains(v, "update") {
		t.Errorf("replayrequests verbs %v: want approve and patch, not create, update or delete", v)
	}
	if _, ok := verbs["replayrequests/status"]; ok || len(verbs) != 2 {
		t.Errorf("resources %v", verbs)
	}

	values := writeValues(t, map[string]any{"approval": map[string]any{"approverRole": false}})
	for _, u := range byKind(render(t, "--values", values), "ClusterRole") {
		if strings.HasSuffix(u.GetName(), "-approver") {
			t.Errorf("approval.approverRole false still renders %s", u.GetName())
		}
	}
}
