package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replay/kafka-replay/runner"
	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// groupsOutcome is a run over several groups.
type groupsOutcome struct {
	code         int
	stdout       string
	stderr       string
	result, term *report.MultiResult
}

// runGroups runs the runner in-process over several groups and decodes
// its result file and termination message, which must agree with the
// exit code.
func runGroups(t *testing.T, c *kafkatest.Cluster, args ...string) groupsOutcome {
	t.Helper()
	dir := t.TempDir()
	resultFile, termFile := filepath.Join(dir, "result.json"), filepath.Join(dir, "termination-log")
	t.Setenv("REPLAY_TERMINATION_MESSAGE_PATH", termFile)
	full := append([]string{"--result-file", resultFile, "--timeout", "20s", "--bootstrap-servers", c.Bootstrap()}, args...)
	var stdout, stderr bytes.Buffer
	code := runner.Main(context.Background(), full, &stdout, &stderr)
	o := groupsOutcome{code: code, stdout: stdout.String(), stderr: stderr.String()}
	for _, f := range []struct {
		path string
		into **report.MultiResult
	}{{resultFile, &o.result}, {termFile, &o.term}} {
		b, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatalf("exit %d, %v\nstderr:\n%s", code, err, o.stderr)
		}
		if *f.into, err = report.DecodeMulti(b); err != nil {
			t.Fatalf("%s: %v\n%s", f.path, err, b)
		}
		if (*f.into).ExitCode != report.ExitCode(code) {
			t.Fatalf("exit %d but %s says %d", code, f.path, (*f.into).ExitCode)
		}
	}
	if len(o.term.Groups) != len(o.result.Groups) {
		t.Errorf("termination message holds %d groups, result %d", len(o.term.Groups), len(o.result.Groups))
	}
	return o
}

// reasons lists each group's reason, then NotAttempted for the rest.
func (o groupsOutcome) reasons() []string {
	var out []string
	for _, g := range o.result.Groups {
		out = append(out, g.Group+":"+string(g.Reason))
	}
	for _, g := range o.result.NotAttempted {
		out = append(out, g+":NotAttempted")
	}
	return out
}

// seedGroups commits offset 80 on every partition of orders for each group.
func seedGroups(t *testing.T, c *kafkatest.Cluster, groups ...string) {
	t.Helper()
	for _, g := range groups {
		commitAll(t, c, g, topic, partitions, committed)
	}
}

// atEarliestBy checks that every partition of group is at 0 with run's
// metadata, or (unchanged) still at 80.
func assertGroupAt(t *testing.T, c *kafkatest.Cluster, g string, want int64, run string) {
	t.Helper()
	offs := committedOf(t, c, g)
	if len(offs[topic]) != partitions {
		t.Fatalf("group %s: %d partitions committed, want %d", g, len(offs[topic]), partitions)
	}
	for p, co := range offs[topic] {
		if co.Offset != want {
			t.Errorf("group %s %s/%d at %d, want %d", g, topic, p, co.Offset, want)
		}
		if has := strings.Contains(co.Metadata, "run="+run); has != (want != committed) {
			t.Errorf("group %s %s/%d metadata %q (run %s)", g, topic, p, co.Metadata, run)
		}
	}
}

// TestGroupsEachApplied: three groups, each its own run: each moved, with
// the run ID on its commits; a retry finds every group applied and moves
// nothing again.
func TestGroupsEachApplied(t *testing.T) {
	c := seeded(t)
	seedGroups(t, c, "team-a", "team-b")
	args := []string{"--group", "team-b", "--group", group, "--group", "team-a", "--to", "earliest", "--run-id", "incident-1"}
	o := runGroups(t, c, args...)
	if o.code != 0 || o.result.Reason != report.ReasonApplied {
		t.Fatalf("exit %d %s: %s\n%s", o.code, o.result.Reason, o.result.Error, o.stderr)
	}
	if want := []string{"team-b:Applied", group + ":Applied", "team-a:Applied"}; !slices.Equal(o.reasons(), want) {
		t.Fatalf("reasons %q, want %q (in the order given)", o.reasons(), want)
	}
	for _, g := range []string{"team-a", "team-b", group} {
		assertGroupAt(t, c, g, 0, "incident-1")
	}
	for _, g := range o.result.Groups {
		if g.Schema != report.Schema || g.RunID != "incident-1" || g.Totals.Moved != partitions || g.Totals.MessagesToReconsume != partitions*committed {
			t.Errorf("group %s: %+v", g.Group, g.Totals)
		}
	}
	if !strings.Contains(o.stdout, "GROUPS 3") || !strings.Contains(o.stdout, "team-a  Applied") {
		t.Errorf("table lacks the groups' lines:\n%s", o.stdout)
	}

	again := runGroups(t, c, args...)
	if again.code != 0 || again.result.Reason != report.ReasonAlreadyApplied {
		t.Fatalf("retry: exit %d %s: %s", again.code, again.result.Reason, again.result.Error)
	}
}

