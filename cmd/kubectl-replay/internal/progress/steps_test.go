package progress

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

type req struct{ v1alpha1.ReplayRequest }

func mk() *req {
	r := &req{}
	r.Name, r.Namespace = "r", "shop"
	return r
}

func (r *req) manual() *req { r.Spec.Approval = v1alpha1.ApprovalManual; return r }
func (r *req) consumers() *req {
	r.Spec.Consumers = []v1alpha1.ConsumerRef{{Kind: v1alpha1.ConsumerDeployment, Name: "c"}}
	return r
}
func (r *req) held() *req {
	r.Status.Consumers = []v1alpha1.ConsumerStatus{{Kind: v1alpha1.ConsumerDeployment, Name: "c", State: v1alpha1.ConsumerRecorded}}
	return r
}
func (r *req) dryRun() *req { r.Spec.DryRun = true; return r }
func (r *req) cond(typ string, st metav1.ConditionStatus, reason, msg string) *req {
	r.Status.Conditions = append(r.Status.Conditions, metav1.Condition{Type: typ, Status: st, Reason: reason, Message: msg})
	return r
}
func (r *req) accepted() *req {
	return r.cond(v1alpha1.ConditionAccepted, metav1.ConditionTrue, "Accepted", "target resolved")
}
func (r *req) running(msg string) *req {
	return r.cond(v1alpha1.ConditionRunning, metav1.ConditionTrue, "PodRunning", msg)
}
func (r *req) finished(ok bool, reason, msg string) *req {
	st := metav1.ConditionFalse
	if ok {
		st = metav1.ConditionTrue
	}
	r.cond(v1alpha1.ConditionSucceeded, st, reason, msg)
	r.Status.Result = &v1alpha1.ReplayResult{Reason: reason}
	return r.cond(v1alpha1.ConditionFinished, metav1.ConditionTrue, reason, msg)
}
func (r *req) planned() *req {
	r.Status.Plan = &v1alpha1.PlanSummary{Digest: "0123456789abcdef", Totals: v1alpha1.ResultTotals{Partitions: 3, MessagesToReconsume: 42}}
	return r
}
func (r *req) approved() *req {
	r.Status.Approval = &v1alpha1.ApprovalStatus{Decision: v1alpha1.ApprovalApproved, By: "bob"}
	return r
}

// summary is the steps as "name:state" words, the detail left out.
func summary(steps []Step) string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Name+":"+s.State.Symbol())
	}
	return strings.Join(out, " ")
}

