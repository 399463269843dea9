package runner

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// A run over several groups (--group repeated, --all-groups) is, for each
// group in turn, the run of one group: its own kind check, emptiness check
// and wait, plan, guards (--max-messages-to-reconsume is per group), one
// commit carrying the run ID's metadata, and read-back. The groups share
// one Kafka client, the run ID and the target, resolved once (an ago:
// target is the same instant for every group). Groups run one after the
// other, never two at once: a run holds no group while it waits for
// another, and Kafka's requests grow by a constant per group (see
// docs/groups.md), never per partition.
//
// Before each group's commit the result file and termination message say
// what is true until its read-back: the groups before it as they ended,
// this one OutcomeUnknown, the rest not attempted. A run killed at any
// point leaves a result that says exactly what may have changed.

// groupsRun is the state of a run over several groups.
type groupsRun struct {
	cfg    *config.Config
	log    *slog.Logger
	now    func() time.Time
	stdout io.Writer
	red    *config.Redactor
	// generatedID is set when the run made its run ID up.
	generatedID bool
	// second are the second client's options (run.second), every group's;
	// reader is the second client that reads every group's offsets
	// (run.reader).
	second []kgo.Opt
	reader *kgo.Client
}

// mainGroups is Main for a run over several groups; cfgErr is Load's.
func mainGroups(ctx context.Context, cfg *config.Config, cfgErr error, log *slog.Logger, stdout io.Writer, red *config.Redactor) int {
	m := &groupsRun{cfg: cfg, log: log, now: time.Now, stdout: stdout, red: red}
	res := &report.MultiResult{Schema: report.MultiSchema, RunID: cfg.RunID, Target: report.Target{Given: cfg.To},
		DryRun: cfg.DryRun, ContinueOnError: cfg.ContinueOnError, Selected: slices.Clone(cfg.Groups), StartedAt: m.now().UTC()}
	forgetGoroutinePanics()
	if cfgErr != nil {
		m.failAll(ctx, res, cfgErr)
	} else {
		m.execute(ctx, res)
	}
	res.FinishedAt = m.now().UTC()
	m.emit(res)
	attrs := []any{"exitCode", int(res.ExitCode), "reason", res.Reason, "groups", len(res.Groups), "notAttempted", len(res.NotAttempted),
		"duration", res.FinishedAt.Sub(res.StartedAt).Round(time.Millisecond).String()}
	if kib, ok := peakRSSKiB(); ok {
		attrs = append(attrs, "peakRSSKiB", kib)
	}
	log.Info("finished", attrs...)
	return int(res.ExitCode)
}

// failAll ends the run before any group ran: its exit code, reason and
// error are those of one group's run failing so (run.fail's rules).
func (m *groupsRun) failAll(ctx context.Context, res *report.MultiResult, err error) {
	r := &run{cfg: m.cfg, log: m.log, now: m.now}
	one := r.failCtx(ctx, &report.Result{}, err)
	res.ExitCode, res.Reason, res.Error = one.ExitCode, one.Reason, one.Error
	res.NotAttempted = res.Selected
}

func (m *groupsRun) execute(ctx context.Context, res *report.MultiResult) {
	top := &run{cfg: m.cfg, log: m.log, now: m.now}
	top.ensureRunID()
	m.generatedID, res.RunID = top.generatedID, m.cfg.RunID
	client, err := top.connect()
	if err != nil {
		m.failAll(ctx, res, err)
		return
	}
	defer client.Release()
	defer top.reader.Close()
	m.second, m.reader = top.second, top.reader
	if m.cfg.AllGroups {
		groups, err := m.listGroups(ctx, top)
		if err != nil {
			m.failAll(ctx, res, err)
			return
		}
		res.Selected = groups
		m.log.Info("groups listed", "setting", config.Ref(config.FlagAllGroups), "groups", len(groups))
	}
	for i, g := range res.Selected {
		if ctx.Err() != nil {
			res.NotAttempted = res.Selected[i:]
			break
		}
		one := m.runGroup(ctx, client, g, res)
		res.Groups = append(res.Groups, *one)
		stop := one.ExitCode == report.ExitInternal || one.ExitCode == report.ExitInterrupted ||
			(one.ExitCode != report.ExitOK && !m.cfg.ContinueOnError)
		if stop {
			res.NotAttempted = res.Selected[i+1:]
			break
		}
	}
	res.Decide()
}

// runGroup runs one group as a run of its own; whole is the run so far,
// which the pending outcome before its commit is written into.
func (m *groupsRun) runGroup(ctx context.Context, client *kafkaClient, group string, whole *report.MultiResult) (res *report.Result) {
	r := &run{cfg: m.cfg.ForGroup(group), log: m.log.With("group", group), now: m.now, stdout: m.stdout, red: m.red, generatedID: m.generatedID, second: m.second, reader: m.reader}
	r.record = func(p *report.Result) error {
		_, err := m.writeRecorded(pendingOf(whole, p))
		return err
	}
	res = r.result()
	func() {
		// As Main: whatever the group's run found out when it panicked
		// is still in res.
		defer func() {
			if v := recover(); v != nil {
				res = r.crashed(res, newPanicError(v))
			}
		}()
		r.begin(res, whole.StartedAt)
		res = r.executeOn(ctx, client, res)
	}()
	if p := takeGoroutinePanic(); p != nil && res.Reason != report.ReasonInternalError {
		res = r.crashed(res, p)
	}
	res.FinishedAt = m.now().UTC()
	res.Summarize()
	redactResult(res, m.red)
	return res
}

