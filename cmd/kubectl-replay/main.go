// Command kubectl-replay is the kubectl plugin for kafka-replay: put it on
// PATH and run `kubectl replay --help`.
package main

import (
	"context"
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/cli"
)

// version is set at build time: -ldflags '-X main.version=v1.2.3' (the
// release archive's build, make plugin-release).
var version = "dev"

func main() {
	cli.Version = version
	code := cli.Run(context.Background(), os.Args[1:], genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	os.Exit(int(code))
}
