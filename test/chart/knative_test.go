package chart

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// launcher.knative: on by default, the ClusterRole grants get on Knative's
// kinds and on its two ConfigMaps by name (never configmaps in general),
// and get and patch on kafkasources/scale; scaleKafkaSources false leaves
// out that one rule, enabled false every Knative rule and only those, and
// the launcher is told each.
func TestRenderKnativeSwitch(t *testing.T) {
	rules := launcherRulesAndArgs
	knativeGroups := []string{"sources.knative.dev", "eventing.knative.dev", "messaging.knative.dev"}
	isKnative := func(r rbacv1.PolicyRule) bool {
		return slices.ContainsFunc(r.APIGroups, func(g string) bool { return slices.Contains(knativeGroups, g) }) ||
			slices.Contains(r.ResourceNames, "kafka-channel-config")
	}
	isScale := func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "kafkasources/scale") }

	on, onArgs := rules(t)
	for _, want := range []string{"kafkasources", "kafkasources/scale", "triggers", "brokers", "subscriptions", "kafkachannels"} {
		if !slices.ContainsFunc(on, func(r rbacv1.PolicyRule) bool { return isKnative(r) && slices.Contains(r.Resources, want) }) {
			t.Errorf("default: no rule for %s", want)
		}
	}
	for _, r := range on {
		if isKnative(r) && !isScale(r) && !slices.Equal(r.Verbs, []string{"get"}) {
			t.Errorf("a Knative rule grants more than get: %+v", r)
		}
		if slices.Contains(r.Resources, "configmaps") && slices.Contains(r.Verbs, "get") && !slices.Equal(r.ResourceNames, []string{"config-kafka-features", "kafka-channel-config"}) {
			t.Errorf("get on configmaps beyond Knative's two: %+v", r)
		}
	}
	if !slices.Contains(onArgs, "--knative=true") || !slices.Contains(onArgs, "--knative-scale=true") || !slices.Contains(onArgs, "--knative-namespace=knative-eventing") {
		t.Fatalf("default args %v", onArgs)
	}

	noScale, noScaleArgs := rules(t, "--set", "launcher.knative.scaleKafkaSources=false")
	if slices.ContainsFunc(noScale, isScale) || !slices.Contains(noScaleArgs, "--knative-scale=false") {
		t.Fatalf("scaleKafkaSources off: rules %+v, args %v", noScale, noScaleArgs)
	}
	if want := slices.DeleteFunc(slices.Clone(on), isScale); len(want) != len(noScale) {
		t.Fatalf("scaleKafkaSources off changed other rules: %d, want %d", len(noScale), len(want))
	}

	off, offArgs := rules(t, "--set", "launcher.knative.enabled=false", "--set", "launcher.knative.namespace=knative")
	if slices.ContainsFunc(off, isKnative) || !slices.Contains(offArgs, "--knative=false") || !slices.Contains(offArgs, "--knative-scale=false") || !slices.Contains(offArgs, "--knative-namespace=knative") {
		t.Fatalf("knative off: rules %+v, args %v", off, offArgs)
	}
	if want := slices.DeleteFunc(slices.Clone(on), isKnative); len(want) != len(off) {
		t.Fatalf("knative off changed other rules: %d, want %d", len(off), len(want))
	}
}

// launcherRulesAndArgs renders the chart with extra and returns the
// launcher's ClusterRole rules and its arguments.
func launcherRulesAndArgs(t *testing.T, extra ...string) ([]rbacv1.PolicyRule, []string) {
	objs := render(t, extra...)
	var cr rbacv1.ClusterRole
	into(t, launcherRole(t, objs, "ClusterRole"), &cr)
	var dep appsv1.Deployment
	into(t, one(t, objs, "Deployment"), &dep)
	return cr.Rules, dep.Spec.Template.Spec.Containers[0].Args
}
