package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replay/kafka-replay/runner/config"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// TestRdkafkaHeaderIsTheBindings: internal/rdkafka compiles against its
// copy of rdkafka.h, which must be the one of the confluent-kafka-go (and
// so of the librdkafka) that go.mod requires: after an upgrade, copy the
// new one.
func TestRdkafkaHeaderIsTheBindings(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/confluentinc/confluent-kafka-go/v2").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	theirs, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "kafka", "librdkafka_vendor", "rdkafka.h"))
	if err != nil {
		t.Fatal(err)
	}
	ours, err := os.ReadFile(filepath.Join("internal", "rdkafka", "rdkafka.h"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ours, theirs) {
		t.Error("internal/rdkafka/rdkafka.h is not the rdkafka.h of the confluent-kafka-go in go.mod: copy it from there")
	}
}

// loBase is when the records these tests seed begin.
var loBase = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func loCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// newTestReader is the runner's second client (offsets.go's reader) for
// bootstrap.
func newTestReader(t *testing.T, bootstrap string) *kgo.Client {
	t.Helper()
	opts, err := secondOptions(&config.Config{BootstrapServers: bootstrap})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(append(opts, kgo.MaxVersions(readerVersions()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func newTestClient(t *testing.T, bootstrap string) *kafkaClient {
	t.Helper()
	k, err := newKafkaClient(&config.Config{BootstrapServers: bootstrap}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

// TestListOffsetsDirectAgreesWithAdmin asks the same questions through
// internal/rdkafka and through confluent-kafka-go's
// AdminClient.ListOffsets, on a real-protocol Kafka, and wants the same
// answers and the same errors: every offset spec, partitions of several
// topics and leaders, logs whose start was moved, empty logs, partitions
// and topics that do not exist, and a broker that fails the request.
func TestListOffsetsDirectAgreesWithAdmin(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := kafkatest.New(t, 3)
	ctx := loCtx(t)
	seed := map[string]int32{"agree-a": 5, "agree-b": 3, "agree-c": 8}
	for name, parts := range seed {
		if err := c.Seed(ctx, name, parts, 20, loBase, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.CreateTopic(ctx, "agree-empty", 2); err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 3; p++ {
		if err := c.DeleteRecords(ctx, "agree-c", p, int64(5+p)); err != nil {
			t.Fatal(err)
		}
	}
	k := newTestClient(t, c.Bootstrap())
	oracle := newConfluentOracle(t, c.Bootstrap())
	var all []TP
	for name, parts := range seed {
		for p := range parts {
			all = append(all, TP{Topic: name, Partition: p})
		}
	}
	all = append(all, TP{Topic: "agree-empty", Partition: 0}, TP{Topic: "agree-empty", Partition: 1})
	sortTPs(all)
	ms := func(d time.Duration) kafka.OffsetSpec {
		return kafka.NewOffsetSpecForTimestamp(loBase.Add(d).UnixMilli())
	}
	specs := map[string]kafka.OffsetSpec{
		"earliest": kafka.EarliestOffsetSpec, "latest": kafka.LatestOffsetSpec, "max timestamp": kafka.MaxTimestampOffsetSpec,
		"before the first record": ms(-time.Hour), "a record's time": ms(7 * time.Second),
		"between two records": ms(7*time.Second + 500*time.Millisecond), "after the last record": ms(time.Hour),
	}
	sets := map[string][]TP{
		"all":               all,
		"one":               {{Topic: "agree-b", Partition: 2}},
		"one topic":         all[len(all)-3:],
		"unknown partition": {{Topic: "agree-a", Partition: 0}, {Topic: "agree-a", Partition: 99}},
		"unknown topic":     {{Topic: "agree-a", Partition: 1}, {Topic: "agree-nope", Partition: 0}},
	}
	compare := func(t *testing.T, set []TP, spec kafka.OffsetSpec) {
		t.Helper()
		asked := append([]TP(nil), set...)
		sortTPs(asked)
		direct, derr := k.listOffsetsOnce(ctx, "list", asked, spec)
		admin, aerr := oracle.listOffsets(ctx, "list", asked, spec)
		// Where several partitions fail, AdminClient.ListOffsets's map
		// names any one of them; internal/rdkafka the first, or none
		// where a broker's answer failed them (rd_kafka_offsets_for_times
		// makes the first partition's error the call's). The codes agree.
		if d, a := withoutPartition(derr, asked), withoutPartition(aerr, asked); d != a {
			t.Fatalf("errors differ: direct %v, admin %v", derr, aerr)
		}
		var dke, ake kafka.Error
		if errors.As(derr, &dke) != errors.As(aerr, &ake) || dke.Code() != ake.Code() || retriable(derr) != retriable(aerr) {
			t.Fatalf("error kinds differ: direct %#v, admin %#v", derr, aerr)
		}
		if fmt.Sprint(direct) != fmt.Sprint(admin) {
			t.Fatalf("answers differ:\ndirect %v\nadmin  %v", direct, admin)
		}
		if derr == nil && len(direct) != len(asked) {
			t.Fatalf("%d answers for %d partitions", len(direct), len(asked))
		}
	}
	errs := 0
	for sname, set := range sets {
		for pname, spec := range specs {
			t.Run(sname+"/"+pname, func(t *testing.T) {
				compare(t, set, spec)
				if _, err := k.listOffsetsOnce(ctx, "list", set, spec); err != nil {
					errs++
				}
			})
		}
	}
	// The unknown partition and topic fail for every spec, and only they.
	if want := 2 * len(specs); errs != want {
		t.Errorf("%d failed lookups, want %d", errs, want)
	}
	t.Run("broker fails the request", func(t *testing.T) {
		c.RequireFake(t) // faults on demand
		for _, e := range []*kerr.Error{kerr.UnknownServerError, kerr.NotLeaderForPartition, kerr.UnknownTopicOrPartition} {
			f := c.Fake.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: "agree-a", Err: e, Count: -1})
			compare(t, all, kafka.LatestOffsetSpec)
			if _, err := k.listOffsetsOnce(ctx, "list", all, kafka.LatestOffsetSpec); err == nil {
				t.Errorf("%s: no error", e)
			}
			f.Remove()
		}
	})
}

// agree fails t unless the two ways of one call gave the same answer and
// the same error (message, Kafka code, retriable or not).
func agree[T any](t *testing.T, direct T, derr error, admin T, aerr error) {
	t.Helper()
	if fmt.Sprint(derr) != fmt.Sprint(aerr) || retriable(derr) != retriable(aerr) {
		t.Fatalf("errors differ: direct %v, admin %v", derr, aerr)
	}
	var dke, ake kafka.Error
	if errors.As(derr, &dke) != errors.As(aerr, &ake) || dke.Code() != ake.Code() {
		t.Fatalf("error kinds differ: direct %#v, admin %#v", derr, aerr)
	}
	if !reflect.DeepEqual(direct, admin) {
		t.Fatalf("answers differ:\ndirect %v\nadmin  %v", direct, admin)
	}
}

// seedTopics makes topics of the given partitions, each with records
// records a second apart from loBase.
func seedTopics(t *testing.T, c *kafkatest.Cluster, topics map[string]int32, records int) {
	t.Helper()
	for name, parts := range topics {
		if err := c.Seed(loCtx(t), name, parts, records, loBase, time.Second); err != nil {
			t.Fatal(err)
		}
	}
}

// withoutPartition is err's message without the name of the partition it
// begins with, if it names one of asked.
func withoutPartition(err error, asked []TP) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	for _, tp := range asked {
		if rest, ok := strings.CutPrefix(msg, tp.String()+": "); ok {
			return rest
		}
	}
	return msg
}

// TestListOffsetsDirectGivesUpWithItsContext: a call whose broker never
// answers returns when its context ends, with the context's error, as
// AdminClient.ListOffsets does; the client stays usable, and the answer
// that arrives later for the abandoned call goes nowhere.
func TestListOffsetsDirectGivesUpWithItsContext(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := kafkatest.New(t, 1)
	c.RequireFake(t)
	const records = 10
	if err := c.Seed(loCtx(t), "held", 2, records, loBase, time.Second); err != nil {
		t.Fatal(err)
	}
	k := newTestClient(t, c.Bootstrap())
	asked := []TP{{Topic: "held", Partition: 0}, {Topic: "held", Partition: 1}}
	if _, err := k.listOffsetsOnce(loCtx(t), "list", asked, kafka.LatestOffsetSpec); err != nil {
		t.Fatal(err) // connections and metadata, before the hold
	}
	reached := make(chan struct{}, 16)
	release := make(chan struct{})
	c.Fake.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		select {
		case reached <- struct{}{}:
		default:
		}
		c.Fake.SleepControl(func() { <-release })
		return nil, nil, false
	})
	ctx, cancel := context.WithCancel(loCtx(t))
	done := make(chan error, 1)
	go func() {
		_, err := k.listOffsetsOnce(ctx, "list", asked, kafka.LatestOffsetSpec)
		done <- err
	}()
	select {
	case <-reached:
	case <-time.After(30 * time.Second):
		t.Fatal("the call never reached the broker")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want the context's error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not return when its context ended")
	}
	close(release)
	got, err := k.listOffsetsOnce(loCtx(t), "list", asked, kafka.LatestOffsetSpec)
	if err != nil || len(got) != 2 || got[0].offset != records || got[1].offset != records {
		t.Fatalf("after the abandoned call: %v, %v", got, err)
	}
}

// TestDescribeTopicsDirectAgreesWithAdmin asks for the same topics through
// internal/rdkafka and through AdminClient.DescribeTopics and wants the
// same partitions, leaders and errors: topics of several sizes on three
// brokers, unknown topics, invalid names, and a broker that fails the
// request for a topic.
func TestDescribeTopicsDirectAgreesWithAdmin(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := kafkatest.New(t, 3)
	ctx := loCtx(t)
	for name, parts := range map[string]int32{"desc-a": 1, "desc-b": 7, "desc-c": 40} {
		if err := c.CreateTopic(ctx, name, parts); err != nil {
			t.Fatal(err)
		}
	}
	k := newTestClient(t, c.Bootstrap())
	oracle := newConfluentOracle(t, c.Bootstrap())
	compare := func(t *testing.T, topics []string) (topicInfo, error) {
		t.Helper()
		direct, derr := k.describeTopicsOnce(ctx, topics)
		admin, aerr := oracle.describeTopics(ctx, topics)
		agree(t, direct, derr, admin, aerr)
		return direct, derr
	}
	// An invalid name: kfake calls the topic unknown, Apache Kafka refuses
	// the request (INVALID_TOPIC_EXCEPTION). The runner never asks for one
	// (config checks names first); both paths must agree either way.
	invalid := struct {
		topics     []string
		partitions int
		fails      bool
	}{topics: []string{"desc-a", "bad name!"}, partitions: 1}
	if c.Fake == nil {
		invalid.partitions, invalid.fails = 0, true
	}
	for name, tc := range map[string]struct {
		topics     []string
		partitions int
		fails      bool
	}{
		"one":                 {topics: []string{"desc-b"}, partitions: 7},
		"all":                 {topics: []string{"desc-c", "desc-a", "desc-b"}, partitions: 48},
		"with an unknown one": {topics: []string{"desc-a", "desc-nope"}, partitions: 1},
		"only unknown":        {topics: []string{"desc-nope"}},
		"an invalid name":     invalid,
	} {
		t.Run(name, func(t *testing.T) {
			got, err := compare(t, tc.topics)
			if (err != nil) != tc.fails || len(got.Leaders) != tc.partitions {
				t.Fatalf("%d leaders, error %v", len(got.Leaders), err)
			}
		})
	}
	t.Run("broker fails a topic", func(t *testing.T) {
		c.RequireFake(t) // faults on demand
		f := c.Fake.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Metadata}, Topic: "desc-b", Err: kerr.TopicAuthorizationFailed, Count: -1})
		defer f.Remove()
		if _, err := compare(t, []string{"desc-a", "desc-b"}); err == nil {
			t.Fatal("no error")
		}
	})
}

// TestCommittedDirectAgreesWithAdmin reads a group's committed offsets
// through the runner's reader (franz-go, offsets.go) and through
// librdkafka's AdminClient.ListConsumerGroupOffsets and wants the same
// offsets, metadata and errors: all of a group's
// offsets, chosen partitions (committed, never committed, of an unknown
// topic), a group that never committed, and a broker that fails the read
// for a partition or for the whole group.
func TestCommittedDirectAgreesWithAdmin(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := kafkatest.New(t, 3)
	ctx := loCtx(t)
	seedTopics(t, c, map[string]int32{"cg-a": 6, "cg-b": 3}, 10)
	if err := c.Commit(ctx, "cg", kafkatest.Offsets{"cg-a": {0: 3, 1: 4, 4: 9}, "cg-b": {2: 10}}, "consumer-1"); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(ctx, "cg", kafkatest.Offsets{"cg-a": {5: 0}}, ""); err != nil {
		t.Fatal(err)
	}
	reader := newTestReader(t, c.Bootstrap())
	oracle := newConfluentOracle(t, c.Bootstrap())
	// fault, if any, is set for each of the two calls: a fault of a
	// request or two must reach both.
	// The two clients word errors differently (the AdminClient prefixes
	// its worker's words): the answers, whether there is an error, its
	// code and whether a retry can help must agree.
	compare := func(t *testing.T, group string, tps []TP, fault *kfake.Fault) (map[TP]Committed, error) {
		t.Helper()
		withFault := func(read func() (map[TP]Committed, error)) (map[TP]Committed, error) {
			if fault != nil {
				c.RequireFake(t) // faults on demand
				defer c.Fake.Fault(*fault).Remove()
			}
			return read()
		}
		direct, derr := withFault(func() (map[TP]Committed, error) { return fetchCommitted(ctx, reader, group, tps) })
		admin, aerr := withFault(func() (map[TP]Committed, error) { return oracle.committed(ctx, group, tps) })
		var dke, ake kafka.Error
		if (derr == nil) != (aerr == nil) || retriable(derr) != retriable(aerr) || errors.As(derr, &dke) != errors.As(aerr, &ake) || dke.Code() != ake.Code() {
			t.Fatalf("errors differ: reader %v, admin %v", derr, aerr)
		}
		if !reflect.DeepEqual(direct, admin) {
			t.Fatalf("answers differ:\nreader %v\nadmin  %v", direct, admin)
		}
		return direct, derr
	}
	for name, tc := range map[string]struct {
		group string
		tps   []TP
		want  int
	}{
		"all":           {group: "cg", want: 5},
		"chosen":        {group: "cg", tps: []TP{{Topic: "cg-a", Partition: 1}, {Topic: "cg-a", Partition: 2}, {Topic: "cg-b", Partition: 2}}, want: 2},
		"unknown topic": {group: "cg", tps: []TP{{Topic: "cg-a", Partition: 0}, {Topic: "cg-nope", Partition: 0}}, want: 1},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := compare(t, tc.group, tc.tps, nil)
			if err != nil || len(got) != tc.want {
				t.Fatalf("%d offsets (%v), error %v", len(got), got, err)
			}
		})
	}
	t.Run("a group that never committed", func(t *testing.T) {
		// kfake answers GROUP_ID_NOT_FOUND, as newer brokers may, and
		// committedCall makes that error no offsets; Apache Kafka 4.4
		// lists no offsets.
		got, err := compare(t, "cg-none", nil, nil)
		var ke kafka.Error
		if c.Fake != nil && (!errors.As(err, &ke) || ke.Code() != kafka.ErrGroupIDNotFound) {
			t.Fatalf("got %v", err)
		}
		if c.Fake == nil && (err != nil || len(got) != 0) {
			t.Fatalf("got %v, %v", got, err)
		}
	})
	t.Run("none asked for", func(t *testing.T) {
		// Not all of them (AdminClient.ListConsumerGroupOffsets refuses an
		// empty list; committed never asks for none).
		if got, err := fetchCommitted(ctx, reader, "cg", []TP{}); err != nil || len(got) != 0 {
			t.Fatalf("%v %v", got, err)
		}
	})
	if got, _ := fetchCommitted(ctx, reader, "cg", nil); got[TP{Topic: "cg-a", Partition: 1}] != (Committed{Offset: 4, Metadata: "consumer-1"}) || got[TP{Topic: "cg-a", Partition: 5}] != (Committed{}) {
		t.Errorf("offsets and metadata: %v", got)
	}
	chosen := []TP{{Topic: "cg-a", Partition: 0}, {Topic: "cg-b", Partition: 2}}
	t.Run("broker fails a partition", func(t *testing.T) {
		f := kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetFetch}, Topic: "cg-b", Err: kerr.UnstableOffsetCommit, Count: -1}
		if _, err := compare(t, "cg", chosen, &f); err == nil {
			t.Fatal("no error")
		}
	})
	// kfake's group-level faults make an OffsetFetch answer (v9) without
	// the group, which librdkafka cannot parse ("Read underflow") and
	// franz-go's sharding would read as no offsets at all: the reader
	// refuses it, as an answer of what cannot be, and never plans from it.
	t.Run("an answer without the group", func(t *testing.T) {
		c.RequireFake(t) // faults on demand
		for _, f := range []kfake.Fault{
			{Keys: []kmsg.Key{kmsg.OffsetFetch}, Group: "cg", TopLevel: true, Err: kerr.GroupAuthorizationFailed, Count: -1},
			{Keys: []kmsg.Key{kmsg.OffsetFetch}, Group: "cg", TopLevel: true, Err: kerr.CoordinatorLoadInProgress, Count: 1},
		} {
			rm := c.Fake.Fault(f)
			got, err := fetchCommitted(ctx, reader, "cg", nil)
			rm.Remove()
			var ke kafka.Error
			if !errors.As(err, &ke) || ke.Code() != kafka.ErrBadMsg || retriable(err) || len(got) != 0 {
				t.Errorf("%s: %v, %v: want the answer refused", f.Err.Message, got, err)
			}
		}
	})
}

