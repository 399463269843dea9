package record

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"maps"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// Size bounds of a ReplayRecord. The API server refuses requests over 3 MiB
// and etcd values over 1.5 MiB by default; a record stays well under both.
// 10,000 partitions of 100 topics with production-length names take about
// 300 KB in columns (see TestUnitRecordSizes), so the readable form is the
// norm, and the compressed one is for thousands of topics with long names.
const (
	// maxInlineTopicsBytes is the largest topics list kept as plain JSON.
	maxInlineTopicsBytes = 800 << 10
	// maxGzipTopicsBytes is the largest compressed topics list kept at all.
	maxGzipTopicsBytes = 800 << 10
	// maxRecordTexts bounds the distinct error and note texts in a record,
	// and maxRecordTextBytes each one: an error per partition that names the
	// partition must not make 10,000 texts.
	maxRecordTexts     = 64
	maxRecordTextBytes = 256
	// maxRecordAttempts is the CRD's bound on attempts; the newest are kept.
	maxRecordAttempts = 64
)

// textsElided stands in for texts beyond maxRecordTexts.
const textsElided = "(text not kept: too many distinct texts in one record; see the runner's log)"

// BuildRecord makes the ReplayRecord of a finished Job from its outcome. It
// is pure: the same Job and outcome give the same record.
func BuildRecord(job *batchv1.Job, o Outcome) *v1alpha1.ReplayRecord {
	rec := &v1alpha1.ReplayRecord{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ReplayRecord"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      job.Name,
			Namespace: job.Namespace,
			Labels:    maps.Clone(job.Labels),
			// Not a controller: the Job does not manage it. The reference is
			// for the garbage collector, so Job retention removes it.
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: batchv1.SchemeGroupVersion.String(),
				Kind:       "Job",
				Name:       job.Name,
				UID:        job.UID,
			}},
		},
		Job:     job.Name,
		Runbook: job.Labels[v1alpha1.LabelRunbook],
		Group:   job.Annotations[v1alpha1.AnnotationGroup],
		Outcome: v1alpha1.RecordOutcome{
			Succeeded:      o.Succeeded,
			Reason:         o.Reason,
			Message:        state.Truncate(o.Message, 4096),
			ExitCode:       state.CopyPtr(o.ExitCode),
			OffsetsChanged: o.OffsetsChanged,
			Attempts:       int32(len(o.Attempts)),
		},
		Complete: o.Complete,
	}
	if _, fromRequest := job.Labels[v1alpha1.LabelRequest]; fromRequest {
		rec.Request = job.Annotations[v1alpha1.AnnotationRequest]
	}
	if parent := job.Annotations[v1alpha1.AnnotationParent]; parent != "" {
		rec.Annotations = map[string]string{v1alpha1.AnnotationParent: parent}
	}
	if !o.FinishedAt.IsZero() {
		rec.Outcome.FinishedAt = &metav1.Time{Time: o.FinishedAt}
	}
	attempts := o.Attempts
	if len(attempts) > maxRecordAttempts {
		attempts = attempts[len(attempts)-maxRecordAttempts:]
	}
	for i := range attempts {
		rec.Attempts = append(rec.Attempts, recordAttempt(&attempts[i]))
	}
	r := o.Full
	if r == nil {
		return rec
	}
	if rec.Group == "" {
		rec.Group = r.Group
	}
	rec.RunID, rec.DryRun, rec.ClusterID, rec.GroupType = r.RunID, r.DryRun, r.ClusterID, r.GroupType
	if it := r.InternalTopics; it != nil {
		rec.InternalTopics = &v1alpha1.InternalTopics{Planned: slices.Clone(it.Planned), Deleted: slices.Clone(it.Deleted)}
	}
	rec.Target = r.Target.Resolved
	if rec.Target == "" {
		rec.Target = r.Target.Given
	}
	rec.Warnings = slices.Clone(r.Warnings)
	rec.Totals = APITotals(r.Totals)

	topics := recordTopics(r)
	inline, err := json.Marshal(topics)
	switch {
	case err != nil:
		rec.Complete = false
	case len(inline) <= maxInlineTopicsBytes:
		rec.Topics = topics
	default:
		if gz := gzipBytes(inline); len(gz) <= maxGzipTopicsBytes {
			rec.TopicsGzip = gz
		} else {
			// Never reached with 10,000 partitions; the totals and the
			// attempts still stand, and the record says it lacks the rest.
			rec.Complete = false
			rec.Warnings = append(rec.Warnings, "the partitions were left out of this record: even compressed they exceed the API server's object size")
		}
	}
	return rec
}

