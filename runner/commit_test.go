package runner_test

// Tests of the commit path: what the result says after a commit attempt,
// at most once per run ID, and the totals. Each holds one item of issue 8.

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/kafka-replay/kafka-replay/runner/report"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// TestAppliedCommitAnsweredWithAnErrorIsApplied: the first OffsetCommit is
// applied but answered REQUEST_TIMED_OUT; the retry is refused with
// UNKNOWN_MEMBER_ID, as when a member joins during the backoff. The
// read-back shows every partition moved, so the run succeeded.
func TestAppliedCommitAnsweredWithAnErrorIsApplied(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	c.RequireFake(t)
	f := c.Fake.Fault(
		kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetCommit}, Err: kerr.RequestTimedOut, Count: 1}, // applied, then answered
		kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetCommit}, Err: kerr.UnknownMemberID, Count: -1},
	)
	defer f.Remove()
	o := run(t, c, "--group", group, "--topic", topic, "--to", "offset:3", "--run-id", "item-1").mustCode(t, report.ExitOK)
	if f.Hits() < 2 {
		t.Fatalf("faults hit %d times: the retry was never refused", f.Hits())
	}
	if o.result.Reason != report.ReasonApplied || o.result.Totals.Applied != partitions {
		t.Errorf("reason %s, totals %+v", o.result.Reason, o.result.Totals)
	}
	if !strings.Contains(strings.Join(o.result.Warnings, " "), "read-back shows that it took") {
		t.Errorf("warnings %q do not say the commit took despite its answer", o.result.Warnings)
	}
	if strings.Contains(o.stderr, "nothing was changed") {
		t.Errorf("the log says nothing was changed:\n%s", o.stderr)
	}
	assertMatchesKafka(t, c, o.result)
}

// TestSecondWriterDoesNotMakeACommitLookRefused: another client commits
// between this run's commit and its read-back. The offsets moved, so the
// run must not exit 4 ("nothing changed"); it exits 5 and names each
// partition as committed, then overwritten.
func TestSecondWriterDoesNotMakeACommitLookRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	c.RequireFake(t)
	// Once the runner's commit has been served, its next OffsetFetch (the
	// read-back) waits while another client commits every partition.
	var committedByRunner atomic.Bool
	c.Fake.ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.Fake.KeepControl()
		for _, tp := range req.(*kmsg.OffsetCommitRequest).Topics {
			for _, p := range tp.Partitions {
				if p.Metadata != nil && strings.HasPrefix(*p.Metadata, "kafka-replay") {
					committedByRunner.Store(true)
				}
			}
		}
		return nil, nil, false
	})
	secondWriter := make(chan error, 1)
	var once sync.Once
	c.Fake.ControlKey(int16(kmsg.OffsetFetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.Fake.KeepControl()
		if !committedByRunner.Load() {
			return nil, nil, false
		}
		once.Do(func() {
			c.Fake.DropControl()
			c.Fake.SleepControl(func() {
				secondWriter <- c.Commit(context.Background(), group, kafkatest.Offsets{topic: {0: 95, 1: 95, 2: 95, 3: 95}}, "other-tool")
			})
		})
		return nil, nil, false
	})
	o := run(t, c, "--group", group, "--topic", topic, "--to", "offset:5", "--run-id", "item-2").mustCode(t, report.ExitPartiallyApplied)
	if err := <-secondWriter; err != nil {
		t.Fatalf("second writer: %v", err)
	}
	for _, p := range o.result.Partitions {
		if p.Applied || !strings.Contains(p.Error, "committed, then overwritten by another client") || !strings.Contains(p.Error, "offset 95") {
			t.Errorf("%s/%d: applied %v, error %q", p.Topic, p.Partition, p.Applied, p.Error)
		}
	}
	if o.result.Totals.Failed != partitions || o.result.Totals.Applied != 0 {
		t.Errorf("totals %+v", o.result.Totals)
	}
	if strings.Contains(o.stderr, "nothing was changed") {
		t.Errorf("the log says nothing was changed:\n%s", o.stderr)
	}
	for k, v := range offsetsOf(t, c, group) {
		if v != 95 {
			t.Errorf("%s at %d, want the second writer's 95", k, v)
		}
	}
}

