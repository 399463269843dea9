// Command dev-cluster is `make dev-cluster`: a real single-node Kubernetes
// cluster (test/cluster) with the chart installed from the images built
// here, an embedded 3-broker Kafka (kfake) that pods reach on the node IP,
// sample topics and consumer groups, and a kubeconfig, so that the
// documented kubectl and helm commands can be tried by hand. It stays up
// until ^C, SIGTERM or `make dev-cluster-down`, and then tears everything
// down by PID, as the harness does.
//
//	dev-cluster up --dir DIR [--kubeconfig FILE]   bring it up and stay up
//	dev-cluster down --dir DIR                     stop the one recorded in DIR
//	dev-cluster stop-consumer --dir DIR            scale the live consumer of group billing to 0
//
// What the docs teach can be tried on it: the live consumer of group
// billing is a Deployment (billing-consumer, as in docs/usage.md's pause
// example, in namespace billing), producers keep writing a timestamped
// record a second to every partition (so that ago:5m always moves
// something), and the launcher's metrics are reachable from the shell with
// a token of the ServiceAccount metrics-scraper.
//
// DIR holds the state (dev-cluster.json), the shell script that enters the
// cluster's network namespace with KUBECONFIG and PATH set, and bin/ with
// kubectl and helm. `down` and `stop-consumer` refuse a directory without a
// state file of their own.
//
// It needs root and the Debian packages of .ci/run, as the end-to-end
// tests do.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kafka-replay/kafka-replay/test/cluster"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// The sample data: what docs/usage.md's examples name.
const (
	release   = "kafka-replay"
	namespace = "kafka-replay-system" // as every doc installs it (TestNamespaceMatchesDocs)
	liveGroup = "billing"             // one live consumer, stoppable
	// appNamespace holds the live consumer: a request that pauses it
	// (spec.consumers) is made there. Not shop, which the README's
	// walk-through creates itself.
	appNamespace   = "billing"
	liveConsumer   = "billing-consumer" // a Deployment, as in the docs' pause example
	consumerImage  = "localhost/kafka-replay-dev-consumer:1"
	idleGroup      = "audit" // no members: replays apply at once
	recordInterval = time.Second
	// metricsScraper is the ServiceAccount whose token reads /metrics
	// (bound to the chart's <fullname>-metrics-reader ClusterRole).
	metricsScraper = "metrics-scraper"
)

type sampleTopic struct {
	name       string
	partitions int32
	records    int
}

var topics = []sampleTopic{{"orders", 3, 600}, {"payments", 2, 300}}

var t0 = time.Now()

func logf(format string, args ...any) {
	fmt.Printf("[%6s] "+format+"\n", append([]any{time.Since(t0).Round(time.Second)}, args...)...)
}

