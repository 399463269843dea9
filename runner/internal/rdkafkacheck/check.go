//go:build linux

// Package rdkafkacheck checks the runner's wrapper of librdkafka's
// partition-list search (runner/rdkafka_find.c) against librdkafka's own.
// Only the runner's tests import it: it links the runner, whose cgo flags
// install the wrapper.
package rdkafkacheck

/*
#include <stdint.h>
int kr_check(uint64_t seed, int ops, int dups, int window, char *msg, int msglen);
int kr_check_handlers(int n);
*/
import "C"

import (
	"unsafe"

	_ "github.com/kafka-replay/kafka-replay/runner" // the wrapper and its link flags
)

// Random runs ops random list operations from seed and returns the number
// of lookups where the wrapper and librdkafka disagree, and the first. With
// window, they run as inside the OffsetFetch handler, with the index on.
func Random(seed uint64, ops int, dups, window bool) (int, string) {
	var msg [256]C.char
	bad := C.kr_check(C.uint64_t(seed), C.int(ops), cbool(dups), cbool(window), &msg[0], C.int(len(msg)))
	return int(bad), C.GoString((*C.char)(unsafe.Pointer(&msg[0])))
}

// Handlers replays the lookups of librdkafka's OffsetFetch and OffsetCommit
// handlers on an n-partition list and returns the number of wrong answers.
func Handlers(n int) int { return int(C.kr_check_handlers(C.int(n))) }

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
