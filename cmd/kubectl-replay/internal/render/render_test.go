package render

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs; got:\n%s\nwant:\n%s", name, got, want)
	}
}

func part(topic string, p int32, prev *int64, next, start, end int64) report.Partition {
	rp := report.Partition{Topic: topic, Partition: p, PreviousOffset: prev, NewOffset: next, LogStartOffset: start, LogEndOffset: end}
	if prev != nil {
		d := *prev - next
		rp.Delta = &d
	}
	return rp
}

func samplePlan() []report.Partition {
	return []report.Partition{
		part("billing", 0, ptr.To[int64](500), 500, 0, 600),
		part("orders", 0, ptr.To[int64](1000), 900, 0, 2000),
		part("orders", 1, ptr.To[int64](1000), 700, 100, 2000),
		part("orders", 2, nil, 40, 0, 2000),
		part("orders", 3, ptr.To[int64](1200), 1500, 0, 2000),
		part("payments.v2", 0, ptr.To[int64](10), 0, 0, 10),
	}
}

// The plan's table: largest move first (skips and re-consumes alike),
// never-committed partitions last, totals at the foot.
func TestGoldenPlanTable(t *testing.T) {
	rows, tot := PlanRows(samplePlan())
	if tot.MessagesToReconsume != 100+300+10 || tot.MessagesSkipped != 300 || tot.NoPreviousOffset != 1 || tot.Partitions != 6 {
		t.Errorf("totals = %+v", tot)
	}
	golden(t, "plan.golden", PlanTable(Palette{}, rows, tot))
}

// The totals count the log's messages between the two offsets, as the
// runner's do: none for offsets outside the log, and never a wrapped sum.
func TestPlanTotalsCountTheLog(t *testing.T) {
	const maxInt = int64(^uint64(0) >> 1)
	_, tot := PlanRows([]report.Partition{
		part("o", 0, ptr.To[int64](5), 40, 40, 100),       // below the log start, to earliest
		part("o", 1, ptr.To[int64](500), 90, 0, 100),      // past the log end, back 10 in the log
		part("o", 2, ptr.To[int64](maxInt), 0, 0, maxInt), // the largest there is
		part("o", 3, ptr.To[int64](maxInt), 0, 0, maxInt),
	})
	if tot.MessagesToReconsume != maxInt || tot.MessagesSkipped != 0 {
		t.Errorf("totals = %+v", tot)
	}
	_, tot = PlanRows([]report.Partition{part("o", 0, ptr.To[int64](5), 40, 40, 100), part("o", 1, ptr.To[int64](500), 90, 0, 100)})
	if tot.MessagesToReconsume != 10 || tot.MessagesSkipped != 0 {
		t.Errorf("totals = %+v, want 10 re-consumed and none skipped", tot)
	}
}

func TestBar(t *testing.T) {
	cases := []struct {
		name             string
		start, end, next int64
		prev             *int64
		want             string
	}{
		{"rewind", 0, 100, 20, ptr.To[int64](60), "[.....<===========o............]"},
		{"skip", 0, 100, 90, ptr.To[int64](30), "[........o----------------->...]"},
		{"to the start", 0, 100, 0, ptr.To[int64](100), "[<============================o]"},
		{"unchanged", 0, 100, 50, ptr.To[int64](50), "[..............*...............]"},
		{"never committed", 0, 100, 50, nil, "[..............^...............]"},
		{"a move under one cell", 0, 1_000_000, 500_000, ptr.To[int64](500_001), "[..............<...............]"},
		{"outside the log", 100, 200, 50, ptr.To[int64](250), "[<============================o]"},
		{"empty log", 5, 5, 5, ptr.To[int64](5), "[.............................*]"},
	}
	for _, c := range cases {
		if got := Bar(Palette{}, BarWidth, c.start, c.end, c.prev, c.next); got != c.want {
			t.Errorf("%s: Bar = %s, want %s", c.name, got, c.want)
		}
		if n := len([]rune(Bar(Palette{}, BarWidth, c.start, c.end, c.prev, c.next))); n != BarWidth {
			t.Errorf("%s: width %d", c.name, n)
		}
	}
	// Colour only when asked: the plain bar has no escape codes, the
	// coloured one does and is as wide on the screen.
	col := Bar(Palette{On: true}, BarWidth, 0, 100, ptr.To[int64](60), 20)
	if col == Bar(Palette{}, BarWidth, 0, 100, ptr.To[int64](60), 20) || visible(col) != BarWidth {
		t.Errorf("coloured bar %q (visible width %d)", col, visible(col))
	}
}

