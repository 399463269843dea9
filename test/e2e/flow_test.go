package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/test/cluster"
	kafkatest "github.com/kafka-replay/kafka-replay/test/kafka"
)

// The whole flow: our images imported into the node, the chart installed
// with helm, a 3-broker kfake cluster listening on the node IP inside the
// cluster's namespace (pods reach it through the CNI bridge; the test seeds
// and reads it with kafkatest's independent franz-go client).

const (
	// As every doc installs it (helm install kafka-replay ... -n
	// kafka-replay-system), so that the documented commands run here as
	// written (TestDocsRunAsWritten).
	releaseNS = "kafka-replay-system"
	release   = "kafka-replay"
	topic     = "orders"
	parts     = 3
	perPart   = 100
)

// base is the timestamp of record 0 of every partition; record i is base+i s.
var base = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type flowEnv struct {
	c     *cluster.Cluster
	cl    client.Client
	kafka *kafkatest.Cluster
	// on is the Kafka: onKfake, or onApache for a scenario that also runs
	// on Apache Kafka (onKafkas).
	on string
}

const (
	onKfake  = "kfake"
	onApache = "apache"
)

var (
	flow     *flowEnv
	flowErr  error
	flowOnce sync.Once

	apacheFlow     *flowEnv
	apacheFlowErr  error
	apacheFlowOnce sync.Once
)

// apacheLibsEnv names the directory of Apache Kafka's jars for the
// scenarios that also run on Apache Kafka (make e2e sets it to the
// Makefile's KAFKA_LIBS). It is not kafkatest.ApacheEnv, which would make
// every kafkatest cluster of this binary, kfake's flow too, Apache Kafka.
const apacheLibsEnv = "KAFKA_REPLAY_E2E_APACHE"

// onKafkas runs a scenario on kfake and then on Apache Kafka 4.4, each as
// a subtest of that name (-run 'TestX/apache').
func onKafkas(t *testing.T, scenario func(t *testing.T, f *flowEnv)) {
	t.Run(onKfake, func(t *testing.T) { scenario(t, needFlow(t)) })
	t.Run(onApache, func(t *testing.T) { scenario(t, needApacheFlow(t)) })
}

// ns is a Kubernetes namespace of the scenario's own: the scenarios
// on Apache Kafka share the cluster with those on kfake, and their
// requests, Deployments and sources must not meet.
func (f *flowEnv) ns(base string) string {
	if f.on == onKfake {
		return base
	}
	return base + "-" + f.on
}

func needFlow(t *testing.T) *flowEnv {
	t.Helper()
	c := needCluster(t)
	flowOnce.Do(func() { flow, flowErr = setupFlow(c) })
	if flowErr != nil {
		t.Fatalf("set up the flow: %v", flowErr)
	}
	return flow
}

