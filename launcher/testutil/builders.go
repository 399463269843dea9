// Package testutil has small builders for the objects the launcher's tests
// use: requests, the Jobs and pods the Job controller would make, and runner
// results. They set only what a test names; everything else is a sensible
// default.
package testutil

import (
	"encoding/json"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// RequestWrapper builds a ReplayRequest.
type RequestWrapper struct{ v1alpha1.ReplayRequest }

// MakeRequest returns a valid request: group "orders" on
// kafka.<namespace>.svc:9092 (a cluster per namespace, so that tests sharing
// an API server never share a group's queue), target Earliest.
func MakeRequest(ns, name string) *RequestWrapper {
	earliest := v1alpha1.PositionEarliest
	return &RequestWrapper{v1alpha1.ReplayRequest{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ReplayRequest"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ReplayRequestSpec{
			Kafka:           v1alpha1.KafkaConnection{BootstrapServers: "kafka." + ns + ".svc:9092"},
			Group:           "orders",
			Target:          v1alpha1.Target{Position: &earliest},
			WhenGroupActive: v1alpha1.GroupActiveFail,
			// The schema's default too, so that a name computed from a
			// request built here (JobName, SpecDigest) is the stored one's.
			Approval: v1alpha1.ApprovalAutomatic,
		},
	}}
}

// Obj returns the request.
func (w *RequestWrapper) Obj() *v1alpha1.ReplayRequest { return &w.ReplayRequest }

// UID sets the UID (unit tests; the API server sets it for real).
func (w *RequestWrapper) UID(uid string) *RequestWrapper { w.ObjectMeta.UID = types.UID(uid); return w }

// Created sets the creation time (unit tests).
func (w *RequestWrapper) Created(t time.Time) *RequestWrapper {
	w.CreationTimestamp = metav1.NewTime(t)
	return w
}

// Bootstrap sets kafka.bootstrapServers.
func (w *RequestWrapper) Bootstrap(s string) *RequestWrapper {
	w.Spec.Kafka.BootstrapServers = s
	return w
}

// Group sets the consumer group.
func (w *RequestWrapper) Group(g string) *RequestWrapper { w.Spec.Group = g; return w }

// Groups makes it a request over several groups (spec.groups, no group).
func (w *RequestWrapper) Groups(gs ...string) *RequestWrapper {
	w.Spec.Group, w.Spec.Groups = "", gs
	return w
}

// Select sets spec.groupSelector to include the groups with these
// prefixes, instead of group.
func (w *RequestWrapper) Select(prefixes ...string) *RequestWrapper {
	w.Spec.Group = ""
	sel := &v1alpha1.GroupSelector{}
	for _, p := range prefixes {
		sel.Include = append(sel.Include, v1alpha1.GroupPattern{Prefix: p})
	}
	w.Spec.GroupSelector = sel
	return w
}

// Listing is a runner's --list of consumer groups with these names, as
// its termination message holds it (report.CompactGroups), and the whole
// listing as the runner writes it to stdout (REPLAY_OUTPUT=json).
func Listing(groups ...string) (message, stdout string) {
	var g report.Groups
	for _, name := range groups {
		g.Groups = append(g.Groups, report.Group{Group: name, GroupType: "Consumer", ProtocolType: "consumer", State: "Empty", Topics: []string{"orders"}, Committed: []string{"orders"}})
	}
	short, err := report.CompactGroups(g, report.MaxTerminationMessageBytes)
	if err != nil {
		panic(err)
	}
	full, err := report.MarshalGroups(g)
	if err != nil {
		panic(err)
	}
	return string(short), string(full)
}

// Topic adds a topic, with optional partitions.
func (w *RequestWrapper) Topic(name string, partitions ...int32) *RequestWrapper {
	w.Spec.Topics = append(w.Spec.Topics, v1alpha1.TopicSelector{Name: name, Partitions: partitions})
	return w
}

// Target replaces the target.
func (w *RequestWrapper) Target(t v1alpha1.Target) *RequestWrapper { w.Spec.Target = t; return w }

