package config

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafka-replay/kafka-replay/runner/report"
)

// dryRunResult is a dry run's plan of group g: o/0 80 -> 60, o/1 80 -> 70.
func dryRunResult() *report.Result {
	p := func(v int64) *int64 { return &v }
	r := &report.Result{
		Schema: report.Schema, Group: "g", RunID: "plan-1", DryRun: true, Reason: report.ReasonDryRun,
		Target: report.Target{Given: "shift:-20", Resolved: "shift:-20"},
		Partitions: []report.Partition{
			{Topic: "o", Partition: 0, PreviousOffset: p(80), NewOffset: 60, Delta: p(20)},
			{Topic: "o", Partition: 1, PreviousOffset: p(80), NewOffset: 70, Delta: p(10)},
		},
	}
	r.Plan = report.PlanDigest(r.Group, r.Target.Resolved, r.Partitions)
	return r
}

// appliedResult is a real run of group g that applied the same.
func appliedResult() *report.Result {
	r := dryRunResult()
	r.DryRun, r.Reason, r.Plan = false, report.ReasonApplied, ""
	for i := range r.Partitions {
		r.Partitions[i].Applied = true
	}
	return r
}

func resultBytes(t *testing.T, r *report.Result) []byte {
	t.Helper()
	b, err := report.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeBytes(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "input.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPlanAndUndoFiles: a plan: or undo: file is a runner result, plain or
// gzip; it is checked against the group and, with --file-digest, against
// its bytes; every refusal names the setting.
func TestPlanAndUndoFiles(t *testing.T) {
	clearEnv(t)
	plan := resultBytes(t, dryRunResult())
	applied := resultBytes(t, appliedResult())
	edited := dryRunResult()
	edited.Partitions[1].NewOffset = 0 // rewinds further than planned
	// The same partitions under an absolute target: the runner would no
	// longer hold the plan to the committed offsets it started from.
	absolute := dryRunResult()
	absolute.Target.Resolved = "offset:60"
	notDry := dryRunResult()
	notDry.DryRun = false
	truncated := dryRunResult()
	truncated.Truncated = true
	failed := appliedResult()
	failed.ExitCode, failed.Reason = report.ExitPartiallyApplied, report.ReasonPartiallyApplied
	undoPlan := dryRunResult()
	undoPlan.Target.Resolved = "undo:/etc/kafka-replay/input/input.json.gz (2 partitions, force)"
	undoPlan.Plan = report.PlanDigest(undoPlan.Group, undoPlan.Target.Resolved, undoPlan.Partitions)
	dupe := dryRunResult()
	dupe.Partitions[1].Partition = 0
	dupe.Plan = report.PlanDigest(dupe.Group, dupe.Target.Resolved, dupe.Partitions)
	// A plan that deletes a streams group's internal topics, its digest
	// over them; and the same plan with the list changed by hand.
	deleting := dryRunResult()
	deleting.InternalTopics = &report.InternalTopics{Planned: []string{"g-store-changelog"}}
	deleting.Plan = deleting.Digest()
	deletingMore := dryRunResult()
	deletingMore.InternalTopics = &report.InternalTopics{Planned: []string{"g-store-changelog", "orders"}}
	deletingMore.Plan = deleting.Plan
	deletingUnbound := dryRunResult() // the list added to a plan that deleted nothing
	deletingUnbound.InternalTopics = &report.InternalTopics{Planned: []string{"g-store-changelog"}}

	args := func(to string, more ...string) []string {
		return append([]string{"--bootstrap-servers", "localhost:9092", "--group", "g", "--to", to}, more...)
	}
	ok := []struct {
		name string
		args []string
	}{
		{"a plan", args("plan:" + writeBytes(t, plan))},
		{"a gzip plan", args("plan:" + writeBytes(t, gz(t, plan)))},
		{"a plan with its digest", args("plan:"+writeBytes(t, gz(t, plan)), "--file-digest", FileDigestOf(gz(t, plan)))},
		{"an undo", args("undo:" + writeBytes(t, applied))},
		{"an undo, forced", args("undo:"+writeBytes(t, gz(t, applied)), "--force")},
		{"the plan of a forced undo, forced", args("plan:"+writeBytes(t, resultBytes(t, undoPlan)), "--force")},
		{"a plan that deletes internal topics, with the flag", args("plan:"+writeBytes(t, resultBytes(t, deleting)), "--delete-all-internal-topics")},
		{"a file: with its digest", args("file:"+writeBytes(t, []byte(`[{"topic":"o","partition":0,"offset":1}]`)), "--file-digest", FileDigestOf([]byte(`[{"topic":"o","partition":0,"offset":1}]`)))},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			c := mustLoad(t, tc.args...)
			if c.Target.Result == nil && c.Target.Kind != KindFile {
				t.Fatalf("no result decoded: %+v", c.Target)
			}
		})
	}
	if c := mustLoad(t, args("plan:"+writeBytes(t, plan))...); c.Target.Canonical() != "shift:-20" {
		t.Errorf("a plan's resolved target is the plan's own, got %q", c.Target.Canonical())
	}

	bomb := gz(t, bytes.Repeat([]byte(" "), MaxResultFileBytes+1))
	bad := []struct {
		name string
		args []string
		want string
	}{
		{"a plan edited by hand", args("plan:" + writeBytes(t, resultBytes(t, edited))), "--to plan: (REPLAY_TO): plan:"},
		{"a plan edited by hand, why", args("plan:" + writeBytes(t, resultBytes(t, edited))), "do not match its plan digest"},
		{"a plan whose target was edited", args("plan:" + writeBytes(t, resultBytes(t, absolute))), "do not match its plan digest"},
		{"a plan of another group", []string{"--bootstrap-servers", "localhost:9092", "--group", "h", "--to", "plan:" + writeBytes(t, plan)}, `is a plan of group "g", not of "h"`},
		{"a plan that is no dry run", args("plan:" + writeBytes(t, resultBytes(t, notDry))), "is not a dry run's plan"},
		{"a truncated plan", args("plan:" + writeBytes(t, resultBytes(t, truncated))), "is a truncated result"},
		{"a plan naming a partition twice", args("plan:" + writeBytes(t, resultBytes(t, dupe))), "both name o/0"},
		{"an undo of a dry run", args("undo:" + writeBytes(t, plan)), "--to undo: (REPLAY_TO): undo:"},
		{"an undo of a dry run, why", args("undo:" + writeBytes(t, plan)), "is a dry run's result: it applied nothing to undo"},
		{"an undo of a failed run", args("undo:" + writeBytes(t, resultBytes(t, failed))), "ended PartiallyApplied (exit 5)"},
		{"an undo of another group", []string{"--bootstrap-servers", "localhost:9092", "--group", "h", "--to", "undo:" + writeBytes(t, applied)}, `is a run of group "g", not of "h"`},
		{"not a result", args("plan:" + writeBytes(t, []byte(`[{"topic":"o","partition":0,"offset":1}]`))), "is not a runner result"},
		{"another schema", args("plan:" + writeBytes(t, []byte(`{"schema":"x"}`))), "unknown result schema"},
		{"not gzip after the magic", args("plan:" + writeBytes(t, []byte{0x1f, 0x8b, 0, 1, 2})), "is not valid gzip"},
		{"a gzip bomb", args("plan:" + writeBytes(t, bomb)), "decompresses to more than"},
		{"topics beside a plan", args("plan:"+writeBytes(t, plan), "--topic", "o"), "--topic (REPLAY_TOPICS): conflicts with --to plan:"},
		{"topics beside an undo", args("undo:"+writeBytes(t, applied), "--topic", "o"), "conflicts with --to undo:"},
		{"force without undo", args("plan:"+writeBytes(t, plan), "--force"), "--force (REPLAY_FORCE): only applies to an undo target"},
		{"a digest of other bytes", args("plan:"+writeBytes(t, plan), "--file-digest", FileDigestOf(gz(t, plan))), "--file-digest (REPLAY_FILE_DIGEST): plan's file"},
		{"a digest of other bytes, file:", args("file:"+writeBytes(t, []byte(`[{"topic":"o","partition":0,"offset":1}]`)), "--file-digest", FileDigestOf(nil)), "it changed since the digest was taken"},
		{"a digest that is no digest", args("plan:"+writeBytes(t, plan), "--file-digest", "sha256:ABC"), `"sha256:ABC" is not sha256:<64 lowercase hex digits>`},
		{"a digest for a target without a file", args("earliest", "--file-digest", FileDigestOf(nil)), "only applies to a target that reads a file"},
		{"a limit that is no number", args("earliest", "--max-messages-to-reconsume", "-1"), `"-1" is not a whole number ≥ 0`},
		{"deleting internal topics in an undo", args("undo:"+writeBytes(t, applied), "--delete-all-internal-topics"), "--delete-all-internal-topics (REPLAY_DELETE_ALL_INTERNAL_TOPICS): does not go with --to undo:"},
		{"deleting internal topics in a plan's apply, planned without", args("plan:"+writeBytes(t, plan), "--delete-all-internal-topics"), "--delete-all-internal-topics (REPLAY_DELETE_ALL_INTERNAL_TOPICS): is set, and the plan of --to plan: deletes no internal topic"},
		{"a plan that deletes internal topics, without the flag", args("plan:" + writeBytes(t, resultBytes(t, deleting))), "--delete-all-internal-topics (REPLAY_DELETE_ALL_INTERNAL_TOPICS): is not set, and the plan of --to plan: deletes the internal topics g-store-changelog"},
		{"a plan whose internal topics were edited", args("plan:"+writeBytes(t, resultBytes(t, deletingMore)), "--delete-all-internal-topics"), "do not match its plan digest"},
		{"a plan whose internal topics were added", args("plan:"+writeBytes(t, resultBytes(t, deletingUnbound)), "--delete-all-internal-topics"), "do not match its plan digest"},
		{"deleting internal topics of several groups", []string{"--bootstrap-servers", "localhost:9092", "--all-groups", "--to", "earliest", "--delete-all-internal-topics"}, "deletes the internal topics of one streams group, and this run moves several (--all-groups)"},
		{"deleting internal topics of a share group", args("earliest", "--delete-all-internal-topics", "--group-type", "Share"), "only a streams group has internal topics the runner can name, and --group-type says Share"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.args...)
			if err == nil || !IsInvalidInput(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want an invalid input saying %q", err, tc.want)
			}
		})
	}
	// Garbage planted under a digest is a digest mismatch: it never reaches
	// the decoder.
	_, err := load(t, args("undo:"+writeBytes(t, []byte("\x1f\x8b garbage")), "--file-digest", FileDigestOf(applied))...)
	if err == nil || !strings.Contains(err.Error(), "--file-digest (REPLAY_FILE_DIGEST): undo's file") || strings.Contains(err.Error(), "gzip") {
		t.Errorf("garbage under a digest: %v", err)
	}
	// A digest mismatch reads nothing more of the file: no group check.
	_, err = load(t, "--bootstrap-servers", "localhost:9092", "--group", "h", "--to", "plan:"+writeBytes(t, plan), "--file-digest", FileDigestOf(nil))
	if err == nil || strings.Contains(err.Error(), "is a plan of group") {
		t.Errorf("a file that fails its digest was checked further: %v", err)
	}
}

