package strimzi

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kafka-replay/kafka-replay/runner/config"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// Strimzi's kinds at kafka.strimzi.io/v1: the only version Strimzi serves
// from 1.0 on, and served beside v1beta2 from 0.49. The fields read here are
// the same in both.
var (
	KafkaGVK     = schema.GroupVersionKind{Group: "kafka.strimzi.io", Version: "v1", Kind: "Kafka"}
	KafkaUserGVK = schema.GroupVersionKind{Group: "kafka.strimzi.io", Version: "v1", Kind: "KafkaUser"}
	// KafkaConnectorGVK is the kind a spec.consumers entry may stop.
	KafkaConnectorGVK = schema.GroupVersionKind{Group: "kafka.strimzi.io", Version: "v1", Kind: "KafkaConnector"}
)

// Upstream names.
const (
	// ClusterLabel is the label by which a KafkaUser names its Kafka
	// (io.strimzi.api.kafka.model.common.Labels STRIMZI_CLUSTER_LABEL).
	ClusterLabel = "strimzi.io/cluster"

	// The listener authentication types (KafkaListenerAuthentication
	// subclasses) and the KafkaUser ones (KafkaUserAuthentication).
	authSCRAM       = "scram-sha-512"
	authTLS         = "tls"
	authTLSExternal = "tls-external"

	// caSecretSuffix: the cluster CA's public Secret is
	// <cluster>-cluster-ca-cert, with the certificate under ca.crt
	// (KafkaResources.clusterCaCertificateSecretName, Ca.CA_CRT).
	caSecretSuffix = "-cluster-ca-cert"
	caKey          = "ca.crt"
	// The KafkaUser Secret's keys (user operator: ScramCredentials and
	// KafkaUserModel): password for scram-sha-512, user.crt and user.key
	// (PEM) for tls.
	passwordKey = "password"
	userCrtKey  = "user.crt"
	userKeyKey  = "user.key"
)

// The runner's property names.
const (
	propBootstrap = "bootstrap.servers" // the credentials' binding
	propProtocol  = "security.protocol"
	propMechanism = "sasl.mechanism"
	propUsername  = "sasl.username"
)

// ErrNotResolvable marks a clusterRef that cannot be resolved as it is now:
// a Kafka or KafkaUser missing, not ready, or without a value Strimzi
// should have written; a listener or user that does not fit. The request
// fails; other errors (the API server unreachable) are retried.
var ErrNotResolvable = errors.New("clusterRef not resolvable")

func unresolvable(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrNotResolvable}, args...)...)
}

// ErrNotReady marks the clusterRef refusals that the Strimzi operator mends
// by itself: a Kafka or KafkaUser not Ready yet, or of an older generation,
// or without the status values it writes once it has reconciled (the
// cluster's ID, the listener's servers, the user's Secret and name), and a
// KafkaConnector whose status is absent or of an older generation. Such an
// error is also ErrNotResolvable, so that a caller that does not wait
// refuses it as before; the launcher waits for the objects to change
// instead, up to its start timeout.
var ErrNotReady = errors.New("clusterRef not ready")

// notReadyError is ErrNotResolvable and ErrNotReady, and says only what it
// waits for.
type notReadyError struct{ msg string }

func (e *notReadyError) Error() string { return ErrNotResolvable.Error() + ": " + e.msg }

func (e *notReadyError) Is(target error) bool {
	return target == ErrNotReady || target == ErrNotResolvable
}

func notReady(format string, args ...any) error {
	return &notReadyError{msg: fmt.Sprintf(format, args...)}
}

// Field names of the request, for errors.
const (
	fieldName     = "kafka.clusterRef.name"
	fieldListener = "kafka.clusterRef.listener"
	fieldUser     = "kafka.clusterRef.user"
)

// CASecretName is the Secret with a cluster's CA certificate.
func CASecretName(cluster string) string {
	return cluster + caSecretSuffix
}