// Time targets an RFC3339 time.
func (w *RequestWrapper) Time(s string) *RequestWrapper {
	return w.Target(v1alpha1.Target{Time: &s})
}

// Ago targets a time relative to acceptance.
func (w *RequestWrapper) Ago(d time.Duration) *RequestWrapper {
	return w.Target(v1alpha1.Target{Ago: &metav1.Duration{Duration: d}})
}

// Position targets Earliest or Latest.
func (w *RequestWrapper) Position(p v1alpha1.Position) *RequestWrapper {
	return w.Target(v1alpha1.Target{Position: &p})
}

// Offset targets an absolute offset.
func (w *RequestWrapper) Offset(n int64) *RequestWrapper {
	return w.Target(v1alpha1.Target{Offset: &n})
}

// ShiftBy targets a relative move.
func (w *RequestWrapper) ShiftBy(n int64) *RequestWrapper {
	return w.Target(v1alpha1.Target{ShiftBy: &n})
}

// FromGroup targets another group's offsets.
func (w *RequestWrapper) FromGroup(g string) *RequestWrapper {
	return w.Target(v1alpha1.Target{FromGroup: &g})
}

// Offsets targets explicit offsets.
func (w *RequestWrapper) Offsets(offs ...v1alpha1.PartitionOffset) *RequestWrapper {
	return w.Target(v1alpha1.Target{Offsets: offs})
}

// DryRun plans only.
func (w *RequestWrapper) DryRun() *RequestWrapper { w.Spec.DryRun = true; return w }

// Consumers names the workloads to pause for the replay.
func (w *RequestWrapper) Consumers(refs ...v1alpha1.ConsumerRef) *RequestWrapper {
	w.Spec.Consumers = refs
	return w
}

// Wait sets whenGroupActive: Wait with a timeout.
func (w *RequestWrapper) Wait(d time.Duration) *RequestWrapper {
	w.Spec.WhenGroupActive = v1alpha1.GroupActiveWait
	w.Spec.WaitTimeout = &metav1.Duration{Duration: d}
	return w
}

// ConfigMap and Secret reference the Kafka configuration.
func (w *RequestWrapper) ConfigMap(name string) *RequestWrapper {
	w.Spec.Kafka.ConfigMapRef = &v1alpha1.LocalObjectReference{Name: name}
	return w
}

// Secret references a Secret of librdkafka properties.
func (w *RequestWrapper) Secret(name string) *RequestWrapper {
	w.Spec.Kafka.SecretRef = &v1alpha1.LocalObjectReference{Name: name}
	return w
}

// Runner sets runner overrides.
func (w *RequestWrapper) Runner(o v1alpha1.RunnerOverrides) *RequestWrapper {
	w.Spec.Runner = &o
	return w
}

// UndoOf sets target.undoOf: the request undoes the named one.
func (w *RequestWrapper) UndoOf(name string) *RequestWrapper {
	return w.Target(v1alpha1.Target{UndoOf: &name})
}

// Force sets force (with target.undoOf).
func (w *RequestWrapper) Force() *RequestWrapper { w.Spec.Force = true; return w }

// GroupType sets spec.groupType.
func (w *RequestWrapper) GroupType(k v1alpha1.GroupType) *RequestWrapper {
	w.Spec.GroupType = k
	return w
}

// CommitMode sets spec.commitMode.
func (w *RequestWrapper) CommitMode(m v1alpha1.CommitMode) *RequestWrapper {
	w.Spec.CommitMode = m
	return w
}

// AllowSkip sets limits.allowSkip.
func (w *RequestWrapper) AllowSkip() *RequestWrapper {
	if w.Spec.Limits == nil {
		w.Spec.Limits = &v1alpha1.Limits{}
	}
	w.Spec.Limits.AllowSkip = true
	return w
}

// MaxReconsume sets limits.maxMessagesToReconsume.
func (w *RequestWrapper) MaxReconsume(n int64) *RequestWrapper {
	if w.Spec.Limits == nil {
		w.Spec.Limits = &v1alpha1.Limits{}
	}
	w.Spec.Limits.MaxMessagesToReconsume = &n
	return w
}

