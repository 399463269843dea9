package runnerjob

import (
	"encoding/json"
	"strings"
	"testing"

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
	for _, key := range []string{`"groups"`, `"groupSelector"`, `"continueOnError"`} {
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
