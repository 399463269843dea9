package state

import (
	"regexp"
	"strings"
	"unicode/utf8"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// JobFinished reports whether a Job has reached a terminal condition
// (Complete or Failed), and which.
func JobFinished(job *batchv1.Job) (finished, succeeded bool, cond *batchv1.JobCondition) {
	for i := range job.Status.Conditions {
		c := &job.Status.Conditions[i]
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return true, true, c
		case batchv1.JobFailed:
			return true, false, c
		}
	}
	return false, false, nil
}

// runnerTermination is the runner container's last termination in a pod.
func RunnerTermination(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name != ContainerName {
			continue
		}
		if cs.State.Terminated != nil {
			return cs.State.Terminated
		}
		return cs.LastTerminationState.Terminated
	}
	return nil
}

// conditionReason is the API server's rule for metav1.Condition reasons.
var conditionReason = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// validReason returns reason when it is a valid condition reason of at most
// 1024 bytes, else fallback: a result from a runner of another version must
// never make the status update fail for ever.
func ValidReason(reason, fallback string) string {
	if len(reason) <= 1024 && conditionReason.MatchString(reason) {
		return reason
	}
	return fallback
}

// SetCondition sets one condition, stamped with the request's generation.
// It reports whether anything changed.
func SetCondition(rr *v1alpha1.ReplayRequest, typ string, status metav1.ConditionStatus, reason, message string) bool {
	return meta.SetStatusCondition(&rr.Status.Conditions, metav1.Condition{
		Type:               typ,
		Status:             status,
		Reason:             reason,
		Message:            Truncate(message, 1024),
		ObservedGeneration: rr.Generation,
	})
}

// PhaseFor derives the phase from the conditions, so the two never disagree.
func PhaseFor(conds []metav1.Condition) v1alpha1.Phase {
	if c := meta.FindStatusCondition(conds, v1alpha1.ConditionSucceeded); c != nil {
		switch c.Status {
		case metav1.ConditionTrue:
			return v1alpha1.PhaseSucceeded
		case metav1.ConditionFalse:
			return v1alpha1.PhaseFailed
		}
	}
	if meta.IsStatusConditionTrue(conds, v1alpha1.ConditionRunning) {
		return v1alpha1.PhaseRunning
	}
	if meta.IsStatusConditionTrue(conds, v1alpha1.ConditionAwaitingApproval) {
		return v1alpha1.PhaseAwaitingApproval
	}
	return v1alpha1.PhasePending
}

// IsFinished reports whether a request has reached its final state.
func IsFinished(rr *v1alpha1.ReplayRequest) bool {
	c := meta.FindStatusCondition(rr.Status.Conditions, v1alpha1.ConditionSucceeded)
	return c != nil && c.Status != metav1.ConditionUnknown
}

// IsStarted reports whether the launcher has created the request's Job.
func IsStarted(rr *v1alpha1.ReplayRequest) bool { return rr.Status.JobName != "" }

// lastLine returns the last non-empty line of s, bounded.
func LastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return Truncate(strings.TrimSpace(lines[len(lines)-1]), 512)
}

// truncate cuts s to at most n bytes on a rune boundary.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// tail keeps the last n bytes of s, starting on a line (or rune) boundary.
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
		return s[i+1:]
	}
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return s
}

func CopyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func ValueOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// ContainerName is the runner's container in every runner pod.
const ContainerName = "runner"

func ValueOrString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
