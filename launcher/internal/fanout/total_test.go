package fanout

import (
	"math"
	"strings"
	"testing"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

func TestJudgeTotal(t *testing.T) {
	parent := func(manual, dryRun bool, limit *int64) *v1alpha1.ReplayRequest {
		w := testutil.MakeRequest("shop", "incident").Groups("a", "b")
		if manual {
			w = w.Manual()
		}
		p := w.Obj()
		p.Spec.DryRun = dryRun
		if limit != nil {
			p.Spec.Limits = &v1alpha1.Limits{MaxTotalMessagesToReconsume: limit}
		}
		return p
	}
	n := func(v int64) *int64 { return &v }
	seven := []Contribution{{"a", 3}, {"b", 4}}
	many := []Contribution{{"g1", 1}, {"g2", 60}, {"g3", 2}, {"g4", 50}, {"g5", 3}, {"g6", 40}, {"g7", 4}}
	tests := []struct {
		name   string
		parent *v1alpha1.ReplayRequest
		cs     []Contribution
		want   TotalVerdict
		msg    []string // in the message, in this order
	}{
		{"Manual, no guard", parent(true, false, nil), seven, TotalAwaitsApproval, nil},
		{"Automatic, no guard", parent(false, false, nil), seven, TotalApproved, nil},
		{"Manual, within", parent(true, false, n(7)), seven, TotalAwaitsApproval, []string{"7 message(s)", "over 2 group(s)", "within the 7 " + TotalField}},
		{"Automatic, within: the launcher approves", parent(false, false, n(100)), seven, TotalApproved, []string{"within the 100"}},
		{"Manual, one over", parent(true, false, n(6)), seven, TotalRefused, []string{"would re-consume 7 message(s), more than the 6 " + TotalField + " allows, over 2 group(s), largest first: b 4, a 3; nothing was applied"}},
		{"Automatic, over", parent(false, false, n(0)), seven, TotalRefused, []string{"more than the 0 "}},
		{"a dry run, over", parent(false, true, n(5)), seven, TotalRefused, []string{"would re-consume 7"}},
		{"zero allows nothing to re-consume", parent(false, false, n(0)), []Contribution{{"a", 0}, {"b", 0}}, TotalApproved, []string{"0 message(s)"}},
		{"names the five largest, counts the rest", parent(true, false, n(10)), many, TotalRefused, []string{"160 message(s)", "over 7 group(s)", "g2 60, g4 50, g6 40, g7 4, g5 3 and 2 more;"}},
		{"a sum past int64 saturates, never wraps to pass", parent(false, false, n(math.MaxInt64-1)), []Contribution{{"a", math.MaxInt64}, {"b", 1}}, TotalRefused, []string{"would re-consume 9223372036854775807 "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := JudgeTotal(tt.parent, tt.cs)
			if got != tt.want {
				t.Fatalf("JudgeTotal = %s (%q), want %s", got, msg, tt.want)
			}
			if tt.msg == nil && msg != "" {
				t.Errorf("a message %q without a guard", msg)
			}
			rest := msg
			for _, m := range tt.msg {
				i := strings.Index(rest, m)
				if i < 0 {
					t.Fatalf("message %q does not say %q (after what came before)", msg, m)
				}
				rest = rest[i+len(m):]
			}
		})
	}
}

func TestPlansFirstAndTheChildsApproval(t *testing.T) {
	n := int64(10)
	tests := []struct {
		name       string
		manual     bool
		dryRun     bool
		limit      *int64
		plansFirst bool
	}{
		{"Automatic", false, false, nil, false},
		{"Manual", true, false, nil, true},
		{"Automatic with a total guard plans first", false, false, &n, true},
		{"a dry run with a total guard runs as a dry run", false, true, &n, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := testutil.MakeRequest("shop", "incident").Groups("a", "b").MaxReconsume(5)
			if tt.manual {
				w = w.Manual()
			}
			p := w.Obj()
			p.Spec.DryRun = tt.dryRun
			p.Spec.Limits.MaxTotalMessagesToReconsume = tt.limit
			if got := replay.PlansFirst(p); got != tt.plansFirst {
				t.Fatalf("PlansFirst = %v", got)
			}
			// Each child plans, and waits for the parent's decision,
			// exactly when the parent plans first; the total stays the
			// parent's, and the per-group guard each child's.
			c := ChildSpec(p, "a")
			if (c.Approval == v1alpha1.ApprovalManual) != tt.plansFirst {
				t.Errorf("child's approval %q", c.Approval)
			}
			if c.Limits == nil || c.Limits.MaxTotalMessagesToReconsume != nil || c.Limits.MaxMessagesToReconsume == nil || *c.Limits.MaxMessagesToReconsume != 5 {
				t.Errorf("child's limits %+v", c.Limits)
			}
			if p.Spec.Limits.MaxTotalMessagesToReconsume != tt.limit {
				t.Error("ChildSpec changed the parent's limits")
			}
		})
	}
	// Only the total: the child has no limits at all, as without one.
	p := testutil.MakeRequest("shop", "incident").Groups("a").Obj()
	p.Spec.Limits = &v1alpha1.Limits{MaxTotalMessagesToReconsume: &n}
	if c := ChildSpec(p, "a"); c.Limits != nil {
		t.Errorf("child's limits %+v", c.Limits)
	}
}

func TestContributions(t *testing.T) {
	planned := func(digest string, msgs int64) *v1alpha1.ReplayRequest {
		c := &v1alpha1.ReplayRequest{}
		c.Status.Plan = &v1alpha1.PlanSummary{Digest: digest, Totals: v1alpha1.ResultTotals{MessagesToReconsume: msgs}}
		return c
	}
	rows := []v1alpha1.GroupStatus{
		{Group: "a", Plan: "pa", MessagesToReconsume: 3},
		{Group: "b", Phase: v1alpha1.GroupPhase(v1alpha1.PhaseFailed), MessagesToReconsume: 0}, // failed to plan
		{Group: "c", Plan: "pc", MessagesToReconsume: 9},                                       // planned again since: not covered
		{Group: "d", Phase: v1alpha1.GroupNotAttempted},
	}
	children := []*v1alpha1.ReplayRequest{planned("pa", 3), {}, planned("pc2", 9), nil}
	p := testutil.MakeRequest("shop", "incident").Groups("a", "b", "c", "d").Manual().Obj()
	if got := Contributions(p, rows, children); len(got) != 1 || got[0] != (Contribution{"a", 3}) {
		t.Errorf("a plan's contributions %+v", got)
	}
	p.Spec.Approval, p.Spec.DryRun = v1alpha1.ApprovalAutomatic, true
	if got := Contributions(p, rows, children); len(got) != 3 || got[2].Group != "c" {
		t.Errorf("a dry run's contributions %+v", got)
	}
}