// TestCommitDirectAgreesWithAdmin commits the same offsets and metadata to
// two groups, one through internal/rdkafka and one through
// AdminClient.AlterConsumerGroupOffsets, and wants the same per-partition
// errors, the same call errors and the same offsets committed: a clean
// commit, partitions the broker refuses, an unknown partition, and a
// coordinator that fails the whole request.
func TestCommitDirectAgreesWithAdmin(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := kafkatest.New(t, 3)
	ctx := loCtx(t)
	seedTopics(t, c, map[string]int32{"cm-a": 5, "cm-b": 2}, 10)
	k := newTestClient(t, c.Bootstrap())
	oracle := newConfluentOracle(t, c.Bootstrap())
	var offsets []commitOffset
	for _, tp := range []TP{{Topic: "cm-a", Partition: 0}, {Topic: "cm-a", Partition: 1}, {Topic: "cm-a", Partition: 2}, {Topic: "cm-a", Partition: 3}, {Topic: "cm-a", Partition: 4}, {Topic: "cm-b", Partition: 0}, {Topic: "cm-b", Partition: 1}} {
		offsets = append(offsets, commitOffset{TP: tp, Offset: int64(tp.Partition + 2), Metadata: fmt.Sprintf("run-%d \x00 é", tp.Partition)})
	}
	offsets[6].Metadata = ""
	attempt := 0
	// fault, if any, is set for each of the two commits.
	compare := func(t *testing.T, offsets []commitOffset, fault *kfake.Fault) (map[TP]error, error) {
		t.Helper()
		attempt++
		gd, ga := fmt.Sprintf("cm-direct-%d", attempt), fmt.Sprintf("cm-admin-%d", attempt)
		withFault := func(commit func() (map[TP]error, error)) (map[TP]error, error) {
			if fault != nil {
				c.RequireFake(t) // faults on demand
				defer c.Fake.Fault(*fault).Remove()
			}
			return commit()
		}
		direct, derr := withFault(func() (map[TP]error, error) { return k.alterOnce(ctx, gd, offsets) })
		admin, aerr := withFault(func() (map[TP]error, error) { return oracle.alter(ctx, ga, offsets) })
		if fmt.Sprint(derr) != fmt.Sprint(aerr) || retriable(derr) != retriable(aerr) {
			t.Fatalf("errors differ: direct %v, admin %v", derr, aerr)
		}
		if fmt.Sprint(direct) != fmt.Sprint(admin) {
			t.Fatalf("failed partitions differ:\ndirect %v\nadmin  %v", direct, admin)
		}
		cd, err1 := c.Committed(ctx, gd)
		ca, err2 := c.Committed(ctx, ga)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(cd, ca) {
			t.Fatalf("committed differ:\ndirect %v (%v)\nadmin  %v (%v)", cd, err1, ca, err2)
		}
		return direct, derr
	}
	t.Run("clean", func(t *testing.T) {
		failed, err := compare(t, offsets, nil)
		if err != nil || len(failed) != 0 {
			t.Fatalf("%v %v", failed, err)
		}
		got, err := fetchCommitted(ctx, newTestReader(t, c.Bootstrap()), fmt.Sprintf("cm-direct-%d", attempt), nil)
		if err != nil || len(got) != len(offsets) || got[TP{Topic: "cm-a", Partition: 3}] != (Committed{Offset: 5, Metadata: offsets[3].Metadata}) || got[TP{Topic: "cm-b", Partition: 1}] != (Committed{Offset: 3}) {
			t.Fatalf("read back %v, %v", got, err)
		}
	})
	t.Run("an unknown partition", func(t *testing.T) {
		failed, err := compare(t, append(append([]commitOffset(nil), offsets...), commitOffset{TP: TP{Topic: "cm-b", Partition: 7}, Offset: 1}), nil)
		if err != nil || len(failed) != 1 || failed[TP{Topic: "cm-b", Partition: 7}] == nil {
			t.Fatalf("%v %v", failed, err)
		}
	})
	for _, f := range []kfake.Fault{
		{Keys: []kmsg.Key{kmsg.OffsetCommit}, Topic: "cm-b", Err: kerr.OffsetMetadataTooLarge, Count: 2},
		{Keys: []kmsg.Key{kmsg.OffsetCommit}, Err: kerr.RebalanceInProgress, Count: 2},
		{Keys: []kmsg.Key{kmsg.OffsetCommit}, Err: kerr.CoordinatorLoadInProgress, Count: 2},
	} {
		t.Run("broker fails: "+f.Err.Message, func(t *testing.T) {
			failed, err := compare(t, offsets, &f)
			if err == nil && len(failed) == 0 {
				t.Fatal("nothing failed")
			}
		})
	}
}
