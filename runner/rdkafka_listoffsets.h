// See rdkafka_listoffsets.c.

#ifndef KR_RDKAFKA_LISTOFFSETS_H
#define KR_RDKAFKA_LISTOFFSETS_H

#include "rdkafka_api.h"

// kr_lo_row is one partition of a call: its topic (an index into the
// call's names) and partition in; its answer out.
typedef struct kr_lo_row {
	int32_t topic;
	int32_t partition;
	int64_t offset;
	int32_t err;
	int32_t answered;
} kr_lo_row;

// kr_lo_result's own failures, outside librdkafka's error codes (which
// are at most a few hundred either way).
#define KR_LO_UNASKED (-100000) // errstr names the partition
#define KR_LO_NOMEM (-100001)

// kr_lo_start starts a ListOffsets call of rows (sorted by topic, then
// partition; names holds the n_topics sorted names back to back, each
// NUL-terminated) for one offset spec, and returns the queue its result
// arrives on, or NULL with errstr set.
rd_kafka_queue_t *kr_lo_start(rd_kafka_t *rk, const char *names, int n_topics, const kr_lo_row *rows, int n, int64_t spec, int timeout_ms, char *errstr, size_t errstr_size);

// kr_lo_result fills rows from the call's result event: 0, a librdkafka
// error of the whole call (errstr its message), or KR_LO_UNASKED or
// KR_LO_NOMEM.
int kr_lo_result(rd_kafka_event_t *ev, const char *names, int n_topics, kr_lo_row *rows, int n, char *errstr, size_t errstr_size);

#endif
