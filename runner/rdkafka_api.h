// The part of librdkafka's public API (rdkafka.h) that the runner's own C
// code calls, declared here because confluent-kafka-go's copy of rdkafka.h
// is not on the runner's include path. The names, types and values are
// rdkafka.h's: TestRdkafkaAPIMatchesConfluentsHeader compiles this file
// after confluent-kafka-go's rdkafka.h (a prototype that differs is then a
// compile error) and compares the structs' layout and the constants.

#ifndef KR_RDKAFKA_API_H
#define KR_RDKAFKA_API_H

#include <stddef.h>
#include <stdint.h>

#ifndef _RDKAFKA_H_
typedef struct rd_kafka_s rd_kafka_t;
typedef struct rd_kafka_queue_s rd_kafka_queue_t;
typedef struct rd_kafka_op_s rd_kafka_event_t;
typedef struct rd_kafka_AdminOptions_s rd_kafka_AdminOptions_t;
typedef struct rd_kafka_ListOffsetsResultInfo_s rd_kafka_ListOffsetsResultInfo_t;
typedef rd_kafka_event_t rd_kafka_ListOffsets_result_t;
typedef int rd_kafka_resp_err_t;
typedef int rd_kafka_event_type_t;
typedef int rd_kafka_admin_op_t;
typedef struct rd_kafka_error_s rd_kafka_error_t;
typedef struct rd_kafka_Node_s rd_kafka_Node_t;
typedef struct rd_kafka_TopicCollection_s rd_kafka_TopicCollection_t;
typedef struct rd_kafka_TopicPartitionInfo_s rd_kafka_TopicPartitionInfo_t;
typedef struct rd_kafka_TopicDescription_s rd_kafka_TopicDescription_t;
typedef rd_kafka_event_t rd_kafka_DescribeTopics_result_t;
typedef struct rd_kafka_group_result_s rd_kafka_group_result_t;
typedef struct rd_kafka_ListConsumerGroupOffsets_s rd_kafka_ListConsumerGroupOffsets_t;
typedef struct rd_kafka_AlterConsumerGroupOffsets_s rd_kafka_AlterConsumerGroupOffsets_t;
typedef rd_kafka_event_t rd_kafka_ListConsumerGroupOffsets_result_t;
typedef rd_kafka_event_t rd_kafka_AlterConsumerGroupOffsets_result_t;

typedef struct rd_kafka_topic_partition_s {
	char *topic;
	int32_t partition;
	int64_t offset;
	void *metadata;
	size_t metadata_size;
	void *opaque;
	rd_kafka_resp_err_t err;
	void *_private;
} rd_kafka_topic_partition_t;

typedef struct rd_kafka_topic_partition_list_s {
	int cnt;
	int size;
	rd_kafka_topic_partition_t *elems;
} rd_kafka_topic_partition_list_t;

#define RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPOFFSETS 14
#define RD_KAFKA_ADMIN_OP_ALTERCONSUMERGROUPOFFSETS 15
#define RD_KAFKA_ADMIN_OP_DESCRIBETOPICS 19
#define RD_KAFKA_ADMIN_OP_LISTOFFSETS 21
#define RD_KAFKA_EVENT_LISTCONSUMERGROUPOFFSETS_RESULT 0x8000
#define RD_KAFKA_EVENT_ALTERCONSUMERGROUPOFFSETS_RESULT 0x10000
#define RD_KAFKA_EVENT_DESCRIBETOPICS_RESULT 0x100000
#define RD_KAFKA_EVENT_LISTOFFSETS_RESULT 0x400000
#define RD_KAFKA_RESP_ERR__BAD_MSG (-199)
#define RD_KAFKA_RESP_ERR__INVALID_TYPE (-154)
#endif

rd_kafka_topic_partition_list_t *rd_kafka_topic_partition_list_new(int size);
rd_kafka_topic_partition_t *rd_kafka_topic_partition_list_add(rd_kafka_topic_partition_list_t *rktparlist, const char *topic, int32_t partition);
void rd_kafka_topic_partition_list_destroy(rd_kafka_topic_partition_list_t *rkparlist);

rd_kafka_AdminOptions_t *rd_kafka_AdminOptions_new(rd_kafka_t *rk, rd_kafka_admin_op_t for_api);
rd_kafka_resp_err_t rd_kafka_AdminOptions_set_request_timeout(rd_kafka_AdminOptions_t *options, int timeout_ms, char *errstr, size_t errstr_size);
void rd_kafka_AdminOptions_destroy(rd_kafka_AdminOptions_t *options);

rd_kafka_queue_t *rd_kafka_queue_new(rd_kafka_t *rk);
void rd_kafka_queue_destroy(rd_kafka_queue_t *rkqu);
rd_kafka_event_t *rd_kafka_queue_poll(rd_kafka_queue_t *rkqu, int timeout_ms);
void rd_kafka_queue_yield(rd_kafka_queue_t *rkqu);

void rd_kafka_ListOffsets(rd_kafka_t *rk, rd_kafka_topic_partition_list_t *topic_partitions, const rd_kafka_AdminOptions_t *options, rd_kafka_queue_t *rkqu);