// TestGroupsBusyGroup: a group with a live member among idle ones. Without
// --continue-on-error the run stops at it: the groups before it moved, the
// groups after it are not read nor changed, and the exit code (5) says
// some groups changed. With it, the others all move. When the busy group
// is first, nothing changed: its own GroupActive (3) is the run's.
func TestGroupsBusyGroup(t *testing.T) {
	c := seeded(t)
	seedGroups(t, c, "busy", "after")
	m, err := c.Join(testCtx(t), "busy", "busy-worker", topic)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Leave()

	first := runGroups(t, c, "--group", "busy", "--group", group, "--to", "earliest", "--run-id", "r0")
	if first.code != int(report.ExitGroupActive) || !slices.Equal(first.reasons(), []string{"busy:GroupActive", group + ":NotAttempted"}) {
		t.Fatalf("busy first: exit %d %q: %s", first.code, first.reasons(), first.result.Error)
	}
	assertGroupAt(t, c, group, committed, "r0")

	stop := runGroups(t, c, "--group", group, "--group", "busy", "--group", "after", "--to", "earliest", "--run-id", "r1")
	if stop.code != int(report.ExitPartiallyApplied) || !slices.Equal(stop.reasons(), []string{group + ":Applied", "busy:GroupActive", "after:NotAttempted"}) {
		t.Fatalf("stop: exit %d %q: %s", stop.code, stop.reasons(), stop.result.Error)
	}
	for _, say := range []string{"at this run's commit: " + group, "busy (GroupActive", "not attempted, nothing of theirs read or changed: after"} {
		if !strings.Contains(stop.result.Error, say) {
			t.Errorf("error %q does not say %q", stop.result.Error, say)
		}
	}
	assertGroupAt(t, c, group, 0, "r1")
	assertGroupAt(t, c, "after", committed, "r1")

	cont := runGroups(t, c, "--group", "busy", "--group", "after", "--to", "earliest", "--run-id", "r2", "--continue-on-error")
	if cont.code != int(report.ExitPartiallyApplied) || !slices.Equal(cont.reasons(), []string{"busy:GroupActive", "after:Applied"}) {
		t.Fatalf("continue: exit %d %q: %s", cont.code, cont.reasons(), cont.result.Error)
	}
	assertGroupAt(t, c, "after", 0, "r2")
}

// TestGroupsGuardsPerGroup: --max-messages-to-reconsume is each group's
// limit: a group over it is refused (nothing of it changes) while one
// within it moves.
func TestGroupsGuardsPerGroup(t *testing.T) {
	c := seeded(t)
	commitAll(t, c, "near", topic, partitions, 95)
	o := runGroups(t, c, "--group", "near", "--group", group, "--to", "earliest", "--run-id", "g1", "--continue-on-error",
		"--max-messages-to-reconsume", "100")
	// near: 4 × 95 = 380 > 100; billing: 4 × 80 = 320 > 100. Both refused.
	if o.code != int(report.ExitRefused) || !slices.Equal(o.reasons(), []string{"near:LimitExceeded", group + ":LimitExceeded"}) {
		t.Fatalf("exit %d %q: %s", o.code, o.reasons(), o.result.Error)
	}
	assertGroupAt(t, c, group, committed, "g1")
	o = runGroups(t, c, "--group", "near", "--group", group, "--to", "shift:-5", "--run-id", "g2", "--max-messages-to-reconsume", "20")
	if o.code != 0 {
		t.Fatalf("within the limit per group (4 × 5 = 20 each): exit %d %s", o.code, o.result.Error)
	}
}

