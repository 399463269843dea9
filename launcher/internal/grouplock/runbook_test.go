package grouplock

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

func TestUnitTrustedRunbookJob(t *testing.T) {
	cron := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "kr-rewind", UID: "cron-uid", Labels: map[string]string{
		labelPartOf: labelPartOfValue, labelComponent: labelComponentRun, v1alpha1.LabelRunbook: "rewind",
	}}}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "rewind-1",
		Labels:          map[string]string{v1alpha1.LabelRunner: "true", v1alpha1.LabelRunbook: "rewind"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cron.Name, UID: cron.UID, Controller: ptr.To(true)}},
	}}
	if !TrustedRunbookJob(job, cron) {
		t.Fatal("a Job made from the chart's runbook CronJob is not trusted")
	}
	mutations := map[string]func(j *batchv1.Job, c *batchv1.CronJob){
		"no owner":                    func(j *batchv1.Job, _ *batchv1.CronJob) { j.OwnerReferences = nil },
		"another CronJob UID":         func(j *batchv1.Job, _ *batchv1.CronJob) { j.OwnerReferences[0].UID = "other" },
		"a CronJob without the chart": func(_ *batchv1.Job, c *batchv1.CronJob) { delete(c.Labels, labelPartOf) },
		"another runbook's CronJob":   func(_ *batchv1.Job, c *batchv1.CronJob) { c.Labels[v1alpha1.LabelRunbook] = "other" },
		"a request's Job":             func(j *batchv1.Job, _ *batchv1.CronJob) { j.Labels[v1alpha1.LabelRequest] = "x" },
		"no runbook label":            func(j *batchv1.Job, _ *batchv1.CronJob) { delete(j.Labels, v1alpha1.LabelRunbook) },
	}
	for name, mutate := range mutations {
		j, c := job.DeepCopy(), cron.DeepCopy()
		mutate(j, c)
		if TrustedRunbookJob(j, c) {
			t.Errorf("%s: trusted", name)
		}
	}
}
