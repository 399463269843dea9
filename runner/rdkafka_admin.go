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

// The runner calls librdkafka's rd_kafka_ListOffsets itself rather than
// through confluent-kafka-go's AdminClient.ListOffsets, which converts each
// partition to and from C one cgo call at a time and answers with a map
// keyed by a fat struct. make bench, alternating builds: at 10,000
// partitions (three lookups) 257-275 ms of CPU against 203-220 with this,
// at 1,000 partitions 31-33 ms against 26-28, and 1-4 ms less wall time.
// Here a call's partitions cross into C as one buffer and the answers come
// back into it; librdkafka does the rest as before, with the same request
// and the same errors. If confluent-kafka-go stops keeping its handle where
// adminHandle looks, the runner falls back to AdminClient.ListOffsets (and
// TestDirectListOffsetsInUse fails, so that someone looks).

// rdHandle is librdkafka's client handle (rd_kafka_t) of a confluent-kafka-go
// AdminClient.
type rdHandle = *C.rd_kafka_t

// adminHandle returns the rd_kafka_t of a, which confluent-kafka-go keeps
// unexported (a.handle.rk), or nil if it is not where v2.11.1 keeps it
// (leakyConfluent; TestDependenciesReviewed pins it). The handle is only
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
	for _, d := range descs[:nt] {
		name := C.GoString(d.name)
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
	return out, nil
}