func at(s string) *metav1.Time {
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return &metav1.Time{Time: tm}
}

func TestGoldenDescribe(t *testing.T) {
	rr := &v1alpha1.ReplayRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "orders-rewind", Namespace: "shop"},
		Spec: v1alpha1.ReplayRequestSpec{
			Kafka: v1alpha1.KafkaConnection{BootstrapServers: "kafka-0.kafka:9092"}, Group: "orders-service",
			Approval: v1alpha1.ApprovalManual, Target: v1alpha1.Target{Ago: &metav1.Duration{Duration: time.Hour}},
		},
		Status: v1alpha1.ReplayRequestStatus{
			Phase: v1alpha1.PhaseSucceeded, RequestedBy: "alice@example.com", JobName: "orders-rewind-1a2b3c4d",
			ResolvedTarget: "time:2026-03-01T08:30:00Z",
			StartTime:      at("2026-03-01T09:30:05Z"), CompletionTime: at("2026-03-01T09:31:00Z"),
			Conditions: []metav1.Condition{
				{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", Message: "target resolved to time:2026-03-01T08:30:00Z", LastTransitionTime: *at("2026-03-01T09:30:00Z")},
				{Type: "Succeeded", Status: metav1.ConditionTrue, Reason: "Applied", Message: "6 partitions moved", LastTransitionTime: *at("2026-03-01T09:31:00Z")},
			},
			Plan:     &v1alpha1.PlanSummary{Digest: "0123456789abcdef", JobName: "orders-rewind-plan", PlannedAt: at("2026-03-01T09:30:10Z"), Totals: v1alpha1.ResultTotals{Partitions: 6, MessagesToReconsume: 410, MessagesSkipped: 300}},
			Approval: &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: "bob@example.com", At: at("2026-03-01T09:30:50Z"), Digest: "0123456789abcdef"},
			Result: &v1alpha1.ReplayResult{Reason: "Applied", GroupType: "Classic", Totals: v1alpha1.ResultTotals{Partitions: 6, Applied: 6, MessagesToReconsume: 410, MessagesSkipped: 300},
				Warnings: []string{"orders/1: target clamped to the log start 100"}},
			UndoCommand: "kubectl create -f - <<'EOF' ...",
		},
	}
	golden(t, "describe.golden", Describe(Palette{}, Description{Request: rr, Record: "orders-rewind-1a2b3c4d", Complete: true, Partitions: samplePlan()}))
}

