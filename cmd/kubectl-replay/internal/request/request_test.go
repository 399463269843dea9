package request

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/exit"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

func TestTarget(t *testing.T) {
	cases := []struct {
		to   string
		want v1alpha1.Target
		err  string
	}{
		{to: "earliest", want: v1alpha1.Target{Position: ptr.To(v1alpha1.PositionEarliest)}},
		{to: "LATEST", want: v1alpha1.Target{Position: ptr.To(v1alpha1.PositionLatest)}},
		{to: "time:2026-03-01T09:30:00+01:00", want: v1alpha1.Target{Time: ptr.To("2026-03-01T09:30:00+01:00")}},
		{to: "time:2026-03-01T09:30:00.250Z", want: v1alpha1.Target{Time: ptr.To("2026-03-01T09:30:00.25Z")}},
		// Unix milliseconds become the RFC3339 the schema takes, in UTC.
		{to: "time:1772353800000", want: v1alpha1.Target{Time: ptr.To("2026-03-01T08:30:00Z")}},
		{to: "ago:90m", want: v1alpha1.Target{Ago: &metav1.Duration{Duration: 90 * time.Minute}}},
		{to: "offset:0", want: v1alpha1.Target{Offset: ptr.To[int64](0)}},
		{to: "shift:-100", want: v1alpha1.Target{ShiftBy: ptr.To[int64](-100)}},
		{to: "shift:+5", want: v1alpha1.Target{ShiftBy: ptr.To[int64](5)}},
		{to: "group:orders-copy", want: v1alpha1.Target{FromGroup: ptr.To("orders-copy")}},
		// A file's offsets are read here and sent sorted, inline.
		{to: "file:testdata/offsets.json", want: v1alpha1.Target{Offsets: []v1alpha1.PartitionOffset{
			{Topic: "billing", Partition: 0, Offset: 5}, {Topic: "orders", Partition: 0, Offset: 10}, {Topic: "orders", Partition: 1, Offset: 20}}}},
		// The runner's own errors, word for word.
		{to: "time:2026-03-01T09:30:00", err: "has no time zone"},
		{to: "shift:100", err: "explicit sign"},
		{to: "shift:+0", err: "must not be 0"},
		{to: "offset:-1", err: "whole number"},
		{to: "yesterday", err: "unknown target"},
		{to: "file:testdata/missing.json", err: "missing.json"},
		// plan: and undo: are the launcher's, never a user's.
		{to: "undo:/tmp/x.json", err: "kubectl replay undo"},
	}
	for _, c := range cases {
		t.Run(c.to, func(t *testing.T) {
			got, err := Target(c.to)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("Target(%q) error = %v, want one containing %q", c.to, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Target(%q): %v", c.to, err)
			}
			if g, w := mustYAML(t, got), mustYAML(t, c.want); g != w {
				t.Errorf("Target(%q) =\n%s\nwant\n%s", c.to, g, w)
			}
		})
	}
}

// A file of offsets over the request's bound is refused here, not by the
// API server after a round trip.
func TestTargetFileBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range 1999 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"topic": %q, "partition": %d, "offset": 123456789012}`, strings.Repeat("t", 200), i)
	}
	b.WriteString("]")
	path := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Target("file:" + path); err == nil || !strings.Contains(err.Error(), "more than the 245760 a request takes") {
		t.Errorf("a 1,999-entry file of long names: %v", err)
	}
}

func mustYAML(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func base() Options {
	return Options{Name: "orders-rewind", Namespace: "shop", BootstrapServers: "kafka-0.kafka:9092", Groups: []string{"orders-service"}, To: "shift:-100"}
}

// Every flag lands on its one spec field.
func TestBuildMapsEachFlag(t *testing.T) {
	o := base()
	o.ConfigMap, o.Secret = "kafka-config", "kafka-creds"
	o.Topics = []string{"orders:1,0", "billing"}
	o.Approval, o.ApprovalTimeout = "Manual", 4*time.Hour
	o.WaitForEmpty = 5 * time.Minute
	o.Consumers = []string{"deploy/orders,sts/billing", "scaledobject/payments"}
	o.MaxMessagesToReconsume = ptr.To[int64](5000)
	o.AllowSkip = true
	o.CommitMode = "Atomic"
	o.GroupType = "Share"
	o.RunnerImage, o.ServiceAccount, o.ActiveDeadline = "registry.local/runner:1", "replayer", 10*time.Minute
	rr, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: kafkareplay.dev/v1alpha1
kind: ReplayRequest
metadata:
  name: orders-rewind
  namespace: shop
spec:
  approval: Manual
  approvalTimeout: 4h0m0s
  commitMode: Atomic
  consumers:
  - kind: Deployment
    name: orders
  - kind: StatefulSet
    name: billing
  - kind: ScaledObject
    name: payments
  group: orders-service
  groupType: Share
  kafka:
    bootstrapServers: kafka-0.kafka:9092
    configMapRef:
      name: kafka-config
    secretRef:
      name: kafka-creds
  limits:
    allowSkip: true
    maxMessagesToReconsume: 5000
  runner:
    activeDeadlineSeconds: 600
    image: registry.local/runner:1
    serviceAccountName: replayer
  target:
    shiftBy: -100
  topics:
  - name: billing
  - name: orders
    partitions:
    - 0
    - 1
  waitTimeout: 5m0s
  whenGroupActive: Wait
status: {}
`
	if got := mustYAML(t, rr); got != want {
		t.Errorf("Build =\n%s\nwant\n%s", got, want)
	}
}

