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
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/internal/groupkind"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// Main is the whole runner process: it returns the exit code. ctx is
// cancelled on SIGTERM, SIGINT, SIGHUP and SIGQUIT; before the commit that
// aborts the run, after it the run finishes so that its outcome is known and
// reported. A panic becomes exit 1 (InternalError) with a result that says
// what is known to have been applied (see crash.go).
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if config.IsInspect(args) {
		return inspectMain(ctx, args, stdout, stderr)
	}
	cfg, err := config.Load(args, stderr)
	if errors.Is(err, config.ErrHelp) {
		return int(report.ExitOK)
	}
	// The redactor also renders setting references (config.Ref) in the
	// names of whoever started the runner: flags, or a request's fields.
	red := (*config.Redactor)(nil).WithNames(config.FieldNamesFlags)
	if cfg != nil {
		red = cfg.KafkaProperties.Redactor().WithNames(cfg.FieldNames)
	}
	// Secret values are redacted from each log record's values, and from the
	// result's (emit); stdout and stderr themselves are written as they are.
	log := slog.New(newRedactingHandler(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}), red))

	if cfg != nil && cfg.Multi() {
		return mainGroups(ctx, cfg, err, log, stdout, red)
	}
	r := &run{cfg: cfg, log: log, now: time.Now, stdout: stdout, red: red}
	res := r.result()
	forgetGoroutinePanics()
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
	// id identifies this run's commits; set once the target is resolved.
	id runIdent
	// reused is set when an ago: target took the instant an earlier attempt
	// of this run resolved, instead of resolving it again.
	reused bool
	// generatedID is set when no run ID was given and the run made one up.
	generatedID bool
	// committing is set just before the first commit request: from then on
	// a crash may have changed offsets (see crashed).
	committing bool
	// txn is an Atomic run's transactional producer (see txn.go); nil for
	// a Plain run.
	txn *txnCommitter
	// second are the options of the runner's second client (franz-go,
	// secondClient), translated from the Kafka properties before anything
	// connects; reader is the one that reads the group's kind and its
	// committed offsets (offsets.go).
	second []kgo.Opt
	reader *kgo.Client
	// stdout and red are where, and how redacted, the result is written
	// (see checkOutputs).
	stdout io.Writer
	red    *config.Redactor
	// record writes the pending outcome (checkOutputs) where the result
	// goes; nil writes this run's result (writeRecorded). A group's run
	// within a run over several writes the whole run's (groups.go).
	record func(pending *report.Result) error
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
	r.ensureRunID()
	res.RunID = r.cfg.RunID
	r.begin(res, res.StartedAt)
	client, err := r.connect()
	if err != nil {
		return r.fail(res, err)
	}
	defer client.Release()
	defer r.reader.Close()
	return r.executeOn(sigCtx, client, res)
}

// connect makes the run's Kafka clients: librdkafka's, returned, and the
// second client's reader (r.reader, which the caller closes). The second
// client must connect exactly as librdkafka does, or not at all: what it
// cannot reproduce is refused (r.second set from it) before either
// connects.
func (r *run) connect() (*kafkaClient, error) {
	second, err := secondOptions(r.cfg)
	if err != nil {
		return nil, err
	}
	r.second = second
	if r.reader, err = r.secondClient(kgo.MaxVersions(readerVersions())); err != nil {
		return nil, err
	}
	k, err := newKafkaClient(r.cfg, r.log)
	if err != nil {
		r.reader.Close()
		return nil, err
	}
	return k, nil
}

// ensureRunID makes up a run ID when none was given.
func (r *run) ensureRunID() {
	if r.cfg.RunID != "" {
		return
	}
	r.generatedID = true
	r.cfg.RunID = "local-" + randomID()
	r.log.Info("no "+config.Ref(config.FlagRunID)+" given; retries of this command will not be recognised", "runId", r.cfg.RunID)
}

