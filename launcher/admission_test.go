package launcher_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/launcher"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/runnerjob"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
	"github.com/kafka-replay/kafka-replay/runner/config"
)

// manifest returns a valid ReplayRequest as plain JSON data, so that tests
// can break it in ways the Go types cannot express (wrong types, unknown
// fields, missing required fields).
func manifest(ns, name string) map[string]any {
	return map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(),
		"kind":       "ReplayRequest",
		"metadata":   map[string]any{"namespace": ns, "name": name},
		"spec": map[string]any{
			"kafka":  map[string]any{"bootstrapServers": "kafka-0.kafka:9092,kafka-1.kafka:9092"},
			"group":  "orders",
			"topics": []any{map[string]any{"name": "orders", "partitions": []any{0, 1}}},
			"target": map[string]any{"time": "2026-03-01T09:30:00Z"},
		},
	}
}

// set changes one field by its dotted path under spec; a nil value deletes it.
func set(m map[string]any, path string, v any) {
	cur := m["spec"].(map[string]any)
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	if v == nil {
		delete(cur, parts[len(parts)-1])
		return
	}
	cur[parts[len(parts)-1]] = v
}

// At least 25 invalid manifests, each refused at admission by the schema or
// a CEL rule, with a message that names the field.
func TestEnvtestAdmissionRejectsInvalidManifests(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	ctx := context.Background()

	type edit struct {
		path  string
		value any
	}
	cases := []struct {
		name  string
		edits []edit
		field string // must appear in the error
		msg   string // and so must this
	}{
		{"no target", []edit{{"target", map[string]any{}}}, "spec.target", "exactly one of"},
		{"two targets", []edit{{"target.position", "Earliest"}}, "spec.target", "exactly one of"},
		{"three targets", []edit{{"target.offset", 5}, {"target.shiftBy", -1}}, "spec.target", "exactly one of"},
		{"time without zone", []edit{{"target.time", "2026-03-01T09:30:00"}}, "spec.target.time", "with a zone"},
		{"time as a date", []edit{{"target.time", "2026-03-01"}}, "spec.target.time", "RFC3339"},
		{"time garbage", []edit{{"target.time", "yesterday"}}, "spec.target.time", "RFC3339"},
		{"time month 13", []edit{{"target.time", "2026-13-45T10:00:00Z"}}, "spec.target.time", "a real instant"},
		{"time 30 February", []edit{{"target.time", "2026-02-30T10:00:00Z"}}, "spec.target.time", "a real instant"},
		{"time hour 24", []edit{{"target.time", "2026-03-01T24:00:00Z"}}, "spec.target.time", "a real instant"},
		{"time zone offset 25 hours", []edit{{"target.time", "2026-03-01T10:00:00+25:00"}}, "spec.target.time", "a real instant"},
		{"time before 1970", []edit{{"target.time", "1969-12-31T23:59:59Z"}}, "spec.target.time", "from 1970 on"},
		{"time lowercase t and z", []edit{{"target.time", "2026-03-01t09:30:00z"}}, "spec.target.time", "RFC3339"},
		{"offsets over a pod annotation", []edit{{"topics", nil}, {"target", map[string]any{"offsets": longOffsets(1000, 249)}}}, "spec.target.offsets", "must fit in 240 KiB"},
		{"ago overflows a duration", []edit{{"target", map[string]any{"ago": "9999999999999999999h"}}}, "spec.target.ago", "positive Go duration"},
		{"waitTimeout overflows a duration", []edit{{"whenGroupActive", "Wait"}, {"waitTimeout", "9999999999999999999h"}}, "spec.waitTimeout", "at most 24h"},
		{"ago not a duration", []edit{{"target", map[string]any{"ago": "two hours"}}}, "spec.target.ago", "Go duration"},
		{"ago zero", []edit{{"target", map[string]any{"ago": "0s"}}}, "spec.target.ago", "positive"},
		{"ago negative", []edit{{"target", map[string]any{"ago": "-1h"}}}, "spec.target.ago", "positive"},
		{"position unknown", []edit{{"target", map[string]any{"position": "Middle"}}}, "spec.target.position", "Unsupported value"},
		{"offset negative", []edit{{"target", map[string]any{"offset": -1}}}, "spec.target.offset", "greater than or equal to 0"},
		{"shiftBy zero", []edit{{"target", map[string]any{"shiftBy": 0}}}, "spec.target.shiftBy", "must not be 0"},
		{"offsets empty", []edit{{"target", map[string]any{"offsets": []any{}}}}, "spec.target.offsets", "at least 1"},
		{"offsets negative partition", []edit{{"topics", nil}, {"target", map[string]any{"offsets": []any{map[string]any{"topic": "orders", "partition": -1, "offset": 3}}}}}, "spec.target.offsets[0].partition", "greater than or equal to 0"},
		{"offsets negative offset", []edit{{"topics", nil}, {"target", map[string]any{"offsets": []any{map[string]any{"topic": "orders", "partition": 0, "offset": -3}}}}}, "spec.target.offsets[0].offset", "greater than or equal to 0"},
		{"offsets bad topic", []edit{{"topics", nil}, {"target", map[string]any{"offsets": []any{map[string]any{"topic": "no/slash", "partition": 0, "offset": 3}}}}}, "spec.target.offsets[0].topic", "Kafka topic name"},
		{"offsets duplicate partition", []edit{{"topics", nil}, {"target", map[string]any{"offsets": []any{
			map[string]any{"topic": "orders", "partition": 0, "offset": 3}, map[string]any{"topic": "orders", "partition": 0, "offset": 4},
		}}}}, "spec.target.offsets[1]", "Duplicate value"},
		{"offsets with topics", []edit{{"target", map[string]any{"offsets": []any{map[string]any{"topic": "orders", "partition": 0, "offset": 3}}}}}, "spec.topics", "must be empty when target.offsets"},
		{"fromGroup is the group", []edit{{"target", map[string]any{"fromGroup": "orders"}}}, "spec.target.fromGroup", "different group"},
		{"fromGroup padded", []edit{{"target", map[string]any{"fromGroup": " orders-shadow"}}}, "spec.target.fromGroup", "leading or trailing spaces"},
		{"group empty", []edit{{"group", ""}}, "spec.group", "at least 1 chars"},
		{"group missing", []edit{{"group", nil}}, "spec", "set kafka and group, or consumerRef"},
		{"group padded", []edit{{"group", "orders "}}, "spec.group", "leading or trailing spaces"},
		{"group control character", []edit{{"group", "ord\u0007ers"}}, "spec.group", "control characters"},
		{"group too long", []edit{{"group", strings.Repeat("g", 256)}}, "spec.group", "may not be more than 255"},
		{"topic illegal character", []edit{{"topics", []any{map[string]any{"name": "orders!"}}}}, "spec.topics[0].name", "Kafka topic name"},
		{"topic dot", []edit{{"topics", []any{map[string]any{"name": "."}}}}, "spec.topics[0].name", "not '.' or '..'"},
		{"topic too long", []edit{{"topics", []any{map[string]any{"name": strings.Repeat("t", 250)}}}}, "spec.topics[0].name", "may not be more than 249"},
		{"topic listed twice", []edit{{"topics", []any{map[string]any{"name": "a"}, map[string]any{"name": "a"}}}}, "spec.topics[1]", "Duplicate value"},
		{"partition negative", []edit{{"topics", []any{map[string]any{"name": "orders", "partitions": []any{0, -2}}}}}, "spec.topics[0].partitions[1]", "greater than or equal to 0"},
		{"partition listed twice", []edit{{"topics", []any{map[string]any{"name": "orders", "partitions": []any{1, 1}}}}}, "spec.topics[0].partitions[1]", "Duplicate value"},
		{"bootstrap without port", []edit{{"kafka.bootstrapServers", "kafka"}}, "spec.kafka.bootstrapServers", "host:port"},
		{"bootstrap port out of range", []edit{{"kafka.bootstrapServers", "kafka:9092,kafka-1:70000"}}, "spec.kafka.bootstrapServers", "host:port"},
		{"bootstrap with a path", []edit{{"kafka.bootstrapServers", "kafka:9092/path"}}, "spec.kafka.bootstrapServers", "host:port"},
		{"bootstrap empty", []edit{{"kafka.bootstrapServers", ""}}, "spec.kafka.bootstrapServers", "at least 1 chars"},
		{"kafka missing", []edit{{"kafka", nil}}, "spec", "set kafka and group, or consumerRef"},
		{"consumerRef beside kafka and group", []edit{{"consumerRef", map[string]any{"kind": "Trigger", "name": "orders"}}}, "spec.consumerRef", "consumerRef replaces group and topics"},
		{"consumerRef of another kind", []edit{{"kafka", nil}, {"group", nil}, {"topics", nil}, {"consumerRef", map[string]any{"kind": "Deployment", "name": "orders"}}}, "spec.consumerRef.kind", "Unsupported value"},
		{"consumerRef without a name", []edit{{"kafka", nil}, {"group", nil}, {"topics", nil}, {"consumerRef", map[string]any{"kind": "Trigger"}}}, "spec.consumerRef.name", "Required value"},
		{"secretRef without name", []edit{{"kafka.secretRef", map[string]any{}}}, "spec.kafka.secretRef.name", "Required value"},
		{"secretRef in another namespace", []edit{{"kafka.secretRef", map[string]any{"name": "creds", "namespace": "kube-system"}}}, "spec.kafka.secretRef.namespace", "unknown field"},
		{"configMapRef bad name", []edit{{"kafka.configMapRef", map[string]any{"name": "Not_A_Name"}}}, "spec.kafka.configMapRef.name", "should match"},
		{"whenGroupActive unknown", []edit{{"whenGroupActive", "Retry"}}, "spec.whenGroupActive", "Unsupported value"},
		{"Wait without timeout", []edit{{"whenGroupActive", "Wait"}}, "spec.whenGroupActive", "needs a waitTimeout"},
		{"timeout without Wait", []edit{{"waitTimeout", "5m"}}, "spec.waitTimeout", "only allowed with whenGroupActive: Wait"},
		{"timeout too long", []edit{{"whenGroupActive", "Wait"}, {"waitTimeout", "48h"}}, "spec.waitTimeout", "at most 24h"},
		{"dryRun not a bool", []edit{{"dryRun", "yes"}}, "spec.dryRun", "must be of type boolean"},
		{"deadline zero", []edit{{"runner", map[string]any{"activeDeadlineSeconds": 0}}}, "spec.runner.activeDeadlineSeconds", "greater than or equal to 1"},
		{"service account bad name", []edit{{"runner", map[string]any{"serviceAccountName": "Bad Name"}}}, "spec.runner.serviceAccountName", "should match"},
		{"unknown field", []edit{{"replayEverything", true}}, "spec.replayEverything", "unknown field"},
		// Many groups in one request (issue 30): what a parent cannot pass
		// on to its children, or list its groups with, is refused.
		{"groupSelector with clusterRef", []edit{{"group", nil}, {"kafka", map[string]any{"clusterRef": map[string]any{"name": "my-cluster", "listener": "tls"}}}, {"groupSelector", map[string]any{"include": []any{map[string]any{"prefix": "team-"}}}}}, "spec.groupSelector", "groupSelector with kafka.clusterRef is not built"},
		{"groups with a control character", []edit{{"group", nil}, {"groups", []any{"a", "b\tc"}}}, "spec.groups", "no leading or trailing spaces and no control characters"},
		{"groups with a trailing space", []edit{{"group", nil}, {"groups", []any{"a "}}}, "spec.groups", "no leading or trailing spaces"},
		{"parallelism over 10", []edit{{"group", nil}, {"groups", []any{"a", "b"}}, {"parallelism", 11}}, "spec.parallelism", "less than or equal to 10"},
		{"parallelism with one group", []edit{{"parallelism", 2}}, "spec.parallelism", "only applies to a request over several groups"},
		{"consumerRef with groups", []edit{{"group", nil}, {"kafka", nil}, {"topics", nil}, {"groups", []any{"a", "b"}}, {"consumerRef", map[string]any{"kind": "KafkaSource", "name": "src"}}}, "spec.consumerRef", "not with groups or groupSelector"},
		{"undoOf with groups", []edit{{"group", nil}, {"topics", nil}, {"groups", []any{"a", "b"}}, {"target", map[string]any{"undoOf": "earlier"}}}, "spec.target.undoOf", "not with groups or groupSelector"},
		{"fromGroup among the groups", []edit{{"group", nil}, {"groups", []any{"a", "b"}}, {"target", map[string]any{"fromGroup": "b"}}}, "spec.target.fromGroup", "a group that groups does not list"},
		{"consumers of several groups at once", []edit{{"group", nil}, {"groups", []any{"a", "b"}}, {"parallelism", 2}, {"whenGroupActive", "Wait"}, {"waitTimeout", "5m"}, {"consumers", []any{map[string]any{"kind": "Deployment", "name": "orders"}}}}, "spec.consumers", "need parallelism 1"},
		{"group and groups", []edit{{"groups", []any{"a"}}}, "spec", "exactly one of group, groups and groupSelector"},
		{"continueOnError with one group", []edit{{"continueOnError", true}}, "spec.continueOnError", "only applies to a request over several groups"},
		{"group pattern with prefix and regex", []edit{{"group", nil}, {"groupSelector", map[string]any{"include": []any{map[string]any{"prefix": "a", "regex": "b.*"}}}}}, "spec.groupSelector.include[0]", "exactly one of prefix and regex"},
		{"groupSelector without include", []edit{{"group", nil}, {"groupSelector", map[string]any{"include": []any{}}}}, "spec.groupSelector.include", "at least 1 items"},
		{"groups listed twice", []edit{{"group", nil}, {"groups", []any{"a", "a"}}}, "spec.groups[1]", "Duplicate value"},
		{"groups over 500", []edit{{"group", nil}, {"groups", manyGroups(501)}}, "spec.groups", "at most 500 items"},
		{"maxTotalMessagesToReconsume with one group", []edit{{"limits", map[string]any{"maxTotalMessagesToReconsume": 10}}}, "spec.limits.maxTotalMessagesToReconsume", "only applies to a request over several groups"},
		{"maxTotalMessagesToReconsume in a one-group undo", []edit{{"topics", nil}, {"target", map[string]any{"undoOf": "earlier"}}, {"limits", map[string]any{"maxTotalMessagesToReconsume": 10}}}, "spec.limits.maxTotalMessagesToReconsume", "only applies to a request over several groups"},
		{"maxTotalMessagesToReconsume negative", []edit{{"group", nil}, {"groups", []any{"a", "b"}}, {"limits", map[string]any{"maxTotalMessagesToReconsume": -1}}}, "spec.limits.maxTotalMessagesToReconsume", "greater than or equal to 0"},
		// Deleting internal topics: a streams group's, stated or found.
		{"deleteAllInternalTopics of a classic group", []edit{{"groupType", "Classic"}, {"deleteAllInternalTopics", true}}, "spec.deleteAllInternalTopics", "only a streams group has internal topics to delete"},
		{"deleteAllInternalTopics of a consumer group", []edit{{"groupType", "Consumer"}, {"deleteAllInternalTopics", true}}, "spec.deleteAllInternalTopics", "only a streams group has internal topics to delete"},
		{"deleteAllInternalTopics of a share group", []edit{{"groupType", "Share"}, {"deleteAllInternalTopics", true}}, "spec.deleteAllInternalTopics", "only a streams group has internal topics to delete"},
		{"deleteAllInternalTopics in an undo", []edit{{"topics", nil}, {"target", map[string]any{"undoOf": "app-reset"}}, {"deleteAllInternalTopics", true}}, "spec.deleteAllInternalTopics", "cannot recreate deleted topics"},
		{"deleteAllInternalTopics of a consumerRef", []edit{{"kafka", nil}, {"group", nil}, {"topics", nil}, {"consumerRef", map[string]any{"kind": "Trigger", "name": "orders"}}, {"deleteAllInternalTopics", true}}, "spec.deleteAllInternalTopics", "never a streams group"},
		{"deleteAllInternalTopics of several groups", []edit{{"group", nil}, {"groups", []any{"a", "b"}}, {"deleteAllInternalTopics", true}}, "spec.deleteAllInternalTopics", "deletes the internal topics of one streams group"},
		{"deleteAllInternalTopics not a bool", []edit{{"deleteAllInternalTopics", "yes"}}, "spec.deleteAllInternalTopics", "must be of type boolean"},
	}
	if len(cases) < 25 {
		t.Fatalf("only %d cases", len(cases))
	}

	// The base manifest itself is valid.
	base := &unstructured.Unstructured{Object: manifest(ns, "valid")}
	if err := k8s.Create(ctx, base); err != nil {
		t.Fatalf("valid manifest refused: %v", err)
	}

	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := manifest(ns, fmt.Sprintf("invalid-%d", i))
			for _, e := range c.edits {
				set(m, e.path, e.value)
			}
			// Round-trip through JSON so the server sees exactly the data.
			b, _ := json.Marshal(m)
			var obj unstructured.Unstructured
			if err := obj.UnmarshalJSON(b); err != nil {
				t.Fatal(err)
			}
			err := k8s.Create(ctx, &obj, clientStrict())
			if err == nil {
				t.Fatalf("accepted: %s", b)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.field) || !strings.Contains(msg, c.msg) {
				t.Fatalf("error does not name %q with %q:\n%s", c.field, c.msg, msg)
			}
		})
	}
}

