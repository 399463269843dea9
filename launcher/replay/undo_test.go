package replay

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// An undo keeps how the replay reached its group and ran, and nothing of
// what it moved; the undone spec is not shared with it.
func TestUnitUndoSpec(t *testing.T) {
	n := int64(5)
	undone := v1alpha1.ReplayRequestSpec{
		Kafka:           v1alpha1.KafkaConnection{BootstrapServers: "k:9092"},
		Group:           "orders",
		Topics:          []v1alpha1.TopicSelector{{Name: "orders"}},
		Target:          v1alpha1.Target{ShiftBy: &n},
		WhenGroupActive: v1alpha1.GroupActiveWait,
		WaitTimeout:     &metav1.Duration{Duration: time.Minute},
		Consumers:       []v1alpha1.ConsumerRef{{Kind: v1alpha1.ConsumerDeployment, Name: "app"}},
		Limits:          &v1alpha1.Limits{MaxMessagesToReconsume: &n},
		DryRun:          true,
		Approval:        v1alpha1.ApprovalManual,
		Force:           true,
		CommitMode:      "Atomic",
		GroupType:       "Consumer",
	}
	got := UndoSpec(&undone, "rewind")
	if got.Target.UndoOf == nil || *got.Target.UndoOf != "rewind" || got.Target.ShiftBy != nil {
		t.Errorf("target %+v, want undoOf rewind only", got.Target)
	}
	if got.Kafka.BootstrapServers != "k:9092" || got.Group != "orders" || got.WhenGroupActive != v1alpha1.GroupActiveWait ||
		got.WaitTimeout == nil || got.WaitTimeout.Duration != time.Minute || len(got.Consumers) != 1 || got.Consumers[0].Name != "app" || got.CommitMode != "Atomic" || got.GroupType != "Consumer" {
		t.Errorf("the way to the group is not kept: %+v", got)
	}
	if got.Topics != nil || got.Limits != nil || got.DryRun || got.Approval != "" || got.Force {
		t.Errorf("kept what the undo does not copy: %+v", got)
	}
	got.Consumers[0].Name = "changed"
	if undone.Consumers[0].Name != "app" {
		t.Error("the undo's spec shares the undone spec's consumers")
	}
}

// One rule decides whether a request can be undone, for the launcher and
// the plugin alike: it succeeded with a Job, was no dry run, and applied
// something.
func TestUnitUndoable(t *testing.T) {
	done := func(edit func(*v1alpha1.ReplayRequest)) *v1alpha1.ReplayRequest {
		rr := &v1alpha1.ReplayRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rewind"}}
		rr.Status.Phase, rr.Status.JobName = v1alpha1.PhaseSucceeded, "rewind-1a2b3c4d"
		rr.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionSucceeded, Status: metav1.ConditionTrue, Reason: "Applied"}}
		rr.Status.Result = &v1alpha1.ReplayResult{Reason: "Applied", Totals: v1alpha1.ResultTotals{Partitions: 3, Applied: 1}}
		edit(rr)
		return rr
	}
	long := "x" + strings.Repeat("é", 200) // 401 bytes: byte 256 is inside a rune
	cases := []struct {
		name string
		rr   *v1alpha1.ReplayRequest
		rule UndoRule // empty: undoable
		says string
	}{
		{"succeeded and applied", done(func(*v1alpha1.ReplayRequest) {}), "", ""},
		{"an AlreadyApplied retry", done(func(r *v1alpha1.ReplayRequest) { r.Status.Result.Reason = "AlreadyApplied" }), "", ""},
		{"a dry run", done(func(r *v1alpha1.ReplayRequest) { r.Spec.DryRun = true }), UndoDryRun, "rewind was a dry run: it moved nothing"},
		{"a dry run by its result", done(func(r *v1alpha1.ReplayRequest) { r.Status.Result.DryRun = true }), UndoDryRun, "rewind was a dry run"},
		{"a dry run that failed", done(func(r *v1alpha1.ReplayRequest) {
			r.Spec.DryRun, r.Status.Conditions[0].Status = true, metav1.ConditionFalse
		}), UndoDryRun, "was a dry run"},
		{"running", done(func(r *v1alpha1.ReplayRequest) {
			r.Status.Conditions, r.Status.Phase, r.Status.Result = nil, v1alpha1.PhaseRunning, nil
		}), UndoNotFinished, "rewind has not finished yet (phase Running); undo it once it has succeeded"},
		{"new", done(func(r *v1alpha1.ReplayRequest) {
			r.Status = v1alpha1.ReplayRequestStatus{}
		}), UndoNotFinished, "(phase Pending)"},
		{"succeeded unknown", done(func(r *v1alpha1.ReplayRequest) { r.Status.Conditions[0].Status = metav1.ConditionUnknown }), UndoNotFinished, "has not finished yet"},
		{"failed", done(func(r *v1alpha1.ReplayRequest) {
			r.Status.Conditions[0].Status, r.Status.Conditions[0].Reason, r.Status.Conditions[0].Message = metav1.ConditionFalse, "GroupActive", "the group has members"
		}), UndoFailed, "rewind did not succeed (GroupActive: the group has members); only a request that succeeded"},
		{"failed with a long message", done(func(r *v1alpha1.ReplayRequest) {
			r.Status.Conditions[0].Status, r.Status.Conditions[0].Reason, r.Status.Conditions[0].Message = metav1.ConditionFalse, "PartiallyApplied", long
		}), UndoFailed, "(PartiallyApplied: x" + strings.Repeat("é", 127) + "); only"},
		{"no Job", done(func(r *v1alpha1.ReplayRequest) { r.Status.JobName = "" }), UndoNoJob, "rewind has no runner Job in status.jobName"},
		{"applied nothing", done(func(r *v1alpha1.ReplayRequest) { r.Status.Result.Totals.Applied = 0 }), UndoNothingApplied, "rewind applied no partition"},
		{"no result", done(func(r *v1alpha1.ReplayRequest) { r.Status.Result = nil }), UndoNothingApplied, "applied no partition"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Undoable(c.rr)
			if c.rule == "" {
				if err != nil {
					t.Fatalf("not undoable: %v", err)
				}
				return
			}
			var no *NotUndoable
			if !errors.As(err, &no) || no.Rule != c.rule || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("got %v (%#v), want rule %s saying %q", err, no, c.rule, c.says)
			}
		})
	}
}
