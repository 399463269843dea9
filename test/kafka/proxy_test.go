package kafkatest

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestProxyCountsRequests: the proxy counts the requests it passes by kind,
// exactly as the cluster counts those it serves, and ResetRequests forgets
// those before it (make bench counts every tool's requests this way).
func TestProxyCountsRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := New(t, 3)
	c.RequireFake(t) // the cluster's own count is kfake's
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.CreateTopic(ctx, "counted", 6); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(ctx, "g", Offsets{"counted": {0: 0}}, ""); err != nil {
		t.Fatal(err)
	}
	px := NewProxy(t, c)
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(px.Bootstrap(), ",")...))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	if _, err := adm.ListEndOffsets(ctx, "counted"); err != nil { // counted, then forgotten
		t.Fatal(err)
	}
	c.ResetRequests()
	px.ResetRequests()
	if _, err := adm.ListStartOffsets(ctx, "counted"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.FetchOffsets(ctx, "g"); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	got, want := px.Requests(), c.Requests()
	if !maps.Equal(got, want) {
		t.Errorf("proxy counted %s; the cluster served %s", got, want)
	}
	if got["ListOffsets"] == 0 || got["OffsetFetch"] == 0 {
		t.Errorf("proxy counted %s, want ListOffsets and OffsetFetch", got)
	}
}
