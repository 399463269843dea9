//go:build linux

package runner

/*
// Calls from librdkafka's response handlers (rdkafka_request.c,
// rdkafka_admin.c) to its partition-list functions, and from its admin code
// to the OffsetFetch handler, go to the wrappers in rdkafka_find.c. GNU ld's
// --wrap replaces references between object files only, which is what
// those are. Without them, the commit and the read of all committed
// offsets of 10,000 partitions cost about 175 ms of CPU each, and the
// read-back has to be split (offsetFetchLimit).
#cgo LDFLAGS: -Wl,--wrap=rd_kafka_topic_partition_list_find
#cgo LDFLAGS: -Wl,--wrap=rd_kafka_topic_partition_list_new
#cgo LDFLAGS: -Wl,--wrap=rd_kafka_topic_partition_list_add
#cgo LDFLAGS: -Wl,--wrap=rd_kafka_handle_OffsetFetch
#include <stdint.h>
int kr_find_selftest(int reviewed);
void kr_find_counts(uint64_t *hits, uint64_t *indexed, uint64_t *misses);
*/
import "C"

import "github.com/confluentinc/confluent-kafka-go/v2/kafka"

// reviewedLibrdkafka is the librdkafka whose rd_kafka_handle_OffsetFetch
// (its signature, and that it changes its list only through the wrapped
// calls) rdkafka_find.c was written against. With another, the index stays
// off, and TestLibrdkafkaVersionReviewed fails until someone reads the new
// version's handler and updates this.
const reviewedLibrdkafka = "2.11.1"

// findHintOn says whether the wrapper's layout check passed (see
// rdkafka_find.c); if not, librdkafka's own search runs unchanged.
// findIndexOn says whether the OffsetFetch handler's index is on too.
var findHintOn, findIndexOn = findSelftest()

func findSelftest() (hint, index bool) {
	_, v := kafka.LibraryVersion()
	reviewed := v == reviewedLibrdkafka
	r := C.int(0)
	if reviewed {
		r = 1
	}
	hint = C.kr_find_selftest(r) == 1
	return hint, hint && reviewed
}

// findCounts returns how many partition lookups the hint answered, how many
// the index answered, and how many fell back to librdkafka's search, since
// the process started.
func findCounts() (hits, indexed, misses uint64) {
	var h, i, m C.uint64_t
	C.kr_find_counts(&h, &i, &m)
	return uint64(h), uint64(i), uint64(m)
}
