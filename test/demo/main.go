// Command demo shows the runner end to end on an embedded Kafka cluster: a
// dry run to a point in time, the real run, and the same run again (which is
// recognised as already applied). It needs nothing but Go: `make demo`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

func main() {
	runnerBin := flag.String("runner", "bin/runner", "path to the runner binary")
	flag.Parse()
	if err := demo(*runnerBin); err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}

const (
	topic      = "orders"
	partitions = 6
	perPart    = 1200 // one record a second for 20 minutes
	group      = "billing"
)

func demo(runnerBin string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	step("starting an embedded 3-broker Kafka cluster (kfake)")
	c, err := kafkatest.Start(3)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Println("  bootstrap:", c.Bootstrap())

	// Records were written one a second over the last 20 minutes, and the
	// billing group had consumed everything: then a bad deploy.
	base := time.Now().Add(-perPart * time.Second).Truncate(time.Second)
	step(fmt.Sprintf("seeding topic %q: %d partitions × %d records, one a second from %s", topic, partitions, perPart, base.Format(time.RFC3339)))
	if err := c.Seed(ctx, topic, partitions, perPart, base, time.Second); err != nil {
		return err
	}
	all := kafkatest.Offsets{topic: {}}
	for p := int32(0); p < partitions; p++ {
		all[topic][p] = perPart
	}
	if err := c.Commit(ctx, group, all, "consumer"); err != nil {
		return err
	}
	if err := show(ctx, c, "committed offsets before"); err != nil {
		return err
	}

	// Replay from ten minutes after the first record, written in a zone that
	// is not UTC, to show the runner takes the zone as given.
	zone := time.FixedZone("", 2*3600)
	at := base.Add(10 * time.Minute).In(zone).Format(time.RFC3339)
	runID := "demo-" + time.Now().Format("150405")
	common := []string{"--bootstrap-servers", c.Bootstrap(), "--group", group, "--topic", topic, "--to", "time:" + at, "--run-id", runID}

	step("dry run: --to time:" + at + " --dry-run (plans, commits nothing)")
	if err := runner(runnerBin, append(common, "--dry-run")...); err != nil {
		return err
	}
	step("the real run")
	if err := runner(runnerBin, common...); err != nil {
		return err
	}
	if err := show(ctx, c, "committed offsets after"); err != nil {
		return err
	}
	step("the same run again (a retried pod): recognised by its run ID, nothing applied twice")
	if err := runner(runnerBin, common...); err != nil {
		return err
	}
	step("done: the group will re-consume the last 10 minutes of every partition")
	return nil
}

func step(msg string) { fmt.Printf("\n==> %s\n", msg) }

func runner(bin string, args ...string) error {
	fmt.Printf("$ runner %s\n", strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "REPLAY_TERMINATION_MESSAGE_PATH=")
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	return nil
}

func show(ctx context.Context, c *kafkatest.Cluster, title string) error {
	offs, err := c.Committed(ctx, group)
	if err != nil {
		return err
	}
	fmt.Printf("\n%s (read with an independent client):\n", title)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "  TOPIC\tPARTITION\tOFFSET\tMETADATA")
	ps := make([]int32, 0, len(offs[topic]))
	for p := range offs[topic] {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	for _, p := range ps {
		o := offs[topic][p]
		_, _ = fmt.Fprintf(tw, "  %s\t%d\t%d\t%s\n", topic, p, o.Offset, o.Metadata)
	}
	return tw.Flush()
}
