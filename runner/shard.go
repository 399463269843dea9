package runner

// maxPartitionsPerCall bounds the partitions of one read-only librdkafka
// call. librdkafka (2.11) matches every partition of a response against the
// call's whole partition list with a linear search
// (rd_kafka_topic_partition_list_find), so one call costs CPU quadratic in
// its partitions: reading 10,000 committed offsets in one call takes about
// 170 ms of CPU, in ten calls of 1,000 about 28 ms. The price is requests: beyond this
// many partitions a read-only call becomes one more request per this many
// partitions (per leader for ListOffsets). The commit is never split, so that
// it is applied or refused as a whole.
//
// At 1,000 it changes nothing at 1,000 partitions or fewer; lower values
// save little more CPU (about 15% at 250) for four times the requests.
const maxPartitionsPerCall = 1000

// offsetFetchLimit is maxPartitionsPerCall for OffsetFetch: none where the
// wrapper's index makes librdkafka's handling of the response linear
// (rdkafka_find.c), so that the read-back is one request whatever the
// partitions.
func offsetFetchLimit() int {
	if findIndexOn {
		return 0
	}
	return maxPartitionsPerCall
}

// byLeader splits partitions into one list per leader broker, in the order
// each leader first appears (partitions with no known leader form their own
// list). The number of lists is bounded by the number of brokers, never by
// the number of partitions. librdkafka sends one ListOffsets request per
// leader either way; a call per leader divides the quadratic cost of its
// response handling (see maxPartitionsPerCall) by the number of brokers.
func byLeader(tps []TP, leaders map[TP]int32) [][]TP {
	idx := map[int32]int{}
	var out [][]TP
	for _, tp := range tps {
		l, ok := leaders[tp]
		if !ok {
			l = -1
		}
		i, seen := idx[l]
		if !seen {
			i = len(out)
			idx[l] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], tp)
	}
	return out
}

// chunk cuts tps into consecutive lists of at most limit partitions, sharing
// tps's backing array (no copy). limit <= 0 means no limit.
func chunk(tps []TP, limit int) [][]TP {
	if len(tps) == 0 {
		return nil
	}
	if limit <= 0 || len(tps) <= limit {
		return [][]TP{tps}
	}
	out := make([][]TP, 0, (len(tps)+limit-1)/limit)
	for len(tps) > limit {
		out = append(out, tps[:limit:limit])
		tps = tps[limit:]
	}
	return append(out, tps)
}
