package launcher_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/runner/report"

	"github.com/kafka-replay/kafka-replay/launcher"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// Benchmark knobs (environment): the workload's size and pace.
func benchInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkLauncher runs the real launcher binary (cmd/launcher, as its own
// process and RBAC-bound user) against envtest with 10,000 unrelated Jobs in
// the cluster, and pushes 1,000 requests over 100 groups through it. The
// benchmark plays the Job controller and the kubelet: it completes each Job as
// soon as it appears. It reports:
//
//   - launch-p50/p99-ms: from the moment a request may start (its creation, or
//     the final status of the request before it in its group's queue) to its
//     Job being created;
//   - queued-p50/p99-ms: the same from creation, queue wait included;
//   - record-p50/p99-ms: from the Job's completion to the request's final
//     status;
//   - launcher-peak-rss-MiB: the launcher process's peak resident memory;
//   - launcher-cpu-s: the CPU time it used, start and cache sync included.
func BenchmarkLauncher(b *testing.B) {
	env(b)
	var (
		requests  = benchInt("BENCH_REQUESTS", 1000)
		groups    = benchInt("BENCH_GROUPS", 100)
		unrelated = benchInt("BENCH_UNRELATED_JOBS", 10000)
		rate      = benchInt("BENCH_RATE", 25) // requests created per second
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	start := time.Now()
	createUnrelatedJobs(b, newNamespace(b, nil), unrelated)
	b.Logf("created %d unrelated Jobs in %s", unrelated, time.Since(start).Round(time.Millisecond))

	proc := startLauncherProcess(b)

	b.ResetTimer()
	var all []sample
	for range b.N {
		all = append(all, runWorkload(ctx, b, requests, groups, rate)...)
	}
	b.StopTimer()
	rss := proc.peakRSS(b)
	cpu := proc.cpuTime(b)

	launch, queued, record := make([]time.Duration, 0, len(all)), make([]time.Duration, 0, len(all)), make([]time.Duration, 0, len(all))
	for _, s := range all {
		launch = append(launch, s.jobCreated.Sub(s.eligible))
		queued = append(queued, s.jobCreated.Sub(s.created))
		record = append(record, s.final.Sub(s.completed))
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(pct(launch, 50)), "launch-p50-ms")
	b.ReportMetric(ms(pct(launch, 99)), "launch-p99-ms")
	b.ReportMetric(ms(pct(queued, 50)), "queued-p50-ms")
	b.ReportMetric(ms(pct(queued, 99)), "queued-p99-ms")
	b.ReportMetric(ms(pct(record, 50)), "record-p50-ms")
	b.ReportMetric(ms(pct(record, 99)), "record-p99-ms")
	b.ReportMetric(float64(rss)/(1<<20), "launcher-peak-rss-MiB")
	b.ReportMetric(cpu.Seconds(), "launcher-cpu-s")
	b.ReportMetric(0, "ns/op") // wall time per 1,000 requests is paced, not a figure of merit
	b.Logf("%d requests over %d groups at %d/s, %d unrelated Jobs: launch p50 %s p99 %s; queued p50 %s p99 %s; record p50 %s p99 %s; launcher peak RSS %.1f MiB, CPU %s",
		len(all), groups, rate, unrelated, pct(launch, 50), pct(launch, 99), pct(queued, 50), pct(queued, 99), pct(record, 50), pct(record, 99), float64(rss)/(1<<20), cpu)
}

type sample struct {
	name, group                                     string
	created, eligible, jobCreated, completed, final time.Time
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}

// createUnrelatedJobs fills the cluster with Jobs the launcher must never
// cache.
func createUnrelatedJobs(b *testing.B, ns string, n int) {
	b.Helper()
	work := make(chan int)
	var wg sync.WaitGroup
	var errOnce sync.Once
	var firstErr error
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				job := &batchv1.Job{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("unrelated-%05d", i), Labels: map[string]string{"app": "batch-etl"}},
					Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyNever,
						Containers: []corev1.Container{{Name: "etl", Image: "example.com/etl:1.0", Args: []string{"--date", "2026-03-01", "--shard", strconv.Itoa(i)},
							Env: []corev1.EnvVar{{Name: "MODE", Value: "nightly"}}}},
					}}},
				}
				if err := k8s.Create(context.Background(), job); err != nil {
					errOnce.Do(func() { firstErr = err })
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
}

