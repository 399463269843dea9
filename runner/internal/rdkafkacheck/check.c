//go:build linux

// A differential check of runner/rdkafka_find.c: random operations on
// librdkafka partition lists, every lookup answered both by the wrapped
// search and by librdkafka's own (__real_), which must agree.

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Opaque here: their layout is rdkafka_find.c's, through its accessors.
typedef struct kr_topic_partition_s kr_topic_partition_t;
typedef struct kr_topic_partition_list_s kr_topic_partition_list_t;
int kr_list_cnt(const kr_topic_partition_list_t *l);
kr_topic_partition_t *kr_list_elem(const kr_topic_partition_list_t *l, int i);
const char *kr_elem_topic(const kr_topic_partition_t *e);
int32_t kr_elem_partition(const kr_topic_partition_t *e);

// matches says whether e is (t, p).
static int matches(kr_topic_partition_t *e, const char *t, int32_t p) {
	return e && kr_elem_partition(e) == p && !strcmp(kr_elem_topic(e), t);
}

// idx is e's index in l, or -1 for none.
static long idx(kr_topic_partition_list_t *l, kr_topic_partition_t *e) {
	for (int i = 0; e && i < kr_list_cnt(l); i++)
		if (kr_list_elem(l, i) == e)
			return i;
	return -1;
}

// Wrapped, as librdkafka's handlers call them.
kr_topic_partition_list_t *rd_kafka_topic_partition_list_new(int size);
kr_topic_partition_t *rd_kafka_topic_partition_list_add(kr_topic_partition_list_t *, const char *, int32_t);
kr_topic_partition_t *rd_kafka_topic_partition_list_find(const kr_topic_partition_list_t *, const char *, int32_t);
void rd_kafka_topic_partition_list_destroy(kr_topic_partition_list_t *);
// librdkafka's own.
kr_topic_partition_t *__real_rd_kafka_topic_partition_list_find(const kr_topic_partition_list_t *, const char *, int32_t);
kr_topic_partition_t *__real_rd_kafka_topic_partition_list_add(kr_topic_partition_list_t *, const char *, int32_t);
// Not wrapped: changes the wrapper does not see.
void rd_kafka_topic_partition_list_add_range(kr_topic_partition_list_t *, const char *, int32_t, int32_t);
int rd_kafka_topic_partition_list_del_by_idx(kr_topic_partition_list_t *, int);
kr_topic_partition_list_t *rd_kafka_topic_partition_list_copy(const kr_topic_partition_list_t *);
void rd_kafka_topic_partition_list_sort(kr_topic_partition_list_t *, int (*)(const void *, const void *, void *), void *);

void kr_find_window(int on);