func TestGoldenHistory(t *testing.T) {
	when := func(s string) time.Time { return at(s).Time }
	entries := []HistoryEntry{
		{When: when("2026-03-01T10:00:00Z"), Namespace: "shop", Job: "orders-rewind-undo-1", Source: "request", Name: "orders-rewind-undo", Stage: "apply", RequestedBy: "alice", Group: "orders-service", Target: "undo:orders-rewind", Outcome: "Succeeded", Reason: "Applied", OffsetsChanged: "Yes", Reconsumed: ptr.To[int64](0), Skipped: ptr.To[int64](0)},
		{When: when("2026-03-01T09:31:00Z"), Namespace: "shop", Job: "orders-rewind-2", Source: "request", Name: "orders-rewind", Stage: "apply", RequestedBy: "alice", ApprovedBy: "bob", Group: "orders-service", Target: "time:2026-03-01T08:30:00Z", Outcome: "Succeeded", Reason: "Applied", OffsetsChanged: "Yes", Reconsumed: ptr.To[int64](410), Skipped: ptr.To[int64](0)},
		{When: when("2026-03-01T09:30:10Z"), Namespace: "shop", Job: "orders-rewind-1", Source: "request", Name: "orders-rewind", Stage: "plan", RequestedBy: "alice", Group: "orders-service", Target: "time:2026-03-01T08:30:00Z", DryRun: true, Outcome: "Succeeded", Reason: "DryRun", OffsetsChanged: "No", Reconsumed: ptr.To[int64](410), Skipped: ptr.To[int64](0)},
		{When: when("2026-03-01T09:00:00Z"), Namespace: "shop", Job: "orders-check-1", Source: "request", Name: "orders-check", Stage: "apply", RequestedBy: "alice", Group: "orders-service", Target: "time:2026-03-01T08:00:00Z", DryRun: true, Outcome: "Succeeded", Reason: "DryRun", OffsetsChanged: "No", Reconsumed: ptr.To[int64](20), Skipped: ptr.To[int64](0)},
		{When: when("2026-02-28T12:00:00Z"), Namespace: "kafka-replay-system", Job: "rewind-1772280000", Source: "runbook", Name: "orders-rewind-1h", Group: "orders-service", Target: "time:2026-02-28T11:00:00Z", Outcome: "Failed", Reason: "GroupActive", OffsetsChanged: "No", Reconsumed: ptr.To[int64](0), Skipped: ptr.To[int64](0)},
		{When: when("2026-02-27T08:00:00Z"), Namespace: "shop", Job: "by-hand", Source: "job", Name: "by-hand", Group: "billing", Outcome: "Running"},
	}
	golden(t, "history.golden", HistoryTable(Palette{}, entries, true))
	golden(t, "history-group.golden", HistoryTable(Palette{}, entries[:4], false))
	// A parent's children's runs, under a line naming the parent.
	parent := []HistoryEntry{
		{When: when("2026-03-01T09:33:00Z"), Namespace: "shop", Job: "incident-42-0b7d5e1a22-2", Source: "request", Name: "incident-42-0b7d5e1a22", Parent: "incident-42", Stage: "apply", RequestedBy: "alice", ApprovedBy: "bob", Group: "audit", Target: "time:2026-03-01T09:30:00Z", Outcome: "Failed", Reason: "GroupActive", OffsetsChanged: "No", Reconsumed: ptr.To[int64](0), Skipped: ptr.To[int64](0)},
		{When: when("2026-03-01T09:32:00Z"), Namespace: "shop", Job: "incident-42-4f1c2a9b3e-2", Source: "request", Name: "incident-42-4f1c2a9b3e", Parent: "incident-42", Stage: "apply", RequestedBy: "alice", ApprovedBy: "bob", Group: "billing", Target: "time:2026-03-01T09:30:00Z", Outcome: "Succeeded", Reason: "Applied", OffsetsChanged: "Yes", Reconsumed: ptr.To[int64](420), Skipped: ptr.To[int64](0)},
		{When: when("2026-03-01T09:30:40Z"), Namespace: "shop", Job: "incident-42-4f1c2a9b3e-1", Source: "request", Name: "incident-42-4f1c2a9b3e", Parent: "incident-42", Stage: "plan", RequestedBy: "alice", Group: "billing", Target: "time:2026-03-01T09:30:00Z", DryRun: true, Outcome: "Succeeded", Reason: "DryRun", OffsetsChanged: "No", Reconsumed: ptr.To[int64](420), Skipped: ptr.To[int64](0)},
		entries[1],
	}
	golden(t, "history-parent.golden", HistoryTable(Palette{}, parent, true))
	if got := HistoryTable(Palette{}, nil, false); got != "no runs\n" {
		t.Errorf("empty history = %q", got)
	}
}

// Text a tenant or a user wrote (a rejection reason, a runner's error, a
// hand-made Job's annotation) never reaches the terminal with its control
// characters: an escape sequence could clear the screen or rewrite what
// an approver reads.
func TestTenantTextIsCleaned(t *testing.T) {
	evil := "no\x1b[2J\x1b]0;pwned\x07\rplan approved\u009b31m"
	if got := Clean(evil); got != "no?[2J?]0;pwned??plan approved?31m" {
		t.Errorf("Clean = %q", got)
	}
	if got := CleanLines("a\x1b\nb"); got != "a?\nb" {
		t.Errorf("CleanLines = %q", got)
	}
	rr := &v1alpha1.ReplayRequest{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "n"}}
	rr.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalRejected, By: "bob\x1b[8m", Reason: evil}
	rr.Status.Conditions = []metav1.Condition{{Type: "Succeeded", Status: "False", Reason: "Rejected", Message: evil}}
	rr.Status.Result = &v1alpha1.ReplayResult{Error: evil, Warnings: []string{evil}}
	parts := []report.Partition{{Topic: "orders", NewOffset: 1, Error: evil, Note: evil}}
	out := Describe(Palette{}, Description{Request: rr, Partitions: parts})
	out += PlanTable(Palette{}, []PlanRow{{Topic: "orders", Error: evil}}, PlanTotals{})
	out += HistoryTable(Palette{}, []HistoryEntry{{Source: "job", Name: "x\x1b", RequestedBy: evil, Group: evil, Target: evil, Outcome: "Failed", Reason: evil}}, true)
	for _, c := range out {
		if c == 0x1b || c == 0x07 || c == '\r' || c == 0x9b {
			t.Fatalf("a control character %q reached the output:\n%q", c, out)
		}
	}
}

