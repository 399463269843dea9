package strimzi

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kafka-replay/kafka-replay/runner/config"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// A sink KafkaConnector as a consumerRef. Kafka Connect runs a sink
// connector's tasks as the consumers of one group: connect-<name>
// (ConnectorConfig / WorkerSinkTask), unless the connector's config
// overrides consumer.group.id (consumer.override.group.id, KIP-458); they
// consume the topics of its config's topics, or those that match its
// topics.regex. The Strimzi operator gives the connector's status what
// Kafka Connect's REST API reports (KafkaConnectorStatus: connectorStatus,
// its type sink or source, and topics, the topics the connector has used).
// The Kafka comes from the request's kafka.clusterRef, checked against the
// KafkaConnect's spec.bootstrapServers, so the replay is of the connector's
// group on the cluster the connector consumes from; the credentials are the
// clusterRef's user's, never the KafkaConnect's own.

// KafkaConnectGVK is the Kafka Connect cluster a KafkaConnector runs on.
var KafkaConnectGVK = schema.GroupVersionKind{Group: "kafka.strimzi.io", Version: "v1", Kind: "KafkaConnect"}

// Upstream names of Strimzi and Kafka Connect.
const (
	// UseConnectorResources is the KafkaConnect annotation without which
	// the Strimzi operator ignores its KafkaConnectors (and their
	// spec.state).
	UseConnectorResources = "strimzi.io/use-connector-resources"
	// connectorOffsetsAnnotation asks the Strimzi operator (0.44 and later)
	// to list, alter or reset a connector's offsets.
	connectorOffsetsAnnotation = "strimzi.io/connector-offsets"
	groupOverride              = "consumer.override.group.id"
	sinkTopics                 = "topics"
	sinkTopicsRegex            = "topics.regex"
	connectGroupPrefix         = "connect-"
)

