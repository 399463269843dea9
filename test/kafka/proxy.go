package kafkatest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Proxy is a pass-through Kafka proxy for tests: it sits in front of a
// cluster (kfake or a real one), one listener per broker, and passes every
// request and answer through unchanged, except where a test's hook changes
// one. It makes the cases a broker cannot be asked to produce, a mangled
// answer or a commit that lands after its connection dropped, on any
// broker, with the client under test (librdkafka) untouched.
//
// The brokers' addresses in Metadata, FindCoordinator and DescribeCluster
// answers are rewritten to the proxy's, so that the client never goes
// around it.
type Proxy struct {
	t        testing.TB
	upstream []string // broker addresses, as the cluster advertises them
	lis      []net.Listener
	// addr maps an upstream host:port to its listener's host:port.
	addr map[string]string

	mu   sync.Mutex
	hook Hook
	held [][]byte // held requests' frames, with their upstream
	to   []string
	wg   sync.WaitGroup
	// counts are the requests the proxy saw, by kind, whatever their
	// fate: a benchmark puts every tool it compares behind one proxy.
	counts RequestCounts
}

// Verdict is what a Hook decides for one request.
type Verdict int

const (
	// Pass forwards the request and its answer (as the hook may have
	// changed it).
	Pass Verdict = iota
	// Drop closes the client's connection without an answer, after
	// forwarding the request: the broker acts on it, the client never
	// hears.
	Drop
	// Hold closes the client's connection without forwarding the request;
	// Release sends it later: a broker that applies it late.
	Hold
)

// Hook sees each request (decoded) before it is forwarded and decides its
// fate; for Pass it may also change the answer in place (answer is nil
// when the request was not forwarded yet: the hook is called twice for a
// request it wants to answer for, once with answer nil and once with it).
type Hook func(req kmsg.Request, answer kmsg.Response) Verdict

// NewProxy starts a proxy in front of c's brokers. The brokers' addresses
// are those the cluster advertises, which a Metadata request returns.
func NewProxy(t testing.TB, c *Cluster) *Proxy {
	t.Helper()
	brokers, err := c.brokerAddrs()
	if err != nil {
		t.Fatalf("proxy: list brokers: %v", err)
	}
	p := &Proxy{t: t, upstream: brokers, addr: map[string]string{}, counts: RequestCounts{}}
	for _, b := range brokers {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("proxy: listen: %v", err)
		}
		p.lis = append(p.lis, l)
		p.addr[b] = l.Addr().String()
		p.wg.Add(1)
		go p.accept(l, b)
	}
	t.Cleanup(p.Close)
	return p
}

// brokerAddrs lists the brokers' advertised addresses.
func (c *Cluster) brokerAddrs() ([]string, error) {
	md, err := c.admin.BrokerMetadata(context.Background())
	if err != nil {
		return nil, err
	}
	var out []string
	for _, b := range md.Brokers {
		out = append(out, net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))))
	}
	return out, nil
}

// Bootstrap is the proxy's address list, for the client under test.
func (p *Proxy) Bootstrap() string {
	s := ""
	for i, l := range p.lis {
		if i > 0 {
			s += ","
		}
		s += l.Addr().String()
	}
	return s
}

// SetHook installs h (nil: pass everything).
func (p *Proxy) SetHook(h Hook) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hook = h
}

// Requests returns the requests seen since the last ResetRequests.
func (p *Proxy) Requests() RequestCounts {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := RequestCounts{}
	for k, v := range p.counts {
		out[k] = v
	}
	return out
}

// ResetRequests zeroes the request counts.
func (p *Proxy) ResetRequests() {
	p.mu.Lock()
	p.counts = RequestCounts{}
	p.mu.Unlock()
}

// Release sends every held request to its broker, each on a connection of
// its own, and waits for the answers (which nobody reads). It returns how
// many it sent.
func (p *Proxy) Release() (int, error) {
	p.mu.Lock()
	held, to := p.held, p.to
	p.held, p.to = nil, nil
	p.mu.Unlock()
	for i, frame := range held {
		conn, err := net.Dial("tcp", to[i])
		if err != nil {
			return i, err
		}
		if _, err := conn.Write(frame); err != nil {
			_ = conn.Close()
			return i, err
		}
		_, err = readFrame(conn)
		_ = conn.Close()
		if err != nil {
			return i, err
		}
	}
	return len(held), nil
}

// Close stops the listeners.
func (p *Proxy) Close() {
	for _, l := range p.lis {
		_ = l.Close()
	}
}

func (p *Proxy) accept(l net.Listener, upstream string) {
	defer p.wg.Done()
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go p.serve(c, upstream)
	}
}

