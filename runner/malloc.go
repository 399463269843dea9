package runner

/*
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// limitArenas caps glibc's malloc arenas at one. glibc gives each thread
// that first allocates an arena of its own (up to 8 per core), and memory
// freed into one arena is not reused by another: librdkafka's broker
// threads, its main thread and cgo calls on Go's threads each filled their
// own. At 10,000 partitions two arenas took the runner's peak RSS from a
// median of 52 MiB to 48, one arena to about 44 (when it is in force from
// the start, see below), at no measurable CPU cost: librdkafka parses every
// response on its one main thread, and small blocks come from each thread's
// tcache without the arena's lock. musl has no M_ARENA_MAX.
//
// It runs as a C constructor, before the Go runtime starts any thread: a
// Go init function was too late. By then a runtime thread had already
// malloc'd (starting another thread) and got a second arena, which a later
// cap does not take away, so mallopt from init left two arenas whatever it
// asked for. MALLOC_ARENA_MAX in the environment still decides if set, as
// glibc reads it itself.
__attribute__((constructor)) static void limitArenas(void) {
#ifdef M_ARENA_MAX
	if (getenv("MALLOC_ARENA_MAX") == NULL) {
		mallopt(M_ARENA_MAX, 1);
	}
#endif
}

// heapCount counts glibc's malloc arenas (the <heap> elements of
// malloc_info), or -1 where it cannot tell (musl).
static int heapCount(void) {
#ifdef __GLIBC__
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f == NULL) {
		return -1;
	}
	int err = malloc_info(0, f);
	fclose(f);
	int n = err == 0 ? 0 : -1;
	for (char *p = buf; err == 0 && (p = strstr(p, "<heap nr=")) != NULL; p++) {
		n++;
	}
	free(buf);
	return n;
#else
	return -1;
#endif
}
*/
import "C"

// mallocArenas is how many malloc arenas the process has, -1 if unknown:
// TestOneMallocArena checks the cap above holds.
func mallocArenas() int { return int(C.heapCount()) }
