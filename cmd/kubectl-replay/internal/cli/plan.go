package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spf13/cobra"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/exit"
	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/progress"
	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/render"
	"github.com/kafka-replay/kafka-replay/launcher/replay"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// Plan is a request's plan, as `kubectl replay plan -o json` prints it.
type Plan struct {
	Request   string `json:"request"`
	Namespace string `json:"namespace"`
	Group     string `json:"group"`
	// Digest is what approve sets kafkareplay.dev/approve to; empty for a
	// dry run's plan, which nobody approves.
	Digest    string       `json:"digest,omitempty"`
	Target    string       `json:"target,omitempty"`
	Record    string       `json:"record"`
	PlannedAt *metav1.Time `json:"plannedAt,omitempty"`
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`
	Warnings  []string     `json:"warnings,omitempty"`
	// InternalTopics are, with deleteAllInternalTopics, the streams
	// group's internal topics the plan deletes once its offsets are moved
	// (bound by its digest); nil when it deletes none.
	InternalTopics []string                 `json:"internalTopics,omitempty"`
	Totals         render.PlanTotals        `json:"totals"`
	Rows           []render.PlanRow         `json:"partitions"`
	Approval       *v1alpha1.ApprovalStatus `json:"approval,omitempty"`
}

func (a *app) planCommand() *cobra.Command {
	var output string
	var w waitFlags
	cmd := &cobra.Command{
		Use:   "plan NAME",
		Short: "Show the plan of a request: every partition, largest move first, with totals",
		Long: `Show the plan of a request with --approval Manual (or of a finished dry run):
per partition the committed offset, the new one and the delta (+ re-consumed,
- skipped), sorted by the largest move, with totals. It comes from the
planning Job's ReplayRecord, so it has every partition, not only the ten in
status.plan.

Of a request over several groups: the one digest an approval names, which
covers every group's plan; per group its request, its plan's digest and
totals; and the largest moves across the groups. plan REQUEST of a group's
request shows that group's every partition.

With --wait it first waits, showing the steps on stderr, until the plan is
ready or the request has finished; a request that failed before its plan
was ready (a guard refused it, say) exits with its reason at once.`,
		Example: `  kubectl replay plan orders-rewind
  kubectl replay plan orders-rewind --wait --timeout 5m
  kubectl replay plan orders-rewind -o json | jq '.totals'`,
		Args: exactlyOneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			rr, err := a.getRequest(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if w.wait {
				if rr, err = a.watchUntil(cmd.Context(), rr.Namespace, rr.Name, w.timeout, PlanSettled, a.streams.ErrOut); err != nil {
					return err
				}
				if finished, succeeded := progress.Finished(rr); finished && !succeeded {
					return a.outcome(rr)
				}
			}
			if replay.IsParent(rr) {
				pl, err := a.loadParentPlan(cmd.Context(), rr)
				if err != nil {
					return err
				}
				if output != "" {
					return printAs(a.streams.Out, output, pl)
				}
				printParentPlan(a.streams.Out, palette(a.streams.Out), pl)
				return nil
			}
			pl, err := a.planOf(cmd.Context(), rr)
			if err != nil {
				return err
			}
			if output != "" {
				return printAs(a.streams.Out, output, pl)
			}
			printPlan(a.streams.Out, palette(a.streams.Out), pl)
			return nil
		},
	}
	outputFlag(cmd, &output, "the plan")
	cmd.Flags().BoolVar(&w.wait, "wait", false, "wait until the plan is ready or the request has finished (a failure exits with its reason), then show the plan")
	cmd.Flags().DurationVar(&w.timeout, "timeout", 0, "with --wait, give up waiting after this long (exit 6; the request goes on); 0 waits as long as it takes")
	return cmd
}

// PlanSettled reports whether plan --wait stops waiting: the plan awaits
// a decision, or the request has finished (a dry run's plan, or a failure
// that no plan will follow). Waiting for the plan alone would wait out the
// timeout on a request whose planning failed.
func PlanSettled(rr *v1alpha1.ReplayRequest) bool {
	if finished, _ := progress.Finished(rr); finished {
		return true
	}
	return rr.Status.Phase == v1alpha1.PhaseAwaitingApproval && rr.Status.Plan != nil
}

func (a *app) getRequest(ctx context.Context, name string) (*v1alpha1.ReplayRequest, error) {
	c, ns, err := a.client()
	if err != nil {
		return nil, err
	}
	var rr v1alpha1.ReplayRequest
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &rr); err != nil {
		return nil, notFound(err, "replayrequest", name, ns)
	}
	return &rr, nil
}

// planRecord is the record that holds a request's plan: the planning Job's
// (approval: Manual), or a finished dry run's own Job's.
func planRecord(rr *v1alpha1.ReplayRequest) (string, error) {
	if p := rr.Status.Plan; p != nil && p.JobName != "" {
		return p.JobName, nil
	}
	if rr.Spec.DryRun && rr.Status.JobName != "" && rr.Status.Result != nil {
		return rr.Status.JobName, nil
	}
	if rr.Spec.Approval != v1alpha1.ApprovalManual && !rr.Spec.DryRun {
		return "", exit.Errorf(exit.WrongState, "%s has no plan: it is neither --approval Manual nor a dry run (kubectl replay describe %s shows what it did)", rr.Name, rr.Name)
	}
	phase := rr.Status.Phase
	if phase == "" {
		phase = v1alpha1.PhasePending
	}
	return "", exit.Errorf(exit.WrongState, "%s has no plan yet (phase %s); %s waits for it", rr.Name, phase, render.ReplayCommand("plan", rr.Name, rr.Namespace, "--wait"))
}

func (a *app) loadPlan(ctx context.Context, name string) (*Plan, error) {
	rr, err := a.getRequest(ctx, name)
	if err != nil {
		return nil, err
	}
	return a.planOf(ctx, rr)
}

func (a *app) planOf(ctx context.Context, rr *v1alpha1.ReplayRequest) (*Plan, error) {
	recName, err := planRecord(rr)
	if err != nil {
		return nil, err
	}
	c, ns, _ := a.client()
	var rec v1alpha1.ReplayRecord
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: recName}, &rec); err != nil {
		return nil, notFound(err, "replayrecord (the plan's)", recName, ns)
	}
	parts, err := replay.RecordPartitions(&rec)
	if err != nil {
		return nil, exit.Errorf(exit.APIError, "replayrecord %s: %w", recName, err)
	}
	rows, tot := render.PlanRows(parts)
	pl := &Plan{Request: rr.Name, Namespace: rr.Namespace, Group: replay.Group(rr), Record: recName, Target: rec.Target, Warnings: rec.Warnings, Rows: rows, Totals: tot, Approval: rr.Status.Approval}
	if it := rec.InternalTopics; it != nil {
		pl.InternalTopics = append([]string{}, it.Planned...)
	}
	if p := rr.Status.Plan; p != nil {
		pl.Digest, pl.PlannedAt, pl.ExpiresAt = p.Digest, p.PlannedAt, p.ExpiresAt
		if p.Target != "" {
			pl.Target = p.Target
		}
	}
	return pl, nil
}

func printPlan(w io.Writer, p render.Palette, pl *Plan) {
	if pl.Digest != "" {
		fmt.Fprintf(w, "Plan %s of %s/%s: group %s, target %s\n", p.Bold(render.Clean(pl.Digest)), pl.Namespace, pl.Request, render.Clean(pl.Group), render.Clean(pl.Target))
	} else {
		fmt.Fprintf(w, "Dry run %s/%s: group %s, target %s\n", pl.Namespace, pl.Request, render.Clean(pl.Group), render.Clean(pl.Target))
	}
	if pl.PlannedAt != nil {
		fmt.Fprintf(w, "Planned at %s", pl.PlannedAt.UTC().Format("2006-01-02T15:04:05Z"))
		if pl.ExpiresAt != nil && pl.Approval == nil {
			fmt.Fprintf(w, ", expires at %s", pl.ExpiresAt.UTC().Format("2006-01-02T15:04:05Z"))
		}
		fmt.Fprintln(w)
	}
	if pl.InternalTopics != nil {
		// Before the partitions: a deletion is what an approval must not
		// miss.
		fmt.Fprintf(w, "%s once the offsets are moved: %s (an undo cannot recreate them)\n", p.Bold("Deletes internal topics"), render.Clean(strings.Join(orNoneList(pl.InternalTopics), ", ")))
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, render.PlanTable(p, pl.Rows, pl.Totals))
	for _, wn := range pl.Warnings {
		fmt.Fprintf(w, "warning: %s\n", render.Clean(wn))
	}
	switch {
	case pl.Approval != nil:
		fmt.Fprintf(w, "%s by %s\n", render.Clean(string(pl.Approval.Decision)), render.Clean(orUnknown(pl.Approval.By)))
	case pl.Digest != "":
		fmt.Fprintf(w, "\napprove: %s\nreject:  %s\n", render.ReplayCommand("approve", pl.Request, pl.Namespace), render.ReplayCommand("reject", pl.Request, pl.Namespace, `--reason "..."`))
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func orNoneList(ts []string) []string {
	if len(ts) == 0 {
		return []string{"none (the topology names none)"}
	}
	return ts
}