func TestSteps(t *testing.T) {
	cases := []struct {
		name string
		rr   *req
		want string
		over bool
		// detail, when set, must be in the named step's detail.
		step, detail string
	}{
		{name: "unseen", rr: mk(), want: "accepted:… apply:·", step: StepAccepted, detail: "waiting for the launcher"},
		{name: "waiting for the group", rr: mk().cond(v1alpha1.ConditionAccepted, metav1.ConditionTrue, "WaitingForGroup", "orders-1 runs first"), want: "accepted:… apply:·", step: StepAccepted, detail: "orders-1 runs first"},
		{name: "refused at acceptance", rr: mk().cond(v1alpha1.ConditionAccepted, metav1.ConditionFalse, "InvalidTarget", "bad").finished(false, "InvalidTarget", "bad"), want: "accepted:✗ apply:-", over: true},
		{name: "running", rr: mk().accepted().running("runner pod running"), want: "accepted:✓ apply:…", step: StepApply, detail: "runner pod running"},
		{name: "succeeded", rr: mk().accepted().finished(true, "Applied", "3 moved"), want: "accepted:✓ apply:✓", over: true},
		{name: "failed in the run", rr: mk().accepted().finished(false, "GroupActive", "members"), want: "accepted:✓ apply:✗", over: true, step: StepApply, detail: "GroupActive: members"},
		{name: "dry run", rr: mk().dryRun().accepted().finished(true, "DryRun", "planned"), want: "accepted:✓ dry run:✓", over: true},
		{name: "manual, planning", rr: mk().manual().accepted().running("planning"), want: "accepted:✓ plan:… approval:· apply:·"},
		{name: "manual, awaiting", rr: mk().manual().accepted().planned().cond(v1alpha1.ConditionAwaitingApproval, metav1.ConditionTrue, "PlanReady", "annotate"),
			want: "accepted:✓ plan:✓ approval:… apply:·", step: StepApproval, detail: "kubectl replay approve r -n shop (or kubectl replay reject r -n shop --reason ...)"},
		{name: "manual, approved, applying", rr: mk().manual().accepted().planned().approved().running("applying"), want: "accepted:✓ plan:✓ approval:✓ apply:…", step: StepApproval, detail: "approved by bob"},
		{name: "manual, rejected", rr: mk().manual().accepted().planned().cond(v1alpha1.ConditionAwaitingApproval, metav1.ConditionFalse, "Rejected", "no").finished(false, "Rejected", "no"),
			want: "accepted:✓ plan:✓ approval:✗ apply:-", over: true},
		{name: "manual, expired", rr: mk().manual().accepted().planned().cond(v1alpha1.ConditionAwaitingApproval, metav1.ConditionFalse, "Expired", "nobody decided").finished(false, "Expired", "nobody decided"),
			want: "accepted:✓ plan:✓ approval:✗ apply:-", over: true, step: StepApproval, detail: "Expired"},
		{name: "manual, plan refused by a guard", rr: mk().manual().accepted().finished(false, "LimitExceeded", "too many"), want: "accepted:✓ plan:✗ approval:- apply:-", over: true, step: StepPlan, detail: "LimitExceeded"},
		{name: "consumers pausing", rr: mk().consumers().accepted().cond(v1alpha1.ConditionConsumersPaused, metav1.ConditionFalse, "Pausing", "pausing deploy/c"),
			want: "accepted:✓ pause consumers:… apply:· restore consumers:·"},
		{name: "consumers paused, running", rr: mk().consumers().accepted().cond(v1alpha1.ConditionConsumersPaused, metav1.ConditionTrue, "Paused", "paused").running("run"),
			want: "accepted:✓ pause consumers:✓ apply:… restore consumers:·"},
		// Finished but the consumers not back yet: --wait goes on.
		{name: "finished, restoring", rr: mk().consumers().accepted().cond(v1alpha1.ConditionConsumersPaused, metav1.ConditionTrue, "Paused", "paused").finished(true, "Applied", "ok"),
			want: "accepted:✓ pause consumers:✓ apply:✓ restore consumers:…", over: false},
		{name: "restored", rr: mk().consumers().accepted().cond(v1alpha1.ConditionConsumersPaused, metav1.ConditionFalse, "Restored", "no longer paused").finished(true, "Applied", "ok").cond(v1alpha1.ConditionConsumersRestored, metav1.ConditionTrue, "Restored", "back to 2"),
			want: "accepted:✓ pause consumers:✓ apply:✓ restore consumers:✓", over: true},
		{name: "pause failed", rr: mk().consumers().accepted().cond(v1alpha1.ConditionConsumersPaused, metav1.ConditionFalse, "PauseFailed", "forbidden").finished(false, "PauseFailed", "forbidden"),
			want: "accepted:✓ pause consumers:✗ apply:- restore consumers:-", over: true},
		{name: "finished, a consumer still recorded", rr: mk().consumers().accepted().cond(v1alpha1.ConditionConsumersPaused, metav1.ConditionFalse, "PauseFailed", "forbidden").finished(false, "PauseFailed", "forbidden").held(),
			want: "accepted:✓ pause consumers:✗ apply:- restore consumers:…", over: false},
		{name: "a dry run pauses nothing", rr: mk().consumers().dryRun().accepted().running("run"), want: "accepted:✓ dry run:…"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			steps := Steps(&c.rr.ReplayRequest)
			if got := summary(steps); got != c.want {
				t.Errorf("Steps = %s, want %s", got, c.want)
			}
			if got := Over(&c.rr.ReplayRequest); got != c.over {
				t.Errorf("Over = %v, want %v", got, c.over)
			}
			if c.step != "" {
				for _, s := range steps {
					if s.Name == c.step && !strings.Contains(s.Detail, c.detail) {
						t.Errorf("%s detail %q, want %q in it", s.Name, s.Detail, c.detail)
					}
				}
			}
		})
	}
}
