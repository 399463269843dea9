package cli

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kafka-replay/kafka-replay/cmd/kubectl-replay/internal/render"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

func histJob(name string, created time.Time, labels, annotations map[string]string, env ...corev1.EnvVar) batchv1.Job {
	j := batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, CreationTimestamp: metav1.NewTime(created), Labels: labels, Annotations: annotations}}
	j.Spec.Template.Spec.Containers = []corev1.Container{{Name: "runner", Env: env}}
	return j
}

// Every path that starts a run is in the history, joined with its record,
// newest first; a group is matched by its full name, not its label (a
// hashed label value stands for several names only by accident).
func TestHistoryEntries(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	long := strings.Repeat("g", 70) // its label value is a hash
	jobs := []batchv1.Job{
		histJob("req-1", t0, map[string]string{v1alpha1.LabelRequest: "rewind", v1alpha1.LabelStage: "apply"},
			map[string]string{v1alpha1.AnnotationRequest: "rewind", v1alpha1.AnnotationGroup: "orders", v1alpha1.AnnotationRequestedBy: "alice",
				v1alpha1.AnnotationResolvedTarget: "shift:-10", v1alpha1.AnnotationOutcome: "Succeeded", v1alpha1.AnnotationReason: "Applied",
				v1alpha1.AnnotationFinishedAt: t0.Add(time.Minute).Format(time.RFC3339), v1alpha1.AnnotationMessagesReconsumed: "30", v1alpha1.AnnotationMessagesSkipped: "0"}),
		histJob("rb-1", t0.Add(time.Hour), map[string]string{v1alpha1.LabelRunbook: "orders-rewind-1h"}, map[string]string{v1alpha1.AnnotationGroup: "orders"}),
		histJob("by-hand", t0.Add(2*time.Hour), nil, nil, corev1.EnvVar{Name: "REPLAY_GROUP", Value: "orders"}),
		histJob("other", t0.Add(3*time.Hour), nil, map[string]string{v1alpha1.AnnotationGroup: long}),
	}
	recs := []v1alpha1.ReplayRecord{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "rb-1"}, Job: "rb-1", Runbook: "orders-rewind-1h", Group: "orders", Target: "time:2026-03-01T09:00:00Z",
			Outcome: v1alpha1.RecordOutcome{Succeeded: false, Reason: "GroupActive", OffsetsChanged: v1alpha1.OffsetsChangedNo, FinishedAt: &metav1.Time{Time: t0.Add(61 * time.Minute)}}},
		// A record whose Job is gone (retention deleted it before the GC
		// took the record) still counts.
		{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "old", CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour))}, Job: "old", Request: "older", Group: "orders", DryRun: true,
			Outcome: v1alpha1.RecordOutcome{Succeeded: true, Reason: "DryRun", OffsetsChanged: v1alpha1.OffsetsChangedNo}, Totals: v1alpha1.ResultTotals{MessagesToReconsume: 7}},
	}
	got := HistoryEntries(jobs, recs, "orders")
	var names []string
	for _, e := range got {
		names = append(names, e.Source+"/"+e.Name+":"+e.Outcome+":"+e.Reason)
	}
	if want := "job/by-hand:Running: runbook/orders-rewind-1h:Failed:GroupActive request/rewind:Succeeded:Applied request/older:Succeeded:DryRun"; strings.Join(names, " ") != want {
		t.Errorf("entries %s\nwant    %s", strings.Join(names, " "), want)
	}
	if e := got[2]; e.RequestedBy != "alice" || e.Target != "shift:-10" || *e.Reconsumed != 30 || !e.When.Equal(t0.Add(time.Minute)) {
		t.Errorf("request entry %+v", e)
	}
	if e := got[1]; e.Target != "time:2026-03-01T09:00:00Z" || e.OffsetsChanged != "No" || !e.When.Equal(t0.Add(61*time.Minute)) {
		t.Errorf("runbook entry %+v", e)
	}
	if e := got[3]; !e.DryRun || *e.Reconsumed != 7 {
		t.Errorf("record-only entry %+v", e)
	}
	if all := HistoryEntries(jobs, recs, ""); len(all) != 5 || all[0].Group != long {
		t.Errorf("all groups: %d entries, first %+v", len(all), all[0])
	}
	if only := HistoryEntries(jobs, recs, long); len(only) != 1 || only[0].Job != "other" {
		t.Errorf("the long group: %+v", only)
	}
}

// The runs of a parent's children are listed together, where the newest
// of them is, each marked with its parent (the Job's and the record's
// kafkareplay.dev/parent annotation, a long name whole); a parent of the
// same name in another namespace, and requests of one group, are left
// where they are.
func TestHistoryUnderParents(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	long := strings.Repeat("p", 200)
	job := func(ns, name, request, group, parent string, m int) batchv1.Job {
		an := map[string]string{v1alpha1.AnnotationRequest: request, v1alpha1.AnnotationGroup: group}
		if parent != "" {
			an[v1alpha1.AnnotationParent] = parent
		}
		j := histJob(name, t0.Add(time.Duration(m)*time.Minute), map[string]string{v1alpha1.LabelRequest: request}, an)
		j.Namespace = ns
		return j
	}
	jobs := []batchv1.Job{
		job("shop", "inc-aaa-1", "inc-aaa", "billing", long, 7),
		job("shop", "other-1", "other", "orders", "", 8),
		job("shop", "inc-bbb-1", "inc-bbb", "audit", long, 9),
		job("dev", "inc-aaa-1", "inc-aaa", "billing", "", 6),
	}
	// A record whose Job is gone names its parent too.
	recs := []v1alpha1.ReplayRecord{{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "inc-ccc-1", CreationTimestamp: metav1.NewTime(t0),
		Annotations: map[string]string{v1alpha1.AnnotationParent: long}}, Job: "inc-ccc-1", Request: "inc-ccc", Group: "search"}}
	got := HistoryEntries(jobs, recs, "")
	var order []string
	for _, e := range got {
		order = append(order, e.Namespace+"/"+e.Name+"<"+strings.TrimPrefix(e.Parent, long[:190])+">")
	}
	if want := "shop/inc-bbb<pppppppppp> shop/inc-aaa<pppppppppp> shop/inc-ccc<pppppppppp> shop/other<> dev/inc-aaa<>"; strings.Join(order, " ") != want {
		t.Errorf("HistoryEntries = %s\nwant             %s", strings.Join(order, " "), want)
	}
	out := render.HistoryTable(render.Palette{}, got, true)
	for _, want := range []string{"request/" + long + " (3 groups):\n", "  request/inc-bbb", "  request/inc-ccc"} {
		if !strings.Contains(out, want) {
			t.Errorf("history has no %q:\n%s", want, out)
		}
	}
}
