package launcher

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/grouplock"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

// WaitingReasons is the fixed set of reasons a replay waits for, the values
// of the reason label of kafkareplay_requests_waiting. Every one is always
// exported, 0 included, so that an alert on any of them needs no absent().
var WaitingReasons = []string{
	state.ReasonWaitingForGroup,      // another replay of the group runs first
	state.ReasonEarlierRunInProgress, // an earlier request of the same name and spec still runs
	state.ReasonJobCreateFailed,      // the API server refuses the Job for now (a quota, a webhook)
	state.ReasonPodWaiting,           // the runner pod has not started (an image pull, a missing Secret, no node)
	state.ReasonWaitingForCluster,    // Strimzi's operator has not reconciled the request's Kafka or KafkaUser
	state.ReasonWaitingForConnector,  // nor its KafkaConnector consumerRef's latest spec
}

// waitingReason says why an unfinished request waits, one of WaitingReasons,
// or "" when it does not wait (it runs, has finished, or is being deleted).
// It reads the request's conditions only. It is pure.
func waitingReason(rr *v1alpha1.ReplayRequest) string {
	if state.IsFinished(rr) || rr.DeletionTimestamp != nil {
		return ""
	}
	// The later phase speaks first: a started request's Accepted
	// condition no longer says it waits, but a Running one may.
	if c := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionRunning); c != nil {
		switch {
		case c.Reason == state.ReasonPodWaiting && c.Status == metav1.ConditionTrue:
			return state.ReasonPodWaiting
		case c.Reason == state.ReasonJobCreateFailed:
			return state.ReasonJobCreateFailed
		}
	}
	if state.IsStarted(rr) {
		return ""
	}
	if c := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionAccepted); c != nil {
		switch c.Reason {
		case state.ReasonWaitingForGroup, state.ReasonEarlierRunInProgress, state.ReasonWaitingForCluster, state.ReasonWaitingForConnector:
			return c.Reason
		}
	}
	return ""
}

// countWaiting counts the replays that wait, by reason: requests by
// waitingReason, and runbook Jobs that wait in their group's queue
// (runbookWaits) as WaitingForGroup. Every reason of WaitingReasons is in
// the map. It is pure.
func countWaiting(requests []v1alpha1.ReplayRequest, jobs []batchv1.Job) map[string]int {
	n := make(map[string]int, len(WaitingReasons))
	for _, r := range WaitingReasons {
		n[r] = 0
	}
	for i := range requests {
		if r := waitingReason(&requests[i]); r != "" {
			n[r]++
		}
	}
	for i := range jobs {
		if grouplock.RunbookWaits(&jobs[i]) {
			n[state.ReasonWaitingForGroup]++
		}
	}
	return n
}

// waitingCollector exports kafkareplay_requests_waiting from the launcher's
// cache at each scrape, rather than keeping a gauge up to date from
// reconciles: what the cache holds is the truth after a restart, a deleted
// request or a missed event alike, and counting it is a walk over memory
// (every request is cached anyway), once per scrape.
type waitingCollector struct {
	desc *prometheus.Desc

	mu     sync.Mutex
	reader client.Reader
}

var requestsWaiting = &waitingCollector{desc: prometheus.NewDesc(
	"kafkareplay_requests_waiting",
	"Replays (requests, and runbook Jobs) that wait, by reason: WaitingForGroup, EarlierRunInProgress, JobCreateFailed, PodWaiting.",
	[]string{"reason"}, nil,
)}

func init() { metrics.Registry.MustRegister(requestsWaiting) }

// waitingListTimeout bounds a scrape's reads of the cache, which block until
// the cache has synced.
const waitingListTimeout = 5 * time.Second

// setReader makes the collector count what r shows (the manager's cache).
func (c *waitingCollector) setReader(r client.Reader) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reader = r
}

func (c *waitingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *waitingCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	r := c.reader
	c.mu.Unlock()
	if r == nil {
		return // no launcher set up in this process
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitingListTimeout)
	defer cancel()
	var rrs v1alpha1.ReplayRequestList
	if err := r.List(ctx, &rrs); err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	// Runner Jobs only: the cache holds no others.
	var jobs batchv1.JobList
	if err := r.List(ctx, &jobs, client.MatchingLabels{v1alpha1.LabelRunner: v1alpha1.LabelRunnerValue}); err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	n := countWaiting(rrs.Items, jobs.Items)
	for _, reason := range WaitingReasons {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n[reason]), reason)
	}
}
