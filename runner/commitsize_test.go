package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func offsetsOfSize(n int, md string) []commitOffset {
	out := make([]commitOffset, n)
	for i := range out {
		out[i] = commitOffset{TP: TP{Topic: "t", Partition: int32(i)}, Offset: 1, Metadata: md}
	}
	return out
}

func TestSplitCommit(t *testing.T) {
	const group = "g"
	one := commitRecordBytes(group, commitOffset{TP: TP{Topic: "t"}, Metadata: "m"})
	cases := []struct {
		name  string
		n     int
		md    string
		limit int
		want  []int // part sizes
	}{
		{"empty", 0, "m", 10 * one, nil},
		{"fits", 10, "m", 10 * one, []int{10}},
		{"one over", 11, "m", 10 * one, []int{10, 1}},
		{"even", 30, "m", 10 * one, []int{10, 10, 10}},
		{"partition larger than the limit", 3, "m", one - 1, []int{1, 1, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			offs := offsetsOfSize(c.n, c.md)
			parts := splitCommit(group, offs, c.limit)
			var got []int
			next := 0
			for _, p := range parts {
				got = append(got, len(p))
				for _, o := range p {
					if int(o.TP.Partition) != next {
						t.Fatalf("partition %d where %d was next: the parts must keep the plan's order", o.TP.Partition, next)
					}
					next++
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("parts %v, want %v", got, c.want)
			}
		})
	}
}

// TestCommitRecordBytesBoundsKafkasBatch: the estimate is of the longest
// run ID a run may have, and a commit of 2,000 such marks, which Kafka's
// default limit refuses in one request, is split into parts that each fit.
func TestCommitRecordBytesBoundsKafkasBatch(t *testing.T) {
	const kafkaDefault = 1048588
	md := commitMark{Version: metadataVersion, RunID: strings.Repeat("r", 512), Plan: "0123456789abcdef", Prev: ptr(int64(1 << 40)), Count: 2000, Set: "0123456789abcdef"}.String()
	offs := offsetsOfSize(2000, md)
	total := 0
	for _, o := range offs {
		total += commitRecordBytes("billing", o)
	}
	if total <= kafkaDefault {
		t.Fatalf("2,000 marks take %d bytes: the case does not exceed Kafka's limit", total)
	}
	for i, p := range splitCommit("billing", offs, commitBatchBytes) {
		size := 0
		for _, o := range p {
			size += commitRecordBytes("billing", o)
		}
		if size > commitBatchBytes {
			t.Errorf("part %d: %d bytes, limit %d", i, size, commitBatchBytes)
		}
	}
}

func TestCommitParts(t *testing.T) {
	refused := errors.New("refused")
	offs := offsetsOfSize(30, "m")
	one := commitRecordBytes("g", offs[0])
	cases := []struct {
		name string
		// answer answers part i.
		answer     func(i int, part []commitOffset) commitAnswer
		sent       int
		failed     map[int32]string // partition → error text; others succeeded
		unanswered bool
	}{
		{"every part answered well", func(int, []commitOffset) commitAnswer { return commitAnswer{} }, 3, nil, false},
		{"the second part refused whole", func(i int, _ []commitOffset) commitAnswer {
			if i == 1 {
				return commitAnswer{Err: refused}
			}
			return commitAnswer{}
		}, 2, rangeOf(10, 30, map[bool]string{true: "refused", false: errNotSent.Error()}, 10), false},
		{"one partition of the first part refused", func(i int, _ []commitOffset) commitAnswer {
			if i == 0 {
				return commitAnswer{Failed: map[TP]error{{Topic: "t", Partition: 3}: refused}}
			}
			return commitAnswer{}
		}, 1, merge(map[int32]string{3: "refused"}, rangeOf(10, 30, map[bool]string{false: errNotSent.Error()}, 0)), false},
		{"an unanswered part", func(i int, _ []commitOffset) commitAnswer {
			if i == 0 {
				return commitAnswer{Err: refused, Unanswered: true}
			}
			return commitAnswer{}
		}, 1, rangeOf(0, 30, map[bool]string{true: "refused", false: errNotSent.Error()}, 10), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sent := 0
			got := commitParts(context.Background(), "g", offs, 10*one, func(_ context.Context, part []commitOffset) commitAnswer {
				sent++
				return c.answer(sent-1, part)
			})
			if sent != c.sent {
				t.Errorf("%d parts sent, want %d", sent, c.sent)
			}
			if got.Err != nil {
				t.Errorf("whole-commit error %v: a part's error belongs to its partitions", got.Err)
			}
			if got.Unanswered != c.unanswered {
				t.Errorf("unanswered %t, want %t", got.Unanswered, c.unanswered)
			}
			for _, o := range offs {
				want, e := c.failed[o.TP.Partition], got.Failed[o.TP]
				switch {
				case want == "" && e != nil:
					t.Errorf("%s: %v, want no error", o.TP, e)
				case want != "" && (e == nil || e.Error() != want):
					t.Errorf("%s: %v, want %s", o.TP, e, want)
				}
			}
		})
	}
	// One part is sent and answered as it is.
	whole := commitAnswer{Err: refused}
	got := commitParts(context.Background(), "g", offs[:5], 10*one, func(context.Context, []commitOffset) commitAnswer { return whole })
	if !errors.Is(got.Err, refused) || got.Failed != nil {
		t.Errorf("one part: %+v, want the answer itself", got)
	}
}

// rangeOf maps partitions from..to-1 to texts[p < from+sentUpTo].
func rangeOf(from, to int32, texts map[bool]string, sentUpTo int32) map[int32]string {
	out := map[int32]string{}
	for p := from; p < to; p++ {
		out[p] = texts[p < from+sentUpTo]
	}
	return out
}

func merge(a, b map[int32]string) map[int32]string {
	for k, v := range b {
		a[k] = v
	}
	return a
}
