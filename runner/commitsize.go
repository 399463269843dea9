package runner

import (
	"context"
	"errors"
)

// Kafka's group coordinator writes the offsets of one commit request
// (OffsetCommit, or TxnOffsetCommit) to __consumer_offsets as one record
// batch, atomically: a request whose records do not fit in one batch of the
// topic's max.message.bytes (the broker's message.max.bytes, 1,048,588 by
// default, uncompressed unless offsets.topic.compression.codec says
// otherwise) is refused whole, and the coordinator answers
// UNKNOWN_SERVER_ERROR (CoordinatorRuntime's RecordTooLargeException). Each
// partition is one record: its key holds the group and topic names, its
// value the offset and the commit metadata, so the limit is a number of
// bytes, not of partitions: with the runner's marks (about 140 bytes each
// with a launcher's run ID, over 600 with the longest run ID allowed) one
// request of a few thousand partitions exceeds it.
//
// So a commit larger than commitBatchBytes is sent as consecutive requests
// of at most that many bytes of records each, in plan order, each waiting
// for the previous one's answer. In a plain commit the parts are separate
// writes: a failure after the first leaves the commit partly applied, which
// the read-back names (PartiallyApplied) and a retry with the same run ID
// completes exactly (every mark carries the whole commit's n= and set=, see
// settlePrior). In a transaction they are one: nothing shows before the
// transaction commits.
const commitBatchBytes = 768 << 10 // a quarter below Kafka's default limit

// Sizes of one offset commit record, as the coordinator writes it:
// OffsetCommitKey (version 1: key version, group, topic, partition) and
// OffsetCommitValue (version 3, the largest: value version, offset, leader
// epoch, metadata, commit timestamp), each string with a 2-byte length, and
// at most DefaultRecord.MAX_RECORD_OVERHEAD (21) bytes of record framing.
const (
	commitKeyFixed   = 2 + 2 + 2 + 4
	commitValueFixed = 2 + 8 + 4 + 2 + 8
	recordOverhead   = 21
)

// commitRecordBytes bounds the bytes one committed partition takes in the
// coordinator's batch.
func commitRecordBytes(group string, o commitOffset) int {
	return commitKeyFixed + len(group) + len(o.TP.Topic) + commitValueFixed + len(o.Metadata) + recordOverhead
}

// splitCommit cuts offsets, in their order, into consecutive parts of at
// most limit bytes of records each (commitRecordBytes); a partition larger
// than limit on its own is a part of its own, which the broker judges.
func splitCommit(group string, offsets []commitOffset, limit int) [][]commitOffset {
	var parts [][]commitOffset
	start, size := 0, 0
	for i, o := range offsets {
		n := commitRecordBytes(group, o)
		if i > start && size+n > limit {
			parts = append(parts, offsets[start:i])
			start, size = i, 0
		}
		size += n
	}
	if start < len(offsets) {
		parts = append(parts, offsets[start:])
	}
	return parts
}

// errNotSent is the answer of a partition whose part of the commit was
// never sent, because an earlier part failed.
var errNotSent = errors.New("not sent: an earlier part of the commit failed, so the runner sent no more")

// commitParts sends a commit through send, one part (splitCommit) at a
// time, and stops at the first part that fails, wholly or on any partition:
// what was refused may be refused for every partition (the group became
// active), and a part the runner does not send is one it knows it did not
// apply. The answers are merged per partition; a part's whole-request
// error becomes the error of each of its partitions, so that partitions of
// the parts that were answered well keep their answer. One part is sent,
// and answered, exactly as send answers it.
func commitParts(ctx context.Context, group string, offsets []commitOffset, limit int, send func(context.Context, []commitOffset) commitAnswer) commitAnswer {
	parts := splitCommit(group, offsets, limit)
	if len(parts) <= 1 {
		return send(ctx, offsets)
	}
	out := commitAnswer{Failed: map[TP]error{}}
	for i, part := range parts {
		a := send(ctx, part)
		out.Unanswered = out.Unanswered || a.Unanswered
		for tp, err := range a.Failed {
			out.Failed[tp] = err
		}
		if a.Err != nil {
			for _, o := range part {
				if out.Failed[o.TP] == nil {
					out.Failed[o.TP] = a.Err
				}
			}
		}
		if a.Err == nil && len(a.Failed) == 0 {
			continue
		}
		for _, rest := range parts[i+1:] {
			for _, o := range rest {
				out.Failed[o.TP] = errNotSent
			}
		}
		break
	}
	return out
}
