package runner_test

import (
	"strings"
	"testing"

	"github.com/kafka-replay/kafka-replay/runner/config"
	"github.com/kafka-replay/kafka-replay/runner/report"
)

// TestMessagesInTheNamesOfWhoStartedTheRunner: a shell user reads flags, a
// ReplayRequest user (REPLAY_FIELD_NAMES=spec, set by the launcher) reads
// the request's fields, in the result, the termination message and the log.
func TestMessagesInTheNamesOfWhoStartedTheRunner(t *testing.T) {
	if testing.Short() {
		t.Skip("integration")
	}
	c := seeded(t)
	m, err := c.Join(testCtx(t), group, "billing-worker-7", topic)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Leave()
	cases := []struct {
		name        string
		args        []string
		env         map[string]string
		code        report.ExitCode
		flags, spec string // in the result's error, or its warnings
	}{
		{"unknown topic", []string{"--group", "other", "--topic", "nope", "--to", "earliest"}, nil, report.ExitInvalidInput,
			`--topic: topic "nope" does not exist`, `spec.topics: topic "nope" does not exist`},
		{"unknown partition", []string{"--group", "other", "--topic", topic + ":9", "--to", "earliest"}, nil, report.ExitInvalidInput,
			`--topic: partition 9 of topic "orders" does not exist`, `spec.topics: partition 9 of topic "orders" does not exist`},
		{"group active", []string{"--group", group, "--topic", topic, "--to", "earliest"}, nil, report.ExitGroupActive,
			"stop its consumers first, or use --wait-for-empty", "stop its consumers first, or use spec.whenGroupActive: Wait (with a spec.waitTimeout)"},
		{"dry run of an active group", []string{"--group", group, "--topic", topic, "--to", "earliest", "--dry-run"}, nil, report.ExitOK,
			"stop its consumers first or use --wait-for-empty", "stop its consumers first or use spec.whenGroupActive: Wait (with a spec.waitTimeout)"},
		{"copy from a group with no offsets", []string{"--group", "other", "--topic", topic, "--to", "group:nobody"}, nil, report.ExitInvalidInput,
			`--to: source group "nobody" has no committed offsets`, `spec.target.fromGroup: source group "nobody" has no committed offsets`},
		{"a skip refused", []string{"--group", group, "--topic", topic, "--to", "latest", "--dry-run"}, nil, report.ExitRefused,
			"to skip them anyway set --allow-skip", "to skip them anyway set spec.limits.allowSkip"},
		{"over the limit", []string{"--group", group, "--topic", topic, "--to", "earliest", "--dry-run"}, map[string]string{config.EnvMaxMessagesToReconsume: "10"}, report.ExitRefused,
			"more than the 10 --max-messages-to-reconsume allows", "more than the 10 spec.limits.maxMessagesToReconsume allows"},
		{"configuration", []string{"--group", "other", "--to", "earliest"}, map[string]string{config.EnvWaitForEmpty: "-1s"}, report.ExitInvalidInput,
			"--wait-for-empty (REPLAY_WAIT_FOR_EMPTY): must not be negative", "spec.waitTimeout: must not be negative"},
	}
	for _, tc := range cases {
		for _, mode := range []config.FieldNames{config.FieldNamesFlags, config.FieldNamesSpec} {
			t.Run(tc.name+"/"+string(mode), func(t *testing.T) {
				want := tc.flags
				if mode == config.FieldNamesSpec {
					t.Setenv(config.EnvFieldNames, string(mode))
					want = tc.spec
				}
				for k, v := range tc.env {
					t.Setenv(k, v)
				}
				o := run(t, c, tc.args...).mustCode(t, tc.code)
				said := o.result.Error + "\n" + strings.Join(o.result.Warnings, "\n")
				if !strings.Contains(said, want) {
					t.Errorf("the result says %q, want %q", said, want)
				}
				if tc.code != report.ExitOK && !strings.Contains(o.termination.Error, want) {
					t.Errorf("the termination message says %q, want %q", o.termination.Error, want)
				}
				for what, text := range map[string]string{"result": o.resultRaw, "termination message": o.termRaw, "stdout": o.stdout, "stderr": o.stderr} {
					if strings.Contains(text, "\x1f") || strings.Contains(text, `\u001f`) {
						t.Errorf("%s has an unrendered setting reference:\n%s", what, text)
					}
					// The runner's own words; the test's flags never reach
					// the output (stderr's "starting" line quotes values only).
					if mode == config.FieldNamesSpec && (strings.Contains(text, "--topic") || strings.Contains(text, "--wait-for-empty") || strings.Contains(text, "--to")) {
						t.Errorf("%s names a flag under the launcher:\n%s", what, text)
					}
				}
			})
		}
	}
}