// pendingOf is what is true of the run while p's commit is under way:
// the run's outcome decided over the groups before and p (OutcomeUnknown),
// with the groups after p not attempted. Of the groups before, it keeps
// those that failed, without their partitions; those that ended well are
// left out, and the error names those at this run's commit. It is written
// before every group's commit, so it must not grow with the groups: with
// every group before whole, 200 groups × 50 partitions wrote 2.5 MB 200
// times (4.3 s, quadratic); with each cut to its totals, 2,000 groups
// still spent half their 19.5 s of CPU on it. A retry with the same run ID
// after a crash finds every group at its commit and writes them whole.
func pendingOf(whole *report.MultiResult, p *report.Result) *report.MultiResult {
	c := *whole
	c.Groups = make([]report.Result, 0, len(whole.Groups)+1)
	for _, g := range whole.Groups {
		g.Partitions, g.Warnings = []report.Partition{}, nil
		c.Groups = append(c.Groups, g)
	}
	c.Groups = append(c.Groups, *p)
	c.NotAttempted = whole.Selected[len(c.Groups):]
	c.FinishedAt = p.FinishedAt
	c.Decide()
	c.Groups = slices.DeleteFunc(c.Groups[:len(c.Groups)-1], func(g report.Result) bool { return g.ExitCode == report.ExitOK })
	c.Groups = append(c.Groups, *p)
	c.Truncated = len(whole.Groups) > 0
	return &c
}

// listGroups is --all-groups: the groups of the kind --group-type names
// (for Auto, the consumer groups, as kafka-consumer-groups.sh and Kafka's
// Admin.listConsumerGroups take them: classic groups of the consumer
// protocol or of none, and consumer groups; not share, streams or Connect
// groups), in name order, without a group: target's source group. It is
// one ListGroups per broker; a broker that does not answer fails the
// list, which would otherwise leave its groups out without a word. None
// is an input error: a run that would move nothing is refused.
func (m *groupsRun) listGroups(ctx context.Context, top *run) ([]string, error) {
	cl, err := top.secondClient()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	lctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()
	listed, err := kadm.NewClient(cl).ListGroups(lctx)
	if err != nil {
		return nil, fmt.Errorf("list groups: %w", err)
	}
	var groups []string
	for _, l := range listed.Sorted() {
		kind := groupKind(l.GroupType)
		keep := kind == m.cfg.GroupType
		if m.cfg.GroupType == config.GroupTypeAuto {
			keep = kind == config.GroupTypeConsumer || kind == config.GroupTypeClassic && (l.ProtocolType == "consumer" || l.ProtocolType == "")
		}
		source := m.cfg.Target.Kind == config.KindGroup && l.Group == m.cfg.Target.Group
		if keep && !source {
			groups = append(groups, l.Group)
		}
	}
	if len(groups) == 0 {
		kind := "consumer group"
		if m.cfg.GroupType != config.GroupTypeAuto {
			kind = m.cfg.GroupType + " group"
		}
		return nil, &inputError{config.Ref(config.FlagAllGroups), fmt.Sprintf("the cluster lists no %s to move (a group: target's source group is left out); nothing was read or committed", kind)}
	}
	return groups, nil
}

// writeRecorded writes res to the result file and termination message.
func (m *groupsRun) writeRecorded(res *report.MultiResult) ([]byte, error) {
	return writePlaces(m.cfg, func() ([]byte, error) { return report.MarshalMulti(res) },
		func(limit int) ([]byte, error) { return report.CompactMulti(res, limit) })
}

// emit writes the result everywhere it is wanted, as emit does one
// group's: the files first, then stdout.
func (m *groupsRun) emit(res *report.MultiResult) {
	redactValueOf(res, m.red)
	full, err := m.writeRecorded(res)
	if err != nil {
		m.log.Error("cannot write the result", "error", config.FieldNamesFlags.Expand(err.Error()))
	}
	switch m.cfg.Output {
	case config.OutputJSON:
		if full == nil {
			if full, err = report.MarshalMulti(res); err != nil {
				m.log.Error("cannot encode the result", "error", err.Error())
				return
			}
		}
		_, err = m.stdout.Write(full)
	case config.OutputCSV:
		// Only a run that ended well hands its offsets on, as for one group.
		if res.ExitCode == report.ExitOK {
			for i := range res.Groups {
				if err = writeCSV(m.stdout, &res.Groups[i]); err != nil {
					break
				}
			}
		}
	default:
		err = writeMultiTable(m.stdout, res)
	}
	if err != nil {
		m.log.Error("cannot write the result to stdout", "output", m.cfg.Output, "error", err.Error())
	}
}

// writeMultiTable writes each group's table, then one line per group and
// the run's outcome.
func writeMultiTable(w io.Writer, res *report.MultiResult) error {
	for i := range res.Groups {
		if err := writeTable(w, &res.Groups[i]); err != nil {
			return err
		}
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "GROUPS %d  RUN %s  TARGET %s\n", len(res.Selected), res.RunID, res.Target.Given)
	for i := range res.Groups {
		g := &res.Groups[i]
		fmt.Fprintf(&b, "  %s  %s  %d partition(s), %d moved, %d to re-consume, %d skipped\n", g.Group, g.Reason, g.Totals.Partitions, g.Totals.Moved, g.Totals.MessagesToReconsume, g.Totals.MessagesSkipped)
	}
	for _, g := range res.NotAttempted {
		fmt.Fprintf(&b, "  %s  NotAttempted\n", g)
	}
	if res.Error != "" {
		fmt.Fprintf(&b, "ERROR (exit %d, %s): %s\n", res.ExitCode, res.Reason, res.Error)
	} else {
		fmt.Fprintf(&b, "OK (%s)\n", res.Reason)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
