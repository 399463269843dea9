//go:build linux && !musl

// Package cmem reports the C heap in use, for tests that hold librdkafka
// and its Go binding to their memory.
package cmem

/*
#include <malloc.h>

static size_t kr_c_heap_in_use(void) {
	struct mallinfo2 m = mallinfo2();
	return m.uordblks + m.hblkhd; // in use: small chunks, and mmapped ones
}
*/
import "C"

// InUse is the bytes glibc's malloc has handed out and not had back, over
// all arenas.
func InUse() int64 { return int64(C.kr_c_heap_in_use()) }
