// Command demo shows the runner end to end on an embedded Kafka cluster: a
// dry run to a point in time, that exact plan applied (plan:), the same run
// again (recognised as already applied), a skip refused by the guard, and
// the replay undone (undo:) with one partition left alone. It needs nothing
// but Go: `make demo`. `make demo KAFKA=apache` runs it on Apache Kafka.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

	// make demo KAFKA=apache sets KAFKA_REPLAY_TEST_APACHE: the same demo
	// on Apache Kafka, started by the tests' harness.
	kind := "an embedded 3-broker Kafka cluster (kfake)"
	if libs := os.Getenv(kafkatest.ApacheEnv); libs != "" {
		kind = "a 3-node Apache Kafka cluster (KRaft, on loopback, from " + libs + ")"
	}
	step("starting " + kind)
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
	dir, err := os.MkdirTemp("", "kafka-replay-demo")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	planFile, appliedFile := filepath.Join(dir, "plan.json"), filepath.Join(dir, "applied.json")
	kafka := func(args ...string) []string {
		return append([]string{"--bootstrap-servers", c.Bootstrap(), "--group", group}, args...)
	}

	step("dry run: --to time:" + at + " --dry-run (plans, commits nothing; the plan goes to a file for review)")
	if err := runner(runnerBin, 0, kafka("--topic", topic, "--to", "time:"+at, "--dry-run", "--result-file", planFile)...); err != nil {
		return err
	}
	apply := kafka("--to", "plan:"+planFile, "--run-id", runID, "--result-file", appliedFile)
	step("apply exactly the reviewed plan: --to plan:" + planFile)
	if err := runner(runnerBin, 0, apply...); err != nil {
		return err
	}
	if err := show(ctx, c, "committed offsets after"); err != nil {
		return err
	}
	// Ten minutes into twenty, one record a second: every partition's
	// first record at or after the time is its 600th.
	moved := kafkatest.Offsets{topic: {}}
	for p := int32(0); p < partitions; p++ {
		moved[topic][p] = 10 * 60
	}
	if err := expect(ctx, c, moved); err != nil {
		return err
	}
	step("the same run again (a retried pod): recognised by its run ID, nothing applied twice")
	if err := runner(runnerBin, 0, apply...); err != nil {
		return err
	}
	step("a slip: --to latest would skip what the group has not read yet; refused (exit 7) without --allow-skip")
	if err := runner(runnerBin, 7, kafka("--topic", topic, "--to", "latest", "--dry-run")...); err != nil {
		return err
	}

	// The consumers start again and re-consume part of the replay on
	// partition 0; partition 1 is moved back further by someone else.
	half := perPart - 150
	if err := c.Commit(ctx, group, kafkatest.Offsets{topic: {0: int64(half), 1: 100}}, "consumer"); err != nil {
		return err
	}
	if err := show(ctx, c, "committed offsets, the consumers having run a little"); err != nil {
		return err
	}
	step("undo the replay: --to undo:" + appliedFile + " (partition 1 is left alone: something else moved it since)")
	if err := runner(runnerBin, 0, kafka("--to", "undo:"+appliedFile, "--run-id", runID+"-undo")...); err != nil {
		return err
	}
	if err := show(ctx, c, "committed offsets after the undo"); err != nil {
		return err
	}
	undone := kafkatest.Offsets{topic: {}}
	for p := int32(0); p < partitions; p++ {
		undone[topic][p] = perPart
	}
	undone[topic][1] = 100
	if err := expect(ctx, c, undone); err != nil {
		return err
	}
	step("done: the group is back where it was, but for the partition the undo left alone")
	return nil
}

func step(msg string) { fmt.Printf("\n==> %s\n", msg) }

// runner runs the runner and expects exit code want: make test runs the
// demo, so a refusal that did not happen fails it as a crash does.
func runner(bin string, want int, args ...string) error {
	fmt.Printf("$ runner %s\n", strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "REPLAY_TERMINATION_MESSAGE_PATH=")
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	if code != want {
		return fmt.Errorf("runner exited %d, want %d", code, want)
	}
	if want != 0 {
		fmt.Printf("(exit %d, as expected)\n", want)
	}
	return nil
}

// expect checks the group's committed offsets, read with an independent
// client, against what the story says they are.
func expect(ctx context.Context, c *kafkatest.Cluster, want kafkatest.Offsets) error {
	got, err := c.Committed(ctx, group)
	if err != nil {
		return err
	}
	for p, o := range want[topic] {
		if g := got[topic][p].Offset; g != o {
			return fmt.Errorf("%s/%d committed at %d, want %d", topic, p, g, o)
		}
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
