package fanout

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

func parent() *v1alpha1.ReplayRequest {
	earliest := v1alpha1.PositionEarliest
	return &v1alpha1.ReplayRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "incident-42", UID: types.UID("p-uid"), Annotations: map[string]string{
			v1alpha1.AnnotationRequestedBy: "alice", v1alpha1.AnnotationRequestedByGroups: "team-orders", "note": "not copied",
		}},
		Spec: v1alpha1.ReplayRequestSpec{
			Kafka:           v1alpha1.KafkaConnection{BootstrapServers: "k:9092", SecretRef: &v1alpha1.LocalObjectReference{Name: "creds"}},
			Groups:          []string{"billing", "audit"},
			ContinueOnError: true,
			Parallelism:     2,
			Target:          v1alpha1.Target{Position: &earliest},
		},
	}
}

func TestChildIsTheParentsSpecForOneGroup(t *testing.T) {
	p := parent()
	c := Child(p, "audit")
	if c.Name != ChildName(p.Name, "audit") || c.Namespace != "shop" {
		t.Errorf("child %s/%s", c.Namespace, c.Name)
	}
	if c.Spec.Group != "audit" || c.Spec.Groups != nil || c.Spec.ContinueOnError || c.Spec.Parallelism != 0 {
		t.Errorf("child spec keeps a parent's settings: %+v", c.Spec)
	}
	if c.Spec.Kafka.SecretRef == nil || c.Spec.Kafka.SecretRef.Name != "creds" {
		t.Errorf("child spec lost the parent's kafka: %+v", c.Spec.Kafka)
	}
	if replay.IsParent(c) || !replay.IsParent(p) {
		t.Error("IsParent")
	}
	if c.Annotations[v1alpha1.AnnotationRequestedBy] != "alice" || c.Annotations[v1alpha1.AnnotationRequestedByGroups] != "team-orders" || c.Annotations["note"] != "" {
		t.Errorf("child annotations %v: want the parent's requester stamps only", c.Annotations)
	}
	if c.Labels[v1alpha1.LabelParent] != p.Name {
		t.Errorf("labels %v", c.Labels)
	}
	if o := metav1.GetControllerOf(c); o == nil || o.UID != p.UID || o.Kind != "ReplayRequest" {
		t.Errorf("controller %+v", o)
	}
	// Changing the child's spec does not reach the parent's.
	c.Spec.Kafka.SecretRef.Name = "other"
	if p.Spec.Kafka.SecretRef.Name != "creds" {
		t.Error("Child shares the parent's spec")
	}
	if err := CheckAdopted(p, Child(p, "audit"), "audit"); err != nil {
		t.Errorf("the parent's own child: %v", err)
	}
}

func TestCheckAdoptedRefusesWhatTheParentDidNotMake(t *testing.T) {
	p := parent()
	tests := []struct {
		name   string
		change func(c *v1alpha1.ReplayRequest)
		want   string
	}{
		{"no owner", func(c *v1alpha1.ReplayRequest) { c.OwnerReferences = nil }, "not controlled"},
		{"another parent's UID", func(c *v1alpha1.ReplayRequest) { c.OwnerReferences[0].UID = "other" }, "not controlled"},
		{"owner but not controller", func(c *v1alpha1.ReplayRequest) { f := false; c.OwnerReferences[0].Controller = &f }, "not controlled"},
		{"another target", func(c *v1alpha1.ReplayRequest) {
			l := v1alpha1.PositionLatest
			c.Spec.Target.Position = &l
		}, "spec"},
		{"another group", func(c *v1alpha1.ReplayRequest) { c.Spec.Group = "billing" }, "spec"},
		{"another Secret", func(c *v1alpha1.ReplayRequest) {
			c.Spec.Kafka.SecretRef = &v1alpha1.LocalObjectReference{Name: "admin-creds"}
		}, "spec"},
		{"another requester", func(c *v1alpha1.ReplayRequest) { c.Annotations[v1alpha1.AnnotationRequestedBy] = "mallory" }, "requested-by"},
		{"no parent label", func(c *v1alpha1.ReplayRequest) { delete(c.Labels, v1alpha1.LabelParent) }, "label"},
		{"other groups of the requester", func(c *v1alpha1.ReplayRequest) {
			c.Annotations[v1alpha1.AnnotationRequestedByGroups] = "system:masters"
		}, "requested-by-groups"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Child(p, "audit")
			tt.change(c)
			err := CheckAdopted(p, c, "audit")
			if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckAdopted = %v, want ErrTampered naming %q", err, tt.want)
			}
		})
	}
}

