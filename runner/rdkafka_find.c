//go:build linux

// Faster partition-list lookups for librdkafka's response handlers, linked
// in with -Wl,--wrap (see rdkafka_find.go for the flags and the figures).
//
// librdkafka (2.11) looks up every partition of a response in a list with
// a linear search (rd_kafka_topic_partition_list_find), so handling a
// response of N partitions costs N*N/2 string comparisons: about 175 ms of
// CPU at 10,000 partitions for each of the commit and the read of all the
// group's committed offsets, the two calls the runner cannot split.
//
//   - The hint, for every lookup: the handlers look a response's partitions
//     up in the order the request listed them, and brokers answer in that
//     order, so the partition sought is nearly always the one after the
//     last one found. The wrapper remembers, per thread, the list and index
//     of its last hit and tries the next element first. A hit is the same
//     test as librdkafka's comparator, so it is an element librdkafka's
//     search would match; in a list that holds each partition once (the
//     runner's are), it is the one it would return.
//   - The index, only while rd_kafka_handle_OffsetFetch runs for a request
//     of all the group's offsets: the handler then builds its list from the
//     response by looking each partition up, missing (a broker lists each
//     once) and appending it. A hash of the list's partitions answers those
//     misses. Within that handler (read in librdkafka 2.11.1's
//     rdkafka_request.c) nothing else changes the list's partitions; any
//     change through another function would change its count, its array or
//     its last element, which are checked before every use, and a hit is
//     checked against the element itself.
//
// Only librdkafka's public ABI is used for the lists (rdkafka.h's
// rd_kafka_topic_partition_list_t and rd_kafka_topic_partition_t, checked at
// start-up by kr_find_selftest: on a mismatch the wrappers pass through).
// The handler's signature is librdkafka's own, internal one:
// TestLibrdkafkaVersionReviewed fails when the linked version changes, so
// that an upgrade re-reads it.

#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "rdkafka_api.h"

// The public structs of rdkafka.h (librdkafka's ABI since 1.x; see
// rdkafka_api.h), under this file's names.
typedef rd_kafka_topic_partition_t kr_topic_partition_t;
typedef rd_kafka_topic_partition_list_t kr_topic_partition_list_t;

kr_topic_partition_t *__real_rd_kafka_topic_partition_list_find(
    const kr_topic_partition_list_t *list, const char *topic, int32_t partition);
kr_topic_partition_list_t *__real_rd_kafka_topic_partition_list_new(int size);
kr_topic_partition_t *__real_rd_kafka_topic_partition_list_add(
    kr_topic_partition_list_t *list, const char *topic, int32_t partition);


// kr_find_enabled is set by kr_find_selftest once the structs above are
// known to match the linked librdkafka's; kr_index_enabled also needs the
// linked librdkafka to be the version whose OffsetFetch handler was read.
static int kr_find_enabled, kr_index_enabled;

// The hint: this thread's last hit. librdkafka handles every response on
// its main thread, and each handler runs to its end before the next.
static __thread const kr_topic_partition_list_t *kr_last_list;
static __thread int kr_last_next;

// The index (see the top of the file), kept per thread: librdkafka handles
// every response on its main thread, one handler at a time.
typedef struct kr_index_s {
	const kr_topic_partition_list_t *list;
	const kr_topic_partition_t *elems; // list->elems when last seen
	int cnt;                           // elements indexed: list->cnt then
	const char *last_topic;            // elems[cnt-1].topic then
	int32_t last_partition;
	uint32_t cap;  // slots, a power of two
	int32_t *slot; // element index + 1; 0 is empty
	int dirty;     // slot holds an earlier list's entries
} kr_index_t;

static __thread kr_index_t kr_index;

// kr_in_fetch is set while this thread runs rd_kafka_handle_OffsetFetch
// for all of a group's offsets: the only time the index is built or used.
static __thread int kr_in_fetch;

// Counters for tests and benchmarks: lookups the hint answered, those the
// index answered, and those left to librdkafka's search.
static uint64_t kr_hits, kr_indexed, kr_misses;

static void kr_count(uint64_t *c) { __atomic_fetch_add(c, 1, __ATOMIC_RELAXED); }

static uint32_t kr_hash(const char *topic, int32_t partition) {
	uint32_t h = 2166136261u; // FNV-1a
	for (const unsigned char *p = (const unsigned char *)topic; *p; p++)
		h = (h ^ *p) * 16777619u;
	h = (h ^ (uint32_t)partition) * 16777619u;
	return h ^ (h >> 15);
}