rd_kafka_event_type_t rd_kafka_event_type(const rd_kafka_event_t *rkev);
rd_kafka_resp_err_t rd_kafka_event_error(rd_kafka_event_t *rkev);
const char *rd_kafka_event_error_string(rd_kafka_event_t *rkev);
const rd_kafka_ListOffsets_result_t *rd_kafka_event_ListOffsets_result(rd_kafka_event_t *rkev);
const rd_kafka_ListOffsetsResultInfo_t **rd_kafka_ListOffsets_result_infos(const rd_kafka_ListOffsets_result_t *result, size_t *cntp);
const rd_kafka_topic_partition_t *rd_kafka_ListOffsetsResultInfo_topic_partition(const rd_kafka_ListOffsetsResultInfo_t *result_info);
void rd_kafka_event_destroy(rd_kafka_event_t *rkev);

rd_kafka_resp_err_t rd_kafka_error_code(const rd_kafka_error_t *error);
const char *rd_kafka_error_string(const rd_kafka_error_t *error);
int rd_kafka_Node_id(const rd_kafka_Node_t *node);
rd_kafka_TopicCollection_t *rd_kafka_TopicCollection_of_topic_names(const char **topics, size_t topics_cnt);
void rd_kafka_TopicCollection_destroy(rd_kafka_TopicCollection_t *topics);
void rd_kafka_DescribeTopics(rd_kafka_t *rk, const rd_kafka_TopicCollection_t *topics, const rd_kafka_AdminOptions_t *options, rd_kafka_queue_t *rkqu);
const rd_kafka_DescribeTopics_result_t *rd_kafka_event_DescribeTopics_result(rd_kafka_event_t *rkev);
const rd_kafka_TopicDescription_t **rd_kafka_DescribeTopics_result_topics(const rd_kafka_DescribeTopics_result_t *result, size_t *cntp);
const char *rd_kafka_TopicDescription_name(const rd_kafka_TopicDescription_t *topicdesc);
const rd_kafka_error_t *rd_kafka_TopicDescription_error(const rd_kafka_TopicDescription_t *topicdesc);
const rd_kafka_TopicPartitionInfo_t **rd_kafka_TopicDescription_partitions(const rd_kafka_TopicDescription_t *topicdesc, size_t *cntp);
const int rd_kafka_TopicPartitionInfo_partition(const rd_kafka_TopicPartitionInfo_t *partition);
const rd_kafka_Node_t *rd_kafka_TopicPartitionInfo_leader(const rd_kafka_TopicPartitionInfo_t *partition);

rd_kafka_error_t *rd_kafka_AdminOptions_set_require_stable_offsets(rd_kafka_AdminOptions_t *options, int true_or_false);
void rd_kafka_error_destroy(rd_kafka_error_t *error);
const rd_kafka_topic_partition_list_t *rd_kafka_group_result_partitions(const rd_kafka_group_result_t *groupres);
const rd_kafka_error_t *rd_kafka_group_result_error(const rd_kafka_group_result_t *groupres);
rd_kafka_ListConsumerGroupOffsets_t *rd_kafka_ListConsumerGroupOffsets_new(const char *group_id, const rd_kafka_topic_partition_list_t *partitions);
void rd_kafka_ListConsumerGroupOffsets_destroy(rd_kafka_ListConsumerGroupOffsets_t *list_grpoffsets);
void rd_kafka_ListConsumerGroupOffsets(rd_kafka_t *rk, rd_kafka_ListConsumerGroupOffsets_t **list_grpoffsets, size_t list_grpoffsets_cnt, const rd_kafka_AdminOptions_t *options, rd_kafka_queue_t *rkqu);
const rd_kafka_ListConsumerGroupOffsets_result_t *rd_kafka_event_ListConsumerGroupOffsets_result(rd_kafka_event_t *rkev);
const rd_kafka_group_result_t **rd_kafka_ListConsumerGroupOffsets_result_groups(const rd_kafka_ListConsumerGroupOffsets_result_t *result, size_t *cntp);
rd_kafka_AlterConsumerGroupOffsets_t *rd_kafka_AlterConsumerGroupOffsets_new(const char *group_id, const rd_kafka_topic_partition_list_t *partitions);
void rd_kafka_AlterConsumerGroupOffsets_destroy(rd_kafka_AlterConsumerGroupOffsets_t *alter_grpoffsets);
void rd_kafka_AlterConsumerGroupOffsets(rd_kafka_t *rk, rd_kafka_AlterConsumerGroupOffsets_t **alter_grpoffsets, size_t alter_grpoffsets_cnt, const rd_kafka_AdminOptions_t *options, rd_kafka_queue_t *rkqu);
const rd_kafka_AlterConsumerGroupOffsets_result_t *rd_kafka_event_AlterConsumerGroupOffsets_result(rd_kafka_event_t *rkev);
const rd_kafka_group_result_t **rd_kafka_AlterConsumerGroupOffsets_result_groups(const rd_kafka_AlterConsumerGroupOffsets_result_t *result, size_t *cntp);

char *rd_kafka_clusterid(rd_kafka_t *rk, int timeout_ms);
void rd_kafka_mem_free(rd_kafka_t *rk, void *ptr);

#endif
