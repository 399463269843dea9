package record

import (
	"context"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// LogFetcher reads the end of a container's log (pods/log).
type LogFetcher interface {
	Tail(ctx context.Context, namespace, pod, container string, lines, bytes int64) (string, error)
}

// FullLogFetcher reads a container's whole log from its start, at most
// limitBytes of it, as a stream: the record's result frame is near the end
// of a log that may be several MiB (see Collector).
type FullLogFetcher interface {
	Full(ctx context.Context, namespace, pod, container string, limitBytes int64) (io.ReadCloser, error)
}

// fullLogTimeout bounds reading a whole log. It is longer than a tail's: a
// 10,000-partition frame is about 400 KB through the kubelet.
const fullLogTimeout = time.Minute

// PodLogs reads logs through the API server, which asks the pod's kubelet.
type PodLogs struct {
	// Client is the core API group's typed client, not the whole clientset,
	// which would link every API group's typed client into the launcher
	// (about a fifth of its binary, whose pages count in its memory).
	Client corev1client.PodsGetter
	// Timeout bounds one read, so a slow or unreachable kubelet never holds
	// up recording an outcome; the log tail is a convenience.
	Timeout time.Duration
}

// Tail returns at most lines lines and bytes bytes from the end of the log.
func (p PodLogs) Tail(ctx context.Context, namespace, pod, container string, lines, bytes int64) (string, error) {
	if p.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.Timeout)
		defer cancel()
	}
	rc, err := p.Client.Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{
		Container:  container,
		TailLines:  &lines,
		LimitBytes: &bytes,
	}).Stream(ctx)
	if err != nil {
		return "", err
	}
	defer func() { _ = rc.Close() }()
	b, err := io.ReadAll(io.LimitReader(rc, bytes))
	return string(b), err
}

// Full streams the log from its start, at most limitBytes, within
// fullLogTimeout (or Timeout, if longer). The caller closes it.
func (p PodLogs) Full(ctx context.Context, namespace, pod, container string, limitBytes int64) (io.ReadCloser, error) {
	ctx, cancel := context.WithTimeout(ctx, max(p.Timeout, fullLogTimeout))
	rc, err := p.Client.Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{
		Container:  container,
		LimitBytes: &limitBytes,
	}).Stream(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	return &cancelOnClose{ReadCloser: rc, r: io.LimitReader(rc, limitBytes), cancel: cancel}, nil
}

// cancelOnClose bounds a stream by bytes (the server's LimitBytes is a
// request, not a guarantee) and ends its context when closed.
type cancelOnClose struct {
	io.ReadCloser
	r      io.Reader
	cancel context.CancelFunc
}

func (c *cancelOnClose) Read(b []byte) (int, error) { return c.r.Read(b) }

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
