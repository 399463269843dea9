package report

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
)

// PlanDigestLength is the length, in hex digits, of a plan digest: 64 bits,
// short enough to type into `kubectl annotate`, and far beyond what anyone
// could match by crafting another plan.
const PlanDigestLength = 16

// planDigestVersion starts the digested text, so that a change to what is
// digested can never make an old approval match a new plan.
const planDigestVersion = "kafka-replay plan v2\n"

// An undo's forward moves back to where the consumers were before the
// undone run are no skips for the guard, unless its note starts with one of
// these: the move is weighed like any other, as it may pass over messages
// the consumers never handled. A plan of the undo (its dry run's result, or
// a ReplayRecord of it, which keeps notes) keeps the note, and PlanDigest
// binds it, so that applying the plan weighs the move as the undo did.
const (
	// NoteForced: restored only because of force.
	NoteForced = "forced"
	// NoteSkipsAgain: the undone run was itself an undo, so its previous
	// offset is where an earlier replay put the group.
	NoteSkipsAgain = "skips again"
	// NoteUnverified: the group no longer records the undone run's commit,
	// which alone vouches for its previous offset.
	NoteUnverified = "unverified"
	// NoteRestores starts the note of an undo's partition that goes back
	// to its offset before the undone run ("restores 1200, its offset
	// before the undone run"); a move the guard weighs starts with one of
	// the notes above instead. Partition.Messages counts such a forward
	// move as no skip.
	NoteRestores = "restores"
)

// WeighedAsSkip reports whether a partition's note marks an undo's forward
// move as one the skip guard weighs.
func WeighedAsSkip(note string) bool {
	for _, p := range []string{NoteForced, NoteSkipsAgain, NoteUnverified} {
		if strings.HasPrefix(note, p) {
			return true
		}
	}
	return false
}

// PlanDigest is the short digest of a plan: the group, the target it was
// resolved for (result.target.resolved: whether a plan: run holds the plan
// to the committed offsets it started from depends on it, so an edited
// target is an edited plan) and, for every partition in the plan, its
// topic, partition, the committed offset the plan starts from ("-" for
// none), the offset it moves to, whether an undo leaves it alone, and
// whether its note makes the guard weigh an undo's move (WeighedAsSkip). The
// order of ps does not matter. It ties an approval to the exact plan the
// approver saw: the launcher shows it in status.plan.digest and accepts
// kafkareplay.dev/approve only with it, and the runner's plan: target
// recomputes it from the plan file. A plan that also deletes a streams
// group's internal topics is digested by [Result.Digest], which binds them
// too.
func PlanDigest(group, target string, ps []Partition) string {
	return planDigest(group, target, ps, nil)
}

// Digest is r's plan digest: [PlanDigest] of its group, resolved target
// and partitions and, when the plan deletes a streams group's internal
// topics (r.InternalTopics, --delete-all-internal-topics), those topics:
// an approval of a plan that deletes nothing does not cover one that
// deletes, nor one that deletes other topics. A plan without
// InternalTopics digests as PlanDigest does, so its digest is what runners
// before internal topics computed.
func (r *Result) Digest() string {
	return planDigest(r.Group, r.Target.Resolved, r.Partitions, r.InternalTopics)
}

func planDigest(group, target string, ps []Partition, internal *InternalTopics) string {
	type line struct {
		topic     string
		partition int32
		text      string
	}
	lines := make([]line, 0, len(ps))
	for _, p := range ps {
		prev := "-"
		if p.PreviousOffset != nil {
			prev = strconv.FormatInt(*p.PreviousOffset, 10)
		}
		left := ""
		if p.LeftAlone != "" {
			left = "\tleft-alone"
		}
		if WeighedAsSkip(p.Note) {
			left += "\tweighed"
		}
		lines = append(lines, line{p.Topic, p.Partition, strconv.Quote(p.Topic) + "\t" + strconv.FormatInt(int64(p.Partition), 10) + "\t" + prev + "\t" + strconv.FormatInt(p.NewOffset, 10) + left + "\n"})
	}
	slices.SortFunc(lines, func(a, b line) int {
		if c := strings.Compare(a.topic, b.topic); c != 0 {
			return c
		}
		return int(a.partition) - int(b.partition)
	})
	h := sha256.New()
	h.Write([]byte(planDigestVersion))
	h.Write([]byte(strconv.Quote(group) + "\n"))
	h.Write([]byte(strconv.Quote(target) + "\n"))
	for _, l := range lines {
		h.Write([]byte(l.text))
	}
	if internal != nil {
		// Every partition line starts with a quote: this one cannot be
		// read as one, and a plan that deletes no topic (an empty list)
		// is not one that is silent about deleting.
		h.Write([]byte("delete internal topics\n"))
		for _, t := range slices.Sorted(slices.Values(internal.Planned)) {
			h.Write([]byte(strconv.Quote(t) + "\n"))
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:PlanDigestLength]
}