// TestRunIDReusedWithAnotherPlanIsRefused: a run ID names one replay. Met
// again with another target or scope, it is refused, and nothing moves.
func TestRunIDReusedWithAnotherPlanIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	c.RequireFake(t)
	run(t, c, "--group", group, "--topic", topic, "--to", "earliest", "--run-id", "X").mustCode(t, report.ExitOK)
	for _, args := range [][]string{
		{"--topic", topic, "--to", "latest"},
		{"--topic", topic + ":0,1", "--to", "earliest"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			c.ResetRequests()
			o := run(t, c, append([]string{"--group", group, "--run-id", "X"}, args...)...).mustCode(t, report.ExitInvalidInput)
			if o.result.AlreadyApplied || !strings.Contains(o.result.Error, "--run-id") || !strings.Contains(o.result.Error, "already used with another target or scope") {
				t.Errorf("already applied %v, error %q", o.result.AlreadyApplied, o.result.Error)
			}
			if n := c.Requests()["OffsetCommit"]; n != 0 {
				t.Errorf("%d OffsetCommit requests", n)
			}
			for k, v := range offsetsOf(t, c, group) {
				if v != 0 {
					t.Errorf("%s moved to %d", k, v)
				}
			}
		})
	}
	// The same plan again is what a retry is: already applied.
	o := run(t, c, "--group", group, "--topic", topic, "--to", "earliest", "--run-id", "X").mustCode(t, report.ExitOK)
	if !o.result.AlreadyApplied {
		t.Errorf("the same run again: %+v", o.result)
	}
}

// TestRetryReusesTheResolvedInstant: after a partial first attempt of an
// ago: target, the retry positions the remaining partitions at the instant
// the first attempt resolved, not at one resolved again later.
func TestRetryReusesTheResolvedInstant(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := kafkatest.New(t, 3)
	c.RequireFake(t)
	// A record every millisecond up to now: any later instant is another offset.
	now := time.Now()
	if err := c.Seed(testCtx(t), topic, partitions, 2000, now.Add(-2*time.Second), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	commitAll(t, c, group, topic, partitions, 2000)
	args := []string{"--group", group, "--topic", topic, "--to", "ago:1s", "--run-id", "item-4"}
	f := c.Fake.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetCommit}, Topic: topic, Partitions: []int32{2, 3}, Err: kerr.OffsetMetadataTooLarge, Count: -1})
	first := run(t, c, args...).mustCode(t, report.ExitPartiallyApplied)
	f.Remove()
	retry := run(t, c, args...).mustCode(t, report.ExitOK)
	if first.result.Target.Time == nil || retry.result.Target.Time == nil || !retry.result.Target.Time.Equal(*first.result.Target.Time) {
		t.Fatalf("the retry resolved %v, the first attempt %v", retry.result.Target.Time, first.result.Target.Time)
	}
	if retry.result.Target.Resolved != first.result.Target.Resolved {
		t.Errorf("resolved %q, first attempt %q", retry.result.Target.Resolved, first.result.Target.Resolved)
	}
	if !strings.Contains(strings.Join(retry.result.Warnings, " "), "resolved to") {
		t.Errorf("the retry does not say it reused the instant: %q", retry.result.Warnings)
	}
	// Every partition holds the same records, so one instant is one offset.
	got := offsetsOf(t, c, group)
	want := first.result.Partitions[0].NewOffset
	for k, v := range got {
		if v != want {
			t.Errorf("%s at %d, want %d like the partitions the first attempt committed", k, v, want)
		}
	}
	assertMatchesKafka(t, c, retry.result)
}

