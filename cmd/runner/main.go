// Command runner repositions a Kafka consumer group's committed offsets once.
// See `runner --help` and the README for flags, environment and exit codes.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"

	"github.com/kafka-replay/kafka-replay/runner"
)

func main() {
	// One P for Go code unless GOMAXPROCS says otherwise. The runner's
	// concurrency is Kafka requests, which wait in librdkafka's own threads
	// (cgo calls do not hold a P); its Go code is conversions and planning,
	// one phase at a time. With two Ps the idle one ran GC workers and
	// spinning threads: make bench, 4 rounds of 10 processes alternating,
	// 1,000 partitions CPU 35-45 ms with two Ps, 34-39 with one (wall the
	// same or lower), 10,000 partitions the same within noise, and a peak
	// RSS 0.6 MiB lower (fewer threads). Undo by setting GOMAXPROCS.
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	// A fatal runtime error (or a panic in a goroutine the runner did not
	// start) cannot be recovered, and Go would exit with status 2: the
	// runner's InvalidInput, "nothing changed, do not retry". With the
	// traceback level "crash" the process ends by SIGABRT instead (exit
	// 134 in Kubernetes), which every reader maps to InternalError.
	debug.SetTraceback("crash")
	// SIGABRT would write a core file holding the Kafka credentials.
	noCoreDumps()
	// SIGTERM is how Kubernetes stops a pod (Job deletion, deadline); before
	// the commit it aborts the run cleanly, after it the run finishes. SIGHUP
	// and SIGQUIT mean the same here: by default Go would exit with status 2
	// on SIGQUIT, and a terminal's SIGHUP would kill the run mid-commit.
	// SIGPIPE too: a stdout or stderr whose reader has gone would otherwise
	// kill the process at its first write there (exit 141), after the
	// commit as well, before the result reached any place. Caught, the
	// write fails with EPIPE instead, and the result file and the
	// termination message, written first, still get it.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
	code := runner.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
