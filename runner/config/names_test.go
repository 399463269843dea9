package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every setting is in the one mapping, once; every setting a ReplayRequest
// field sets has that field's name.
func TestSettingsMapping(t *testing.T) {
	seenFlag, seenEnv := map[string]bool{}, map[string]bool{}
	for _, s := range settings {
		if seenFlag[s.Flag] || seenEnv[s.Env] {
			t.Errorf("%+v is in the mapping twice", s)
		}
		seenFlag[s.Flag], seenEnv[s.Env] = true, true
	}
	for _, env := range envByField {
		if env != EnvTerminationMessagePath && !seenEnv[env] {
			t.Errorf("%s is not in the mapping", env)
		}
	}
	// The fields launcher/internal/runnerjob sets from the request.
	for _, flag := range []string{FlagBootstrapServers, FlagGroup, FlagTopic, FlagTo, FlagDryRun, FlagKafkaConfigDir, FlagKafkaSecretDir, FlagWaitForEmpty, FlagMaxMessagesToReconsume, FlagAllowSkip, FlagForce} {
		if got := FieldNamesSpec.Name(flag); !strings.HasPrefix(got, "spec.") {
			t.Errorf("spec name of --%s = %q, want a spec field", flag, got)
		}
	}
}

func TestFieldNamesName(t *testing.T) {
	tests := []struct {
		name        string
		flags, spec string
	}{
		{FlagTopic, "--topic", "spec.topics"},
		{FlagBootstrapServers, "--bootstrap-servers", "spec.kafka.bootstrapServers"},
		{FlagWaitForEmpty, "--wait-for-empty", "spec.waitTimeout"},
		{FlagRunID, "--run-id", EnvRunID}, // the launcher's, not the request's
		{RefWait, "--wait-for-empty", "spec.whenGroupActive: Wait (with a spec.waitTimeout)"},
		{RefCredentials, "--kafka-secret-dir", "spec.kafka.secretRef"},
		{RefOffsetsFile, "--to file:", "spec.target.offsets"},
		{RefFromGroup, "--to", "spec.target.fromGroup"},
		{RefShift, "--to", "spec.target.shiftBy"},
		{RefUndo, "--to undo:", "spec.target.undoOf"},
		{RefPlan, "--to plan:", "status.plan (the approved plan)"},
		{FlagMaxMessagesToReconsume, "--max-messages-to-reconsume", "spec.limits.maxMessagesToReconsume"},
		{FlagAllowSkip, "--allow-skip", "spec.limits.allowSkip"},
		{FlagForce, "--force", "spec.force"},
		{FlagFileDigest, "--file-digest", EnvFileDigest}, // the launcher's
	}
	for _, tt := range tests {
		if got := FieldNamesFlags.Name(tt.name); got != tt.flags {
			t.Errorf("flags name of %q = %q, want %q", tt.name, got, tt.flags)
		}
		if got := FieldNamesSpec.Name(tt.name); got != tt.spec {
			t.Errorf("spec name of %q = %q, want %q", tt.name, got, tt.spec)
		}
		s := "stop them, or use " + Ref(tt.name) + "."
		if got, want := FieldNamesSpec.Expand(s), "stop them, or use "+tt.spec+"."; got != want {
			t.Errorf("Expand(%q) = %q, want %q", s, got, want)
		}
	}
}

