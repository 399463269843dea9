//go:build !linux

package main

import "syscall"

// noCoreDumps sets the core file size limit to zero.
func noCoreDumps() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_CORE, &l) == nil {
		l.Cur = 0
		_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &l)
	}
}