// A consumerRef request shows the Knative resource and what it resolved
// to (status.resolved), not the empty spec.group.
func TestDescribeConsumerRef(t *testing.T) {
	rr := &v1alpha1.ReplayRequest{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "n"}}
	rr.Spec.ConsumerRef = &v1alpha1.KnativeRef{Kind: v1alpha1.KnativeKafkaSource, Name: "orders"}
	rr.Status.Resolved = &v1alpha1.ResolvedConsumer{Kind: v1alpha1.KnativeKafkaSource, Name: "orders", Group: "knative-orders-group", BootstrapServers: "my-cluster-kafka-bootstrap.kafka:9092"}
	out := Describe(Palette{}, Description{Request: rr})
	for _, want := range []string{"Consumer ref: KafkaSource/orders", "Group:        knative-orders-group", "Kafka:        my-cluster-kafka-bootstrap.kafka:9092"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe has no %q:\n%s", want, out)
		}
	}
}

func TestTruncate(t *testing.T) {
	p := Palette{On: true}
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"a longer line", 6, "a lon…" + ansiReset},
		{"✓ ünïcode line", 4, "✓ ü…" + ansiReset},
		{p.Green("✓") + " accepted", 5, p.Green("✓") + " ac…" + ansiReset},
		{"no limit", 0, "no limit"},
	} {
		got := Truncate(c.in, c.n)
		if got != c.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
		if c.n > 0 && visible(got) > c.n {
			t.Errorf("Truncate(%q, %d) is %d wide", c.in, c.n, visible(got))
		}
	}
}

// describe's Internal line: nothing without deleteAllInternalTopics; then
// what the run deleted (and did not), else what the plan or the dry run
// deletes, else that it will; always that an undo cannot recreate them.
func TestDescribeInternalTopics(t *testing.T) {
	it := func(planned, deleted []string) *v1alpha1.InternalTopics {
		return &v1alpha1.InternalTopics{Planned: planned, Deleted: deleted}
	}
	ab := []string{"app-a-changelog", "app-b-repartition"}
	for _, tc := range []struct {
		name   string
		delete bool
		status v1alpha1.ReplayRequestStatus
		want   string // empty: no line
	}{
		{"not asked", false, v1alpha1.ReplayRequestStatus{Result: &v1alpha1.ReplayResult{InternalTopics: it(ab, ab)}}, ""},
		{"not run yet", true, v1alpha1.ReplayRequestStatus{}, "topics deleted once the offsets are moved (deleteAllInternalTopics); an undo cannot recreate them"},
		{"planned", true, v1alpha1.ReplayRequestStatus{Plan: &v1alpha1.PlanSummary{InternalTopics: ab}}, "topics the plan deletes once the offsets are moved: app-a-changelog, app-b-repartition; an undo"},
		{"planned none", true, v1alpha1.ReplayRequestStatus{Plan: &v1alpha1.PlanSummary{}}, "topics the plan deletes once the offsets are moved: none;"},
		{"dry run", true, v1alpha1.ReplayRequestStatus{Result: &v1alpha1.ReplayResult{DryRun: true, InternalTopics: it(ab, nil)}}, "topics the dry run would delete: app-a-changelog, app-b-repartition;"},
		{"deleted", true, v1alpha1.ReplayRequestStatus{Plan: &v1alpha1.PlanSummary{InternalTopics: ab}, Result: &v1alpha1.ReplayResult{InternalTopics: it(ab, ab)}}, "topics deleted: app-a-changelog, app-b-repartition; an undo cannot recreate them"},
		{"one not deleted", true, v1alpha1.ReplayRequestStatus{Result: &v1alpha1.ReplayResult{Error: "1 internal topic(s) were not deleted", InternalTopics: it(ab, ab[:1])}}, "topics deleted: app-a-changelog; not deleted: app-b-repartition;"},
		{"none deleted", true, v1alpha1.ReplayRequestStatus{Result: &v1alpha1.ReplayResult{Error: "connection refused", InternalTopics: it(ab, nil)}}, "topics deleted: none; not deleted: app-a-changelog, app-b-repartition;"},
	} {
		rr := &v1alpha1.ReplayRequest{Spec: v1alpha1.ReplayRequestSpec{DeleteAllInternalTopics: tc.delete}, Status: tc.status}
		got := internalTopics(rr)
		if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if out := Describe(Palette{}, Description{Request: rr}); (tc.want != "") != strings.Contains(out, "Internal:     topics") {
			t.Errorf("%s: describe's Internal line: %q", tc.name, out)
		}
	}
}