// ResolveConnector resolves a KafkaConnector (nil: it does not exist), its
// KafkaConnect (nil: it does not exist) and the request's Kafka (resolved
// already, and ready) into the group and topics a replay of it moves. The
// connector must be a sink connector that is not stopped, ready for its
// current generation, on a KafkaConnect that uses KafkaConnector
// resources and connects to that Kafka.
func ResolveConnector(name string, connector, connect, kafka *unstructured.Unstructured, clusterRef string) (v1alpha1.ResolvedConsumer, error) {
	res := v1alpha1.ResolvedConsumer{Kind: v1alpha1.ConsumerRefKafkaConnector, Name: name}
	if connector == nil {
		return res, unresolvable("consumerRef: KafkaConnector %s does not exist in the request's namespace", name)
	}
	what := "KafkaConnector " + name
	res.UID = string(connector.GetUID())
	cluster := connector.GetLabels()[ClusterLabel]
	if cluster == "" {
		return res, unresolvable("%s has no %s label naming its KafkaConnect", what, ClusterLabel)
	}
	if connect == nil {
		return res, unresolvable("%s: KafkaConnect %s (its %s label) does not exist in the request's namespace", what, cluster, ClusterLabel)
	}
	if connect.GetAnnotations()[UseConnectorResources] != "true" {
		return res, unresolvable("%s: KafkaConnect %s does not have the annotation %s: \"true\", so the Strimzi operator manages no KafkaConnector of it (and could not stop this one for the replay)", what, cluster, UseConnectorResources)
	}
	// A source connector is refused whatever its status's age: its type
	// follows its class, which a replay would not change. Otherwise a
	// status not yet written, or of an older generation (as right after a
	// replay restored spec.state), is waited for; a current one that is
	// not Ready is refused.
	if typ, _, _ := unstructured.NestedString(connector.Object, "status", "connectorStatus", "type"); typ == "source" {
		return res, unresolvable("%s is a source connector: its offsets are positions in the system it reads, kept by Kafka Connect, not a consumer group's; use Strimzi's own offsets management (Strimzi 0.44 and later): spec.alterOffsets or the %s annotation on the KafkaConnector (list, alter, reset)", what, connectorOffsetsAnnotation)
	}
	if err := current(connector, what); err != nil {
		return res, err
	}
	if err := ready(connector, what); err != nil {
		return res, unresolvable("%s", strings.TrimPrefix(err.Error(), ErrNotResolvable.Error()+": "))
	}
	switch typ, _, _ := unstructured.NestedString(connector.Object, "status", "connectorStatus", "type"); typ {
	case "sink":
	case "":
		return res, unresolvable("%s: status.connectorStatus.type is empty: Kafka Connect has not reported whether it is a sink connector yet", what)
	default:
		return res, unresolvable("%s: status.connectorStatus.type is %q, not sink", what, typ)
	}
	stopped, _, _ := unstructured.NestedString(connector.Object, "status", "connectorStatus", "connector", "state")
	if st, _, _ := unstructured.NestedString(connector.Object, "spec", "state"); st == "stopped" || stopped == "STOPPED" {
		return res, unresolvable("%s is stopped (spec.state %q, Kafka Connect reports %q): a stopped connector's offsets are Kafka Connect's to manage (KIP-875), and a replay that restores it would leave it stopped; use Strimzi's spec.alterOffsets and the %s annotation, or set spec.state: running and create the request again, naming the connector in consumers so that the replay stops and restarts it", what, st, stopped, connectorOffsetsAnnotation)
	}

	cfg, _, _ := unstructured.NestedMap(connector.Object, "spec", "config")
	res.Group, res.GroupFrom = connectGroupPrefix+name, what+": Kafka Connect's connect-<name> (no spec.config."+groupOverride+")"
	if g, ok := cfg[groupOverride]; ok {
		s, _ := g.(string)
		res.Group, res.GroupFrom = s, what+": spec.config."+groupOverride
	}
	topics, hasTopics := cfg[sinkTopics]
	regex, hasRegex := cfg[sinkTopicsRegex]
	switch {
	case hasTopics && hasRegex:
		return res, unresolvable("%s: spec.config sets both %s and %s, which Kafka Connect refuses", what, sinkTopics, sinkTopicsRegex)
	case hasTopics:
		s, _ := topics.(string)
		res.Topics, res.TopicsFrom = commaList(s), what+": spec.config."+sinkTopics
	case hasRegex:
		// The topics the regex matches now are Kafka's to say; Kafka
		// Connect reports those the connector has used, once.
		st, _, _ := unstructured.NestedStringSlice(connector.Object, "status", "topics")
		res.Topics, res.TopicsFrom = slices.Compact(slices.Sorted(slices.Values(st))), what+": status.topics (its spec.config."+sinkTopicsRegex+" resolved once, as Kafka Connect reports it)"
		if len(res.Topics) == 0 {
			return res, unresolvable("%s: spec.config.%s is %q and status.topics is empty: Kafka Connect reports no topic the connector consumes yet", what, sinkTopicsRegex, regex)
		}
		res.Warnings = append(res.Warnings, fmt.Sprintf("the topics are those %s has used so far (status.topics), matched by its %s %q: a topic created since is not replayed", what, sinkTopicsRegex, regex))
	default:
		return res, unresolvable("%s: spec.config sets neither %s nor %s", what, sinkTopics, sinkTopicsRegex)
	}
	if len(res.Topics) == 0 {
		return res, unresolvable("%s: spec.config.%s names no topic", what, sinkTopics)
	}
	if len(res.Topics) > 100 {
		return res, unresolvable("%s: %d topics (%s), more than the 100 a request may replay", what, len(res.Topics), res.TopicsFrom)
	}

	servers, _, _ := unstructured.NestedString(connect.Object, "spec", "bootstrapServers")
	listener, listenerServers := connectListener(kafka, servers)
	if listener == "" {
		return res, unresolvable("%s: its KafkaConnect %s connects to %q (spec.bootstrapServers), which is none of Kafka %s's listeners (kafka.clusterRef.name): name the Kafka the connector consumes from", what, cluster, servers, clusterRef)
	}
	res.BootstrapServers = listenerServers
	res.BootstrapServersFrom = fmt.Sprintf("KafkaConnect %s: spec.bootstrapServers, Kafka %s's listener %s", cluster, kafka.GetName(), listener)
	res.Pause = fmt.Sprintf("name it in consumers ({kind: KafkaConnector, name: %s}) with whenGroupActive: Wait, and the launcher stops it through spec.state for the replay and puts its state back afterwards", name)
	if err := config.ValidateGroup(res.Group); err != nil {
		return res, unresolvable("%s: %v", res.GroupFrom, err)
	}
	return res, nil
}

// connectListener is the Kafka's listener whose status bootstrapServers
// name the KafkaConnect's spec.bootstrapServers (replay.SameServers), and
// those servers; "" when none does.
func connectListener(kafka *unstructured.Unstructured, servers string) (string, string) {
	ls, _, _ := unstructured.NestedSlice(kafka.Object, "status", "listeners")
	for _, l := range ls {
		m, _ := l.(map[string]any)
		s, _ := m["bootstrapServers"].(string)
		if replay.ServersKey(servers) != "" && replay.SameServers(s, servers) {
			n, _ := m["name"].(string)
			return n, strings.Join(replay.ServerList(s), ",")
		}
	}
	return "", ""
}

// commaList splits a Kafka Connect list setting (topics) into its
// trimmed, non-empty entries.
func commaList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}