// Resolve resolves ref against the Kafka it names and, when ref names one,
// the KafkaUser (nil when they do not exist). Every refusal names the
// request's field or the Strimzi field it is about.
func Resolve(ref v1alpha1.StrimziClusterRef, kafka, user *unstructured.Unstructured) (v1alpha1.ResolvedKafka, error) {
	res := v1alpha1.ResolvedKafka{Name: ref.Name, Namespace: ref.Namespace, Listener: ref.Listener, User: ref.User}
	if kafka == nil {
		where := "the request's namespace"
		if ref.Namespace != "" {
			where = "namespace " + ref.Namespace
		}
		return res, unresolvable("%s: Kafka %s does not exist in %s", fieldName, ref.Name, where)
	}
	what := "Kafka " + kafka.GetName()
	res.UID = string(kafka.GetUID())
	if err := ready(kafka, what); err != nil {
		return res, err
	}
	id, _, _ := unstructured.NestedString(kafka.Object, "status", "clusterId")
	if id == "" {
		return res, notReady("%s: status.clusterId is empty", what)
	}
	res.ClusterID = id

	listener, err := specListener(kafka, ref.Listener)
	if err != nil {
		return res, err
	}
	servers, err := statusServers(kafka, ref.Listener)
	if err != nil {
		return res, err
	}
	res.BootstrapServers = servers

	tls, _, _ := unstructured.NestedBool(listener, "tls")
	auth, _, _ := unstructured.NestedString(listener, "authentication", "type")
	lwhat := fmt.Sprintf("%s: listener %s", what, ref.Listener)
	if tls {
		// A listener with its own certificate is not signed by the cluster
		// CA (GenericKafkaListenerConfiguration brokerCertChainAndKey):
		// trusting the cluster CA would fail every handshake.
		if _, set, _ := unstructured.NestedMap(listener, "configuration", "brokerCertChainAndKey"); set {
			return res, unresolvable("%s has its own certificate (configuration.brokerCertChainAndKey), not one of the cluster CA: name its servers in kafka.bootstrapServers and its CA in kafka.secretRef instead", lwhat)
		}
		if ref.Namespace != "" {
			// The runner pod cannot mount the CA's Secret from the
			// Kafka's namespace: it trusts what Strimzi publishes for the
			// listener in status instead, the same cluster CA.
			if res.CACertificates, err = statusCertificates(kafka, ref.Listener); err != nil {
				return res, err
			}
		} else {
			res.Secrets = append(res.Secrets, v1alpha1.ResolvedSecret{
				Name: CASecretName(kafka.GetName()),
				From: what + ": the cluster CA (" + CASecretName(kafka.GetName()) + ")",
				Keys: []v1alpha1.SecretKeyProperty{{Key: caKey, Property: "ssl.ca.pem"}},
			})
		}
	}
	protocol := "PLAINTEXT"
	switch auth {
	case "":
		if ref.User != "" {
			return res, unresolvable("%s: %s has no authentication (spec.kafka.listeners[].authentication), so a KafkaUser's credentials have nothing to do there: leave user out", fieldUser, lwhat)
		}
	case authSCRAM, authTLS:
		if ref.User == "" {
			return res, unresolvable("%s: %s authenticates with %s: name the KafkaUser to connect as", fieldUser, lwhat, auth)
		}
		keys, props, err := userCredentials(ref, user, auth, lwhat)
		if err != nil {
			return res, err
		}
		name, _, _ := unstructured.NestedString(user.Object, "status", "secret")
		res.Secrets = append(res.Secrets, v1alpha1.ResolvedSecret{Name: name, From: "KafkaUser " + user.GetName() + ": status.secret", Keys: keys})
		res.UserSecret = name
		res.Properties = append(res.Properties, props...)
		if auth == authSCRAM {
			protocol = "SASL_PLAINTEXT"
		}
	default:
		return res, unresolvable("%s authenticates with %s (spec.kafka.listeners[].authentication.type): only scram-sha-512 and tls are resolved; name the servers in kafka.bootstrapServers and the credentials in kafka.secretRef instead", lwhat, auth)
	}
	if tls {
		protocol = map[string]string{"PLAINTEXT": "SSL", "SASL_PLAINTEXT": "SASL_SSL"}[protocol]
	}
	res.Properties = append([]v1alpha1.KafkaProperty{
		{Name: propBootstrap, Value: servers},
		{Name: propProtocol, Value: protocol},
	}, res.Properties...)
	res.PropertiesDigest = PropertiesDigest(res.Properties)
	return res, nil
}

