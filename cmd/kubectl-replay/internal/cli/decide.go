package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spf13/cobra"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/exit"
	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/render"
	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/request"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// parentDigestPrefix starts the plan digest of a request over several
// groups (launcher/internal/fanout.PlanDigest).
const parentDigestPrefix = "sha256:"

// maxRejectReason is status.approval.reason's bound.
const maxRejectReason = 1024

func (a *app) approveCommand() *cobra.Command {
	var digest string
	var w waitFlags
	cmd := &cobra.Command{
		Use:   "approve NAME",
		Short: "Approve the plan of a request awaiting approval",
		Long: `Approve the plan of a request with --approval Manual: it shows the plan, then
sets kafkareplay.dev/approve to the plan's digest, which is what the launcher
applies, and nothing else: a plan made again in the meantime has another
digest and is not approved by this. --digest approves only that digest (the
one you reviewed). Needs the verb approve on replayrequests (the chart's
<release>-approver ClusterRole) besides patch.

A request over several groups is approved as one: its digest covers every
group's plan, and --wait follows every group to its end.`,
		Example: `  kubectl replay approve orders-rewind
  kubectl replay approve orders-rewind --digest 3f2a9c0d1e4b5a67 --wait`,
		Args: exactlyOneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.decide(cmd.Context(), args[0], "approve", func(rr *v1alpha1.ReplayRequest) (string, string, error) {
				d := rr.Status.Plan.Digest
				if digest != "" && digest != d {
					return "", "", digestMismatch(rr.Namespace, rr.Name, d, digest)
				}
				return v1alpha1.AnnotationApprove, d, nil
			}, w)
		},
	}
	cmd.Flags().StringVar(&digest, "digest", "", "approve only if the plan's digest is this one")
	w.add(cmd)
	return cmd
}

// digestMismatch is the refusal of an approve --digest that is not the
// plan's. It cannot tell a mistyped digest from a plan made again since
// the review, so it says both, the likelier first: "the plan is now X"
// read as if the plan had changed when a digest was mistyped (issue 32,
// friction 7). It is pure.
func digestMismatch(ns, name, plan, given string) error {
	review := render.ReplayCommand("plan", name, ns)
	// A request over several groups has one digest over every group's
	// plan, sha256:<64 hex> (docs/groups.md), of another form than one
	// group's.
	form, hex := fmt.Sprintf("%d lowercase hex digits", report.PlanDigestLength), given
	if rest, ok := strings.CutPrefix(plan, parentDigestPrefix); ok {
		form = fmt.Sprintf("%s and %d lowercase hex digits", parentDigestPrefix, len(rest))
		hex, _ = strings.CutPrefix(given, parentDigestPrefix)
		if hex == given || len(hex) != len(rest) {
			hex = ""
		}
	} else if len(given) != report.PlanDigestLength {
		hex = ""
	}
	if hex == "" || strings.Trim(hex, "0123456789abcdef") != "" {
		return exit.Errorf(exit.WrongState, "--digest %q is not a plan digest (%s, as %s shows); nothing was approved",
			render.Clean(given), form, review)
	}
	return exit.Errorf(exit.WrongState, "--digest %s is not the digest of %s's plan, which is %s; nothing was approved: check the digest you copied, or, if it is the plan you reviewed, the request was planned again since: review the new plan (%s)",
		given, name, plan, review)
}

