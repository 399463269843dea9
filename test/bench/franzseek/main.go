// Command franzseek moves a consumer group's committed offsets to the
// first record at or after a time, with franz-go's admin client: what
// kcl's `group seek --to TIME` does. make bench compares the runner with
// it as the franz-go tool; kcl itself cannot be installed here (the Go
// module proxy this project reaches does not serve it).
//
// Its steps are those of a plain tool: describe the group and refuse one
// with members, look up the offsets for the time, commit them in one
// request. It has none of the runner's guards, plan or read-back.
//
// Usage: franzseek -brokers H:P,... -group G -to RFC3339 -topic T [-topic T ...]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

type topics []string

func (t *topics) String() string     { return strings.Join(*t, ",") }
func (t *topics) Set(v string) error { *t = append(*t, v); return nil }

func main() {
	brokers := flag.String("brokers", "", "bootstrap servers, comma-separated")
	group := flag.String("group", "", "consumer group")
	to := flag.String("to", "", "time (RFC 3339)")
	var ts topics
	flag.Var(&ts, "topic", "topic (repeatable)")
	flag.Parse()
	if err := seek(*brokers, *group, *to, ts); err != nil {
		fmt.Fprintln(os.Stderr, "franzseek:", err)
		os.Exit(1)
	}
}

func seek(brokers, group, to string, ts []string) error {
	at, err := time.Parse(time.RFC3339Nano, to)
	if err != nil {
		return fmt.Errorf("-to: %w", err)
	}
	if brokers == "" || group == "" || len(ts) == 0 {
		return fmt.Errorf("-brokers, -group and -topic are required")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	described, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return fmt.Errorf("describe %s: %w", group, err)
	}
	if g := described[group]; len(g.Members) > 0 {
		return fmt.Errorf("group %s has %d members (state %s)", group, len(g.Members), g.State)
	}
	listed, err := adm.ListOffsetsAfterMilli(ctx, at.UnixMilli(), ts...)
	if err != nil {
		return fmt.Errorf("list offsets: %w", err)
	}
	if err := listed.Error(); err != nil {
		return fmt.Errorf("list offsets: %w", err)
	}
	committed, err := adm.CommitOffsets(ctx, group, listed.Offsets())
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if err := committed.Error(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	n := 0
	committed.Each(func(kadm.OffsetResponse) { n++ })
	fmt.Printf("%d partitions of %d topics moved\n", n, len(ts))
	return nil
}