// begin resolves the target against start (a run over several groups
// resolves an ago: target once, for every group) and says what the run is.
func (r *run) begin(res *report.Result, start time.Time) {
	cfg := r.cfg
	cfg.Target.Resolve(start)
	r.id = runIdent{RunID: cfg.RunID, Plan: planDigest(cfg.Target, cfg.Scope)}
	r.recordTarget(res)
	// targetDigest is not the plan's digest (the table's PLAN, the one an
	// approval names): it digests the target as given and the scope, which
	// the commit metadata carries to recognise this run (planDigest).
	r.log.Info("starting", "group", cfg.Group, "target", res.Target.Resolved, "scope", scopeString(cfg.Scope), "dryRun", cfg.DryRun, "runId", cfg.RunID, "targetDigest", r.id.Plan)
}

// executeOn runs one group's replay through client (shared by the groups
// of a run over several).
func (r *run) executeOn(sigCtx context.Context, client *kafkaClient, res *report.Result) *report.Result {
	cfg := r.cfg
	// Reading is bounded by --timeout; waiting for the group to empty by
	// --wait-for-empty on top of it.
	ctx, cancel := context.WithTimeout(sigCtx, config.AddDurations(cfg.Timeout, cfg.WaitForEmpty))
	defer cancel()

	if err := r.checkClusterID(ctx, client); err != nil {
		return r.failCtx(sigCtx, res, err)
	}
	// A share or streams group is never planned as a consumer group.
	kind := r.startKindCheck(ctx)
	// A stated kind is checked first: a group of another kind is not
	// fenced, waited for nor planned.
	if cfg.GroupType != config.GroupTypeAuto {
		if err := r.checkStatedType(ctx, client, kind, res); err != nil {
			return r.failCtx(sigCtx, res, err)
		}
	}
	// An Atomic commit fences every other replay of the group first, so
	// that the snapshot is of settled offsets and no other replay commits
	// after it.
	if !cfg.DryRun {
		if err := r.chooseCommitMode(ctx, client, res); err != nil {
			return r.failCtx(sigCtx, res, err)
		}
		if r.txn != nil {
			defer r.txn.Release()
		}
	}
	snap, err := r.snapshot(ctx, client)
	if active := (*groupActiveError)(nil); errors.As(err, &active) {
		// A live classic or consumer group is refused before it is
		// planned: the result still names its kind, from the members
		// librdkafka described and the kind check.
		if info, kerr := kind.wait(); kerr == nil {
			res.GroupType = foundType(info, active.info)
		}
		return r.failCtx(sigCtx, res, err)
	}
	if err != nil {
		return r.failCtx(sigCtx, res, kind.explain(err, cfg.Scope.Empty()))
	}
	info, err := kind.wait()
	if err != nil {
		return r.failCtx(sigCtx, res, err)
	}
	res.GroupType = foundType(info, snap.Group)
	if err := checkFileType(cfg.Target, cfg.Group, res.GroupType); err != nil {
		return r.fail(res, err)
	}
	if cfg.DeleteAllInternalTopics && info.Kind != groupkind.Streams {
		found := "a group that does not exist"
		if res.GroupType != "" {
			found = "a " + res.GroupType + " group"
		}
		return r.fail(res, &inputError{config.Ref(config.FlagDeleteAllInternalTopics), fmt.Sprintf("group %s is %s, not a streams group: only a streams group's topology names internal topics (a Kafka Streams application on the classic protocol: kafka-streams-application-reset.sh); nothing was planned or changed", cfg.Group, found)})
	}
	// A share group: its start offsets stand for committed offsets, and
	// share (its client) takes the commit (share.go).
	var share *kgo.Client
	// nowInternal are the internal topics the group's topology names now,
	// when a plan: target deletes those its plan listed.
	var nowInternal []string
	switch info.Kind {
	case groupkind.Share:
		// Kafka has no transactional form of AlterShareGroupOffsets.
		switch {
		case cfg.CommitMode == config.CommitModeAtomic && !cfg.DryRun:
			return r.fail(res, &inputError{config.Ref(config.FlagCommitMode), fmt.Sprintf("%s: group %s is a share group, whose start offsets Kafka sets only with AlterShareGroupOffsets, outside any transaction; use %s or %s; nothing was committed", config.CommitModeAtomic, cfg.Group, config.CommitModePlain, config.CommitModeAuto)})
		case r.txn != nil:
			r.txn, res.CommitMode = nil, config.CommitModePlain
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s %s: a share group's start offsets are set Plain (AlterShareGroupOffsets has no transactional form)", config.Ref(config.FlagCommitMode), config.CommitModeAuto))
		}
		if share, err = r.secondClient(); err != nil {
			return r.failCtx(sigCtx, res, err)
		}
		defer share.Close()
		if err := r.shareSnapshot(ctx, share, snap, info); err != nil {
			return r.failCtx(sigCtx, res, err)
		}
		res.Warnings = append(res.Warnings, shareNote)
	case groupkind.Streams:
		var w string
		if snap, w, err = r.streamsSnapshot(ctx, client, snap, info); err != nil {
			return r.failCtx(sigCtx, res, err)
		}
		if w != "" {
			res.Warnings = append(res.Warnings, w)
		}
		res.Warnings = append(res.Warnings, streamsNote(cfg.Group, info, snap.Partitions, cfg.DeleteAllInternalTopics))
		if cfg.DeleteAllInternalTopics {
			// A plan: target deletes what its plan listed (its digest
			// binds them), and only while the topology still names them.
			planned := info.InternalTopics
			if cfg.Target.Kind == config.KindPlan {
				// config refuses the flag with a plan that lists none;
				// were one through, it would delete nothing unseen (stale).
				planned = nil
				if it := cfg.Target.Result.InternalTopics; it != nil {
					planned = slices.Clone(it.Planned)
				}
				nowInternal = info.InternalTopics
			}
			res.InternalTopics = &report.InternalTopics{Planned: planned}
		}
	default:
		// Logged with the plan's warnings.
		if w := classicStreamsWarning(cfg.Group, snap.Committed); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
	}
	if w := undoneDeletions(cfg.Target); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	if r.reused {
		r.recordTarget(res)
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s was resolved to %s by this run ID's first attempt; reused, so the retry covers the same window", cfg.Target.Given, cfg.Target.Time.UTC().Format(time.RFC3339Nano)))
	}
	res.ClusterID = snap.ClusterID
	plan, err := MakePlan(snap, cfg.Target, r.id)
	if err != nil {
		return r.fail(res, err)
	}
	res.Partitions = plan.Partitions
	res.Warnings = append(res.Warnings, plan.Warnings...)
	if snap.Group.Active() {
		// Only a dry run plans an active group (see snapshot).
		res.Warnings = append(res.Warnings, fmt.Sprintf("the group is active (%s): applying this plan needs it empty, so stop its consumers first or use %s; until then its members keep committing, so the previous offsets are those of this moment", snap.Group.Describe(), config.Ref(config.RefWait)))
	}
	for _, w := range res.Warnings {
		r.log.Warn(w)
	}
	if cfg.DryRun {
		// The digest an approval names and a plan: target checks.
		res.Plan = res.Digest()
	} else if cfg.Target.Kind == config.KindPlan {
		res.Plan = cfg.Target.Result.Plan
	}
	// A run the group shows on some partitions and cannot be completed
	// exactly moves nothing more (settlePrior), in a dry run too.
	if plan.Unsettled > 0 {
		res.ExitCode, res.Reason = report.ExitPartiallyApplied, report.ReasonPartiallyApplied
		res.Error = fmt.Sprintf("run %s is applied on %d partition(s) of the group, and not on %s; the runner cannot tell whether its commit did not take there or something committed over it since, so nothing was committed: read those partitions' offsets, and move the ones that need it with explicit offsets and a new run ID", cfg.RunID, plan.PriorMarks, plan.UnsettledNames)
		r.log.Error(res.Error)
		return res
	}
	if plan.PriorMarks == 0 && !r.generatedID && relativeTarget(cfg.Target) && plan.ToCommit() > 0 {
		w := fmt.Sprintf("run ID %s is on no partition of the group: a first run, or one whose commit consumers have since committed over everywhere, which the runner cannot tell apart; %s moves from the offsets committed now, so if this run ID ran before, this moves the group a second time", cfg.RunID, res.Target.Resolved)
		res.Warnings = append(res.Warnings, w)
		r.log.Warn(w)
	}
	// A retry whose commit is already in place is done: never refused, its
	// plan held when it was committed.
	if !cfg.DryRun && plan.AlreadyApplied() {
		res.AlreadyApplied = true
		res.Reason = report.ReasonAlreadyApplied
		if res.InternalTopics != nil && len(res.InternalTopics.Planned) > 0 {
			// The application may have run since the first attempt and
			// built its internal topics again: only a run that moves the
			// offsets deletes them.
			w := fmt.Sprintf("%s: not done by a retry, which cannot tell whether the application ran since its first attempt; its internal topics %s are as they are: delete them with kafka-streams-groups.sh --delete-all-internal-topics if they must go", config.Ref(config.FlagDeleteAllInternalTopics), strings.Join(res.InternalTopics.Planned, ", "))
			res.Warnings = append(res.Warnings, w)
			r.log.Warn(w) // after the plan's warnings were logged
		}
		if snap.Unmarked {
			r.log.Info("every partition is at the plan's new offset already; nothing to do")
		} else {
			r.log.Info("already applied by this run ID; nothing to do", "runId", cfg.RunID)
		}
		return res
	}
	// The guards, in a dry run too: it reports what the real run would do.
	ref := staleInternalTopics(res.InternalTopics, nowInternal, cfg.Target.Kind == config.KindPlan)
	if ref == nil {
		ref = judgePlan(plan, cfg.AllowSkip, cfg.MaxMessagesToReconsume)
	}
	if ref != nil {
		res.ExitCode, res.Reason, res.Error = report.ExitRefused, ref.Reason, ref.Error
		r.log.Error("refused; nothing was changed", "reason", res.Reason, "error", res.Error)
		return res
	}
	// An undo whose every partition is left alone (or a plan of one) has
	// nothing to commit: no failure, but said, in its dry run too.
	nothing := plan.ToCommit() == 0 && !plan.AlreadyApplied()
	if nothing {
		w := "nothing to undo: the undo rules leave every partition alone (each says why)"
		if cfg.Target.Kind == config.KindPlan {
			w = "nothing to apply: the plan leaves every partition alone"
		}
		res.Warnings = append(res.Warnings, w)
		r.log.Warn(w)
	}
	switch {
	case cfg.DryRun:
		res.Reason = report.ReasonDryRun
		r.log.Info("dry run: nothing committed", "partitions", len(plan.Partitions))
		return res
	case nothing:
		res.Reason = report.ReasonApplied
		r.log.Info("nothing committed")
		return res
	}
	// The last moment to abort cleanly: a signal that arrived while
	// planning still stops the run with nothing changed.
	if sigCtx.Err() != nil {
		return r.fail(res, fmt.Errorf("%w before the commit (%w)", errInterrupted, context.Cause(sigCtx)))
	}
	// Every place the result goes must be writable before the commit,
	// and holds the pending outcome during it.
	if err := r.checkOutputs(res, plan); err != nil {
		return r.fail(res, err)
	}
	// From here on, a signal must not cut the commit or its verification
	// short: the outcome has to be known and reported.
	if share != nil {
		return r.commitShare(context.WithoutCancel(sigCtx), share, plan, res)
	}
	res = r.commit(context.WithoutCancel(sigCtx), client, plan, res)
	if res.InternalTopics != nil && res.ExitCode == report.ExitOK {
		r.deleteInternalTopics(context.WithoutCancel(sigCtx), res)
	}
	return res
}