// PropertiesDigest is the runner's --properties-digest of resolved
// properties: the runner reads them, beside the Secrets' keys (which the
// digest leaves out), from pod annotations anyone who may patch the pod
// could change, and refuses any other.
func PropertiesDigest(ps []v1alpha1.KafkaProperty) string {
	p := config.Properties{}
	for _, kp := range ps {
		p[kp.Name] = kp.Value
	}
	return config.PropertiesDigestOf(p)
}

// specListener is the Kafka's spec.kafka.listeners entry called name
// (GenericKafkaListener).
func specListener(kafka *unstructured.Unstructured, name string) (map[string]any, error) {
	ls, _, _ := unstructured.NestedSlice(kafka.Object, "spec", "kafka", "listeners")
	var names []string
	for _, l := range ls {
		m, _ := l.(map[string]any)
		n, _ := m["name"].(string)
		if n == name {
			return m, nil
		}
		names = append(names, n)
	}
	return nil, unresolvable("%s: Kafka %s has no listener %q (spec.kafka.listeners has %s)", fieldListener, kafka.GetName(), name, quoted(names))
}

// statusServers is the listener's status.listeners[].bootstrapServers
// (ListenerStatus), in the runner's syntax and checked by its rules.
func statusServers(kafka *unstructured.Unstructured, name string) (string, error) {
	ls, _, _ := unstructured.NestedSlice(kafka.Object, "status", "listeners")
	for _, l := range ls {
		m, _ := l.(map[string]any)
		if n, _ := m["name"].(string); n != name {
			continue
		}
		s, _ := m["bootstrapServers"].(string)
		servers := strings.Join(replay.ServerList(s), ",")
		if servers == "" {
			return "", notReady("Kafka %s: status.listeners[%s].bootstrapServers is empty", kafka.GetName(), name)
		}
		if err := config.ValidateBootstrapServers(servers); err != nil {
			return "", unresolvable("Kafka %s: status.listeners[%s].bootstrapServers: %v", kafka.GetName(), name, err)
		}
		if len(servers) > 512 {
			return "", unresolvable("Kafka %s: status.listeners[%s].bootstrapServers: %d characters, more than 512", kafka.GetName(), name, len(servers))
		}
		return servers, nil
	}
	return "", notReady("Kafka %s: status.listeners has no entry for listener %s (has the Strimzi operator reconciled it?)", kafka.GetName(), name)
}

// statusCertificates are the listener's status.listeners[].certificates
// (ListenerStatus: the certificates that verify its servers, which Strimzi
// sets for TLS listeners), as one PEM bundle; each must be a PEM
// CERTIFICATE block and nothing else.
func statusCertificates(kafka *unstructured.Unstructured, name string) (string, error) {
	ls, _, _ := unstructured.NestedSlice(kafka.Object, "status", "listeners")
	for _, l := range ls {
		m, _ := l.(map[string]any)
		if n, _ := m["name"].(string); n != name {
			continue
		}
		certs, _ := m["certificates"].([]any)
		var b strings.Builder
		for i, c := range certs {
			s, _ := c.(string)
			if err := checkPEM(s); err != nil {
				return "", unresolvable("Kafka %s: status.listeners[%s].certificates[%d]: %v", kafka.GetName(), name, i, err)
			}
			b.WriteString(strings.TrimSpace(s))
			b.WriteString("\n")
		}
		if b.Len() == 0 {
			return "", notReady("Kafka %s: status.listeners[%s].certificates is empty", kafka.GetName(), name)
		}
		if b.Len() > maxCABytes {
			return "", unresolvable("Kafka %s: status.listeners[%s].certificates: %d bytes, more than %d", kafka.GetName(), name, b.Len(), maxCABytes)
		}
		return b.String(), nil
	}
	return "", notReady("Kafka %s: status.listeners has no entry for listener %s (has the Strimzi operator reconciled it?)", kafka.GetName(), name)
}

// maxCABytes is status.resolvedKafka.caCertificates' MaxLength.
const maxCABytes = 32768