// --group once is spec.group, the request of one group as it always was
// (its spec digest and run ID unchanged); more than once spec.groups, in
// the order given; the selector's flags spec.groupSelector.
func TestBuildGroups(t *testing.T) {
	one, err := Build(base())
	if err != nil {
		t.Fatal(err)
	}
	if one.Spec.Group != "orders-service" || one.Spec.Groups != nil || one.Spec.GroupSelector != nil || one.Spec.ContinueOnError {
		t.Errorf("one --group: %+v", one.Spec)
	}

	o := base()
	o.Groups = []string{"billing", "audit", "search"}
	o.ContinueOnError, o.Parallelism = true, 2
	o.MaxMessagesToReconsume, o.MaxTotalMessagesToReconsume = ptr.To[int64](50), ptr.To[int64](120)
	several, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustYAML(t, several.Spec); !strings.Contains(got, "continueOnError: true\ngroups:\n- billing\n- audit\n- search\n") || !strings.Contains(got, "parallelism: 2\n") || several.Spec.Group != "" ||
		!strings.Contains(got, "limits:\n  maxMessagesToReconsume: 50\n  maxTotalMessagesToReconsume: 120\n") {
		t.Errorf("three --group:\n%s", got)
	}

	o = base()
	o.Groups = nil
	o.GroupInclude = []string{"orders-", "regex:team-[a-z]+-v[0-9]", "prefix:regex:odd"}
	o.GroupExclude = []string{"orders-canary"}
	o.GroupWithOffsetsOn = []string{"orders", "payments"}
	sel, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	want := `groupSelector:
  exclude:
  - prefix: orders-canary
  include:
  - prefix: orders-
  - regex: team-[a-z]+-v[0-9]
  - prefix: regex:odd
  withOffsetsOn:
  - orders
  - payments
`
	if got := mustYAML(t, sel.Spec); !strings.Contains(got, want) || sel.Spec.Group != "" || sel.Spec.Groups != nil {
		t.Errorf("a selector:\n%s\nwant it to hold\n%s", got, want)
	}

	// --all-groups (Kafka's flag) is a selector including every name,
	// which the exclusions narrow as any selector's.
	o = base()
	o.Groups, o.AllGroups, o.ContinueOnError = nil, true, true
	o.GroupExclude = []string{"orders-canary"}
	all, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	want = `groupSelector:
  exclude:
  - prefix: orders-canary
  include:
  - regex: .*
`
	if got := mustYAML(t, all.Spec); !strings.Contains(got, want) || all.Spec.Group != "" || !all.Spec.ContinueOnError {
		t.Errorf("--all-groups:\n%s\nwant it to hold\n%s", got, want)
	}
	p, err := GroupPattern("regex:" + AllGroupsPattern)
	if err != nil || p != all.Spec.GroupSelector.Include[0] {
		t.Errorf("--all-groups's pattern %+v is not what --group-include regex:.* gives (%+v, %v)", all.Spec.GroupSelector.Include[0], p, err)
	}
}

// --delete-all-internal-topics is spec.deleteAllInternalTopics, with
// --group-type Streams or Auto or none.
func TestBuildDeleteAllInternalTopics(t *testing.T) {
	for _, kind := range []string{"", "Auto", "Streams"} {
		o := base()
		o.GroupType, o.DeleteAllInternalTopics = kind, true
		rr, err := Build(o)
		if err != nil || !rr.Spec.DeleteAllInternalTopics {
			t.Errorf("--group-type %q: %v, spec %+v", kind, err, rr)
		}
	}
	rr, err := Build(base())
	if err != nil || rr.Spec.DeleteAllInternalTopics || strings.Contains(mustYAML(t, rr), "deleteAllInternalTopics") {
		t.Errorf("without the flag: %v, %s", err, mustYAML(t, rr))
	}
}