type launcherProcess struct {
	cmd *exec.Cmd
	log string
}

// startLauncherProcess builds cmd/launcher as Dockerfile.launcher does
// (CGO_ENABLED=0, -trimpath, no symbol table or DWARF) and runs it with the
// RBAC-bound user's kubeconfig until the benchmark ends.
func startLauncherProcess(b *testing.B) *launcherProcess {
	b.Helper()
	dir := b.TempDir()
	bin := filepath.Join(dir, "launcher")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "../cmd/launcher")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build launcher: %v\n%s", err, out)
	}
	kc, err := userObj.KubeConfig()
	if err != nil {
		b.Fatal(err)
	}
	kcPath := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kcPath, kc, 0o600); err != nil {
		b.Fatal(err)
	}
	p := &launcherProcess{log: filepath.Join(dir, "launcher.log")}
	logf, err := os.Create(p.log)
	if err != nil {
		b.Fatal(err)
	}
	p.cmd = exec.Command(bin, "--kubeconfig", kcPath, "--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--runner-image", "kafka-replay/runner:bench", "--history-limit=0")
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
			<-done
		}
		_ = logf.Close()
		if b.Failed() {
			out, _ := os.ReadFile(p.log)
			b.Logf("launcher log (tail):\n%s", tailString(string(out), 8000))
		}
	})
	return p
}

// peakRSS reads the process's high-water resident set (VmHWM), and logs
// what is resident now: file pages (the binary's) and anonymous ones (the
// heap, mostly), the peak's parts, roughly.
func (p *launcherProcess) peakRSS(b *testing.B) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	var hwm int64 = -1
	for _, line := range strings.Split(string(raw), "\n") {
		k, v, _ := strings.Cut(line, ":")
		switch k {
		case "VmRSS", "RssAnon", "RssFile":
			b.Logf("launcher %s: %s", k, strings.TrimSpace(v))
		case "VmHWM":
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			hwm = kb << 10
		}
	}
	if hwm < 0 {
		b.Fatal("no VmHWM")
	}
	return hwm
}

