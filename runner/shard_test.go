package runner

import (
	"fmt"
	"testing"
)

func tpsN(n int) []TP {
	out := make([]TP, n)
	for i := range out {
		out[i] = TP{Topic: fmt.Sprintf("t%d", i/10), Partition: int32(i % 10)}
	}
	return out
}

func TestChunkCutsInOrderWithoutLosingPartitions(t *testing.T) {
	for _, tc := range []struct {
		n, limit int
		want     []int // the length of each chunk
	}{
		{n: 0, limit: 3, want: nil},
		{n: 1, limit: 3, want: []int{1}},
		{n: 3, limit: 3, want: []int{3}},
		{n: 4, limit: 3, want: []int{2, 2}},
		{n: 7, limit: 3, want: []int{3, 2, 2}},
		{n: 9, limit: 3, want: []int{3, 3, 3}},
		{n: 10, limit: 0, want: []int{10}}, // no limit
		{n: 2500, limit: 1000, want: []int{834, 833, 833}},
		{n: 333, limit: maxPartitionsPerListOffsets, want: []int{167, 166}},
	} {
		t.Run(fmt.Sprintf("%d by %d", tc.n, tc.limit), func(t *testing.T) {
			tps := tpsN(tc.n)
			got := chunk(tps, tc.limit)
			if len(got) != len(tc.want) {
				t.Fatalf("%d chunks, want %d", len(got), len(tc.want))
			}
			i := 0
			for c, part := range got {
				if len(part) != tc.want[c] {
					t.Errorf("chunk %d has %d partitions, want %d", c, len(part), tc.want[c])
				}
				for _, tp := range part {
					if tp != tps[i] {
						t.Fatalf("chunk %d: %s where %s was expected (order must be kept)", c, tp, tps[i])
					}
					i++
				}
			}
			if i != tc.n {
				t.Errorf("chunks hold %d partitions, want %d", i, tc.n)
			}
		})
	}
}

// A chunk must not be able to grow into the next one's partitions.
func TestChunkCapacityEndsAtItsLength(t *testing.T) {
	got := chunk(tpsN(4), 2)
	_ = append(got[0], TP{Topic: "x"})
	if got[1][0] != (TP{Topic: "t0", Partition: 2}) {
		t.Errorf("appending to the first chunk overwrote the second: %v", got[1])
	}
}
