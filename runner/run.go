// Package runner is the one-shot replay: validate → snapshot → plan →
// dry run or commit → verify → result. It is the only package that links
// librdkafka.
package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// Main is the whole runner process: it returns the exit code. ctx is
// cancelled on SIGTERM, SIGINT, SIGHUP and SIGQUIT; before the commit that
// aborts the run, after it the run finishes so that its outcome is known and
// reported. A panic becomes exit 1 (InternalError) with a result that says
// what is known to have been applied (see crash.go).
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := config.Load(args, stderr)
	if errors.Is(err, config.ErrHelp) {
		return int(report.ExitOK)
	}
	var red *config.Redactor
	if cfg != nil {
		red = cfg.KafkaProperties.Redactor()
	}
	// Secret values are redacted from each log record's values, and from the
	// result's (emit); stdout and stderr themselves are written as they are.
	log := slog.New(newRedactingHandler(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}), red))

	r := &run{cfg: cfg, log: log, now: time.Now}
	res := r.result()
	takeGoroutinePanic() // a previous in-process run's, in tests
	func() {
		// execute fills res in place, so whatever it had found out when it
		// panicked is still there.
		defer func() {
			if v := recover(); v != nil {
				res = r.crashed(res, newPanicError(v))
			}
		}()
		hook(hookStart)
		if err != nil {
			res = r.fail(res, err)
		} else {
			res = r.execute(ctx, res)
		}
	}()
	if p := takeGoroutinePanic(); p != nil && res.Reason != report.ReasonInternalError {
		res = r.crashed(res, p)
	}
	res.FinishedAt = r.now().UTC()
	if !r.emit(res, stdout, red) {
		return int(report.ExitInternal)
	}
	// The last line says what the run cost, to size the Job's resources.
	attrs := []any{"exitCode", int(res.ExitCode), "reason", res.Reason, "duration", res.FinishedAt.Sub(res.StartedAt).Round(time.Millisecond).String()}
	if kib, ok := peakRSSKiB(); ok {
		attrs = append(attrs, "peakRSSKiB", kib)
	}
	log.Info("finished", attrs...)
	return int(res.ExitCode)
}

// peakRSSKiB reads the process's peak resident memory (Linux VmHWM).
func peakRSSKiB() (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

type run struct {
	cfg *config.Config
	log *slog.Logger
	now func() time.Time
	// committing is set just before the first commit request: from then on
	// a crash may have changed offsets (see crashed).
	committing bool
}

func (r *run) result() *report.Result {
	res := &report.Result{
		Schema:     report.Schema,
		StartedAt:  r.now().UTC(),
		Partitions: []report.Partition{},
	}
	if r.cfg != nil {
		res.Group = r.cfg.Group
		res.RunID = r.cfg.RunID
		res.Target.Given = r.cfg.To
		res.DryRun = r.cfg.DryRun
	}
	return res
}

// execute runs a validated configuration.
func (r *run) execute(sigCtx context.Context, res *report.Result) *report.Result {
	cfg := r.cfg
	if cfg.RunID == "" {
		cfg.RunID = "local-" + randomID()
		res.RunID = cfg.RunID
		r.log.Info("no --run-id given; retries of this command will not be recognised", "runId", cfg.RunID)
	}
	cfg.Target.Resolve(res.StartedAt)
	res.Target.Resolved = cfg.Target.Canonical()
	if cfg.Target.IsTime() {
		t := cfg.Target.Time.UTC()
		res.Target.Time = &t
	}
	r.log.Info("starting", "group", cfg.Group, "target", res.Target.Resolved, "scope", scopeString(cfg.Scope), "dryRun", cfg.DryRun, "runId", cfg.RunID)

	client, err := newKafkaClient(cfg, r.log)
	if err != nil {
		return r.fail(res, err)
	}
	defer client.Release()

	// Reading is bounded by --timeout; waiting for the group to empty by
	// --wait-for-empty on top of it.
	ctx, cancel := context.WithTimeout(sigCtx, cfg.Timeout+cfg.WaitForEmpty)
	defer cancel()

	snap, err := r.snapshot(ctx, client)
	if err != nil {
		return r.failCtx(sigCtx, res, err)
	}
	plan := MakePlan(snap, cfg.Target, cfg.RunID)
	res.Partitions = plan.Partitions
	res.Warnings = append(res.Warnings, plan.Warnings...)
	for _, w := range res.Warnings {
		r.log.Warn(w)
	}
	switch {
	case cfg.DryRun:
		res.Reason = report.ReasonDryRun
		r.log.Info("dry run: nothing committed", "partitions", len(plan.Partitions))
		return res
	case plan.AlreadyApplied():
		res.AlreadyApplied = true
		res.Reason = report.ReasonAlreadyApplied
		r.log.Info("already applied by this run ID; nothing to do", "runId", cfg.RunID)
		return res
	case plan.ToCommit() == 0:
		res.Reason = report.ReasonApplied
		r.log.Warn("nothing to commit: every partition in scope was left alone")
		return res
	}
	// The last moment to abort cleanly: a signal that arrived while
	// planning still stops the run with nothing changed.
	if sigCtx.Err() != nil {
		return r.fail(res, fmt.Errorf("%w before the commit (%w)", errInterrupted, context.Cause(sigCtx)))
	}
	// From here on, a signal must not cut the commit or its verification
	// short: the outcome has to be known and reported.
	cctx, ccancel := context.WithTimeout(context.WithoutCancel(sigCtx), cfg.Timeout)
	defer ccancel()
	return r.commit(cctx, client, plan, res)
}

// snapshot reads everything the plan needs, in as few round trips as the
// dependencies allow, and waits for the group to empty if asked to.
func (r *run) snapshot(ctx context.Context, k *kafkaClient) (*Snapshot, error) {
	cfg := r.cfg
	deadline := time.Now().Add(cfg.WaitForEmpty)
	for {
		s, err := r.read(ctx, k)
		if err != nil {
			return nil, err
		}
		if !s.Group.Active() {
			return s, nil
		}
		if cfg.WaitForEmpty <= 0 || time.Now().After(deadline) {
			return nil, &groupActiveError{s.Group}
		}
		if err := r.waitForEmpty(ctx, k, deadline); err != nil {
			return nil, err
		}
		// The consumers committed while they ran: read everything again.
	}
}

// waitForEmpty polls the group until it has no members or the deadline
// passes. Kafka offers no way to watch a group, so this is a bounded poll.
func (r *run) waitForEmpty(ctx context.Context, k *kafkaClient, deadline time.Time) error {
	interval := 500 * time.Millisecond
	for {
		g, err := k.describeGroup(ctx, r.cfg.Group)
		if err != nil {
			return err
		}
		if !g.Active() {
			r.log.Info("group is now empty", "state", g.State)
			return nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return &groupActiveError{g}
		}
		r.log.Info("waiting for the group to become empty", "group", r.cfg.Group, "members", g.Describe(), "left", left.Round(time.Second).String())
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(min(interval, left)):
		}
		interval = min(interval*2, 5*time.Second)
	}
}

