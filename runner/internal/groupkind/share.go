package groupkind

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Offsets are start offsets by topic and partition.
type Offsets map[string]map[int32]int64

// StartOffsets reads a share group's start offsets (DescribeShareGroupOffsets,
// one request to its coordinator): where its members begin acquiring
// records. A partition the group has no start offset for yet (-1: its
// members begin where share.auto.offset.reset says when they first fetch)
// is left out.
func StartOffsets(ctx context.Context, cl *kgo.Client, group string) (Offsets, error) {
	ds, err := kadm.NewClient(cl).DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		return nil, fmt.Errorf("describe share group offsets: %w", err)
	}
	d, ok := ds[group]
	if !ok {
		return nil, fmt.Errorf("describe share group offsets: no answer for %s", group)
	}
	if d.Err != nil {
		return nil, fmt.Errorf("describe share group offsets: %w", d.Err)
	}
	out := Offsets{}
	for t, ps := range d.Offsets {
		for p, o := range ps {
			if o.Err != nil {
				return nil, fmt.Errorf("describe share group offsets of %s/%d: %w", t, p, o.Err)
			}
			if o.StartOffset < 0 {
				continue
			}
			if out[t] == nil {
				out[t] = map[int32]int64{}
			}
			out[t][p] = o.StartOffset
		}
	}
	return out, nil
}

// AlterStartOffsets sets a share group's start offsets in one request
// (AlterShareGroupOffsets). Kafka takes it only while the group has no
// members. It returns the error of the request as a whole, or each
// partition's.
func AlterStartOffsets(ctx context.Context, cl *kgo.Client, group string, offs Offsets) (map[string]map[int32]error, error) {
	in := kadm.Offsets{}
	for t, ps := range offs {
		for p, o := range ps {
			in.Add(kadm.Offset{Topic: t, Partition: p, At: o, LeaderEpoch: -1})
		}
	}
	resp, err := kadm.NewClient(cl).AlterShareGroupOffsets(ctx, group, in)
	if err != nil {
		return nil, err
	}
	return resp, nil
}
