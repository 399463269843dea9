package grouplock

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kafka-replay/kafka-replay/runner/config"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// QueueKey identifies the consumer group a request moves, across namespaces:
// the bootstrap servers, as the one server normaliser spells them
// (replay.ServersKey: case, order, duplicates, protocol prefixes and the
// default port do not matter), and the group. At most one replay per key
// runs at a time. Two lists that reach the same cluster through different
// servers are, unavoidably, two keys; but a request that names a Strimzi
// Kafka (spec.kafka.clusterRef) is keyed by the cluster's ID instead, which
// its runner checks (REPLAY_CLUSTER_ID), so that such requests share one
// lock whichever listener they use.
func QueueKey(rr *v1alpha1.ReplayRequest) string {
	return queueKey(replay.BootstrapServers(rr), replay.ClusterID(rr), replay.Group(rr))
}

func queueKey(bootstrapServers, clusterID, group string) string {
	if clusterID != "" {
		return "cluster-id:" + clusterID + "|" + group
	}
	return replay.ServersKey(bootstrapServers) + "|" + group
}

// PodSpecQueueKey is the QueueKey of whatever a runner pod spec replays,
// read from the runner container's environment, the one place every runner
// (launcher-made, runbook or hand-made) says which group it moves. It is
// empty for a spec without a runner container or without those settings.
func PodSpecQueueKey(spec *corev1.PodSpec) string {
	for _, c := range spec.Containers {
		if c.Name != state.ContainerName {
			continue
		}
		var servers, clusterID, group string
		for _, e := range c.Env {
			switch e.Name {
			case config.EnvBootstrapServers:
				servers = e.Value
			case config.EnvClusterID:
				clusterID = e.Value
			case config.EnvGroup:
				group = e.Value
			}
		}
		if servers == "" || group == "" {
			return ""
		}
		return queueKey(servers, clusterID, group)
	}
	return ""
}

// EntryKind says what a queue entry is.
type EntryKind string

const (
	// EntryRequest is a ReplayRequest.
	EntryRequest EntryKind = "ReplayRequest"
	// EntryJob is a runner Job: one that runs (a request's, a runbook's or
	// any other with the runner label), or a runbook Job waiting to start.
	EntryJob EntryKind = "Job"
	// EntryPod is a runner pod whose Job the launcher does not see (deleted
	// with --cascade=orphan, say) and that still runs.
	EntryPod EntryKind = "Pod"
)

// Entry is one replay in a group's queue: one that holds the group, or one
// that waits for it.
type Entry struct {
	Kind      EntryKind
	Namespace string
	Name      string
	// Created orders the waiting entries, first in first out.
	Created time.Time
	// Since is, for a holder, since when it holds the group.
	Since time.Time
	// Holds is, for a holder, how it holds the group (HoldRuns, ...), so
	// that a waiting message says what actually holds it.
	Holds string
}

// How a holder holds its group (Entry.Holds).
const (
	HoldRuns        = "its runner runs"
	HoldPodStopping = "its runner pod is still stopping"
	HoldConsumers   = "its paused consumers are not restored yet"
	HoldJobNotShown = "it has started and its Job is not shown yet"
	HoldStarting    = "it is starting"
)

func (e Entry) key() types.NamespacedName {
	return types.NamespacedName{Namespace: e.Namespace, Name: e.Name}
}

// Decision is the queue's answer for one waiting entry.
type Decision struct {
	// Start is true when the entry may start now.
	Start bool
	// Blocker is the entry it waits for, when Start is false: the one just
	// ahead of it.
	Blocker *Entry
	// Running is true when Blocker holds the group (rather than waits
	// ahead).
	Running bool
}

