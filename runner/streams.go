package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/internal/groupkind"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// A streams group (KIP-1071) keeps committed offsets as a consumer group
// does, on the partitions of its topology's source topics (the
// application's input topics) and of its repartition topics, and Kafka takes
// an admin's OffsetCommit to it while it has no members: what
// kafka-streams-groups.sh --reset-offsets does (AlterStreamsGroupOffsets).
// So the runner moves it through the consumer-group path, run IDs,
// guards, read-back and undo included, with three differences:
//
//   - the members are the coordinator's (StreamsGroupDescribe): librdkafka
//     sees no member in a streams group, and a live group is refused, or
//     waited for with --wait-for-empty, as Kafka's tool requires it empty;
//   - the scope is the topology's source topics, as --all-input-topics
//     (its repartition topics only when named, as --input-topic), and a
//     named topic outside the topology is refused (streamsScope);
//   - the result warns that the application's local state and its
//     internal topics are not reset by moving offsets.

// streamsSnapshot turns a snapshot librdkafka read of a streams group
// (its committed offsets, and no members) into the streams group's: its
// members refuse the run unless it waits them out, and its scope is its
// topology's input topics. It returns the snapshot to plan from (read
// again after a wait, since the members committed while they ran), and a
// warning about the topics it left out.
func (r *run) streamsSnapshot(ctx context.Context, k *kafkaClient, s *Snapshot, info groupkind.Info) (*Snapshot, string, error) {
	cfg := r.cfg
	if len(info.Members) > 0 && !cfg.DryRun {
		if cfg.WaitForEmpty > 0 {
			cl, err := r.secondClient()
			if err != nil {
				return nil, "", err
			}
			info, err = r.waitKindEmpty(ctx, cl, info)
			cl.Close()
			if err != nil {
				return nil, "", err
			}
		}
		if len(info.Members) > 0 {
			return nil, "", &groupActiveError{info: groupInfoOf(info), waited: max(cfg.WaitForEmpty, 0)}
		}
		var err error
		if s, err = r.snapshot(ctx, k); err != nil {
			return nil, "", err
		}
	}
	s.Group = groupInfoOf(info)
	if cfg.Target.Kind == config.KindPlan || cfg.Target.Kind == config.KindUndo {
		return s, "", nil // the file's partitions, planned under these rules
	}
	field, named := config.Ref(config.FlagTopic), !cfg.Scope.Empty()
	if cfg.Target.Kind == config.KindFile {
		field, named = config.Ref(config.RefOffsetsFile), true
	}
	parts, w, err := streamsScope(s.Partitions, info, cfg.Group, field, named)
	if err != nil {
		return nil, "", err
	}
	s.Partitions = parts
	return s, w, nil
}

// groupInfoOf is the membership the coordinator describes, as the guards
// and the result take it.
func groupInfoOf(info groupkind.Info) GroupInfo {
	g := GroupInfo{State: info.State}
	for _, m := range info.Members {
		g.Members = append(g.Members, Member{ClientID: m})
	}
	return g
}