// TestAllGroups: --all-groups moves every consumer group the cluster
// lists, in name order, without a group: target's source; a cluster that
// lists none is refused naming the setting.
func TestAllGroups(t *testing.T) {
	c := seeded(t)
	seedGroups(t, c, "zeta", "alpha")
	o := runGroups(t, c, "--all-groups", "--to", "group:"+group, "--run-id", "all-1")
	if o.code != 0 || !slices.Equal(o.result.Selected, []string{"alpha", "zeta"}) {
		t.Fatalf("exit %d, selected %q: %s\n%s", o.code, o.result.Selected, o.result.Error, o.stderr)
	}

	empty := kafkatest.New(t, 1)
	var stdout, stderr bytes.Buffer
	code := runner.Main(context.Background(), []string{"--bootstrap-servers", empty.Bootstrap(), "--all-groups", "--to", "earliest", "--output", "json"}, &stdout, &stderr)
	r, err := report.DecodeMulti(stdout.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if code != int(report.ExitInvalidInput) || !strings.Contains(r.Error, "--all-groups: the cluster lists no consumer group") || len(r.Groups) != 0 {
		t.Fatalf("exit %d: %+v", code, r)
	}
}

// TestGroupsRequestsPerGroup: Kafka requests grow by a constant per group,
// and not with the partitions: 4 groups over a topic of 100 partitions cost
// about what 4 groups over 4 partitions do (a quarter more at most, for
// the noise of metadata refreshes), while each group adds its own.
func TestGroupsRequestsPerGroup(t *testing.T) {
	c := seeded(t)
	c.RequireFake(t)
	const wide = 100
	if err := c.Seed(testCtx(t), "wide", wide, 1, base, 0); err != nil {
		t.Fatal(err)
	}
	count := func(topicName string, parts int32, run string, groups ...string) int {
		var args []string
		for _, g := range groups {
			off := kafkatest.Offsets{topicName: {}}
			for p := range parts {
				off[topicName][p] = 1
			}
			if err := c.Commit(testCtx(t), g, off, "consumer"); err != nil {
				t.Fatal(err)
			}
			args = append(args, "--group", g)
		}
		c.ResetRequests()
		o := runGroups(t, c, append(args, "--to", "earliest", "--topic", topicName, "--run-id", run)...)
		if o.code != 0 {
			t.Fatalf("exit %d: %s", o.code, o.result.Error)
		}
		return c.Requests().Total()
	}
	narrow2 := count(topic, partitions, "n2", "n-a", "n-b")
	narrow4 := count(topic, partitions, "n4", "n-c", "n-d", "n-e", "n-f")
	wide4 := count("wide", wide, "w4", "w-c", "w-d", "w-e", "w-f")
	t.Logf("requests: 2 groups × %d partitions %d, 4 groups %d, 4 groups × %d partitions %d", partitions, narrow2, narrow4, wide, wide4)
	if narrow4 <= narrow2 {
		t.Errorf("4 groups cost %d requests, 2 groups %d: the count cannot tell groups apart", narrow4, narrow2)
	}
	if 4*wide4 > 5*narrow4 {
		t.Errorf("%d partitions per group cost %d requests, %d partitions %d: requests grow with the partitions", wide, wide4, partitions, narrow4)
	}
}

// TestGroupsInvalidInput: an invalid run over several groups writes the
// result over groups (exit 2, naming the setting) and reads nothing.
func TestGroupsInvalidInput(t *testing.T) {
	c := seeded(t)
	o := runGroups(t, c, "--group", group, "--group", group, "--to", "earliest")
	if o.code != int(report.ExitInvalidInput) || len(o.result.Groups) != 0 || !strings.Contains(o.result.Error, `--group: group "billing" is given more than once`) {
		t.Fatalf("exit %d: %+v", o.code, o.result)
	}
	assertUnchanged(t, c)
}

// BenchmarkReplayGroups is one run over many groups (issue 30's scale
// figure: 200 groups × 50 partitions) as the real binary, on kfake: per
// size, the medians of wall time, CPU and peak RSS, the Kafka requests per
// run and per group, and the result file's size. Every group has
// committed the 50 partitions of one topic at its log end and moves back
// to a time 5 records in.
func BenchmarkReplayGroups(b *testing.B) {
	b.Setenv("REPLAY_TERMINATION_MESSAGE_PATH", "")
	for _, groups := range []int{10, 200} {
		b.Run(fmt.Sprintf("groups=%d/partitions=50", groups), func(b *testing.B) {
			c := kafkatest.New(b, 3)
			c.RequireFake(b)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			const parts, perPart = 50, 10
			if err := c.Seed(ctx, "wide", parts, perPart, base, time.Second); err != nil {
				b.Fatal(err)
			}
			offs := kafkatest.Offsets{"wide": {}}
			for p := range int32(parts) {
				offs["wide"][p] = perPart
			}
			var names []string
			for i := range groups {
				g := fmt.Sprintf("team-%03d", i)
				if err := c.Commit(ctx, g, offs, ""); err != nil {
					b.Fatal(err)
				}
				names = append(names, "--group", g)
			}
			resultFile := filepath.Join(b.TempDir(), "result.json")
			load := loadAverage(b)
			var runs []processFigures
			requests, resultBytes := 0, 0
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				c.ResetRequests()
				args := append([]string{"--bootstrap-servers", c.Bootstrap(), "--run-id", fmt.Sprintf("bench-%d", i), "--result-file", resultFile,
					"--to", "time:" + base.Add(5*time.Second).Format(time.RFC3339), "--output", "json"}, names...)
				runs = append(runs, benchArgs(b, args))
				requests += c.Requests().Total()
				raw, err := os.ReadFile(resultFile)
				if err != nil {
					b.Fatal(err)
				}
				r, err := report.DecodeMulti(raw)
				if err != nil || r.ExitCode != report.ExitOK || len(r.Groups) != groups {
					b.Fatalf("run %d: %v %+v", i, err, r)
				}
				resultBytes = len(raw)
			}
			b.StopTimer()
			b.ReportMetric(load, "loadavg-1m")
			med := medianFigures(runs)
			b.ReportMetric(med.wallMs, "process-wall-ms")
			b.ReportMetric(med.wallMs/float64(groups), "wall-ms/group")
			b.ReportMetric(med.cpuMs, "process-cpu-ms")
			b.ReportMetric(med.rssMiB, "peak-RSS-MiB")
			b.ReportMetric(float64(requests)/float64(len(runs)), "requests/op")
			b.ReportMetric(float64(requests)/float64(len(runs)*groups), "requests/group")
			b.ReportMetric(float64(resultBytes)/1024, "result-KiB")
		})
	}
}

