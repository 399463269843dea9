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
func TestLogOffsetsAreReadWhileTheGroupIsDescribed(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	c.RequireFake(t)
	var listOffsets atomic.Int32
	arrived := make(chan struct{})
	var once sync.Once
	c.Fake.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.Fake.KeepControl()
		listOffsets.Add(1)
		once.Do(func() { close(arrived) })
		return nil, nil, false
	})
	var held sync.Once
	var seenWhileHeld atomic.Int32
	seenWhileHeld.Store(-1)
	hold := func(kmsg.Request) (kmsg.Response, error, bool) {
		c.Fake.KeepControl()
		held.Do(func() {
			// Sleeping yields to the other connections: the leaders'
			// ListOffsets requests can arrive meanwhile.
			c.Fake.SleepControl(func() {
				select {
				case <-arrived:
				case <-time.After(10 * time.Second):
				}
			})
			seenWhileHeld.Store(listOffsets.Load())
		})
		return nil, nil, false
	}
	// librdkafka tries the KIP-848 describe first, then the classic one.
	c.Fake.ControlKey(int16(kmsg.ConsumerGroupDescribe), hold)
	c.Fake.ControlKey(int16(kmsg.DescribeGroups), hold)

	o := run(t, c, "--group", group, "--topic", topic, "--to", "earliest", "--run-id", "early")
	o.mustCode(t, report.ExitOK)
	if n := seenWhileHeld.Load(); n < 1 {
		t.Errorf("%d ListOffsets requests arrived while the group describe was held; want them read alongside it", n)
	}
	assertMatchesKafka(t, c, o.result)
}