static void kr_index_drop(void) {
	kr_index.list = NULL;
}

// kr_index_release drops the index and gives its table back: it is the
// size of the largest response seen, not worth keeping for a thread's life.
static void kr_index_release(void) {
	kr_index_drop();
	free(kr_index.slot);
	kr_index.slot = NULL;
	kr_index.cap = 0;
}

// kr_index_usable says whether the index still describes list exactly.
static int kr_index_usable(const kr_topic_partition_list_t *list) {
	if (!kr_find_enabled || !kr_in_fetch || list != kr_index.list || list->cnt != kr_index.cnt ||
	    list->elems != kr_index.elems)
		return 0;
	if (list->cnt > 0) {
		const kr_topic_partition_t *last = &list->elems[list->cnt - 1];
		if (last->topic != kr_index.last_topic || last->partition != kr_index.last_partition)
			return 0;
	}
	return 1;
}

// kr_index_slot finds the slot of (topic, partition), or the empty slot
// where it would go.
static uint32_t kr_index_slot(const kr_topic_partition_list_t *list, const char *topic, int32_t partition) {
	uint32_t mask = kr_index.cap - 1;
	uint32_t i = kr_hash(topic, partition) & mask;
	for (;;) {
		int32_t s = kr_index.slot[i];
		if (s == 0)
			return i;
		const kr_topic_partition_t *e = &list->elems[s - 1];
		if (e->partition == partition && e->topic && strcmp(e->topic, topic) == 0)
			return i;
		i = (i + 1) & mask;
	}
}

// kr_index_add indexes list->elems[idx]; it drops the index if it cannot.
static void kr_index_add(const kr_topic_partition_list_t *list, int idx) {
	const kr_topic_partition_t *e = &list->elems[idx];
	if (!e->topic) { // named by topic ID alone: not this handler's kind of list
		kr_index_drop();
		return;
	}
	if (kr_index.dirty) {
		// A new list: start small again rather than clear a big table.
		free(kr_index.slot);
		kr_index.slot = NULL;
		kr_index.cap = 0;
		kr_index.dirty = 0;
	}
	if ((uint32_t)(idx + 1) * 2 > kr_index.cap) {
		uint32_t cap = kr_index.cap ? kr_index.cap * 2 : 256;
		int32_t *slot = calloc(cap, sizeof *slot);
		if (!slot) {
			kr_index_drop();
			return;
		}
		free(kr_index.slot);
		kr_index.slot = slot;
		kr_index.cap = cap;
		for (int i = 0; i < idx; i++) {
			const kr_topic_partition_t *o = &list->elems[i];
			uint32_t at = kr_index_slot(list, o->topic, o->partition);
			if (kr_index.slot[at] == 0) // the first of duplicates wins, as in librdkafka's search
				kr_index.slot[at] = i + 1;
		}
	}
	uint32_t at = kr_index_slot(list, e->topic, e->partition);
	if (kr_index.slot[at] == 0)
		kr_index.slot[at] = idx + 1;
	kr_index.cnt = list->cnt;
	kr_index.elems = list->elems;
	kr_index.last_topic = e->topic;
	kr_index.last_partition = e->partition;
}

kr_topic_partition_list_t *__wrap_rd_kafka_topic_partition_list_new(int size) {
	kr_topic_partition_list_t *list = __real_rd_kafka_topic_partition_list_new(size);
	if (kr_find_enabled && kr_in_fetch && list && list->cnt == 0) {
		kr_index.list = list;
		kr_index.cnt = 0;
		kr_index.elems = list->elems;
		kr_index.last_topic = NULL;
		kr_index.last_partition = 0;
		kr_index.dirty = 1; // the slots are cleared by the first add
	}
	return list;
}

kr_topic_partition_t *__wrap_rd_kafka_topic_partition_list_add(
    kr_topic_partition_list_t *list, const char *topic, int32_t partition) {
	int usable = kr_index_usable(list);
	kr_topic_partition_t *e = __real_rd_kafka_topic_partition_list_add(list, topic, partition);
	if (usable && list->cnt == kr_index.cnt + 1 && e == &list->elems[list->cnt - 1])
		kr_index_add(list, list->cnt - 1);
	else if (list == kr_index.list)
		kr_index_drop();
	return e;
}

int __real_rd_kafka_handle_OffsetFetch(void *rk, void *rkb, int err, void *rkbuf, void *request,
                                       kr_topic_partition_list_t **offsets, int update_toppar, int add_part,
                                       int allow_retry);

