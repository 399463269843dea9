package groupkind

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// dialer connects without ever raising SIGPIPE. The runner catches SIGPIPE
// to learn that its stdout's reader has gone (cmd/runner), and Go delivers
// to that handler every SIGPIPE the kernel raises, on any socket: a Go
// client writing to a broker that closed the connection (a refused TLS
// handshake, a broker going down) would read as a signal and abort the run
// as interrupted. librdkafka sends with MSG_NOSIGNAL for the same reason;
// so does this client's connection (noSigPipe). TLS is layered here, as
// kgo.DialTLSConfig would, because kgo takes a dialer or a TLS config, not
// both.
func dialer(tc *tls.Config) kgo.Opt {
	d := &net.Dialer{Timeout: 10 * time.Second}
	return kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, host)
		if err != nil {
			return nil, err
		}
		c = noSigPipe(c)
		if tc == nil {
			return c, nil
		}
		cfg := tc.Clone()
		if cfg.ServerName == "" {
			if h, _, err := net.SplitHostPort(host); err == nil {
				cfg.ServerName = h
			}
		}
		tlsConn := tls.Client(c, cfg)
		if err := tlsConn.HandshakeContext(ctx); err != nil {
			_ = c.Close()
			return nil, err
		}
		return tlsConn, nil
	})
}