// chooseCommitMode settles how the run commits (--commit-mode) and writes
// it into the result: Plain, or Atomic with the transactional ID
// initialised (startTxn). Auto commits Plain where the Kafka user may not
// use the transactional ID, and says so in a warning.
func (r *run) chooseCommitMode(ctx context.Context, client *kafkaClient, res *report.Result) error {
	mode := r.cfg.CommitMode
	res.CommitMode = config.CommitModePlain
	if mode == config.CommitModePlain {
		return nil
	}
	t, err := startTxn(ctx, r.cfg, client)
	var acl *txnACLError
	switch {
	case err == nil:
		r.txn = t
		res.CommitMode = config.CommitModeAtomic
		r.log.Info("transactional ID initialised: any other replay of the group on this cluster is fenced", "transactionalId", t.id)
		return nil
	case mode == config.CommitModeAuto && errors.As(err, &acl):
		// Logged with the plan's warnings.
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s %s: committing %s, because %s", config.Ref(config.FlagCommitMode), config.CommitModeAuto, config.CommitModePlain, strings.TrimSuffix(acl.Error(), "; nothing was committed")))
		return nil
	}
	res.CommitMode = ""
	if errors.As(err, &acl) {
		return &inputError{config.Ref(config.FlagCommitMode), config.CommitModeAtomic + ": " + acl.Error()}
	}
	return err
}

