package groupkind

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// noSigPipe makes c's writes send(2) with MSG_NOSIGNAL: a peer that has
// gone is then an EPIPE error, never a SIGPIPE.
func noSigPipe(c net.Conn) net.Conn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	return &noSigPipeConn{Conn: c, rc: rc}
}

type noSigPipeConn struct {
	net.Conn
	rc syscall.RawConn
}

func (c *noSigPipeConn) Write(p []byte) (int, error) {
	var written int
	var werr error
	for written < len(p) {
		var n int
		err := c.rc.Write(func(fd uintptr) bool {
			n, werr = unix.SendmsgN(int(fd), p[written:], nil, nil, unix.MSG_NOSIGNAL)
			// Not ready: wait in Go's poller (and its write deadline).
			return werr != unix.EAGAIN
		})
		if err != nil {
			return written, err
		}
		if werr != nil {
			return written, &net.OpError{Op: "write", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: werr}
		}
		written += n
	}
	return written, nil
}