// TestGroupsCrashMidRun: a real runner process that dies during the
// second group's commit (SIGABRT: nothing of Go runs after it) leaves the
// result it wrote before that commit: the first group named at this run's
// commit, the second OutcomeUnknown, the third not attempted, exit 5. A panic there instead is recovered into the second group's
// InternalError, and the run stops (exit 1). Either way a retry with the
// same run ID finds the two groups at its commit and moves the third.
func TestGroupsCrashMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	bin := crashRunner(t)
	for _, mode := range []string{"fatal", "panic"} {
		t.Run(mode, func(t *testing.T) {
			c := seeded(t)
			seedGroups(t, c, "g-1", "g-2", "g-3")
			dir := t.TempDir()
			resultFile := filepath.Join(dir, "result.json")
			args := []string{"--group", "g-1", "--group", "g-2", "--group", "g-3", "--to", "earliest", "--run-id", "crash-" + mode}
			cmd := exec.Command(bin, append([]string{"--result-file", resultFile, "--bootstrap-servers", c.Bootstrap()}, args...)...)
			cmd.Env = append(os.Environ(), "REPLAY_TERMINATION_MESSAGE_PATH=", "REPLAY_TEST_CRASH_AT=committed", "REPLAY_TEST_CRASH_SKIP=1", "REPLAY_TEST_CRASH_MODE="+mode)
			out, _ := cmd.CombinedOutput()
			raw, err := os.ReadFile(resultFile)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			r, err := report.DecodeMulti(raw)
			if err != nil {
				t.Fatalf("%v\n%s", err, raw)
			}
			want := struct {
				code   report.ExitCode
				second report.Reason
			}{report.ExitPartiallyApplied, report.ReasonOutcomeUnknown}
			if mode == "panic" {
				want.code, want.second = report.ExitInternal, report.ReasonInternalError
				if cmd.ProcessState.ExitCode() != int(report.ExitInternal) {
					t.Errorf("exit %d, want 1", cmd.ProcessState.ExitCode())
				}
			} else if cmd.ProcessState.ExitCode() == 0 {
				t.Errorf("the process survived a fatal error:\n%s", out)
			}
			if r.ExitCode != want.code || !slices.Equal(r.NotAttempted, []string{"g-3"}) || !strings.Contains(r.Error, "at this run's commit: g-1") {
				t.Fatalf("result: exit %d, not attempted %q: %s", r.ExitCode, r.NotAttempted, r.Error)
			}
			second := r.Groups[len(r.Groups)-1]
			if second.Group != "g-2" || second.Reason != want.second || len(second.Partitions) != partitions || !strings.Contains(second.Partitions[0].Error, "outcome unknown") {
				t.Errorf("g-2: %s %+v", second.Reason, second.Partitions)
			}
			// Killed, the result is the one written before g-2's commit,
			// which leaves out the groups before that ended well; the
			// panic's is the final one, whole.
			if first := r.Groups[0]; mode == "fatal" && (len(r.Groups) != 1 || !r.Truncated) ||
				mode == "panic" && (len(r.Groups) != 2 || first.Reason != report.ReasonApplied || len(first.Partitions) != partitions) {
				t.Errorf("groups: %d, truncated %v, first %s", len(r.Groups), r.Truncated, first.Group)
			}
			assertGroupAt(t, c, "g-3", committed, "crash-"+mode)

			again := runGroups(t, c, args...)
			if again.code != 0 || !slices.Equal(again.reasons(), []string{"g-1:AlreadyApplied", "g-2:AlreadyApplied", "g-3:Applied"}) {
				t.Fatalf("retry: exit %d %q: %s", again.code, again.reasons(), again.result.Error)
			}
		})
	}
}

