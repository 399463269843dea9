package replay

import (
	"bytes"
	"compress/gzip"
	"encoding/json"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// NotCommitted is the failed text of a partition an applying Job left where
// it was without the runner naming an error (the attempt failed before or
// during the commit as a whole). A record keeps it as any failure's text;
// RecordPartitions reads it back as no error.
const NotCommitted = "not committed"

// RecordPartitions turns a record's topics back into per-partition results
// (previous offset nil where the record has -1): what review before apply
// and undo read. It reads topicsGzip when topics is empty.
func RecordPartitions(rec *v1alpha1.ReplayRecord) ([]report.Partition, error) {
	topics := rec.Topics
	if len(topics) == 0 && len(rec.TopicsGzip) > 0 {
		zr, err := gzip.NewReader(bytes.NewReader(rec.TopicsGzip))
		if err != nil {
			return nil, err
		}
		if err := json.NewDecoder(zr).Decode(&topics); err != nil {
			return nil, err
		}
	}
	var out []report.Partition
	for _, t := range topics {
		failed := map[int32]string{}
		for _, f := range t.Failed {
			for _, p := range f.Partitions {
				failed[p] = f.Text
			}
		}
		clamped := map[int32]bool{}
		for _, p := range t.Clamped {
			clamped[p] = true
		}
		notes := map[int32]string{}
		for _, n := range t.Notes {
			for _, p := range n.Partitions {
				notes[p] = n.Text
			}
		}
		leftAlone := map[int32]string{}
		for _, n := range t.LeftAlone {
			for _, p := range n.Partitions {
				leftAlone[p] = n.Text
			}
		}
		for i, p := range t.Partitions {
			if i >= len(t.PreviousOffsets) || i >= len(t.NewOffsets) {
				break
			}
			rp := report.Partition{Topic: t.Name, Partition: p, NewOffset: t.NewOffsets[i], Note: notes[p]}
			if prev := t.PreviousOffsets[i]; prev >= 0 {
				rp.PreviousOffset = &prev
				d := prev - rp.NewOffset
				rp.Delta = &d
			}
			rp.Clamped = clamped[p]
			if i < len(t.LogStartOffsets) && i < len(t.LogEndOffsets) {
				rp.LogStartOffset, rp.LogEndOffset = t.LogStartOffsets[i], t.LogEndOffsets[i]
			}
			rp.LeftAlone = leftAlone[p]
			switch e, ok := failed[p]; {
			case ok:
				if e != NotCommitted {
					rp.Error = e
				}
			case rp.LeftAlone != "":
				// Not committed, on purpose; its delta is none.
			default:
				rp.Applied = !rec.DryRun
			}
			out = append(out, rp)
		}
	}
	return out, nil
}
