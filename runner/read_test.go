package runner_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-replay/kafka-replay/runner/report"
)

// With named topics the log offsets are read while the group is described,
// not after: the broker holds the group describe until a ListOffsets request
// has arrived (or 10 s have passed, which only a runner that reads them
// afterwards waits out), then lets it through. The run must not change its
// outcome for it.
//
// kfake answers the requests of one connection in order, and librdkafka
// chooses which broker's connection carries the topics' Metadata request. If
// it picks the coordinator's, that request (and so every ListOffsets after
// it) queues behind the held describe, whatever the runner does: such an
// attempt proves nothing either way and is run again on a fresh cluster. An
// attempt is conclusive when the topic's Metadata was answered during the
// hold and none arrived after it (none was queued behind it).
func TestLogOffsetsAreReadWhileTheGroupIsDescribed(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	const attempts = 5
	for i := range attempts {
		conclusive, seen := logOffsetsDuringDescribe(t)
		if !conclusive {
			t.Logf("attempt %d: the topic's Metadata arrived after the held describe (queued behind it on one connection, or sent only after it); trying again", i+1)
			continue
		}
		if seen < 1 {
			t.Fatalf("%d ListOffsets requests arrived while the group describe was held, though the topics' Metadata was answered meanwhile; want them read alongside it", seen)
		}
		return
	}
	t.Fatalf("no conclusive attempt in %d: each time the topic's Metadata arrived after the held describe; a runner that reads the log offsets only after the describe looks like this", attempts)
}

// logOffsetsDuringDescribe runs one attempt on a fresh cluster. It reports
// whether the attempt is conclusive (see above), and
// how many ListOffsets requests had arrived by the time the hold ended.
func logOffsetsDuringDescribe(t *testing.T) (conclusive bool, seen int32) {
	t.Helper()
	c := seeded(t)
	c.RequireFake(t)
	var listOffsets, metadataDuringHold, metadataAfterHold atomic.Int32
	var holding, released atomic.Bool
	arrived := make(chan struct{})
	var once sync.Once
	c.Fake.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.Fake.KeepControl()
		listOffsets.Add(1)
		once.Do(func() { close(arrived) })
		return nil, nil, false
	})
	c.Fake.ControlKey(int16(kmsg.Metadata), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.Fake.KeepControl()
		if namesTopic(req.(*kmsg.MetadataRequest), topic) {
			switch {
			case holding.Load():
				metadataDuringHold.Add(1)
			case released.Load():
				metadataAfterHold.Add(1)
			}
		}
		return nil, nil, false
	})
	var held sync.Once
	var seenWhileHeld atomic.Int32
	seenWhileHeld.Store(-1)
	hold := func(kmsg.Request) (kmsg.Response, error, bool) {
		c.Fake.KeepControl()
		held.Do(func() {
			holding.Store(true)
			// Sleeping yields to the other connections: the leaders'
			// ListOffsets requests can arrive meanwhile.
			c.Fake.SleepControl(func() {
				select {
				case <-arrived:
				case <-time.After(10 * time.Second):
				}
			})
			seenWhileHeld.Store(listOffsets.Load())
			released.Store(true)
			holding.Store(false)
		})
		return nil, nil, false
	}
	// librdkafka tries the KIP-848 describe first, then the classic one.
	c.Fake.ControlKey(int16(kmsg.ConsumerGroupDescribe), hold)
	c.Fake.ControlKey(int16(kmsg.DescribeGroups), hold)

	o := run(t, c, "--group", group, "--topic", topic, "--to", "earliest", "--run-id", "early")
	o.mustCode(t, report.ExitOK)
	assertMatchesKafka(t, c, o.result)
	n := seenWhileHeld.Load()
	return n >= 1 || metadataDuringHold.Load() > 0 && metadataAfterHold.Load() == 0, n
}

func namesTopic(req *kmsg.MetadataRequest, name string) bool {
	for _, t := range req.Topics {
		if t.Topic != nil && *t.Topic == name {
			return true
		}
	}
	return false
}