// recordTarget writes the target, as resolved, into the result.
func (r *run) recordTarget(res *report.Result) {
	res.Target.Resolved = r.cfg.Target.Canonical()
	if t := r.cfg.Target; t.Kind == config.KindPlan && t.Result.Target.Time != nil {
		// The instant the plan was resolved for.
		tm := t.Result.Target.Time.UTC()
		res.Target.Time = &tm
	}
	if r.cfg.Target.IsTime() {
		t := r.cfg.Target.Time.UTC()
		res.Target.Time = &t
	}
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
		// Planning is read-only: a dry run plans an active group (and says
		// so) rather than refuse or wait, as an operator plans before
		// stopping the consumers.
		if !s.Group.Active() || cfg.DryRun {
			return s, nil
		}
		if cfg.WaitForEmpty <= 0 || time.Now().After(deadline) {
			return nil, &groupActiveError{info: s.Group, waited: max(cfg.WaitForEmpty, 0)}
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
			return &groupActiveError{info: g, waited: r.cfg.WaitForEmpty}
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
// offsets, the source group's offsets and the topics' metadata; round 2 the
// log bounds and offsets for the target time. An empty scope needs the
// group's offsets before it knows which topics to describe.
//
// With named topics (or an offsets file) the scope and its log offsets
// depend on the topics' metadata alone, so round 2 runs inside round 1, right
// after the metadata, instead of a round trip after the slowest read: the
// group describe takes two (ConsumerGroupDescribe, then DescribeGroups for
// a classic group) after its coordinator lookup, and the leaders'
// connections are set up meanwhile. With 20 ms added to every request that
// took a 1,000-partition run from about 410 ms to about 335 ms. Nothing is
// decided early: what the early read found, errors included, is only used
// after the checks that come before it, so a run fails for the same reason
// and in the same order as when it was read afterwards, and an ago: target
// whose instant a retry reuses looks that instant up again.
func (r *run) read(ctx context.Context, k *kafkaClient) (*Snapshot, error) {
	cfg := r.cfg
	s := &Snapshot{}
	// A failed read cancels its siblings: the run fails anyway.
	g, gctx := newGroup(ctx)
	// An active group (unless dry run) ends the read after round 1: the
	// early read stops then, rather than delay the refusal if a leader is
	// slow to answer.
	ectx, stopEarly := context.WithCancel(gctx)
	defer stopEarly()
	g.Go(func() (err error) {
		s.Group, err = k.describeGroup(gctx, cfg.Group)
		if err == nil && s.Group.Active() && !cfg.DryRun {
			stopEarly()
		}
		return
	})
	g.Go(func() (err error) { s.Committed, err = r.committed(gctx, k, cfg.Group, nil); return })
	if cfg.Target.Kind == config.KindGroup {
		g.Go(func() (err error) { s.Source, err = r.committed(gctx, k, cfg.Target.Group, nil); return })
	}
	topics := topicsToDescribe(cfg.Scope, cfg.Target)
	var early earlyRead
	if len(topics) > 0 {
		g.Go(func() error {
			ti, err := k.describeTopics(gctx, topics)
			if err != nil {
				return err
			}
			s.Topics, s.Leaders = ti.Partitions, ti.Leaders
			// Only the topics are looked at (named topics never need the
			// group's offsets), and s's other fields are being written.
			early.parts, early.warnings, early.scopeErr = resolveScope(&Snapshot{Topics: ti.Partitions}, cfg.Scope, cfg.Target)
			if early.scopeErr == nil {
				early.offsets, early.err = r.logOffsets(ectx, k, early.parts, ti.Leaders)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	s.ClusterID = k.clusterID(ctx)
	r.log.Info("group described", "group", cfg.Group, "state", s.Group.State, "members", len(s.Group.Members), "committedPartitions", len(s.Committed))
	if err := checkSource(s, cfg.Target); err != nil {
		return nil, err
	}
	if err := r.reuseInstant(s); err != nil {
		return nil, err
	}
	if s.Group.Active() && !cfg.DryRun {
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
	// The topics' partitions as described, against the committed offsets:
	// a second source, read at the same time.
	if err := checkPartitionCounts(s, cfg.Target); err != nil {
		return nil, err
	}
	var (
		parts    []TP
		warnings []string
		err      error
	)
	if len(topics) > 0 {
		parts, warnings, err = early.parts, early.warnings, early.scopeErr
	} else {
		parts, warnings, err = resolveScope(s, cfg.Scope, cfg.Target)
	}
	for _, w := range warnings {
		r.log.Warn(w)
	}
	if err != nil {
		return nil, err
	}
	s.Partitions = parts

	offs := early.offsets
	switch {
	case len(topics) == 0:
		offs, err = r.logOffsets(ctx, k, parts, s.Leaders)
	case early.err != nil:
		err = early.err
	case cfg.Target.IsTime() && offs.millis != lookupMillis(cfg.Target.Time):
		// reuseInstant moved the target to the first attempt's instant.
		offs.ForTime, err = k.listOffsetsByLeader(ctx, "list offsets for time", byLeader(parts, s.Leaders), kafka.NewOffsetSpecForTimestamp(lookupMillis(cfg.Target.Time)))
	}
	if err != nil {
		return nil, err
	}
	s.LogStart, s.LogEnd, s.ForTime = offs.Start, offs.End, offs.ForTime
	r.log.Info("offsets resolved", "partitions", len(parts))
	return s, nil
}

// earlyRead is round 2 read inside round 1 (see read), kept until read
// reaches the point where it used to be read.
type earlyRead struct {
	parts    []TP
	warnings []string
	scopeErr error
	offsets  logOffsets
	err      error
}

// logOffsets are the partitions' log bounds and, for a time target, the
// offsets for its time.
type logOffsets struct {
	Start, End, ForTime map[TP]int64
	// millis is the time ForTime was looked up for.
	millis int64
}

// logOffsets reads the log start, log end and (for a time target) the
// offsets for the target time of parts, the three concurrently.
func (r *run) logOffsets(ctx context.Context, k *kafkaClient, parts []TP, leaders map[TP]int32) (logOffsets, error) {
	var o logOffsets
	shards := byLeader(parts, leaders)
	g, gctx := newGroup(ctx)
	g.Go(func() (err error) {
		o.Start, err = k.listOffsetsByLeader(gctx, "list log start offsets", shards, kafka.EarliestOffsetSpec)
		return
	})
	g.Go(func() (err error) {
		o.End, err = k.listOffsetsByLeader(gctx, "list log end offsets", shards, kafka.LatestOffsetSpec)
		return
	})
	if r.cfg.Target.IsTime() {
		o.millis = lookupMillis(r.cfg.Target.Time)
		g.Go(func() (err error) {
			o.ForTime, err = k.listOffsetsByLeader(gctx, "list offsets for time", shards, kafka.NewOffsetSpecForTimestamp(o.millis))
			return
		})
	}
	return o, g.Wait()
}

// reuseInstant makes a retry of an ago: target use the instant its first
// attempt resolved, recovered from the metadata of the partitions that took:
// resolving it again, later, would leave a gap in the replayed window. It
// also refuses a run ID already used with another target or scope.
func (r *run) reuseInstant(s *Snapshot) error {
	prior, err := findPrior(s.Committed, r.id)
	if err != nil || prior.Time == nil || r.cfg.Target.Kind != config.KindAgo {
		return err
	}
	if !prior.Time.Equal(r.cfg.Target.Time) {
		r.log.Info("reusing the instant resolved by this run ID's first attempt", "target", r.cfg.Target.Given, "time", prior.Time.UTC().Format(time.RFC3339Nano), "partitionsAlreadyApplied", prior.Partitions)
		r.cfg.Target.Time = prior.Time.UTC()
		r.reused = true
	}
	return nil
}

// lookupMillis is the timestamp to ask Kafka for: the first millisecond at
// or after t. Kafka's timestamps are milliseconds, so a record stamped in
// t's millisecond but before t itself is earlier than t: truncating would
// include it.
func lookupMillis(t time.Time) int64 {
	ms := t.UnixMilli()
	if t.Sub(time.UnixMilli(ms)) > 0 {
		ms++
	}
	return ms
}

// commit applies the plan, in one request up to commitBatchBytes (see
// commitParts), then reads it back and reports what the read-back shows. ctx is not cancelled by signals; the commit and
// the read-back each get --timeout, so a commit that used up its time can
// still be verified.
func (r *run) commit(ctx context.Context, k *kafkaClient, plan *Plan, res *report.Result) *report.Result {
	cfg := r.cfg
	at := r.now().UTC()
	offsets := make([]commitOffset, 0, plan.ToCommit())
	tps := make([]TP, 0, plan.ToCommit())
	for i, p := range plan.Partitions {
		if !plan.Commit[i] {
			continue
		}
		tp := TP{Topic: p.Topic, Partition: p.Partition}
		m := commitMark{Version: metadataVersion, RunID: cfg.RunID, Plan: r.id.Plan, Prev: p.PreviousOffset, Count: plan.Count, Set: plan.Set, At: at}
		if cfg.Target.IsTime() {
			t := cfg.Target.Time.UTC()
			m.Time = &t
		}
		offsets = append(offsets, commitOffset{TP: tp, Offset: p.NewOffset, Metadata: m.String()})
		tps = append(tps, tp)
	}
	r.log.Info("committing", "partitions", len(offsets))
	// The commit and the read-back get --timeout each: config.CommitBound,
	// which the launcher's grace period is derived from.
	cctx, ccancel := context.WithTimeout(ctx, cfg.Timeout)
	r.committing = true
	var ans commitAnswer
	var fenced error
	if r.txn != nil {
		ans, fenced = r.txn.commit(cctx, k, cfg.Group, offsets)
	} else {
		ans = commitParts(cctx, cfg.Group, offsets, commitBatchBytes, func(ctx context.Context, part []commitOffset) commitAnswer {
			return k.alter(ctx, cfg.Group, part)
		})
	}
	ccancel()
	hook(hookCommitted)
	if ans.Err != nil {
		r.log.Warn("the commit failed; reading the offsets back to see what changed", "error", errString(ans.Err))
	}

	// Whatever the commit answered, the read-back decides.
	vctx, vcancel := context.WithTimeout(ctx, cfg.Timeout)
	after, readErr := r.committed(vctx, k, cfg.Group, tps)
	vcancel()
	v := verifyCommit(res.Partitions, plan.Commit, r.id, ans, after, readErr)
	res.Warnings = append(res.Warnings, v.Warnings...)
	for _, w := range v.Warnings {
		r.log.Warn(w)
	}
	res.ExitCode, res.Reason, res.Error = v.Code, v.Reason, v.Error
	if fenced != nil && readErr == nil && !slices.ContainsFunc(res.Partitions, func(p report.Partition) bool { return p.Applied }) {
		res.ExitCode, res.Reason = report.ExitSuperseded, report.ReasonSuperseded
		res.Error = r.txn.supersededError(fenced, cfg.Group, after, r.id)
	}
	switch res.ExitCode {
	case report.ExitOK:
		r.log.Info("committed and verified", "partitions", len(offsets))
	case report.ExitPartiallyApplied, report.ExitSuperseded:
		r.log.Error(res.Error, "reason", res.Reason)
	default:
		r.log.Error("nothing was changed", "reason", res.Reason, "error", res.Error)
	}
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
	var ae *authError
	var ue *unreachableError
	var km *kindMismatchError
	switch {
	case config.IsInvalidInput(err), errors.As(err, &ie), errors.As(err, &ae), errors.As(err, &km),
		// A Kafka that cannot be reached as configured (a name that does
		// not resolve, a TLS handshake the brokers refuse) stays so.
		errors.As(err, &ue) && !ue.retryable:
		res.ExitCode = report.ExitInvalidInput
	case errors.As(err, &ga), isGroupActiveErr(err):
		res.ExitCode = report.ExitGroupActive
	case errors.Is(err, errInterrupted):
		res.ExitCode = report.ExitInterrupted
	default:
		res.ExitCode = report.ExitKafkaError
	}
	res.Reason = report.ReasonForExitCode(res.ExitCode)
	switch {
	case errors.Is(err, config.ErrCredentialsNotBound):
		res.Reason = report.ReasonCredentialsNotBound
	case km != nil:
		res.Reason = report.ReasonUnsupportedGroupKind
	}
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

// checkClusterID refuses, before anything is read, fenced or committed, a
// run whose servers reach another cluster than --cluster-id names: a
// replay locked by a cluster's ID must run on that cluster.
func (r *run) checkClusterID(ctx context.Context, k *kafkaClient) error {
	want := r.cfg.ClusterID
	if want == "" {
		return nil
	}
	// Read as every request is, so that refused credentials or brokers
	// never reached say so rather than time out.
	got, err := retry(ctx, k, "read the cluster ID", func(actx context.Context) (string, error) {
		if id := k.clusterID(actx); id != "" || actx.Err() == nil {
			return id, nil
		}
		return "", kafka.NewError(kafka.ErrTimedOut, "no metadata from the brokers yet", false)
	})
	if err != nil {
		return err
	}
	return checkSameCluster(got, want)
}

// checkSameCluster refuses a cluster whose ID, got, is not want (the
// --cluster-id of a run or of a --list or --describe).
func checkSameCluster(got, want string) error {
	switch got {
	case want:
		return nil
	case "":
		got = "one that gives no cluster ID"
	}
	return &inputError{config.Ref(config.FlagClusterID), fmt.Sprintf("the servers reach Kafka cluster %s, not %s; nothing was read or committed", got, want)}
}