// Decide says whether self may start, given what holds the group (see
// Holders) and the entries that wait for it (self may be among them). It is
// pure. The queue is: first the holders, then the waiting entries in turns
// by namespace (fairOrder): every namespace's first, first in first out,
// then every namespace's second, and so on, so that one namespace's many
// requests do not hold another's one back for all of theirs.
//
// Self starts when nothing holds the group and nothing waits ahead of it.
// Otherwise its blocker is the entry just ahead of it: the one it waits for.
// That one changes only when an entry comes in ahead of it (another
// namespace's turn), so a waiting request's status is not written once per
// replay that finishes before it.
func Decide(self Entry, holders, waiting []Entry) Decision {
	queue := []Entry{self}
	for _, w := range waiting {
		if w.Kind == self.Kind && w.key() == self.key() {
			continue
		}
		queue = append(queue, w)
	}
	fairOrder(queue)
	if i := slices.IndexFunc(queue, func(e Entry) bool { return e.Kind == self.Kind && e.key() == self.key() }); i > 0 {
		return Decision{Blocker: &queue[i-1]}
	}
	var held []Entry
	for _, h := range holders {
		if h.Kind == self.Kind && h.key() == self.key() {
			// Self already holds it: a retried start, which the
			// deterministic Job name makes safe.
			continue
		}
		held = append(held, h)
	}
	if len(held) == 0 {
		return Decision{Start: true}
	}
	slices.SortFunc(held, func(a, b Entry) int {
		return cmp.Or(a.Since.Compare(b.Since), compareEntries(a, b))
	})
	return Decision{Blocker: &held[len(held)-1], Running: true}
}

// fairOrder sorts waiting entries into the queue's order: by their turn
// (the how-manieth of their namespace they are, first in first out), then
// first in first out across namespaces. Within one namespace it is first in
// first out. A namespace's entries that never start each hold the group for
// at most the start bound (StartVerdict), and those of n namespaces take
// turns, so one namespace holds another's next request back by at most one
// such bound per namespace ahead of it, not one per request it queued.
func fairOrder(es []Entry) {
	sortEntries(es)
	type turned struct {
		turn int
		e    Entry
	}
	ts := make([]turned, len(es))
	seen := map[string]int{}
	for i, e := range es {
		ts[i] = turned{seen[e.Namespace], e}
		seen[e.Namespace]++
	}
	slices.SortStableFunc(ts, func(a, b turned) int { return cmp.Compare(a.turn, b.turn) })
	for i := range ts {
		es[i] = ts[i].e
	}
}

func sortEntries(es []Entry) {
	slices.SortFunc(es, compareEntries)
}