func main() {
	ctrllog.SetLogger(logr.Discard())
	if len(os.Args) < 2 {
		usage()
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", "", "state directory (absolute)")
	kubeconfig := fs.String("kubeconfig", "", "where to write the admin kubeconfig (default DIR/kubeconfig)")
	_ = fs.Parse(os.Args[2:])
	if *dir == "" {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "up":
		err = up(*dir, *kubeconfig)
	case "down":
		err = down(*dir, logf)
	case "stop-consumer":
		err = stopConsumer(*dir)
		if err == nil {
			logf("asked the dev cluster to stop the consumer of group %s", liveGroup)
		}
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dev-cluster:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: dev-cluster up|down|stop-consumer --dir DIR [--kubeconfig FILE]")
	os.Exit(2)
}

func up(dir, kubeconfig string) (err error) {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("--dir %s must be an absolute path", dir)
	}
	if kubeconfig == "" {
		kubeconfig = filepath.Join(dir, "kubeconfig")
	}
	if s, err := readState(dir); err == nil {
		if s.alive() {
			return fmt.Errorf("a dev cluster already runs from %s (process %d); `make dev-cluster-down` first", dir, s.PID)
		}
		removeOwn(dir, s) // a dev cluster killed outright; Start sweeps its cluster
	}
	if err := os.MkdirAll(filepath.Join(dir, binDir), 0o700); err != nil {
		return err
	}
	// Signals from here on: the harness tears the cluster down on SIGINT,
	// SIGTERM and SIGHUP itself (and exits); this handler removes the
	// state first, so `down` never waits for a process that is leaving.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1)

	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	logf("starting a real single-node cluster (the first run builds the Kubernetes binaries)")
	// A signal is how a dev cluster normally ends: once the harness has
	// torn it down cleanly, the process exits 0, so that make does not
	// report "Error 143".
	c, err := cluster.Start(ctx, cluster.Options{Logf: logf, CleanSignalExit: true})
	if err != nil {
		return err
	}
	var st state
	defer func() {
		removeOwn(dir, st)
		if serr := c.Stop(); serr != nil && err == nil {
			err = serr
		}
	}()

	logf("building (cached) and importing both images")
	if err := c.BuildAndImport(ctx, logf); err != nil {
		return err
	}

	logf("starting an embedded 3-broker Kafka on the node IP, inside the cluster's network namespace")
	k, err := kafkatest.StartWith(kafkatest.Options{
		Brokers: 3,
		Fake:    []kfake.Opt{kfake.ListenFn(c.KafkaListen)},
		Client:  []kgo.Opt{kgo.Dialer(c.KafkaDial)},
	})
	if err != nil {
		return err
	}
	defer k.Close()
	if err := seed(ctx, k); err != nil {
		return err
	}
	// Producers from now on, for as long as the cluster runs.
	pctx, stopProducing := context.WithCancel(context.Background())
	defer stopProducing()
	if err := startProducers(pctx, c, k); err != nil {
		return err
	}

	logf("installing the chart (charts/kafka-replay) with the local images")
	if err := c.InstallChart(ctx, release, namespace); err != nil {
		return err
	}
	if err := startConsumer(ctx, c, k); err != nil {
		return err
	}
	if err := kubectlApply(ctx, c, scraperManifest()); err != nil {
		return err
	}

	if err := c.WriteKubeconfig(kubeconfig); err != nil {
		return err
	}
	helm, err := cluster.Helm()
	if err != nil {
		return err
	}
	for name, target := range map[string]string{"kubectl": filepath.Join(c.BinDir(), "kubectl"), "helm": helm} {
		link := filepath.Join(dir, binDir, name)
		_ = os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			return err
		}
	}
	// kubectl replay, as `make build` builds it, for its groups verb.
	root, err := cluster.ModuleRoot()
	if err != nil {
		return err
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, binDir, "kubectl-replay"), "./cmd/kubectl-replay")
	build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build kubectl-replay: %w\n%s", err, out)
	}
	shell := filepath.Join(dir, shellFile)
	if err := os.WriteFile(shell, []byte(shellScript(c.NetNS().Path(), kubeconfig, filepath.Join(dir, binDir), k.Bootstrap())), 0o700); err != nil {
		return err
	}
	st = state{Kind: stateKind, PID: os.Getpid(), Start: cluster.ProcessStart(os.Getpid()),
		NetNS: c.NetNS().Name, ClusterDir: c.Dir(), Kubeconfig: kubeconfig, Bootstrap: k.Bootstrap()}
	if err := writeState(dir, st); err != nil {
		return err
	}
	banner(dir, kubeconfig, k.Bootstrap())

	for s := range sigs {
		if s == syscall.SIGUSR1 {
			if out, err := c.Kubectl(ctx, "-n", appNamespace, "scale", "deployment/"+liveConsumer, "--replicas=0"); err != nil {
				logf("could not stop the consumer: %v", err)
			} else {
				logf("%s: group %s empties once its pod has left (kubectl -n %s scale deployment/%s --replicas=1 starts it again)", strings.TrimSpace(out), liveGroup, appNamespace, liveConsumer)
			}
			continue
		}
		logf("%v: tearing everything down", s)
		return nil // the deferred calls stop Kafka and the cluster
	}
	return nil
}