// deleteAllInternalTopics is admitted with groupType Streams, Auto or
// unset, in a dry run and with approval: Manual too: a dry run lists the
// topics and deletes none, and a Manual request shows them in its plan.
func TestEnvtestAdmissionDeleteAllInternalTopics(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	ctx := context.Background()
	for i, edits := range []map[string]any{
		{"groupType": "Streams"},
		{"groupType": "Auto"},
		{},
		{"groupType": "Streams", "dryRun": true},
		{"groupType": "Streams", "approval": "Manual"},
	} {
		m := manifest(ns, fmt.Sprintf("deleting-%d", i))
		set(m, "deleteAllInternalTopics", true)
		for k, v := range edits {
			set(m, k, v)
		}
		obj := &unstructured.Unstructured{Object: m}
		if err := k8s.Create(ctx, obj, clientStrict()); err != nil {
			t.Errorf("%v refused: %v", edits, err)
		}
	}
}

// limits.maxTotalMessagesToReconsume is admitted on a request over
// several groups, and on the undo of one (target.undoOf, no group), beside
// the per-group limit.
func TestEnvtestAdmissionMaxTotalMessagesToReconsume(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	ctx := context.Background()
	for i, edits := range []map[string]any{
		{"group": nil, "groups": []any{"a", "b"}, "limits": map[string]any{"maxTotalMessagesToReconsume": 0}},
		{"group": nil, "groups": []any{"a", "b"}, "approval": "Manual", "limits": map[string]any{"maxMessagesToReconsume": 5, "maxTotalMessagesToReconsume": 8}},
		{"group": nil, "topics": nil, "target": map[string]any{"undoOf": "incident"}, "limits": map[string]any{"maxTotalMessagesToReconsume": 8}},
	} {
		m := manifest(ns, fmt.Sprintf("total-%d", i))
		for k, v := range edits {
			set(m, k, v)
		}
		obj := &unstructured.Unstructured{Object: m}
		if err := k8s.Create(ctx, obj, clientStrict()); err != nil {
			t.Errorf("%v refused: %v", edits, err)
		}
	}
}

