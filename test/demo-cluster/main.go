// Command demo-cluster is the full demo, `make demo-cluster`: it brings up a
// real single-node Kubernetes cluster (test/cluster) in its own network
// namespace, builds and imports both images, installs the Helm chart, starts
// an embedded 3-broker Kafka cluster that pods can reach, applies a sample
// ReplayRequest with kubectl, and shows `kubectl get rr` and the
// per-partition result. Then it tears everything down, also on ^C.
//
// It needs root and the Debian packages of .ci/run. The first run builds the
// Kubernetes binaries and the images (several minutes); later runs take
// about a minute.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/test/cluster"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

const (
	topic      = "orders"
	partitions = 3
	perPart    = 600 // one record a second for 10 minutes
	group      = "billing"
	namespace  = "demo"
)

var (
	t0    = time.Now()
	steps = 7
	n     = 0
)

func step(msg string) {
	n++
	fmt.Printf("\n==> [%d/%d] %s  (+%s)\n", n, steps, msg, time.Since(t0).Round(time.Second))
}

func logf(format string, args ...any) {
	fmt.Printf("    "+format+"\n", args...)
}

func main() {
	// The API client logs nothing worth showing in the demo.
	ctrllog.SetLogger(logr.Discard())
	if err := demo(); err != nil {
		fmt.Fprintln(os.Stderr, "demo-cluster failed:", err)
		os.Exit(1)
	}
	fmt.Printf("\ndone in %s\n", time.Since(t0).Round(time.Second))
}

func demo() (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()

	step("starting a real single-node cluster (first run: builds the Kubernetes binaries)")
	c, err := cluster.Start(ctx, cluster.Options{Logf: logf})
	if err != nil {
		return err
	}
	defer func() {
		step("tearing everything down")
		if serr := c.Stop(); serr != nil && err == nil {
			err = serr
		}
	}()

	step("building both images from the Dockerfiles and importing them into the node")
	if err := c.BuildAndImport(ctx, logf); err != nil {
		return err
	}

	step("starting an embedded 3-broker Kafka (kfake) on the node IP, inside the cluster's namespace")
	k, err := kafkatest.StartWith(kafkatest.Options{
		Brokers: 3,
		Fake:    []kfake.Opt{kfake.ListenFn(c.KafkaListen)},
		Client:  []kgo.Opt{kgo.Dialer(c.KafkaDial)},
	})
	if err != nil {
		return err
	}
	defer k.Close()
	base := time.Now().Add(-perPart * time.Second).Truncate(time.Second)
	if err := k.Seed(ctx, topic, partitions, perPart, base, time.Second); err != nil {
		return err
	}
	end := kafkatest.Offsets{topic: {}}
	for p := int32(0); p < partitions; p++ {
		end[topic][p] = perPart
	}
	if err := k.Commit(ctx, group, end, "consumer"); err != nil {
		return err
	}
	logf("bootstrap %s; topic %q: %d partitions × %d records, one a second from %s", k.Bootstrap(), topic, partitions, perPart, base.Format(time.RFC3339))
	logf("group %q has consumed everything (offset %d on every partition)", group, perPart)

	step("installing the Helm chart (charts/kafka-replay) with the local images")
	if err := c.InstallChart(ctx, "kafka-replay", "kafka-replay"); err != nil {
		return err
	}
	out, _ := c.Kubectl(ctx, "-n", "kafka-replay", "get", "deploy,pods")
	fmt.Print(indent(out))

	at := base.Add(perPart / 2 * time.Second)
	step("kubectl apply: replay the last 5 minutes of " + topic + " for group " + group)
	manifest := fmt.Sprintf(`apiVersion: kafkareplay.dev/v1alpha1
kind: ReplayRequest
metadata:
  name: billing-rewind
  namespace: %s
spec:
  kafka:
    bootstrapServers: %q
  group: %s
  topics:
  - name: %s
  target:
    time: %q
`, namespace, k.Bootstrap(), group, topic, at.Format(time.RFC3339))
	fmt.Print(indent(manifest))
	if _, err := c.Kubectl(ctx, "create", "namespace", namespace); err != nil {
		return err
	}
	applied := time.Now()
	cmd := c.Command(ctx, filepath.Join(c.BinDir(), "kubectl"), "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(manifest)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl apply: %w: %s", err, b)
	}
	// Finished returns on failure too (Succeeded alone would wait out the
	// timeout on a failed run); Succeeded is then checked once.
	waited, err := c.Kubectl(ctx, "-n", namespace, "wait", "--for=condition=Finished", "replayrequest/billing-rewind", "--timeout=3m")
	if err == nil {
		_, err = c.Kubectl(ctx, "-n", namespace, "wait", "--for=condition=Succeeded", "replayrequest/billing-rewind", "--timeout=0")
	}
	if err != nil {
		o, _ := c.Kubectl(ctx, "-n", namespace, "get", "replayrequest/billing-rewind", "-o", "yaml")
		return fmt.Errorf("%w\n%s", err, o)
	}
	fmt.Print(indent(waited))
	logf("kubectl apply -> Succeeded in %s", time.Since(applied).Round(10*time.Millisecond))

	step("the result: kubectl get rr, per partition, and Kafka read by an independent client")
	out, err = c.Kubectl(ctx, "-n", namespace, "get", "rr")
	if err != nil {
		return err
	}
	fmt.Print(indent("$ kubectl get rr -n " + namespace + "\n" + out))
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	cl, err := client.New(c.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	var rr v1alpha1.ReplayRequest
	if err := cl.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "billing-rewind"}, &rr); err != nil {
		return err
	}
	committed, err := k.Committed(ctx, group)
	if err != nil {
		return err
	}
	fmt.Printf("    job %s, resolved target %s\n", rr.Status.JobName, rr.Status.ResolvedTarget)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "    TOPIC\tPARTITION\tPREVIOUS\tNEW\tDELTA\tIN KAFKA NOW")
	if rr.Status.Result != nil {
		ps := rr.Status.Result.Partitions
		sort.Slice(ps, func(i, j int) bool { return ps[i].Partition < ps[j].Partition })
		for _, p := range ps {
			prev, delta := "-", "-"
			if p.PreviousOffset != nil {
				prev = fmt.Sprint(*p.PreviousOffset)
			}
			if p.Delta != nil {
				delta = fmt.Sprint(*p.Delta)
			}
			fmt.Fprintf(tw, "    %s\t%d\t%s\t%d\t%s\t%d\n", p.Topic, p.Partition, prev, p.NewOffset, delta, committed[p.Topic][p.Partition].Offset)
		}
		_ = tw.Flush()
		fmt.Printf("    messages to re-consume: %d\n", rr.Status.Result.Totals.MessagesToReconsume)
	}
	return nil
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}