// checkPEM requires s to be PEM CERTIFICATE blocks that parse as X.509
// certificates, and nothing else.
func checkPEM(s string) error {
	rest := []byte(strings.TrimSpace(s))
	n := 0
	for len(rest) > 0 {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil || blk.Type != "CERTIFICATE" {
			return errors.New("not PEM CERTIFICATE blocks")
		}
		if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
			return fmt.Errorf("not an X.509 certificate: %w", err)
		}
		rest = []byte(strings.TrimSpace(string(rest)))
		n++
	}
	if n == 0 {
		return errors.New("empty")
	}
	return nil
}

// userCredentials checks the KafkaUser against the listener and maps its
// Secret's keys, and the properties its authentication needs.
func userCredentials(ref v1alpha1.StrimziClusterRef, user *unstructured.Unstructured, listenerAuth, lwhat string) ([]v1alpha1.SecretKeyProperty, []v1alpha1.KafkaProperty, error) {
	if user == nil {
		return nil, nil, unresolvable("%s: KafkaUser %s does not exist in the request's namespace", fieldUser, ref.User)
	}
	uwhat := "KafkaUser " + user.GetName()
	if c := user.GetLabels()[ClusterLabel]; c != ref.Name {
		return nil, nil, unresolvable("%s: %s is a user of cluster %q (label %s), not of Kafka %s", fieldUser, uwhat, c, ClusterLabel, ref.Name)
	}
	if err := ready(user, uwhat); err != nil {
		return nil, nil, err
	}
	auth, _, _ := unstructured.NestedString(user.Object, "spec", "authentication", "type")
	switch {
	case auth == authTLSExternal && listenerAuth == authTLS:
		return nil, nil, unresolvable("%s: %s authenticates with tls-external (spec.authentication.type): its certificate is not in a Strimzi Secret; name the servers in kafka.bootstrapServers and the credentials in kafka.secretRef instead", fieldUser, uwhat)
	case auth != listenerAuth:
		return nil, nil, unresolvable("%s: %s authenticates with %q (spec.authentication.type), and %s with %s", fieldUser, uwhat, auth, lwhat, listenerAuth)
	}
	secret, _, _ := unstructured.NestedString(user.Object, "status", "secret")
	if secret == "" {
		return nil, nil, notReady("%s: status.secret is empty", uwhat)
	}
	if secret == CASecretName(ref.Name) {
		return nil, nil, unresolvable("%s: status.secret names the cluster CA's Secret %s", uwhat, secret)
	}
	if auth == authTLS {
		return []v1alpha1.SecretKeyProperty{
			{Key: userCrtKey, Property: "ssl.certificate.pem"},
			{Key: userKeyKey, Property: "ssl.key.pem"},
		}, nil, nil
	}
	username, _, _ := unstructured.NestedString(user.Object, "status", "username")
	if username == "" {
		return nil, nil, notReady("%s: status.username is empty", uwhat)
	}
	return []v1alpha1.SecretKeyProperty{{Key: passwordKey, Property: "sasl.password"}},
		[]v1alpha1.KafkaProperty{{Name: propMechanism, Value: "SCRAM-SHA-512"}, {Name: propUsername, Value: username}}, nil
}

// ready requires a Strimzi resource's Ready condition to be True, for its
// current generation (Status.observedGeneration): before that its status
// values may be absent, or stale for a spec that has changed.
func ready(obj *unstructured.Unstructured, what string) error {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	i := slices.IndexFunc(conds, func(c any) bool {
		m, _ := c.(map[string]any)
		return m["type"] == "Ready"
	})
	if i < 0 {
		return notReady("%s is not ready: status.conditions has no Ready condition (is the Strimzi operator running?)", what)
	}
	m, _ := conds[i].(map[string]any)
	if m["status"] != string(metav1.ConditionTrue) {
		reason, _ := m["reason"].(string)
		msg, _ := m["message"].(string)
		return notReady("%s is not ready (status.conditions Ready is %v: %s %s)", what, m["status"], reason, state.Truncate(msg, 256))
	}
	observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	if observed < obj.GetGeneration() {
		return notReady("%s: status.observedGeneration %d is behind metadata.generation %d: the Strimzi operator has not reconciled its latest spec yet", what, observed, obj.GetGeneration())
	}
	return nil
}

