package launcher

import (
	"testing"

	"github.com/kafka-replay/kafka-replay/launcher/testutil"
	"github.com/kafka-replay/kafka-replay/runner/config"
)

// The runner's errors reach the request's status: the Job asks for them in
// the request's field names (spec.topics), not the runner's flags.
func TestUnitJobSpeaksInSpecFieldNames(t *testing.T) {
	env := testutil.RunnerEnv(buildJob(t, testutil.MakeRequest("ns", "a")))
	if got := env[config.EnvFieldNames]; got != string(config.FieldNamesSpec) {
		t.Errorf("%s = %q, want %q", config.EnvFieldNames, got, config.FieldNamesSpec)
	}
}
