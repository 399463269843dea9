// Command rusage runs a command and writes what the command alone cost to
// a file: wall time, user and system CPU, and peak RSS (ru_maxrss).
//
// A benchmark cannot take a child's peak RSS from its own wait: Go starts
// children with vfork, and at exec the kernel carries the memory the child
// shared until then, the parent's, into the child's ru_maxrss. Between the
// benchmark (a large test binary, an embedded cluster, a proxy) and the
// command, this small process is that parent instead, so the figure is the
// command's own unless the command stays below this process's few MiB;
// make bench checks that (the floor, measured on true(1)).
//
// Usage: rusage -o FILE command [args...]. The command's output and exit
// code pass through; FILE gets one line: wall_us user_us sys_us maxrss_kib.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	out := flag.String("o", "", "file to write 'wall_us user_us sys_us maxrss_kib' to")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: rusage -o FILE command [args...]")
		os.Exit(2)
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, "rusage:", err)
		os.Exit(2)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintln(os.Stderr, "rusage: no rusage on this platform")
		os.Exit(2)
	}
	line := fmt.Sprintf("%d %d %d %d\n", wall.Microseconds(),
		time.Duration(ru.Utime.Nano()).Microseconds(), time.Duration(ru.Stime.Nano()).Microseconds(), ru.Maxrss)
	if err := os.WriteFile(*out, []byte(line), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "rusage:", err)
		os.Exit(2)
	}
	os.Exit(cmd.ProcessState.ExitCode())
}