// read takes one snapshot. Round 1 reads, concurrently, the group, its
// offsets, the source group's offsets and the topics' metadata; round 2 (also
// concurrent) the log bounds and offsets for the target time. An empty scope
// needs the group's offsets before it knows which topics to describe.
func (r *run) read(ctx context.Context, k *kafkaClient) (*Snapshot, error) {
	cfg := r.cfg
	s := &Snapshot{}
	// A failed read cancels its siblings: the run fails anyway.
	g, gctx := newGroup(ctx)
	g.Go(func() (err error) { s.Group, err = k.describeGroup(gctx, cfg.Group); return })
	g.Go(func() (err error) { s.Committed, err = k.committed(gctx, cfg.Group, nil); return })
	if cfg.Target.Kind == config.KindGroup {
		g.Go(func() (err error) { s.Source, err = k.committed(gctx, cfg.Target.Group, nil); return })
	}
	topics := topicsToDescribe(cfg.Scope, cfg.Target)
	if len(topics) > 0 {
		g.Go(func() error {
			ti, err := k.describeTopics(gctx, topics)
			s.Topics, s.Leaders = ti.Partitions, ti.Leaders
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	r.log.Info("group described", "group", cfg.Group, "state", s.Group.State, "members", len(s.Group.Members), "committedPartitions", len(s.Committed))
	if s.Group.Active() {
		return s, nil // no point reading more; the caller refuses or waits
	}
	if len(topics) == 0 {
		from := s.Committed
		if cfg.Target.Kind == config.KindGroup {
			from = s.Source
		}
		ti, err := k.describeTopics(ctx, scopeFromOffsets(from))
		if err != nil {
			return nil, err
		}
		s.Topics, s.Leaders = ti.Partitions, ti.Leaders
	}
	parts, warnings, err := resolveScope(s, cfg.Scope, cfg.Target)
	for _, w := range warnings {
		r.log.Warn(w)
	}
	if err != nil {
		return nil, err
	}
	s.Partitions = parts

	shards := byLeader(parts, s.Leaders)
	g, gctx = newGroup(ctx)
	g.Go(func() (err error) {
		s.LogStart, err = k.listOffsetsByLeader(gctx, "list log start offsets", shards, kafka.EarliestOffsetSpec)
		return
	})
	g.Go(func() (err error) {
		s.LogEnd, err = k.listOffsetsByLeader(gctx, "list log end offsets", shards, kafka.LatestOffsetSpec)
		return
	})
	if cfg.Target.IsTime() {
		spec := kafka.NewOffsetSpecForTimestamp(cfg.Target.Time.UnixMilli())
		g.Go(func() (err error) {
			s.ForTime, err = k.listOffsetsByLeader(gctx, "list offsets for time", shards, spec)
			return
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	r.log.Info("offsets resolved", "partitions", len(parts))
	return s, nil
}

// commit applies the plan in one request, then reads it back.
func (r *run) commit(ctx context.Context, k *kafkaClient, plan *Plan, res *report.Result) *report.Result {
	cfg := r.cfg
	offsets := make(map[TP]int64, plan.ToCommit())
	tps := make([]TP, 0, plan.ToCommit())
	for i, p := range plan.Partitions {
		if plan.Commit[i] {
			tp := TP{Topic: p.Topic, Partition: p.Partition}
			offsets[tp] = p.NewOffset
			tps = append(tps, tp)
		}
	}
	r.log.Info("committing", "partitions", len(offsets))
	r.committing = true
	failed, commitErr := k.alter(ctx, cfg.Group, offsets, commitMetadata(cfg.RunID, res.StartedAt))
	hook(hookCommitted)
	if commitErr == nil && len(failed) == len(offsets) {
		// Brokers refuse a commit to a group with members per partition;
		// treat a refusal of every partition for that reason as the whole.
		for _, e := range failed {
			if isGroupActiveErr(e) {
				commitErr = e
			}
			break
		}
	}
	if commitErr != nil && isGroupActiveErr(commitErr) {
		// Consumers joined between the describe and the commit; the broker
		// refused the whole commit, so nothing changed.
		return r.fail(res, fmt.Errorf("the broker refused the commit because the group became active: %w", commitErr))
	}

	// Verify whatever the commit said: a timed-out commit may still have been
	// applied, and a successful one is only trusted once read back.
	after, readErr := k.committed(ctx, cfg.Group, tps)
	applied := 0
	for i := range res.Partitions {
		p := &res.Partitions[i]
		if !plan.Commit[i] {
			continue
		}
		tp := TP{Topic: p.Topic, Partition: p.Partition}
		got, ok := after[tp]
		switch {
		case readErr != nil:
			p.Error = "could not read back: " + errString(readErr)
			if e, bad := failed[tp]; bad {
				p.Error = "commit failed: " + errString(e)
			}
		case ok && got.Offset == p.NewOffset && metadataRunID(got.Metadata) == cfg.RunID:
			applied++
		case failed[tp] != nil:
			p.Error = "commit failed: " + errString(failed[tp])
		case commitErr != nil:
			p.Error = "commit failed: " + errString(commitErr)
		case !ok:
			p.Error = "read back: no committed offset"
		default:
			p.Error = fmt.Sprintf("read back offset %d, expected %d", got.Offset, p.NewOffset)
		}
	}
	switch {
	case readErr == nil && applied == len(offsets):
		res.Reason = report.ReasonApplied
		r.log.Info("committed and verified", "partitions", applied)
		return res
	case readErr == nil && applied == 0:
		// Read back proves nothing changed: a plain Kafka failure.
		err := commitErr
		if err == nil {
			err = fmt.Errorf("refused for every partition: %s", failedList(res.Partitions))
		}
		return r.fail(res, fmt.Errorf("commit: %w", err))
	}
	res.ExitCode = report.ExitPartiallyApplied
	res.Reason = report.ReasonPartiallyApplied
	failedN := len(offsets) - applied
	if readErr != nil {
		res.Error = fmt.Sprintf("the commit's outcome could not be verified for %d partition(s): %s", failedN, errString(readErr))
	} else {
		res.Error = fmt.Sprintf("%d of %d partition(s) were not committed: %s", failedN, len(offsets), failedList(res.Partitions))
	}
	r.log.Error(res.Error)
	return res
}

func failedList(ps []report.Partition) string {
	var names []string
	for _, p := range ps {
		if p.Error != "" {
			if len(names) == maxNamed {
				names = append(names, "…")
				break
			}
			names = append(names, fmt.Sprintf("%s/%d (%s)", p.Topic, p.Partition, p.Error))
		}
	}
	return fmt.Sprint(names)
}

// failCtx attributes an error during reading: a signal turns it into an
// interruption, whatever the Kafka client made of the cancellation.
func (r *run) failCtx(sigCtx context.Context, res *report.Result, err error) *report.Result {
	if sigCtx.Err() != nil {
		err = fmt.Errorf("%w before the commit (%w)", errInterrupted, context.Cause(sigCtx))
	}
	return r.fail(res, err)
}

// errInterrupted marks a run stopped by a signal.
var errInterrupted = errors.New("interrupted by a signal")

// fail records a failure that happened before anything was committed.
func (r *run) fail(res *report.Result, err error) *report.Result {
	var ga *groupActiveError
	var ie *inputError
	switch {
	case config.IsInvalidInput(err), errors.As(err, &ie):
		res.ExitCode = report.ExitInvalidInput
	case errors.As(err, &ga), isGroupActiveErr(err):
		res.ExitCode = report.ExitGroupActive
	case errors.Is(err, errInterrupted):
		res.ExitCode = report.ExitInterrupted
	default:
		res.ExitCode = report.ExitKafkaError
	}
	res.Reason = report.ReasonForExitCode(res.ExitCode)
	res.Error = errString(err)
	r.log.Error("nothing was changed", "reason", res.Reason, "error", res.Error)
	return res
}

func scopeString(s config.Scope) string {
	if s.Empty() {
		return "(every committed topic)"
	}
	return s.String()
}

func randomID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
