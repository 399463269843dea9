package runner_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replay/kafka-replay/runner/report"
)

// TestInvalidInputIsRefusedBeforeAnyCommit runs the runner on bad inputs.
// Each must exit 2, name the offending field, and commit nothing.
func TestInvalidInputIsRefusedBeforeAnyCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	c.RequireFake(t)
	bs := c.Bootstrap()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	malformed := write("malformed.json", `[{"topic":"orders","partition":0,`)
	negative := write("negative.json", `[{"topic":"orders","partition":0,"offset":-1}]`)
	unknownTopic := write("unknown-topic.json", `[{"topic":"nope","partition":0,"offset":1}]`)
	badPartition := write("bad-partition.json", `[{"topic":"orders","partition":17,"offset":1}]`)
	good := write("good.json", `[{"topic":"orders","partition":0,"offset":1}]`)
	nullOffset := write("null-offset.json", `[{"topic":"orders","partition":0,"offset":null}]`)
	noOffset := write("no-offset.json", `[{"topic":"orders","partition":0,"offset":1},{"topic":"orders","partition":1}]`)
	otherCase := write("other-case.json", `[{"topic":"orders","partition":0,"Offset":1}]`)
	dupKey := write("dup-key.json", `[{"topic":"orders","partition":0,"offset":1,"offset":50}]`)
	twoLists := write("two-lists.json", `[{"topic":"orders","partition":0,"offset":1}][{"topic":"orders","partition":1,"offset":1}]`)
	cfgDir := func(props map[string]string) string {
		d, err := os.MkdirTemp(dir, "cfg")
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range props {
			if err := os.WriteFile(filepath.Join(d, k), []byte(v), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}

	ok := []string{"--bootstrap-servers", bs, "--group", group, "--to", "earliest"}
	// with is ok plus extra; a flag in extra replaces ok's, since a flag
	// given twice is an error of its own.
	with := func(extra ...string) []string {
		var a []string
		for i := 0; i < len(ok); i += 2 {
			if !slices.Contains(extra, ok[i]) {
				a = append(a, ok[i], ok[i+1])
			}
		}
		return append(a, extra...)
	}
	cases := []struct {
		name  string
		args  []string
		env   map[string]string
		field string // must appear in the error
	}{
		{"no bootstrap servers", []string{"--group", group, "--to", "earliest"}, nil, "--bootstrap-servers"},
		{"bootstrap without port", []string{"--bootstrap-servers", "localhost", "--group", group, "--to", "earliest"}, nil, "--bootstrap-servers"},
		{"bootstrap port out of range", []string{"--bootstrap-servers", "localhost:99999", "--group", group, "--to", "earliest"}, nil, "--bootstrap-servers"},
		{"empty group", []string{"--bootstrap-servers", bs, "--group", "", "--to", "earliest"}, nil, "--group"},
		{"group with padding", []string{"--bootstrap-servers", bs, "--group", " billing", "--to", "earliest"}, nil, "--group"},
		{"no target", []string{"--bootstrap-servers", bs, "--group", group}, nil, "--to"},
		{"unknown target", with("--to", "yesterday"), nil, "--to"},
		{"time without a zone", with("--to", "time:2026-03-01T09:00:30"), nil, "time zone"},
		{"time that is not a time", with("--to", "time:tomorrow"), nil, "--to"},
		{"negative offset", with("--to", "offset:-5"), nil, "--to"},
		{"shift by zero", with("--to", "shift:0"), nil, "--to"},
		{"shift without sign", with("--to", "shift:10"), nil, "explicit sign"},
		{"negative ago", with("--to", "ago:-1h"), nil, "--to"},
		{"ago that is not a duration", with("--to", "ago:2days"), nil, "--to"},
		{"missing offsets file", with("--to", "file:"+filepath.Join(dir, "missing.json")), nil, "--to"},
		{"malformed offsets file", with("--to", "file:"+malformed), nil, "--to"},
		{"negative offset in file", with("--to", "file:"+negative), nil, "offset -1"},
		{"unknown topic in file", with("--to", "file:"+unknownTopic), nil, "--to file:"},
		{"partition out of range in file", with("--to", "file:"+badPartition), nil, "--to file:"},
		{"file and topics together", with("--to", "file:"+good, "--topic", topic), nil, "--topic"},
		{"unknown topic", with("--topic", "nope"), nil, "--topic"},
		{"partition out of range", with("--topic", "orders:9"), nil, "--topic"},
		{"negative partition", with("--topic", "orders:-1"), nil, "--topic"},
		{"illegal topic name", with("--topic", "bad topic!"), nil, "--topic"},
		{"conflicting target flags", with("--to-latest"), nil, "conflicting flags"},
		{"unknown output", with("--output", "yaml"), nil, "--output"},
		{"negative wait", with("--wait-for-empty", "-5s"), nil, "--wait-for-empty"},
		{"copy from itself", with("--to", "group:"+group), nil, "--to"},
		{"run ID with spaces", with("--run-id", "a b"), nil, "--run-id"},
		{"positional argument", with("extra"), nil, "unexpected argument"},
		{"unparsable env var", ok, map[string]string{"REPLAY_DRY_RUN": "maybe"}, "REPLAY_DRY_RUN"},
		{"unknown librdkafka property", with("--kafka-config-dir", cfgDir(map[string]string{"no.such.property": "1"})), nil, "--kafka-config-dir"},
		{"reserved property", with("--kafka-config-dir", cfgDir(map[string]string{"group.id": "x"})), nil, "--kafka-config-dir"},
		{"missing config dir", with("--kafka-config-dir", filepath.Join(dir, "nope")), nil, "--kafka-config-dir"},
		// A loosely read offsets file moves partitions nobody asked for (a
		// missing or null offset was 0, the log start).
		{"null offset in file", with("--to", "file:"+nullOffset), nil, "entry 0 (orders/0): offset is null"},
		{"missing offset in file", with("--to", "file:"+noOffset), nil, "entry 1 (orders/1): offset is missing"},
		{"key in another case in file", with("--to", "file:"+otherCase), nil, `unknown field "Offset"`},
		{"duplicate key in file", with("--to", "file:"+dupKey), nil, `"offset" is given twice`},
		{"text after the list in file", with("--to", "file:"+twoLists), nil, "after the list"},
		// Digit strings that would be January 1970, that is earliest.
		{"time in Unix seconds", with("--to", "time:1772355630"), nil, "looks like Unix seconds"},
		{"time as YYYYMMDD", with("--to", "time:20260301"), nil, "looks like a date"},
		{"two --to flags", append(with(), "--to", "latest"), nil, `--to "earliest", --to "latest"`},
		{"repeated flag", append(with("--run-id", "a"), "--run-id", "b"), nil, `--run-id "a", --run-id "b"`},
		{"bad --to-offset", []string{"--bootstrap-servers", bs, "--group", group, "--to-offset", "abc"}, nil, `--to-offset: offset: "abc"`},
		{"bad --shift-by", []string{"--bootstrap-servers", bs, "--group", group, "--shift-by", "ten"}, nil, `--shift-by: "ten"`},
		{"property that runs a program", with("--kafka-config-dir", cfgDir(map[string]string{"sasl.kerberos.kinit.cmd": "true"})), nil, "sasl.kerberos.kinit.cmd is a shell command"},
		{"property that loads code", with("--kafka-config-dir", cfgDir(map[string]string{"plugin.library.paths": "/x.so"})), nil, "plugin.library.paths loads shared libraries"},
		{"dot file in the config dir", with("--kafka-config-dir", cfgDir(map[string]string{".sasl.password": "x"})), nil, `".sasl.password"`},
	}
	if len(cases) < 20 {
		t.Fatalf("only %d bad inputs", len(cases))
	}
	before := committedOf(t, c, group)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			c.ResetRequests()
			o := runCtx(t, context.Background(), nil, tc.args...).mustCode(t, report.ExitInvalidInput)
			if o.result.Reason != report.ReasonInvalidInput {
				t.Errorf("reason %s", o.result.Reason)
			}
			if !strings.Contains(o.result.Error, tc.field) {
				t.Errorf("error %q does not name %q", o.result.Error, tc.field)
			}
			if !strings.Contains(o.stdout, tc.field) && !strings.Contains(o.stderr, tc.field) {
				t.Errorf("the user is not told about %q:\nstdout: %s\nstderr: %s", tc.field, o.stdout, o.stderr)
			}
			if n := c.Requests()["OffsetCommit"]; n != 0 {
				t.Errorf("%d OffsetCommit requests", n)
			}
		})
	}
	if after := committedOf(t, c, group); !sameCommitted(before, after) {
		t.Errorf("offsets changed: %v → %v", before, after)
	}
}

