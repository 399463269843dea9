package grouplock

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

func TestUnitQueueKeyNormalisesBootstrapServers(t *testing.T) {
	a := testutil.MakeRequest("ns1", "a").Bootstrap("B:9092, a:9092").Obj()
	b := testutil.MakeRequest("ns2", "b").Bootstrap("a:9092,b:9092,a:9092").Obj()
	c := testutil.MakeRequest("ns1", "c").Bootstrap("a:9092,b:9092").Group("other").Obj()
	if QueueKey(a) != QueueKey(b) {
		t.Fatalf("%q != %q", QueueKey(a), QueueKey(b))
	}
	if QueueKey(a) == QueueKey(c) {
		t.Fatal("different groups share a key")
	}
}

func TestUnitDecideIsFirstInFirstOut(t *testing.T) {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	req := func(name string, s int) Entry {
		return Entry{Kind: EntryRequest, Namespace: "ns", Name: name, Created: at(s)}
	}
	r1, r2, r3 := req("r1", 0), req("r2", 1), req("r3", 2)
	// Same second as r3, earlier name: the tie is broken the same way everywhere.
	r0 := req("r0", 2)
	runbook := Entry{Kind: EntryJob, Namespace: "ops", Name: "rewind", Created: at(1)}
	running := func(e Entry, since int) Entry { e.Since = at(since); return e }

	cases := []struct {
		name     string
		self     Entry
		holders  []Entry
		waiting  []Entry
		start    bool
		blocker  string
		isRunner bool
	}{
		{"first starts", r1, nil, []Entry{r1, r2, r3, r0}, true, "", false},
		{"second waits for the first", r2, nil, []Entry{r1, r2, r3, r0}, false, "r1", false},
		{"each waits for the one just ahead", r3, nil, []Entry{r1, r2, r3, r0}, false, "r0", false},
		{"ties by name", r0, nil, []Entry{r1, r2, r3, r0}, false, "r2", false},
		{"head waits for a holder", r2, []Entry{running(r1, 5)}, []Entry{r2, r3}, false, "r1", true},
		{"behind the head, still the one ahead", r3, []Entry{running(r1, 5)}, []Entry{r2, r3}, false, "r2", false},
		{"an earlier request waits for a holder", req("early", -5), []Entry{running(r1, 5)}, []Entry{r2}, false, "r1", true},
		{"a runbook Job queues with requests", r2, nil, []Entry{runbook, r2}, false, "rewind", false},
		{"a runbook Job waits for a request", runbook, []Entry{running(r1, 3)}, []Entry{runbook, r2}, false, "r1", true},
		{"an orphaned pod holds the group", r2, []Entry{{Kind: EntryPod, Namespace: "ns", Name: "old-pod", Since: at(0)}}, []Entry{r2}, false, "old-pod", true},
		{"self holding is a retry, not a blocker", r2, []Entry{running(r2, 3)}, []Entry{r2}, true, "", false},
		{"free", r2, nil, []Entry{r2}, true, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(c.self, c.holders, c.waiting)
			if d.Start != c.start {
				t.Fatalf("Start = %v, want %v (%+v)", d.Start, c.start, d)
			}
			if c.start {
				return
			}
			if d.Blocker == nil || d.Blocker.Name != c.blocker || d.Running != c.isRunner {
				t.Fatalf("blocker %+v running %v, want %s running %v", d.Blocker, d.Running, c.blocker, c.isRunner)
			}
		})
	}
}

