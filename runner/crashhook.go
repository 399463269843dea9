//go:build crashhook

package runner

import (
	"os"
	"sync"
)

// Built only with -tags crashhook, for tests that need a real process to
// crash: REPLAY_TEST_CRASH_AT names a hook point, REPLAY_TEST_CRASH_MODE is
// "panic" (the default) or "fatal" (an unrecoverable runtime error).
func init() {
	at, mode := os.Getenv("REPLAY_TEST_CRASH_AT"), os.Getenv("REPLAY_TEST_CRASH_MODE")
	if at == "" {
		return
	}
	testHook = func(point string) {
		if point != at {
			return
		}
		if mode == "fatal" {
			var mu sync.Mutex
			mu.Unlock() // fatal error: sync: unlock of unlocked mutex
		}
		panic("test panic at " + point)
	}
}
