package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// groupKind is what a scenario of TestGroupKindRequests needs of one kind
// of group: a live member, the offsets the runner moves, and how to put
// them where the scenario starts.
type groupKind struct {
	name string // as status.result.groupType says it
	// join makes a live member of group.
	join func(ctx context.Context, f *flowEnv, group string) (*kafkatest.Member, error)
	// set puts the empty group's offsets at offs.
	set func(ctx context.Context, f *flowEnv, group string, offs map[int32]int64) error
	// read is the group's offsets on topic, by an independent client.
	read func(t *testing.T, ctx context.Context, f *flowEnv, group string) map[int32]int64
	// undoArgs are kubectl replay undo's extra flags.
	undoArgs []string
	// consumes: a live member moves the offsets.
	consumes bool
}

var groupKinds = []groupKind{
	{
		name: "Share",
		join: func(ctx context.Context, f *flowEnv, group string) (*kafkatest.Member, error) {
			return f.kafka.JoinShare(ctx, group, group+"-worker", topic)
		},
		set: func(ctx context.Context, f *flowEnv, group string, offs map[int32]int64) error {
			return f.kafka.SetShareStartOffsets(ctx, group, kafkatest.Offsets{topic: offs})
		},
		read: func(t *testing.T, ctx context.Context, f *flowEnv, group string) map[int32]int64 {
			t.Helper()
			got, err := f.kafka.ShareStartOffsets(ctx, group)
			if err != nil {
				t.Fatal(err)
			}
			out := map[int32]int64{}
			for p := int32(0); p < parts; p++ {
				if o, ok := got[fmt.Sprintf("%s/%d", topic, p)]; ok {
					out[p] = o
				}
			}
			return out
		},
		// A share group's start offsets carry no run ID to vouch for the
		// undo's forward moves (docs/usage.md, Share groups).
		undoArgs: []string{"--allow-skip"},
		consumes: true,
	},
	{
		name: "Streams",
		join: func(ctx context.Context, f *flowEnv, group string) (*kafkatest.Member, error) {
			return f.kafka.JoinStreams(ctx, group, group+"-app", topic)
		},
		set: func(ctx context.Context, f *flowEnv, group string, offs map[int32]int64) error {
			return f.kafka.Commit(ctx, group, kafkatest.Offsets{topic: offs}, "app")
		},
		read: func(t *testing.T, ctx context.Context, f *flowEnv, group string) map[int32]int64 {
			t.Helper()
			return f.committed(t, ctx, group)
		},
	},
}

// TestGroupKindRequests (issue 29): a share group and a streams group on
// Apache Kafka 4.4 (kfake has no streams groups, and only part of share
// groups), each moved by ReplayRequests end to end: refused while a member
// is live (GroupActive, nothing moved), a dry run (nothing moved, the
// plan's record), a Manual request approved with `kubectl replay approve`
// that applies exactly its plan, and `kubectl replay undo` that puts the
// offsets back. At each step an independent franz-go client reads the
// offsets the records say.
func TestGroupKindRequests(t *testing.T) {
	t.Run(onApache, func(t *testing.T) {
		f := needApacheFlow(t)
		for _, k := range groupKinds {
			t.Run(k.name, func(t *testing.T) { groupKindRequests(t, f, k) })
		}
	})
}