// TestGroupsSignalBetweenGroups: a signal (ctx cancelled) while the second
// group is being read stops the run there: the first group stays applied,
// the second is Interrupted with nothing of it changed, the third is not
// attempted, and the run's exit code (5) says some groups changed.
func TestGroupsSignalBetweenGroups(t *testing.T) {
	c := seeded(t)
	c.RequireFake(t)
	seedGroups(t, c, "s-1", "s-2", "s-3")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.Fake.ControlKey(int16(kmsg.OffsetFetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.Fake.KeepControl()
		r := req.(*kmsg.OffsetFetchRequest)
		for _, g := range r.Groups {
			if g.Group == "s-2" {
				cancel() // as SIGTERM does in cmd/runner
			}
		}
		return nil, nil, false
	})
	dir := t.TempDir()
	resultFile := filepath.Join(dir, "result.json")
	t.Setenv("REPLAY_TERMINATION_MESSAGE_PATH", "")
	var stdout, stderr bytes.Buffer
	code := runner.Main(ctx, []string{"--result-file", resultFile, "--bootstrap-servers", c.Bootstrap(), "--group", "s-1", "--group", "s-2", "--group", "s-3",
		"--to", "earliest", "--run-id", "sig", "--continue-on-error"}, &stdout, &stderr)
	raw, err := os.ReadFile(resultFile)
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.DecodeMulti(raw)
	if err != nil {
		t.Fatal(err)
	}
	o := groupsOutcome{code: code, result: r}
	if code != int(report.ExitPartiallyApplied) || !slices.Equal(o.reasons(), []string{"s-1:Applied", "s-2:Interrupted", "s-3:NotAttempted"}) {
		t.Fatalf("exit %d %q: %s\n%s", code, o.reasons(), r.Error, stderr.String())
	}
	assertGroupAt(t, c, "s-1", 0, "sig")
	assertGroupAt(t, c, "s-2", committed, "sig")
	assertGroupAt(t, c, "s-3", committed, "sig")
}
