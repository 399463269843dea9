// The runner's Kafka calls through librdkafka's public C API (see
// client.go for why): ListOffsets, DescribeTopics, the group's description,
// the reads of committed offsets and the commit. A call's partitions or
// topics go in as one buffer, and the answers come back into the caller's
// arrays or are left in the result event for the caller to read in place.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin.h"

const char **kr_topic_names(const char *names, int n) {
	const char **t = malloc(sizeof(*t) * (size_t)(n > 0 ? n : 1));
	if (!t)
		return NULL;
	for (int i = 0; i < n; i++) {
		t[i] = names;
		names += strlen(names) + 1;
	}
	return t;
}

// kr_options returns the options of an admin call of op with timeout_ms,
// or NULL with errstr set.
static rd_kafka_AdminOptions_t *kr_options(rd_kafka_t *rk, rd_kafka_admin_op_t op, int timeout_ms, char *errstr, size_t errstr_size) {
	rd_kafka_AdminOptions_t *opts = rd_kafka_AdminOptions_new(rk, op);
	if (rd_kafka_AdminOptions_set_request_timeout(opts, timeout_ms, errstr, errstr_size)) {
		rd_kafka_AdminOptions_destroy(opts);
		return NULL;
	}
	return opts;
}

// kr_event_error checks that ev is a result of type and returns its error
// (errstr its message), or 0.
static rd_kafka_resp_err_t kr_event_error(rd_kafka_event_t *ev, int type, char *errstr, size_t errstr_size) {
	if (rd_kafka_event_type(ev) != type) {
		snprintf(errstr, errstr_size, "expected result event type %d, not %d", type, rd_kafka_event_type(ev));
		return RD_KAFKA_RESP_ERR__INVALID_TYPE;
	}
	rd_kafka_resp_err_t err = rd_kafka_event_error(ev);
	if (err) {
		const char *s = rd_kafka_event_error_string(ev);
		snprintf(errstr, errstr_size, "%s", s ? s : "");
	}
	return err;
}

int kr_lo(rd_kafka_t *rk, const char *names, int n_topics, kr_lo_row *rows, int n, int64_t spec, int timeout_ms) {
	const char **t = kr_topic_names(names, n_topics);
	if (!t)
		return KR_LO_NOMEM;
	rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(n);
	for (int i = 0; i < n; i++)
		rd_kafka_topic_partition_list_add(list, t[rows[i].topic], rows[i].partition)->offset = spec;
	free(t);
	rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(rk, list, timeout_ms);
	// The list is updated in place, in its order. A partition that no
	// answer named keeps what was asked: the spec, which for a log bound
	// (-1, -2) no answer is; for a time, an answer of that very offset is
	// taken as none, and refused.
	for (int i = 0; !err && i < n; i++) {
		rows[i].offset = list->elems[i].offset;
		rows[i].err = list->elems[i].err;
		rows[i].answered = list->elems[i].offset != spec;
	}
	rd_kafka_topic_partition_list_destroy(list);
	return err;
}

rd_kafka_queue_t *kr_dt_start(rd_kafka_t *rk, const char *names, int n_topics, int timeout_ms, char *errstr, size_t errstr_size) {
	const char **t = kr_topic_names(names, n_topics);
	if (!t) {
		snprintf(errstr, errstr_size, "out of memory");
		return NULL;
	}
	rd_kafka_TopicCollection_t *topics = rd_kafka_TopicCollection_of_topic_names(t, (size_t)n_topics);
	free(t);
	rd_kafka_AdminOptions_t *opts = kr_options(rk, RD_KAFKA_ADMIN_OP_DESCRIBETOPICS, timeout_ms, errstr, errstr_size);
	if (!opts) {
		rd_kafka_TopicCollection_destroy(topics);
		return NULL;
	}
	rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
	// librdkafka copies the names and the options before it returns.
	rd_kafka_DescribeTopics(rk, topics, opts, q);
	rd_kafka_AdminOptions_destroy(opts);
	rd_kafka_TopicCollection_destroy(topics);
	return q;
}

