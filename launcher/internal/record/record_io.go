package record

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

// The launcher writes a ReplayRecord per finished runner Job, and never reads
// records back except the one it is writing (past the cache: records are
// large, and caching all of them would cost the launcher memory for nothing).
//
// +kubebuilder:rbac:groups=kafkareplay.dev,resources=replayrecords,verbs=get;create;update

// maxRecordLogBytes bounds how much of one pod's log is read for its result
// frame. A 10,000-partition result is a frame of about 400 KB; the bound
// leaves room for the runner's own log lines around it, and for far larger
// results, while keeping one read's memory and time finite.
const maxRecordLogBytes = 16 << 20

// ErrRecordNotOwned is returned when a ReplayRecord with the Job's name
// exists but does not belong to the Job (its owner reference names another
// UID): someone else wrote it, and it is never taken for the Job's record.
var ErrRecordNotOwned = errors.New("a ReplayRecord of that name exists but was not written for this Job")

// Record is what Collect learnt about a finished Job.
type Record struct {
	// Outcome is the Job's outcome over every attempt, from each pod's
	// full result (log frame) where there was one, else its termination
	// message. Outcome.Result is bounded for status; Outcome.Full has
	// every partition.
	Outcome Outcome
	// Object is the ReplayRecord as stored, nil when it could not be.
	Object *v1alpha1.ReplayRecord
}

// Collector reads a finished Job's results from its pods' logs and
// keeps them as the Job's ReplayRecord.
type Collector struct {
	// Client writes records (create, update).
	Client client.Client
	// Reader reads a record past the cache (the manager's APIReader).
	Reader client.Reader
	// Logs reads whole pod logs; nil records from termination messages
	// only (the record then says it is not complete).
	Logs FullLogFetcher
	// MaxLogBytes bounds one pod's log read; 0 means maxRecordLogBytes.
	MaxLogBytes int64
	// TailLines and TailBytes bound the log tail kept for status (the
	// frame left out); 0 means 40 lines and 4 KiB.
	TailLines, TailBytes int64
}

// NewCollector makes the collector the launcher uses: writes through c,
// reads past the cache through r, and reads logs through logs when it can
// read whole logs (PodLogs can).
func NewCollector(c client.Client, r client.Reader, logs LogFetcher) *Collector {
	full, _ := logs.(FullLogFetcher)
	return &Collector{Client: c, Reader: r, Logs: full}
}

// Collect is the finish path's one call for a finished runner Job (a
// request's or a runbook's): it reads every attempt's result frame from its
// pod's log, merges the attempts (MergeAttempts), and creates the Job's
// ReplayRecord, or keeps the one already there (a repeated call, after a
// restart say, changes nothing, except that a complete record replaces an
// incomplete one).
//
// The returned Record is never nil and its Outcome is always valid, also
// when err is not nil: err only says the ReplayRecord could not be stored.
// A caller records the outcome (status, Job annotations) either way, and
// retries for a transient error; ErrRecordNotOwned is permanent.
func (c *Collector) Collect(ctx context.Context, job *batchv1.Job, pods []corev1.Pod) (*Record, error) {
	logs := c.readLogs(ctx, job, pods)
	o := MergeAttempts(job, AttemptsOf(pods, logs))
	if o.PodName != "" {
		o.LogTail = logs[o.PodName].Tail
	}
	stored, err := c.store(ctx, job, BuildRecord(job, o))
	return &Record{Outcome: o, Object: stored}, err
}

// collectRecord is the finish path's step for a finished Job: with a
// collector, the outcome from every pod's full result, and the record kept;
// without one, the outcome from termination messages (fallback) as is. A
// record that cannot be stored for now is an error to retry; one that some
// other writer holds (ErrRecordNotOwned) never will be, so the outcome is
// recorded without it.
func CollectRecord(ctx context.Context, c *Collector, job *batchv1.Job, pods []corev1.Pod, fallback Outcome) (Outcome, error) {
	if c == nil {
		return fallback, nil
	}
	rec, err := c.Collect(ctx, job, pods)
	if errors.Is(err, ErrRecordNotOwned) {
		log.FromContext(ctx).Info("not recording into a ReplayRecord the launcher did not write", "job", job.Name, "error", err.Error())
		err = nil
	}
	return rec.Outcome, err
}

// readLogs reads the last intact frame of each terminated attempt's log. A
// log that cannot be read (the node is gone, say) is not an error: the
// attempt falls back to its termination message.
func (c *Collector) readLogs(ctx context.Context, job *batchv1.Job, pods []corev1.Pod) map[string]LogRecord {
	out := map[string]LogRecord{}
	if c.Logs == nil {
		return out
	}
	limit := c.MaxLogBytes
	if limit <= 0 {
		limit = maxRecordLogBytes
	}
	for i := range pods {
		// A pod never bound to a node has no log to ask its kubelet for.
		if state.RunnerTermination(&pods[i]) == nil || pods[i].Spec.NodeName == "" {
			continue
		}
		out[pods[i].Name] = c.readFrameFrom(ctx, job.Namespace, pods[i].Name, limit)
	}
	return out
}

