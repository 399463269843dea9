package runner

/*
#include <stdlib.h>
#include "rdkafka_admin.h"
*/
import "C"

import (
	"context"
	"fmt"
	"reflect"
	"time"
	"unsafe"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// The runner makes its admin calls (ListOffsets, DescribeTopics, the reads
// of committed offsets and the commit) through librdkafka's C API itself
// rather than through confluent-kafka-go's AdminClient, which crosses into
// C once per partition each way and answers with Go values per partition
// (a map keyed by a fat struct for ListOffsets, a value per replica for
// DescribeTopics). Here a call's partitions cross into C as one buffer and
// the answers are read back from C memory in place; librdkafka makes the
// same requests and reports the same errors (the Test*DirectAgreesWithAdmin
// tests ask both ways). make bench, alternating builds: a quarter of the
// wall time and CPU at 1,000 and 10,000 partitions (README, Performance).
// If confluent-kafka-go stops keeping its handle where adminHandle looks,
// the runner falls back to AdminClient (and TestDirectListOffsetsInUse
// fails, so that someone looks).

// rdHandle is librdkafka's client handle (rd_kafka_t) of a confluent-kafka-go
// AdminClient.
type rdHandle = *C.rd_kafka_t

// adminHandle returns the rd_kafka_t of a, which confluent-kafka-go keeps
// unexported (a.handle.rk), or nil if it is not where v2.11.1 keeps it
// (TestDirectListOffsetsInUse fails then). The handle is only
// used while a is open, as confluent-kafka-go itself uses it.
func adminHandle(a *kafka.AdminClient) rdHandle {
	v := reflect.ValueOf(a)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil
	}
	h := v.Elem().FieldByName("handle")
	if h.Kind() != reflect.Pointer || h.IsNil() {
		return nil
	}
	rk := h.Elem().FieldByName("rk")
	if rk.Kind() != reflect.Pointer || rk.Type().Elem().Name() != "_Ctype_struct_rd_kafka_s" || rk.IsNil() {
		return nil
	}
	return rdHandle(unsafe.Pointer(rk.Pointer()))
}

// clusterIDDirect is the cluster ID of the metadata librdkafka holds for
// rk, waiting up to timeout for some; empty when the brokers give none (or
// none came). AdminClient.ClusterID would wait out its whole context then.
func clusterIDDirect(rk rdHandle, timeout time.Duration) string {
	c := C.rd_kafka_clusterid(rk, C.int(timeout.Milliseconds()))
	if c == nil {
		return ""
	}
	defer C.rd_kafka_mem_free(rk, unsafe.Pointer(c))
	return C.GoString(c)
}

