// Command consumer is the end-to-end suite's consumer workload: a real
// franz-go group member of $GROUP on $TOPIC at $BOOTSTRAP, of a classic
// group, or of a KIP-848 consumer group with $GROUP_PROTOCOL=consumer (the
// broker assigns, as Kafka 4's group.protocol=consumer). It prints one
// line per record it consumes, "consumed partition=P offset=O", before it
// commits that record, so a committed offset is never ahead of the log the
// test counts. On SIGTERM (its Deployment scaled to 0) it commits what it
// consumed and leaves the group, as a well-behaved consumer does, so the
// group becomes Empty.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
}

func run() error {
	bootstrap, group, topic := os.Getenv("BOOTSTRAP"), os.Getenv("GROUP"), os.Getenv("TOPIC")
	if bootstrap == "" || group == "" || topic == "" {
		return fmt.Errorf("BOOTSTRAP, GROUP and TOPIC are required")
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(strings.Split(bootstrap, ",")...),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		// A group without a commit starts at the beginning.
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		// Commits are explicit, after the records are printed.
		kgo.DisableAutoCommit(),
	}
	// The client ID the group shows for this member (make dev-cluster
	// sets the pod's name), so that a GroupActive error names it.
	if id := os.Getenv("CLIENT_ID"); id != "" {
		opts = append(opts, kgo.ClientID(id))
	}
	switch p := os.Getenv("GROUP_PROTOCOL"); p {
	case "", "classic":
	case "consumer":
		opts = append(opts, kgo.ServerSideBalancer())
	default:
		return fmt.Errorf("GROUP_PROTOCOL %q: want classic or consumer", p)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	// Close leaves the group.
	defer cl.Close()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	fmt.Println("consumer: started")
	for {
		fetches := cl.PollFetches(ctx)
		// Printed first: whatever a poll returned is committed below or
		// at the exit.
		fetches.EachRecord(func(r *kgo.Record) {
			fmt.Printf("consumed partition=%d offset=%d\n", r.Partition, r.Offset)
		})
		if ctx.Err() != nil {
			break
		}
		// A transient fetch error is retried by the client.
		fetches.EachError(func(topic string, p int32, err error) {
			fmt.Fprintf(os.Stderr, "consumer: fetch %s/%d: %v\n", topic, p, err)
		})
		if err := cl.CommitUncommittedOffsets(ctx); err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "consumer: commit:", err)
		}
	}
	// The last poll's records are printed; commit them before leaving.
	if err := cl.CommitUncommittedOffsets(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "consumer: final commit:", err)
	}
	fmt.Println("consumer: stopped")
	return nil
}