func TestBuildConsumerRef(t *testing.T) {
	rr, err := Build(Options{Name: "r", ConsumerRef: "kafkasource/orders", To: "ago:1h"})
	if err != nil {
		t.Fatal(err)
	}
	if ref := rr.Spec.ConsumerRef; ref == nil || ref.Kind != v1alpha1.KnativeKafkaSource || ref.Name != "orders" || rr.Spec.Group != "" || rr.Spec.Kafka.BootstrapServers != "" {
		t.Errorf("spec = %+v", rr.Spec)
	}
	for in, kind := range map[string]v1alpha1.KnativeKind{"trigger/t": v1alpha1.KnativeTrigger, "Subscription/s": v1alpha1.KnativeSubscription, "kafkasources.sources.knative.dev/k": v1alpha1.KnativeKafkaSource} {
		ref, err := KnativeRef(in)
		if err != nil || ref.Kind != kind {
			t.Errorf("KnativeRef(%q) = %+v, %v; want kind %s", in, ref, err, kind)
		}
	}
}

// A sink KafkaConnector: the group and topics from the connector, the
// cluster and the user from --cluster and --user.
func TestBuildConnectorRef(t *testing.T) {
	// As docs/strimzi.md has it: the connector stopped for the replay too.
	rr, err := Build(Options{Name: "r", ConsumerRef: "kafkaconnector/orders-sink", Cluster: "my-cluster/tls", User: "my-user", To: "ago:1h",
		Consumers: []string{"kafkaconnector/orders-sink"}, WaitForEmpty: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	want := v1alpha1.StrimziClusterRef{Name: "my-cluster", Listener: "tls", User: "my-user"}
	if ref := rr.Spec.ConsumerRef; ref == nil || ref.Kind != v1alpha1.ConsumerRefKafkaConnector || ref.Name != "orders-sink" ||
		rr.Spec.Kafka.ClusterRef == nil || *rr.Spec.Kafka.ClusterRef != want || rr.Spec.Group != "" ||
		len(rr.Spec.Consumers) != 1 || rr.Spec.Consumers[0].Kind != v1alpha1.ConsumerKafkaConnector || rr.Spec.WhenGroupActive != v1alpha1.GroupActiveWait {
		t.Errorf("spec = %+v", rr.Spec)
	}
}

func TestBuildClusterRef(t *testing.T) {
	o := base()
	o.BootstrapServers, o.Cluster, o.User = "", "my-cluster/tls", "my-user"
	rr, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	want := v1alpha1.StrimziClusterRef{Name: "my-cluster", Listener: "tls", User: "my-user"}
	if ref := rr.Spec.Kafka.ClusterRef; ref == nil || *ref != want || rr.Spec.Kafka.BootstrapServers != "" || rr.Spec.Group != o.Groups[0] {
		t.Errorf("spec = %+v", rr.Spec)
	}
}

// Each bad input is refused before anything is sent, naming the flag.
func TestBuildErrorsNameTheFlag(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Options)
		want []string
	}{
		{"nothing", func(o *Options) { *o = Options{Name: "x"} }, []string{"--bootstrap-servers: is required", "--group: is required", "--to: is required"}},
		{"bad name", func(o *Options) { o.Name = "Orders_Rewind" }, []string{"NAME \"Orders_Rewind\""}},
		{"bad servers", func(o *Options) { o.BootstrapServers = "kafka" }, []string{"--bootstrap-servers:"}},
		{"bad group", func(o *Options) { o.Groups = []string{" orders"} }, []string{"--group:"}},
		{"bad topic", func(o *Options) { o.Topics = []string{"or ders"} }, []string{"--topic:"}},
		{"bad partitions", func(o *Options) { o.Topics = []string{"orders:x"} }, []string{"--topic:"}},
		{"bad target", func(o *Options) { o.To = "time:2026-03-01" }, []string{"--to:"}},
		{"latest needs allow-skip", func(o *Options) { o.To = "latest" }, []string{"--to: latest", "--allow-skip"}},
		{"forward shift needs allow-skip", func(o *Options) { o.To = "shift:+10" }, []string{"--to: shift:+10", "--allow-skip"}},
		{"copy from itself", func(o *Options) { o.To = "group:orders-service" }, []string{"--to: group:orders-service names the group being moved"}},
		{"file with topics", func(o *Options) { o.To = "file:testdata/offsets.json"; o.Topics = []string{"orders"} }, []string{"--topic: must not be given with --to file:"}},
		{"group type", func(o *Options) { o.GroupType = "share" }, []string{`--group-type: "share" is not one of Auto, Classic, Consumer, Share, Streams`}},
		{"approval", func(o *Options) { o.Approval = "manual" }, []string{"--approval: \"manual\" is not Automatic or Manual"}},
		{"manual dry run", func(o *Options) { o.Approval = "Manual"; o.DryRun = true }, []string{"--approval: Manual already plans"}},
		{"approval timeout without manual", func(o *Options) { o.ApprovalTimeout = time.Hour }, []string{"--approval-timeout: needs --approval Manual"}},
		{"approval timeout too long", func(o *Options) { o.Approval = "Manual"; o.ApprovalTimeout = 200 * time.Hour }, []string{"--approval-timeout:"}},
		{"wait too long", func(o *Options) { o.WaitForEmpty = 25 * time.Hour }, []string{"--wait-for-empty:"}},
		{"consumers without wait", func(o *Options) { o.Consumers = []string{"deploy/x"} }, []string{"--consumers: need --wait-for-empty"}},
		{"consumer kind", func(o *Options) { o.Consumers = []string{"pod/x"}; o.WaitForEmpty = time.Minute }, []string{"--consumers: \"pod/x\" is not KIND/NAME"}},
		{"consumer twice", func(o *Options) { o.Consumers = []string{"deploy/x", "deployment/x"}; o.WaitForEmpty = time.Minute }, []string{"--consumers: \"deployment/x\" is named twice"}},
		{"negative limit", func(o *Options) { o.MaxMessagesToReconsume = ptr.To[int64](-1) }, []string{"--max-messages-to-reconsume: -1 is negative"}},
		{"commit mode", func(o *Options) { o.CommitMode = "atomic" }, []string{`--commit-mode: "atomic" is not one of Atomic, Plain, Auto`}},
		{"deadline fraction", func(o *Options) { o.ActiveDeadline = 1500 * time.Millisecond }, []string{"--active-deadline:"}},
		{"consumer-ref with group", func(o *Options) { o.ConsumerRef = "trigger/t" }, []string{"--bootstrap-servers: must not be given with --consumer-ref", "--group: must not be given with --consumer-ref"}},
		{"cluster with servers and secret", func(o *Options) { o.Cluster, o.Secret = "c/tls", "creds" }, []string{"--bootstrap-servers: must not be given with --cluster", "--secret: must not be given with --cluster"}},
		{"cluster without listener", func(o *Options) { o.BootstrapServers, o.Cluster = "", "my-cluster" }, []string{`--cluster: "my-cluster" is not KAFKA/LISTENER`}},
		{"cluster listener", func(o *Options) { o.BootstrapServers, o.Cluster = "", "c/External" }, []string{`--cluster: listener "External" is not a Strimzi listener name`}},
		{"user without cluster", func(o *Options) { o.User = "u" }, []string{"--user: is a KafkaUser of the --cluster cluster"}},
		{"bad user", func(o *Options) { o.BootstrapServers, o.Cluster, o.User = "", "c/tls", "U_1" }, []string{"--cluster: --user:"}},
		{"consumer-ref with cluster", func(o *Options) {
			o.ConsumerRef, o.Cluster = "trigger/t", "c/tls"
			o.Groups, o.BootstrapServers = nil, ""
		}, []string{"--cluster: must not be given with --consumer-ref"}},
		{"connector without cluster", func(o *Options) { o.ConsumerRef = "kctr/sink"; o.Groups, o.BootstrapServers = nil, "" }, []string{"--cluster: is required with --consumer-ref kctr/sink"}},
		{"connector with group", func(o *Options) { o.ConsumerRef, o.Cluster = "kafkaconnector/sink", "c/tls"; o.BootstrapServers = "" }, []string{"--group: must not be given with --consumer-ref kafkaconnector/sink, which takes it from the connector"}},
		{"consumer-ref kind", func(o *Options) { o.ConsumerRef = "deploy/t"; o.Groups, o.BootstrapServers = nil, "" }, []string{"--consumer-ref: \"deploy/t\" is not KIND/NAME"}},
		// Several groups (spec.groups) and a selector (spec.groupSelector).
		{"group twice", func(o *Options) { o.Groups = []string{"a", "b", "a"} }, []string{`--group: "a" is given twice`}},
		{"a bad group of several", func(o *Options) { o.Groups = []string{"a", "b\x01"} }, []string{`--group: "b\x01":`}},
		{"too many groups", func(o *Options) {
			o.Groups = nil
			for i := range 501 {
				o.Groups = append(o.Groups, fmt.Sprintf("g%d", i))
			}
		}, []string{"--group: given 501 times; a request takes at most 500 groups"}},
		{"copy from one of the groups", func(o *Options) { o.Groups = []string{"a", "b"}; o.To = "group:b" }, []string{"--to: group:b names one of the groups being moved"}},
		{"continue-on-error with one group", func(o *Options) { o.ContinueOnError = true }, []string{"--continue-on-error: applies to a request over several groups; this one has one --group"}},
		{"continue-on-error with consumer-ref", func(o *Options) {
			o.ConsumerRef, o.Groups, o.BootstrapServers, o.ContinueOnError = "trigger/t", nil, "", true
		}, []string{"--continue-on-error: applies to a request over several groups"}},
		{"parallelism with one group", func(o *Options) { o.Parallelism = 2 }, []string{"--parallelism: applies to a request over several groups; this one has one --group"}},
		{"a total with one group", func(o *Options) { o.MaxTotalMessagesToReconsume = ptr.To[int64](5) }, []string{"--max-total-messages-to-reconsume: applies to a request over several groups; this one has one --group, whose total --max-messages-to-reconsume bounds"}},
		{"a negative total", func(o *Options) { o.Groups, o.MaxTotalMessagesToReconsume = []string{"a", "b"}, ptr.To[int64](-1) }, []string{"--max-total-messages-to-reconsume: -1 is negative"}},
		{"a total with consumer-ref", func(o *Options) {
			o.ConsumerRef, o.Groups, o.BootstrapServers = "trigger/t", nil, ""
			o.MaxTotalMessagesToReconsume = ptr.To[int64](5)
		}, []string{"--max-total-messages-to-reconsume: applies to a request over several groups"}},
		{"parallelism out of bounds", func(o *Options) { o.Groups, o.Parallelism = []string{"a", "b"}, 11 }, []string{"--parallelism: 11 must be from 1 to 10"}},
		{"parallelism with consumers", func(o *Options) {
			o.Groups, o.Parallelism, o.Consumers, o.WaitForEmpty = []string{"a", "b"}, 2, []string{"deploy/x"}, time.Minute
		}, []string{"--parallelism: must be 1 with --consumers"}},
		{"groups and a selector", func(o *Options) { o.GroupInclude = []string{"orders-"} }, []string{"--group: conflicts with --group-include"}},
		{"groups and all groups", func(o *Options) { o.AllGroups = true }, []string{"--group: conflicts with --group-include, --all-groups"}},
		{"all groups and include", func(o *Options) { o.Groups, o.AllGroups, o.GroupInclude = nil, true, []string{"a"} }, []string{"--all-groups: conflicts with --group-include"}},
		{"all groups of a cluster", func(o *Options) { o.Groups, o.AllGroups, o.Cluster, o.BootstrapServers = nil, true, "c/tls", "" }, []string{"--cluster: selecting the groups (--group-include, --all-groups) with --cluster is not built"}},
		{"all groups with consumer-ref", func(o *Options) {
			o.ConsumerRef, o.Groups, o.BootstrapServers, o.AllGroups = "trigger/t", nil, "", true
		}, []string{"--all-groups: must not be given with --consumer-ref"}},
		{"exclude without include", func(o *Options) { o.Groups, o.GroupExclude = nil, []string{"x"} }, []string{"--group-include: is required with --group-exclude"}},
		{"offsets-on without include", func(o *Options) { o.Groups, o.GroupWithOffsetsOn = nil, []string{"orders"} }, []string{"--group-include: is required"}},
		{"bad regex", func(o *Options) { o.Groups, o.GroupInclude = nil, []string{"regex:orders-("} }, []string{`--group-include: "orders-(" is not a regular expression (RE2)`}},
		{"empty regex", func(o *Options) { o.Groups, o.GroupInclude = nil, []string{"regex:"} }, []string{`--group-include: "regex:": the regular expression is empty`}},
		{"empty prefix", func(o *Options) { o.Groups, o.GroupInclude, o.GroupExclude = nil, []string{"a"}, []string{"prefix:"} }, []string{`--group-exclude: "prefix:": the prefix is empty`}},
		{"padded prefix", func(o *Options) { o.Groups, o.GroupInclude = nil, []string{" a"} }, []string{`--group-include: prefix " a":`}},
		{"bad offsets topic", func(o *Options) {
			o.Groups, o.GroupInclude, o.GroupWithOffsetsOn = nil, []string{"a"}, []string{"or ders"}
		}, []string{"--group-with-offsets-on: topic name"}},
		{"offsets topic twice", func(o *Options) {
			o.Groups, o.GroupInclude, o.GroupWithOffsetsOn = nil, []string{"a"}, []string{"o", "o"}
		}, []string{`--group-with-offsets-on: "o" is given twice`}},
		{"selector with consumer-ref", func(o *Options) {
			o.ConsumerRef, o.Groups, o.BootstrapServers, o.GroupInclude = "trigger/t", nil, "", []string{"a"}
		}, []string{"--group-include: must not be given with --consumer-ref"}},
		{"internal topics of a share group", func(o *Options) { o.GroupType, o.DeleteAllInternalTopics = "Share", true }, []string{"--delete-all-internal-topics: only a streams group has internal topics to delete, and --group-type says Share"}},
		{"internal topics of a classic group", func(o *Options) { o.GroupType, o.DeleteAllInternalTopics = "Classic", true }, []string{"--delete-all-internal-topics: only a streams group"}},
		{"internal topics of a consumer-ref", func(o *Options) {
			o.ConsumerRef, o.DeleteAllInternalTopics = "trigger/t", true
			o.Groups, o.BootstrapServers = nil, ""
		}, []string{"--delete-all-internal-topics: a --consumer-ref's group is a consumer group, never a streams group"}},
		{"internal topics of several groups", func(o *Options) { o.Groups, o.DeleteAllInternalTopics = []string{"a", "b"}, true }, []string{"--delete-all-internal-topics: deletes the internal topics of one streams group"}},
		{"internal topics of a selector", func(o *Options) { o.Groups, o.GroupInclude, o.DeleteAllInternalTopics = nil, []string{"a"}, true }, []string{"--delete-all-internal-topics: deletes the internal topics of one streams group"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := base()
			c.edit(&o)
			rr, err := Build(o)
			if err == nil {
				t.Fatalf("Build accepted %+v: %+v", o, rr.Spec)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func succeeded(rr *v1alpha1.ReplayRequest) *v1alpha1.ReplayRequest {
	rr.Status.JobName = rr.Name + "-abc"
	rr.Status.Phase = v1alpha1.PhaseSucceeded
	rr.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionSucceeded, Status: metav1.ConditionTrue, Reason: "Applied"}}
	rr.Status.Result = &v1alpha1.ReplayResult{Reason: "Applied", Totals: v1alpha1.ResultTotals{Partitions: 3, Applied: 3}}
	return rr
}

func TestUndo(t *testing.T) {
	o := base()
	o.WaitForEmpty = time.Minute
	o.Consumers = []string{"deploy/orders"}
	o.Secret = "creds"
	o.CommitMode = "Atomic"
	done, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	succeeded(done)
	rr, err := Undo(done, UndoOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if rr.Name != "orders-rewind-undo" || rr.Namespace != "shop" || *rr.Spec.Target.UndoOf != "orders-rewind" || !rr.Spec.Force {
		t.Errorf("undo = %+v", rr)
	}
	// The same group, servers, credentials, consumers and wait: the
	// launcher refuses an undo whose group or servers differ.
	if rr.Spec.Group != done.Spec.Group || rr.Spec.Kafka != done.Spec.Kafka && mustYAML(t, rr.Spec.Kafka) != mustYAML(t, done.Spec.Kafka) ||
		len(rr.Spec.Consumers) != 1 || rr.Spec.WhenGroupActive != v1alpha1.GroupActiveWait || rr.Spec.WaitTimeout.Duration != time.Minute || len(rr.Spec.Topics) != 0 ||
		rr.Spec.CommitMode != "Atomic" {
		t.Errorf("undo spec = %+v", rr.Spec)
	}
	// --commit-mode overrides the undone request's, checked as create checks it.
	if u, err := Undo(done, UndoOptions{CommitMode: "Plain"}); err != nil || u.Spec.CommitMode != "Plain" {
		t.Errorf("undo --commit-mode Plain = %+v, %v", u, err)
	}
	if _, err := Undo(done, UndoOptions{CommitMode: "plain"}); err == nil || exit.CodeOf(err) != exit.Usage || !strings.Contains(err.Error(), `--commit-mode: "plain" is not one of Atomic, Plain, Auto`) {
		t.Errorf("undo --commit-mode plain: %v", err)
	}
	if _, err := Undo(done, UndoOptions{MaxTotalMessagesToReconsume: ptr.To[int64](3)}); err == nil || exit.CodeOf(err) != exit.Usage || !strings.Contains(err.Error(), "--max-total-messages-to-reconsume: applies to the undo of a request over several groups") {
		t.Errorf("undo of one group with a total: %v", err)
	}
	if u, _ := Undo(done, UndoOptions{Name: "again", Approval: "Manual", MaxMessagesToReconsume: ptr.To[int64](3)}); u.Name != "again" || u.Spec.Approval != v1alpha1.ApprovalManual || *u.Spec.Limits.MaxMessagesToReconsume != 3 || u.Spec.Force {
		t.Errorf("undo with options = %+v", u)
	}
	// --allow-skip, for the undo of a share group's rewind; an undo's
	// spec does not copy the undone request's.
	if u, _ := Undo(done, UndoOptions{AllowSkip: true, MaxMessagesToReconsume: ptr.To[int64](3)}); u.Spec.Limits == nil || !u.Spec.Limits.AllowSkip || *u.Spec.Limits.MaxMessagesToReconsume != 3 {
		t.Errorf("undo --allow-skip = %+v", u.Spec.Limits)
	}
	if u, _ := Undo(done, UndoOptions{}); u.Spec.Limits != nil && u.Spec.Limits.AllowSkip {
		t.Errorf("undo without --allow-skip allows skips: %+v", u.Spec.Limits)
	}
	if n := UndoName(strings.Repeat("a", 253)); len(n) != 253 || !strings.HasSuffix(n, "-undo") {
		t.Errorf("UndoName of a 253-character name = %q (%d)", n, len(n))
	}
}

func TestCanUndo(t *testing.T) {
	mk := func(edit func(*v1alpha1.ReplayRequest)) *v1alpha1.ReplayRequest {
		rr, err := Build(base())
		if err != nil {
			t.Fatal(err)
		}
		succeeded(rr)
		edit(rr)
		return rr
	}
	cases := []struct {
		name string
		rr   *v1alpha1.ReplayRequest
		want string
	}{
		{"succeeded", mk(func(*v1alpha1.ReplayRequest) {}), ""},
		{"dry run", mk(func(r *v1alpha1.ReplayRequest) { r.Spec.DryRun = true }), "was a dry run"},
		{"dry run by its result", mk(func(r *v1alpha1.ReplayRequest) { r.Status.Result.DryRun = true }), "was a dry run"},
		{"running", mk(func(r *v1alpha1.ReplayRequest) { r.Status.Conditions = nil; r.Status.Phase = v1alpha1.PhaseRunning }), "has not finished yet (phase Running)"},
		{"failed", mk(func(r *v1alpha1.ReplayRequest) {
			r.Status.Conditions[0].Status, r.Status.Conditions[0].Reason = metav1.ConditionFalse, "GroupActive"
		}), "did not succeed (GroupActive"},
		{"no job", mk(func(r *v1alpha1.ReplayRequest) { r.Status.JobName = "" }), "has no runner Job"},
		{"nothing applied", mk(func(r *v1alpha1.ReplayRequest) { r.Status.Result.Totals.Applied = 0 }), "applied no partition"},
	}
	for _, c := range cases {
		err := CanUndo(c.rr)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		case c.want != "" && exit.CodeOf(err) != exit.WrongState:
			t.Errorf("%s: exit code %d, want %d", c.name, exit.CodeOf(err), exit.WrongState)
		}
	}
}

func TestDecidable(t *testing.T) {
	manual := func(edit func(*v1alpha1.ReplayRequest)) *v1alpha1.ReplayRequest {
		o := base()
		o.Approval = "Manual"
		rr, err := Build(o)
		if err != nil {
			t.Fatal(err)
		}
		rr.Status.Phase = v1alpha1.PhaseAwaitingApproval
		rr.Status.Plan = &v1alpha1.PlanSummary{Digest: "0123456789abcdef", JobName: "j"}
		edit(rr)
		return rr
	}
	cases := []struct {
		name string
		rr   *v1alpha1.ReplayRequest
		want string
	}{
		{"awaiting", manual(func(*v1alpha1.ReplayRequest) {}), ""},
		{"automatic", manual(func(r *v1alpha1.ReplayRequest) {
			r.Spec.Approval = v1alpha1.ApprovalAutomatic
			r.Status.Phase = v1alpha1.PhaseRunning
		}), "not a request with --approval Manual"},
		{"planning", manual(func(r *v1alpha1.ReplayRequest) { r.Status.Phase = v1alpha1.PhaseRunning; r.Status.Plan = nil }), "not awaiting approval (phase Running); its plan is not ready yet"},
		{"approved", manual(func(r *v1alpha1.ReplayRequest) {
			r.Status.Phase = v1alpha1.PhaseSucceeded
			r.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: "bob"}
		}), "already approved by bob"},
		{"rejected", manual(func(r *v1alpha1.ReplayRequest) {
			r.Status.Phase = v1alpha1.PhaseFailed
			r.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalRejected}
		}), "already rejected by unknown"},
		{"a child, awaiting: its parent is decided", manual(func(r *v1alpha1.ReplayRequest) {
			r.Namespace, r.Name = "shop", "incident-0a1b2c3d4e"
			r.Labels = map[string]string{v1alpha1.LabelParent: "incident"}
			r.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ReplayRequest", Name: "incident", UID: "p-uid", Controller: ptr.To(true)}}
		}), "cannot approve incident-0a1b2c3d4e: it is a child of incident, whose one plan covers all its groups; approve incident instead (kubectl replay approve incident -n shop)"},
		{"a child by its owner reference alone", manual(func(r *v1alpha1.ReplayRequest) {
			r.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ReplayRequest", Name: "incident", UID: "p-uid", Controller: ptr.To(true)}}
		}), "it is a child of incident"},
		{"a child by its label alone", manual(func(r *v1alpha1.ReplayRequest) {
			r.Labels = map[string]string{v1alpha1.LabelParent: "incident"}
		}), "it is a child of incident"},
	}
	for _, c := range cases {
		err := Decidable(c.rr, "approve")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		case c.want != "" && exit.CodeOf(err) != exit.WrongState:
			t.Errorf("%s: exit code %d", c.name, exit.CodeOf(err))
		}
	}
}