// streamsScope keeps the partitions of parts that are on the streams
// group's input topics, as kafka-streams-groups.sh --reset-offsets takes
// them (StreamsGroupCommand, Kafka 4.4): without a named topic, its
// topology's source topics only (--all-input-topics reads the
// subtopologies' sourceTopics, never their repartitionSourceTopics), so
// the committed offsets on its repartition topics stay where they are,
// with a warning; a named topic (named: --topic, or an offsets file,
// which field names) may be a source topic or a repartition topic, as
// --input-topic takes any topic the group has committed on. A named
// topic the topology does not read is refused (Kafka's tool would take
// it: the runner holds a streams group to its topology); one the group's
// own committed offsets brought in is left out, with a warning.
func streamsScope(parts []TP, info groupkind.Info, group, field string, named bool) ([]TP, string, error) {
	input := map[string]bool{}
	for _, t := range info.SourceTopics {
		input[t] = true
	}
	if len(input) == 0 && len(info.RepartitionTopics) == 0 {
		return nil, "", &inputError{field, fmt.Sprintf("streams group %s has no topology yet (no member has described it to the coordinator), so its input topics are not known; nothing was planned or changed", group)}
	}
	if named {
		for _, t := range info.RepartitionTopics {
			input[t] = true
		}
	}
	var kept []TP
	var outside, repartition []string
	for _, tp := range parts {
		switch {
		case input[tp.Topic]:
			kept = append(kept, tp)
		case slices.Contains(info.RepartitionTopics, tp.Topic):
			if !slices.Contains(repartition, tp.Topic) {
				repartition = append(repartition, tp.Topic)
			}
		case !slices.Contains(outside, tp.Topic):
			outside = append(outside, tp.Topic)
		}
	}
	reads := orNoSource(info.SourceTopics)
	if len(info.RepartitionTopics) > 0 {
		reads += " and its repartition topics " + strings.Join(info.RepartitionTopics, ", ")
	}
	if len(outside) > 0 && named {
		return nil, "", &inputError{field, fmt.Sprintf("%s: not an input topic of streams group %s, whose topology reads %s; nothing was planned or changed", strings.Join(capNames(outside), ", "), group, reads)}
	}
	var w []string
	if len(repartition) > 0 {
		w = append(w, fmt.Sprintf("left out: the group's committed offsets on its repartition topics %s, as kafka-streams-groups.sh --all-input-topics leaves them (the application reads on from them what it writes there again); name them with %s to move them too, as --input-topic does", strings.Join(capNames(repartition), ", "), config.Ref(config.FlagTopic)))
	}
	if len(outside) > 0 {
		w = append(w, fmt.Sprintf("left out: the group's committed offsets on %s, which are not input topics of its topology (it reads %s)", strings.Join(capNames(outside), ", "), reads))
	}
	if len(kept) == 0 {
		return nil, "", &inputError{field, fmt.Sprintf("streams group %s has no committed offset on its input topics (%s): name them", group, orNoSource(info.SourceTopics))}
	}
	return kept, strings.Join(w, "; "), nil
}

// orNoSource names a topology's source topics, or says it has none.
func orNoSource(topics []string) string {
	if len(topics) == 0 {
		return "no source topic"
	}
	return strings.Join(topics, ", ")
}

// streamsNote is the result's word on what moving a streams group's
// offsets leaves undone, naming the repartition topics moved.
func streamsNote(group string, info groupkind.Info, parts []TP, deleting bool) string {
	var moved []string
	for _, tp := range parts {
		if slices.Contains(info.RepartitionTopics, tp.Topic) && !slices.Contains(moved, tp.Topic) {
			moved = append(moved, tp.Topic)
		}
	}
	n := fmt.Sprintf("a streams group: reset application %s's local state too before it restarts (KafkaStreams#cleanUp, or delete its state directory), or its state stores keep what the old offsets built; ", group)
	if deleting {
		n += fmt.Sprintf("%s deletes its internal topics (changelogs, and the records of its repartition topics) once the offsets are moved, and never in a dry run: %s; an undo puts the offsets back but cannot recreate deleted topics", config.Ref(config.FlagDeleteAllInternalTopics), orNone(info.InternalTopics))
	} else {
		n += fmt.Sprintf("its internal topics (changelogs, and the records of its repartition topics) are kept: %s deletes them, as kafka-streams-groups.sh --delete-all-internal-topics does", config.Ref(config.FlagDeleteAllInternalTopics))
	}
	if len(moved) > 0 {
		n += fmt.Sprintf("; the repartition topics %s are moved as named, as kafka-streams-groups.sh --input-topic moves them (--all-input-topics leaves them)", strings.Join(capNames(moved), ", "))
	}
	return n
}

