//go:build linux

// confluent-kafka-go v2.11.1's AdminClient.AlterConsumerGroupOffsets builds
// a C copy of the partitions, hands it to
// rd_kafka_AlterConsumerGroupOffsets_new, which copies it again
// (rdkafka_admin.c), and never destroys its own (adminapi.go, next to a
// comment saying it must): every commit attempt leaks a C copy of each
// partition and its metadata (about 130 bytes plus the metadata; about
// 2.7 MiB at 10,000 partitions with the runner's marks), alive to the end
// of the run and so part of its peak memory. This wrapper (--wrap, see rdkafka_alter.go)
// destroys the caller's list once librdkafka has copied it. It is written
// for the confluent-kafka-go that go.mod requires (leakyConfluent): a
// version that frees the list itself would have it freed twice.

#include <stddef.h>

typedef struct kr_list_s kr_list_t;
typedef struct kr_alter_s kr_alter_t;

kr_alter_t *__real_rd_kafka_AlterConsumerGroupOffsets_new(const char *group, const kr_list_t *partitions);
void rd_kafka_topic_partition_list_destroy(kr_list_t *list);

// kr_alter_frees is set at start-up (rdkafka_alter.go's init), before any
// client exists.
static int kr_alter_frees;

void kr_alter_free_inputs(int on) { kr_alter_frees = on; }

kr_alter_t *__wrap_rd_kafka_AlterConsumerGroupOffsets_new(const char *group, const kr_list_t *partitions) {
	kr_alter_t *a = __real_rd_kafka_AlterConsumerGroupOffsets_new(group, partitions);
	if (kr_alter_frees && a && partitions)
		rd_kafka_topic_partition_list_destroy((kr_list_t *)partitions);
	return a;
}
