package record

import (
	"testing"

	"github.com/kafka-replay/kafka-replay/runner/report"

	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
)

func TestUnitClaimsNothingChanged(t *testing.T) {
	for reason, want := range map[string]bool{
		string(report.ReasonInvalidInput):        true,
		string(report.ReasonCredentialsNotBound): true,
		string(report.ReasonGroupActive):         true,
		string(report.ReasonKafkaError):          true,
		string(report.ReasonInterrupted):         true,
		string(report.ReasonApplied):             false,
		string(report.ReasonPartiallyApplied):    false,
		string(report.ReasonInternalError):       false, state.ReasonOOMKilled: false, state.ReasonJobFailed: false, "Whatever": false,
	} {
		if got := claimsNothingChanged(reason); got != want {
			t.Errorf("claimsNothingChanged(%q) = %v, want %v", reason, got, want)
		}
	}
}
