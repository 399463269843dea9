package launcher

import (
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/config"

	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

// After a SIGTERM the runner finishes a commit it has begun and its
// read-back, for up to config.CommitBound of its --timeout. The kubelet's SIGKILL comes after the pod's grace period, so
// the grace must outlast that bound (the Kubernetes default, 30 s, does not),
// and it must be derived from the timeout the Job actually passes.
func TestUnitRunnerPodOutlastsItsCommit(t *testing.T) {
	job := buildJob(t, testutil.MakeRequest("ns", "a"))
	env := testutil.RunnerEnv(job)
	timeout, err := time.ParseDuration(env[config.EnvTimeout])
	if err != nil {
		t.Fatalf("%s = %q: %v", config.EnvTimeout, env[config.EnvTimeout], err)
	}
	grace := job.Spec.Template.Spec.TerminationGracePeriodSeconds
	if grace == nil {
		t.Fatal("no terminationGracePeriodSeconds: the default 30 s is shorter than the commit's bound")
	}
	if g, bound := time.Duration(*grace)*time.Second, config.CommitBound(timeout); g < bound+15*time.Second {
		t.Fatalf("grace period %s does not outlast the commit and read-back's bound %s with a margin", g, bound)
	}
}

// Every Job asks the runner for its full record in the log, which the
// launcher reads into the ReplayRecord.
func TestUnitJobEmitsTheRecord(t *testing.T) {
	for _, w := range []*testutil.RequestWrapper{testutil.MakeRequest("ns", "a"), testutil.MakeRequest("ns", "b").DryRun()} {
		if got := testutil.RunnerEnv(buildJob(t, w))[config.EnvEmitRecord]; got != "true" {
			t.Errorf("%s = %q, want true", config.EnvEmitRecord, got)
		}
	}
}