// seed creates the sample topics, one record a second ending now, and
// commits both groups at the end of their topics.
func seed(ctx context.Context, k *kafkatest.Cluster) error {
	for _, tp := range topics {
		base := time.Now().Add(-time.Duration(tp.records) * recordInterval).Truncate(time.Second)
		if err := k.Seed(ctx, tp.name, tp.partitions, tp.records, base, recordInterval); err != nil {
			return err
		}
		logf("topic %s: %d partitions × %d records, one a second from %s", tp.name, tp.partitions, tp.records, base.Format(time.RFC3339))
	}
	for group, tp := range map[string]sampleTopic{liveGroup: topics[0], idleGroup: topics[1]} {
		end := kafkatest.Offsets{tp.name: {}}
		for p := int32(0); p < tp.partitions; p++ {
			end[tp.name][p] = int64(tp.records)
		}
		if err := k.Commit(ctx, group, end, "consumer"); err != nil {
			return err
		}
	}
	logf("group %s: consumed to the end of %s; group %s: consumed to the end of %s, no members", liveGroup, topics[0].name, idleGroup, topics[1].name)
	return nil
}

// startProducers writes a record stamped now to every partition of every
// sample topic once a second until ctx ends: a time target (ago:5m) then
// always finds records, however long the cluster has been up.
func startProducers(ctx context.Context, c *cluster.Cluster, k *kafkatest.Cluster) error {
	prod, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(k.Bootstrap(), ",")...), kgo.Dialer(c.KafkaDial),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	if err != nil {
		return err
	}
	go func() {
		defer prod.Close()
		tick := time.NewTicker(recordInterval)
		defer tick.Stop()
		var reported atomic.Bool
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				for _, tp := range topics {
					for p := int32(0); p < tp.partitions; p++ {
						r := &kgo.Record{Topic: tp.name, Partition: p, Value: []byte(fmt.Sprintf("%s/%d/%s", tp.name, p, now.UTC().Format(time.RFC3339))), Timestamp: now}
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
	logf("producers: a record a second to every partition of %s and %s, stamped with the time written", topics[0].name, topics[1].name)
	return nil
}

// startConsumer runs the live consumer of group billing as a Deployment in
// namespace billing (test/e2e/internal/consumer, the end-to-end suite's
// consumer; its client ID is its pod's name), and waits until the group
// has it as a member.
func startConsumer(ctx context.Context, c *cluster.Cluster, k *kafkatest.Cluster) error {
	archive := filepath.Join(c.Dir(), "dev-consumer.tar")
	if err := cluster.BuildGoImage(ctx, "github.com/kafka-replay/kafka-replay/test/e2e/internal/consumer", consumerImage, archive); err != nil {
		return err
	}
	if err := c.ImportImage(ctx, archive); err != nil {
		return err
	}
	if err := kubectlApply(ctx, c, consumerManifest(k.Bootstrap())); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for {
		g, err := k.Group(ctx, liveGroup)
		if err == nil && len(g.Members) > 0 {
			logf("group %s: live consumer Deployment %s/%s (member %s)", liveGroup, appNamespace, liveConsumer, strings.Join(g.Members, ", "))
			return nil
		}
		select {
		case <-ctx.Done():
			out, _ := c.Kubectl(context.Background(), "-n", appNamespace, "get", "deploy,pods", "-o", "wide")
			return fmt.Errorf("the consumer Deployment %s/%s never joined group %s: %w\n%s", appNamespace, liveConsumer, liveGroup, ctx.Err(), out)
		case <-time.After(time.Second):
		}
	}
}

// consumerManifest is the consumer's namespace and its Deployment.
func consumerManifest(bootstrap string) string {
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
`, appNamespace, liveConsumer, consumerImage, bootstrap, liveGroup, topics[0].name)
}

// scraperManifest is the ServiceAccount whose token may read the
// launcher's /metrics (metrics.secure: the launcher asks the API server).
func scraperManifest() string {
	return fmt.Sprintf(`apiVersion: v1
kind: ServiceAccount
metadata: {name: %[1]s, namespace: %[2]s}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: %[3]s-%[1]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[3]s-metrics-reader}
subjects: [{kind: ServiceAccount, name: %[1]s, namespace: %[2]s}]
`, metricsScraper, namespace, release)
}

// kubectlApply applies a manifest with the cluster's kubectl.
func kubectlApply(ctx context.Context, c *cluster.Cluster, manifest string) error {
	cmd := c.Command(ctx, filepath.Join(c.BinDir(), "kubectl"), "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(manifest)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl apply: %w\n%s\n%s", err, out, manifest)
	}
	return nil
}

// metricsCommand reads the launcher's metrics from the shell: a token of
// the scraper's ServiceAccount, sent to the metrics Service's endpoint, the
// launcher pod's address. The shell's network namespace is the node's,
// which routes the pod network (the CNI bridge) but has no route to
// Service IPs, so the Service's cluster IP is not reachable from it (tried:
// curl answers "Couldn't connect to server").
func metricsCommand() string {
	return fmt.Sprintf(`curl -sk -H "Authorization: Bearer $(kubectl -n %[1]s create token %[2]s)" "https://$(kubectl -n %[1]s get endpointslices -l kubernetes.io/service-name=%[3]s-launcher-metrics -o jsonpath='{.items[0].endpoints[0].addresses[0]}'):8080/metrics" | grep ^kafkareplay_`,
		namespace, metricsScraper, release)
}

// shellScript enters the cluster's network namespace, where the API server
// and Kafka are, with kubectl and helm on PATH and KUBECONFIG set: a shell,
// or the command given.
func shellScript(netns, kubeconfig, bin, bootstrap string) string {
	return fmt.Sprintf(`#!/bin/sh
# Written by make dev-cluster: the cluster's network namespace, with
# KUBECONFIG, kubectl and helm. Usage: %[1]s [command...]
export KUBECONFIG=%[2]q PATH=%[3]q:"$PATH" KAFKA_BOOTSTRAP=%[4]q
[ $# -gt 0 ] || set -- "${SHELL:-/bin/sh}"
exec nsenter --net=%[5]q -- "$@"
`, "shell", kubeconfig, bin, bootstrap, netns)
}

func banner(dir, kubeconfig, bootstrap string) {
	shell := filepath.Join(dir, shellFile)
	lines := []string{
		"",
		fmt.Sprintf("dev cluster up in %s.", time.Since(t0).Round(time.Second)),
		"",
		"  shell (kubectl, helm):  " + shell,
		"  one command:           " + shell + " kubectl get rr -A",
		"  KUBECONFIG:            " + kubeconfig + "  (the API server is reachable only inside the shell's network namespace)",
		"  Kafka bootstrap:       " + bootstrap + "  (from pods and the shell; also $KAFKA_BOOTSTRAP there)",
		"  topics:                orders (3 partitions), payments (2), a record a second to every partition, still being written",
		fmt.Sprintf("  groups:                %s (consumed by Deployment %s/%s: a replay is GroupActive unless it pauses it, spec.consumers), %s (at the end of payments, empty)", liveGroup, appNamespace, liveConsumer, idleGroup),
		fmt.Sprintf("  groups, lag, members:  kubectl replay groups -n %s --bootstrap-servers \"$KAFKA_BOOTSTRAP\" --describe --group %s  (in the shell; without --describe, every group)", appNamespace, liveGroup),
		fmt.Sprintf("  stop the consumer:     make dev-stop-consumer  (or, in the shell, kubectl -n %s scale deployment/%s --replicas=0)", appNamespace, liveConsumer),
		"  metrics, in the shell: " + metricsCommand(),
		"  tear down:             ^C here, or make dev-cluster-down",
		"",
	}
	fmt.Println(strings.Join(lines, "\n"))
}