// cpuTime is the CPU time the launcher process has used so far (user and
// system, /proc/PID/stat in clock ticks of 1/100 s), so that a setting
// that trades memory for work (GOGC) shows its cost.
func (p *launcherProcess) cpuTime(b *testing.B) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	// The command name, in parentheses, may hold spaces: count from after it.
	_, rest, ok := strings.Cut(string(raw), ") ")
	fields := strings.Fields(rest)
	if !ok || len(fields) < 13 {
		b.Fatalf("/proc/%d/stat: %q", p.cmd.Process.Pid, raw)
	}
	var ticks int64
	for _, f := range fields[11:13] { // utime, stime
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

func tailString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// runWorkload creates the requests at a steady rate, completes every Job as
// it appears, and waits for every request to succeed.
func runWorkload(ctx context.Context, b *testing.B, requests, groups, rate int) []sample {
	b.Helper()
	ns := newNamespace(b, nil)
	var mu sync.Mutex
	samples := map[string]*sample{}
	get := func(name string) *sample {
		s, ok := samples[name]
		if !ok {
			s = &sample{name: name}
			samples[name] = s
		}
		return s
	}
	allDone := make(chan struct{})
	finals := 0

	// The benchmark's own view of the cluster, as an admin.
	c, err := cache.New(adminCfg, cache.Options{
		Scheme:            launcher.NewScheme(),
		DefaultNamespaces: map[string]cache.Config{ns: {}},
		ByObject:          map[client.Object]cache.ByObject{&batchv1.Job{}: {Label: launcher.RunnerSelector()}},
	})
	if err != nil {
		b.Fatal(err)
	}
	cctx, stopCache := context.WithCancel(ctx)
	defer stopCache()

	// Play the Job controller and the kubelet for each new Job.
	jobs := make(chan *batchv1.Job, requests)
	jobInf, err := c.GetInformer(cctx, &batchv1.Job{})
	if err != nil {
		b.Fatal(err)
	}
	_, _ = jobInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
		job := o.(*batchv1.Job)
		now := time.Now()
		mu.Lock()
		s := get(job.Annotations[v1alpha1.AnnotationRequest])
		dup := !s.jobCreated.IsZero()
		s.jobCreated = now
		mu.Unlock()
		if dup {
			b.Errorf("second Job for request %s", s.name)
		}
		jobs <- job
	}})
	rrInf, err := c.GetInformer(cctx, &v1alpha1.ReplayRequest{})
	if err != nil {
		b.Fatal(err)
	}
	_, _ = rrInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(_, o any) {
		rr := o.(*v1alpha1.ReplayRequest)
		if rr.Status.Phase != v1alpha1.PhaseSucceeded && rr.Status.Phase != v1alpha1.PhaseFailed {
			return
		}
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		s := get(rr.Name)
		if s.final.IsZero() {
			s.final = now
			if rr.Status.Phase != v1alpha1.PhaseSucceeded {
				b.Errorf("%s ended %s: %s", rr.Name, rr.Status.Phase, rr.Status.Message)
			}
			if finals++; finals == requests {
				close(allDone)
			}
		}
	}})
	go func() { _ = c.Start(cctx) }()
	if !c.WaitForCacheSync(cctx) {
		b.Fatal("bench cache did not sync")
	}
	var workers sync.WaitGroup
	for range 8 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for job := range jobs {
				pod := testutil.PodFor(job, job.Name+"-0")
				if err := k8s.Create(ctx, pod); err != nil {
					b.Errorf("pod: %v", err)
					continue
				}
				res := testutil.Result(job.Annotations[v1alpha1.AnnotationGroup], report.ExitOK, 10, 20)
				res.RunID = string(job.UID)
				testutil.Terminated(pod, 0, testutil.Compact(res), time.Now())
				if err := k8s.Status().Update(ctx, pod); err != nil {
					b.Errorf("pod status: %v", err)
					continue
				}
				cur := job.DeepCopy()
				testutil.Complete(cur, time.Now())
				if err := k8s.Status().Update(ctx, cur); err != nil {
					b.Errorf("job status: %v", err)
					continue
				}
				now := time.Now()
				mu.Lock()
				get(job.Annotations[v1alpha1.AnnotationRequest]).completed = now
				mu.Unlock()
			}
		}()
	}

	// Create the requests round-robin over the groups, at the given rate.
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for i := range requests {
		<-tick.C
		name := fmt.Sprintf("r-%04d", i)
		group := fmt.Sprintf("g-%03d", i%groups)
		rr := testutil.MakeRequest(ns, name).Group(group).ShiftBy(-int64(1 + i)).Obj()
		mu.Lock()
		s := get(name)
		s.group, s.created = group, time.Now()
		mu.Unlock()
		if err := k8s.Create(ctx, rr); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-allDone:
	case <-time.After(10 * time.Minute):
		mu.Lock()
		b.Fatalf("only %d of %d requests finished", finals, requests)
	}
	close(jobs)
	workers.Wait()

	mu.Lock()
	defer mu.Unlock()
	// A request may start once it exists and the one before it in its
	// group's queue has its final status.
	byGroup := map[string][]*sample{}
	for _, s := range samples {
		byGroup[s.group] = append(byGroup[s.group], s)
	}
	var out []sample
	for _, ss := range byGroup {
		slices.SortFunc(ss, func(a, b *sample) int { return a.created.Compare(b.created) })
		for i, s := range ss {
			s.eligible = s.created
			if i > 0 {
				prev := ss[i-1]
				if prev.final.After(s.eligible) {
					s.eligible = prev.final
				}
				// Never two Jobs of a group at once.
				if s.jobCreated.Before(prev.completed) {
					b.Errorf("%s's Job was created before %s's Job completed", s.name, prev.name)
				}
			}
			out = append(out, *s)
		}
	}
	if len(out) != requests {
		b.Fatalf("%d samples for %d requests", len(out), requests)
	}
	return out
}