// TestGuardSettings: the guards' settings from flags and the environment;
// an empty limit is no limit, 0 is a limit.
func TestGuardSettings(t *testing.T) {
	clearEnv(t)
	c := mustLoad(t, base...)
	if c.MaxMessagesToReconsume.IsSet || c.AllowSkip || c.Force || !c.MaxMessagesToReconsume.Allows(1<<62) {
		t.Errorf("defaults: %+v", c)
	}
	c = mustLoad(t, append(base, "--max-messages-to-reconsume", "0", "--allow-skip")...)
	if !c.MaxMessagesToReconsume.IsSet || c.MaxMessagesToReconsume.Allows(1) || !c.MaxMessagesToReconsume.Allows(0) || !c.AllowSkip {
		t.Errorf("flags: %+v", c)
	}
	t.Setenv(EnvMaxMessagesToReconsume, "500")
	t.Setenv(EnvAllowSkip, "true")
	c = mustLoad(t, base...)
	if c.MaxMessagesToReconsume != (Limit{N: 500, IsSet: true}) || !c.AllowSkip {
		t.Errorf("environment: %+v", c)
	}
	t.Setenv(EnvMaxMessagesToReconsume, "")
	if c = mustLoad(t, base...); c.MaxMessagesToReconsume.IsSet {
		t.Errorf("an empty variable is no limit: %+v", c.MaxMessagesToReconsume)
	}
	t.Setenv(EnvMaxMessagesToReconsume, "lots")
	t.Setenv(EnvFieldNames, "spec")
	if _, err := load(t, base...); err == nil || !strings.Contains(err.Error(), "spec.limits.maxMessagesToReconsume") {
		t.Errorf("a bad limit under the launcher: %v, want it to name spec.limits.maxMessagesToReconsume", err)
	}
}

// FuzzDecodeResultFile: any bytes, plain or gzip, decode or fail cleanly,
// and the checks of what decodes never panic; a plan that passes
// CheckPlanFile has the digest of its partitions.
func FuzzDecodeResultFile(f *testing.F) {
	for _, r := range []*report.Result{dryRunResult(), appliedResult()} {
		b, err := report.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		_, _ = w.Write(b)
		_ = w.Close()
		f.Add(buf.Bytes())
	}
	f.Add([]byte{0x1f, 0x8b})
	f.Add([]byte(`{"schema":"kafkareplay.dev/result/v1","partitions":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeResultFile(b)
		if err != nil {
			return
		}
		if CheckPlanFile(r, r.Group) == nil && report.PlanDigest(r.Group, r.Target.Resolved, r.Partitions) != r.Plan {
			t.Fatalf("a plan passed with another digest than its partitions'")
		}
		_ = CheckUndoFile(r, r.Group)
	})
}
