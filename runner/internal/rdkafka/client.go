// Package rdkafka is the runner's Kafka client: one librdkafka handle of its
// own, made and used through librdkafka's public C API (rdkafka.h, a copy of
// the one confluent-kafka-go bundles, whose librdkafka it links).
//
// The runner calls librdkafka itself rather than through
// confluent-kafka-go's AdminClient, which crosses into C once per partition
// each way and answers with Go values per partition (a map keyed by a fat
// struct for ListOffsets, a value per replica for DescribeTopics, a C copy
// of a commit's partitions that it never frees). Here a call's partitions
// cross into C as one buffer and the answers are read back from C memory
// in place (README, Performance, for what it buys). confluent-kafka-go is
// used for what it exports: its error codes and offset specs, and the
// librdkafka it links.
package rdkafka

/*
#include "admin.h"
*/
import "C"

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// Handlers take what the client reports outside any call. They run on
// the client's one event goroutine, one at a time.
type Handlers struct {
	// Log is one of librdkafka's log lines (syslog level).
	Log func(level int, tag, message string)
	// Error is an error event: a broker connection that failed, all
	// brokers down, refused credentials.
	Error func(kafka.Error)
	// TokenRefresh is librdkafka asking for an OAUTHBEARER token: the
	// runner has none, and says why.
	TokenRefresh func() (failure string)
	// Panic takes a panic of a handler; the events are drained after it.
	Panic func(any)
}

// Client is one librdkafka client (rd_kafka_t).
type Client struct {
	rk      *C.rd_kafka_t
	events  *C.rd_kafka_queue_t // its main queue
	h       Handlers
	closing atomic.Bool
	done    chan struct{}
	once    sync.Once
	// calls counts the blocking calls still running (ListOffsets), which
	// Close waits for.
	calls sync.WaitGroup
}

// New makes a client of props (librdkafka's configuration properties). An
// error is a property or a configuration that librdkafka refuses, in its
// words (which name the property).
func New(props map[string]string, h Handlers) (*Client, error) {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first refused property is the same every run
	var buf []byte
	for _, k := range keys {
		buf = append(append(append(append(buf, k...), 0), props[k]...), 0)
	}
	buf = append(buf, 0)
	var errstr [512]C.char
	rk := C.kr_new((*C.char)(unsafe.Pointer(&buf[0])), C.int(len(keys)), &errstr[0], C.size_t(len(errstr)))
	if rk == nil {
		return nil, kafka.NewError(kafka.ErrInvalidArg, C.GoString(&errstr[0]), false)
	}
	c := &Client{rk: rk, events: C.rd_kafka_queue_get_main(rk), h: h, done: make(chan struct{})}
	go c.serve()
	return c, nil
}

// serve hands the main queue's events to the handlers until Close.
func (c *Client) serve() {
	defer close(c.done)
	defer func() {
		if v := recover(); v != nil {
			if c.h.Panic != nil {
				c.h.Panic(v)
			}
			for !c.closing.Load() { // librdkafka must never block on its queue
				if ev := C.rd_kafka_queue_poll(c.events, 100); ev != nil {
					C.rd_kafka_event_destroy(ev)
				}
			}
		}
	}()
	for !c.closing.Load() {
		ev := C.rd_kafka_queue_poll(c.events, 100)
		if ev == nil {
			continue
		}
		c.handle(ev)
	}
}

func (c *Client) handle(ev *C.rd_kafka_event_t) {
	defer C.rd_kafka_event_destroy(ev)
	switch C.rd_kafka_event_type(ev) {
	case C.RD_KAFKA_EVENT_LOG:
		if l := C.kr_event_log(ev); l.ok != 0 && c.h.Log != nil {
			c.h.Log(int(l.level), C.GoString(l.fac), C.GoString(l.str))
		}
	case C.RD_KAFKA_EVENT_ERROR:
		if c.h.Error != nil {
			c.h.Error(kafka.NewError(kafka.ErrorCode(C.rd_kafka_event_error(ev)),
				C.GoString(C.rd_kafka_event_error_string(ev)), C.rd_kafka_event_error_is_fatal(ev) != 0))
		}
	case C.RD_KAFKA_EVENT_OAUTHBEARER_TOKEN_REFRESH:
		if c.h.TokenRefresh != nil {
			c.setTokenFailure(c.h.TokenRefresh())
		}
	}
}

// setTokenFailure tells librdkafka that no token can be had.
func (c *Client) setTokenFailure(msg string) {
	cmsg := C.CString(msg)
	defer C.free(unsafe.Pointer(cmsg))
	C.rd_kafka_oauthbearer_set_token_failure(c.rk, cmsg)
}

// Close stops the event handlers and destroys the client, once the
// ListOffsets calls abandoned when their context ended have ended too.
// Other calls must have returned.
func (c *Client) Close() {
	c.once.Do(func() {
		c.calls.Wait()
		c.closing.Store(true)
		C.rd_kafka_queue_yield(c.events)
		<-c.done
		C.rd_kafka_queue_destroy(c.events)
		C.rd_kafka_destroy(c.rk)
	})
}

// ClusterID is the cluster ID of the metadata librdkafka holds, waiting up
// to the time left in ctx for some; empty when the brokers give none (or
// none came).
func (c *Client) ClusterID(ctx context.Context) string {
	id := C.rd_kafka_clusterid(c.rk, C.int(requestTimeout(ctx).Milliseconds()))
	if id == nil {
		return ""
	}
	defer C.rd_kafka_mem_free(c.rk, unsafe.Pointer(id))
	return C.GoString(id)
}