// clientStrict asks for kubectl's default: unknown fields are errors, not
// silently pruned.
func clientStrict() client.CreateOption { return client.FieldValidation("Strict") }

// Every bootstrap form the runner (librdkafka) accepts is admitted, so the
// schema never refuses a working connection string.
func TestEnvtestAdmissionAcceptsBootstrapForms(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	for i, bs := range []string{"kafka:9092", "a:1, b:65535", "SSL://k:9093", "SASL_SSL://k:9093,SASL_SSL://k2:9093", "PLAINTEXT://[::1]:9092", "10.0.0.1:9092", "my_broker.local:9092"} {
		m := manifest(ns, fmt.Sprintf("bootstrap-%d", i))
		set(m, "kafka.bootstrapServers", bs)
		b, _ := json.Marshal(m)
		var obj unstructured.Unstructured
		if err := obj.UnmarshalJSON(b); err != nil {
			t.Fatal(err)
		}
		if err := k8s.Create(context.Background(), &obj, clientStrict()); err != nil {
			t.Errorf("%q refused: %v", bs, err)
		}
	}
}

// longOffsets is an offsets target of n entries with topic names of nameLen
// characters and the largest offsets.
func longOffsets(n, nameLen int) []any {
	out := make([]any, n)
	for i := range out {
		topic := fmt.Sprintf("t%06d.", i)
		topic += strings.Repeat("x", nameLen-len(topic))
		out[i] = map[string]any{"topic": topic, "partition": 2147483647, "offset": int64(9223372036854775807)}
	}
	return out
}

