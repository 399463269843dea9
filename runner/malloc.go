package runner

/*
#include <malloc.h>

// limitArenas caps glibc's malloc arenas. Each thread that allocates while
// another holds the lock gets an arena of its own (up to 8 per core), and
// memory freed into one is not reused by another: librdkafka's broker
// threads, its main thread and cgo calls on Go's threads each filled their
// own. At 10,000 partitions two arenas took the runner's peak RSS from a
// median of 52 MiB to 48 (46 with MALLOC_ARENA_MAX=2 set before start), at
// no measurable CPU cost: librdkafka parses every response on its one main
// thread anyway. musl has no M_ARENA_MAX.
static void limitArenas(void) {
#ifdef M_ARENA_MAX
	mallopt(M_ARENA_MAX, 2);
#endif
}
*/
import "C"

import "os"

// The cap applies to arenas created afterwards, so it is set as early as
// Go code runs, before any thread but the first has allocated.
// MALLOC_ARENA_MAX in the environment still decides if set, as glibc reads
// it itself.
func init() {
	if _, set := os.LookupEnv("MALLOC_ARENA_MAX"); !set {
		C.limitArenas()
	}
}