func sameCommitted[T comparable](a, b map[string]map[int32]T) bool {
	if len(a) != len(b) {
		return false
	}
	for t, ps := range a {
		if len(ps) != len(b[t]) {
			return false
		}
		for p, v := range ps {
			if b[t][p] != v {
				return false
			}
		}
	}
	return true
}

func TestKafkaErrorBeforeCommitChangesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	c.RequireFake(t)
	before := committedOf(t, c, group)
	f := c.Fake.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: topic, Err: kerr.UnknownServerError, Count: -1})
	defer f.Remove()
	c.ResetRequests()
	o := run(t, c, "--group", group, "--topic", topic, "--to", "earliest").mustCode(t, report.ExitKafkaError)
	if o.result.Reason != report.ReasonKafkaError || !strings.Contains(o.result.Error, "list log") {
		t.Errorf("result %s: %s", o.result.Reason, o.result.Error)
	}
	if n := c.Requests()["OffsetCommit"]; n != 0 {
		t.Errorf("%d commits after a failed read", n)
	}
	if after := committedOf(t, c, group); !sameCommitted(before, after) {
		t.Errorf("offsets changed")
	}
}

// TestTransientKafkaErrorsAreRetried: retriable errors, before and during
// the commit, are retried within --timeout and the run succeeds.
func TestTransientKafkaErrorsAreRetried(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	cases := []struct {
		name  string
		fault kfake.Fault
	}{
		// The coordinator is still loading for the first two attempts.
		{"describe while the coordinator loads", kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeGroups}, Group: group, Err: kerr.CoordinatorLoadInProgress, Count: 2}},
		// REQUEST_TIMED_OUT is answered after the broker applied the commit:
		// the runner cannot know, so it retries (safe: offsets are absolute)
		// and verifies by reading back.
		{"commit timed out after applying", kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetCommit}, Err: kerr.RequestTimedOut, Count: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := seeded(t)
			c.RequireFake(t)
			f := c.Fake.Fault(tc.fault)
			o := run(t, c, "--group", group, "--topic", topic, "--to", "offset:3").mustCode(t, report.ExitOK)
			if f.Hits() != tc.fault.Count {
				t.Errorf("fault hit %d times, want %d", f.Hits(), tc.fault.Count)
			}
			assertMatchesKafka(t, c, o.result)
		})
	}
}