static uint64_t rng(uint64_t *s) { // xorshift64*
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static const char *topics[] = {"orders", "orders.v2", "payments", "t000", "t001", "t099", "a", ""};
#define NTOPICS (sizeof topics / sizeof topics[0])
#define NPARTS 40

// kr_check runs ops random operations from seed. dups allows duplicate
// entries, for which only a matching element (not the first) is required
// of the hint. window runs them inside the OffsetFetch handler's window,
// where the index is on, without the changes the handler never makes
// (deleting, sorting): the index relies on there being none. Appends
// behind the wrapper's back, copies and new lists stay. It returns the
// number of disagreements and writes a description of the first to msg.
int kr_check(uint64_t seed, int ops, int dups, int window, char *msg, int msglen) {
	uint64_t s = seed | 1;
	int bad = 0;
	kr_find_window(window);
	kr_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(4);
	for (int i = 0; i < ops; i++) {
		const char *t = topics[rng(&s) % NTOPICS];
		int32_t p = (int32_t)(rng(&s) % NPARTS);
		unsigned op = rng(&s) % 100;
		if (op < 40) { // the handlers' find-then-add, or a plain add
			if (dups || !__real_rd_kafka_topic_partition_list_find(l, t, p))
				rd_kafka_topic_partition_list_add(l, t, p);
		} else if (op < 80 || kr_list_cnt(l) == 0) { // look up a key
			kr_topic_partition_t *got = rd_kafka_topic_partition_list_find(l, t, p);
			kr_topic_partition_t *want = __real_rd_kafka_topic_partition_list_find(l, t, p);
			int ok = dups ? (!got == !want && (!got || matches(got, t, p))) : got == want;
			if (!ok && bad++ == 0)
				snprintf(msg, msglen, "op %d: find(%s, %d) in %d elements: got index %ld, librdkafka %ld", i, t, p,
				         kr_list_cnt(l), idx(l, got), idx(l, want));
		} else if (op < 84) { // look up the elements in order (a response)
			for (int j = 0; j < kr_list_cnt(l); j++) {
				kr_topic_partition_t *e = kr_list_elem(l, j);
				const char *et = kr_elem_topic(e);
				int32_t ep = kr_elem_partition(e);
				kr_topic_partition_t *got = rd_kafka_topic_partition_list_find(l, et, ep);
				kr_topic_partition_t *want = __real_rd_kafka_topic_partition_list_find(l, et, ep);
				if ((dups ? !matches(got, et, ep) : got != want) && bad++ == 0)
					snprintf(msg, msglen, "op %d: in-order find(%s, %d) at %d of %d: got index %ld, librdkafka %ld", i, et, ep, j,
					         kr_list_cnt(l), idx(l, got), idx(l, want));
			}
		} else if (op < 88) { // grow behind the wrapper's back
			int32_t from = (int32_t)(rng(&s) % NPARTS);
			if (dups)
				rd_kafka_topic_partition_list_add_range(l, t, from, from + (int32_t)(rng(&s) % 3));
			else if (!__real_rd_kafka_topic_partition_list_find(l, t, from))
				rd_kafka_topic_partition_list_add_range(l, t, from, from);
		} else if (op < 92) { // delete behind its back, then maybe re-add
			// Not inside the handler's window: the handler deletes nothing.
			if (!window && kr_list_cnt(l) > 0) {
				rd_kafka_topic_partition_list_del_by_idx(l, (int)(rng(&s) % (uint64_t)kr_list_cnt(l)));
				if (rng(&s) % 2 && (dups || !__real_rd_kafka_topic_partition_list_find(l, t, p)))
					__real_rd_kafka_topic_partition_list_add(l, t, p);
			}
		} else if (op < 95) { // reorder (not inside the handler's window: nothing sorts there)
			if (!window)
				rd_kafka_topic_partition_list_sort(l, NULL, NULL);
		} else if (op < 98) { // a new list, perhaps at the same address
			rd_kafka_topic_partition_list_destroy(l);
			l = rd_kafka_topic_partition_list_new((int)(rng(&s) % 8));
		} else { // a copy made inside librdkafka, the original dropped
			kr_topic_partition_list_t *c = rd_kafka_topic_partition_list_copy(l);
			rd_kafka_topic_partition_list_destroy(l);
			l = c;
		}
	}
	rd_kafka_topic_partition_list_destroy(l);
	kr_find_window(0);
	return bad;
}

// kr_check_handlers builds a list of n partitions the way an OffsetFetch
// response for all of a group's offsets is handled (find, miss, add), then
// looks them all up in order, as the OffsetCommit handler does. It returns
// the number of wrong answers.
int kr_check_handlers(int n) {
	char topic[32];
	int bad = 0;
	kr_find_window(1);
	kr_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(16);
	for (int i = 0; i < n; i++) {
		snprintf(topic, sizeof topic, "t%03d", i / 100);
		if (rd_kafka_topic_partition_list_find(l, topic, i % 100))
			bad++;
		rd_kafka_topic_partition_list_add(l, topic, i % 100);
	}
	for (int i = 0; i < n; i++) {
		snprintf(topic, sizeof topic, "t%03d", i / 100);
		if (rd_kafka_topic_partition_list_find(l, topic, i % 100) != kr_list_elem(l, i))
			bad++;
	}
	if (rd_kafka_topic_partition_list_find(l, "t000", 100) || rd_kafka_topic_partition_list_find(l, "nope", 0))
		bad++;
	kr_find_window(0);
	rd_kafka_topic_partition_list_destroy(l);
	return bad;
}
