package runnerjob

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// TestSpecDigestOfOneGroupUnchanged: the fields of many groups in one
// request (issue 30) are absent from a one-group spec's JSON, so its
// digest, and with it its run ID and its Job's name, is what it was
// before they existed: the SHA-256 of the JSON written out here by hand.
func TestSpecDigestOfOneGroupUnchanged(t *testing.T) {
	offset := int64(3)
	spec := v1alpha1.ReplayRequestSpec{
		Kafka:  v1alpha1.KafkaConnection{BootstrapServers: "kafka:9092"},
		Group:  "orders",
		Target: v1alpha1.Target{Offset: &offset},
	}
	b, err := json.Marshal(&spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"groups"`, `"groupSelector"`, `"continueOnError"`, `"parallelism"`} {
		if strings.Contains(string(b), key) {
			t.Errorf("a one-group spec's JSON holds %s: %s", key, b)
		}
	}
	// Before issue 30's fields, this spec encoded as just this.
	const before = `{"kafka":{"bootstrapServers":"kafka:9092"},"group":"orders","target":{"offset":3}}`
	if string(b) != before {
		t.Fatalf("spec JSON %s, was %s", b, before)
	}
}

// A child request's Jobs carry its parent: the label (as the request has
// it) and the full name, so its runs are found with its parent's once the
// requests are gone; any other request's carry neither.
func TestParentOnAChildsJobs(t *testing.T) {
	offset := int64(3)
	ctrl := true
	child := &v1alpha1.ReplayRequest{Spec: v1alpha1.ReplayRequestSpec{Kafka: v1alpha1.KafkaConnection{BootstrapServers: "kafka:9092"}, Group: "orders", Target: v1alpha1.Target{Offset: &offset}}}
	child.Name, child.Namespace = "incident-0123456789", "shop"
	child.Status.ResolvedTarget = "offset:3"
	d := Defaults{RunnerImage: "kafka-replay/runner:test"}
	lone, err := Build(child.DeepCopy(), StageApply, Params{Target: "offset:3"}, d)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lone.Labels[v1alpha1.LabelParent]; ok || lone.Annotations[v1alpha1.AnnotationParent] != "" {
		t.Errorf("a request that is no child: labels %v annotations %v", lone.Labels, lone.Annotations)
	}
	child.Labels = map[string]string{v1alpha1.LabelParent: "incident"}
	child.OwnerReferences = []metav1.OwnerReference{{APIVersion: "kafkareplay.dev/v1alpha1", Kind: "ReplayRequest", Name: "incident", UID: "p", Controller: &ctrl}}
	job, err := Build(child, StageApply, Params{Target: "offset:3"}, d)
	if err != nil {
		t.Fatal(err)
	}
	if job.Labels[v1alpha1.LabelParent] != "incident" || job.Annotations[v1alpha1.AnnotationParent] != "incident" {
		t.Errorf("a child's Job: labels %v annotations %v", job.Labels, job.Annotations)
	}
}
