package main

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/launcher"
)

func TestParseDefaults(t *testing.T) {
	c, err := parse(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if !c.LeaderElect || c.MetricsBindAddress != ":8080" || c.HealthProbeBindAddress != ":8081" || c.Workers != 8 {
		t.Fatalf("settings = %+v", c.settings)
	}
	if c.opts.HistoryLimit != 10 || c.opts.BackoffLimit != 2 || c.opts.ActiveDeadline != 10*time.Minute || c.opts.StartTimeout != 5*time.Minute || c.opts.RunnerImage == "" {
		t.Fatalf("options = %+v", c.opts)
	}
}

func TestParseFlagsWinOverEnvironment(t *testing.T) {
	t.Setenv("LAUNCHER_HISTORY_LIMIT", "3")
	t.Setenv("LAUNCHER_RUNNER_IMAGE", "from-env:1")
	t.Setenv("LAUNCHER_BACKOFF_LIMIT", "5")
	t.Setenv("LAUNCHER_START_TIMEOUT", "1m")
	c, err := parse([]string{"--history-limit=7", "--leader-elect=false", "--start-timeout=90s"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.opts.HistoryLimit != 7 || c.opts.StartTimeout != 90*time.Second || c.opts.RunnerImage != "from-env:1" || c.opts.BackoffLimit != 5 || c.LeaderElect {
		t.Fatalf("flags did not win over the environment: %+v / %+v", c.settings, c.opts)
	}
}

func TestParseRefusesBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--history-limit=-1"},
		{"--workers=0"},
		{"--runner-image-pull-policy=Sometimes"},
		{"--active-deadline=10ms"},
		{"--start-timeout=0s"},
		{"--kube-api-qps=0"},
		{"--runner-memory-limit=lots"},
		{"--runner-cpu-request=-1"},
		{"stray"},
	} {
		if _, err := parse(args, &bytes.Buffer{}); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	t.Setenv("LAUNCHER_WORKERS", "many")
	if _, err := parse(nil, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "WORKERS") {
		t.Errorf("bad environment variable: %v", err)
	}
}

func TestHelpNamesEveryEnvironmentVariable(t *testing.T) {
	var out bytes.Buffer
	if _, err := parse([]string{"--help"}, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err = %v", err)
	}
	for _, env := range []string{"LAUNCHER_RUNNER_IMAGE", "LAUNCHER_HISTORY_LIMIT", "LAUNCHER_LEADER_ELECT", "LAUNCHER_METRICS_BIND_ADDRESS", "LAUNCHER_KUBE_API_QPS", "LAUNCHER_WORKERS"} {
		if !strings.Contains(out.String(), env) {
			t.Errorf("--help does not mention %s", env)
		}
	}
}

func TestParseRunnerResources(t *testing.T) {
	c, err := parse([]string{"--runner-memory-limit=512Mi", "--runner-cpu-request=100m"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	r := c.opts.Resources
	if r.Limits.Memory().String() != "512Mi" || r.Requests.Cpu().String() != "100m" {
		t.Fatalf("resources = %v", r)
	}
	// Settings not given keep the defaults.
	def := launcher.DefaultOptions().Resources
	if !r.Requests.Memory().Equal(*def.Requests.Memory()) || !r.Limits.Cpu().Equal(*def.Limits.Cpu()) {
		t.Fatalf("defaults lost: %v", r)
	}
}

func TestParseAllowedRunnerImages(t *testing.T) {
	c, err := parse([]string{"--runner-image=reg/runner:1", "--allowed-runner-images= mirror/ , reg/runner:"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.opts.AllowedRunnerImages; len(got) != 2 || got[0] != "mirror/" || got[1] != "reg/runner:" {
		t.Fatalf("allowed = %q", got)
	}
	if _, err := c.opts.RunnerImageFor("mirror/runner:2"); err != nil {
		t.Errorf("mirror/runner:2 refused: %v", err)
	}
	if _, err := c.opts.RunnerImageFor("mirror-evil/runner:2"); err == nil {
		t.Error("mirror-evil/runner:2 admitted by mirror/")
	}
	if _, err := parse([]string{"--allowed-runner-images=reg/runner:1.0"}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "--allowed-runner-images") {
		t.Errorf("a tagged entry: %v", err)
	}
}

func TestParseSecuritySettings(t *testing.T) {
	c, err := parse(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if !c.MetricsSecure || c.opts.AllowUnboundSecrets || c.opts.RequireRunnerImageDigest || len(c.opts.WatchNamespaces) != 0 {
		t.Errorf("defaults: metrics secure %v, unbound %v, digest %v, namespaces %q", c.MetricsSecure, c.opts.AllowUnboundSecrets, c.opts.RequireRunnerImageDigest, c.opts.WatchNamespaces)
	}
	c, err = parse([]string{"--metrics-secure=false", "--allow-unbound-secrets", "--require-runner-image-digest", "--watch-namespaces=team-a, team-b"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.MetricsSecure || !c.opts.AllowUnboundSecrets || !c.opts.RequireRunnerImageDigest || strings.Join(c.opts.WatchNamespaces, ",") != "team-a,team-b" {
		t.Errorf("set: metrics secure %v, unbound %v, digest %v, namespaces %q", c.MetricsSecure, c.opts.AllowUnboundSecrets, c.opts.RequireRunnerImageDigest, c.opts.WatchNamespaces)
	}
}

func TestGCPercent(t *testing.T) {
	if p, ours := gcPercent(func(string) string { return "" }); !ours || p != 25 {
		t.Errorf("without GOGC: %d, %v; want 25, true", p, ours)
	}
	if _, ours := gcPercent(func(k string) string { return map[string]string{"GOGC": "200"}[k] }); ours {
		t.Error("GOGC set, and the launcher sets its own")
	}
}
