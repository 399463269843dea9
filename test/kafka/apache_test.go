package kafkatest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestApacheStartStop: the harness starts a real cluster that serves
// clients, and Stop leaves no process and no file behind.
func TestApacheStartStop(t *testing.T) {
	libs := os.Getenv(ApacheEnv)
	if libs == "" {
		t.Skipf("needs Apache Kafka's jars: set %s (make test-runner does)", ApacheEnv)
	}
	for _, nodes := range []int{1, 3} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		start := time.Now()
		a, err := StartApache(ctx, ApacheOptions{Libs: libs, Nodes: nodes})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d node(s) ready in %v", nodes, time.Since(start).Round(time.Millisecond))
		pids, dir := a.PIDs(), a.Dir()
		for _, pid := range pids {
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
				for _, l := range strings.Split(string(b), "\n") {
					if strings.HasPrefix(l, "VmRSS:") || strings.HasPrefix(l, "VmHWM:") {
						t.Logf("node process %d: %s", pid, strings.Join(strings.Fields(l), " "))
					}
				}
			}
		}
		if len(pids) != nodes {
			a.Stop()
			t.Fatalf("%d processes for %d nodes", len(pids), nodes)
		}
		a.Stop()
		for _, pid := range pids {
			if processAlive(pid) {
				t.Errorf("node process %d outlived Stop", pid)
			}
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s outlived Stop (%v)", dir, err)
		}
	}
}
