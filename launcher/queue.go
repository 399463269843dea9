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
// QueueKey (peers may include self). It is pure. The rules:
//
//   - a peer that has started (started reports its Job exists) and not
//     finished holds the group: self waits for it;
//   - otherwise the unfinished requests are served first in first out, by
//     creation time, then namespace and name so that every reconcile agrees on
//     one order.
//
// Requests being deleted are ignored: their Job goes with them.
func Decide(self *v1alpha1.ReplayRequest, peers []v1alpha1.ReplayRequest, started func(*v1alpha1.ReplayRequest) bool) Decision {
	var waiting []*v1alpha1.ReplayRequest
	var running *v1alpha1.ReplayRequest
	for i := range peers {
		p := &peers[i]
		if p.UID == self.UID || IsFinished(p) || p.DeletionTimestamp != nil {
			continue
		}
		if started(p) {
			if running == nil || before(p, running) {
				running = p
			}
			continue
		}
		waiting = append(waiting, p)
	}
	if running != nil {
		return Decision{Blocker: running}
	}
	first := self
	for _, p := range waiting {
		if before(p, first) {
			first = p
		}
	}
	if first == self {
		return Decision{Start: true}
	}
	return Decision{Blocker: first}
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

// TryStart runs decide under the queue's lock, unless another request holds
// key, and takes the hold for who when the decision is to start. blocker is
// the holder's name when another request holds the key.
func (q *groupQueue) TryStart(key string, who types.NamespacedName, decide func() Decision) (d Decision, holder *types.NamespacedName) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if h, ok := q.holders[key]; ok && h != who {
		return Decision{}, &h
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
