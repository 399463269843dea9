package kafkatest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestSeededRecordsOutliveRetention: records stamped long ago, as the
// tests seed them, stay through the broker's time retention. The default
// (7 days, checked every 5 minutes) deleted them in the middle of a test
// on Apache Kafka: the log start jumped to the log end, and a runner
// test's shift:-10 was clamped to it (TestCommitStillUnappliedIsSettledByTheRetry
// saw "orders/3 at 100, want 70"). kfake applies retention on demand, as a
// broker's check would; every broker says how it resolves the topic's
// retention.ms.
func TestSeededRecordsOutliveRetention(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := New(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const topic, parts, records = "stamped-long-ago", 2, 10
	if err := c.Seed(ctx, topic, parts, records, time.Now().AddDate(-1, 0, 0), time.Second); err != nil {
		t.Fatal(err)
	}
	if err := c.KeepsRecords(ctx, topic); err != nil {
		t.Error(err)
	}
	if c.Fake != nil {
		c.Fake.ApplyRetention()
	}
	starts, err := c.admin.ListStartOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	starts.Each(func(o kadm.ListedOffset) {
		n++
		if o.Err != nil || o.Offset != 0 {
			t.Errorf("%s/%d: log start %d (%v), want 0: the seeded records were deleted", o.Topic, o.Partition, o.Offset, o.Err)
		}
	})
	if n != parts {
		t.Errorf("%d partitions listed, want %d", n, parts)
	}
}