func (c *Collector) readFrameFrom(ctx context.Context, ns, pod string, limit int64) LogRecord {
	rc, err := c.Logs.Full(ctx, ns, pod, state.ContainerName, limit)
	if err != nil {
		return LogRecord{Err: err}
	}
	defer func() { _ = rc.Close() }()
	maxLines, maxBytes := c.TailLines, c.TailBytes
	if maxLines <= 0 {
		maxLines = 40
	}
	if maxBytes <= 0 {
		maxBytes = 4096
	}
	tw := &tailWriter{lines: int(maxLines), lineBytes: int(maxBytes)}
	results, damaged, err := report.ReadFrames(io.TeeReader(rc, tw))
	lr := LogRecord{Damaged: damaged, Err: err, Tail: state.Tail(tw.String(), int(maxBytes))}
	// One container writes one frame; a log read twice or a runner of
	// another version may hold more. The last one is the container's end.
	if len(results) > 0 {
		lr.Result = results[len(results)-1]
	}
	return lr
}

// store creates the record, or keeps the Job's existing one.
func (c *Collector) store(ctx context.Context, job *batchv1.Job, rec *v1alpha1.ReplayRecord) (*v1alpha1.ReplayRecord, error) {
	err := c.Client.Create(ctx, rec)
	if err == nil {
		return rec, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create ReplayRecord %s/%s: %w", rec.Namespace, rec.Name, err)
	}
	var existing v1alpha1.ReplayRecord
	if err := c.Reader.Get(ctx, client.ObjectKeyFromObject(rec), &existing); err != nil {
		return nil, fmt.Errorf("read ReplayRecord %s/%s: %w", rec.Namespace, rec.Name, err)
	}
	if !OwnedBy(&existing, job) {
		return nil, fmt.Errorf("ReplayRecord %s/%s: %w", rec.Namespace, rec.Name, ErrRecordNotOwned)
	}
	if existing.Complete || !rec.Complete {
		return &existing, nil
	}
	rec.ResourceVersion = existing.ResourceVersion
	if err := c.Client.Update(ctx, rec); err != nil {
		return nil, fmt.Errorf("update ReplayRecord %s/%s: %w", rec.Namespace, rec.Name, err)
	}
	return rec, nil
}

// tailWriter keeps the last lines written to it, leaving out frame lines
// (report.IsFrameLine): the runner's own log lines, for status.logTail. Each
// line is cut to lineBytes, so memory stays bounded whatever the log holds.
type tailWriter struct {
	lines, lineBytes int
	kept             []string
	partial          []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if room := w.lineBytes - len(w.partial); room > 0 {
				w.partial = append(w.partial, p[:min(room, len(p))]...)
			}
			break
		}
		if room := w.lineBytes - len(w.partial); room > 0 {
			w.partial = append(w.partial, p[:min(room, i)]...)
		}
		w.keep(string(w.partial))
		w.partial = w.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

func (w *tailWriter) keep(line string) {
	if report.IsFrameLine(line) {
		return
	}
	w.kept = append(w.kept, line)
	if len(w.kept) > w.lines {
		w.kept = w.kept[len(w.kept)-w.lines:]
	}
}

// String is the kept lines, and an unterminated last line.
func (w *tailWriter) String() string {
	kept := w.kept
	if len(w.partial) > 0 && !report.IsFrameLine(string(w.partial)) {
		kept = append(slices.Clone(kept[max(0, len(kept)+1-w.lines):]), string(w.partial))
	}
	if len(kept) == 0 {
		return ""
	}
	return strings.Join(kept, "\n") + "\n"
}

// WithoutFrameLines drops result frame lines from a log's text, for a log
// tail meant for people.
func WithoutFrameLines(log string) string {
	w := &tailWriter{lines: strings.Count(log, "\n") + 1, lineBytes: len(log) + 1}
	_, _ = w.Write([]byte(log))
	return w.String()
}

// OwnedBy reports whether a record's owner is the Job job itself (the kind,
// API version and UID BuildRecord writes): the one check, for the record a
// Job's outcome is read from, a plan is approved from and an undo restores
// from. A record of the Job's name that someone else wrote is not the Job's.
func OwnedBy(rec *v1alpha1.ReplayRecord, job *batchv1.Job) bool {
	for _, r := range rec.OwnerReferences {
		if r.Kind == "Job" && r.APIVersion == batchv1.SchemeGroupVersion.String() && r.UID == job.UID {
			return true
		}
	}
	return false
}
