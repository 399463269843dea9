package cli

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spf13/cobra"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/render"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

func (a *app) historyCommand() *cobra.Command {
	var group, output string
	var all bool
	cmd := &cobra.Command{
		Use:   "history [--group GROUP]",
		Short: "Every run of a group, newest first, whichever path started it",
		Long: `List every runner Job (a request's, a runbook's, or one made by hand that the
launcher recorded) with its ReplayRecord: when, what started it, who asked and
who approved, the target, the outcome, whether offsets changed, and the
messages re-consumed or skipped (in parentheses: a dry run's plan). The Jobs
are the history: their retention (the launcher's --history-limit) is its
length.`,
		Example: `  kubectl replay history --group orders-service
  kubectl replay history -A -o json | jq '.[] | select(.offsetsChanged == "Yes")'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("history takes no arguments; --group GROUP chooses the group")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			entries, ns, err := a.history(cmd.Context(), group, all)
			if err != nil {
				return err
			}
			if output != "" {
				return printAs(a.streams.Out, output, entries)
			}
			fmt.Fprint(a.streams.Out, render.HistoryTable(palette(a.streams.Out), entries, group == ""))
			if len(entries) == 0 && !all {
				// Runs live in the namespace of whoever started them:
				// say which one was searched, and how to search them all.
				fmt.Fprintf(a.streams.ErrOut, "(searched namespace %s; -A searches every namespace)\n", ns)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&group, "group", "", "only this consumer group's runs")
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "every namespace's runs")
	outputFlag(cmd, &output, "the runs")
	return cmd
}

func (a *app) history(ctx context.Context, group string, all bool) (_ []render.HistoryEntry, ns string, err error) {
	c, ns, err := a.client()
	if err != nil {
		return nil, "", err
	}
	sel := client.MatchingLabels{v1alpha1.LabelRunner: v1alpha1.LabelRunnerValue}
	if group != "" {
		sel[v1alpha1.LabelGroup] = v1alpha1.LabelValue(group)
	}
	opts := []client.ListOption{sel}
	if !all {
		opts = append(opts, client.InNamespace(ns))
	}
	var jobs batchv1.JobList
	if err := c.List(ctx, &jobs, opts...); err != nil {
		return nil, "", apiError(err)
	}
	var recs v1alpha1.ReplayRecordList
	if err := c.List(ctx, &recs, opts...); err != nil {
		return nil, "", apiError(err)
	}
	return HistoryEntries(jobs.Items, recs.Items, group), ns, nil
}

// underParents moves the runs of one parent's children together, where
// the newest of them is; the order is otherwise kept.
func underParents(entries []render.HistoryEntry) []render.HistoryEntry {
	out := make([]render.HistoryEntry, 0, len(entries))
	done := map[string]bool{}
	for _, e := range entries {
		if e.Parent == "" {
			out = append(out, e)
			continue
		}
		key := e.Namespace + "/" + e.Parent
		if done[key] {
			continue
		}
		done[key] = true
		for _, f := range entries {
			if f.Parent == e.Parent && f.Namespace == e.Namespace {
				out = append(out, f)
			}
		}
	}
	return out
}

// HistoryEntries joins Jobs and their records (by namespace and name; a
// record whose Job is gone still counts), keeps the group's (by its full
// name: label values of long names are hashes), newest first.
func HistoryEntries(jobs []batchv1.Job, recs []v1alpha1.ReplayRecord, group string) []render.HistoryEntry {
	byName := map[string]*v1alpha1.ReplayRecord{}
	for i := range recs {
		byName[recs[i].Namespace+"/"+recs[i].Name] = &recs[i]
	}
	var out []render.HistoryEntry
	seen := map[string]bool{}
	for i := range jobs {
		j := &jobs[i]
		key := j.Namespace + "/" + j.Name
		seen[key] = true
		e := jobEntry(j, byName[key])
		if group == "" || e.Group == group {
			out = append(out, e)
		}
	}
	for i := range recs {
		r := &recs[i]
		if seen[r.Namespace+"/"+r.Name] {
			continue
		}
		e := recordEntry(r)
		if group == "" || e.Group == group {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, newerFirst)
	return underParents(out)
}

// newerFirst orders runs newest first. The times have a second's
// resolution, so runs of the same second are put in the order they must
// have happened: an undo after the run it undid, a request's apply after
// its plan; then by name, to be stable.
func newerFirst(x, y render.HistoryEntry) int {
	if c := y.When.Compare(x.When); c != 0 {
		return c
	}
	if x.Namespace == y.Namespace {
		switch {
		case x.UndoOf != "" && x.UndoOf == y.Name:
			return -1
		case y.UndoOf != "" && y.UndoOf == x.Name:
			return 1
		case x.Source == y.Source && x.Name == y.Name && x.Stage != y.Stage:
			return cmp.Compare(stageOrder(y.Stage), stageOrder(x.Stage))
		}
	}
	return cmp.Compare(x.Namespace+"/"+x.Job, y.Namespace+"/"+y.Job)
}

// stageOrder is a stage's place in a request's life.
func stageOrder(s string) int {
	if s == "plan" {
		return 0
	}
	return 1
}

func jobEntry(j *batchv1.Job, rec *v1alpha1.ReplayRecord) render.HistoryEntry {
	an := j.Annotations
	e := render.HistoryEntry{
		When: j.CreationTimestamp.Time, Namespace: j.Namespace, Job: j.Name,
		Stage: j.Labels[v1alpha1.LabelStage], Group: an[v1alpha1.AnnotationGroup],
		RequestedBy: an[v1alpha1.AnnotationRequestedBy], ApprovedBy: an[v1alpha1.AnnotationApprovedBy],
		Target: an[v1alpha1.AnnotationResolvedTarget], DryRun: an[v1alpha1.AnnotationDryRun] == "true",
		UndoOf: an[v1alpha1.AnnotationUndoOf],
		// A child request's Job names its parent (the full name: the
		// label's value of a long one is a hash).
		Parent: an[v1alpha1.AnnotationParent],
	}
	switch {
	case j.Labels[v1alpha1.LabelRequest] != "":
		e.Source, e.Name = "request", an[v1alpha1.AnnotationRequest]
	case j.Labels[v1alpha1.LabelRunbook] != "":
		e.Source, e.Name = "runbook", j.Labels[v1alpha1.LabelRunbook]
	default:
		e.Source, e.Name = "job", j.Name
	}
	if e.Name == "" {
		e.Name = j.Name
	}
	if e.Group == "" {
		e.Group = envOf(j, "REPLAY_GROUP")
	}
	e.Outcome = "Running"
	if o := an[v1alpha1.AnnotationOutcome]; o != "" {
		e.Outcome, e.Reason = o, an[v1alpha1.AnnotationReason]
	}
	if t, err := time.Parse(time.RFC3339, an[v1alpha1.AnnotationFinishedAt]); err == nil {
		e.When = t
	}
	e.Reconsumed, e.Skipped = intAnnotation(an[v1alpha1.AnnotationMessagesReconsumed]), intAnnotation(an[v1alpha1.AnnotationMessagesSkipped])
	target := e.Target
	if rec != nil {
		fromRecord(&e, rec)
	}
	if target != "" {
		// The request's target as the launcher resolved it (undo:NAME),
		// rather than the runner's (undo:<its input file>).
		e.Target = target
	}
	return e
}

func recordEntry(r *v1alpha1.ReplayRecord) render.HistoryEntry {
	e := render.HistoryEntry{When: r.CreationTimestamp.Time, Namespace: r.Namespace, Job: r.Name, Stage: r.Labels[v1alpha1.LabelStage], Parent: r.Annotations[v1alpha1.AnnotationParent]}
	switch {
	case r.Request != "":
		e.Source, e.Name = "request", r.Request
	case r.Runbook != "":
		e.Source, e.Name = "runbook", r.Runbook
	default:
		e.Source, e.Name = "job", r.Name
	}
	fromRecord(&e, r)
	return e
}

// fromRecord fills in what the record says; it is the whole of the run,
// so it wins over the Job's annotations.
func fromRecord(e *render.HistoryEntry, r *v1alpha1.ReplayRecord) {
	if r.Group != "" {
		e.Group = r.Group
	}
	if r.Target != "" {
		e.Target = r.Target
	}
	e.DryRun = r.DryRun
	e.Outcome = "Failed"
	if r.Outcome.Succeeded {
		e.Outcome = "Succeeded"
	}
	e.Reason = r.Outcome.Reason
	e.OffsetsChanged = string(r.Outcome.OffsetsChanged)
	if r.Outcome.FinishedAt != nil {
		e.When = r.Outcome.FinishedAt.Time
	}
	rec, skip := r.Totals.MessagesToReconsume, r.Totals.MessagesSkipped
	e.Reconsumed, e.Skipped = &rec, &skip
}

func intAnnotation(s string) *int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

// envOf reads a runner container's environment variable (a Job made by
// hand has no group annotation).
func envOf(j *batchv1.Job, name string) string {
	for _, c := range j.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == name && e.ValueFrom == nil {
				return e.Value
			}
		}
	}
	return ""
}
