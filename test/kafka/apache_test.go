package kafkatest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestApacheStartStop: the harness starts a real cluster that serves
// clients, and Stop leaves no process and no file behind.
func TestApacheStartStop(t *testing.T) {
	libs := apacheLibs(t)
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
		if err := retentionOff(a); err != nil {
			a.Stop()
			t.Fatal(err)
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

// apacheLibs is the jars' directory for the harness's own tests, which
// skip without it: they test the harness, not the code the suites run.
func apacheLibs(t *testing.T) string {
	t.Helper()
	libs := os.Getenv(ApacheEnv)
	if libs == "" {
		t.Skipf("needs Apache Kafka's jars: set %s (make test-runner does)", ApacheEnv)
	}
	return libs
}

// retentionOff: every broker keeps records however old their timestamps
// (log.retention.ms -1), so that records stamped months ago, as tests seed
// them, are not deleted at the next retention check.
func retentionOff(a *Apache) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(a.Bootstrap()...))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ids, err := brokerIDs(ctx, cl)
	if err != nil {
		return err
	}
	configs, err := kadm.NewClient(cl).DescribeBrokerConfigs(ctx, ids...)
	if err != nil {
		return err
	}
	if len(configs) != len(ids) {
		return fmt.Errorf("configs of %d brokers, want %d", len(configs), len(ids))
	}
	for _, rc := range configs {
		if rc.Err != nil {
			return fmt.Errorf("broker %s: %w", rc.Name, rc.Err)
		}
		found := false
		for _, c := range rc.Configs {
			if c.Key == "log.retention.ms" {
				found = true
				if c.MaybeValue() != "-1" {
					return fmt.Errorf("broker %s: log.retention.ms %q: records stamped long ago would be deleted", rc.Name, c.MaybeValue())
				}
			}
		}
		if !found {
			return fmt.Errorf("broker %s: no log.retention.ms", rc.Name)
		}
	}
	return nil
}

// TestClusterIDIsNoOption: the storage tool takes a cluster ID that starts
// with '-' for an option and fails the start; one in 64 random IDs would.
func TestClusterIDIsNoOption(t *testing.T) {
	for range 5000 {
		if id := newClusterID(); strings.HasPrefix(id, "-") || len(id) != 22 {
			t.Fatalf("cluster ID %q", id)
		}
	}
}
