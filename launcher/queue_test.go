package launcher

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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
	r1 := testutil.MakeRequest("ns", "r1").UID("1").Created(at(0)).Obj()
	r2 := testutil.MakeRequest("ns", "r2").UID("2").Created(at(1)).Obj()
	r3 := testutil.MakeRequest("ns", "r3").UID("3").Created(at(2)).Obj()
	// Same second as r3, earlier name: the tie is broken the same way everywhere.
	r0 := testutil.MakeRequest("ns", "r0").UID("0").Created(at(2)).Obj()
	peers := []v1alpha1.ReplayRequest{*r1, *r2, *r3, *r0}
	none := func(*v1alpha1.ReplayRequest) bool { return false }

	if d := Decide(r1, peers, none); !d.Start {
		t.Fatalf("r1 (first) must start: %+v", d)
	}
	if d := Decide(r2, peers, none); d.Start || d.Blocker.Name != "r1" {
		t.Fatalf("r2 must wait for r1: %+v", d)
	}
	// Each waits for the request just ahead of it: r0 before r3 (same
	// second, name order).
	if d := Decide(r3, peers, none); d.Start || d.Blocker.Name != "r0" {
		t.Fatalf("r3 must wait for r0: %+v", d)
	}
	if d := Decide(r0, peers, none); d.Start || d.Blocker.Name != "r2" {
		t.Fatalf("r0 must wait for r2: %+v", d)
	}

	// r1 started: it heads the queue, even before an earlier-sorting
	// request, and the ones behind keep waiting for the same predecessor.
	started := func(p *v1alpha1.ReplayRequest) bool { return p.Name == "r1" }
	if d := Decide(r2, peers, started); d.Start || d.Blocker.Name != "r1" {
		t.Fatalf("r2 must wait for running r1: %+v", d)
	}
	if d := Decide(r3, peers, started); d.Start || d.Blocker.Name != "r0" {
		t.Fatalf("r3 must still wait for r0: %+v", d)
	}
	early := testutil.MakeRequest("ns", "early").UID("e").Created(at(-5)).Obj()
	if d := Decide(early, append(peers, *early), started); d.Start || d.Blocker.Name != "r1" {
		t.Fatalf("an earlier-sorting request must wait for running r1: %+v", d)
	}

	// r1 finished: r2 is next, then r0 before r3.
	Finish(&peers[0], Outcome{Succeeded: true, Reason: "Applied"}, "", t0)
	if d := Decide(r2, peers, none); !d.Start {
		t.Fatalf("r2 must start after r1: %+v", d)
	}
	Finish(&peers[1], Outcome{Succeeded: true, Reason: "Applied"}, "", t0)
	if d := Decide(r3, peers, none); d.Start || d.Blocker.Name != "r0" {
		t.Fatalf("r3 must wait for r0: %+v", d)
	}
	if d := Decide(r0, peers, none); !d.Start {
		t.Fatalf("r0 must start after r2: %+v", d)
	}
	// A request being deleted does not hold the queue.
	now := metav1.Now()
	peers[3].DeletionTimestamp = &now
	if d := Decide(r3, peers, none); !d.Start {
		t.Fatalf("r3 must start once r0 is being deleted: %+v", d)
	}
}

func TestUnitGroupQueueHoldsOneRequestPerKey(t *testing.T) {
	q := newGroupQueue()
	var started atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			who := types.NamespacedName{Namespace: "ns", Name: string(rune('a' + i))}
			if d, _ := q.TryStart("k", who, func() Decision { return Decision{Start: true} }); d.Start {
				started.Add(1)
			}
		}()
	}
	wg.Wait()
	if started.Load() != 1 {
		t.Fatalf("%d requests started under one key", started.Load())
	}
	holder, _ := q.Holder("k")
	if d, h := q.TryStart("k", types.NamespacedName{Namespace: "ns", Name: "zz"}, func() Decision { return Decision{Start: true} }); d.Start || h == nil || *h != holder {
		t.Fatal("a second request got past the hold")
	}
	// The holder itself may run its decision again (a retried reconcile).
	if d, _ := q.TryStart("k", holder, func() Decision { return Decision{Start: true} }); !d.Start {
		t.Fatal("holder refused")
	}
	q.Release(holder)
	if d, _ := q.TryStart("k", types.NamespacedName{Namespace: "ns", Name: "zz"}, func() Decision { return Decision{Start: true} }); !d.Start {
		t.Fatal("key not freed by Release")
	}
}