// A plugin user is told the flags they typed, each with the field it set
// (issue 32, friction 8: they were told about spec.whenGroupActive and
// spec.kafka.secretRef, not --wait-for-empty and --secret).
func TestInPluginWords(t *testing.T) {
	for in, want := range map[string]string{
		"group is active (state Stable, 1 member(s): w-1@10.0.0.1); stop its consumers first, or use spec.whenGroupActive: Wait (with a spec.waitTimeout)": "group is active (state Stable, 1 member(s): w-1@10.0.0.1); stop its consumers first, or use --wait-for-empty (spec.whenGroupActive: Wait (with a spec.waitTimeout))",
		"stop those consumers, or wait longer (spec.waitTimeout)":                "stop those consumers, or wait longer (--wait-for-empty (spec.waitTimeout))",
		`spec.kafka.secretRef.name: Secret "kafka-credentials" not found`:        `--secret (spec.kafka.secretRef.name): Secret "kafka-credentials" not found`,
		"to skip them anyway set spec.limits.allowSkip.":                         "to skip them anyway set --allow-skip (spec.limits.allowSkip).",
		"spec.approvalTimeout ran out; spec.approval is Manual":                  "--approval-timeout (spec.approvalTimeout) ran out; --approval (spec.approval) is Manual",
		"status.plan (the approved plan) and spec.unknownField stay as they are": "status.plan (the approved plan) and spec.unknownField stay as they are",
	} {
		if got := InPluginWords(in); got != want {
			t.Errorf("InPluginWords(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}

// InPluginWords's flags are the ones docs/kubectl-replay.md's create table
// gives for each field: the two say the same, and a test holds them so.
func TestInPluginWordsMatchesTheDocsTable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "kubectl-replay.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rows [][2]string
	for _, l := range strings.Split(string(b), "\n") {
		if cells := strings.Split(l, "|"); len(cells) == 4 && strings.Contains(cells[1], "--") {
			rows = append(rows, [2]string{cells[1], cells[2]})
		}
	}
	for field, flag := range specFlags {
		found := false
		for _, r := range rows {
			if strings.Contains(r[0], "--"+flag) && strings.Contains(r[1], "`"+strings.TrimPrefix(field, "spec.")) {
				found = true
			}
		}
		if !found {
			t.Errorf("docs/kubectl-replay.md's create table has no row with --%s for %s", flag, field)
		}
	}
}

// The undo of a request over several groups is one request naming it:
// the same Kafka, no group (the launcher undoes each group that applied,
// as the parent's rows say). One that has not finished, a dry run, and one
// where no group succeeded are refused before anything is made.
func TestUndoParent(t *testing.T) {
	mk := func(edit func(*v1alpha1.ReplayRequest)) *v1alpha1.ReplayRequest {
		o := base()
		o.Groups = []string{"billing", "audit", "search"}
		o.Secret, o.Parallelism, o.ContinueOnError = "creds", 2, true
		rr, err := Build(o)
		if err != nil {
			t.Fatal(err)
		}
		rr.Status.Phase = v1alpha1.PhaseFailed
		rr.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionFinished, Status: metav1.ConditionTrue, Reason: "PartiallyApplied"}}
		rr.Status.Groups = []v1alpha1.GroupStatus{{Group: "billing", Phase: "Succeeded"}, {Group: "audit", Phase: "Failed"}, {Group: "search", Phase: "NotAttempted"}}
		edit(rr)
		return rr
	}
	u, err := Undo(mk(func(*v1alpha1.ReplayRequest) {}), UndoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u.Name != "orders-rewind-undo" || *u.Spec.Target.UndoOf != "orders-rewind" || u.Spec.Group != "" || u.Spec.Groups != nil || u.Spec.GroupSelector != nil ||
		u.Spec.Kafka.SecretRef == nil || u.Spec.Kafka.BootstrapServers != "kafka-0.kafka:9092" || u.Spec.Parallelism != 2 || !u.Spec.ContinueOnError || u.Spec.Limits != nil {
		t.Errorf("undo of a parent: %+v", u.Spec)
	}
	if u, err := Undo(mk(func(*v1alpha1.ReplayRequest) {}), UndoOptions{MaxTotalMessagesToReconsume: ptr.To[int64](500)}); err != nil || u.Spec.Limits == nil || *u.Spec.Limits.MaxTotalMessagesToReconsume != 500 {
		t.Errorf("undo of a parent with a total: %+v, %v", u, err)
	}
	if _, err := Undo(mk(func(*v1alpha1.ReplayRequest) {}), UndoOptions{MaxTotalMessagesToReconsume: ptr.To[int64](-1)}); err == nil || !strings.Contains(err.Error(), "--max-total-messages-to-reconsume: -1 is negative") {
		t.Errorf("a negative total: %v", err)
	}
	for name, c := range map[string]struct {
		edit func(*v1alpha1.ReplayRequest)
		want string
	}{
		"running":    {func(r *v1alpha1.ReplayRequest) { r.Status.Conditions, r.Status.Phase = nil, v1alpha1.PhaseRunning }, "has not finished yet (phase Running)"},
		"dry run":    {func(r *v1alpha1.ReplayRequest) { r.Spec.DryRun = true }, "was a dry run"},
		"none moved": {func(r *v1alpha1.ReplayRequest) { r.Status.Groups[0].Phase = "Failed" }, "no group of orders-rewind succeeded"},
	} {
		_, err := Undo(mk(c.edit), UndoOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) || exit.CodeOf(err) != exit.WrongState {
			t.Errorf("%s: %v, want %q (exit %d)", name, err, c.want, exit.WrongState)
		}
	}
}