func (a *app) rejectCommand() *cobra.Command {
	var reason string
	var w waitFlags
	cmd := &cobra.Command{
		Use:   "reject NAME --reason TEXT",
		Short: "Reject the plan of a request awaiting approval; nothing is applied",
		Long: `Reject the plan of a request with --approval Manual: sets kafkareplay.dev/reject
to the reason. The request fails with reason Rejected and applies nothing. The
same right as approve.`,
		Example: `  kubectl replay reject orders-rewind --reason "re-consumes the whole weekend; use ago:2h"`,
		Args:    exactlyOneName,
		RunE: func(cmd *cobra.Command, args []string) error {
			reason = strings.TrimSpace(reason)
			switch {
			case reason == "":
				return exit.Errorf(exit.Usage, "--reason is required: say why, it is kept in status.approval.reason")
			case utf8.RuneCountInString(reason) > maxRejectReason:
				return exit.Errorf(exit.Usage, "--reason is %d characters; at most %d are kept", utf8.RuneCountInString(reason), maxRejectReason)
			}
			return a.decide(cmd.Context(), args[0], "reject", func(*v1alpha1.ReplayRequest) (string, string, error) {
				return v1alpha1.AnnotationReject, reason, nil
			}, w)
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why the plan is rejected (required)")
	w.add(cmd)
	return cmd
}

// decide shows the plan and sets the decision's annotation with the
// resourceVersion it was read at, so that what is approved is what was
// shown: a request changed in between (a new plan) is read again and
// checked again.
func (a *app) decide(ctx context.Context, name, verb string, annotate func(*v1alpha1.ReplayRequest) (key, value string, err error), w waitFlags) error {
	c, ns, err := a.client()
	if err != nil {
		return err
	}
	first := ""
	for range 5 {
		rr, err := a.getRequest(ctx, name)
		if err != nil {
			return err
		}
		if err := request.Decidable(rr, verb); err != nil {
			return err
		}
		// A retry after a conflict decides only on the plan first read:
		// one made again meanwhile has not been shown to anyone.
		if first == "" {
			first = rr.Status.Plan.Digest
		} else if rr.Status.Plan.Digest != first {
			return exit.Errorf(exit.WrongState, "the plan of %s changed from %s to %s while you decided: review it again (%s)", name, first, rr.Status.Plan.Digest, render.ReplayCommand("plan", name, ns))
		}
		key, value, err := annotate(rr)
		if err != nil {
			return err
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
			"resourceVersion": rr.ResourceVersion,
			"annotations":     map[string]string{key: value},
		}})
		err = c.Patch(ctx, rr, client.RawPatch(types.MergePatchType, patch))
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			return apiError(err)
		}
		p := palette(a.streams.Out)
		pl := rr.Status.Plan
		switch {
		case verb == "approve" && replay.IsParent(rr):
			fmt.Fprintf(a.streams.Out, "%s plan %s of %s/%s: %s, %d partitions, %d messages re-consumed, %d skipped, target %s\n",
				p.Green("approved"), render.Clean(pl.Digest), ns, name, render.Groups(len(GroupRows(rr))), pl.Totals.Partitions, pl.Totals.MessagesToReconsume, pl.Totals.MessagesSkipped, render.Clean(orDash(pl.Target)))
			if children, err := a.children(ctx, rr); err == nil {
				fmt.Fprintln(a.streams.Out)
				fmt.Fprint(a.streams.Out, render.GroupPlanTable(p, ParentPlanOf(rr, children).Groups))
			} else {
				fmt.Fprintf(a.streams.ErrOut, "warning: the groups' plans: %v\n", err)
			}
			fmt.Fprintf(a.streams.Out, "the launcher approves each group's request with its own plan; each applies once its group is free\n")
		case verb == "approve":
			fmt.Fprintf(a.streams.Out, "%s plan %s of %s/%s: %d partitions, %d messages re-consumed, %d skipped, target %s\n",
				p.Green("approved"), render.Clean(pl.Digest), ns, name, pl.Totals.Partitions, pl.Totals.MessagesToReconsume, pl.Totals.MessagesSkipped, render.Clean(pl.Target))
			if full, err := a.loadPlan(ctx, name); err == nil {
				printPlanTable(a, full)
			} else {
				fmt.Fprintf(a.streams.ErrOut, "warning: the plan's record: %v\n", err)
			}
			fmt.Fprintf(a.streams.Out, "the launcher applies it once the group is free\n")
		default:
			fmt.Fprintf(a.streams.Out, "%s plan %s of %s/%s: %s\n", p.Red("rejected"), render.Clean(pl.Digest), ns, name, render.Clean(value))
		}
		if !w.wait {
			return nil
		}
		return a.follow(ctx, ns, name, w.timeout)
	}
	return exit.Errorf(exit.APIError, "%s of %s: the request kept changing while being %sd; try again", verb, name, verb)
}

func printPlanTable(a *app, pl *Plan) {
	fmt.Fprintln(a.streams.Out)
	fmt.Fprint(a.streams.Out, render.PlanTable(palette(a.streams.Out), pl.Rows, pl.Totals))
}
