//go:build crashhook

package runner

import (
	"os"
	"strconv"
	"sync"
)

// Built only with -tags crashhook, for tests that need a real process to
// crash: REPLAY_TEST_CRASH_AT names a hook point, REPLAY_TEST_CRASH_MODE is
// "panic" (the default) or "fatal" (an unrecoverable runtime error), and
// REPLAY_TEST_CRASH_SKIP how many times the point passes first (a run
// over several groups reaches each point once per group).
func init() {
	at, mode := os.Getenv("REPLAY_TEST_CRASH_AT"), os.Getenv("REPLAY_TEST_CRASH_MODE")
	if at == "" {
		return
	}
	skip, _ := strconv.Atoi(os.Getenv("REPLAY_TEST_CRASH_SKIP"))
	var mu sync.Mutex
	testHook = func(point string) {
		if point != at {
			return
		}
		mu.Lock()
		skip--
		pass := skip >= 0
		mu.Unlock()
		if pass {
			return
		}
		if mode == "fatal" {
			var mu sync.Mutex
			mu.Unlock() // fatal error: sync: unlock of unlocked mutex
		}
		panic("test panic at " + point)
	}
}