func finished(phase v1alpha1.Phase, reason string) []metav1.Condition {
	st := metav1.ConditionTrue
	if phase == v1alpha1.PhaseFailed {
		st = metav1.ConditionFalse
	}
	return []metav1.Condition{
		{Type: v1alpha1.ConditionSucceeded, Status: st, Reason: reason},
		{Type: v1alpha1.ConditionFinished, Status: metav1.ConditionTrue, Reason: reason},
	}
}

func TestRowOfAndOverall(t *testing.T) {
	p := parent()
	applied := Child(p, "billing")
	applied.Status.Conditions = finished(v1alpha1.PhaseSucceeded, "Applied")
	applied.Status.Result = &v1alpha1.ReplayResult{Reason: "Applied", Totals: v1alpha1.ResultTotals{Applied: 3, Moved: 3, MessagesToReconsume: 42}}
	active := Child(p, "audit")
	active.Status.Conditions = finished(v1alpha1.PhaseFailed, "GroupActive")
	active.Status.Result = &v1alpha1.ReplayResult{Reason: "GroupActive", ExitCode: 3, Error: "group has 2 members"}
	refused := Child(p, "search")
	refused.Status.Conditions = finished(v1alpha1.PhaseFailed, "InvalidTarget")
	refused.Status.Message = "target.time is in the future"
	deleted := Child(p, "ads")
	deleted.Status.JobName = "ads-job"
	deleted.Status.Conditions = finished(v1alpha1.PhaseFailed, "JobDeleted")

	row := RowOf("billing", applied, nil)
	if row.Child != applied.Name || row.Phase != "Succeeded" || row.Reason != "Applied" || row.Moved != 3 || row.MessagesToReconsume != 42 {
		t.Errorf("RowOf = %+v", row)
	}
	if s := StateOf(row); s != Succeeded {
		t.Errorf("StateOf = %s", s)
	}
	running := Child(p, "x")
	if r := RowOf("x", running, nil); r.Phase != "Pending" || StateOf(r) != Running {
		t.Errorf("a child not yet reconciled: %+v", r)
	}
	if r := RowOf("y", nil, nil); r.Phase != v1alpha1.GroupWaiting || StateOf(r) != Waiting {
		t.Errorf("no child: %+v", r)
	}
	given := v1alpha1.GroupStatus{Group: "z", Phase: v1alpha1.GroupNotAttempted, Reason: "NotAttempted"}
	if r := RowOf("z", nil, &given); r != given {
		t.Errorf("a given-up row changed: %+v", r)
	}

	results := func(cs ...*v1alpha1.ReplayRequest) []report.Result {
		var out []report.Result
		for _, c := range cs {
			out = append(out, ResultOf(c, RowOf(c.Spec.Group, c, nil)))
		}
		return out
	}
	tests := []struct {
		name         string
		children     []*v1alpha1.ReplayRequest
		notAttempted []string
		ok           bool
		reason       string
		says         []string
	}{
		{"all applied", []*v1alpha1.ReplayRequest{applied}, nil, true, "Applied", nil},
		{"one applied, one active", []*v1alpha1.ReplayRequest{applied, active}, nil, false, "PartiallyApplied", []string{"billing", "audit (GroupActive"}},
		{"none changed: the first failure's reason", []*v1alpha1.ReplayRequest{active, refused}, nil, false, "GroupActive", []string{"no group changed", "search (InvalidTarget: target.time is in the future)"}},
		{"refused before a Job: unchanged", []*v1alpha1.ReplayRequest{refused}, []string{"audit"}, false, "InvalidTarget", []string{"not attempted", "audit"}},
		{"a Job deleted without a result may have changed", []*v1alpha1.ReplayRequest{deleted}, nil, false, "PartiallyApplied", []string{"may have changed", "ads"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, reason, msg := Overall(results(tt.children...), tt.notAttempted, false)
			if ok != tt.ok || reason != tt.reason {
				t.Errorf("Overall = %v %s (%s), want %v %s", ok, reason, msg, tt.ok, tt.reason)
			}
			for _, s := range tt.says {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q does not say %q", msg, s)
				}
			}
		})
	}
}

