// Package devsample is what `make dev-cluster` adds to a real cluster so
// that the docs' examples have something to act on: the live consumer of
// group billing as a Deployment, producers that keep writing timestamped
// records, the Kafka credentials Secret the runbook example names, and a
// ServiceAccount whose token reads the launcher's metrics. The dev cluster
// (test/dev-cluster) and the e2e's run of the docs (TestDocsRunAsWritten)
// both set it up with these functions, so what the e2e proves is what a
// reader of the docs finds on the dev cluster.
package devsample

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-replay/kafka-replay/test/cluster"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// What the docs' examples name.
const (
	Release   = "kafka-replay"
	Namespace = "kafka-replay-system" // as every doc installs it
	// LiveGroup has one live consumer, LiveConsumer, a Deployment in
	// AppNamespace (docs/usage.md's pause example). Not namespace shop,
	// which the README's walk-through creates itself.
	LiveGroup     = "billing"
	AppNamespace  = "billing"
	LiveConsumer  = "billing-consumer"
	ConsumerImage = "localhost/kafka-replay-dev-consumer:1"
	IdleGroup     = "audit" // no members: replays apply at once
	// MetricsScraper is the ServiceAccount whose token reads /metrics
	// (bound to the chart's <fullname>-metrics-reader ClusterRole).
	MetricsScraper = "metrics-scraper"
	// CredentialsSecret is the Secret the runbook example of
	// docs/usage.md names, in the release namespace.
	CredentialsSecret = "kafka-credentials"
	// RecordInterval is how often the producers write to each partition.
	RecordInterval = time.Second
)

// Topic is a sample topic.
type Topic struct {
	Name       string
	Partitions int32
	Records    int // seeded before the producers start, one RecordInterval apart
}

// Topics are the sample topics. payments has 3 partitions because the
// walk-through of docs/usage.md names partitions 0, 1 and 2 of it.
var Topics = []Topic{{"orders", 3, 600}, {"payments", 3, 300}}

// Seed creates the sample topics, one record a RecordInterval ending now,
// and commits group LiveGroup at the end of orders and IdleGroup at the
// end of payments.
func Seed(ctx context.Context, k *kafkatest.Cluster, logf func(string, ...any)) error {
	for _, tp := range Topics {
		base := time.Now().Add(-time.Duration(tp.Records) * RecordInterval).Truncate(time.Second)
		if err := k.Seed(ctx, tp.Name, tp.Partitions, tp.Records, base, RecordInterval); err != nil {
			return err
		}
		logf("topic %s: %d partitions × %d records, one a second from %s", tp.Name, tp.Partitions, tp.Records, base.Format(time.RFC3339))
	}
	for group, tp := range map[string]Topic{LiveGroup: Topics[0], IdleGroup: Topics[1]} {
		end := kafkatest.Offsets{tp.Name: {}}
		for p := int32(0); p < tp.Partitions; p++ {
			end[tp.Name][p] = int64(tp.Records)
		}
		if err := k.Commit(ctx, group, end, "consumer"); err != nil {
			return err
		}
	}
	logf("group %s: consumed to the end of %s; group %s: consumed to the end of %s, no members", LiveGroup, Topics[0].Name, IdleGroup, Topics[1].Name)
	return nil
}

// StartProducers writes a record stamped with the time it is written to
// every partition of every topic at each tick of every, until ctx ends: a
// time target (ago:5m) then always finds records, however long the
// cluster has been up. The record's value is "topic/partition/RFC3339".
func StartProducers(ctx context.Context, bootstrap string, topics []Topic, every time.Duration, logf func(string, ...any), opts ...kgo.Opt) error {
	prod, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(strings.Split(bootstrap, ",")...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0)}, opts...)...)
	if err != nil {
		return err
	}
	go func() {
		defer prod.Close()
		tick := time.NewTicker(every)
		defer tick.Stop()
		var reported atomic.Bool
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				for _, tp := range topics {
					for p := int32(0); p < tp.Partitions; p++ {
						now := time.Now()
						r := &kgo.Record{Topic: tp.Name, Partition: p, Value: []byte(fmt.Sprintf("%s/%d/%s", tp.Name, p, now.UTC().Format(time.RFC3339))), Timestamp: now}
						prod.Produce(ctx, r, func(_ *kgo.Record, err error) {
							if err != nil && ctx.Err() == nil && reported.CompareAndSwap(false, true) {
								logf("producer: %v (said once)", err)
							}
						})
					}
				}
			}
		}
	}()
	return nil
}