// TestTotalsCountWhatMoved: the totals count what moved, a dry run counts
// its plan and says so, and a retry that finds its own commit reports the
// original previous offsets and deltas.
func TestTotalsCountWhatMoved(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	c.RequireFake(t)
	const to, delta = 5, committed - 5
	args := []string{"--group", group, "--topic", topic, "--to", fmt.Sprintf("offset:%d", to), "--run-id", "item-10"}

	dry := run(t, c, append(args, "--dry-run")...).mustCode(t, report.ExitOK)
	if tt := dry.result.Totals; !tt.Planned || tt.MessagesToReconsume != partitions*delta || tt.Applied != 0 {
		t.Errorf("dry run totals %+v, want the plan's, marked planned", tt)
	}

	refused := c.Fake.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetCommit}, Err: kerr.GroupAuthorizationFailed, Count: -1})
	o := run(t, c, args...).mustCode(t, report.ExitKafkaError)
	refused.Remove()
	if tt := o.result.Totals; tt.MessagesToReconsume != 0 || tt.Applied != 0 || tt.Planned {
		t.Errorf("refused commit totals %+v, want nothing moved", tt)
	}

	partial := c.Fake.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetCommit}, Topic: topic, Partitions: []int32{1, 2}, Err: kerr.OffsetMetadataTooLarge, Count: -1})
	o = run(t, c, args...).mustCode(t, report.ExitPartiallyApplied)
	partial.Remove()
	if tt := o.result.Totals; tt.MessagesToReconsume != 2*delta || tt.Applied != 2 || tt.Failed != 2 {
		t.Errorf("partial commit totals %+v, want the 2 partitions that moved", tt)
	}

	for _, want := range []report.Reason{report.ReasonApplied, report.ReasonAlreadyApplied} {
		o = run(t, c, args...).mustCode(t, report.ExitOK)
		if o.result.Reason != want {
			t.Errorf("reason %s, want %s", o.result.Reason, want)
		}
		if tt := o.result.Totals; tt.MessagesToReconsume != partitions*delta || tt.Applied != partitions {
			t.Errorf("%s: totals %+v, want every partition's original delta", want, tt)
		}
		for _, p := range o.result.Partitions {
			if !p.Applied || p.PreviousOffset == nil || *p.PreviousOffset != committed || p.Delta == nil || *p.Delta != delta {
				t.Errorf("%s: %s/%d: applied %v previous %v delta %v, want %d and %d", want, p.Topic, p.Partition, p.Applied, p.PreviousOffset, p.Delta, committed, delta)
			}
		}
	}
	assertMatchesKafka(t, c, o.result)
}

// TestCopyFromAGroupThatDoesNotExist: a misspelt source group copies
// nothing, which is an error, not a success with no partitions.
func TestCopyFromAGroupThatDoesNotExist(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	for _, scope := range [][]string{{"--topic", topic}, nil} {
		o := run(t, c, append([]string{"--group", group, "--to", "group:archvie"}, scope...)...).mustCode(t, report.ExitInvalidInput)
		if !strings.Contains(o.result.Error, `source group "archvie" has no committed offsets`) {
			t.Errorf("scope %v: error %q", scope, o.result.Error)
		}
		if !strings.Contains(o.resultRaw, `"partitions": []`) {
			t.Errorf("scope %v: partitions not an empty list:\n%s", scope, o.resultRaw)
		}
	}
	for k, v := range offsetsOf(t, c, group) {
		if v != committed {
			t.Errorf("%s moved to %d", k, v)
		}
	}
}

// TestDryRunOfAnActiveGroupPlans: planning is read-only, so a dry run of an
// active group succeeds and says that applying needs the group empty.
func TestDryRunOfAnActiveGroupPlans(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	m, err := c.Join(testCtx(t), group, "billing-worker-3", topic)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Leave()
	c.ResetRequests()
	o := run(t, c, "--group", group, "--topic", topic, "--to", "earliest", "--dry-run").mustCode(t, report.ExitOK)
	if o.result.Reason != report.ReasonDryRun || len(o.result.Partitions) != partitions || o.result.Totals.MessagesToReconsume != partitions*committed {
		t.Errorf("reason %s, %d partitions, totals %+v", o.result.Reason, len(o.result.Partitions), o.result.Totals)
	}
	w := strings.Join(o.result.Warnings, " ")
	for _, want := range []string{"group is active", "billing-worker-3", "applying this plan needs it empty"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings %q lack %q", o.result.Warnings, want)
		}
	}
	if c.Fake != nil && c.Requests()["OffsetCommit"] != 0 {
		t.Errorf("a dry run committed: %s", c.Requests())
	}
}