func groupKindRequests(t *testing.T, f *flowEnv, k groupKind) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	t0 := time.Now()
	kind := strings.ToLower(k.name)
	group, ns := "svc-"+kind, f.ns("team-"+kind)
	ensureNamespace(t, ctx, f, ns)
	before := map[int32]int64{0: 60, 1: 70, 2: 80}
	expect := func(step string, want map[int32]int64) {
		t.Helper()
		got := k.read(t, ctx, f, group)
		for p, o := range want {
			if got[p] != o {
				t.Fatalf("%s: partition %d is at %d (independent client), want %d; all %v", step, p, got[p], o, got)
			}
		}
	}
	manifest := func(name, target, extra string) string {
		return rrManifest(ns, name, group, f.kafka.Bootstrap(), target, "  groupType: "+k.name+"\n"+extra)
	}

	// The group exists as its kind once a member joined. A streams
	// member commits nothing here, so the group is put at before, empty,
	// and joined again; a share member acknowledges what it reads, which
	// moves the start offsets, so the share group is refused at the start
	// offsets its member settles on (the log end), and put at before once
	// empty.
	m, err := k.join(ctx, f, group)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { m.Leave() }()
	if !k.consumes {
		m.Leave()
		if err := k.set(ctx, f, group, before); err != nil {
			t.Fatal(err)
		}
		if m, err = k.join(ctx, f, group); err != nil {
			t.Fatal(err)
		}
	}
	live := f.settled(t, ctx, k, group)

	// 1. Refused while a member is live: nothing moves.
	f.apply(t, ctx, manifest("while-live", "position: Earliest", ""))
	rr := f.waitFinal(t, ctx, ns, "while-live")
	if st, reason := condition(rr, v1alpha1.ConditionSucceeded); rr.Status.Phase != v1alpha1.PhaseFailed || st != "False" || reason != "GroupActive" {
		t.Fatalf("while live: phase %s, Succeeded=%s reason %s: %s", rr.Status.Phase, st, reason, rr.Status.Message)
	}
	if res := rr.Status.Result; res == nil || res.GroupType != k.name || res.Totals.Applied != 0 || !strings.Contains(res.Error, group) {
		t.Fatalf("while live: result %+v", rr.Status.Result)
	}
	m.Leave()
	expect("refused while live", live)
	if err := k.set(ctx, f, group, before); err != nil {
		t.Fatal(err)
	}
	tLive := time.Now()

	// 2. A dry run: the plan's record, nothing moved.
	f.apply(t, ctx, manifest("dry", "position: Earliest", "  dryRun: true\n"))
	rr = f.waitFinal(t, ctx, ns, "dry")
	if rr.Status.Phase != v1alpha1.PhaseSucceeded || rr.Status.Result == nil || rr.Status.Result.GroupType != k.name || !rr.Status.Result.DryRun {
		t.Fatalf("dry run: phase %s, result %+v: %s", rr.Status.Phase, rr.Status.Result, rr.Status.Message)
	}
	prev, next, _ := recordOffsets(t, f.record(t, ctx, ns, rr.Status.JobName))
	for p, o := range before {
		if prev[p] != o || next[p] != 0 {
			t.Fatalf("dry run record partition %d: %d -> %d, want %d -> 0", p, prev[p], next[p], o)
		}
	}
	expect("dry run", before)

	// 3. Manual: planned, approved with the plugin, applied exactly.
	const name = "rewind"
	f.apply(t, ctx, manifest(name, "position: Earliest", "  approval: Manual\n"))
	planned := f.waitRR(t, ctx, ns, name, "a plan awaiting approval", func(rr *v1alpha1.ReplayRequest) bool {
		return rr.Status.Phase == v1alpha1.PhaseAwaitingApproval && rr.Status.Plan != nil
	})
	expect("planned", before)
	out := f.plugin(t, ctx, "-n", ns, "approve", name)
	applied := f.waitFinal(t, ctx, ns, name)
	if applied.Status.Phase != v1alpha1.PhaseSucceeded || applied.Status.Approval == nil || applied.Status.Approval.Digest != planned.Status.Plan.Digest {
		t.Fatalf("after kubectl replay approve: phase %s, approval %+v: %s\n%s", applied.Status.Phase, applied.Status.Approval, applied.Status.Message, out)
	}
	rec := f.record(t, ctx, ns, applied.Status.JobName)
	if rec.GroupType != k.name {
		t.Errorf("record groupType %q, want %s", rec.GroupType, k.name)
	}
	prev, next, _ = recordOffsets(t, rec)
	for p, o := range before {
		if prev[p] != o || next[p] != 0 {
			t.Fatalf("record partition %d: %d -> %d, want %d -> 0", p, prev[p], next[p], o)
		}
	}
	expect("applied", map[int32]int64{0: 0, 1: 0, 2: 0})
	if d := f.plugin(t, ctx, "-n", ns, "describe", name); !strings.Contains(d, k.name) {
		t.Errorf("kubectl replay describe does not show the kind %s:\n%s", k.name, d)
	}
	tApplied := time.Now()

	// 4. Undone with the plugin: back where the group was.
	out = f.plugin(t, ctx, append([]string{"-n", ns, "undo", name}, k.undoArgs...)...)
	undo := f.waitFinal(t, ctx, ns, name+"-undo")
	if undo.Status.Phase != v1alpha1.PhaseSucceeded || undo.Status.Result == nil || undo.Status.Result.Totals.Applied != parts || undo.Status.Result.GroupType != k.name {
		t.Fatalf("undo: phase %s, result %+v: %s\n%s\n%s", undo.Status.Phase, undo.Status.Result, undo.Status.Message, undo.Status.LogTail, out)
	}
	uprev, unext, _ := recordOffsets(t, f.record(t, ctx, ns, undo.Status.JobName))
	for p, o := range before {
		if uprev[p] != 0 || unext[p] != o {
			t.Fatalf("undo record partition %d: %d -> %d, want 0 -> %d", p, uprev[p], unext[p], o)
		}
	}
	expect("undone", before)
	t.Logf("%s group: refused while live %s; dry run, plan, approve, applied %s; undone %s",
		k.name, tLive.Sub(t0).Round(time.Millisecond), tApplied.Sub(tLive).Round(time.Millisecond), time.Since(tApplied).Round(time.Millisecond))
}

// settled reads the group's offsets on every partition of topic once two
// reads a moment apart agree.
func (f *flowEnv) settled(t *testing.T, ctx context.Context, k groupKind, group string) map[int32]int64 {
	t.Helper()
	last := k.read(t, ctx, f, group)
	for {
		select {
		case <-ctx.Done():
			t.Fatalf("the %s group's offsets did not settle: last %v", k.name, last)
		case <-time.After(500 * time.Millisecond):
		}
		now := k.read(t, ctx, f, group)
		same := len(now) == parts
		for p, o := range now {
			same = same && last[p] == o
		}
		if same {
			return now
		}
		last = now
	}
}

var (
	pluginDir     string
	pluginErr     error
	pluginBuildMu sync.Once
)

// plugin runs `kubectl replay ARGS` inside the cluster's namespace, with
// kubectl-replay built from this module on PATH, as a user runs it.
func (f *flowEnv) plugin(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	pluginBuildMu.Do(func() {
		pluginDir, pluginErr = os.MkdirTemp("", "kafka-replay-e2e-plugin-")
		if pluginErr != nil {
			return
		}
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(pluginDir, "kubectl-replay"), "github.com/kafka-replay/kafka-replay/cmd/kubectl-replay")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			pluginErr = fmt.Errorf("build kubectl-replay: %w\n%s", err, out)
		}
	})
	if pluginErr != nil {
		t.Fatal(pluginErr)
	}
	cmd := f.c.Command(ctx, filepath.Join(f.c.BinDir(), "kubectl"), append([]string{"replay"}, args...)...)
	// The last PATH wins.
	cmd.Env = append(cmd.Env, "PATH="+pluginDir+":"+f.c.BinDir()+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl replay %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