// compareEntries is first in first out: creation time, then kind, namespace
// and name, so that every reconcile agrees on one order.
func compareEntries(a, b Entry) int {
	return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// WaitingMessage is what a waiting request's status says. It names the
// blocker only when it is in the same namespace: a tenant learns nothing
// about another namespace's replays but that one exists, and since when.
func WaitingMessage(namespace, group string, d Decision) string {
	b := d.Blocker
	if b == nil {
		return fmt.Sprintf("waiting for group %q", group)
	}
	if b.Namespace == namespace {
		what := "request"
		switch b.Kind {
		case EntryJob:
			what = "Job"
		case EntryPod:
			what = "runner pod"
		}
		verb := "is queued first"
		if d.Running {
			verb = "holds it (" + state.ValueOrString(b.Holds, HoldRuns) + ")"
		}
		return fmt.Sprintf("waiting for %s %s/%s, which %s: group %q on the same Kafka cluster", what, b.Namespace, b.Name, verb, group)
	}
	if d.Running {
		return fmt.Sprintf("waiting: another replay of group %q on the same Kafka cluster holds it since %s (%s)", group, b.Since.UTC().Format(time.RFC3339), state.ValueOrString(b.Holds, HoldRuns))
	}
	return fmt.Sprintf("waiting: another replay of group %q on the same Kafka cluster is queued first, since %s", group, b.Created.UTC().Format(time.RFC3339))
}

// podActive reports whether a pod may still run the runner: it has not
// reached a terminal phase. A pod being deleted counts until it is gone: its
// containers get their grace period and may commit during it.
func PodActive(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// jobRuns reports whether a Job may still make runner pods: not finished,
// not suspended, not being deleted.
func JobRuns(j *batchv1.Job) bool {
	if finished, _, _ := state.JobFinished(j); finished {
		return false
	}
	return j.DeletionTimestamp == nil && (j.Spec.Suspend == nil || !*j.Spec.Suspend)
}

// Holders is what holds a group, derived from the cluster alone (a pure
// function over what the cache shows), so that a restarted launcher knows as
// much as the one before it:
//
//   - every runner Job of the group that runs or may still make pods;
//   - every runner pod of the group that is active or terminating, whether or
//     not its Job still exists (a Job or request deleted with
//     --cascade=orphan leaves its pod running);
//   - every request that has started and not finished whose Job is not
//     shown (its own reconcile will say whether it was deleted);
//   - every request whose consumers are recorded and not yet restored
//     (ConsumersHeld), from before its Job to after it, deleted or not.
//
// jobs, pods and requests must all be of one group (one QueueKey).
func Holders(requests []v1alpha1.ReplayRequest, jobs []batchv1.Job, pods []corev1.Pod) []Entry {
	var out []Entry
	jobByUID := map[types.UID]*batchv1.Job{}
	jobNames := map[types.NamespacedName]bool{}
	for i := range jobs {
		j := &jobs[i]
		jobByUID[j.UID] = j
		jobNames[types.NamespacedName{Namespace: j.Namespace, Name: j.Name}] = true
	}
	activePods := map[types.UID]*corev1.Pod{}
	for i := range pods {
		p := &pods[i]
		if !PodActive(p) {
			continue
		}
		if j := jobByUID[types.UID(p.Labels[batchv1.ControllerUidLabel])]; j != nil {
			activePods[j.UID] = p
			continue
		}
		holds := HoldRuns
		if p.DeletionTimestamp != nil {
			holds = HoldPodStopping
		}
		out = append(out, Entry{Kind: EntryPod, Namespace: p.Namespace, Name: p.Name, Created: p.CreationTimestamp.Time, Since: p.CreationTimestamp.Time, Holds: holds})
	}
	for i := range jobs {
		j := &jobs[i]
		holds := HoldRuns
		switch {
		case JobRuns(j):
		case activePods[j.UID] != nil:
			holds = HoldPodStopping
		default:
			continue
		}
		out = append(out, Entry{Kind: EntryJob, Namespace: j.Namespace, Name: j.Name, Created: j.CreationTimestamp.Time, Since: JobSince(j), Holds: holds})
	}
	for i := range requests {
		rr := &requests[i]
		held := state.ConsumersHeld(rr)
		if !held && (!state.IsStarted(rr) || state.IsFinished(rr)) {
			continue
		}
		if !held && jobNames[types.NamespacedName{Namespace: rr.Namespace, Name: rr.Status.JobName}] {
			continue // the Job speaks for it
		}
		since := rr.CreationTimestamp.Time
		if rr.Status.StartTime != nil {
			since = rr.Status.StartTime.Time
		}
		holds := HoldJobNotShown
		if held {
			holds = HoldConsumers
		}
		out = append(out, Entry{Kind: EntryRequest, Namespace: rr.Namespace, Name: rr.Name, Created: rr.CreationTimestamp.Time, Since: since, Holds: holds})
	}
	return out
}

// jobSince is when a Job began to hold its group: when the launcher started
// it (a runbook Job), else when it was made.
func JobSince(j *batchv1.Job) time.Time {
	if t, err := time.Parse(time.RFC3339, j.Annotations[v1alpha1.AnnotationStartedAt]); err == nil {
		return t
	}
	return j.CreationTimestamp.Time
}

// Waiting is who waits for a group: the requests that have neither finished
// nor started and are not being deleted, and the runbook Jobs the launcher
// trusts and has yet to start.
func Waiting(requests []v1alpha1.ReplayRequest, runbookJobs []batchv1.Job) []Entry {
	var out []Entry
	for i := range requests {
		rr := &requests[i]
		// A plan awaiting a decision waits for a person, not for the
		// group: the requests after it go on meanwhile.
		if state.IsStarted(rr) || state.IsFinished(rr) || rr.DeletionTimestamp != nil || state.ConsumersHeld(rr) || state.AwaitsDecision(rr) {
			continue
		}
		out = append(out, Entry{Kind: EntryRequest, Namespace: rr.Namespace, Name: rr.Name, Created: rr.CreationTimestamp.Time})
	}
	for i := range runbookJobs {
		j := &runbookJobs[i]
		if RunbookWaits(j) {
			out = append(out, Entry{Kind: EntryJob, Namespace: j.Namespace, Name: j.Name, Created: j.CreationTimestamp.Time})
		}
	}
	return out
}

// HoldSettled says whether the cache shows a start the launcher made, so
// that Holders judges it from then on and the in-memory hold may end,
// whatever became of the start since: kind is the started entry's, cached
// its Job as the cache shows it (nil when the cache has none). A request's
// Job is shown once the cache has it at all: suspended at its start
// timeout, finished or being deleted, it holds the group exactly as long as
// Holders says. A runbook Job the launcher unsuspended is shown once the
// cache has the started version (its started-at annotation), which every
// later version keeps. It is pure.
func HoldSettled(kind EntryKind, cached *batchv1.Job) bool {
	if cached == nil {
		return false
	}
	if kind != EntryJob {
		return true
	}
	_, started := cached.Annotations[v1alpha1.AnnotationStartedAt]
	return started || cached.DeletionTimestamp != nil || cached.Spec.Suspend == nil || !*cached.Spec.Suspend
}

// hold is a start the launcher made that its cache may not show yet.
type hold struct {
	entry Entry
	// job is the Job that is being, or was, created or unsuspended.
	job types.NamespacedName
	// starting is true while the start's API calls are in flight: the Job
	// may not exist yet, and the hold holds whatever the cache says.
	starting bool
}

// groupQueue serialises start decisions per group and remembers the starts
// the cache does not show yet. The cluster is the source of truth (Holders),
// but the cache lags behind the launcher's own writes by a few milliseconds;
// a hold closes that window, in which a second replay could otherwise see
// the group as free. A hold is taken under the group's lock when the
// decision is to start, before the start's API calls, which run outside the
// lock (other replays of the group then only wait for the cache, never for
// those calls); it ends as soon as the cache shows its Job (from then on
// Holders sees it), when that Job turns out to be gone, or when the start
// failed.
//
// After a restart the map is empty and the cache, in sync with everything
// the previous leader wrote, is enough.
type Queue struct {
	mu   sync.Mutex
	keys map[string]*keyQueue
}

// keyQueue is one group's lock and pending hold.
type keyQueue struct {
	mu    sync.Mutex
	hold  *hold
	users int // TryStart calls in flight, guarded by groupQueue.mu
}

func NewQueue() *Queue {
	return &Queue{keys: map[string]*keyQueue{}}
}

// enter returns key's queue, counted as in use until leave.
func (q *Queue) enter(key string) *keyQueue {
	q.mu.Lock()
	defer q.mu.Unlock()
	kq := q.keys[key]
	if kq == nil {
		kq = &keyQueue{}
		q.keys[key] = kq
	}
	kq.users++
	return kq
}

// leave forgets key's queue once nobody uses it and it holds nothing, so the
// map stays as small as the set of groups starting right now.
func (q *Queue) leave(key string, kq *keyQueue) {
	q.mu.Lock()
	defer q.mu.Unlock()
	kq.users--
	kq.mu.Lock()
	empty := kq.hold == nil
	kq.mu.Unlock()
	if kq.users == 0 && empty {
		delete(q.keys, key)
	}
}

// TryStart decides, under key's lock, whether self may start its Job job:
// decide gets the key's pending hold (if any) to count as a holder. When it
// may, TryStart takes the hold, runs start outside the lock, and keeps the
// hold if start reports that it started (until the cache shows the Job:
// settled), or drops it. The decision's Start is whether it started.
func (q *Queue) TryStart(key string, job types.NamespacedName, self Entry, settled func(kind EntryKind, job types.NamespacedName) bool, decide func(pending *Entry) Decision, start func() (bool, error)) (Decision, error) {
	kq := q.enter(key)
	defer q.leave(key, kq)

	kq.mu.Lock()
	var pending *Entry
	if h := kq.hold; h != nil {
		if !h.starting && settled(h.entry.Kind, h.job) {
			kq.hold = nil
		} else {
			pending = &h.entry
		}
	}
	d := decide(pending)
	if !d.Start {
		kq.mu.Unlock()
		return d, nil
	}
	self.Holds = HoldStarting
	mine := &hold{entry: self, job: job, starting: true}
	kq.hold = mine
	kq.mu.Unlock()

	started, err := start()

	kq.mu.Lock()
	defer kq.mu.Unlock()
	if kq.hold == mine {
		if started && err == nil {
			mine.starting = false
		} else {
			kq.hold = nil
		}
	}
	if err != nil || !started {
		return Decision{}, err
	}
	return d, nil
}

// Pending returns key's hold, for tests.
func (q *Queue) Pending(key string) (types.NamespacedName, bool) {
	q.mu.Lock()
	kq := q.keys[key]
	q.mu.Unlock()
	if kq == nil {
		return types.NamespacedName{}, false
	}
	kq.mu.Lock()
	defer kq.mu.Unlock()
	if kq.hold == nil {
		return types.NamespacedName{}, false
	}
	return kq.hold.job, true
}
