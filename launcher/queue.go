package launcher

import (
	"cmp"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// QueueKey identifies the consumer group a request moves, across namespaces:
// the bootstrap servers (normalised: trimmed, lower-cased, sorted) and the
// group. At most one request per key runs at a time. Two different bootstrap
// lists for the same cluster are, unavoidably, two keys.
func QueueKey(rr *v1alpha1.ReplayRequest) string {
	servers := strings.Split(rr.Spec.Kafka.BootstrapServers, ",")
	for i, s := range servers {
		servers[i] = strings.ToLower(strings.TrimSpace(s))
	}
	slices.Sort(servers)
	servers = slices.Compact(servers)
	return strings.Join(servers, ",") + "|" + rr.Spec.Group
}

// Decision is the queue's answer for one request.
type Decision struct {
	// Start is true when the request may create its Job now.
	Start bool
	// Blocker is the request it waits for, when Start is false.
	Blocker *v1alpha1.ReplayRequest
}

// Decide says whether self may start, given every request with the same
// QueueKey (peers may include self). It is pure. The queue is:
//
//   - first, the peers that have started (started reports that their Job
//     exists) and not finished: they hold the group;
//   - then the unfinished requests that have not started, first in first
//     out, by creation time, then namespace and name, so that every
//     reconcile agrees on one order.
//
// Self starts when it is at the head. Otherwise its blocker is the request
// just ahead of it: the one it waits for. That one does not change as the
// queue advances, so a waiting request's status is written once, not once
// per request that finishes before it.
//
// Requests being deleted are ignored: their Job goes with them.
func Decide(self *v1alpha1.ReplayRequest, peers []v1alpha1.ReplayRequest, started func(*v1alpha1.ReplayRequest) bool) Decision {
	var running, waiting []*v1alpha1.ReplayRequest
	for i := range peers {
		p := &peers[i]
		if p.UID == self.UID || IsFinished(p) || p.DeletionTimestamp != nil {
			continue
		}
		if started(p) {
			running = append(running, p)
		} else if before(p, self) {
			waiting = append(waiting, p)
		}
	}
	ahead := append(sortedQueue(running), sortedQueue(waiting)...)
	if len(ahead) == 0 {
		return Decision{Start: true}
	}
	return Decision{Blocker: ahead[len(ahead)-1]}
}

func sortedQueue(rs []*v1alpha1.ReplayRequest) []*v1alpha1.ReplayRequest {
	slices.SortFunc(rs, func(a, b *v1alpha1.ReplayRequest) int {
		if before(a, b) {
			return -1
		}
		if before(b, a) {
			return 1
		}
		return 0
	})
	return rs
}

// before is the queue's order: creation time, then namespace, then name.
func before(a, b *v1alpha1.ReplayRequest) bool {
	if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
		return c < 0
	}
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name)) < 0
}

// groupQueue remembers which request the launcher itself started per key,
// until that request is seen finished or deleted. The cluster state (status
// and Jobs) is the source of truth, but the cache can lag behind the
// launcher's own writes by a few milliseconds; the hold closes that window,
// in which a second request could otherwise see the group as free.
//
// After a restart the map is empty and the cache, by then in sync with
// everything the previous leader wrote, is enough.
type groupQueue struct {
	mu      sync.Mutex
	holders map[string]types.NamespacedName
	keys    map[types.NamespacedName]string
}

func newGroupQueue() *groupQueue {
	return &groupQueue{holders: map[string]types.NamespacedName{}, keys: map[types.NamespacedName]string{}}
}

// TryStart runs decide under the queue's lock and takes the hold for who when
// the decision is to start. When another request holds key, the decision is
// never to start, and holder names that request.
func (q *groupQueue) TryStart(key string, who types.NamespacedName, decide func() Decision) (d Decision, holder *types.NamespacedName) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if h, ok := q.holders[key]; ok && h != who {
		// Held: never start, but still say whom self waits for.
		d = decide()
		d.Start = false
		return d, &h
	}
	d = decide()
	if d.Start {
		q.holders[key] = who
		q.keys[who] = key
	}
	return d, nil
}

// Release drops who's hold, if any.
func (q *groupQueue) Release(who types.NamespacedName) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if key, ok := q.keys[who]; ok {
		delete(q.keys, who)
		if q.holders[key] == who {
			delete(q.holders, key)
		}
	}
}

// Holder returns who holds key, for tests and metrics.
func (q *groupQueue) Holder(key string) (types.NamespacedName, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	h, ok := q.holders[key]
	return h, ok
}