// current is ErrNotReady while a Strimzi resource's status is absent or
// of an older generation than its spec: its operator has not reconciled
// its latest spec yet.
func current(obj *unstructured.Unstructured, what string) error {
	st, ok, _ := unstructured.NestedMap(obj.Object, "status")
	if !ok || len(st) == 0 {
		return notReady("%s has no status yet: the Strimzi operator has not reconciled it", what)
	}
	observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	if observed < obj.GetGeneration() {
		return notReady("%s: status.observedGeneration %d is behind metadata.generation %d: the Strimzi operator has not reconciled its latest spec yet", what, observed, obj.GetGeneration())
	}
	return nil
}

func quoted(ss []string) string {
	if len(ss) == 0 {
		return "none"
	}
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// The properties and Secret keys Resolve gives, by name: all Check lets a
// status.resolvedKafka mount into the runner's secret directory.
var (
	valueProperties = map[string]bool{propBootstrap: true, propProtocol: true, propMechanism: true, propUsername: true}
	secretKeys      = map[v1alpha1.SecretKeyProperty]bool{
		{Key: caKey, Property: "ssl.ca.pem"}:               true,
		{Key: passwordKey, Property: "sasl.password"}:      true,
		{Key: userCrtKey, Property: "ssl.certificate.pem"}: true,
		{Key: userKeyKey, Property: "ssl.key.pem"}:         true,
	}
)

// Check is the Job builder's check of a status.resolvedKafka: only what
// Resolve could have made is mounted, whoever wrote status. The
// properties are Resolve's names and bind the credentials to exactly the
// servers the runner is given; the Secrets are the cluster CA's (with its
// one key) and the user's (with its credential keys); no property is set
// twice.
func Check(res v1alpha1.ResolvedKafka) error {
	if err := config.ValidateBootstrapServers(res.BootstrapServers); err != nil {
		return fmt.Errorf("status.resolvedKafka.bootstrapServers: %w", err)
	}
	if res.ClusterID == "" {
		return errors.New("status.resolvedKafka.clusterId: empty")
	}
	seen := map[string]bool{}
	for _, p := range res.Properties {
		if !valueProperties[p.Name] || seen[p.Name] {
			return fmt.Errorf("status.resolvedKafka.properties: %q is not a property a clusterRef resolves to, or is there twice", p.Name)
		}
		seen[p.Name] = true
		if p.Name == propBootstrap && p.Value != res.BootstrapServers {
			return fmt.Errorf("status.resolvedKafka.properties: %s is not status.resolvedKafka.bootstrapServers", propBootstrap)
		}
	}
	if !seen[propBootstrap] || !seen[propProtocol] {
		return fmt.Errorf("status.resolvedKafka.properties: %s and %s are missing", propBootstrap, propProtocol)
	}
	if d := res.PropertiesDigest; d != "" && d != PropertiesDigest(res.Properties) {
		// Older launchers did not write it; the Job's digest is always
		// computed from the properties.
		return errors.New("status.resolvedKafka.propertiesDigest is not the digest of status.resolvedKafka.properties")
	}
	if res.CACertificates != "" {
		if res.Namespace == "" {
			return errors.New("status.resolvedKafka.caCertificates: only for a Kafka of another namespace, whose CA Secret the runner cannot mount")
		}
		if err := checkPEM(res.CACertificates); err != nil {
			return fmt.Errorf("status.resolvedKafka.caCertificates: %w", err)
		}
		seen["ssl.ca.pem"] = true
	}
	for _, s := range res.Secrets {
		switch {
		case s.Name == CASecretName(res.Name) && res.Namespace == "":
			if len(s.Keys) != 1 || s.Keys[0] != (v1alpha1.SecretKeyProperty{Key: caKey, Property: "ssl.ca.pem"}) {
				return fmt.Errorf("status.resolvedKafka.secrets: %s is mounted with other keys than %s", s.Name, caKey)
			}
		case s.Name == res.UserSecret && s.Name != "":
		default:
			return fmt.Errorf("status.resolvedKafka.secrets: %s is neither the cluster CA's Secret nor userSecret", s.Name)
		}
		for _, k := range s.Keys {
			if !secretKeys[k] || seen[k.Property] {
				return fmt.Errorf("status.resolvedKafka.secrets: %s -> %s is not a mapping a clusterRef resolves to, or sets a property twice", k.Key, k.Property)
			}
			seen[k.Property] = true
		}
	}
	return nil
}
