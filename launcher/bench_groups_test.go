package launcher_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kafka-replay/kafka-replay/launcher"
	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/testutil"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// BenchmarkLauncherGroups runs the real launcher binary against envtest
// with requests over many groups (issue 30): BENCH_PARENTS parents (1) of
// BENCH_PARENT_GROUPS groups each (200; at most 500, the API's cap), at
// parallelism BENCH_PARALLELISM (10), every child's Job completed as soon
// as it appears with a result of BENCH_PARTITIONS partitions (50). It
// reports the wall time from the parents' creation to their final status,
// the Jobs made, the launcher's peak RSS, and the largest parent's size
// as stored (JSON bytes), which must stay well under the API server's
// 1.5 MiB object limit.
func BenchmarkLauncherGroups(b *testing.B) {
	env(b)
	var (
		parents     = benchInt("BENCH_PARENTS", 1)
		groups      = benchInt("BENCH_PARENT_GROUPS", 200)
		parallelism = benchInt("BENCH_PARALLELISM", 10)
		partitions  = benchInt("BENCH_PARTITIONS", 50)
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	proc := startLauncherProcess(b)
	deltas := make([]int64, partitions)
	for i := range deltas {
		deltas[i] = int64(5)
	}

	b.ResetTimer()
	var wall time.Duration
	var jobCount, largest int
	for range b.N {
		ns := newNamespace(b, nil)
		c, err := cache.New(adminCfg, cache.Options{
			Scheme:            launcher.NewScheme(),
			DefaultNamespaces: map[string]cache.Config{ns: {}},
			ByObject:          map[client.Object]cache.ByObject{&batchv1.Job{}: {Label: launcher.RunnerSelector()}},
		})
		if err != nil {
			b.Fatal(err)
		}
		cctx, stopCache := context.WithCancel(ctx)
		jobs := make(chan *batchv1.Job, parents*groups)
		var mu sync.Mutex
		seen := map[string]bool{}
		jobInf, err := c.GetInformer(cctx, &batchv1.Job{})
		if err != nil {
			b.Fatal(err)
		}
		_, _ = jobInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
			job := o.(*batchv1.Job)
			mu.Lock()
			dup := seen[job.Annotations[v1alpha1.AnnotationRequest]]
			seen[job.Annotations[v1alpha1.AnnotationRequest]] = true
			mu.Unlock()
			if dup {
				b.Errorf("second Job for request %s", job.Annotations[v1alpha1.AnnotationRequest])
			}
			jobs <- job
		}})
		done := make(chan struct{})
		finished := map[string]bool{}
		rrInf, err := c.GetInformer(cctx, &v1alpha1.ReplayRequest{})
		if err != nil {
			b.Fatal(err)
		}
		_, _ = rrInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(_, o any) {
			rr := o.(*v1alpha1.ReplayRequest)
			if len(rr.Spec.Groups) == 0 || (rr.Status.Phase != v1alpha1.PhaseSucceeded && rr.Status.Phase != v1alpha1.PhaseFailed) {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if finished[rr.Name] {
				return
			}
			finished[rr.Name] = true
			if rr.Status.Phase != v1alpha1.PhaseSucceeded {
				b.Errorf("%s ended %s: %s", rr.Name, rr.Status.Phase, rr.Status.Message)
			}
			if raw, err := json.Marshal(rr); err == nil && len(raw) > largest {
				largest = len(raw)
			}
			if len(finished) == parents {
				close(done)
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
					res := testutil.Result(job.Annotations[v1alpha1.AnnotationGroup], report.ExitOK, deltas...)
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
					}
				}
			}()
		}
		start := time.Now()
		for i := range parents {
			gs := make([]string, groups)
			for j := range gs {
				gs[j] = fmt.Sprintf("team-orders-consumer-group-%02d-%04d", i, j) // 37 characters
			}
			p := testutil.MakeRequest(ns, fmt.Sprintf("incident-%02d", i)).Groups(gs...).ShiftBy(-5).Obj()
			p.Spec.Parallelism = int32(parallelism)
			if err := k8s.Create(ctx, p); err != nil {
				b.Fatal(err)
			}
		}
		select {
		case <-done:
		case <-time.After(30 * time.Minute):
			b.Fatalf("the parents did not finish within 30m")
		}
		wall += time.Since(start)
		close(jobs)
		workers.Wait()
		stopCache()
		mu.Lock()
		jobCount += len(seen)
		mu.Unlock()
	}
	b.StopTimer()
	rss := proc.peakRSS(b)
	b.ReportMetric(wall.Seconds()/float64(b.N), "wall-s")
	b.ReportMetric(float64(jobCount)/float64(b.N), "jobs")
	b.ReportMetric(float64(rss)/(1<<20), "launcher-peak-rss-MiB")
	b.ReportMetric(float64(largest), "parent-bytes")
}