// Manual sets approval: Manual: the request plans first and applies only an
// approved plan.
func (w *RequestWrapper) Manual() *RequestWrapper {
	w.Spec.Approval = v1alpha1.ApprovalManual
	return w
}

// ApprovalTimeout sets approvalTimeout (with Manual).
func (w *RequestWrapper) ApprovalTimeout(d time.Duration) *RequestWrapper {
	w.Spec.ApprovalTimeout = &metav1.Duration{Duration: d}
	return w
}

// Annotate sets an annotation on the request.
func (w *RequestWrapper) Annotate(key, value string) *RequestWrapper {
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[key] = value
	return w
}

// Resolved marks the request accepted with a resolved target (unit tests).
func (w *RequestWrapper) Resolved(target string) *RequestWrapper {
	w.Status.ResolvedTarget = target
	return w
}

// --- Jobs and pods, as the Job controller and the kubelet leave them ---

// Started sets the status a running Job has.
func Started(job *batchv1.Job, at time.Time) {
	job.Status.StartTime = &metav1.Time{Time: at}
	job.Status.Active = 1
}

// Complete sets the status of a Job whose pod succeeded, the way the Job
// controller writes it (SuccessCriteriaMet, then Complete).
func Complete(job *batchv1.Job, at time.Time) {
	if job.Status.StartTime == nil {
		job.Status.StartTime = &metav1.Time{Time: at.Add(-time.Second)}
	}
	job.Status.Active = 0
	job.Status.Ready = ptr.To[int32](0)
	job.Status.Succeeded = 1
	job.Status.CompletionTime = &metav1.Time{Time: at}
	job.Status.Conditions = append(job.Status.Conditions,
		batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonCompletionsReached, LastTransitionTime: metav1.NewTime(at), LastProbeTime: metav1.NewTime(at)},
		batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonCompletionsReached, LastTransitionTime: metav1.NewTime(at), LastProbeTime: metav1.NewTime(at)},
	)
}

// Fail sets the status of a failed Job (FailureTarget, then Failed) with the
// Job controller's reason: PodFailurePolicy, BackoffLimitExceeded or
// DeadlineExceeded.
func Fail(job *batchv1.Job, reason string, at time.Time) {
	if job.Status.StartTime == nil {
		job.Status.StartTime = &metav1.Time{Time: at.Add(-time.Second)}
	}
	job.Status.Active = 0
	job.Status.Ready = ptr.To[int32](0)
	job.Status.Failed++
	job.Status.Conditions = append(job.Status.Conditions,
		batchv1.JobCondition{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: reason, Message: "failed: " + reason, LastTransitionTime: metav1.NewTime(at), LastProbeTime: metav1.NewTime(at)},
		batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason, Message: "failed: " + reason, LastTransitionTime: metav1.NewTime(at), LastProbeTime: metav1.NewTime(at)},
	)
}

// PodFor makes the pod the Job controller would create for a Job: the
// template's labels and annotations plus the controller labels, owned by the
// Job.
func PodFor(job *batchv1.Job, name string) *corev1.Pod {
	labels := map[string]string{}
	for k, v := range job.Spec.Template.Labels {
		labels[k] = v
	}
	labels[batchv1.ControllerUidLabel] = string(job.UID)
	labels[batchv1.JobNameLabel] = job.Name
	annotations := map[string]string{}
	for k, v := range job.Spec.Template.Annotations {
		annotations[k] = v
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   job.Namespace,
			Name:        name,
			Labels:      labels,
			Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: *job.Spec.Template.Spec.DeepCopy(),
	}
}

// RunnerEnv is the environment a Job gives its runner container: each
// variable's value, or "<from FIELD>" for one the downward API sets. It is
// how a test reads what a Job tells the runner.
func RunnerEnv(job *batchv1.Job) map[string]string {
	out := map[string]string{}
	for _, c := range job.Spec.Template.Spec.Containers {
		if c.Name != "runner" {
			continue
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
				out[e.Name] = "<from " + e.ValueFrom.FieldRef.FieldPath + ">"
				continue
			}
			out[e.Name] = e.Value
		}
	}
	return out
}

