package runner_test

import (
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// mangle changes one kind of answer; want is the exit code it must end
// with (the run fails, or the mangling changes nothing it relies on).
type mangle struct {
	name string
	do   func(kmsg.Response)
	want report.ExitCode
	// hit, if set, counts the answers do changed: the case is no test if
	// none was.
	hit *atomic.Int32
}

func listOffsets(f func(*kmsg.ListOffsetsResponse)) func(kmsg.Response) {
	return func(r kmsg.Response) {
		if lo, ok := r.(*kmsg.ListOffsetsResponse); ok {
			f(lo)
		}
	}
}

func metadata(f func(*kmsg.MetadataResponse)) func(kmsg.Response) {
	return func(r kmsg.Response) {
		if md, ok := r.(*kmsg.MetadataResponse); ok {
			for i := range md.Topics {
				if md.Topics[i].Topic != nil && *md.Topics[i].Topic == topic {
					f(md)
					return
				}
			}
		}
	}
}

// TestMangledAnswersAreErrorsNotCrashes: an answer that leaves out,
// repeats or adds partitions or topics, or carries an impossible offset,
// in any admin call the runner makes, ends as a result (a Kafka error, or
// the right plan where the runner relies on nothing it changed), never as
// a crash, and never commits a plan made from it.
func TestMangledAnswersAreErrorsNotCrashes(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	var cut atomic.Int32
	for _, m := range []mangle{
		// librdkafka's admin ListOffsets read past the end of such an
		// answer (SIGSEGV, no result; upstream/): 4 partitions on 3
		// brokers, so one leader is asked for 2 and answers 1.
		{"ListOffsets: some of a leader's partitions left out", listOffsets(func(r *kmsg.ListOffsetsResponse) {
			for i := range r.Topics {
				if ps := r.Topics[i].Partitions; len(ps) > 1 {
					r.Topics[i].Partitions = ps[:len(ps)-1]
					cut.Add(1)
				}
			}
		}), report.ExitKafkaError, &cut},
		{"ListOffsets: a leader's answer with no partitions", listOffsets(func(r *kmsg.ListOffsetsResponse) {
			for i := range r.Topics {
				r.Topics[i].Partitions = nil
			}
		}), report.ExitKafkaError, nil},
		{"ListOffsets: a topic renamed", listOffsets(func(r *kmsg.ListOffsetsResponse) {
			for i := range r.Topics {
				r.Topics[i].Topic += "-x"
			}
		}), report.ExitKafkaError, nil},
		{"ListOffsets: a partition repeated", listOffsets(func(r *kmsg.ListOffsetsResponse) {
			for i := range r.Topics {
				if ps := r.Topics[i].Partitions; len(ps) > 0 {
					r.Topics[i].Partitions = append(r.Topics[i].Partitions, ps[0])
				}
			}
		}), report.ExitOK, nil},
		{"ListOffsets: a partition not asked for", listOffsets(func(r *kmsg.ListOffsetsResponse) {
			for i := range r.Topics {
				if ps := r.Topics[i].Partitions; len(ps) > 0 {
					extra := ps[0]
					extra.Partition = 99
					r.Topics[i].Partitions = append(r.Topics[i].Partitions, extra)
				}
			}
		}), report.ExitOK, nil},
		{"ListOffsets: an impossible offset", listOffsets(func(r *kmsg.ListOffsetsResponse) {
			for i := range r.Topics {
				for j := range r.Topics[i].Partitions {
					r.Topics[i].Partitions[j].Offset = -5
				}
			}
		}), report.ExitKafkaError, nil},
		{"Metadata: a partition repeated", metadata(func(r *kmsg.MetadataResponse) {
			for i := range r.Topics {
				if ps := r.Topics[i].Partitions; len(ps) > 0 {
					r.Topics[i].Partitions = append(r.Topics[i].Partitions, ps[0])
				}
			}
		}), report.ExitKafkaError, nil},
		// Partition 0, not the first listed (the broker may list the
		// last one first): a gap in the partitions.
		{"Metadata: a partition left out", metadata(func(r *kmsg.MetadataResponse) {
			for i := range r.Topics {
				r.Topics[i].Partitions = slices.DeleteFunc(r.Topics[i].Partitions, func(p kmsg.MetadataResponseTopicPartition) bool {
					return p.Partition == 0
				})
			}
		}), report.ExitKafkaError, nil},
		// The answer of a topic of one partition fewer: the group's
		// committed offsets on the last partition give it away.
		{"Metadata: the last partition left out", metadata(func(r *kmsg.MetadataResponse) {
			for i := range r.Topics {
				if r.Topics[i].Topic != nil && *r.Topics[i].Topic == topic {
					r.Topics[i].Partitions = slices.DeleteFunc(r.Topics[i].Partitions, func(p kmsg.MetadataResponseTopicPartition) bool {
						return p.Partition == partitions-1
					})
				}
			}
		}), report.ExitKafkaError, nil},
		{"Metadata: the topic left out", metadata(func(r *kmsg.MetadataResponse) {
			r.Topics = nil
		}), report.ExitKafkaError, nil},
	} {
		t.Run(m.name, func(t *testing.T) {
			c := seeded(t)
			px := kafkatest.NewProxy(t, c)
			px.SetHook(func(req kmsg.Request, answer kmsg.Response) kafkatest.Verdict {
				if answer != nil {
					m.do(answer)
				}
				return kafkatest.Pass
			})
			before := committedOf(t, c, group)
			p := runBinary(t, runnerBin, nil, "--bootstrap-servers", px.Bootstrap(), "--group", group, "--topic", topic, "--to", "earliest", "--run-id", "mangled", "--timeout", "10s")
			if m.hit != nil && m.hit.Load() == 0 {
				t.Fatal("no answer was mangled")
			}
			if p.result == nil {
				t.Fatalf("no result: %v\n%s", p.state, p.stderr)
			}
			t.Logf("exit %d %s: %s", p.result.ExitCode, p.result.Reason, p.result.Error)
			if p.state.ExitCode() != int(p.result.ExitCode) || p.result.ExitCode != m.want {
				t.Fatalf("exit %v, result %d %s (want %d): %s\n%s", p.state, p.result.ExitCode, p.result.Reason, m.want, p.result.Error, p.stderr)
			}
			// The runner logs "committing" just before its commit.
			committing := strings.Contains(p.stderr, "msg=committing ")
			if m.want != report.ExitOK {
				// Refused before a commit was attempted: librdkafka's own
				// check of a commit's offsets is no guard of the plan's.
				if committing {
					t.Fatalf("a plan made from a mangled answer reached the commit: %s\n%s", p.result.Error, p.stderr)
				}
				if !sameCommitted(before, committedOf(t, c, group)) {
					t.Fatal("offsets changed")
				}
				return
			}
			if !committing {
				t.Fatalf("applied without logging its commit: the check above sees nothing\n%s", p.stderr)
			}
			for k, v := range offsetsOf(t, c, group) {
				if v != 0 {
					t.Errorf("%s at %d, want 0 (earliest)", k, v)
				}
			}
		})
	}
}
