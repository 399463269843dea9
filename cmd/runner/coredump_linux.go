package main

import "syscall"

// noCoreDumps marks the process non-dumpable: the kernel writes no core file
// for it, not even through a core_pattern pipe (which ignores RLIMIT_CORE),
// and other processes of the same user cannot ptrace it to read its memory.
func noCoreDumps() {
	const prSetDumpable = 4 // PR_SET_DUMPABLE, <linux/prctl.h>
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0)
}
