package runnerjob

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/replay"
)

// Input files: a plan an approval names, or the run an undo restores, reach
// the runner as a file, a whole runner result (report.Result, the full one,
// gzip-compressed), that the launcher writes into a ConfigMap it creates
// just before the Job. The launcher may only create ConfigMaps, never read
// them (tenants keep theirs there), so it never looks at one it finds in
// place: the Job carries the SHA-256 of the exact bytes the launcher wrote
// (REPLAY_FILE_DIGEST), and the runner refuses any other content. A
// ConfigMap someone planted under the name, or changed since, is refused by
// the runner, not applied.

// InputKind is the runner target an input file is given to.
type InputKind string

const (
	// InputPlan is a dry run's result to apply exactly (--to plan:<file>).
	InputPlan InputKind = "plan"
	// InputUndo is a real run's result whose previous offsets an undo
	// restores (--to undo:<file>).
	InputUndo InputKind = "undo"
)

// InputKey is the ConfigMap's binaryData key, and the file's name in the
// runner pod.
const InputKey = "input.json.gz"

// inputDir is where the input ConfigMap is mounted in the runner pod.
const inputDir = "/etc/kafka-replay/input"

// maxInputBytes bounds the compressed file: a ConfigMap holds at most 1 MiB,
// names and metadata included. 10,000 partitions compress to far less.
const maxInputBytes = 1<<20 - 32<<10

// Input is a file a Job's runner reads its target from.
type Input struct {
	// Kind is the target the file is given to.
	Kind InputKind
	// ConfigMap is the ConfigMap holding it under InputKey.
	ConfigMap string
	// Digest is "sha256:<hex>" of the exact bytes the launcher wrote.
	Digest string
	// Undo is, for an undo's input, the run it undoes (on the Job as
	// annotations, so that status.undo survives a restart).
	Undo *v1alpha1.UndoStatus
}

// InputConfigMapName is the name of the input ConfigMap of a Job.
func InputConfigMapName(jobName string) string { return jobName + "-input" }

// InputConfigMap makes the input ConfigMap of the Job jobName of rr,
// holding r, and returns the digest of the bytes it holds. It is pure: the
// same result always gives the same bytes (gzip without a timestamp), so a
// pass that stopped between the ConfigMap and the Job writes the same again.
// The ConfigMap is immutable, belongs to the request (not as its
// controller: the garbage collector removes it with the request) and
// carries the runner labels.
func InputConfigMap(rr *v1alpha1.ReplayRequest, jobName string, r *report.Result) (*corev1.ConfigMap, string, error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return nil, "", err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, "", err
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	if buf.Len() > maxInputBytes {
		return nil, "", fmt.Errorf("the input file for Job %s is %d bytes compressed, more than a ConfigMap holds (%d)", jobName, buf.Len(), maxInputBytes)
	}
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      InputConfigMapName(jobName),
			Namespace: rr.Namespace,
			Labels: map[string]string{
				v1alpha1.LabelRunner:  v1alpha1.LabelRunnerValue,
				v1alpha1.LabelRequest: v1alpha1.LabelValue(rr.Name),
				v1alpha1.LabelGroup:   v1alpha1.LabelValue(replay.Group(rr)),
			},
			Annotations: map[string]string{
				v1alpha1.AnnotationRequest: rr.Name,
				v1alpha1.AnnotationGroup:   replay.Group(rr),
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: v1alpha1.GroupVersion.String(),
				Kind:       "ReplayRequest",
				Name:       rr.Name,
				UID:        rr.UID,
			}},
		},
		Immutable:  ptr.To(true),
		BinaryData: map[string][]byte{InputKey: buf.Bytes()},
	}
	// The runner's own spelling of a digest: it compares the two.
	return cm, config.FileDigestOf(buf.Bytes()), nil
}
