package state

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kafka-replay/kafka-replay/launcher/testutil"
)

func TestUnitJobFinished(t *testing.T) {
	job := &batchv1.Job{}
	if f, _, _ := JobFinished(job); f {
		t.Fatal("new Job finished")
	}
	// FailureTarget alone: pods are still terminating.
	job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue}}
	if f, _, _ := JobFinished(job); f {
		t.Fatal("FailureTarget counted as finished")
	}
	testutil.Complete(job, time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC))
	if f, ok, _ := JobFinished(job); !f || !ok {
		t.Fatal("Complete not finished")
	}
}

func TestUnitTailAndTruncateKeepUTF8(t *testing.T) {
	s := strings.Repeat("é", 3000)
	if got := Truncate(s, 1001); len(got) > 1001 || !strings.HasPrefix(s, got) || !utf8Valid(got) {
		t.Fatalf("truncate broke UTF-8")
	}
	if got := Tail(s, 1001); len(got) > 1001 || !strings.HasSuffix(s, got) || !utf8Valid(got) {
		t.Fatalf("tail broke UTF-8")
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "?") == s }