// staleInternalTopics refuses, as PlanStale, a plan: target's plan whose
// internal topics to delete (planned, bound by its digest) are not those
// the group's topology names now: the application changed its topology
// since the plan, and the approval covered other topics. Without the
// flag, or for another target, there is nothing to hold. It is pure.
func staleInternalTopics(planned *report.InternalTopics, now []string, ofPlan bool) *refusal {
	if planned == nil || !ofPlan {
		return nil
	}
	want := slices.Sorted(slices.Values(planned.Planned))
	got := slices.Sorted(slices.Values(now))
	if slices.Equal(want, got) {
		return nil
	}
	return &refusal{report.ReasonPlanStale, fmt.Sprintf("the plan deletes the internal topics %s, and the group's topology now names %s: the application's topology changed since the plan, so the approval does not cover what would be deleted; nothing was committed or deleted: plan again", orNone(want), orNone(got))}
}

// undoneDeletions is an undo's word on the internal topics the undone run
// deleted: the undo puts the offsets back, and the topics stay gone.
func undoneDeletions(t config.Target) string {
	if t.Kind != config.KindUndo || t.Result == nil || t.Result.InternalTopics == nil || len(t.Result.InternalTopics.Deleted) == 0 {
		return ""
	}
	return fmt.Sprintf("the undone run deleted the internal topics %s of streams group %s, which an undo cannot recreate: the offsets go back, and the application recreates its internal topics empty when it starts (reset its local state too, or it keeps what the deleted changelogs held)", strings.Join(capNames(t.Result.InternalTopics.Deleted), ", "), t.Result.Group)
}

func orNone(topics []string) string {
	if len(topics) == 0 {
		return "none (its topology names no internal topic of its own)"
	}
	return strings.Join(topics, ", ")
}

// deleteInternalTopics deletes the planned internal topics of a streams
// group whose offsets the run moved, in one DeleteTopics request, and
// writes the outcome into res (deletedTopics decides it).
func (r *run) deleteInternalTopics(ctx context.Context, res *report.Result) {
	topics := res.InternalTopics.Planned
	if len(topics) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	r.log.Info("deleting the streams group's internal topics", "topics", strings.Join(topics, ","))
	failed, err := r.deleteTopics(ctx, topics)
	deleted, msg := deletedTopics(topics, failed, err)
	res.InternalTopics.Deleted = deleted
	if msg == "" {
		r.log.Info("internal topics deleted", "topics", strings.Join(topics, ","))
		return
	}
	res.ExitCode, res.Reason, res.Error = report.ExitPartiallyApplied, report.ReasonPartiallyApplied, msg
	r.log.Error(res.Error, "reason", res.Reason)
}

// deletedTopics decides the outcome of deleting planned after a
// successful commit: the topics deleted (or found already gone), and,
// when any was not (failed names them with Kafka's answer; err fails them
// all), the error of a run whose offsets moved and whose deletion did not
// all take (exit 5, PartiallyApplied). It is pure.
func deletedTopics(planned []string, failed map[string]error, err error) ([]string, string) {
	var deleted, notDeleted []string
	for _, t := range planned {
		e := err
		if e == nil {
			e = failed[t]
		}
		if e != nil {
			notDeleted = append(notDeleted, fmt.Sprintf("%s (%s)", t, errString(e)))
			continue
		}
		deleted = append(deleted, t)
	}
	if len(notDeleted) == 0 {
		return deleted, ""
	}
	return deleted, fmt.Sprintf("the offsets are moved (every partition applied), but %d internal topic(s) were not deleted: %s; delete them with kafka-streams-groups.sh --delete-all-internal-topics (after the same reset) or kafka-topics.sh --delete", len(notDeleted), strings.Join(notDeleted, ", "))
}

// deleteTopics asks Kafka to delete topics, and returns those it did not
// delete with its answer; a topic already gone counts as deleted.
func (r *run) deleteTopics(ctx context.Context, topics []string) (map[string]error, error) {
	cl, err := r.secondClient()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	resps, err := kadm.NewClient(cl).DeleteTopics(ctx, topics...)
	if err != nil {
		return nil, err
	}
	failed := map[string]error{}
	for _, t := range topics {
		resp, ok := resps[t]
		switch {
		case !ok:
			failed[t] = errors.New("no answer for it")
		case resp.Err == nil, errors.Is(resp.Err, kerr.UnknownTopicOrPartition):
		default:
			failed[t] = resp.Err
		}
	}
	return failed, nil
}
