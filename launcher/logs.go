package launcher

import (
	"context"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
)

// LogFetcher reads the end of a container's log (pods/log).
type LogFetcher interface {
	Tail(ctx context.Context, namespace, pod, container string, lines, bytes int64) (string, error)
}

// PodLogs reads logs through the API server, which asks the pod's kubelet.
type PodLogs struct {
	Client kubernetes.Interface
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
	rc, err := p.Client.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{
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
