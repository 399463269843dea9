package devsample

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"sigs.k8s.io/yaml"

	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// The dev cluster's producers keep writing (issue 32, friction 10: the
// sample records stopped at bring-up, so ago:5m soon moved nothing): on
// kfake, after the seed, every partition of every topic gets records
// stamped with the time they were written, in order, until the context
// ends, and then no more. The test waits for records, not for time; the
// interval is short only to make the wait short.
func TestProducersKeepWritingTimestampedRecords(t *testing.T) {
	k, err := kafkatest.Start(1)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	topics := Topics
	if err := Seed(ctx, k, t.Logf); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	pctx, stop := context.WithCancel(ctx)
	if err := StartProducers(pctx, k.Bootstrap(), topics, 5*time.Millisecond, t.Logf); err != nil {
		t.Fatal(err)
	}

	const want = 3 // records after the seed, per partition
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(k.Bootstrap(), ",")...),
		kgo.ConsumePartitions(consumeAfterSeed(topics)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[string][]*kgo.Record{}
	for done := 0; done < partitions(topics); {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("records after the seed: %d partitions of %d reached %d: %v", done, partitions(topics), want, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			key := fmt.Sprintf("%s/%d", r.Topic, r.Partition)
			if got[key] = append(got[key], r); len(got[key]) == want {
				done++
			}
		})
	}
	stop()
	after := time.Now()
	for key, rs := range got {
		for i, r := range rs {
			if r.Timestamp.Before(before.Truncate(time.Millisecond)) || r.Timestamp.After(after) {
				t.Errorf("%s offset %d: stamped %s, not between the producers' start %s and now %s", key, r.Offset, r.Timestamp, before, after)
			}
			if i > 0 && r.Timestamp.Before(rs[i-1].Timestamp) {
				t.Errorf("%s offset %d: stamped %s, before the previous record's %s", key, r.Offset, r.Timestamp, rs[i-1].Timestamp)
			}
			if want := key + "/"; !strings.HasPrefix(string(r.Value), want) {
				t.Errorf("%s offset %d: value %q, want it to start %q", key, r.Offset, r.Value, want)
			}
		}
	}
}

func consumeAfterSeed(topics []Topic) map[string]map[int32]kgo.Offset {
	m := map[string]map[int32]kgo.Offset{}
	for _, tp := range topics {
		m[tp.Name] = map[int32]kgo.Offset{}
		for p := int32(0); p < tp.Partitions; p++ {
			m[tp.Name][p] = kgo.NewOffset().At(int64(tp.Records))
		}
	}
	return m
}

func partitions(topics []Topic) (n int) {
	for _, tp := range topics {
		n += int(tp.Partitions)
	}
	return n
}

// The manifests the dev cluster and the e2e apply are objects kubectl
// takes, and name what the docs name: the pause example's Deployment of
// group billing, the Secret the runbook example mounts bound to the
// servers, and the scraper bound to the chart's metrics reader.
func TestManifests(t *testing.T) {
	for name, m := range map[string]string{
		"consumer":    ConsumerManifest("10.200.0.1:9092"),
		"credentials": CredentialsManifest("10.200.0.1:1,10.200.0.1:2"),
		"scraper":     ScraperManifest(),
	} {
		for _, doc := range strings.Split(m, "\n---\n") {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(doc), &obj); err != nil || obj["kind"] == nil {
				t.Errorf("%s: not a manifest (%v):\n%s", name, err, doc)
			}
		}
	}
	var secret struct {
		Metadata   struct{ Name, Namespace string }
		StringData map[string]string `json:"stringData"`
	}
	if err := yaml.Unmarshal([]byte(CredentialsManifest("10.200.0.1:1,10.200.0.1:2")), &secret); err != nil {
		t.Fatal(err)
	}
	if secret.Metadata.Name != "kafka-credentials" || secret.Metadata.Namespace != Namespace || len(secret.StringData) != 1 || secret.StringData["bootstrap.servers"] != "10.200.0.1:1,10.200.0.1:2" {
		t.Errorf("credentials Secret: %+v", secret)
	}
	for _, want := range []string{"kind: Deployment", "name: " + LiveConsumer, "namespace: " + AppNamespace, "value: " + LiveGroup, "fieldPath: metadata.name"} {
		if !strings.Contains(ConsumerManifest("x:1"), want) {
			t.Errorf("the consumer manifest lacks %q", want)
		}
	}
	if !strings.Contains(ScraperManifest(), "name: "+Release+"-metrics-reader") {
		t.Errorf("the scraper is not bound to the chart's metrics reader:\n%s", ScraperManifest())
	}
}

// The dev cluster's shell and the e2e's run of the docs get the runner and
// kubectl replay on their PATH (issue 32: the runner's own examples run
// there as written): both build, and each runs and says what it is.
func TestBuildTools(t *testing.T) {
	bin := t.TempDir()
	if err := BuildTools(context.Background(), bin); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"runner": "--bootstrap-servers", "kubectl-replay": "groups"} {
		out, err := exec.Command(filepath.Join(bin, name), "--help").CombinedOutput()
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("%s --help: %v, output lacks %q:\n%s", name, err, want, out)
		}
	}
}