func TestCommitFailureOnSomePartitionsIsReportedExactly(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	c.RequireFake(t)
	f := c.Fake.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetCommit}, Topic: topic, Partitions: []int32{1, 2}, Err: kerr.OffsetMetadataTooLarge, Count: -1})
	defer f.Remove()
	o := run(t, c, "--group", group, "--topic", topic, "--to", "offset:5", "--run-id", "partial").mustCode(t, report.ExitPartiallyApplied)
	if o.result.Reason != report.ReasonPartiallyApplied || o.result.Totals.Failed != 2 {
		t.Fatalf("result %s, totals %+v", o.result.Reason, o.result.Totals)
	}
	for _, name := range []string{"orders/1", "orders/2"} {
		if !strings.Contains(o.result.Error, name) {
			t.Errorf("error %q does not name %s", o.result.Error, name)
		}
	}
	got := offsetsOf(t, c, group)
	want := map[string]int64{"orders/0": 5, "orders/1": committed, "orders/2": committed, "orders/3": 5}
	if !equalMaps(got, want) {
		t.Errorf("committed %v, want %v", got, want)
	}
	for _, p := range o.result.Partitions {
		failed := p.Partition == 1 || p.Partition == 2
		if failed != (p.Error != "") {
			t.Errorf("%d: error %q", p.Partition, p.Error)
		}
	}
	// A retry of the same run finishes the job without touching 0 and 3.
	f.Remove()
	o = run(t, c, "--group", group, "--topic", topic, "--to", "offset:5", "--run-id", "partial").mustCode(t, report.ExitOK)
	if got := offsetsOf(t, c, group); !equalMaps(got, map[string]int64{"orders/0": 5, "orders/1": 5, "orders/2": 5, "orders/3": 5}) {
		t.Errorf("after retry %v", got)
	}
}

