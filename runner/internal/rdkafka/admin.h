// See admin.c.

#ifndef KR_RDKAFKA_ADMIN_H
#define KR_RDKAFKA_ADMIN_H

#include <stdint.h>
#include <stdlib.h>
#include "rdkafka.h"

// kr_lo_row is one partition of a call: its topic (an index into the
// call's names) and partition in; its answer out.
typedef struct kr_lo_row {
	int32_t topic;
	int32_t partition;
	int64_t offset;
	int32_t err;
	int32_t answered;
} kr_lo_row;

// Failures of the calls' own, outside librdkafka's error codes (which are
// at most a few hundred either way).
#define KR_LO_NOMEM (-100001)
#define KR_TOO_SMALL (-100002)

// kr_topic_names splits names, n NUL-terminated names back to back, into a
// freshly allocated array of n pointers into it (NULL if out of memory).
const char **kr_topic_names(const char *names, int n);

// kr_lo looks up one offset spec for rows (names holds the n_topics
// names back to back, each NUL-terminated) with rd_kafka_offsets_for_times,
// which sends one ListOffsets request per leader and waits up to
// timeout_ms, and fills rows' answers: 0, a librdkafka error of the whole
// call, or KR_LO_NOMEM.
int kr_lo(rd_kafka_t *rk, const char *names, int n_topics, kr_lo_row *rows, int n, int64_t spec, int timeout_ms);

// kr_dt_topic is one topic of a DescribeTopics result: its name and error
// (pointers into the result event, valid until it is destroyed), and its
// partitions, parts[first:first+count].
typedef struct kr_dt_topic {
	const char *name;
	const char *errstr;
	int32_t err;
	int32_t first;
	int32_t count;
} kr_dt_topic;

// kr_dt_partition is one partition of a DescribeTopics result.
typedef struct kr_dt_partition {
	int32_t partition;
	int32_t leader;
	int32_t has_leader;
} kr_dt_partition;

// kr_dt_start starts a DescribeTopics call of n_topics names (back to back,
// each NUL-terminated) and returns the queue its result arrives on, or
// NULL with errstr set.
rd_kafka_queue_t *kr_dt_start(rd_kafka_t *rk, const char *names, int n_topics, int timeout_ms, char *errstr, size_t errstr_size);

// kr_dt_result fills topics and parts from the call's result event and
// sets their counts: 0, a librdkafka error of the whole call (errstr its
// message), or KR_TOO_SMALL when the arrays cannot hold the counts set.
int kr_dt_result(rd_kafka_event_t *ev, kr_dt_topic *topics, int max_topics, kr_dt_partition *parts, int max_parts, int *n_topics, int *n_parts, char *errstr, size_t errstr_size);

// kr_commit_row is one partition of a committed-offsets read (topic and
// partition) or of a commit (and its offset, and metadata md[md_off:]
// of md_len bytes).
typedef struct kr_commit_row {
	int32_t topic;
	int32_t partition;
	int64_t offset;
	int32_t md_off;
	int32_t md_len;
} kr_commit_row;

// kr_commit_start starts an AlterConsumerGroupOffsets call of group that
// commits rows, and returns the queue its result arrives on, or NULL with
// errstr set.
rd_kafka_queue_t *kr_commit_start(rd_kafka_t *rk, const char *group, const char *names, int n_topics, const kr_commit_row *rows, int n, const char *md, int timeout_ms, char *errstr, size_t errstr_size);

// kr_group_result returns the one group's partitions in a
// ListConsumerGroupOffsets or AlterConsumerGroupOffsets result event of
// type (valid until the event is destroyed), or sets code to the error of
// the call or of the group (errstr its message).
const rd_kafka_topic_partition_list_t *kr_group_result(rd_kafka_event_t *ev, int type, int *code, char *errstr, size_t errstr_size);

// kr_new makes a client of n properties (key and value NUL-terminated,
// back to back), whose errors, token requests and log lines are events on
// its main queue; NULL with errstr set if a property or the client is
// refused.
rd_kafka_t *kr_new(const char *props, int n, char *errstr, size_t errstr_size);

// kr_log_line is a log event's line (pointers into the event).
typedef struct kr_log_line {
	const char *fac;
	const char *str;
	int level;
	int ok;
} kr_log_line;

// kr_event_log reads a log event.
kr_log_line kr_event_log(rd_kafka_event_t *ev);

// kr_dg_start starts a DescribeConsumerGroups call of group and returns
// the queue its result arrives on, or NULL with errstr set.
rd_kafka_queue_t *kr_dg_start(rd_kafka_t *rk, const char *group, int timeout_ms, char *errstr, size_t errstr_size);

// kr_dg_result returns the one group's description in a
// DescribeConsumerGroups result event (valid until the event is destroyed),
// or sets code to the error of the call (errstr its message).
const rd_kafka_ConsumerGroupDescription_t *kr_dg_result(rd_kafka_event_t *ev, int *code, char *errstr, size_t errstr_size);

#endif
