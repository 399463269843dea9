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
// something), the runbook example's Secret kafka-credentials is there,
// and the launcher's metrics are reachable from the shell with a token of
// the ServiceAccount metrics-scraper: test/devsample's, which the e2e's run
// of the docs sets up too.
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
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kafka-replay/kafka-replay/test/cluster"
	"github.com/kafka-replay/kafka-replay/test/devsample"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// The sample (topics, groups, the live consumer, producers, the metrics
// scraper, the runbook example's Secret) is test/devsample's, which the
// e2e's run of the docs sets up too.
const (
	release      = devsample.Release
	namespace    = devsample.Namespace // as every doc installs it (TestNamespaceMatchesDocs)
	liveGroup    = devsample.LiveGroup
	appNamespace = devsample.AppNamespace
	liveConsumer = devsample.LiveConsumer
	idleGroup    = devsample.IdleGroup
)

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
	if err := devsample.Seed(ctx, k, logf); err != nil {
		return err
	}
	// Producers from now on, for as long as the cluster runs.
	pctx, stopProducing := context.WithCancel(context.Background())
	defer stopProducing()
	if err := devsample.StartProducers(pctx, k.Bootstrap(), devsample.Topics, devsample.RecordInterval, logf, kgo.Dialer(c.KafkaDial)); err != nil {
		return err
	}
	logf("producers: a record a second to every partition of %s and %s, stamped with the time written", devsample.Topics[0].Name, devsample.Topics[1].Name)

	logf("installing the chart (charts/kafka-replay) with the local images")
	if err := c.InstallChart(ctx, release, namespace); err != nil {
		return err
	}
	if err := devsample.Setup(ctx, c, k, logf); err != nil {
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
	// kubectl replay and the runner, as `make build` builds them.
	if err := devsample.BuildTools(ctx, filepath.Join(dir, binDir)); err != nil {
		return err
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

// shellScript enters the cluster's network namespace, where the API server
// and Kafka are, with kubectl, helm, kubectl replay and the runner on PATH,
// KUBECONFIG and KAFKA_BOOTSTRAP set: a shell, or the command given.
func shellScript(netns, kubeconfig, bin, bootstrap string) string {
	return fmt.Sprintf(`#!/bin/sh
# Written by make dev-cluster: the cluster's network namespace, with
# KUBECONFIG, kubectl, helm, kubectl replay and the runner. Usage: %[1]s [command...]
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
		"  shell:                 " + shell + "  (kubectl, helm, kubectl replay, the runner)",
		"  one command:           " + shell + " kubectl get rr -A",
		"  KUBECONFIG:            " + kubeconfig + "  (the API server is reachable only inside the shell's network namespace)",
		"  Kafka bootstrap:       " + bootstrap + "  (from pods and the shell; also $KAFKA_BOOTSTRAP there)",
		"  topics:                orders (3 partitions), payments (3), a record a second to every partition, still being written",
		fmt.Sprintf("  groups:                %s (consumed by Deployment %s/%s: a replay is GroupActive unless it pauses it, spec.consumers), %s (at the end of payments, empty)", liveGroup, appNamespace, liveConsumer, idleGroup),
		fmt.Sprintf("  groups, lag, members:  kubectl replay groups -n %s --bootstrap-servers \"$KAFKA_BOOTSTRAP\" --describe --group %s  (in the shell; without --describe, every group)", appNamespace, liveGroup),
		fmt.Sprintf("  runbook Secret:        %s in %s (the servers above; docs/usage.md's runbook example names it)", devsample.CredentialsSecret, namespace),
		fmt.Sprintf("  stop the consumer:     make dev-stop-consumer  (or, in the shell, kubectl -n %s scale deployment/%s --replicas=0)", appNamespace, liveConsumer),
		"  metrics, in the shell: " + devsample.MetricsCommand(),
		"  tear down:             ^C here, or make dev-cluster-down",
		"",
	}
	fmt.Println(strings.Join(lines, "\n"))
}
