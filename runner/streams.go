package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/internal/groupkind"
)

// A streams group (KIP-1071) keeps committed offsets as a consumer group
// does, on the partitions of its topology's source topics (the
// application's input topics and its repartition topics), and Kafka takes
// an admin's OffsetCommit to it while it has no members: what
// kafka-streams-groups.sh --reset-offsets does (AlterStreamsGroupOffsets).
// So the runner moves it through the consumer-group path, run IDs,
// guards, read-back and undo included, with three differences:
//
//   - the members are the coordinator's (StreamsGroupDescribe): librdkafka
//     sees no member in a streams group, and a live group is refused, or
//     waited for with --wait-for-empty, as Kafka's tool requires it empty;
//   - the scope is the topology's input topics, as --all-input-topics
//     (the repartition topics among them), and a named topic outside the
//     topology is refused, as --input-topic refuses one;
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
// group's input topics: its topology's source topics, repartition topics
// included (kafka-streams-groups.sh --all-input-topics). A topic the user
// named (named: --topic, or an offsets file, which field names) outside
// them is refused; one the group's own committed offsets brought in is
// left out, with a warning.
func streamsScope(parts []TP, info groupkind.Info, group, field string, named bool) ([]TP, string, error) {
	input := map[string]bool{}
	for _, t := range info.SourceTopics {
		input[t] = true
	}
	for _, t := range info.RepartitionTopics {
		input[t] = true
	}
	if len(input) == 0 {
		return nil, "", &inputError{field, fmt.Sprintf("streams group %s has no topology yet (no member has described it to the coordinator), so its input topics are not known; nothing was planned or changed", group)}
	}
	var kept []TP
	var outside []string
	for _, tp := range parts {
		if input[tp.Topic] {
			kept = append(kept, tp)
		} else if !slices.Contains(outside, tp.Topic) {
			outside = append(outside, tp.Topic)
		}
	}
	reads := strings.Join(info.SourceTopics, ", ")
	if len(info.RepartitionTopics) > 0 {
		reads += " and its repartition topics " + strings.Join(info.RepartitionTopics, ", ")
	}
	var w string
	switch {
	case len(outside) > 0 && named:
		return nil, "", &inputError{field, fmt.Sprintf("%s: not an input topic of streams group %s, whose topology reads %s; nothing was planned or changed", strings.Join(capNames(outside), ", "), group, reads)}
	case len(outside) > 0:
		w = fmt.Sprintf("left out: the group's committed offsets on %s, which are not input topics of its topology (it reads %s)", strings.Join(capNames(outside), ", "), reads)
	}
	if len(kept) == 0 {
		return nil, "", &inputError{field, fmt.Sprintf("streams group %s has no committed offset on its input topics (%s): name them", group, reads)}
	}
	return kept, w, nil
}

// streamsNote is the result's word on what moving a streams group's
// offsets leaves undone, naming the repartition topics moved.
func streamsNote(group string, info groupkind.Info, parts []TP) string {
	var moved []string
	for _, tp := range parts {
		if slices.Contains(info.RepartitionTopics, tp.Topic) && !slices.Contains(moved, tp.Topic) {
			moved = append(moved, tp.Topic)
		}
	}
	n := fmt.Sprintf("a streams group: reset application %s's local state too before it restarts (KafkaStreams#cleanUp, or delete its state directory), or its state stores keep what the old offsets built; its internal topics (changelogs, and the records of its repartition topics) are kept: delete them with kafka-streams-groups.sh --reset-offsets --delete-all-internal-topics, which the runner does not do", group)
	if len(moved) > 0 {
		n += fmt.Sprintf("; the repartition topics %s are moved like the input topics, as kafka-streams-groups.sh --all-input-topics moves them", strings.Join(capNames(moved), ", "))
	}
	return n
}
