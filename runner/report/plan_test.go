package report

import "testing"

func TestPlanDigest(t *testing.T) {
	i := func(n int64) *int64 { return &n }
	base := []Partition{
		{Topic: "orders", Partition: 1, PreviousOffset: i(10), NewOffset: 5},
		{Topic: "orders", Partition: 0, PreviousOffset: nil, NewOffset: 0},
	}
	d := PlanDigest("billing", "shift:-5", base)
	if len(d) != PlanDigestLength {
		t.Fatalf("digest %q has length %d", d, len(d))
	}
	reordered := []Partition{base[1], base[0]}
	if got := PlanDigest("billing", "shift:-5", reordered); got != d {
		t.Errorf("order changes the digest: %s vs %s", got, d)
	}
	// Fields that are not the plan do not change it.
	noted := []Partition{base[0], base[1]}
	noted[0].Note, noted[0].LogEndOffset = "clamped", 99
	if got := PlanDigest("billing", "shift:-5", noted); got != d {
		t.Errorf("a note changes the digest")
	}
	// A relative target turned absolute, which a plan: run no longer holds
	// to the committed offsets it started from.
	if got := PlanDigest("billing", "offset:5", base); got == d {
		t.Errorf("target: digest unchanged")
	}
	// Nor can the group and the target trade text.
	if PlanDigest("a\nb", "c", base) == PlanDigest("a", "b\nc", base) {
		t.Errorf("a newline in the group moves text into the target unseen")
	}
	changes := map[string]func(ps []Partition) (string, []Partition){
		"group":    func(ps []Partition) (string, []Partition) { return "billing2", ps },
		"new":      func(ps []Partition) (string, []Partition) { ps[0].NewOffset = 6; return "billing", ps },
		"previous": func(ps []Partition) (string, []Partition) { ps[0].PreviousOffset = i(11); return "billing", ps },
		"none":     func(ps []Partition) (string, []Partition) { ps[1].PreviousOffset = i(0); return "billing", ps },
		"topic":    func(ps []Partition) (string, []Partition) { ps[0].Topic = "orders2"; return "billing", ps },
		"left":     func(ps []Partition) (string, []Partition) { ps[0].LeftAlone = "moved"; return "billing", ps },
		"dropped":  func(ps []Partition) (string, []Partition) { return "billing", ps[:1] },
		// A note that makes the guard weigh an undo's forward move is
		// part of the plan: without it the move would pass unweighed.
		"weighed": func(ps []Partition) (string, []Partition) {
			ps[0].Note = NoteUnverified + " (...)"
			return "billing", ps
		},
		// A topic name cannot smuggle a field separator into the text.
		"tab": func(ps []Partition) (string, []Partition) {
			return "billing", []Partition{{Topic: "orders\t1", Partition: 0, NewOffset: 5}}
		},
	}
	for name, change := range changes {
		ps := []Partition{base[0], base[1]}
		g, ps := change(ps)
		if got := PlanDigest(g, "shift:-5", ps); got == d {
			t.Errorf("%s: digest unchanged", name)
		}
	}
}

func TestWeighedAsSkip(t *testing.T) {
	for note, want := range map[string]bool{
		"":                                  false,
		"restores 100, its offset before":   false,
		NoteForced + " (the undo rules...":  true,
		NoteSkipsAgain + " (...); restores": true,
		NoteUnverified + " (...); restores": true,
		"clamped; " + NoteForced:            false,
	} {
		if got := WeighedAsSkip(note); got != want {
			t.Errorf("%q: %t, want %t", note, got, want)
		}
	}
}

// TestDigestBindsInternalTopics: a plan that deletes a streams group's
// internal topics digests them, so that an approval of it covers those
// topics and no others; a plan without them digests as before.
func TestDigestBindsInternalTopics(t *testing.T) {
	i := func(n int64) *int64 { return &n }
	r := Result{Group: "app", Target: Target{Resolved: "offset:0"}, Partitions: []Partition{
		{Topic: "in", Partition: 0, PreviousOffset: i(10), NewOffset: 0},
	}}
	if r.Digest() != PlanDigest("app", "offset:0", r.Partitions) {
		t.Fatalf("a plan that deletes nothing: Digest %s, PlanDigest %s", r.Digest(), PlanDigest("app", "offset:0", r.Partitions))
	}
	with := func(topics ...string) string {
		c := r
		c.InternalTopics = &InternalTopics{Planned: topics}
		return c.Digest()
	}
	ab := with("app-a-changelog", "app-b-repartition")
	seen := map[string]string{"none": r.Digest()}
	for name, d := range map[string]string{
		"empty list":   with(),
		"one fewer":    with("app-a-changelog"),
		"another":      with("app-a-changelog", "app-c-repartition"),
		"one more":     with("app-a-changelog", "app-b-repartition", "app-c-changelog"),
		"joined names": with("app-a-changelog\n\"app-b-repartition"),
	} {
		if d == ab {
			t.Errorf("%s: digest %s is the one of the approved list", name, d)
		}
		for other, o := range seen {
			if o == d {
				t.Errorf("%s and %s digest alike (%s)", name, other, d)
			}
		}
		seen[name] = d
	}
	if got := with("app-b-repartition", "app-a-changelog"); got != ab {
		t.Errorf("the order of the topics changes the digest: %s vs %s", got, ab)
	}
	// Deleted topics are the outcome, not the plan.
	c := r
	c.InternalTopics = &InternalTopics{Planned: []string{"app-a-changelog", "app-b-repartition"}, Deleted: []string{"app-a-changelog"}}
	if c.Digest() != ab {
		t.Errorf("internalTopics.deleted changes the digest")
	}
	// A topic named like a partition line cannot stand for one.
	p := r
	p.Partitions = append(p.Partitions, Partition{Topic: "x", Partition: 0, NewOffset: 1})
	if with("x") == p.Digest() {
		t.Errorf("an internal topic reads as a partition")
	}
}