// TestSmallerTargetCases: a sub-millisecond time rounds up, an overflowing
// shift is a clamp that says so, and a committed offset outside the log is
// noted.
func TestSmallerTargetCases(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	t.Run("time with sub-millisecond precision rounds up", func(t *testing.T) {
		c := seeded(t)
		// Record 30 is stamped base+30s: a microsecond later, it is before the target.
		to := "time:" + base.Add(30*time.Second+time.Microsecond).Format(time.RFC3339Nano)
		o := run(t, c, "--group", group, "--topic", topic, "--to", to).mustCode(t, report.ExitOK)
		for _, p := range o.result.Partitions {
			if p.NewOffset != 31 {
				t.Errorf("%s/%d at %d, want 31", p.Topic, p.Partition, p.NewOffset)
			}
		}
	})
	t.Run("shift overflow is a clamp", func(t *testing.T) {
		c := seeded(t)
		o := run(t, c, "--group", group, "--topic", topic, "--to", fmt.Sprintf("shift:+%d", int64(math.MaxInt64)), "--allow-skip").mustCode(t, report.ExitOK)
		for _, p := range o.result.Partitions {
			if p.NewOffset != records || !p.Clamped || !strings.Contains(p.Note, "overflows; clamped to log end") {
				t.Errorf("%s/%d: %+v", p.Topic, p.Partition, p)
			}
		}
		if o.result.Totals.Clamped != partitions || !strings.Contains(strings.Join(o.result.Warnings, " "), "clamped") {
			t.Errorf("totals %+v, warnings %q", o.result.Totals, o.result.Warnings)
		}
	})
	t.Run("committed offset outside the log", func(t *testing.T) {
		c := seeded(t)
		// Retention removed the records up to 90, past the committed 80.
		if err := c.DeleteRecords(testCtx(t), topic, 0, 90); err != nil {
			t.Fatal(err)
		}
		o := run(t, c, "--group", group, "--topic", topic, "--to", "latest", "--allow-skip").mustCode(t, report.ExitOK)
		for _, p := range o.result.Partitions {
			outside := strings.Contains(p.Note, "previous offset 80 was outside the log [90, 100]")
			if outside != (p.Partition == 0) {
				t.Errorf("%s/%d: note %q", p.Topic, p.Partition, p.Note)
			}
		}
		if !strings.Contains(strings.Join(o.result.Warnings, " "), "committed offset outside the log") {
			t.Errorf("warnings %q", o.result.Warnings)
		}
	})
}

// TestAuthenticationFailureSaysWhy: refused credentials reach the result as
// what they are, not as "Local: Timed out", and are not retryable. A SASL
// mechanism the runner's second client (franz-go) cannot use, OAUTHBEARER,
// is refused by name before anything connects, with the same exit code.
func TestAuthenticationFailureSaysWhy(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := kafkatest.NewWith(t, kafkatest.Options{
		Brokers: 1,
		Fake:    []kfake.Opt{kfake.EnableSASL(), kfake.Superuser("PLAIN", "replay", "right")},
		Client:  []kgo.Opt{kgo.SASL(plain.Auth{User: "replay", Pass: "right"}.AsMechanism())},
	})
	c.RequireFake(t)
	seedWith(t, c)
	// kfake drops the connection on a wrong password; a Kafka broker first
	// answers SASL_AUTHENTICATION_FAILED with a message, which is what
	// librdkafka reports as an authentication failure. Answer that way.
	c.Fake.ControlKey(int16(kmsg.SASLAuthenticate), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.Fake.KeepControl()
		req := kreq.(*kmsg.SASLAuthenticateRequest)
		if !bytes.HasSuffix(req.SASLAuthBytes, []byte("\x00wrong")) {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := "Authentication failed: Invalid username or password"
		resp.ErrorMessage = &msg
		return resp, nil, true
	})
	const failed, refused = "authentication failed", "the runner's second client"
	cases := []struct {
		name  string
		props map[string]string
		// how is failed or refused; want is what the error names, as
		// librdkafka or as the second client (franz-go, which reads the
		// group's offsets beside it) words it, whichever is refused first.
		how  string
		want []string
	}{
		{"bad SASL password", map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.username": "replay", "sasl.password": "wrong"}, failed,
			[]string{"Invalid username or password", "SASL_AUTHENTICATION_FAILED"}},
		{"OAUTHBEARER with an unsecured JWT", map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
			"enable.sasl.oauthbearer.unsecure.jwt": "true", "sasl.oauthbearer.config": "scope=none"}, refused, []string{"enable.sasl.oauthbearer.unsecure.jwt"}},
		{"OAUTHBEARER without a token source", map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER"}, refused, []string{"sasl.mechanism"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for k, v := range tc.props {
				if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			o := run(t, c, "--kafka-config-dir", dir, "--group", group, "--topic", topic, "--to", "earliest").mustCode(t, report.ExitInvalidInput)
			names := slices.ContainsFunc(tc.want, func(w string) bool { return strings.Contains(o.result.Error, w) })
			if !strings.Contains(o.result.Error, tc.how) || !names || strings.Contains(o.result.Error, "Timed out") {
				t.Errorf("error %q, want %q naming %q", o.result.Error, tc.how, tc.want)
			}
			if report.ExitCode(o.code).Retryable() {
				t.Errorf("exit %d is retryable", o.code)
			}
		})
	}
}