// Terminated sets a pod's status as the kubelet leaves it after the runner
// container exited with code and termination message msg.
func Terminated(pod *corev1.Pod, code int32, msg string, at time.Time) {
	pod.Status.Phase = corev1.PodSucceeded
	reason := "Completed"
	if code != 0 {
		pod.Status.Phase = corev1.PodFailed
		reason = "Error"
	}
	pod.Status.StartTime = &metav1.Time{Time: at.Add(-time.Second)}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name:  "runner",
		Image: pod.Spec.Containers[0].Image,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode:   code,
			Reason:     reason,
			Message:    msg,
			StartedAt:  metav1.NewTime(at.Add(-time.Second)),
			FinishedAt: metav1.NewTime(at),
		}},
	}}
}

// --- runner results ---

// Result builds a runner result for group with one partition per delta.
func Result(group string, code report.ExitCode, deltas ...int64) *report.Result {
	r := &report.Result{
		Schema:     report.Schema,
		Group:      group,
		RunID:      "run-1",
		Target:     report.Target{Given: "earliest", Resolved: "earliest"},
		ExitCode:   code,
		Reason:     report.ReasonApplied,
		StartedAt:  time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC),
		FinishedAt: time.Date(2026, 3, 1, 9, 30, 1, 0, time.UTC),
	}
	if code != report.ExitOK {
		r.Reason = report.ReasonForExitCode(code)
		r.Error = "runner failed: " + string(r.Reason)
	}
	for i, d := range deltas {
		prev := int64(1000)
		delta := d
		r.Partitions = append(r.Partitions, report.Partition{
			Topic: "orders", Partition: int32(i), PreviousOffset: &prev, NewOffset: prev - d, Delta: &delta,
			LogStartOffset: 0, LogEndOffset: 2000,
			// A successful run committed every partition.
			Applied: code == report.ExitOK,
		})
	}
	r.Summarize()
	return r
}

// Compact encodes a result as the runner writes it to its termination
// message.
func Compact(r *report.Result) string {
	b, err := report.Compact(r, report.MaxTerminationMessageBytes)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// JSON encodes anything, for table tests.
func JSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// --- runbook Jobs ---

// RunbookCronJob is a suspended runbook CronJob named name for group, as
// the chart renders it when chartLabels (else one anyone could make), whose
// Job template is the launcher's Job tmpl without its request label.
func RunbookCronJob(ns, name, group string, chartLabels bool, tmpl *batchv1.Job) *batchv1.CronJob {
	tmpl = tmpl.DeepCopy()
	for _, m := range []map[string]string{tmpl.Labels, tmpl.Spec.Template.Labels} {
		delete(m, v1alpha1.LabelRequest)
		m[v1alpha1.LabelRunbook] = name
	}
	tmpl.Spec.Suspend = ptr.To(true)
	labels := map[string]string{v1alpha1.LabelRunbook: name}
	if chartLabels {
		labels["app.kubernetes.io/part-of"] = "kafka-replay"
		labels["app.kubernetes.io/component"] = "runner"
	}
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: batchv1.CronJobSpec{
			Schedule: "0 0 31 2 *", Suspend: ptr.To(true),
			JobTemplate: batchv1.JobTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: tmpl.Labels, Annotations: map[string]string{v1alpha1.AnnotationGroup: group}}, Spec: tmpl.Spec},
		},
	}
}

// JobFromCronJob is the Job `kubectl create job --from=cronjob/...` makes
// from cron (which must have its UID), named name.
func JobFromCronJob(cron *batchv1.CronJob, name string) *batchv1.Job {
	annotations := map[string]string{"cronjob.kubernetes.io/instantiate": "manual"}
	for k, v := range cron.Spec.JobTemplate.Annotations {
		annotations[k] = v
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: cron.Namespace, Name: name,
			Labels: cron.Spec.JobTemplate.Labels, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cron.Name, UID: cron.UID, Controller: ptr.To(true)}},
		},
		Spec: *cron.Spec.JobTemplate.Spec.DeepCopy(),
	}
}
