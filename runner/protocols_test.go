package runner_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kafka-replay/kafka-replay/runner"
	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// TestBothGroupProtocols runs the group guard against real members of both
// kinds of group Kafka 4 has: classic groups and KIP-848 consumer groups
// (the default protocol of Kafka 4 clients), and groups that converted
// from one kind to the other. On kfake, which has no consumer groups, the
// classic half runs.
func TestBothGroupProtocols(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	protocols := []string{kafkatest.ProtocolClassic, kafkatest.ProtocolConsumer}
	if c.Apache == nil {
		protocols = protocols[:1]
	}
	other := map[string]string{kafkatest.ProtocolClassic: kafkatest.ProtocolConsumer, kafkatest.ProtocolConsumer: kafkatest.ProtocolClassic}
	for _, proto := range protocols {
		join := func(t *testing.T, group, clientID, instance string) *kafkatest.Member {
			t.Helper()
			m, err := c.JoinWith(testCtx(t), kafkatest.JoinOptions{Group: group, ClientID: clientID, Topics: []string{topic}, Protocol: proto, InstanceID: instance})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		t.Run(proto+"/a live group is refused", func(t *testing.T) {
			g := proto + "-live"
			commitAll(t, c, g, topic, partitions, committed)
			m := join(t, g, g+"-worker", "")
			defer m.Leave()
			refusedUnchanged(t, c, g, g+"-worker", proto)
		})
		t.Run(proto+"/--wait-for-empty applies once the member leaves", func(t *testing.T) {
			g := proto + "-wait"
			commitAll(t, c, g, topic, partitions, committed)
			m := join(t, g, g+"-worker", "")
			// The member leaves once the runner says it waits, not after
			// some time: the run must see the group active first.
			o := runWaiting(t, c, m.Leave, "--group", g, "--topic", topic, "--to", "earliest", "--wait-for-empty", "2m").mustCode(t, report.ExitOK)
			assertMatchesKafka(t, c, o.result)
			if got := offsetsOf(t, c, g); got[topic+"/0"] != 0 || len(got) != partitions {
				t.Errorf("offsets %v, want 0 on each partition\ncommitted %+v\n%s", got, committedOf(t, c, g), o.resultRaw)
			}
		})
		t.Run(proto+"/a group that does not exist yet", func(t *testing.T) {
			g := proto + "-new"
			if info := groupOf(t, c, g); info.Type != "" {
				t.Fatalf("group exists before the test: %+v", info)
			}
			o := run(t, c, "--group", g, "--topic", topic, "--to", "earliest").mustCode(t, report.ExitOK)
			assertMatchesKafka(t, c, o.result)
			// The group the runner made takes a member of this kind, which
			// makes it a group of this kind with the runner's offsets; a
			// second replay of that group applies once it is empty again.
			m := join(t, g, g+"-worker", "")
			if got := offsetsOf(t, c, g); got[topic+"/1"] != 0 {
				t.Errorf("the member's group lost the runner's offsets: %v\ncommitted %+v\n%s", got, committedOf(t, c, g), o.resultRaw)
			}
			refusedUnchanged(t, c, g, g+"-worker", proto)
			m.Leave()
			o = runWaiting(t, c, nil, "--group", g, "--topic", topic, "--to", "latest", "--allow-skip", "--wait-for-empty", "2m").mustCode(t, report.ExitOK)
			assertMatchesKafka(t, c, o.result)
		})
		t.Run(proto+"/a group converted from "+other[proto], func(t *testing.T) {
			if c.Apache == nil {
				t.Skip("kfake has one kind of group")
			}
			g := proto + "-converted"
			commitAll(t, c, g, topic, partitions, committed)
			before, err := c.JoinWith(testCtx(t), kafkatest.JoinOptions{Group: g, ClientID: g + "-old", Topics: []string{topic}, Protocol: other[proto]})
			if err != nil {
				t.Fatal(err)
			}
			before.Leave()
			m := join(t, g, g+"-worker", "")
			if info := groupOf(t, c, g); info.Type != proto {
				t.Fatalf("the group did not convert: %+v", info)
			}
			refusedUnchanged(t, c, g, g+"-worker", proto)
			o := runWaiting(t, c, m.Leave, "--group", g, "--topic", topic, "--to", "earliest", "--wait-for-empty", "2m").mustCode(t, report.ExitOK)
			assertMatchesKafka(t, c, o.result)
		})
		t.Run(proto+"/a static member that closed but whose session lasts", func(t *testing.T) {
			g := proto + "-static"
			commitAll(t, c, g, topic, partitions, committed)
			m := join(t, g, g+"-worker", g+"-instance")
			m.Leave() // a static member keeps its place until its session expires
			o := run(t, c, "--group", g, "--topic", topic, "--to", "earliest")
			// The session (6 s classic, 10 s consumer on the test broker)
			// may have run out on a slow machine; the guard must have
			// refused exactly while the member was still listed.
			if info := groupOf(t, c, g); info.HasMember(g + "-worker") {
				t.Logf("the closed static member is still listed: the run must have been refused")
				o.mustCode(t, report.ExitGroupActive)
				if !strings.Contains(o.result.Error, g+"-worker") {
					t.Errorf("error %q does not name the member", o.result.Error)
				}
			} else if t.Logf("the static member's session ran out before the check"); o.code != int(report.ExitOK) && o.code != int(report.ExitGroupActive) {
				t.Fatalf("exit %d: %s", o.code, o.result.Error)
			}
			o = runWaiting(t, c, nil, "--group", g, "--topic", topic, "--to", "offset:7", "--wait-for-empty", "2m").mustCode(t, report.ExitOK)
			assertMatchesKafka(t, c, o.result)
			if got := offsetsOf(t, c, g); got[topic+"/2"] != 7 {
				t.Errorf("offsets %v\ncommitted %+v\n%s\n%s", got, committedOf(t, c, g), o.resultRaw, o.stderr)
			}
		})
	}
}

// refusedUnchanged runs a replay of group, which has the live member
// clientID, and wants it refused (exit 3, naming the member) with the
// group's offsets as they were, and the result naming the group's kind
// (the refusal comes before planning, where the kind was once set).
func refusedUnchanged(t *testing.T, c *kafkatest.Cluster, group, clientID, kind string) {
	t.Helper()
	before := offsetsOf(t, c, group)
	o := run(t, c, "--group", group, "--topic", topic, "--to", "latest").mustCode(t, report.ExitGroupActive)
	if !strings.Contains(o.result.Error, clientID) {
		t.Errorf("error %q does not name the member %s", o.result.Error, clientID)
	}
	if !strings.EqualFold(o.result.GroupType, kind) || o.result.GroupType == "" {
		t.Errorf("a live %s group refused: groupType %q", kind, o.result.GroupType)
	}
	if got := offsetsOf(t, c, group); !equalMaps(got, before) {
		t.Errorf("offsets changed: %v → %v", before, got)
	}
}

func groupOf(t *testing.T, c *kafkatest.Cluster, group string) kafkatest.GroupInfo {
	t.Helper()
	g, err := c.Group(testCtx(t), group)
	if err != nil {
		t.Fatalf("describe %s: %v", group, err)
	}
	return g
}

// runWaiting runs the runner like run, and calls onWait (if any) once, when
// the runner reports that it waits for the group to become empty.
func runWaiting(t *testing.T, c *kafkatest.Cluster, onWait func(), args ...string) outcome {
	t.Helper()
	dir := t.TempDir()
	resultFile := filepath.Join(dir, "result.json")
	t.Setenv("REPLAY_TERMINATION_MESSAGE_PATH", filepath.Join(dir, "termination-log"))
	full := append([]string{"--result-file", resultFile, "--bootstrap-servers", c.Bootstrap(), "--timeout", "20s"}, args...)
	stderr := &watchWriter{want: "waiting for the group to become empty", onMatch: onWait}
	var stdout strings.Builder
	code := runner.Main(context.Background(), full, &stdout, stderr)
	o := outcome{code: code, stdout: stdout.String(), stderr: stderr.String()}
	o.result, o.resultRaw = decodeFile(t, resultFile)
	if o.result == nil {
		t.Fatalf("no result file written (exit %d)\nstderr:\n%s", code, o.stderr)
	}
	if onWait != nil && !stderr.matched {
		t.Errorf("the runner never said it waits for the group:\n%s", o.stderr)
	}
	return o
}

// watchWriter keeps what is written and calls onMatch once, in its own
// goroutine, the first time want appears.
type watchWriter struct {
	mu      sync.Mutex
	b       strings.Builder
	want    string
	onMatch func()
	matched bool
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if !w.matched && strings.Contains(w.b.String(), w.want) {
		w.matched = true
		if w.onMatch != nil {
			go w.onMatch()
		}
	}
	return len(p), nil
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
