// Package e2e proves the whole flow on a real single-node Kubernetes cluster
// (test/cluster): real kubelet, containerd, runc, CNI bridge, kube-proxy,
// our images built from the Dockerfiles, the Helm chart, and a kfake Kafka
// cluster that pods reach inside the cluster's network namespace.
//
// It needs root and the Debian packages of .ci/run; the first run builds the
// Kubernetes binaries (minutes). `go test -short` skips it; `make e2e` runs it.
package e2e

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kafka-replay/kafka-replay/test/cluster"
)

var (
	shared     *cluster.Cluster
	sharedErr  error
	sharedOnce sync.Once
)

// TestMain stops the shared cluster after every test, whatever happened.
func TestMain(m *testing.M) {
	flag.Parse()
	// The tests report through t.Logf; controller-runtime's own client logs add nothing.
	ctrllog.SetLogger(logr.Discard())
	code := m.Run()
	argo.stop() // the Argo workflow-controller process, if a test started it
	if pluginDir != "" {
		_ = os.RemoveAll(pluginDir) // kubectl-replay, built by the tests that run it
	}
	if flow != nil {
		flow.kafka.Close()
	}
	if apacheFlow != nil {
		apacheFlow.kafka.Close() // before the cluster: the broker runs in its namespace
	}
	if shared != nil {
		if err := shared.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop cluster: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// needCluster skips under -short or without root, and otherwise returns the
// cluster all tests of the package share (bring-up costs ~15 s; the first
// test to need it pays).
func needCluster(t *testing.T) *cluster.Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end on a real cluster: skipped under -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("end-to-end on a real cluster needs root")
	}
	sharedOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		t0 := time.Now()
		shared, sharedErr = cluster.Start(ctx, cluster.Options{Logf: log.Printf})
		if sharedErr == nil {
			log.Printf("e2e: cluster bring-up took %s", time.Since(t0).Round(10*time.Millisecond))
		}
	})
	if sharedErr != nil {
		t.Fatalf("start cluster: %v", sharedErr)
	}
	t.Cleanup(func() {
		if t.Failed() {
			shared.DumpLogs(30)
		}
	})
	return shared
}
