// Command argowait stands in for Argo's wait container in the Argo scenario:
// it shares the step's volume, waits for the output file (the runner writes
// it atomically, so it is whole once it exists), and prints it. The kubelet
// removes a finished pod's emptyDir, so reading it afterwards from the node
// would race; Argo reads it from a container of the same pod, as this does.
package main

import (
	"fmt"
	"os"
	"time"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: argowait FILE TIMEOUT")
		os.Exit(2)
	}
	path := os.Args[1]
	timeout, err := time.ParseDuration(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	deadline := time.Now().Add(timeout)
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			fmt.Printf("%s", b)
			return
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "argowait: no %s after %s: %v\n", path, timeout, err)
			os.Exit(1)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