// listOffsetsDirect is one ListOffsets call of asked (sorted, no
// duplicates) for spec, answered in asked's order. Its errors are those of
// AdminClient.ListOffsets: a kafka.Error of the whole call, or a
// partition's, wrapped with the partition's name.
func listOffsetsDirect(ctx context.Context, rk rdHandle, what string, asked []TP, spec kafka.OffsetSpec) ([]tpOffset, error) {
	if len(asked) == 0 {
		return nil, nil
	}
	// The names of the call's topics, sorted as asked is, back to back.
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
	var errstr [512]C.char
	q := C.kr_lo_start(rk, (*C.char)(unsafe.Pointer(&names[0])), C.int(topics), &rows[0], C.int(len(rows)),
		C.int64_t(spec), C.int(requestTimeout(ctx).Milliseconds()), &errstr[0], C.size_t(len(errstr)))
	if q == nil {
		return nil, kafka.NewError(kafka.ErrInvalidArg, C.GoString(&errstr[0]), false)
	}
	ev := waitEvent(ctx, q)
	if ev != nil {
		defer C.rd_kafka_event_destroy(ev)
	}
	// Destroying the queue before the result arrives is how
	// confluent-kafka-go gives up on a call too: librdkafka drops it.
	defer C.rd_kafka_queue_destroy(q)
	if ev == nil {
		return nil, ctx.Err() // as AdminClient.ListOffsets says it
	}
	switch code := C.kr_lo_result(ev, (*C.char)(unsafe.Pointer(&names[0])), C.int(topics), &rows[0], C.int(len(rows)), &errstr[0], C.size_t(len(errstr))); code {
	case 0:
	case C.KR_LO_UNASKED:
		return nil, fmt.Errorf("%s: an answer for %s, which was not asked for", what, C.GoString(&errstr[0]))
	case C.KR_LO_NOMEM:
		return nil, fmt.Errorf("%s: out of memory", what)
	default:
		return nil, kafka.NewError(kafka.ErrorCode(code), C.GoString(&errstr[0]), false)
	}
	got := make([]tpOffset, len(asked))
	for i, r := range rows {
		switch {
		case r.err != 0:
			return nil, fmt.Errorf("%s: %w", asked[i], kafka.NewError(kafka.ErrorCode(r.err), "", false))
		case r.answered == 0:
			return nil, fmt.Errorf("%s: no answer for %s", what, asked[i])
		}
		got[i] = tpOffset{asked[i], int64(r.offset)}
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

// describeTopicsDirect is one call of describeTopics's, as
// AdminClient.DescribeTopics makes it, without building a Go value for
// every replica of every partition (confluent-kafka-go's conversion was
// 4% of the CPU of a 10,000-partition run). Its errors are
// AdminClient.DescribeTopics's.
func describeTopicsDirect(ctx context.Context, rk rdHandle, topics []string) (topicInfo, error) {
	var names []byte
	for _, t := range topics {
		names = append(append(names, t...), 0)
	}
	var errstr [512]C.char
	q := C.kr_dt_start(rk, (*C.char)(unsafe.Pointer(&names[0])), C.int(len(topics)),
		C.int(requestTimeout(ctx).Milliseconds()), &errstr[0], C.size_t(len(errstr)))
	if q == nil {
		return topicInfo{}, kafka.NewError(kafka.ErrInvalidArg, C.GoString(&errstr[0]), false)
	}
	ev := waitEvent(ctx, q)
	if ev != nil {
		defer C.rd_kafka_event_destroy(ev)
	}
	defer C.rd_kafka_queue_destroy(q)
	if ev == nil {
		return topicInfo{}, ctx.Err() // as AdminClient.DescribeTopics says it
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
			return topicInfo{}, kafka.NewError(kafka.ErrorCode(code), C.GoString(&errstr[0]), false)
		}
		break
	}
	out := topicInfo{Partitions: make(map[string]int32, nt), Leaders: make(map[TP]int32, np)}
	answered := make(map[string]bool, nt)
	first := make(map[string]C.kr_dt_topic, nt)
	for _, d := range descs[:nt] {
		name := C.GoString(d.name)
		answered[name] = true
		first[name] = d
		switch code := kafka.ErrorCode(d.err); code {
		case kafka.ErrNoError:
			out.Partitions[name] = int32(d.count)
			for _, p := range parts[d.first : d.first+d.count] {
				if p.has_leader != 0 {
					out.Leaders[TP{Topic: name, Partition: int32(p.partition)}] = int32(p.leader)
				}
			}
		case kafka.ErrUnknownTopicOrPart:
			// absent from the map: the planner names it
		default:
			return topicInfo{}, fmt.Errorf("topic %s: %w", name, kafka.NewError(code, C.GoString(d.errstr), false))
		}
	}
	err := checkTopicsAnswered(topics, answered, out.Partitions, func(t string) []int32 {
		d := first[t]
		ids := make([]int32, d.count)
		for i, p := range parts[d.first : d.first+d.count] {
			ids[i] = int32(p.partition)
		}
		return ids
	})
	if err != nil {
		return topicInfo{}, err
	}
	return out, nil
}

// commitRows packs partitions (and, for a commit, offsets and metadata)
// for kr_committed_start and kr_commit_start, in the order given: the
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

// groupPartitions waits for a ListConsumerGroupOffsets or
// AlterConsumerGroupOffsets result on q and calls each with every
// partition of it (C memory, read in place: no call into C per
// partition), with its topic as a Go string shared by the partitions of
// a topic. Its errors are confluent-kafka-go's for the same call.
func groupPartitions(ctx context.Context, q *C.rd_kafka_queue_t, eventType C.int, each func(tp TP, p *C.rd_kafka_topic_partition_t) error) error {
	ev := waitEvent(ctx, q)
	if ev != nil {
		defer C.rd_kafka_event_destroy(ev)
	}
	defer C.rd_kafka_queue_destroy(q)
	if ev == nil {
		return ctx.Err() // as confluent-kafka-go says it
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

// committedDirect is one call of committedCall's, as
// AdminClient.ListConsumerGroupOffsets makes it (stable offsets only; all
// of the group's offsets when tps is nil), without confluent-kafka-go's
// calls into C for every partition of the answer.
func committedDirect(ctx context.Context, rk rdHandle, group string, tps []TP) (map[TP]Committed, error) {
	if tps != nil && len(tps) == 0 {
		return map[TP]Committed{}, nil // none asked for, not all
	}
	var r commitRows
	topics := map[string]int32{}
	for _, tp := range tps {
		r.add(tp, 0, "", topics)
	}
	names, rows, _ := r.pointers()
	if tps == nil {
		rows = nil // all of the group's offsets
	}
	cgroup := C.CString(group)
	defer C.free(unsafe.Pointer(cgroup))
	var errstr [512]C.char
	q := C.kr_committed_start(rk, cgroup, names, C.int(len(topics)), rows, C.int(len(r.rows)),
		C.int(requestTimeout(ctx).Milliseconds()), &errstr[0], C.size_t(len(errstr)))
	if q == nil {
		return nil, kafka.NewError(kafka.ErrInvalidArg, C.GoString(&errstr[0]), false)
	}
	out := make(map[TP]Committed, max(len(tps), 16))
	err := groupPartitions(ctx, q, C.RD_KAFKA_EVENT_LISTCONSUMERGROUPOFFSETS_RESULT, func(tp TP, p *C.rd_kafka_topic_partition_t) error {
		if p.err != 0 {
			return fmt.Errorf("%s/%d: %w", tp.Topic, tp.Partition, kafka.NewError(kafka.ErrorCode(p.err), "", false))
		}
		if p.offset < 0 { // OffsetInvalid: asked for, never committed
			return nil
		}
		c := Committed{Offset: int64(p.offset)}
		if p.metadata_size > 0 {
			c.Metadata = C.GoStringN((*C.char)(p.metadata), C.int(p.metadata_size))
		}
		out[tp] = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// alterDirect is one attempt of alter's, as
// AdminClient.AlterConsumerGroupOffsets makes it (one OffsetCommit
// request, the partitions in offsets' order), answering each partition's
// error. Unlike confluent-kafka-go v2.11.1 it frees its C copy of the
// partitions (that one never did: 2.7 MiB per attempt at 10,000
// partitions).
func alterDirect(ctx context.Context, rk rdHandle, group string, offsets []commitOffset) (map[TP]error, error) {
	var r commitRows
	r.rows = make([]C.kr_commit_row, 0, len(offsets))
	topics := map[string]int32{}
	for _, o := range offsets {
		r.add(o.TP, o.Offset, o.Metadata, topics)
	}
	names, rows, md := r.pointers()
	cgroup := C.CString(group)
	defer C.free(unsafe.Pointer(cgroup))
	var errstr [512]C.char
	q := C.kr_commit_start(rk, cgroup, names, C.int(len(topics)), rows, C.int(len(r.rows)), md,
		C.int(requestTimeout(ctx).Milliseconds()), &errstr[0], C.size_t(len(errstr)))
	if q == nil {
		return nil, kafka.NewError(kafka.ErrInvalidArg, C.GoString(&errstr[0]), false)
	}
	failed := map[TP]error{}
	err := groupPartitions(ctx, q, C.RD_KAFKA_EVENT_ALTERCONSUMERGROUPOFFSETS_RESULT, func(tp TP, p *C.rd_kafka_topic_partition_t) error {
		if p.err != 0 {
			failed[tp] = kafka.NewError(kafka.ErrorCode(p.err), "", false)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return failed, nil
}