func recordAttempt(a *Attempt) v1alpha1.RecordAttempt {
	code := a.ExitCode
	out := v1alpha1.RecordAttempt{
		Pod:            a.Pod,
		ExitCode:       &code,
		Reason:         a.Reason(),
		OffsetsChanged: a.Changed(),
		ResultSource:   a.Source,
		DamagedFrames:  int32(a.DamagedFrames),
	}
	if !a.StartedAt.IsZero() {
		out.StartedAt = &metav1.Time{Time: a.StartedAt}
	}
	if !a.FinishedAt.IsZero() {
		out.FinishedAt = &metav1.Time{Time: a.FinishedAt}
	}
	switch {
	case a.Result != nil:
		out.Error = state.Truncate(a.Result.Error, 1024)
		t := APITotals(a.Result.Totals)
		out.Totals = &t
	case a.Text != "":
		out.Error = state.Truncate(a.Text, 1024)
	}
	return out
}

// recordTopics lays a result's partitions out in columns, one entry per
// topic: the partition numbers, previous offsets (-1 for none) and new
// offsets side by side, and the few partitions with an error or a note
// grouped by text. In a Job that applies (not a dry run), every partition
// the runner did not apply is listed in failed, with its error or "not
// committed", so that failed is exactly what is not at newOffsets.
func recordTopics(r *report.Result) []v1alpha1.RecordTopic {
	var out []v1alpha1.RecordTopic
	texts := map[string]bool{}
	keep := func(s string) string {
		if s == replay.NotCommitted {
			return s // a fixed text, never crowded out
		}
		s = state.Truncate(s, maxRecordTextBytes)
		if !texts[s] && len(texts) >= maxRecordTexts {
			return textsElided
		}
		texts[s] = true
		return s
	}
	// The result is sorted by topic and partition; a runner of another
	// version might not, so sort a copy.
	parts := slices.Clone(r.Partitions)
	slices.SortStableFunc(parts, func(a, b report.Partition) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition) - int(b.Partition)
	})
	for _, p := range parts {
		if len(out) == 0 || out[len(out)-1].Name != p.Topic {
			out = append(out, v1alpha1.RecordTopic{Name: p.Topic, Partitions: []int32{}, PreviousOffsets: []int64{}, NewOffsets: []int64{}})
		}
		t := &out[len(out)-1]
		t.Partitions = append(t.Partitions, p.Partition)
		prev := int64(-1)
		if p.PreviousOffset != nil {
			prev = *p.PreviousOffset
		}
		t.PreviousOffsets = append(t.PreviousOffsets, prev)
		t.NewOffsets = append(t.NewOffsets, p.NewOffset)
		t.LogStartOffsets = append(t.LogStartOffsets, p.LogStartOffset)
		t.LogEndOffsets = append(t.LogEndOffsets, p.LogEndOffset)
		if p.Clamped {
			t.Clamped = append(t.Clamped, p.Partition)
		}
		if p.LeftAlone != "" && p.Error == "" {
			// Left alone by an undo's rules on purpose: not a failure.
			t.LeftAlone = addToGroup(t.LeftAlone, keep(p.LeftAlone), p.Partition)
		}
		failed := p.Error
		if failed == "" && !r.DryRun && !p.Applied && p.LeftAlone == "" {
			failed = replay.NotCommitted
		}
		if failed != "" {
			t.Failed = addToGroup(t.Failed, keep(failed), p.Partition)
		}
		if p.Note != "" {
			t.Notes = addToGroup(t.Notes, keep(p.Note), p.Partition)
		}
	}
	return out
}

func addToGroup(groups []v1alpha1.RecordPartitionNote, text string, partition int32) []v1alpha1.RecordPartitionNote {
	for i := range groups {
		if groups[i].Text == text {
			groups[i].Partitions = append(groups[i].Partitions, partition)
			return groups
		}
	}
	return append(groups, v1alpha1.RecordPartitionNote{Text: text, Partitions: []int32{partition}})
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}
