package chart

import (
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// launcher.strimzi: on by default, the ClusterRole grants get on Strimzi's
// kinds, list and watch on kafkas, kafkausers and kafkaconnectors, and
// patch on kafkaconnectors only; enabled false leaves out every
// Strimzi rule and only those, and the launcher is told.
func TestRenderStrimziSwitch(t *testing.T) {
	render2 := launcherRulesAndArgs
	isStrimzi := func(r rbacv1.PolicyRule) bool { return slices.Contains(r.APIGroups, "kafka.strimzi.io") }
	on, onArgs := render2(t)
	for _, want := range []string{"kafkas", "kafkausers", "kafkaconnects", "kafkaconnectors"} {
		if !slices.ContainsFunc(on, func(r rbacv1.PolicyRule) bool { return isStrimzi(r) && slices.Contains(r.Resources, want) }) {
			t.Errorf("default: no rule for %s", want)
		}
	}
	for _, r := range on {
		if isStrimzi(r) && slices.Contains(r.Verbs, "patch") && !slices.Equal(r.Resources, []string{"kafkaconnectors"}) {
			t.Errorf("a Strimzi rule patches more than kafkaconnectors: %+v", r)
		}
		// The watches that wake a request waiting for its Kafka,
		// KafkaUser or KafkaConnector (metadata only), and no more.
		if isStrimzi(r) && (slices.Contains(r.Verbs, "list") || slices.Contains(r.Verbs, "watch")) &&
			slices.ContainsFunc(r.Resources, func(s string) bool { return s != "kafkas" && s != "kafkausers" && s != "kafkaconnectors" }) {
			t.Errorf("a Strimzi rule lists or watches more than kafkas, kafkausers and kafkaconnectors: %+v", r)
		}
	}
	for _, want := range []string{"kafkas", "kafkausers", "kafkaconnectors"} {
		if !slices.ContainsFunc(on, func(r rbacv1.PolicyRule) bool {
			return isStrimzi(r) && slices.Contains(r.Resources, want) && slices.Contains(r.Verbs, "list") && slices.Contains(r.Verbs, "watch")
		}) {
			t.Errorf("default: no list and watch on %s", want)
		}
	}
	if !slices.Contains(onArgs, "--strimzi=true") || slices.ContainsFunc(onArgs, func(a string) bool { return strings.HasPrefix(a, "--strimzi-cluster-namespaces") }) {
		t.Fatalf("default args %v", onArgs)
	}
	// Kafkas of other namespaces: the flag lists them; the rules, already
	// cluster-wide for Strimzi's kinds, stay as they are.
	other, otherArgs := render2(t, "--set", "launcher.strimzi.clusterNamespaces={kafka,kafka-b}")
	if !slices.Contains(otherArgs, "--strimzi-cluster-namespaces=kafka,kafka-b") || len(other) != len(on) {
		t.Fatalf("clusterNamespaces: args %v, %d rules (want %d)", otherArgs, len(other), len(on))
	}
	off, offArgs := render2(t, "--set", "launcher.strimzi.enabled=false")
	if slices.ContainsFunc(off, isStrimzi) || !slices.Contains(offArgs, "--strimzi=false") {
		t.Fatalf("strimzi off: rules %+v, args %v", off, offArgs)
	}
	if want := slices.DeleteFunc(slices.Clone(on), isStrimzi); len(want) != len(off) {
		t.Fatalf("strimzi off changed other rules: %d, want %d", len(off), len(want))
	}
}