// The handler with librdkafka 2.11's signature (rd_kafka_resp_err_t and
// rd_bool_t are ints). offsets is NULL and add_part set when the request
// asked for all of the group's offsets: the handler creates the list.
int __wrap_rd_kafka_handle_OffsetFetch(void *rk, void *rkb, int err, void *rkbuf, void *request,
                                       kr_topic_partition_list_t **offsets, int update_toppar, int add_part,
                                       int allow_retry) {
	int r, all = kr_index_enabled && add_part && offsets && !*offsets && !kr_in_fetch;
	if (all)
		kr_in_fetch = 1;
	r = __real_rd_kafka_handle_OffsetFetch(rk, rkb, err, rkbuf, request, offsets, update_toppar, add_part,
	                                       allow_retry);
	if (all) {
		kr_in_fetch = 0;
		kr_index_release();
	}
	return r;
}

kr_topic_partition_t *__wrap_rd_kafka_topic_partition_list_find(
    const kr_topic_partition_list_t *list, const char *topic, int32_t partition) {
	kr_topic_partition_t *e;

	if (kr_index_usable(list)) {
		kr_count(&kr_indexed);
		if (list->cnt == 0)
			return NULL;
		int32_t s = kr_index.slot[kr_index_slot(list, topic, partition)];
		return s ? &list->elems[s - 1] : NULL;
	}
	if (kr_find_enabled && list == kr_last_list && kr_last_next < list->cnt) {
		e = &list->elems[kr_last_next];
		// The same test as librdkafka's comparator, so the element
		// returned is one its search would also match. In a list that
		// holds a partition once, it is the one it would return. (A
		// partition named by topic ID alone has no name: never a match.)
		if (e->partition == partition && e->topic && strcmp(e->topic, topic) == 0) {
			kr_last_next++;
			kr_count(&kr_hits);
			return e;
		}
	}
	e = __real_rd_kafka_topic_partition_list_find(list, topic, partition);
	if (kr_find_enabled) {
		kr_count(&kr_misses);
		if (e) {
			kr_last_list = list;
			kr_last_next = (int)(e - list->elems) + 1;
		} else {
			kr_last_list = NULL;
		}
	}
	return e;
}

// kr_find_selftest checks the structs' layout against librdkafka's own
// list functions and turns the hint on if they agree, and the index too if
// reviewed says the linked librdkafka is the one its handler was read in.
// It returns 1 if the hint is on.
int kr_find_selftest(int reviewed) {
	kr_topic_partition_list_t *l = __real_rd_kafka_topic_partition_list_new(4);
	kr_topic_partition_t *a, *b, *c;
	int ok;

	a = __real_rd_kafka_topic_partition_list_add(l, "kr-a", 7);
	b = __real_rd_kafka_topic_partition_list_add(l, "kr-b", 9);
	c = __real_rd_kafka_topic_partition_list_add(l, "kr-a", 8);
	ok = l->cnt == 3 && a == &l->elems[0] && b == &l->elems[1] && c == &l->elems[2] &&
	     strcmp(b->topic, "kr-b") == 0 && b->partition == 9 && c->partition == 8 &&
	     __real_rd_kafka_topic_partition_list_find(l, "kr-a", 8) == c;
	rd_kafka_topic_partition_list_destroy(l);
	kr_find_enabled = ok;
	kr_index_enabled = ok && reviewed;
	return ok;
}

// kr_find_window opens (1) or closes (0) the index's window on this thread
// as the OffsetFetch handler's wrapper does: for the differential tests.
void kr_find_window(int on) {
	kr_in_fetch = on && kr_index_enabled;
	if (!on)
		kr_index_release();
}

// Accessors for the differential test (runner/internal/rdkafkacheck), so
// that the structs' layout is written down once, here.
int kr_list_cnt(const kr_topic_partition_list_t *l) { return l->cnt; }
kr_topic_partition_t *kr_list_elem(const kr_topic_partition_list_t *l, int i) { return &l->elems[i]; }
const char *kr_elem_topic(const kr_topic_partition_t *e) { return e->topic; }
int32_t kr_elem_partition(const kr_topic_partition_t *e) { return e->partition; }

void kr_find_counts(uint64_t *hits, uint64_t *indexed, uint64_t *misses) {
	*hits = __atomic_load_n(&kr_hits, __ATOMIC_RELAXED);
	*indexed = __atomic_load_n(&kr_indexed, __ATOMIC_RELAXED);
	*misses = __atomic_load_n(&kr_misses, __ATOMIC_RELAXED);
}
