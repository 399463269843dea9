package chart

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// launcher.keda.enabled: on by default, the ClusterRole grants the
// ScaledObject rule and the launcher is told --keda=true; off, that rule,
// and only that one, is left out, and the launcher is told --keda=false.
func TestRenderKEDASwitch(t *testing.T) {
	rules := func(t *testing.T, extra ...string) ([]rbacv1.PolicyRule, []string) {
		objs := render(t, extra...)
		var cr rbacv1.ClusterRole
		into(t, launcherRole(t, objs, "ClusterRole"), &cr)
		var dep appsv1.Deployment
		into(t, one(t, objs, "Deployment"), &dep)
		return cr.Rules, dep.Spec.Template.Spec.Containers[0].Args
	}
	isKEDA := func(r rbacv1.PolicyRule) bool { return slices.Contains(r.APIGroups, "keda.sh") }

	on, onArgs := rules(t)
	off, offArgs := rules(t, "--set", "launcher.keda.enabled=false")
	if !slices.ContainsFunc(on, isKEDA) || !slices.Contains(onArgs, "--keda=true") {
		t.Fatalf("default: KEDA rule %v, args %v", slices.ContainsFunc(on, isKEDA), onArgs)
	}
	if slices.ContainsFunc(off, isKEDA) || !slices.Contains(offArgs, "--keda=false") {
		t.Fatalf("keda off: rules %+v, args %v", off, offArgs)
	}
	if want := slices.DeleteFunc(slices.Clone(on), isKEDA); len(want) != len(off) {
		t.Fatalf("keda off changed other rules: %d, want %d", len(off), len(want))
	}
}