// The offsets bound at admission is the pod annotation limit: the longest
// list the schema admits makes a Job the API server accepts, while a list
// MaxItems alone would admit makes a Job it refuses (what requests ended
// with, JobInvalid, before the bound).
func TestEnvtestOffsetsBound(t *testing.T) {
	env(t)
	ns := newNamespace(t, nil)
	ctx := context.Background()

	crd, err := os.ReadFile(filepath.Join("..", "charts", "kafka-replay", "crds", "kafkareplay.dev_replayrequests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("<= %d", replay.MaxOffsetsAnnotationBytes); !strings.Contains(string(crd), want) {
		t.Fatalf("the CRD's offsets rule does not bound at replay.MaxOffsetsAnnotationBytes (%s)", want)
	}

	entries := func(n int) []v1alpha1.PartitionOffset {
		out := make([]v1alpha1.PartitionOffset, n)
		for i := range out {
			topic := fmt.Sprintf("t%06d.", i)
			out[i] = v1alpha1.PartitionOffset{Topic: topic + strings.Repeat("x", 249-len(topic)), Partition: 2147483647, Offset: 9223372036854775807}
		}
		return out
	}
	perEntry := replay.OffsetsAnnotationBytes(entries(1))
	atBound := replay.MaxOffsetsAnnotationBytes / perEntry

	over := testutil.MakeRequest(ns, "over").Offsets(entries(atBound + 1)...).Obj()
	if err := k8s.Create(ctx, over); err == nil || !strings.Contains(err.Error(), "must fit in 240 KiB") {
		t.Fatalf("%d entries of %d bytes: %v, want refused", atBound+1, perEntry, err)
	}
	rr := testutil.MakeRequest(ns, "at-bound").Offsets(entries(atBound)...).Obj()
	create(t, rr)
	if err := launcher.ValidateSpec(&rr.Spec); err != nil {
		t.Fatalf("the launcher refuses what admission let through: %v", err)
	}

	jobFor := func(rr *v1alpha1.ReplayRequest) error {
		target, err := launcher.ResolveTarget(rr.Spec.Target, time.Now())
		if err != nil {
			return err
		}
		rr.Status.ResolvedTarget = target
		job, err := launcher.BuildJob(rr, runnerjob.StageApply, testOptions())
		if err != nil {
			return err
		}
		return k8s.Create(ctx, job)
	}
	if err := jobFor(rr); err != nil {
		t.Fatalf("the largest admitted offsets list makes a Job the API server refuses: %v", err)
	}
	tooMany := testutil.MakeRequest(ns, "max-items").Offsets(entries(2000)...).Obj()
	tooMany.UID = "uid-not-created"
	// BuildJob validates the spec and refuses to make such a Job; the API
	// server would refuse it anyway, for its annotations.
	if err := jobFor(tooMany); err == nil || !strings.Contains(err.Error(), "a pod annotation can carry") {
		t.Fatalf("2,000 long entries: BuildJob %v, want refused for the annotation bound", err)
	}
	big := make([]config.PartitionOffset, 0, len(tooMany.Spec.Target.Offsets))
	for _, o := range tooMany.Spec.Target.Offsets {
		big = append(big, config.PartitionOffset{Topic: o.Topic, Partition: o.Partition, Offset: o.Offset})
	}
	raw, err := json.Marshal(big)
	if err != nil {
		t.Fatal(err)
	}
	small := testutil.MakeRequest(ns, "max-items").Offsets(entries(1)...).Obj()
	small.UID, small.CreationTimestamp = "uid-not-created", rr.CreationTimestamp
	small.Status.ResolvedTarget = "offsets:1"
	job, err := launcher.BuildJob(small, runnerjob.StageApply, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	job.Spec.Template.Annotations[v1alpha1.AnnotationOffsets] = string(raw)
	if err := k8s.Create(ctx, job); err == nil || !strings.Contains(err.Error(), "annotations") {
		t.Fatalf("2,000 long entries: Job creation %v, want refused for its annotations", err)
	}
	if err := launcher.ValidateSpec(&tooMany.Spec); err == nil {
		t.Fatal("ValidateSpec lets through offsets too large for the annotation")
	}
}

// manyGroups is n distinct group names.
func manyGroups(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf("team-%04d", i)
	}
	return out
}
