package rdkafka

/*
#include "admin.h"
*/
import "C"

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-replay/kafka-replay/runner/config"
)

// TP is a topic partition.
type TP = config.TopicPartition

// ListOffsets looks up spec for asked (sorted, no duplicates) in one
// ListOffsets request per leader, answered in asked's order. Its errors
// are a kafka.Error of the whole call, or a partition's, wrapped with the
// partition's name, or a partition no answer named; what names the call in
// those.
//
// It is rd_kafka_offsets_for_times, not the admin API's rd_kafka_ListOffsets,
// which crashes the process (SIGSEGV) on an answer that leaves out some of
// a leader's partitions (upstream/). The call blocks a thread for up to the
// time left in ctx; when ctx ends first, it returns at once and the call
// runs on to its own end, before Close destroys the client.
func (c *Client) ListOffsets(ctx context.Context, what string, asked []TP, spec kafka.OffsetSpec) ([]int64, error) {
	if len(asked) == 0 {
		return nil, nil
	}
	// The names of the call's topics, as asked has them, back to back.
	var names []byte
	rows := make([]C.kr_lo_row, len(asked))
	topics := 0
	for i, tp := range asked {
		if i == 0 || asked[i-1].Topic != tp.Topic {
			names = append(append(names, tp.Topic...), 0)
			topics++
		}
		rows[i] = C.kr_lo_row{topic: C.int32_t(topics - 1), partition: C.int32_t(tp.Partition)}
	}
	timeout := C.int(requestTimeout(ctx).Milliseconds())
	done := make(chan C.int, 1)
	c.calls.Add(1)
	go func() {
		defer c.calls.Done()
		done <- C.kr_lo(c.rk, (*C.char)(unsafe.Pointer(&names[0])), C.int(topics), &rows[0], C.int(len(rows)), C.int64_t(spec), timeout)
	}()
	var code C.int
	select {
	case code = <-done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	switch code {
	case 0:
	case C.KR_LO_NOMEM:
		return nil, fmt.Errorf("%s: out of memory", what)
	default:
		return nil, kafka.NewError(kafka.ErrorCode(code), "", false)
	}
	got := make([]int64, len(asked))
	for i, r := range rows {
		switch {
		case r.err != 0:
			return nil, fmt.Errorf("%s: %w", asked[i], kafka.NewError(kafka.ErrorCode(r.err), "", false))
		case r.answered == 0:
			return nil, fmt.Errorf("%s: no answer for %s", what, asked[i])
		}
		got[i] = int64(r.offset)
	}
	return got, nil
}

// waitEvent waits for the call's result on q until ctx ends, when it
// returns nil. The wait is in C, woken early by rd_kafka_queue_yield when
// ctx ends, and it returns only once nothing else uses q.
func waitEvent(ctx context.Context, q *C.rd_kafka_queue_t) *C.rd_kafka_event_t {
	woken := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		C.rd_kafka_queue_yield(q)
		close(woken)
	})
	defer func() {
		if !stop() {
			<-woken // the yield is running or ran: q is still in use until then
		}
	}()
	for ctx.Err() == nil {
		// The bound only keeps a lost wake-up from hanging the wait.
		if ev := C.rd_kafka_queue_poll(q, C.int(time.Second.Milliseconds())); ev != nil {
			return ev
		}
	}
	return nil
}

// Topic is one topic of a DescribeTopics answer: its error
// (kafka.ErrNoError if none) and its partitions, as answered.
type Topic struct {
	Name       string
	Err        kafka.Error
	Partitions []Partition
}

// Partition is one partition of a DescribeTopics answer; Leader is -1
// when it has none.
type Partition struct {
	ID, Leader int32
}

