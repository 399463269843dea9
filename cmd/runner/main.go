// Command runner repositions a Kafka consumer group's committed offsets once.
// See `runner --help` and the README for flags, environment and exit codes.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/kafka-replay/kafka-replay/runner"
)

func main() {
	// SIGTERM is how Kubernetes stops a pod (Job deletion, deadline); before
	// the commit it aborts the run cleanly, after it the run finishes.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	code := runner.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