func setupFlow(c *cluster.Cluster) (*flowEnv, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	cl, err := client.New(c.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	if err := c.BuildAndImport(ctx, log.Printf); err != nil {
		return nil, err
	}

	k, err := kafkatest.StartWith(kafkatest.Options{
		Brokers: 3,
		Fake:    []kfake.Opt{kfake.ListenFn(c.KafkaListen)},
		Client:  []kgo.Opt{kgo.Dialer(c.KafkaDial)},
	})
	if err != nil {
		return nil, fmt.Errorf("kfake in the cluster's namespace: %w", err)
	}
	log.Printf("e2e: kafka (kfake, 3 brokers) at %s inside %s", k.Bootstrap(), c.NetNS().Name)
	if err := k.Seed(ctx, topic, parts, perPart, base, time.Second); err != nil {
		k.Close()
		return nil, err
	}

	// One runbook for scenario 2, aimed at this Kafka.
	if err := c.InstallChart(ctx, release, releaseNS,
		"--set", "runbooks[0].name=rewind",
		"--set", "runbooks[0].group=svc-runbook",
		"--set", "runbooks[0].topics[0].name="+topic,
		"--set", "runbooks[0].target=offset:10",
		// Scenario 2 runs it after a request moved the group to the
		// start, so offset 10 is ahead of the committed offset: a skip,
		// which the runner refuses unless the runbook allows it.
		"--set", "runbooks[0].allowSkip=true",
		"--set", "runbooks[0].kafka.bootstrapServers="+strings.ReplaceAll(k.Bootstrap(), ",", `\,`),
	); err != nil {
		k.Close()
		return nil, err
	}
	return &flowEnv{c: c, cl: cl, kafka: k, on: onKfake}, nil
}

// needApacheFlow is needFlow's cluster and chart with Apache Kafka 4.4
// instead of kfake: one KRaft node that listens on the node IP inside the
// cluster's network namespace, and nowhere else, seeded as kfake is.
func needApacheFlow(t *testing.T) *flowEnv {
	t.Helper()
	kf := needFlow(t)
	apacheFlowOnce.Do(func() {
		libs := os.Getenv(apacheLibsEnv)
		if libs == "" {
			apacheFlowErr = fmt.Errorf("%s is not set: it names the directory of Apache Kafka's jars (make kafka-jars; make e2e sets it)", apacheLibsEnv)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		t0 := time.Now()
		k, err := kafkatest.StartWith(kafkatest.Options{Apache: &kafkatest.ApacheOptions{
			Libs: libs, Nodes: 1, Host: kf.c.NodeIP(), Network: kf.c.NetNS(),
			// A SASL_PLAINTEXT listener too, for the Strimzi scenario's
			// SCRAM user (strimzi_test.go).
			SASL: &kafkatest.SASLOptions{},
		}})
		if err != nil {
			apacheFlowErr = fmt.Errorf("apache kafka in the cluster's namespace: %w", err)
			return
		}
		log.Printf("e2e: kafka (Apache Kafka, 1 node) at %s inside %s, ready in %s", k.Bootstrap(), kf.c.NetNS().Name, time.Since(t0).Round(10*time.Millisecond))
		if err := k.Seed(ctx, topic, parts, perPart, base, time.Second); err != nil {
			k.Close()
			apacheFlowErr = err
			return
		}
		apacheFlow = &flowEnv{c: kf.c, cl: kf.cl, kafka: k, on: onApache}
	})
	if apacheFlowErr != nil {
		t.Fatalf("set up the flow on Apache Kafka: %v", apacheFlowErr)
	}
	return apacheFlow
}

// commitAtEnd commits group at the end of every partition.
func (f *flowEnv) commitAtEnd(t *testing.T, ctx context.Context, group string) {
	t.Helper()
	offs := kafkatest.Offsets{topic: {}}
	for p := int32(0); p < parts; p++ {
		offs[topic][p] = perPart
	}
	if err := f.kafka.Commit(ctx, group, offs, "e2e"); err != nil {
		t.Fatal(err)
	}
}

func (f *flowEnv) committed(t *testing.T, ctx context.Context, group string) map[int32]int64 {
	t.Helper()
	got, err := f.kafka.Committed(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	for p, o := range got[topic] {
		out[p] = o.Offset
	}
	return out
}

func ensureNamespace(t *testing.T, ctx context.Context, f *flowEnv, ns string, labels ...string) {
	t.Helper()
	if _, err := f.c.Kubectl(ctx, "create", "namespace", ns); err != nil && !strings.Contains(err.Error(), "AlreadyExists") {
		t.Fatal(err)
	}
	if len(labels) > 0 {
		if _, err := f.c.Kubectl(ctx, append([]string{"label", "--overwrite", "namespace", ns}, labels...)...); err != nil {
			t.Fatal(err)
		}
	}
}

// rrManifest is a ReplayRequest as a user writes it.
func rrManifest(ns, name, group, bootstrap, target string, extra string) string {
	return fmt.Sprintf(`apiVersion: kafkareplay.dev/v1alpha1
kind: ReplayRequest
metadata:
  name: %s
  namespace: %s
spec:
  kafka:
    bootstrapServers: %q
  group: %s
  topics:
  - name: %s
  target:
    %s
%s`, name, ns, bootstrap, group, topic, target, extra)
}

// apply runs `kubectl apply -f -` with manifest.
func (f *flowEnv) apply(t *testing.T, ctx context.Context, manifest string) {
	t.Helper()
	cmd := f.c.Command(ctx, filepath.Join(f.c.BinDir(), "kubectl"), "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(manifest)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply: %v\n%s\n%s", err, out, manifest)
	}
}

// waitFinal waits until the request is Succeeded or Failed.
func (f *flowEnv) waitFinal(t *testing.T, ctx context.Context, ns, name string) *v1alpha1.ReplayRequest {
	t.Helper()
	var rr v1alpha1.ReplayRequest
	for {
		err := f.cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &rr)
		if err == nil && (rr.Status.Phase == v1alpha1.PhaseSucceeded || rr.Status.Phase == "Failed") {
			return &rr
		}
		select {
		case <-ctx.Done():
			out, _ := f.c.Kubectl(context.Background(), "-n", ns, "get", "replayrequest", name, "-o", "yaml")
			pods, _ := f.c.Kubectl(context.Background(), "-n", ns, "describe", "pods")
			lg, _ := f.c.Kubectl(context.Background(), "-n", releaseNS, "logs", "deploy/"+release+"-launcher", "--tail=40")
			t.Fatalf("request %s/%s never finished: %v (last error %v)\n%s\n%s\nlauncher:\n%s", ns, name, ctx.Err(), err, out, pods, lg)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func condition(rr *v1alpha1.ReplayRequest, typ string) (string, string) {
	for _, c := range rr.Status.Conditions {
		if c.Type == typ {
			return string(c.Status), c.Reason
		}
	}
	return "", ""
}

// checkResultMatchesKafka: status.result's new offsets are what the
// independent client reads from Kafka.
func (f *flowEnv) checkResultMatchesKafka(t *testing.T, ctx context.Context, rr *v1alpha1.ReplayRequest, want int64) {
	t.Helper()
	if rr.Status.Result == nil || len(rr.Status.Result.Partitions) != parts {
		t.Fatalf("status.result: %+v", rr.Status.Result)
	}
	got := f.committed(t, ctx, rr.Spec.Group)
	for _, p := range rr.Status.Result.Partitions {
		if p.NewOffset != want || got[p.Partition] != p.NewOffset {
			t.Errorf("partition %d: status newOffset %d, Kafka has %d, want %d", p.Partition, p.NewOffset, got[p.Partition], want)
		}
	}
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// Scenario 1 and 7: `kubectl apply` of a time target reaches Succeeded; the
// committed offsets equal status.result; the Job carries the result
// annotations. On kfake, repeated with fresh groups for the median
// apply→Succeeded; on Apache Kafka, once.
func TestApplyTimeTarget(t *testing.T) { onKafkas(t, applyTimeTarget) }

func applyTimeTarget(t *testing.T, f *flowEnv) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ns := f.ns("team-a")
	ensureNamespace(t, ctx, f, ns)
	target := fmt.Sprintf("time: %q", base.Add(40*time.Second).Format(time.RFC3339))

	runs := 5
	if f.on != onKfake {
		runs = 1
	}
	var took []time.Duration
	for i := 0; i < runs; i++ {
		group := fmt.Sprintf("svc-time-%d", i)
		f.commitAtEnd(t, ctx, group)
		name := fmt.Sprintf("rewind-%d", i)
		t0 := time.Now()
		f.apply(t, ctx, rrManifest(ns, name, group, f.kafka.Bootstrap(), target, ""))
		rr := f.waitFinal(t, ctx, ns, name)
		d := time.Since(t0)
		if rr.Status.Phase != v1alpha1.PhaseSucceeded {
			t.Fatalf("run %d: phase %s: %s", i, rr.Status.Phase, rr.Status.Message)
		}
		took = append(took, d)
		t.Logf("run %d: kubectl apply -> Succeeded in %s", i, d.Round(10*time.Millisecond))
		f.checkResultMatchesKafka(t, ctx, rr, 40)

		if i == 0 {
			a := f.recordedJob(t, ctx, ns, rr.Status.JobName).Annotations
			// Every partition goes back from 100 to 40: 60 messages each.
			want := fmt.Sprint(parts * (perPart - 40))
			if a[v1alpha1.AnnotationOutcome] != "Succeeded" || a[v1alpha1.AnnotationResult] == "" || a[v1alpha1.AnnotationFinishedAt] == "" ||
				a[v1alpha1.AnnotationMessagesReconsumed] != want {
				t.Fatalf("Job %s annotations (want %s messages re-consumed): %v", rr.Status.JobName, want, a)
			}
			if got := rr.Status.Result.Totals.MessagesToReconsume; fmt.Sprint(got) != want {
				t.Fatalf("status.result.totals.messagesToReconsume %d, want %s", got, want)
			}
			var res struct {
				Partitions []struct {
					Partition int32 `json:"partition"`
					NewOffset int64 `json:"newOffset"`
				} `json:"partitions"`
			}
			if err := json.Unmarshal([]byte(a[v1alpha1.AnnotationResult]), &res); err != nil || len(res.Partitions) != parts {
				t.Fatalf("Job result annotation %q: %v", a[v1alpha1.AnnotationResult], err)
			}
			out, _ := f.c.Kubectl(ctx, "get", "rr", "-n", ns)
			t.Logf("kubectl get rr:\n%s", out)
		}
	}
	t.Logf("SCENARIO 7 on %s: kubectl apply -> Succeeded, median of %d runs: %s (all: %v)", f.on, runs, median(took).Round(10*time.Millisecond), took)
}

// recordedJob waits until the launcher has recorded an outcome on a Job
// (its annotations) and returns the Job. A request's status says it has
// finished first, and the Job is recorded after (launcher/phase_finished.go),
// so a Job read the moment its request is Succeeded may not carry it yet.
func (f *flowEnv) recordedJob(t *testing.T, ctx context.Context, ns, name string) *batchv1.Job {
	t.Helper()
	var job batchv1.Job
	for {
		if err := f.cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &job); err != nil {
			t.Fatal(err)
		}
		if job.Annotations[v1alpha1.AnnotationOutcome] != "" {
			return &job
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no outcome recorded on Job %s/%s: %v; %+v", ns, name, job.Annotations, job.Status)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Scenario 2: `kubectl create job --from=cronjob/<runbook>` moves the
// offsets, and the launcher records the result on that Job.
func TestRunbookJob(t *testing.T) {
	f := needFlow(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	f.commitAtEnd(t, ctx, "svc-runbook")
	var cjs batchv1.CronJobList
	if err := f.cl.List(ctx, &cjs, client.InNamespace(releaseNS), client.MatchingLabels{"kafkareplay.dev/runbook": "rewind"}); err != nil || len(cjs.Items) != 1 {
		t.Fatalf("runbook CronJob: %d found, %v", len(cjs.Items), err)
	}
	cj := cjs.Items[0].Name
	if _, err := f.c.Kubectl(ctx, "-n", releaseNS, "create", "job", "--from=cronjob/"+cj, "rewind-now"); err != nil {
		t.Fatal(err)
	}
	job := f.recordedJob(t, ctx, releaseNS, "rewind-now")
	if job.Annotations[v1alpha1.AnnotationOutcome] != "Succeeded" || job.Annotations[v1alpha1.AnnotationResult] == "" {
		t.Fatalf("Job annotations: %v", job.Annotations)
	}
	got := f.committed(t, ctx, "svc-runbook")
	for p := int32(0); p < parts; p++ {
		if got[p] != 10 {
			t.Errorf("partition %d at %d, want 10", p, got[p])
		}
	}
}

// Scenario 4: a group with a live consumer ends Failed with reason
// GroupActive, and its offsets are unchanged.
func TestGroupActive(t *testing.T) {
	f := needFlow(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const ns, group = "team-a", "svc-live"
	ensureNamespace(t, ctx, f, ns)
	f.commitAtEnd(t, ctx, group)
	m, err := f.kafka.Join(ctx, group, "live-consumer", topic)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Leave()
	before := f.committed(t, ctx, group)
	f.apply(t, ctx, rrManifest(ns, "while-live", group, f.kafka.Bootstrap(), "position: Earliest", ""))
	rr := f.waitFinal(t, ctx, ns, "while-live")
	if st, reason := condition(rr, v1alpha1.ConditionSucceeded); rr.Status.Phase != "Failed" || st != "False" || reason != "GroupActive" {
		t.Fatalf("phase %s, Succeeded=%s reason %s: %s", rr.Status.Phase, st, reason, rr.Status.Message)
	}
	after := f.committed(t, ctx, group)
	for p, o := range before {
		if after[p] != o {
			t.Errorf("partition %d moved from %d to %d", p, o, after[p])
		}
	}
}

// Scenario 5: the launcher pod is deleted mid-run (the runner waits for a
// live consumer to leave); no second Job appears and the request still
// reaches Succeeded.
func TestLauncherRestartMidRun(t *testing.T) {
	f := needFlow(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	const ns, group, name = "team-a", "svc-restart", "across-restart"
	ensureNamespace(t, ctx, f, ns)
	f.commitAtEnd(t, ctx, group)
	m, err := f.kafka.Join(ctx, group, "leaves-later", topic)
	if err != nil {
		t.Fatal(err)
	}
	f.apply(t, ctx, rrManifest(ns, name, group, f.kafka.Bootstrap(), "position: Earliest", "  whenGroupActive: Wait\n  waitTimeout: 3m\n"))
	// Wait for the runner pod to be running (it now waits for the group).
	jobSel := client.MatchingLabels{v1alpha1.LabelRequest: name}
	for {
		var pods corev1.PodList
		if err := f.cl.List(ctx, &pods, client.InNamespace(ns), jobSel); err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) > 0 && pods.Items[0].Status.Phase == corev1.PodRunning {
			break
		}
		select {
		case <-ctx.Done():
			m.Leave()
			t.Fatal("runner pod never ran")
		case <-time.After(200 * time.Millisecond):
		}
	}
	f.launcherPeakMemory(t, ctx)
	out, err := f.c.Kubectl(ctx, "-n", releaseNS, "delete", "pod", "-l", "app.kubernetes.io/component=launcher", "--wait=true")
	if err != nil {
		m.Leave()
		t.Fatal(err)
	}
	t.Logf("deleted the launcher mid-run: %s", strings.TrimSpace(out))
	time.Sleep(2 * time.Second)
	m.Leave()
	rr := f.waitFinal(t, ctx, ns, name)
	if rr.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("phase %s: %s", rr.Status.Phase, rr.Status.Message)
	}
	var jobs batchv1.JobList
	if err := f.cl.List(ctx, &jobs, client.InNamespace(ns), jobSel); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 {
		t.Fatalf("%d Jobs for the request, want 1", len(jobs.Items))
	}
	f.checkResultMatchesKafka(t, ctx, rr, 0)
}

// Scenario 6: in a namespace that enforces the restricted Pod Security
// Standard, the runner pod is admitted and runs.
func TestRestrictedNamespace(t *testing.T) {
	f := needFlow(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const ns, group = "restricted", "svc-restricted"
	ensureNamespace(t, ctx, f, ns, "pod-security.kubernetes.io/enforce=restricted", "pod-security.kubernetes.io/enforce-version=latest")
	f.commitAtEnd(t, ctx, group)
	f.apply(t, ctx, rrManifest(ns, "restricted-rewind", group, f.kafka.Bootstrap(), "offset: 25", ""))
	rr := f.waitFinal(t, ctx, ns, "restricted-rewind")
	if rr.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("phase %s: %s", rr.Status.Phase, rr.Status.Message)
	}
	f.checkResultMatchesKafka(t, ctx, rr, 25)
}

// launcherPeakMemory reads the launcher container's peak memory from its
// cgroup (v1: memory.max_usage_in_bytes), which the node keeps per container.
func (f *flowEnv) launcherPeakMemory(t *testing.T, ctx context.Context) {
	t.Helper()
	var pods corev1.PodList
	if err := f.cl.List(ctx, &pods, client.InNamespace(releaseNS), client.MatchingLabels{"app.kubernetes.io/component": "launcher"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		for _, cs := range p.Status.ContainerStatuses {
			id, ok := strings.CutPrefix(cs.ContainerID, "containerd://")
			if !ok {
				continue
			}
			b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/memory/k8s.io", id, "memory.max_usage_in_bytes"))
			if err != nil {
				t.Logf("launcher %s: no cgroup v1 memory figure: %v", p.Name, err)
				continue
			}
			n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("LAUNCHER PEAK MEMORY: pod %s (up %s): %.1f MiB (cgroup memory.max_usage_in_bytes, page cache included)",
				p.Name, time.Since(p.CreationTimestamp.Time).Round(time.Second), float64(n)/(1<<20))
		}
	}
}

// TestLauncherPeakMemory runs after the scenarios above (source order).
func TestLauncherPeakMemory(t *testing.T) {
	f := needFlow(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f.launcherPeakMemory(t, ctx)
}
