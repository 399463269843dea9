package cli

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/spf13/cobra"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/exit"
	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/request"
)

func (a *app) undoCommand() *cobra.Command {
	var o request.UndoOptions
	var maxReconsume, maxTotal int64
	var output string
	var w waitFlags
	cmd := &cobra.Command{
		Use:   "undo NAME [--force]",
		Short: "Create the request that undoes a request that applied",
		Long: `Create a ReplayRequest with target.undoOf NAME: each partition the request
moved goes back to the offset it had before, as its ReplayRecord shows, under
the undo rules (docs/usage.md, "Undo"): a partition whose consumers have moved
on in a way a restore would re-consume or skip is left alone and listed with
the reason; --force restores those too. The undo has the same group, Kafka
connection, consumers, wait and commit mode as NAME, and is named NAME-undo
unless --name.

Of a request over several groups: one request that undoes every group whose
request succeeded (a parent that failed may have some); the others are
left, and its describe says why.`,
		Example: `  kubectl replay undo orders-rewind --wait
  kubectl replay undo orders-rewind --force --name orders-rewind-undo-2
  kubectl replay undo orders-rewind --approval Manual --wait   # review the restore first`,
		Args: exactlyOneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			if output != "" && w.wait {
				return exit.Errorf(exit.Usage, "--output prints the request without creating it; it does not go with --wait")
			}
			if cmd.Flags().Changed(request.FlagMaxMessagesToReconsume) {
				o.MaxMessagesToReconsume = &maxReconsume
			}
			if cmd.Flags().Changed(request.FlagMaxTotalMessagesToReconsume) {
				o.MaxTotalMessagesToReconsume = &maxTotal
			}
			undone, err := a.getRequest(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			rr, err := request.Undo(undone, o)
			if err != nil {
				return err
			}
			if output != "" {
				return printManifest(a.streams.Out, output, rr)
			}
			c, _, _ := a.client()
			if err := c.Create(cmd.Context(), rr); err != nil {
				if apierrors.IsAlreadyExists(err) {
					return exit.Errorf(exit.APIError, "replayrequest %q already exists (an undo made before?): kubectl replay describe %s; --name chooses another name", rr.Name, rr.Name)
				}
				return apiError(err)
			}
			fmt.Fprintf(a.streams.Out, "replayrequest.kafkareplay.dev/%s created (undoes %s)\n", rr.Name, undone.Name)
			if !w.wait {
				return nil
			}
			return a.follow(cmd.Context(), rr.Namespace, rr.Name, w.timeout)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.Force, request.FlagForce, false, "restore also the partitions the undo rules leave alone (spec.force)")
	f.StringVar(&o.Name, "name", "", "name of the undo request (default NAME-undo)")
	f.StringVar(&o.Approval, request.FlagApproval, "", "Manual: plan the undo and wait for an approval (spec.approval)")
	f.Int64Var(&maxReconsume, request.FlagMaxMessagesToReconsume, 0, "refuse the undo if it re-consumes more than this (spec.limits.maxMessagesToReconsume); of several groups, per group")
	f.Int64Var(&maxTotal, request.FlagMaxTotalMessagesToReconsume, 0, "the undo of several groups: refuse it (nothing applied) if all groups together re-consume more than this; its groups plan first (spec.limits.maxTotalMessagesToReconsume)")
	f.BoolVar(&o.AllowSkip, request.FlagAllowSkip, false, "let the undo move offsets forward where the group holds no run ID to vouch for them, as the undo of a share group's rewind does (spec.limits.allowSkip)")
	f.StringVar(&o.CommitMode, request.FlagCommitMode, "", "Plain, Atomic or Auto instead of NAME's commit mode (spec.commitMode)")
	outputFlag(cmd, &output, "the undo request without creating it")
	w.add(cmd)
	return cmd
}