// DescribeTopics is one DescribeTopics call of topics, answered topic by
// topic as the brokers answered (nothing checked but the call's error),
// without a Go value for every replica of every partition
// (confluent-kafka-go's conversion was 4% of the CPU of a 10,000-partition
// run).
func (c *Client) DescribeTopics(ctx context.Context, topics []string) ([]Topic, error) {
	var names []byte
	for _, t := range topics {
		names = append(append(names, t...), 0)
	}
	var errstr [512]C.char
	q := C.kr_dt_start(c.rk, (*C.char)(unsafe.Pointer(&names[0])), C.int(len(topics)),
		C.int(requestTimeout(ctx).Milliseconds()), &errstr[0], C.size_t(len(errstr)))
	if q == nil {
		return nil, kafka.NewError(kafka.ErrInvalidArg, C.GoString(&errstr[0]), false)
	}
	ev := waitEvent(ctx, q)
	if ev != nil {
		defer C.rd_kafka_event_destroy(ev)
	}
	defer C.rd_kafka_queue_destroy(q)
	if ev == nil {
		return nil, ctx.Err()
	}
	var descs []C.kr_dt_topic
	var parts []C.kr_dt_partition
	var nt, np C.int
	for {
		var dp *C.kr_dt_topic
		var pp *C.kr_dt_partition
		if len(descs) > 0 {
			dp = &descs[0]
		}
		if len(parts) > 0 {
			pp = &parts[0]
		}
		code := C.kr_dt_result(ev, dp, C.int(len(descs)), pp, C.int(len(parts)), &nt, &np, &errstr[0], C.size_t(len(errstr)))
		if code == C.KR_TOO_SMALL {
			descs, parts = make([]C.kr_dt_topic, nt), make([]C.kr_dt_partition, max(np, 1))
			continue
		}
		if code != 0 {
			return nil, kafka.NewError(kafka.ErrorCode(code), C.GoString(&errstr[0]), false)
		}
		break
	}
	all := make([]Partition, np)
	for i, p := range parts[:np] {
		all[i] = Partition{ID: int32(p.partition), Leader: -1}
		if p.has_leader != 0 {
			all[i].Leader = int32(p.leader)
		}
	}
	out := make([]Topic, nt)
	for i, d := range descs[:nt] {
		out[i] = Topic{Name: C.GoString(d.name), Err: kafka.NewError(kafka.ErrorCode(d.err), C.GoString(d.errstr), false),
			Partitions: all[d.first : d.first+d.count : d.first+d.count]}
	}
	return out, nil
}

// commitRows packs partitions (and, for a commit, offsets and metadata)
// for kr_commit_start, in the order given: the
// commit's order is the request's (see kafkaClient.alter).
type commitRows struct {
	names []byte
	rows  []C.kr_commit_row
	md    []byte
}

func (r *commitRows) add(tp TP, offset int64, md string, topics map[string]int32) {
	i, ok := topics[tp.Topic]
	if !ok {
		i = int32(len(topics))
		topics[tp.Topic] = i
		r.names = append(append(r.names, tp.Topic...), 0)
	}
	r.rows = append(r.rows, C.kr_commit_row{topic: C.int32_t(i), partition: C.int32_t(tp.Partition),
		offset: C.int64_t(offset), md_off: C.int32_t(len(r.md)), md_len: C.int32_t(len(md))})
	r.md = append(r.md, md...)
}

func (r *commitRows) pointers() (names *C.char, rows *C.kr_commit_row, md *C.char) {
	if len(r.names) > 0 {
		names = (*C.char)(unsafe.Pointer(&r.names[0]))
	}
	if len(r.rows) > 0 {
		rows = &r.rows[0]
	}
	if len(r.md) > 0 {
		md = (*C.char)(unsafe.Pointer(&r.md[0]))
	}
	return
}

// groupPartitions waits for a group call's result (AlterConsumerGroupOffsets)
// on q and calls each with every
// partition of it (C memory, read in place: no call into C per
// partition), with its topic as a Go string shared by the partitions of
// a topic. Its errors are a kafka.Error of the call or of the group.
func groupPartitions(ctx context.Context, q *C.rd_kafka_queue_t, eventType C.int, each func(tp TP, p *C.rd_kafka_topic_partition_t) error) error {
	ev := waitEvent(ctx, q)
	if ev != nil {
		defer C.rd_kafka_event_destroy(ev)
	}
	defer C.rd_kafka_queue_destroy(q)
	if ev == nil {
		return ctx.Err()
	}
	var errstr [512]C.char
	var code C.int
	list := C.kr_group_result(ev, eventType, &code, &errstr[0], C.size_t(len(errstr)))
	if code != 0 {
		return kafka.NewError(kafka.ErrorCode(code), C.GoString(&errstr[0]), false)
	}
	if list == nil || list.cnt == 0 {
		return nil
	}
	var topic string
	elems := unsafe.Slice(list.elems, list.cnt)
	for i := range elems {
		p := &elems[i]
		if !sameCString(p.topic, topic) {
			topic = C.GoString(p.topic)
		}
		if err := each(TP{Topic: topic, Partition: int32(p.partition)}, p); err != nil {
			return err
		}
	}
	return nil
}

// sameCString reports whether the C string p is s, reading no further
// into p than its terminator or its first difference from s.
func sameCString(p *C.char, s string) bool {
	if p == nil || s == "" {
		return false
	}
	for i := range len(s) {
		if *(*byte)(unsafe.Add(unsafe.Pointer(p), i)) != s[i] {
			return false // p's terminator, too, differs from s's bytes
		}
	}
	return *(*byte)(unsafe.Add(unsafe.Pointer(p), len(s))) == 0
}