// A child's approval is applied only when its parent (its controller, by
// UID) records its approval of its own plan and the parent's row of the
// child covers the child's plan digest; anything else says why, naming
// the parent.
func TestParentApproved(t *testing.T) {
	const childPlan, parentPlan = "0123456789abcdef", "sha256:parent"
	approved := func() (*v1alpha1.ReplayRequest, *v1alpha1.ReplayRequest) {
		p := parent()
		c := Child(p, "audit")
		c.Status.Plan = &v1alpha1.PlanSummary{Digest: childPlan}
		p.Status.Plan = &v1alpha1.PlanSummary{Digest: parentPlan}
		p.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: "bob", Digest: parentPlan}
		p.Status.Groups = []v1alpha1.GroupStatus{
			{Group: "billing", Child: Child(p, "billing").Name, Plan: "fedcba9876543210"},
			{Group: "audit", Child: c.Name, Plan: childPlan},
		}
		return p, c
	}
	if p, c := approved(); ParentApproved(p, c) != nil {
		t.Fatalf("the parent's approval covering the child's plan: %v", ParentApproved(p, c))
	}
	tests := []struct {
		name   string
		change func(p, c *v1alpha1.ReplayRequest) *v1alpha1.ReplayRequest
		want   string
	}{
		{"no parent", func(p, c *v1alpha1.ReplayRequest) *v1alpha1.ReplayRequest { return nil }, "incident-42 does not exist"},
		{"no controller", func(p, c *v1alpha1.ReplayRequest) *v1alpha1.ReplayRequest { c.OwnerReferences = nil; return p }, "controlled by no ReplayRequest"},
		{"a request of the parent's name made again", func(p, c *v1alpha1.ReplayRequest) *v1alpha1.ReplayRequest { p.UID = "other"; return p }, "is not its parent"},
		{"the parent undecided", func(p, c *v1alpha1.ReplayRequest) *v1alpha1.ReplayRequest { p.Status.Approval = nil; return p }, "incident-42's status records no approval of its plan"},
		{"the parent rejected", func(p, c *v1alpha1.ReplayRequest) *v1alpha1.ReplayRequest {
			p.Status.Approval.Decision = v1alpha1.ApprovalRejected
			return p
		}, "records no approval"},
		{"the parent approved another plan", func(p, c *v1alpha1.ReplayRequest) *v1alpha1.ReplayRequest {
			p.Status.Approval.Digest = "sha256:older"
			return p
		}, "records no approval"},
		{"the parent has no plan", func(p, c *v1alpha1.ReplayRequest) *v1alpha1.ReplayRequest { p.Status.Plan = nil; return p }, "records no approval"},
		{"the child planned again", func(p, c *v1alpha1.ReplayRequest) *v1alpha1.ReplayRequest {
			c.Status.Plan.Digest = "1111111111111111"
			return p
		}, "covers " + childPlan + " for it, not its plan 1111111111111111"},
		{"the row has no plan", func(p, c *v1alpha1.ReplayRequest) *v1alpha1.ReplayRequest { p.Status.Groups[1].Plan = ""; return p }, "covers no plan of it"},
		{"no row of the child", func(p, c *v1alpha1.ReplayRequest) *v1alpha1.ReplayRequest {
			p.Status.Groups = p.Status.Groups[:1]
			return p
		}, "does not cover it"},
		{"the child has no plan", func(p, c *v1alpha1.ReplayRequest) *v1alpha1.ReplayRequest { c.Status.Plan = nil; return p }, "no plan"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, c := approved()
			err := ParentApproved(tt.change(p, c), c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParentApproved = %v, want a refusal saying %q", err, tt.want)
			}
		})
	}
}
