package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// The group's committed offsets are read through the second client
// (franz-go, reader), not librdkafka: librdkafka 2.11 finds each partition
// of an OffsetFetch answer in the request's list with a linear search, so
// reading a group's 10,000 offsets cost about 260 ms of CPU, where franz-go
// decodes the answer in linear time. Each read is one OffsetFetch to the
// group's coordinator, whatever the number of partitions, for all of the
// group's offsets (the snapshot) or for the partitions committed (the
// read-back). The commit stays with librdkafka (README, Performance).
// reader connects as librdkafka does (secondOptions) and its errors read
// as librdkafka's (fetchErr), so retry and fail treat both alike.

// committed lists group's committed offsets, stable ones only (a
// transactional commit still pending would otherwise be read as the
// previous offset and then overwritten): all of them when tps is nil,
// else those of tps. Partitions with no committed offset are absent.
func (r *run) committed(ctx context.Context, k *kafkaClient, group string, tps []TP) (map[TP]Committed, error) {
	return retry(ctx, k, "list committed offsets of "+group, func(ctx context.Context) (map[TP]Committed, error) {
		out, err := fetchCommitted(ctx, r.reader, group, tps)
		var ke kafka.Error
		if errors.As(err, &ke) && ke.Code() == kafka.ErrGroupIDNotFound {
			// Newer brokers say so instead of listing nothing: a group
			// that never committed has no offsets.
			return map[TP]Committed{}, nil
		}
		return out, err
	})
}

// fetchCommitted is one attempt of committed's: FindCoordinator, then one
// OffsetFetch sent to the coordinator as it is (not through franz-go's
// sharding, which makes an answer that does not name the group read as a
// group with no offsets), in both forms, the batched one of version 8 on
// (KIP-709) and the single-group one before; at most version 9 (the
// reader's MaxVersions), which names topics, where 10 names topic IDs.
func fetchCommitted(ctx context.Context, cl *kgo.Client, group string, tps []TP) (map[TP]Committed, error) {
	if tps != nil && len(tps) == 0 {
		return map[TP]Committed{}, nil // none asked for, not all
	}
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey, fc.CoordinatorKeys = group, []string{group}
	fr, err := fc.RequestWith(ctx, cl)
	if err != nil {
		return nil, fetchErr(err)
	}
	if len(fr.Coordinators) != 1 || fr.Coordinators[0].Key != group {
		return nil, kafka.NewError(kafka.ErrBadMsg, "the FindCoordinator answer does not name group "+group, false)
	}
	if err := kerr.ErrorForCode(fr.Coordinators[0].ErrorCode); err != nil {
		return nil, fetchErr(err)
	}
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group, req.RequireStable = group, true
	g := kmsg.NewOffsetFetchRequestGroup()
	g.Group = group
	if tps != nil {
		idx := map[string]int{}
		for _, tp := range tps {
			i, ok := idx[tp.Topic]
			if !ok {
				i = len(req.Topics)
				idx[tp.Topic] = i
				t := kmsg.NewOffsetFetchRequestTopic()
				t.Topic = tp.Topic
				req.Topics = append(req.Topics, t)
			}
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, tp.Partition)
		}
		for _, t := range req.Topics {
			gt := kmsg.NewOffsetFetchRequestGroupTopic()
			gt.Topic, gt.Partitions = t.Topic, t.Partitions
			g.Topics = append(g.Topics, gt)
		}
	}
	req.Groups = []kmsg.OffsetFetchRequestGroup{g}
	kresp, err := cl.Broker(int(fr.Coordinators[0].NodeID)).Request(ctx, req)
	if err != nil {
		return nil, fetchErr(err)
	}
	resp := kresp.(*kmsg.OffsetFetchResponse)
	rg := kmsg.NewOffsetFetchResponseGroup()
	if resp.Version >= 8 {
		if len(resp.Groups) != 1 || resp.Groups[0].Group != group {
			return nil, kafka.NewError(kafka.ErrBadMsg, "the OffsetFetch answer does not name group "+group, false)
		}
		rg = resp.Groups[0]
	} else {
		// Before version 2 the error is each partition's.
		rg.ErrorCode = resp.ErrorCode
		for _, t := range resp.Topics {
			gt := kmsg.NewOffsetFetchResponseGroupTopic()
			gt.Topic = t.Topic
			for _, p := range t.Partitions {
				gp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
				gp.Partition, gp.Offset, gp.Metadata, gp.ErrorCode = p.Partition, p.Offset, p.Metadata, p.ErrorCode
				gt.Partitions = append(gt.Partitions, gp)
			}
			rg.Topics = append(rg.Topics, gt)
		}
	}
	if err := kerr.ErrorForCode(rg.ErrorCode); err != nil {
		return nil, fetchErr(err)
	}
	n := 0
	for _, t := range rg.Topics {
		n += len(t.Partitions)
	}
	out := make(map[TP]Committed, n)
	for _, t := range rg.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("%s/%d: %w", t.Topic, p.Partition, fetchErr(err))
			}
			if p.Offset < 0 { // asked for, never committed
				continue
			}
			c := Committed{Offset: p.Offset}
			if p.Metadata != nil {
				c.Metadata = *p.Metadata
			}
			out[TP{Topic: t.Topic, Partition: p.Partition}] = c
		}
	}
	return out, nil
}

// readerVersions are franz-go's versions with OffsetFetch at most 9:
// version 10 names topics by ID, which fetchCommitted does not resolve.
func readerVersions() *kversion.Versions {
	v := kversion.Stable()
	v.SetMaxKeyVersion(kmsg.OffsetFetch.Int16(), 9)
	return v
}

// fetchErr makes a franz-go error the kafka.Error librdkafka would have
// reported: a broker's error code is the same number in both (librdkafka
// passes Kafka's codes through), so retry and the exit codes treat both
// clients alike. Refused credentials are an *authError (exit 2); an error
// that is not Kafka's (a connection that failed, an attempt's timeout) is a
// transport error, retried: a Kafka that cannot be reached at all is
// librdkafka's to diagnose (connect.go), which it does beside this read.
func fetchErr(err error) error {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return kafka.NewError(kafka.ErrTransport, err.Error(), false)
	}
	switch ke {
	case kerr.SaslAuthenticationFailed, kerr.IllegalSaslState, kerr.UnsupportedSaslMechanism:
		return &authError{kafka.NewError(kafka.ErrAuthentication, err.Error(), false)}
	}
	return kafka.NewError(kafka.ErrorCode(ke.Code), "", false)
}