// Commit is one AlterConsumerGroupOffsets call of group (one OffsetCommit
// request) that commits n partitions, row(i) the i-th, in that order, and
// calls failed with each partition answered with an error. Unlike
// confluent-kafka-go v2.11.1 it frees its C copy of the partitions (that
// one never did: 2.7 MiB per attempt at 10,000 partitions).
func (c *Client) Commit(ctx context.Context, group string, n int, row func(i int) (tp TP, offset int64, metadata string), failed func(TP, kafka.ErrorCode)) error {
	var r commitRows
	r.rows = make([]C.kr_commit_row, 0, n)
	topics := map[string]int32{}
	for i := range n {
		tp, offset, md := row(i)
		r.add(tp, offset, md, topics)
	}
	names, rows, md := r.pointers()
	cgroup := C.CString(group)
	defer C.free(unsafe.Pointer(cgroup))
	var errstr [512]C.char
	q := C.kr_commit_start(c.rk, cgroup, names, C.int(len(topics)), rows, C.int(len(r.rows)), md,
		C.int(requestTimeout(ctx).Milliseconds()), &errstr[0], C.size_t(len(errstr)))
	if q == nil {
		return kafka.NewError(kafka.ErrInvalidArg, C.GoString(&errstr[0]), false)
	}
	return groupPartitions(ctx, q, C.RD_KAFKA_EVENT_ALTERCONSUMERGROUPOFFSETS_RESULT, func(tp TP, p *C.rd_kafka_topic_partition_t) error {
		if p.err != 0 {
			failed(tp, kafka.ErrorCode(p.err))
		}
		return nil
	})
}

// Group is a DescribeConsumerGroups answer for one group: its error
// (kafka.ErrNoError if none), state, protocol (classic or KIP-848's
// consumer protocol) and members.
type Group struct {
	Err     kafka.Error
	State   kafka.ConsumerGroupState
	Type    kafka.ConsumerGroupType
	Members []Member
}

// Member is one member of a group.
type Member struct {
	ClientID, ConsumerID, Host string
}

// DescribeGroup is one DescribeConsumerGroups call of group.
func (c *Client) DescribeGroup(ctx context.Context, group string) (Group, error) {
	cgroup := C.CString(group)
	defer C.free(unsafe.Pointer(cgroup))
	var errstr [512]C.char
	q := C.kr_dg_start(c.rk, cgroup, C.int(requestTimeout(ctx).Milliseconds()), &errstr[0], C.size_t(len(errstr)))
	if q == nil {
		return Group{}, kafka.NewError(kafka.ErrInvalidArg, C.GoString(&errstr[0]), false)
	}
	ev := waitEvent(ctx, q)
	if ev != nil {
		defer C.rd_kafka_event_destroy(ev)
	}
	defer C.rd_kafka_queue_destroy(q)
	if ev == nil {
		return Group{}, ctx.Err()
	}
	var code C.int
	d := C.kr_dg_result(ev, &code, &errstr[0], C.size_t(len(errstr)))
	if d == nil {
		return Group{}, kafka.NewError(kafka.ErrorCode(code), C.GoString(&errstr[0]), false)
	}
	g := Group{Err: kafka.NewError(kafka.ErrNoError, "", false), State: kafka.ConsumerGroupState(C.rd_kafka_ConsumerGroupDescription_state(d)),
		Type: kafka.ConsumerGroupType(C.rd_kafka_ConsumerGroupDescription_type(d))}
	if e := C.rd_kafka_ConsumerGroupDescription_error(d); e != nil {
		g.Err = kafka.NewError(kafka.ErrorCode(C.rd_kafka_error_code(e)), C.GoString(C.rd_kafka_error_string(e)), false)
	}
	for i := range int(C.rd_kafka_ConsumerGroupDescription_member_count(d)) {
		m := C.rd_kafka_ConsumerGroupDescription_member(d, C.size_t(i))
		g.Members = append(g.Members, Member{ClientID: C.GoString(C.rd_kafka_MemberDescription_client_id(m)),
			ConsumerID: C.GoString(C.rd_kafka_MemberDescription_consumer_id(m)), Host: C.GoString(C.rd_kafka_MemberDescription_host(m))})
	}
	return g, nil
}

// requestTimeout gives each request the time left in ctx (librdkafka
// otherwise applies its own, shorter default).
func requestTimeout(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		if d := time.Until(dl); d > 0 {
			return d
		}
		return time.Millisecond
	}
	return 60 * time.Second
}
