package kafkatest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// StreamsAppEnv names the directory `make kafka-streams-app` builds: a
// real Kafka Streams application (streamsapp/ReplayStreamsApp.java,
// compiled against kafka-streams from Maven) in classes/, its classpath
// in libs/.
const StreamsAppEnv = "KAFKA_REPLAY_TEST_STREAMS_APP"

// Kafka Streams' two group protocols (group.protocol).
const (
	StreamsProtocol = "streams" // KIP-1071: a streams group
	ClassicProtocol = "classic" // a classic consumer group named after the application.id
)

// StreamsAppOptions says which application to run.
type StreamsAppOptions struct {
	// Dir is what StreamsAppEnv names.
	Dir string
	// ApplicationID is the application.id: the group's name, and the
	// prefix of its internal topics.
	ApplicationID string
	// Input and Output are its topics. It re-keys Input by value through
	// <ApplicationID>-rekey-repartition, counts in the store "counts"
	// (<ApplicationID>-counts-changelog) and writes the counts to Output.
	Input, Output string
	// Protocol is StreamsProtocol or ClassicProtocol.
	Protocol string
	// StateDir is its state directory (its local state).
	StateDir string
}

// StreamsApp is a running Kafka Streams application (a JVM).
type StreamsApp struct {
	stdin  io.WriteCloser
	exited chan struct{}
	err    error
	pid    int

	mu      sync.Mutex
	out     strings.Builder
	running chan struct{}
	once    sync.Once
}

// StartStreamsApp starts the application against the cluster's Apache
// Kafka. It returns at once; WaitRunning waits until it processes.
func (c *Cluster) StartStreamsApp(o StreamsAppOptions) (*StreamsApp, error) {
	if c.Apache == nil {
		return nil, errors.New("kafkatest: a Kafka Streams application needs Apache Kafka (kfake has no streams groups)")
	}
	if _, err := os.Stat(filepath.Join(o.Dir, "classes", "ReplayStreamsApp.class")); err != nil {
		return nil, fmt.Errorf("kafkatest: no Kafka Streams application in %s (make kafka-streams-app): %w", o.Dir, err)
	}
	java := "java"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java = filepath.Join(home, "bin", "java")
	}
	cp := filepath.Join(o.Dir, "classes") + string(os.PathListSeparator) + filepath.Join(o.Dir, "libs", "*")
	// The application outlives the call: Stop and Kill end it.
	cmd := c.Apache.command(context.Background(), java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-cp", cp, "ReplayStreamsApp", c.Bootstrap(), o.ApplicationID, o.Input, o.Output, o.Protocol, o.StateDir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	setProcessGroup(cmd)
	a := &StreamsApp{stdin: stdin, exited: make(chan struct{}), running: make(chan struct{})}
	if err := startHeld(cmd, a.exited); err != nil {
		return nil, fmt.Errorf("start the Kafka Streams application: %w", err)
	}
	a.pid = cmd.Process.Pid
	go func() {
		s := bufio.NewScanner(pr)
		s.Buffer(make([]byte, 64*1024), 1024*1024)
		for s.Scan() {
			line := s.Text()
			a.mu.Lock()
			if a.out.Len() < 1<<20 {
				a.out.WriteString(line + "\n")
			}
			a.mu.Unlock()
			if line == "RUNNING" {
				a.once.Do(func() { close(a.running) })
			}
		}
	}()
	go func() {
		a.err = cmd.Wait()
		_ = pw.Close()
		close(a.exited)
	}()
	return a, nil
}

// Output is what the application printed so far (its state changes and
// Kafka Streams' log).
func (a *StreamsApp) Output() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.out.String()
}

// WaitRunning waits until the application is RUNNING (it joined its group
// and has its tasks), or fails if it exits first.
func (a *StreamsApp) WaitRunning(ctx context.Context) error {
	select {
	case <-a.running:
		return nil
	case <-a.exited:
		return fmt.Errorf("the Kafka Streams application exited before it ran (%w):\n%s", a.err, a.tail())
	case <-ctx.Done():
		return fmt.Errorf("the Kafka Streams application is not running: %w:\n%s", context.Cause(ctx), a.tail())
	}
}

// Stop closes the application as its operator would: it commits, leaves
// its group and exits; Stop waits for that, and fails if it did not exit
// cleanly.
func (a *StreamsApp) Stop(ctx context.Context) error {
	_ = a.stdin.Close()
	select {
	case <-a.exited:
	case <-ctx.Done():
		a.Kill()
		return fmt.Errorf("the Kafka Streams application did not stop: %w:\n%s", context.Cause(ctx), a.tail())
	}
	if a.err != nil {
		return fmt.Errorf("the Kafka Streams application stopped with %w:\n%s", a.err, a.tail())
	}
	return nil
}

// Kill ends the application at once (it stays a member of its group until
// its session times out); a no-op once it has exited.
func (a *StreamsApp) Kill() {
	select {
	case <-a.exited:
		return
	default:
	}
	killProcessGroup(a.pid)
	select {
	case <-a.exited:
	case <-time.After(30 * time.Second):
	}
}

// tail is the end of the output, for an error.
func (a *StreamsApp) tail() string {
	out := a.Output()
	if len(out) > 8000 {
		out = "...\n" + out[len(out)-8000:]
	}
	return out
}