int kr_dt_result(rd_kafka_event_t *ev, kr_dt_topic *topics, int max_topics, kr_dt_partition *parts, int max_parts, int *n_topics, int *n_parts, char *errstr, size_t errstr_size) {
	rd_kafka_resp_err_t err = kr_event_error(ev, RD_KAFKA_EVENT_DESCRIBETOPICS_RESULT, errstr, errstr_size);
	if (err)
		return err;
	size_t cnt = 0;
	const rd_kafka_TopicDescription_t **descs = rd_kafka_DescribeTopics_result_topics(rd_kafka_event_DescribeTopics_result(ev), &cnt);
	int np = 0;
	for (size_t i = 0; i < cnt; i++) {
		size_t pc = 0;
		rd_kafka_TopicDescription_partitions(descs[i], &pc);
		np += (int)pc;
	}
	*n_topics = (int)cnt;
	*n_parts = np;
	if ((int)cnt > max_topics || np > max_parts)
		return KR_TOO_SMALL; // the caller sizes its arrays and asks again
	np = 0;
	for (size_t i = 0; i < cnt; i++) {
		const rd_kafka_error_t *e = rd_kafka_TopicDescription_error(descs[i]);
		size_t pc = 0;
		const rd_kafka_TopicPartitionInfo_t **ps = rd_kafka_TopicDescription_partitions(descs[i], &pc);
		topics[i].name = rd_kafka_TopicDescription_name(descs[i]);
		topics[i].err = e ? rd_kafka_error_code(e) : 0;
		topics[i].errstr = e ? rd_kafka_error_string(e) : NULL;
		topics[i].first = np;
		topics[i].count = (int32_t)pc;
		for (size_t j = 0; j < pc; j++, np++) {
			const rd_kafka_Node_t *leader = rd_kafka_TopicPartitionInfo_leader(ps[j]);
			parts[np].partition = rd_kafka_TopicPartitionInfo_partition(ps[j]);
			parts[np].leader = leader ? rd_kafka_Node_id(leader) : -1;
			parts[np].has_leader = leader != NULL;
		}
	}
	return 0;
}

// kr_list_of builds the C list of rows (offsets and metadata as given,
// metadata copied from md), or NULL if out of memory.
static rd_kafka_topic_partition_list_t *kr_list_of(const char *names, int n_topics, const kr_commit_row *rows, int n, const char *md) {
	const char **t = kr_topic_names(names, n_topics);
	if (!t)
		return NULL;
	rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(n > 0 ? n : 1);
	for (int i = 0; i < n; i++) {
		rd_kafka_topic_partition_t *tp = rd_kafka_topic_partition_list_add(list, t[rows[i].topic], rows[i].partition);
		tp->offset = rows[i].offset;
		if (md && rows[i].md_len > 0) {
			// librdkafka frees it with the list (rd_free, its free()).
			tp->metadata = malloc((size_t)rows[i].md_len);
			if (!tp->metadata) {
				free(t);
				rd_kafka_topic_partition_list_destroy(list);
				return NULL;
			}
			memcpy(tp->metadata, md + rows[i].md_off, (size_t)rows[i].md_len);
			tp->metadata_size = (size_t)rows[i].md_len;
		}
	}
	free(t);
	return list;
}

rd_kafka_queue_t *kr_commit_start(rd_kafka_t *rk, const char *group, const char *names, int n_topics, const kr_commit_row *rows, int n, const char *md, int timeout_ms, char *errstr, size_t errstr_size) {
	rd_kafka_topic_partition_list_t *list = kr_list_of(names, n_topics, rows, n, md);
	if (!list) {
		snprintf(errstr, errstr_size, "out of memory");
		return NULL;
	}
	rd_kafka_AdminOptions_t *opts = kr_options(rk, RD_KAFKA_ADMIN_OP_ALTERCONSUMERGROUPOFFSETS, timeout_ms, errstr, errstr_size);
	if (!opts) {
		rd_kafka_topic_partition_list_destroy(list);
		return NULL;
	}
	rd_kafka_AlterConsumerGroupOffsets_t *req = rd_kafka_AlterConsumerGroupOffsets_new(group, list);
	rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
	// librdkafka copies the request and the options before it returns.
	rd_kafka_AlterConsumerGroupOffsets(rk, &req, 1, opts, q);
	rd_kafka_AlterConsumerGroupOffsets_destroy(req);
	rd_kafka_AdminOptions_destroy(opts);
	rd_kafka_topic_partition_list_destroy(list);
	return q;
}