// TestCommitRefusedEntirelyChangesNothing: when the broker refuses every
// partition of the commit, the read-back proves nothing moved and the exit
// code says why.
func TestCommitRefusedEntirelyChangesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	cases := []struct {
		name   string
		err    *kerr.Error
		code   report.ExitCode
		reason report.Reason
		msg    string
	}{
		{"not authorized", kerr.GroupAuthorizationFailed, report.ExitKafkaError, report.ReasonKafkaError, "authoriz"},
		// What a broker answers when consumers joined after the describe.
		{"group became active", kerr.UnknownMemberID, report.ExitGroupActive, report.ReasonGroupActive, "became active"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := seeded(t)
			c.RequireFake(t)
			f := c.Fake.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetCommit}, Err: tc.err, Count: -1})
			defer f.Remove()
			o := run(t, c, "--group", group, "--topic", topic, "--to", "earliest").mustCode(t, tc.code)
			if o.result.Reason != tc.reason || !strings.Contains(strings.ToLower(o.result.Error), tc.msg) {
				t.Errorf("reason %s, error %q", o.result.Reason, o.result.Error)
			}
			assertUnchanged(t, c)
		})
	}
}

// TestSIGTERMBeforeCommitAbortsCleanly stops a real runner process while it
// is waiting on Kafka, as Kubernetes does when a Job is deleted.
func TestSIGTERMBeforeCommitAbortsCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	c.RequireFake(t)
	// Hold every ListOffsets request until the test ends.
	reached := make(chan struct{}, 16)
	release := make(chan struct{})
	defer close(release)
	c.Fake.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.Fake.KeepControl()
		select {
		case reached <- struct{}{}:
		default:
		}
		c.Fake.SleepControl(func() { <-release })
		return nil, nil, false
	})
	dir := t.TempDir()
	resultFile := filepath.Join(dir, "result.json")
	cmd := exec.Command(runnerBin, "--bootstrap-servers", c.Bootstrap(), "--group", group, "--topic", topic,
		"--to", "earliest", "--result-file", resultFile)
	cmd.Env = append(os.Environ(), "REPLAY_TERMINATION_MESSAGE_PATH="+filepath.Join(dir, "term"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reached:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("runner never reached ListOffsets:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("runner ignored SIGTERM:\n%s", stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != int(report.ExitInterrupted) {
		t.Fatalf("exit %v, want %d\n%s", err, report.ExitInterrupted, stderr.String())
	}
	res, _ := decodeFile(t, resultFile)
	if res == nil || res.Reason != report.ReasonInterrupted {
		t.Fatalf("result %+v", res)
	}
	assertUnchanged(t, c)
}
