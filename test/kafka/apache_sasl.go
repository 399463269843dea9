package kafkatest

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// SASL on Apache Kafka, for tests of clients that authenticate: with
// ApacheOptions.SASL every node gets a SASL_PLAINTEXT listener (SASLBootstrap)
// with the mechanisms PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 enabled,
// beside the PLAINTEXT listener the harness's own clients and the brokers
// use (so seeding, joining and reading back need no credentials). PLAIN
// users are fixed in the listener's JAAS configuration; SCRAM users are
// made once the cluster runs, with Kafka's own kafka-configs
// (AddSCRAMUser), as an operator makes them:
//
//	a, _ := kafkatest.StartApache(ctx, kafkatest.ApacheOptions{Libs: libs,
//		SASL: &kafkatest.SASLOptions{Plain: map[string]string{"alice": "alice-pw"}}})
//	_ = a.AddSCRAMUser(ctx, kafkatest.SCRAMSHA512, "bob", "bob-pw")
//	// clients: security.protocol=SASL_PLAINTEXT at a.SASLBootstrap()
//
// Every user is a superuser: no authorizer runs.

// SASLOptions configure the SASL_PLAINTEXT listener.
type SASLOptions struct {
	// Plain are the PLAIN users: name → password.
	Plain map[string]string
}

// The SCRAM mechanisms, as Kafka and librdkafka name them.
const (
	SCRAMSHA256 = "SCRAM-SHA-256"
	SCRAMSHA512 = "SCRAM-SHA-512"
)

// saslListener is the listener's name, and its security protocol.
const saslListener = "SASL_PLAINTEXT"

// addListener adds the SASL listener at addr to a node's properties.
func (o *SASLOptions) addListener(props map[string]string, addr string) {
	props["listeners"] += "," + saslListener + "://" + addr
	props["advertised.listeners"] += "," + saslListener + "://" + addr
	props["listener.security.protocol.map"] += "," + saslListener + ":" + saslListener
	props["sasl.enabled.mechanisms"] = strings.Join([]string{"PLAIN", SCRAMSHA256, SCRAMSHA512}, ",")
	users := make([]string, 0, len(o.Plain))
	for u := range o.Plain {
		users = append(users, u)
	}
	sort.Strings(users)
	jaas := "org.apache.kafka.common.security.plain.PlainLoginModule required"
	for _, u := range users {
		jaas += fmt.Sprintf(" user_%s=%q", u, o.Plain[u])
	}
	prefix := "listener.name." + strings.ToLower(saslListener) + "."
	props[prefix+"plain.sasl.jaas.config"] = jaas + ";"
	for _, m := range []string{SCRAMSHA256, SCRAMSHA512} {
		props[prefix+strings.ToLower(m)+".sasl.jaas.config"] = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
	}
}

// SASLBootstrap lists the brokers' SASL_PLAINTEXT listeners; empty without
// ApacheOptions.SASL.
func (a *Apache) SASLBootstrap() []string { return append([]string(nil), a.sasl...) }

// AddSCRAMUser makes (or changes) a SCRAM user with Kafka's own
// kafka-configs (ConfigCommand, through the PLAINTEXT listener), and
// returns once every broker's SASL listener accepts the credentials: the
// controller writes them to the metadata log, and each broker learns them
// in its own time.
func (a *Apache) AddSCRAMUser(ctx context.Context, mechanism, user, password string) error {
	if len(a.sasl) == 0 {
		return fmt.Errorf("apache kafka: no SASL listener (ApacheOptions.SASL)")
	}
	if mechanism != SCRAMSHA256 && mechanism != SCRAMSHA512 {
		return fmt.Errorf("apache kafka: %q is not a SCRAM mechanism", mechanism)
	}
	cmd := a.command(ctx, a.java, "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dlog4j2.configurationFile="+filepath.Join(a.nodes[0].dir, "log4j2.properties"),
		"-cp", filepath.Join(a.libs, "*"), "org.apache.kafka.tools.ConfigCommand",
		"--bootstrap-server", strings.Join(a.bootstrap, ","), "--alter",
		"--entity-type", "users", "--entity-name", user,
		"--add-config", fmt.Sprintf("%s=[password=%s]", mechanism, password))
	setProcessGroup(cmd)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kafka-configs --add-config %s for %s: %w\n%s", mechanism, user, err, out)
	}
	auth := scram.Auth{User: user, Pass: password}
	m := auth.AsSha256Mechanism()
	if mechanism == SCRAMSHA512 {
		m = auth.AsSha512Mechanism()
	}
	for _, b := range a.sasl {
		if err := a.waitAuthenticates(ctx, b, m); err != nil {
			return fmt.Errorf("%s user %s at %s: %w", mechanism, user, b, err)
		}
	}
	return nil
}

// PlainMechanism is the client side of a PLAIN user, for a helper client.
func PlainMechanism(user, password string) sasl.Mechanism {
	return plain.Auth{User: user, Pass: password}.AsMechanism()
}

// waitAuthenticates retries an authenticated request to the one broker at
// addr until it succeeds or ctx ends.
func (a *Apache) waitAuthenticates(ctx context.Context, addr string, m sasl.Mechanism) error {
	var last error
	for {
		cl, err := kgo.NewClient(append(a.ClientOpts(), kgo.SeedBrokers(addr), kgo.SASL(m), kgo.ClientID("kafkatest-scram-ready"))...)
		if err != nil {
			return err
		}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		// Metadata, not ApiVersions: Kafka answers ApiVersions before
		// authentication.
		req := kmsg.NewPtrMetadataRequest()
		req.Topics = []kmsg.MetadataRequestTopic{}
		_, last = req.RequestWith(rctx, cl)
		cancel()
		cl.Close()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("never accepted the credentials: %w (last: %w)", ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