const rd_kafka_topic_partition_list_t *kr_group_result(rd_kafka_event_t *ev, int type, int *code, char *errstr, size_t errstr_size) {
	if ((*code = kr_event_error(ev, type, errstr, errstr_size)))
		return NULL;
	size_t cnt = 0;
	const rd_kafka_group_result_t **groups = type == RD_KAFKA_EVENT_ALTERCONSUMERGROUPOFFSETS_RESULT
	                                             ? rd_kafka_AlterConsumerGroupOffsets_result_groups(rd_kafka_event_AlterConsumerGroupOffsets_result(ev), &cnt)
	                                             : rd_kafka_ListConsumerGroupOffsets_result_groups(rd_kafka_event_ListConsumerGroupOffsets_result(ev), &cnt);
	if (cnt != 1) {
		snprintf(errstr, errstr_size, "%d group results for one group", (int)cnt);
		*code = RD_KAFKA_RESP_ERR__BAD_MSG;
		return NULL;
	}
	// librdkafka 2.11 reports a group's errors on the event; a group
	// error is not dropped should a version report it here.
	const rd_kafka_error_t *e = rd_kafka_group_result_error(groups[0]);
	if (e) {
		snprintf(errstr, errstr_size, "%s", rd_kafka_error_string(e));
		*code = rd_kafka_error_code(e);
		return NULL;
	}
	return rd_kafka_group_result_partitions(groups[0]);
}

rd_kafka_t *kr_new(const char *props, int n, char *errstr, size_t errstr_size) {
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	for (int i = 0; i < n; i++) {
		const char *k = props, *v = props + strlen(props) + 1;
		props = v + strlen(v) + 1;
		if (rd_kafka_conf_set(conf, k, v, errstr, errstr_size) != RD_KAFKA_CONF_OK) {
			rd_kafka_conf_destroy(conf);
			return NULL;
		}
	}
	// Errors and token requests come to the main queue as events, and so
	// do log lines (log.queue, set by the caller, and the NULL queue
	// below): one queue that the caller polls.
	rd_kafka_conf_set_events(conf, RD_KAFKA_EVENT_ERROR | RD_KAFKA_EVENT_OAUTHBEARER_TOKEN_REFRESH);
	// A consumer, for its isolation.level (the caller's), which
	// rd_kafka_offsets_for_times uses; it joins no group.
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, errstr_size);
	if (!rk) {
		rd_kafka_conf_destroy(conf); // rd_kafka_new takes it only on success
		return NULL;
	}
	rd_kafka_set_log_queue(rk, NULL);
	return rk;
}

kr_log_line kr_event_log(rd_kafka_event_t *ev) {
	kr_log_line l = {0};
	l.ok = rd_kafka_event_log(ev, &l.fac, &l.str, &l.level) == 0;
	return l;
}

rd_kafka_queue_t *kr_dg_start(rd_kafka_t *rk, const char *group, int timeout_ms, char *errstr, size_t errstr_size) {
	rd_kafka_AdminOptions_t *opts = kr_options(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONSUMERGROUPS, timeout_ms, errstr, errstr_size);
	if (!opts)
		return NULL;
	rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
	// librdkafka copies the name and the options before it returns.
	rd_kafka_DescribeConsumerGroups(rk, &group, 1, opts, q);
	rd_kafka_AdminOptions_destroy(opts);
	return q;
}

const rd_kafka_ConsumerGroupDescription_t *kr_dg_result(rd_kafka_event_t *ev, int *code, char *errstr, size_t errstr_size) {
	if ((*code = kr_event_error(ev, RD_KAFKA_EVENT_DESCRIBECONSUMERGROUPS_RESULT, errstr, errstr_size)))
		return NULL;
	size_t cnt = 0;
	const rd_kafka_ConsumerGroupDescription_t **groups =
	    rd_kafka_DescribeConsumerGroups_result_groups(rd_kafka_event_DescribeConsumerGroups_result(ev), &cnt);
	if (cnt != 1) {
		snprintf(errstr, errstr_size, "got %d descriptions", (int)cnt);
		*code = RD_KAFKA_RESP_ERR__BAD_MSG;
		return NULL;
	}
	return groups[0];
}