func TestUnitWaitingMessageNamesOnlyTheSameNamespace(t *testing.T) {
	since := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	same := Decision{Blocker: &Entry{Kind: EntryRequest, Namespace: "team-a", Name: "first", Since: since}, Running: true}
	other := Decision{Blocker: &Entry{Kind: EntryRequest, Namespace: "team-b", Name: "secret-project", Since: since}, Running: true}
	queued := Decision{Blocker: &Entry{Kind: EntryJob, Namespace: "team-b", Name: "secret-runbook", Created: since}}
	if m := WaitingMessage("team-a", "orders", same); !strings.Contains(m, "team-a/first") {
		t.Fatalf("same namespace: %q does not name the blocker", m)
	}
	for _, d := range []Decision{other, queued} {
		m := WaitingMessage("team-a", "orders", d)
		if strings.Contains(m, "team-b") || strings.Contains(m, "secret") {
			t.Fatalf("another namespace leaks: %q", m)
		}
		if !strings.Contains(m, "another replay of group \"orders\"") || !strings.Contains(m, "since 2026-03-01T09:00:00Z") {
			t.Fatalf("message %q does not say that another replay is there, and since when", m)
		}
	}
}

func TestUnitGroupQueueStartsOncePerKey(t *testing.T) {
	q := NewQueue()
	var started atomic.Int32
	var wg sync.WaitGroup
	notSeen := func(EntryKind, types.NamespacedName) bool { return false }
	release := make(chan struct{})
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			self := Entry{Kind: EntryRequest, Namespace: "ns", Name: string(rune('a' + i))}
			_, _ = q.TryStart("k", types.NamespacedName{Namespace: "ns", Name: "job-" + self.Name}, self, notSeen, func(pending *Entry) Decision {
				if pending != nil {
					return Decide(self, []Entry{*pending}, nil)
				}
				return Decision{Start: true}
			}, func() (bool, error) {
				started.Add(1)
				<-release // the start's API calls, outside the lock
				return true, nil
			})
		}()
	}
	// Give the others every chance to get past the hold while the first
	// start is in flight; none may.
	for started.Load() == 0 {
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	if started.Load() != 1 {
		t.Fatalf("%d replays started under one key while the cache showed none", started.Load())
	}
	job, ok := q.Pending("k")
	if !ok {
		t.Fatal("no hold after a start")
	}
	// Once the cache shows the Job, the hold ends: the cluster speaks.
	seen := func(_ EntryKind, j types.NamespacedName) bool { return j == job }
	var pending *Entry
	_, _ = q.TryStart("k", job, Entry{Name: "late"}, seen, func(p *Entry) Decision { pending = p; return Decision{} }, nil)
	if pending != nil {
		t.Fatalf("hold %+v outlived the cache showing its Job", pending)
	}
	if _, ok := q.Pending("k"); ok {
		t.Fatal("hold kept")
	}
}

func TestUnitGroupQueueFailedStartHoldsNothing(t *testing.T) {
	q := NewQueue()
	never := func(EntryKind, types.NamespacedName) bool { return false }
	free := func(*Entry) Decision { return Decision{Start: true} }
	d, err := q.TryStart("k", types.NamespacedName{Name: "job"}, Entry{Name: "a"}, never, free, func() (bool, error) { return false, nil })
	if err != nil || d.Start {
		t.Fatalf("a start that did not happen: %+v %v", d, err)
	}
	if _, ok := q.Pending("k"); ok {
		t.Fatal("a failed start left a hold")
	}
}

func TestUnitGroupQueueGroupsDoNotWaitForEachOther(t *testing.T) {
	q := NewQueue()
	free := func(*Entry) Decision { return Decision{Start: true} }
	never := func(EntryKind, types.NamespacedName) bool { return false }
	inStart, release := make(chan struct{}), make(chan struct{})
	go func() {
		_, _ = q.TryStart("a", types.NamespacedName{Name: "job-a"}, Entry{Name: "a"}, never, free, func() (bool, error) {
			close(inStart)
			<-release // a slow API call in group a
			return true, nil
		})
	}()
	<-inStart
	done := make(chan struct{})
	go func() {
		_, _ = q.TryStart("b", types.NamespacedName{Name: "job-b"}, Entry{Name: "b"}, never, free, func() (bool, error) { return true, nil })
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("group b waited for group a's start")
	}
	close(release)
	if _, ok := q.Pending("b"); !ok {
		t.Fatal("no hold for b")
	}
}

