package runner

// maxPartitionsPerListOffsets bounds the partitions of one ListOffsets call
// (one leader's, see byLeader), where librdkafka's response handling is
// quadratic in them: librdkafka checks each partition of a call
// against the others for its leader (rd_kafka_topic_partition_list_get_leaders)
// and merges the answers with a nested loop (rd_kafka_ListOffsets_response_merge),
// so a call of n partitions costs n*n comparisons. At 10,000 partitions (3
// leaders, three lookups each) calls of 1,000 spent about 150 ms of CPU there,
// calls of 250 about 50 ms; 125 saved little more for twice the requests.
// The price is one ListOffsets request per 250 partitions of a leader and
// lookup: 18 instead of 9 at 1,000 partitions on 3 brokers, sent
// listOffsetsInFlight at a time, so no later. upstream/ has the librdkafka
// change that makes those functions linear, after which this split saves
// no CPU.
const maxPartitionsPerListOffsets = 250

// listOffsetsInFlight is how many ListOffsets calls per leader and lookup
// run at once (see listOffsetsByLeader).
const listOffsetsInFlight = 2

// byLeader splits partitions into one list per leader broker, in the order
// each leader first appears (partitions with no known leader form their own
// list). The number of lists is bounded by the number of brokers, never by
// the number of partitions. librdkafka sends one ListOffsets request per
// leader either way; a call per leader divides the quadratic cost of its
// response handling (see maxPartitionsPerListOffsets) by the number of brokers.
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

// chunk cuts tps into the fewest consecutive lists of at most limit
// partitions, of sizes that differ by one at most, sharing tps's backing
// array (no copy). limit <= 0 means no limit. Even sizes, not full lists and
// a remainder: a call's cost grows with the square of its partitions
// (maxPartitionsPerListOffsets), and calls in flight together wait for the
// largest.
func chunk(tps []TP, limit int) [][]TP {
	if len(tps) == 0 {
		return nil
	}
	if limit <= 0 || len(tps) <= limit {
		return [][]TP{tps}
	}
	n := (len(tps) + limit - 1) / limit
	size, extra := len(tps)/n, len(tps)%n
	out := make([][]TP, 0, n)
	for i := range n {
		k := size
		if i < extra {
			k++
		}
		out = append(out, tps[:k:k])
		tps = tps[k:]
	}
	return out
}
