//go:build unix

package runner

import (
	"io"

	"golang.org/x/sys/unix"
)

// stdoutGone reports whether w is a pipe or socket whose reader has gone:
// a write would raise SIGPIPE and lose what it writes. poll(2) says so
// without writing (POLLERR on a pipe with no reader, POLLHUP on a socket
// shut down).
func stdoutGone(w io.Writer) bool {
	f, ok := w.(stdoutWriter)
	if !ok {
		return false
	}
	fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLOUT}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n == 1 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
}
