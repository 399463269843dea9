package runner

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// confluentOracle makes the runner's calls through confluent-kafka-go's
// AdminClient, a second implementation over the same librdkafka, for the
// differential tests of internal/rdkafka (client_differential_test.go): the same
// questions must get the same answers and the same errors both ways.
type confluentOracle struct{ admin *kafka.AdminClient }

func newConfluentOracle(t *testing.T, bootstrap string) *confluentOracle {
	t.Helper()
	a, err := kafka.NewAdminClient(&kafka.ConfigMap{"bootstrap.servers": bootstrap, "enable.metrics.push": false})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return &confluentOracle{admin: a}
}

// committed is committedOnce through AdminClient.ListConsumerGroupOffsets.
func (k *confluentOracle) committed(ctx context.Context, group string, tps []TP) (map[TP]Committed, error) {
	req := kafka.ConsumerGroupTopicPartitions{Group: group, Partitions: toKafkaTPs(tps)}
	// Stable offsets only: a transactional commit still pending would
	// otherwise be read as the previous offset and then overwritten.
	res, err := k.admin.ListConsumerGroupOffsets(ctx, []kafka.ConsumerGroupTopicPartitions{req}, kafka.SetAdminRequireStableOffsets(true))
	if err != nil {
		return nil, err
	}
	n := 0
	for _, g := range res.ConsumerGroupsTopicPartitions {
		n += len(g.Partitions)
	}
	out := make(map[TP]Committed, n)
	for _, g := range res.ConsumerGroupsTopicPartitions {
		for _, p := range g.Partitions {
			if p.Error != nil {
				return nil, fmt.Errorf("%s/%d: %w", *p.Topic, p.Partition, p.Error)
			}
			if p.Offset < 0 { // OffsetInvalid: asked for, never committed
				continue
			}
			c := Committed{Offset: int64(p.Offset)}
			if p.Metadata != nil {
				c.Metadata = *p.Metadata
			}
			out[TP{Topic: *p.Topic, Partition: p.Partition}] = c
		}
	}
	return out, nil
}

// describeTopics is describeTopicsOnce through AdminClient.DescribeTopics.
func (k *confluentOracle) describeTopics(ctx context.Context, topics []string) (topicInfo, error) {
	res, err := k.admin.DescribeTopics(ctx, kafka.NewTopicCollectionOfTopicNames(topics))
	if err != nil {
		return topicInfo{}, err
	}
	out := topicInfo{Partitions: map[string]int32{}, Leaders: map[TP]int32{}}
	answered := map[string]bool{}
	ids := map[string][]int32{}
	for _, d := range res.TopicDescriptions {
		answered[d.Name] = true
		for _, p := range d.Partitions {
			ids[d.Name] = append(ids[d.Name], int32(p.Partition))
		}
		switch d.Error.Code() {
		case kafka.ErrNoError:
			out.Partitions[d.Name] = int32(len(d.Partitions))
			for _, p := range d.Partitions {
				if p.Leader != nil {
					out.Leaders[TP{Topic: d.Name, Partition: int32(p.Partition)}] = int32(p.Leader.ID)
				}
			}
		case kafka.ErrUnknownTopicOrPart:
			// absent from the map: the planner names it
		default:
			return topicInfo{}, fmt.Errorf("topic %s: %w", d.Name, d.Error)
		}
	}
	if err := checkTopicsAnswered(topics, answered, out.Partitions, func(t string) []int32 { return ids[t] }); err != nil {
		return topicInfo{}, err
	}
	return out, nil
}

// listOffsets is listOffsetsOnce through AdminClient.ListOffsets. asked is
// sorted; the answer is checked by sorting it too, which needs no map.
func (k *confluentOracle) listOffsets(ctx context.Context, what string, asked []TP, spec kafka.OffsetSpec) ([]tpOffset, error) {
	req := make(map[kafka.TopicPartition]kafka.OffsetSpec, len(asked))
	var topic *string
	for i := range asked {
		if topic == nil || *topic != asked[i].Topic {
			// One name per topic, not a copy per partition:
			// confluent-kafka-go copies it to C for each anyway.
			topic = &asked[i].Topic
		}
		req[kafka.TopicPartition{Topic: topic, Partition: asked[i].Partition}] = spec
	}
	res, err := k.admin.ListOffsets(ctx, req)
	if err != nil {
		return nil, err
	}
	got := make([]tpOffset, 0, len(res.ResultInfos))
	for ktp, info := range res.ResultInfos {
		tp := TP{Topic: *ktp.Topic, Partition: ktp.Partition}
		if info.Error.Code() != kafka.ErrNoError {
			return nil, fmt.Errorf("%s: %w", tp, info.Error)
		}
		got = append(got, tpOffset{tp, int64(info.Offset)})
	}
	slices.SortFunc(got, func(a, b tpOffset) int { return compareTPs(a.tp, b.tp) })
	for i, tp := range asked {
		if i >= len(got) || got[i].tp != tp {
			return nil, fmt.Errorf("%s: no answer for %s", what, tp)
		}
	}
	if len(got) != len(asked) {
		return nil, fmt.Errorf("%s: an answer for %s, which was not asked for", what, got[len(asked)].tp)
	}
	return got, nil
}

// alter is alterOnce through AdminClient.AlterConsumerGroupOffsets
// (confluent-kafka-go v2.11.1 keeps a C copy of the partitions per call
// until the process ends).
func (k *confluentOracle) alter(ctx context.Context, group string, offsets []commitOffset) (map[TP]error, error) {
	parts := make([]kafka.TopicPartition, len(offsets))
	for i, o := range offsets {
		topic, md := o.TP.Topic, o.Metadata
		parts[i] = kafka.TopicPartition{Topic: &topic, Partition: o.TP.Partition, Offset: kafka.Offset(o.Offset), Metadata: &md}
	}
	res, err := k.admin.AlterConsumerGroupOffsets(ctx,
		[]kafka.ConsumerGroupTopicPartitions{{Group: group, Partitions: parts}})
	if err != nil {
		return nil, err
	}
	failed := map[TP]error{}
	for _, g := range res.ConsumerGroupsTopicPartitions {
		for _, p := range g.Partitions {
			if p.Error != nil {
				failed[TP{Topic: *p.Topic, Partition: p.Partition}] = p.Error
			}
		}
	}
	return failed, nil
}

func toKafkaTPs(tps []TP) []kafka.TopicPartition {
	if tps == nil {
		return nil
	}
	out := make([]kafka.TopicPartition, len(tps))
	for i, tp := range tps {
		topic := tp.Topic
		out[i] = kafka.TopicPartition{Topic: &topic, Partition: tp.Partition}
	}
	return out
}