// Issue 27, case 1: a start's hold ends once the cache shows its Job,
// whatever became of it since, so that one start that never ran cannot hold
// its group until the launcher restarts.
func TestUnitHoldSettledByWhatTheCacheShows(t *testing.T) {
	job := func(suspend *bool, started, deleting bool) *batchv1.Job {
		j := &batchv1.Job{Spec: batchv1.JobSpec{Suspend: suspend}}
		if started {
			j.Annotations = map[string]string{v1alpha1.AnnotationStartedAt: "2026-03-01T09:00:00Z"}
		}
		if deleting {
			j.DeletionTimestamp = &metav1.Time{Time: t0}
		}
		return j
	}
	cases := []struct {
		name   string
		kind   EntryKind
		cached *batchv1.Job
		want   bool
	}{
		{"a request's Job not in the cache yet", EntryRequest, nil, false},
		{"a request's Job shown, running", EntryRequest, job(nil, false, false), true},
		{"a request's Job suspended at its start timeout", EntryRequest, job(ptr.To(true), false, false), true},
		{"a request's Job being deleted", EntryRequest, job(nil, false, true), true},
		{"a runbook Job not in the cache", EntryJob, nil, false},
		{"a runbook Job shown still suspended, before the start", EntryJob, job(ptr.To(true), false, false), false},
		{"a runbook Job shown started", EntryJob, job(ptr.To(false), true, false), true},
		{"a runbook Job suspended again after its start", EntryJob, job(ptr.To(true), true, false), true},
		{"a runbook Job being deleted", EntryJob, job(ptr.To(true), false, true), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := HoldSettled(c.kind, c.cached); got != c.want {
				t.Fatalf("HoldSettled = %v, want %v", got, c.want)
			}
		})
	}
}

// A waiting message says how its blocker holds the group, in either
// namespace, rather than that a replay "is in progress" when none is.
func TestUnitWaitingMessageSaysHowTheGroupIsHeld(t *testing.T) {
	since := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for _, holds := range []string{HoldRuns, HoldPodStopping, HoldConsumers, HoldJobNotShown, HoldStarting} {
		for _, ns := range []string{"team-a", "team-b"} {
			d := Decision{Blocker: &Entry{Kind: EntryJob, Namespace: ns, Name: "j", Since: since, Holds: holds}, Running: true}
			if m := WaitingMessage("team-a", "orders", d); !strings.Contains(m, holds) {
				t.Fatalf("blocker in %s holding as %q: message %q does not say so", ns, holds, m)
			}
		}
	}
}

// Issue 27: namespaces take turns. One namespace's many waiting requests
// do not hold another's first one back for all of theirs; within a
// namespace the queue is first in first out.
func TestUnitDecideGivesNamespacesTurns(t *testing.T) {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	req := func(ns, name string, s int) Entry {
		return Entry{Kind: EntryRequest, Namespace: ns, Name: name, Created: at(s)}
	}
	a1, a2, a3 := req("busy", "a1", 0), req("busy", "a2", 1), req("busy", "a3", 2)
	b1, b2 := req("quiet", "b1", 3), req("quiet", "b2", 4)
	c1 := req("late", "c1", 5)
	waiting := []Entry{a1, a2, a3, b1, b2, c1}
	// The order: a1, b1, c1 (every namespace's first), a2, b2, a3.
	cases := []struct {
		self    Entry
		blocker string
	}{
		{a1, ""}, {b1, "a1"}, {c1, "b1"}, {a2, "c1"}, {b2, "a2"}, {a3, "b2"},
	}
	for _, c := range cases {
		d := Decide(c.self, nil, waiting)
		switch {
		case c.blocker == "" && !d.Start:
			t.Fatalf("%s: waits for %+v, want it to start", c.self.Name, d.Blocker)
		case c.blocker != "" && (d.Start || d.Blocker.Name != c.blocker):
			t.Fatalf("%s: %+v, want it to wait for %s", c.self.Name, d, c.blocker)
		}
	}
}
