package replay

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// What a request replays, either way it names it: spec.kafka, spec.group
// and spec.topics as written; a consumerRef through status.resolved, and
// only a status.resolved of that very resource.
func TestUnitWhatARequestReplays(t *testing.T) {
	spec := &v1alpha1.ReplayRequest{Spec: v1alpha1.ReplayRequestSpec{
		Kafka: v1alpha1.KafkaConnection{
			BootstrapServers: "kafka:9092",
			SecretRef:        &v1alpha1.LocalObjectReference{Name: "creds"},
			ConfigMapRef:     &v1alpha1.LocalObjectReference{Name: "props"},
		},
		Group:  "orders",
		Topics: []v1alpha1.TopicSelector{{Name: "orders", Partitions: []int32{0}}},
	}}
	ref := &v1alpha1.ReplayRequest{Spec: v1alpha1.ReplayRequestSpec{ConsumerRef: &v1alpha1.KnativeRef{Kind: v1alpha1.KnativeKafkaSource, Name: "src"}}}
	resolved := ref.DeepCopy()
	resolved.Status.Resolved = &v1alpha1.ResolvedConsumer{Kind: v1alpha1.KnativeKafkaSource, Name: "src", Group: "knative-group", BootstrapServers: "b:9092", Topics: []string{"t1", "t2"}, SecretName: "kn"}
	foreign := resolved.DeepCopy()
	foreign.Status.Resolved.Name = "another-src"

	type what struct {
		group, servers, secret string
		topics                 int
		configMap, mounted     bool // mounted: a Secret projection
	}
	cases := []struct {
		name string
		rr   *v1alpha1.ReplayRequest
		want what
	}{
		{"spec.kafka, spec.group, spec.topics", spec, what{"orders", "kafka:9092", "creds", 1, true, true}},
		{"a consumerRef not resolved yet", ref, what{}},
		{"a consumerRef resolved", resolved, what{"knative-group", "b:9092", "kn", 2, false, false}}, // no secretKeys: nothing to mount,
		{"a status.resolved of another resource", foreign, what{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := what{Group(c.rr), BootstrapServers(c.rr), SecretName(c.rr), len(Topics(c.rr)), ConfigMapRef(c.rr) != nil, SecretProjection(c.rr) != nil}
			if got != c.want {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// A child is what the chart's admission policy calls one: the parent
// label, or an owner reference to a ReplayRequest (controller or not).
func TestIsChild(t *testing.T) {
	owner := func(apiVersion, kind string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "incident", UID: "p-uid"}}
	}
	for _, tc := range []struct {
		name string
		meta metav1.ObjectMeta
		want bool
	}{
		{"a plain request", metav1.ObjectMeta{Name: "a"}, false},
		{"the parent label", metav1.ObjectMeta{Name: "a", Labels: map[string]string{v1alpha1.LabelParent: "incident"}}, true},
		{"an owner reference to a ReplayRequest", metav1.ObjectMeta{Name: "a", OwnerReferences: owner(v1alpha1.GroupVersion.String(), "ReplayRequest")}, true},
		{"another version of the API", metav1.ObjectMeta{Name: "a", OwnerReferences: owner("kafkareplay.dev/v1", "ReplayRequest")}, true},
		{"owned by a Deployment", metav1.ObjectMeta{Name: "a", OwnerReferences: owner("apps/v1", "Deployment")}, false},
		{"a ReplayRequest kind of another API group", metav1.ObjectMeta{Name: "a", OwnerReferences: owner("example.com/v1", "ReplayRequest")}, false},
	} {
		if got := IsChild(&v1alpha1.ReplayRequest{ObjectMeta: tc.meta}); got != tc.want {
			t.Errorf("%s: IsChild = %v, want %v", tc.name, got, tc.want)
		}
	}
}