// Setup puts the sample's Kubernetes side on c, whose chart is installed
// as Release in Namespace: the credentials Secret bound to k's servers,
// the metrics scraper, and the live consumer Deployment, built and
// imported, once it is a member of LiveGroup.
func Setup(ctx context.Context, c *cluster.Cluster, k *kafkatest.Cluster, logf func(string, ...any)) error {
	if err := Apply(ctx, c, CredentialsManifest(k.Bootstrap())+"---\n"+ScraperManifest()); err != nil {
		return err
	}
	archive := filepath.Join(c.Dir(), "dev-consumer.tar")
	if err := cluster.BuildGoImage(ctx, "github.com/kafka-replay/kafka-replay/test/e2e/internal/consumer", ConsumerImage, archive); err != nil {
		return err
	}
	if err := c.ImportImage(ctx, archive); err != nil {
		return err
	}
	if err := Apply(ctx, c, ConsumerManifest(k.Bootstrap())); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for {
		g, err := k.Group(ctx, LiveGroup)
		if err == nil && len(g.Members) > 0 {
			logf("group %s: live consumer Deployment %s/%s (member %s)", LiveGroup, AppNamespace, LiveConsumer, strings.Join(g.Members, ", "))
			return nil
		}
		select {
		case <-ctx.Done():
			out, _ := c.Kubectl(context.Background(), "-n", AppNamespace, "get", "deploy,pods", "-o", "wide")
			return fmt.Errorf("the consumer Deployment %s/%s never joined group %s: %w\n%s", AppNamespace, LiveConsumer, LiveGroup, ctx.Err(), out)
		case <-time.After(time.Second):
		}
	}
}

// ConsumerManifest is the live consumer's namespace and its Deployment
// (test/e2e/internal/consumer; its client ID is its pod's name, so that a
// GroupActive error names it).
func ConsumerManifest(bootstrap string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec:
      terminationGracePeriodSeconds: 30
      securityContext: {runAsNonRoot: true, runAsUser: 65532, seccompProfile: {type: RuntimeDefault}}
      containers:
        - name: consumer
          image: %[3]s
          imagePullPolicy: Never
          env:
            - {name: BOOTSTRAP, value: %[4]q}
            - {name: GROUP, value: %[5]s}
            - {name: TOPIC, value: %[6]s}
            - name: CLIENT_ID
              valueFrom: {fieldRef: {fieldPath: metadata.name}}
          securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
`, AppNamespace, LiveConsumer, ConsumerImage, bootstrap, LiveGroup, Topics[0].Name)
}

// CredentialsManifest is the Secret the runbook example names: no
// credentials (the sample Kafka has no SASL), only the servers it is for,
// which a Secret must name (docs/usage.md, "Kafka credentials").
func CredentialsManifest(bootstrap string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: %[1]s, namespace: %[2]s}
stringData: {bootstrap.servers: %[3]q}
`, CredentialsSecret, Namespace, bootstrap)
}

// ScraperManifest is the ServiceAccount whose token may read the
// launcher's /metrics (metrics.secure: the launcher asks the API server).
func ScraperManifest() string {
	return fmt.Sprintf(`apiVersion: v1
kind: ServiceAccount
metadata: {name: %[1]s, namespace: %[2]s}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: %[3]s-%[1]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[3]s-metrics-reader}
subjects: [{kind: ServiceAccount, name: %[1]s, namespace: %[2]s}]
`, MetricsScraper, Namespace, Release)
}

// MetricsCommand reads the launcher's metrics from the shell: a token of
// the scraper's ServiceAccount, sent to the metrics Service's endpoint, the
// launcher pod's address. The shell's network namespace is the node's,
// which routes the pod network (the CNI bridge) but has no route to
// Service IPs, so the Service's cluster IP is not reachable from it (tried:
// curl answers "Couldn't connect to server"). The README shows it as a
// block the e2e runs.
func MetricsCommand() string {
	return fmt.Sprintf(`curl -sk -H "Authorization: Bearer $(kubectl -n %[1]s create token %[2]s)" "https://$(kubectl -n %[1]s get endpointslices -l kubernetes.io/service-name=%[3]s-launcher-metrics -o jsonpath='{.items[0].endpoints[0].addresses[0]}'):8080/metrics" | grep ^kafkareplay_`,
		Namespace, MetricsScraper, Release)
}

// Apply applies a manifest with the cluster's kubectl.
func Apply(ctx context.Context, c *cluster.Cluster, manifest string) error {
	cmd := c.Command(ctx, filepath.Join(c.BinDir(), "kubectl"), "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(manifest)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl apply: %w\n%s\n%s", err, out, manifest)
	}
	return nil
}

// BuildTools builds, into bin, the programs the docs run from a shell
// besides kubectl and helm, as `make build` builds them: kubectl replay
// (CGO_ENABLED=0) and the runner (cgo, librdkafka linked in), so that the
// runner's own examples run in the dev cluster's shell against its Kafka
// as a reader runs them on a host against theirs.
func BuildTools(ctx context.Context, bin string) error {
	root, err := cluster.ModuleRoot()
	if err != nil {
		return err
	}
	for _, b := range []struct {
		name, pkg string
		env       []string
	}{
		{"kubectl-replay", "./cmd/kubectl-replay", []string{"CGO_ENABLED=0"}},
		{"runner", "./cmd/runner", []string{"CGO_ENABLED=1"}},
	} {
		cmd := exec.CommandContext(ctx, "go", "build", "-ldflags", "-s -w", "-o", filepath.Join(bin, b.name), b.pkg)
		cmd.Dir, cmd.Env = root, append(os.Environ(), b.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %w\n%s", b.name, err, out)
		}
	}
	return nil
}
