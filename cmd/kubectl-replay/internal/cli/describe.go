package cli

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spf13/cobra"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/render"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

func (a *app) describeCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "describe NAME",
		Short: "Show a request: outcome, conditions, who asked and approved, and every partition with a bar",
		Long: `Show a request: its outcome, conditions, who asked for it and who approved it,
and, from its Job's ReplayRecord, every partition with a bar that shows where
the group was (o) and where it went relative to the log's start and end: back
(<) over the messages it consumes again (=), or forward (>) past the ones it
skips (-). Colour only on a terminal (and never with NO_COLOR).

Of a request over several groups: how the groups were chosen, the overall
outcome, the decision on the one plan, and one row per group with its
request, phase, reason and counts; describe REQUEST shows a group's
partitions.`,
		Example: `  kubectl replay describe orders-rewind
  kubectl replay describe orders-rewind -o yaml`,
		Args: exactlyOneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			d, err := a.describe(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if output != "" {
				return printAs(a.streams.Out, output, d)
			}
			fmt.Fprint(a.streams.Out, render.Describe(palette(a.streams.Out), *d))
			return nil
		},
	}
	outputFlag(cmd, &output, "the request and every partition")
	return cmd
}

func (a *app) describe(ctx context.Context, name string) (*render.Description, error) {
	rr, err := a.getRequest(ctx, name)
	if err != nil {
		return nil, err
	}
	d := &render.Description{Request: rr}
	if replay.IsParent(rr) {
		// Its partitions are its children's: describe REQUEST shows them.
		d.Groups = GroupRows(rr)
		return d, nil
	}
	if rr.Status.JobName != "" {
		c, ns, _ := a.client()
		var rec v1alpha1.ReplayRecord
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: rr.Status.JobName}, &rec)
		switch {
		case err == nil:
			parts, perr := replay.RecordPartitions(&rec)
			if perr == nil {
				d.Record, d.Complete, d.Partitions = rec.Name, rec.Complete, parts
			} else {
				fmt.Fprintf(a.streams.ErrOut, "warning: replayrecord %s: %v; partitions from status\n", rec.Name, perr)
			}
		case apierrors.IsNotFound(err):
			// Not finished yet, or gone with its Job: status has the first.
		default:
			return nil, apiError(err)
		}
	}
	if d.Record == "" && rr.Status.Result != nil {
		d.Partitions = statusPartitions(rr.Status.Result)
	}
	return d, nil
}

// statusPartitions are status.result's partitions (maybe truncated) in the
// runner's form.
func statusPartitions(r *v1alpha1.ReplayResult) []report.Partition {
	out := make([]report.Partition, 0, len(r.Partitions))
	for _, p := range r.Partitions {
		out = append(out, report.Partition{Topic: p.Topic, Partition: p.Partition, PreviousOffset: p.PreviousOffset, NewOffset: p.NewOffset, Delta: p.Delta, Clamped: p.Clamped, Note: p.Note, Error: p.Error})
	}
	return out
}
