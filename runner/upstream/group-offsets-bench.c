/* CPU of AlterConsumerGroupOffsets and ListConsumerGroupOffsets of n
 * partitions (topics of 100) on librdkafka's in-process mock cluster,
 * through the public API only: per call, this process's CPU (user+system)
 * from the call to its result, median over rounds (after one to warm up).
 *
 * Against a librdkafka built from source (./configure --disable-ssl
 * --disable-gssapi --disable-zstd --disable-lz4-ext --disable-curl
 * --disable-zlib --disable-sasl && make -C src librdkafka.a), with and
 * without group-offsets-index.patch:
 *
 *   gcc -O2 -I$LIBRDKAFKA/src -o bench group-offsets-bench.c \
 *       $LIBRDKAFKA/src/librdkafka.a -lm -ldl -lpthread -lrt
 *   ./bench 10000 3
 *
 * or against confluent-kafka-go's bundled one (its rdkafka.h and
 * librdkafka_glibc_linux_amd64.a, same flags). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "rdkafka.h"
#include "rdkafka_mock.h"

static double cpu_ms(void) {
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static rd_kafka_event_t *wait_for(rd_kafka_queue_t *q, int type) {
	for (;;) {
		rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 60000);
		if (!ev) {
			fprintf(stderr, "timed out\n");
			exit(1);
		}
		if (rd_kafka_event_type(ev) == type)
			return ev;
		rd_kafka_event_destroy(ev);
	}
}

static int cmpd(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 10000, rounds = argc > 2 ? atoi(argv[2]) : 5;
	int topics = (n + 99) / 100;
	char errstr[512], name[32];
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	rd_kafka_conf_set(conf, "log_level", "0", errstr, sizeof(errstr));
	rd_kafka_t *mrk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
	rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(mrk, 3);
	for (int t = 0; t < topics; t++) {
		snprintf(name, sizeof(name), "t%03d", t);
		rd_kafka_mock_topic_create(mc, name, 100, 1);
	}
	conf = rd_kafka_conf_new();
	rd_kafka_conf_set(conf, "bootstrap.servers", rd_kafka_mock_cluster_bootstraps(mc), errstr, sizeof(errstr));
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
	rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
	rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(n);
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "t%03d", i / 100);
		rd_kafka_topic_partition_list_add(list, name, i % 100)->offset = 5;
	}
	double *alter = calloc(rounds, sizeof(double)), *lst = calloc(rounds, sizeof(double));
	for (int r = -1; r < rounds; r++) { /* round -1 warms up */
		rd_kafka_AlterConsumerGroupOffsets_t *a = rd_kafka_AlterConsumerGroupOffsets_new("g", list);
		double c0 = cpu_ms();
		rd_kafka_AlterConsumerGroupOffsets(rk, &a, 1, NULL, q);
		rd_kafka_event_t *ev = wait_for(q, RD_KAFKA_EVENT_ALTERCONSUMERGROUPOFFSETS_RESULT);
		double c1 = cpu_ms();
		rd_kafka_AlterConsumerGroupOffsets_destroy(a);
		if (rd_kafka_event_error(ev)) {
			fprintf(stderr, "alter: %s\n", rd_kafka_event_error_string(ev));
			return 1;
		}
		rd_kafka_event_destroy(ev);
		rd_kafka_ListConsumerGroupOffsets_t *l = rd_kafka_ListConsumerGroupOffsets_new("g", list);
		double c2 = cpu_ms();
		rd_kafka_ListConsumerGroupOffsets(rk, &l, 1, NULL, q);
		ev = wait_for(q, RD_KAFKA_EVENT_LISTCONSUMERGROUPOFFSETS_RESULT);
		double c3 = cpu_ms();
		rd_kafka_ListConsumerGroupOffsets_destroy(l);
		size_t cnt;
		const rd_kafka_group_result_t **g = rd_kafka_ListConsumerGroupOffsets_result_groups(rd_kafka_event_ListConsumerGroupOffsets_result(ev), &cnt);
		const rd_kafka_topic_partition_list_t *got = rd_kafka_group_result_partitions(g[0]);
		if (rd_kafka_event_error(ev) || got->cnt != n) {
			fprintf(stderr, "list: %s, %d partitions\n", rd_kafka_event_error_string(ev), got ? got->cnt : -1);
			return 1;
		}
		for (int i = 0; i < got->cnt; i++)
			if (got->elems[i].err || got->elems[i].offset != 5) {
				fprintf(stderr, "list: %s [%d] %s %" PRId64 "\n", got->elems[i].topic, got->elems[i].partition, rd_kafka_err2name(got->elems[i].err), got->elems[i].offset);
				return 1;
			}
		rd_kafka_event_destroy(ev);
		if (r >= 0)
			alter[r] = c1 - c0, lst[r] = c3 - c2;
	}
	qsort(alter, rounds, sizeof(double), cmpd);
	qsort(lst, rounds, sizeof(double), cmpd);
	printf("%s partitions=%d rounds=%d alter-cpu-ms-median=%.1f list-cpu-ms-median=%.1f (min %.1f / %.1f, max %.1f / %.1f)\n",
	       rd_kafka_version_str(), n, rounds, alter[rounds / 2], lst[rounds / 2], alter[0], lst[0], alter[rounds - 1], lst[rounds - 1]);
	rd_kafka_queue_destroy(q);
	rd_kafka_topic_partition_list_destroy(list);
	rd_kafka_destroy(rk);
	rd_kafka_mock_cluster_destroy(mc);
	rd_kafka_destroy(mrk);
	return 0;
}
