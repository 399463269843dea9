package state

import (
	"github.com/kafka-replay/kafka-replay/runner/report"

	v1alpha1 "github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// A metric's label values come from a fixed set. A reason is whatever the
// runner's result said, and any Job labelled as a runner can write a
// result: taken as it is, each new spelling would be a new time series
// kept until the launcher restarts (unbounded cardinality).

// ReasonOther is the reason label of a reason outside the fixed set.
const ReasonOther = "Other"

// outcomeReasons are the reasons a finished replay can have: the runner's
// (runner/report, the one list of them) and the launcher's own, the one list
// of those (TestEveryOutcomeReasonIsALabel finds any reason the launcher
// finishes with that is missing here).
var outcomeReasons = func() map[string]bool {
	m := map[string]bool{}
	for _, r := range report.Reasons() {
		m[string(r)] = true
	}
	for _, r := range []string{
		ReasonCompleted, ReasonOOMKilled, ReasonDeadlineExceeded, ReasonJobFailed, ReasonJobDeleted,
		ReasonJobInvalid, ReasonJobCreateFailed, ReasonJobNotCreated, ReasonPodNotStarted,
		ReasonImagePullFailed, ReasonUnschedulable, ReasonConfigMissing,
		ReasonAlreadyRan, ReasonJobConflict, ReasonInvalidTarget,
		ReasonConsumerRefNotResolved, ReasonClusterRefNotResolved, ReasonUndoRefused, ReasonPauseFailed,
		ReasonRejected, ReasonExpired, ReasonPlanNotRecorded, ReasonChildTampered, ReasonChildDeleted,
		ReasonListFailed, ReasonNoGroupsMatched, ReasonTooManyGroups, ReasonListingIncomplete,
	} {
		m[r] = true
	}
	return m
}()

// ReasonLabel is a reason as a metric label value: itself when it is one
// the runner or the launcher gives, else ReasonOther.
func ReasonLabel(reason string) string {
	if outcomeReasons[reason] {
		return reason
	}
	return ReasonOther
}

// OutcomeLabel is an outcome as a metric label value: Succeeded or Failed.
func OutcomeLabel(succeeded bool) string {
	if succeeded {
		return v1alpha1.OutcomeSucceeded
	}
	return v1alpha1.OutcomeFailed
}

// CounterIncrement is a result's count as a counter increment: a counter
// only goes up (Add panics on a negative value), and a result can say
// anything, so a negative count adds nothing.
func CounterIncrement(n int64) float64 {
	return float64(max(n, 0))
}