// serve relays one client connection, one request at a time in order
// (Kafka answers a connection's requests in order).
func (p *Proxy) serve(client net.Conn, upstream string) {
	defer func() { _ = client.Close() }()
	up, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	defer func() { _ = up.Close() }()
	// Requests are read here and answers in a goroutine, so that a client
	// may pipeline; pending carries each request's key and version to it.
	type pending struct {
		req  kmsg.Request
		hook Hook
	}
	queue := make(chan pending, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = client.Close() }()
		for pr := range queue {
			frame, err := readFrame(up)
			if err != nil {
				return
			}
			out, verdict, err := p.answer(pr.req, pr.hook, frame)
			if err != nil {
				p.t.Logf("proxy: %v", err)
				return
			}
			if verdict == Drop {
				return
			}
			if _, err := client.Write(out); err != nil {
				return
			}
		}
	}()
	defer func() {
		close(queue)
		<-done
	}()
	for {
		frame, err := readFrame(client)
		if err != nil {
			return
		}
		req, err := decodeRequest(frame[4:])
		if err != nil {
			p.t.Logf("proxy: %v", err)
			return
		}
		p.mu.Lock()
		h := p.hook
		p.counts[kmsg.NameForKey(req.Key())]++
		p.mu.Unlock()
		if h != nil && h(req, nil) == Hold {
			p.mu.Lock()
			p.held, p.to = append(p.held, frame), append(p.to, upstream)
			p.mu.Unlock()
			return
		}
		if _, err := up.Write(frame); err != nil {
			return
		}
		select {
		case queue <- pending{req, h}:
		case <-done:
			return
		}
	}
}

// answer decodes an answer frame, rewrites broker addresses, lets the
// hook change it, and encodes it again.
func (p *Proxy) answer(req kmsg.Request, h Hook, frame []byte) ([]byte, Verdict, error) {
	key := req.Key()
	rewrite := key == int16(kmsg.Metadata) || key == int16(kmsg.FindCoordinator) || key == int16(kmsg.DescribeCluster)
	if h == nil && !rewrite {
		return frame, Pass, nil
	}
	body := frame[4:]
	if len(body) < 4 {
		return nil, Pass, errors.New("short answer")
	}
	corr := body[:4]
	body = body[4:]
	// Every flexible answer has a tagged-field header, but ApiVersions'.
	flexible := req.IsFlexible() && key != int16(kmsg.ApiVersions)
	if flexible {
		r := kbin.Reader{Src: body}
		skipTags(&r)
		if !r.Ok() {
			return nil, Pass, fmt.Errorf("answer to key %d: bad header", key)
		}
		body = r.Src
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if err := resp.ReadFrom(body); err != nil {
		return nil, Pass, fmt.Errorf("decode answer to key %d v%d: %w", key, req.GetVersion(), err)
	}
	if rewrite {
		p.rewrite(resp)
	}
	verdict := Pass
	if h != nil {
		verdict = h(req, resp)
	}
	out := append([]byte{0, 0, 0, 0}, corr...)
	if flexible {
		out = append(out, 0) // no tagged fields
	}
	out = resp.AppendTo(out)
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	return out, verdict, nil
}

// rewrite points the brokers' addresses in resp at the proxy.
func (p *Proxy) rewrite(resp kmsg.Response) {
	swap := func(host *string, port *int32) {
		if a, ok := p.addr[net.JoinHostPort(*host, strconv.Itoa(int(*port)))]; ok {
			h, ps, _ := net.SplitHostPort(a)
			n, _ := strconv.Atoi(ps)
			*host, *port = h, int32(n)
		}
	}
	switch r := resp.(type) {
	case *kmsg.MetadataResponse:
		for i := range r.Brokers {
			swap(&r.Brokers[i].Host, &r.Brokers[i].Port)
		}
	case *kmsg.FindCoordinatorResponse:
		swap(&r.Host, &r.Port)
		for i := range r.Coordinators {
			swap(&r.Coordinators[i].Host, &r.Coordinators[i].Port)
		}
	case *kmsg.DescribeClusterResponse:
		for i := range r.Brokers {
			swap(&r.Brokers[i].Host, &r.Brokers[i].Port)
		}
	}
}

// decodeRequest decodes a request frame's body (after the size).
func decodeRequest(b []byte) (kmsg.Request, error) {
	r := kbin.Reader{Src: b}
	key, version := r.Int16(), r.Int16()
	r.Int32()          // correlation ID
	r.NullableString() // client ID
	req := kmsg.RequestForKey(key)
	if req == nil {
		return nil, fmt.Errorf("unknown request key %d", key)
	}
	req.SetVersion(version)
	if req.IsFlexible() {
		skipTags(&r)
	}
	if !r.Ok() {
		return nil, fmt.Errorf("request key %d: bad header", key)
	}
	if err := req.ReadFrom(r.Src); err != nil {
		return nil, fmt.Errorf("decode request key %d v%d: %w", key, version, err)
	}
	return req, nil
}

func skipTags(r *kbin.Reader) {
	for n := r.Uvarint(); n > 0; n-- {
		r.Uvarint()
		r.Span(int(r.Uvarint()))
	}
}

// readFrame reads one size-prefixed frame, the size included.
func readFrame(c io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > 1<<28 {
		return nil, fmt.Errorf("frame of %d bytes", n)
	}
	frame := make([]byte, 4+n)
	copy(frame, size[:])
	_, err := io.ReadFull(c, frame[4:])
	return frame, err
}