// A runbook Job's user wrote the chart's values, not flags: the runner's
// hints name the runbook value (issue 32, friction 8: runbook users were
// told to set --allow-skip, whose value is allowSkip); a setting the chart
// sets itself is named by its variable, never by a flag.
func TestFieldNamesRunbook(t *testing.T) {
	if n, err := ParseFieldNames("runbook"); err != nil || n != FieldNamesRunbook {
		t.Fatalf("ParseFieldNames(runbook) = %q, %v", n, err)
	}
	for name, want := range map[string]string{
		FlagAllowSkip:              "runbooks[].allowSkip",
		FlagMaxMessagesToReconsume: "runbooks[].maxMessagesToReconsume",
		FlagWaitForEmpty:           "runbooks[].waitForEmpty",
		RefWait:                    "runbooks[].waitForEmpty",
		RefCredentials:             "runbooks[].kafka.secretRef",
		FlagBootstrapServers:       "runbooks[].kafka.bootstrapServers",
		FlagTo:                     "runbooks[].target",
		FlagCommitMode:             "runbooks[].commitMode",
		FlagRunID:                  EnvRunID,
		FlagTimeout:                EnvTimeout,
	} {
		if got := FieldNamesRunbook.Name(name); got != want {
			t.Errorf("runbook name of %q = %q, want %q", name, got, want)
		}
	}
	// Every runbook value named is one the chart's schema has.
	schema, err := os.ReadFile(filepath.Join("..", "..", "charts", "kafka-replay", "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range Settings() {
		if s.Runbook == "" {
			continue
		}
		key := strings.TrimPrefix(s.Runbook, "runbooks[].")
		key = key[strings.LastIndexByte(key, '.')+1:]
		if !strings.Contains(string(schema), `"`+key+`"`) {
			t.Errorf("%s: the chart's values schema has no %q", s.Runbook, key)
		}
	}
	msg := "to skip them anyway set " + Ref(FlagAllowSkip)
	if got := FieldNamesRunbook.Expand(msg); got != "to skip them anyway set runbooks[].allowSkip" {
		t.Errorf("Expand = %q", got)
	}
}

// Load's errors speak in the names the runner was started with: a shell
// user's flags, or a ReplayRequest's fields under the launcher.
func TestLoadErrorsInFieldNames(t *testing.T) {
	dir := t.TempDir()
	reserved := filepath.Join(dir, "reserved")
	unsafe := filepath.Join(dir, "unsafe")
	for d, prop := range map[string]string{reserved: "group.id", unsafe: "plugin.library.paths"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, prop), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name        string
		env         map[string]string
		args        []string
		flags, spec string
	}{
		{"bootstrap", nil, []string{"--bootstrap-servers", "kafka"},
			`--bootstrap-servers (REPLAY_BOOTSTRAP_SERVERS): "kafka" is not host:port`,
			`spec.kafka.bootstrapServers: "kafka" is not host:port`},
		{"reserved property and its hint", map[string]string{EnvKafkaConfigDir: reserved}, nil,
			`--kafka-config-dir (REPLAY_KAFKA_CONFIG_DIR): property group.id must not be set in the config directory: use --group`,
			`spec.kafka.configMapRef: property group.id must not be set in the config directory: use spec.group`},
		{"unsafe property, the operator's setting", map[string]string{EnvKafkaConfigDir: unsafe}, nil,
			`an operator can allow a property by name with --allow-unsafe-properties`,
			`an operator can allow a property by name with REPLAY_ALLOW_UNSAFE_PROPERTIES`},
		{"wait", map[string]string{EnvWaitForEmpty: "-1s"}, nil,
			`--wait-for-empty (REPLAY_WAIT_FOR_EMPTY): must not be negative`,
			`spec.waitTimeout: must not be negative`},
		{"a setting of the launcher's", map[string]string{EnvTimeout: "0s"}, nil,
			`--timeout (REPLAY_TIMEOUT): must be positive`,
			`REPLAY_TIMEOUT: must be positive`},
		{"unparsable variable", map[string]string{EnvDryRun: "maybe"}, nil,
			`--dry-run (REPLAY_DRY_RUN): "maybe" is not a valid bool`,
			`spec.dryRun: "maybe" is not a valid bool`},
		{"target", map[string]string{EnvTo: "sometime"}, nil,
			`--to (REPLAY_TO): `,
			`spec.target: `},
	}
	for _, tt := range tests {
		for _, mode := range []FieldNames{"", FieldNamesFlags, FieldNamesSpec} {
			want := tt.flags
			if mode == FieldNamesSpec {
				want = tt.spec
			}
			t.Run(tt.name+"/"+string(mode), func(t *testing.T) {
				clearEnv(t)
				t.Setenv(EnvBootstrapServers, "k:9092")
				t.Setenv(EnvGroup, "g")
				t.Setenv(EnvTo, "earliest")
				if mode != "" {
					t.Setenv(EnvFieldNames, string(mode))
				}
				for k, v := range tt.env {
					t.Setenv(k, v)
				}
				_, err := load(t, tt.args...)
				if err == nil {
					t.Fatal("no error")
				}
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
				if strings.Contains(err.Error(), refMark) {
					t.Errorf("error %q has an unrendered reference", err)
				}
				if mode == FieldNamesSpec && strings.Contains(err.Error(), "--") {
					t.Errorf("error %q names a flag under the launcher", err)
				}
			})
		}
	}
}

func TestFieldNamesSetting(t *testing.T) {
	clearEnv(t)
	c := mustLoad(t, "--bootstrap-servers", "k:9092", "--group", "g", "--to", "earliest", "--field-names", "spec")
	if c.FieldNames != FieldNamesSpec {
		t.Errorf("--field-names spec: FieldNames = %q", c.FieldNames)
	}
	if c := mustLoad(t, "--bootstrap-servers", "k:9092", "--group", "g", "--to", "earliest"); c.FieldNames != FieldNamesFlags {
		t.Errorf("default FieldNames = %q, want flags", c.FieldNames)
	}
	t.Setenv(EnvFieldNames, "yaml")
	_, err := load(t, "--bootstrap-servers", "k:9092", "--group", "g", "--to", "earliest")
	if err == nil || !strings.Contains(err.Error(), `--field-names (REPLAY_FIELD_NAMES): "yaml" is not one of flags, spec`) {
		t.Errorf("REPLAY_FIELD_NAMES=yaml: %v", err)
	}
}
