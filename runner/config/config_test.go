package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafka-replay/kafka-replay/runner/report"
)

// envByField is the contract between Config's fields and the Env* constants.
var envByField = map[string]string{
	"BootstrapServers":        EnvBootstrapServers,
	"Group":                   EnvGroup,
	"Topics":                  EnvTopics,
	"To":                      EnvTo,
	"DryRun":                  EnvDryRun,
	"KafkaConfigDir":          EnvKafkaConfigDir,
	"KafkaSecretDir":          EnvKafkaSecretDir,
	"ResultFile":              EnvResultFile,
	"TerminationMessagePath":  EnvTerminationMessagePath,
	"RunID":                   EnvRunID,
	"WaitForEmpty":            EnvWaitForEmpty,
	"Output":                  EnvOutput,
	"Timeout":                 EnvTimeout,
	"EmitRecord":              EnvEmitRecord,
	"AllowUnsafeProperties":   EnvAllowUnsafeProperties,
	"AllowUnboundSecret":      EnvAllowUnboundSecret,
	"FieldNames":              EnvFieldNames,
	"MaxMessagesToReconsume":  EnvMaxMessagesToReconsume,
	"AllowSkip":               EnvAllowSkip,
	"Force":                   EnvForce,
	"FileDigest":              EnvFileDigest,
	"PropertiesDigest":        EnvPropertiesDigest,
	"CADigest":                EnvCADigest,
	"CommitMode":              EnvCommitMode,
	"ClusterID":               EnvClusterID,
	"GroupType":               EnvGroupType,
	"AllGroups":               EnvAllGroups,
	"ContinueOnError":         EnvContinueOnError,
	"DeleteAllInternalTopics": EnvDeleteAllInternalTopics,
}

// clearEnv unsets every variable Load could read, including the bare names
// envconfig would fall back to, and restores them when the test ends.
func clearEnv(t *testing.T) {
	t.Helper()
	for _, e := range envByField {
		for _, name := range []string{e, strings.TrimPrefix(e, EnvPrefix+"_")} {
			t.Setenv(name, "")
			if err := os.Unsetenv(name); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// base is the smallest valid set of flags.
var base = []string{"--bootstrap-servers", "localhost:9092", "--group", "g", "--to", "earliest"}

// args is base with extra flags; a flag in extra replaces base's, since a
// flag given twice is an error.
func args(extra ...string) []string {
	var out []string
	for i := 0; i < len(base); i += 2 {
		if !slices.Contains(extra, base[i]) {
			out = append(out, base[i], base[i+1])
		}
	}
	return append(out, extra...)
}

func load(t *testing.T, a ...string) (*Config, error) {
	t.Helper()
	var stderr bytes.Buffer
	c, err := Load(a, &stderr)
	return c, err
}

func mustLoad(t *testing.T, a ...string) *Config {
	t.Helper()
	c, err := load(t, a...)
	if err != nil {
		t.Fatalf("Load(%q): %v", a, err)
	}
	return c
}

func TestEnvTagsMatchConstants(t *testing.T) {
	typ := reflect.TypeOf(Config{})
	tagged := 0
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag, ok := f.Tag.Lookup("envconfig")
		if !ok {
			if f.Tag.Get("ignored") != "true" {
				t.Errorf("field %s has neither an envconfig tag nor ignored:\"true\"", f.Name)
			}
			continue
		}
		tagged++
		want, known := envByField[f.Name]
		if !known {
			t.Errorf("field %s (tag %q) has no Env* constant in this test's contract", f.Name, tag)
			continue
		}
		// The tag is the full name, so that envconfig's fallback lookup of the
		// bare tag is the same variable (see Config).
		if tag != want {
			t.Errorf("field %s: envconfig tag %q, want %q", f.Name, tag, want)
		}
		if !strings.HasPrefix(tag, EnvPrefix+"_") || strings.TrimPrefix(want, EnvPrefix+"_") != strings.TrimPrefix(tag, EnvPrefix+"_") {
			t.Errorf("field %s: tag %q is not %s_ + the name of %q", f.Name, tag, EnvPrefix, want)
		}
		if tag != strings.ToUpper(tag) {
			t.Errorf("field %s: tag %q is not upper case", f.Name, tag)
		}
	}
	if tagged != len(envByField) {
		t.Errorf("Config has %d envconfig fields, the contract names %d", tagged, len(envByField))
	}
	// Every variable but the termination path has a flag that overrides it.
	for field, env := range envByField {
		fl, ok := envFlags[env]
		if env == EnvTerminationMessagePath {
			if ok {
				t.Errorf("%s unexpectedly has a flag", env)
			}
			continue
		}
		if !ok {
			t.Errorf("%s (%s) has no flag in envFlags", env, field)
			continue
		}
		fs, _ := (&Config{}).flagSet(io.Discard)
		if fs.Lookup(fl) == nil {
			t.Errorf("envFlags maps %s to --%s, which is not defined", env, fl)
		}
	}
}

func TestLoadFromEnv(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	t.Setenv(EnvBootstrapServers, "k1:9092,k2:9093")
	t.Setenv(EnvGroup, "orders-consumer")
	t.Setenv(EnvTopics, "orders:0,1,2 payments")
	t.Setenv(EnvTo, "shift:-100")
	t.Setenv(EnvDryRun, "true")
	t.Setenv(EnvResultFile, filepath.Join(dir, "result.json"))
	t.Setenv(EnvTerminationMessagePath, filepath.Join(dir, "term"))
	t.Setenv(EnvRunID, "job-uid-123")
	t.Setenv(EnvWaitForEmpty, "30s")
	t.Setenv(EnvOutput, "json")
	t.Setenv(EnvGroupType, "Share")
	t.Setenv(EnvTimeout, "45s")
	t.Setenv(EnvFieldNames, "spec")
	c := mustLoad(t)
	want := Config{
		FieldNames:             FieldNamesSpec,
		BootstrapServers:       "k1:9092,k2:9093",
		Group:                  "orders-consumer",
		Topics:                 TopicList{"orders:0,1,2", "payments"},
		To:                     "shift:-100",
		DryRun:                 true,
		ResultFile:             filepath.Join(dir, "result.json"),
		TerminationMessagePath: filepath.Join(dir, "term"),
		RunID:                  "job-uid-123",
		WaitForEmpty:           30 * time.Second,
		Output:                 "json",
		Timeout:                45 * time.Second,
		CommitMode:             CommitModePlain,
		GroupType:              GroupTypeShare,
	}
	got := *c
	got.Target, got.Scope, got.KafkaProperties = Target{}, Scope{}, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load from env =\n%+v\nwant\n%+v", got, want)
	}
	if c.Target.Kind != KindShift || c.Target.Shift != -100 {
		t.Errorf("Target = %+v, want shift -100", c.Target)
	}
	if !reflect.DeepEqual(c.Scope.Topics, map[string][]int32{"orders": {0, 1, 2}, "payments": nil}) {
		t.Errorf("Scope = %v", c.Scope.Topics)
	}
}

func TestLoadDefaults(t *testing.T) {
	clearEnv(t)
	c := mustLoad(t, base...)
	if c.TerminationMessagePath != DefaultTerminationMessagePath {
		t.Errorf("TerminationMessagePath = %q, want %q", c.TerminationMessagePath, DefaultTerminationMessagePath)
	}
	if c.Output != OutputTable {
		t.Errorf("Output = %q, want %q", c.Output, OutputTable)
	}
	if c.Timeout != 2*time.Minute {
		t.Errorf("Timeout = %v, want 2m", c.Timeout)
	}
	if c.WaitForEmpty != 0 || c.DryRun || c.RunID != "" || !c.Scope.Empty() {
		t.Errorf("unexpected non-default values: %+v", c)
	}
}

func TestLoadIgnoresUnprefixedEnv(t *testing.T) {
	// Containers commonly carry variables such as OUTPUT or TIMEOUT; only
	// REPLAY_* may configure the runner.
	clearEnv(t)
	t.Setenv("GROUP", "leaked-group")
	t.Setenv("TO", "latest")
	t.Setenv("TOPICS", "leaked")
	t.Setenv("OUTPUT", "xml")
	t.Setenv("TIMEOUT", "1s")
	t.Setenv("DRY_RUN", "true")
	t.Setenv("RUN_ID", "leaked")
	t.Setenv("BOOTSTRAP_SERVERS", "leaked:1")
	c := mustLoad(t, base...)
	if c.Group != "g" || c.To != "earliest" || len(c.Topics) != 0 || c.Output != OutputTable ||
		c.Timeout != 2*time.Minute || c.DryRun || c.RunID != "" || c.BootstrapServers != "localhost:9092" {
		t.Errorf("unprefixed variables leaked into the config: %+v", c)
	}
}

func TestFlagsOverrideEnv(t *testing.T) {
	clearEnv(t)
	t.Setenv(EnvBootstrapServers, "env:1")
	t.Setenv(EnvGroup, "env-group")
	t.Setenv(EnvTo, "latest")
	t.Setenv(EnvTopics, "env-topic other-env-topic:1")
	t.Setenv(EnvOutput, "json")
	t.Setenv(EnvTimeout, "10s")
	t.Setenv(EnvWaitForEmpty, "5s")
	t.Setenv(EnvRunID, "env-run")
	t.Setenv(EnvDryRun, "true")
	c := mustLoad(t,
		"--bootstrap-servers", "flag:2",
		"--group", "flag-group",
		"--to", "offset:7",
		"--topic", "orders:0,1,2",
		"--topic", "payments",
		"--output", "table",
		"--timeout", "20s",
		"--wait-for-empty", "1m",
		"--run-id", "flag-run",
		"--dry-run=false",
	)
	if c.BootstrapServers != "flag:2" || c.Group != "flag-group" || c.To != "offset:7" || c.Output != "table" ||
		c.Timeout != 20*time.Second || c.WaitForEmpty != time.Minute || c.RunID != "flag-run" || c.DryRun {
		t.Errorf("flags did not win: %+v", c)
	}
	// --topic replaces REPLAY_TOPICS as a whole; it does not add to it.
	if want := (TopicList{"orders:0,1,2", "payments"}); !reflect.DeepEqual(c.Topics, want) {
		t.Errorf("Topics = %q, want %q", c.Topics, want)
	}
	if !reflect.DeepEqual(c.Scope.Topics, map[string][]int32{"orders": {0, 1, 2}, "payments": nil}) {
		t.Errorf("Scope = %v", c.Scope.Topics)
	}
	if c.Target.Kind != KindOffset || c.Target.Offset != 7 {
		t.Errorf("Target = %+v", c.Target)
	}
}

func TestEnvUsedWhenFlagAbsent(t *testing.T) {
	clearEnv(t)
	t.Setenv(EnvTopics, "  orders:0,1,2\tpayments\n ")
	c := mustLoad(t, base...)
	if want := (TopicList{"orders:0,1,2", "payments"}); !reflect.DeepEqual(c.Topics, want) {
		t.Errorf("REPLAY_TOPICS split into %q, want %q", c.Topics, want)
	}
}

func TestTargetAliases(t *testing.T) {
	clearEnv(t)
	file := writeFile(t, "o.json", `[{"topic":"orders","partition":0,"offset":3}]`)
	tests := []struct {
		flags  []string
		wantTo string
	}{
		{[]string{"--to-earliest"}, "earliest"},
		{[]string{"--to-latest"}, "latest"},
		{[]string{"--to-datetime", "2026-03-01T09:30:00Z"}, "time:2026-03-01T09:30:00Z"},
		{[]string{"--to-offset", "42"}, "offset:42"},
		{[]string{"--shift-by", "100"}, "shift:+100"},
		{[]string{"--shift-by", "+100"}, "shift:+100"},
		{[]string{"--shift-by", "-100"}, "shift:-100"},
		{[]string{"--by-duration", "PT2H"}, "ago:2h0m0s"},
		{[]string{"--by-duration", "P1DT2H30M"}, "ago:26h30m0s"},
		{[]string{"--by-duration", "PT1.5S"}, "ago:1.5s"},
		{[]string{"--by-duration", "pt10m"}, "ago:10m0s"},
		{[]string{"--by-duration", "90m"}, "ago:1h30m0s"},
		{[]string{"--from-file", file}, "file:" + file},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.flags, " "), func(t *testing.T) {
			c := mustLoad(t, append([]string{"--bootstrap-server", "alias:9092", "--group", "g"}, tt.flags...)...)
			if c.To != tt.wantTo {
				t.Errorf("To = %q, want %q", c.To, tt.wantTo)
			}
			if c.BootstrapServers != "alias:9092" {
				t.Errorf("--bootstrap-server did not set BootstrapServers: %q", c.BootstrapServers)
			}
			if want, err := ParseTarget(tt.wantTo); err != nil || c.Target.Kind != want.Kind {
				t.Errorf("Target = %+v, want kind of %q (%v)", c.Target, tt.wantTo, err)
			}
		})
	}
}

func TestAliasOverridesEnvTarget(t *testing.T) {
	clearEnv(t)
	t.Setenv(EnvTo, "earliest")
	c := mustLoad(t, "--bootstrap-servers", "k:1", "--group", "g", "--to-latest")
	if c.To != "latest" {
		t.Errorf("To = %q, want the alias flag to win over %s", c.To, EnvTo)
	}
	// An alias explicitly switched off is not a target.
	c = mustLoad(t, "--bootstrap-servers", "k:1", "--group", "g", "--to-earliest=false")
	if c.To != "earliest" {
		t.Errorf("To = %q after --to-earliest=false, want %s's value", c.To, EnvTo)
	}
}

func TestConflictingTargetFlags(t *testing.T) {
	clearEnv(t)
	for _, flags := range [][]string{
		{"--to", "earliest", "--to-latest"},
		{"--to-earliest", "--to-latest"},
		{"--to-offset", "1", "--shift-by", "5"},
		{"--by-duration", "PT1H", "--to-datetime", "2026-03-01T09:30:00Z"},
		{"--from-file", "/x.json", "--to", "latest"},
	} {
		_, err := load(t, append([]string{"--bootstrap-servers", "k:1", "--group", "g"}, flags...)...)
		var es Errors
		if !errors.As(err, &es) {
			t.Errorf("%q: err = %v, want Errors", flags, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "--to") || !strings.Contains(msg, "conflicting") {
			t.Errorf("%q: error %q does not name --to and the conflict", flags, msg)
		}
		for _, f := range flags {
			if strings.HasPrefix(f, "--") && !strings.Contains(msg, f) {
				t.Errorf("%q: error %q does not name %s", flags, msg, f)
			}
		}
	}
}

// TestRepeatedFlags: a single-value flag given twice, itself or through an
// alias, is refused naming both settings, instead of the last one winning.
func TestRepeatedFlags(t *testing.T) {
	clearEnv(t)
	tests := []struct {
		flags    []string
		flag     string   // the FieldError's flag
		mentions []string // each must appear in the message
	}{
		{[]string{"--to", "earliest", "--to", "latest"}, FlagTo, []string{`--to "earliest", --to "latest"`, "given more than once", "exactly one target"}},
		{[]string{"--to", "earliest", "--to-earliest"}, FlagTo, []string{`--to "earliest", --to-earliest`, "conflicting"}},
		{[]string{"--to-offset", "1", "--to-offset", "2"}, FlagTo, []string{`--to-offset "1", --to-offset "2"`}},
		{[]string{"--to-latest", "--to-latest"}, FlagTo, []string{"--to-latest, --to-latest"}},
		{[]string{"--to", "earliest", "--bootstrap-server", "b:1"}, FlagBootstrapServers, []string{`--bootstrap-servers "k:1", --bootstrap-server "b:1"`, "conflicting", "give it once"}},
		{[]string{"--to", "earliest", "--dry-run", "--dry-run=false"}, FlagDryRun, []string{`--dry-run, --dry-run "false"`}},
		{[]string{"--to", "earliest", "--timeout", "1m", "--timeout", "2m"}, FlagTimeout, []string{`--timeout "1m"`, `--timeout "2m"`}},
		{[]string{"--to", "earliest", "--run-id", "a", "--run-id", "b"}, FlagRunID, []string{`--run-id "a", --run-id "b"`}},
		{[]string{"--to", "earliest", "--output", "json", "--output", "table"}, FlagOutput, []string{`--output "json", --output "table"`}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.flags, " "), func(t *testing.T) {
			a := append([]string{"--bootstrap-servers", "k:1", "--group", "g"}, tt.flags...)
			_, err := load(t, a...)
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("%q: err = %v, want Errors", a, err)
			}
			var match *FieldError
			for _, e := range es {
				if e.Flag == tt.flag {
					match = e
				}
			}
			if match == nil {
				t.Fatalf("no error for --%s in %v", tt.flag, err)
			}
			for _, m := range tt.mentions {
				if !strings.Contains(match.Error(), m) {
					t.Errorf("error %q does not mention %s", match, m)
				}
			}
		})
	}
	// --topic is the one repeatable flag.
	c := mustLoad(t, args("--topic", "a", "--topic", "b:1")...)
	if !slices.Equal(c.Topics, TopicList{"a", "b:1"}) {
		t.Errorf("Topics = %q", c.Topics)
	}
}

// TestAliasErrorsNameTheAlias: an invalid value given through an alias is
// reported against the alias the user typed, not --to.
func TestAliasErrorsNameTheAlias(t *testing.T) {
	clearEnv(t)
	tests := []struct {
		flags    []string
		alias    string
		mentions []string
	}{
		{[]string{"--to-offset", "abc"}, FlagToOffset, []string{`"abc"`, "whole number"}},
		{[]string{"--to-offset", "-5"}, FlagToOffset, []string{`"-5"`, "≥ 0"}},
		{[]string{"--shift-by", "abc"}, FlagShiftBy, []string{`"abc" is not a whole number`}},
		{[]string{"--shift-by", "0"}, FlagShiftBy, []string{"must not be 0"}},
		{[]string{"--to-datetime", "2026-03-01T09:30:00"}, FlagToDatetime, []string{"zone"}},
		{[]string{"--to-datetime", "1772355630"}, FlagToDatetime, []string{"looks like Unix seconds"}},
		{[]string{"--by-duration", "soon"}, FlagByDuration, []string{`"soon"`}},
		{[]string{"--from-file", "/does/not/exist.json"}, FlagFromFile, []string{"no such file"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.flags, " "), func(t *testing.T) {
			_, err := load(t, append([]string{"--bootstrap-servers", "k:1", "--group", "g"}, tt.flags...)...)
			var es Errors
			if !errors.As(err, &es) || len(es) != 1 {
				t.Fatalf("err = %v, want one FieldError", err)
			}
			e := es[0]
			if e.Flag != tt.alias || !strings.HasPrefix(e.Error(), "--"+tt.alias+": ") {
				t.Errorf("error %q names --%s (%s), want --%s", e, e.Flag, e.Env, tt.alias)
			}
			if strings.Contains(e.Error(), "--to ") || strings.Contains(e.Error(), EnvTo) {
				t.Errorf("error %q names --to or %s, which the user did not type", e, EnvTo)
			}
			for _, m := range tt.mentions {
				if !strings.Contains(e.Error(), m) {
					t.Errorf("error %q does not mention %s", e, m)
				}
			}
		})
	}
}

func TestBadByDuration(t *testing.T) {
	clearEnv(t)
	for _, d := range []string{"P", "PT", "2 hours", "P1W", "PT-1H", "P200000D", "PT99999999999999H"} {
		_, err := load(t, "--bootstrap-servers", "k:1", "--group", "g", "--by-duration", d)
		if err == nil {
			t.Errorf("--by-duration %q accepted", d)
			continue
		}
		if !strings.Contains(err.Error(), "--by-duration") && !strings.Contains(err.Error(), "--to") {
			t.Errorf("--by-duration %q: error %q names neither --by-duration nor --to", d, err)
		}
	}
}

func TestParseAnyDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"PT2H":       2 * time.Hour,
		"P1D":        24 * time.Hour,
		"P1DT1M":     24*time.Hour + time.Minute,
		"PT0.25S":    250 * time.Millisecond,
		"1h2m3s":     time.Hour + 2*time.Minute + 3*time.Second,
		"P106751D":   106751 * 24 * time.Hour,
		"PT2562047H": 2562047 * time.Hour,
	} {
		got, err := parseAnyDuration(in)
		if err != nil || got != want {
			t.Errorf("parseAnyDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	// Past time.Duration's range an integer product would wrap around.
	for _, in := range []string{"P106752D", "P200000D", "PT2562048H", "PT9223372037S"} {
		if d, err := parseAnyDuration(in); err == nil {
			t.Errorf("parseAnyDuration(%q) = %v, want an out-of-range error", in, d)
		}
	}
}

// fieldErrorCase is one invalid configuration and the names its error must
// carry.
type fieldErrorCase struct {
	name    string
	env     map[string]string
	args    []string
	flag    string // without dashes
	envName string
	msg     string
}

func TestValidationErrorsNameFlagAndEnv(t *testing.T) {
	dir := t.TempDir()
	notDir := writeFile(t, "plain", "x")
	file := writeFile(t, "o.json", `[{"topic":"orders","partition":0,"offset":3}]`)
	tests := []fieldErrorCase{
		{name: "no bootstrap", args: []string{"--group", "g", "--to", "earliest"}, flag: FlagBootstrapServers, envName: EnvBootstrapServers, msg: "required"},
		{name: "bad bootstrap", args: []string{"--bootstrap-servers", "nohost", "--group", "g", "--to", "earliest"}, flag: FlagBootstrapServers, envName: EnvBootstrapServers, msg: "host:port"},
		{name: "no group", args: []string{"--bootstrap-servers", "k:1", "--to", "earliest"}, flag: FlagGroup, envName: EnvGroup, msg: "empty"},
		{name: "padded group", args: args("--group", " g"), flag: FlagGroup, envName: EnvGroup, msg: "spaces"},
		{name: "no target", args: []string{"--bootstrap-servers", "k:1", "--group", "g"}, flag: FlagTo, envName: EnvTo, msg: "required"},
		{name: "blank target", args: args("--to", "  "), flag: FlagTo, envName: EnvTo, msg: "required"},
		{name: "zoneless time", args: args("--to", "time:2026-03-01T09:30:00"), flag: FlagTo, envName: EnvTo, msg: "zone"},
		{name: "negative offset", args: args("--to", "offset:-1"), flag: FlagTo, envName: EnvTo, msg: "≥ 0"},
		{name: "same group", args: args("--to", "group:g"), flag: FlagTo, envName: EnvTo, msg: "group being repositioned"},
		{name: "bad topic", args: args("--topic", "a/b"), flag: FlagTopic, envName: EnvTopics, msg: "may contain only"},
		{name: "bad topic env", env: map[string]string{EnvTopics: "ok bad:x"}, args: base, flag: FlagTopic, envName: EnvTopics, msg: "whole number"},
		{name: "file with topics", args: []string{"--bootstrap-servers", "k:1", "--group", "g", "--to", "file:" + file, "--topic", "orders"}, flag: FlagTopic, envName: EnvTopics, msg: "conflicts"},
		{name: "bad output", args: args("--output", "yaml"), flag: FlagOutput, envName: EnvOutput, msg: `"yaml"`},
		{name: "negative wait", args: args("--wait-for-empty", "-1s"), flag: FlagWaitForEmpty, envName: EnvWaitForEmpty, msg: "negative"},
		{name: "zero timeout", args: args("--timeout", "0s"), flag: FlagTimeout, envName: EnvTimeout, msg: "positive"},
		{name: "bad run id", args: args("--run-id", "has space"), flag: FlagRunID, envName: EnvRunID, msg: "characters"},
		{name: "long run id", args: args("--run-id", strings.Repeat("r", MaxRunIDLength+1)), flag: FlagRunID, envName: EnvRunID, msg: "1-512"},
		{name: "unknown group type", args: args("--group-type", "share"), flag: FlagGroupType, envName: EnvGroupType, msg: "not one of Auto, Classic, Consumer, Share, Streams"},
		{name: "unknown group type env", env: map[string]string{EnvGroupType: "consumer"}, args: base, flag: FlagGroupType, envName: EnvGroupType, msg: `"consumer" is not one of`},
		{name: "unknown commit mode", args: args("--commit-mode", "atomic"), flag: FlagCommitMode, envName: EnvCommitMode, msg: "not one of Atomic, Plain, Auto"},
		{name: "result dir missing", args: args("--result-file", filepath.Join(dir, "nope", "r.json")), flag: FlagResultFile, envName: EnvResultFile, msg: "no such file"},
		{name: "result dir is file", args: args("--result-file", filepath.Join(notDir, "r.json")), flag: FlagResultFile, envName: EnvResultFile, msg: "not a directory"},
		{name: "config dir missing", args: args("--kafka-config-dir", filepath.Join(dir, "nope")), flag: FlagKafkaConfigDir, envName: EnvKafkaConfigDir, msg: "config directory"},
		{name: "env bad duration", env: map[string]string{EnvWaitForEmpty: "soon"}, args: base, flag: FlagWaitForEmpty, envName: EnvWaitForEmpty, msg: `"soon"`},
		{name: "env bad bool", env: map[string]string{EnvDryRun: "maybe"}, args: base, flag: FlagDryRun, envName: EnvDryRun, msg: `"maybe"`},
		{name: "env bad timeout", env: map[string]string{EnvTimeout: "forever"}, args: base, flag: FlagTimeout, envName: EnvTimeout, msg: `"forever"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			c, err := load(t, tt.args...)
			if err == nil {
				t.Fatalf("Load(%q) succeeded, want an error", tt.args)
			}
			if c == nil {
				t.Error("Load returned no Config with an input error; the runner needs it to report")
			}
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("err is %T (%v), want config.Errors", err, err)
			}
			if !IsInvalidInput(err) {
				t.Error("IsInvalidInput = false")
			}
			var match *FieldError
			for _, e := range es {
				if e.Flag == tt.flag {
					match = e
				}
			}
			if match == nil {
				t.Fatalf("no error for --%s in %v", tt.flag, err)
			}
			msg := match.Error()
			for _, w := range []string{"--" + tt.flag, tt.envName, tt.msg} {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			if match.Env != tt.envName {
				t.Errorf("FieldError.Env = %q, want %q", match.Env, tt.envName)
			}
			if strings.Contains(err.Error(), "REPLAY_REPLAY") {
				t.Errorf("error %q doubles the prefix", err)
			}
		})
	}
}

func TestMultipleErrorsTogether(t *testing.T) {
	clearEnv(t)
	_, err := load(t, "--to", "shift:0", "--output", "xml", "--timeout", "-1s")
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("err = %v, want Errors", err)
	}
	want := []string{FlagBootstrapServers, FlagGroup, FlagTo, FlagOutput, FlagTimeout}
	var got []string
	for _, e := range es {
		got = append(got, e.Flag)
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("no error for --%s among %v", w, got)
		}
		if !strings.Contains(err.Error(), "--"+w) {
			t.Errorf("combined message %q does not name --%s", err, w)
		}
	}
	if n := strings.Count(err.Error(), "; "); n != len(es)-1 {
		t.Errorf("combined message joins %d errors with %d separators: %q", len(es), n, err)
	}
}

func TestArgumentErrors(t *testing.T) {
	clearEnv(t)
	for _, a := range [][]string{args("--no-such-flag"), args("stray"), args("--timeout", "soon")} {
		_, err := load(t, a...)
		if err == nil {
			t.Errorf("Load(%q) succeeded", a)
			continue
		}
		if !IsInvalidInput(err) {
			t.Errorf("Load(%q): IsInvalidInput = false for %v", a, err)
		}
		if strings.HasPrefix(err.Error(), ":") || strings.HasPrefix(err.Error(), " ") {
			t.Errorf("Load(%q): error %q starts with a separator", a, err)
		}
	}
	_, err := load(t, args("stray")...)
	if err == nil || !strings.Contains(err.Error(), `"stray"`) {
		t.Errorf("stray argument error = %v, want it quoted", err)
	}
}

func TestFieldErrorFormat(t *testing.T) {
	for _, tc := range []struct {
		e    FieldError
		want string
	}{
		{FieldError{Flag: "group", Env: EnvGroup, Msg: "bad"}, "--group (REPLAY_GROUP): bad"},
		{FieldError{Flag: "by-duration", Msg: "bad"}, "--by-duration: bad"},
		{FieldError{Env: EnvTerminationMessagePath, Msg: "bad"}, "REPLAY_TERMINATION_MESSAGE_PATH: bad"},
		{FieldError{Msg: "bad"}, "bad"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v.Error() = %q, want %q", tc.e, got, tc.want)
		}
	}
	if IsInvalidInput(errors.New("plain")) || IsInvalidInput(nil) {
		t.Error("IsInvalidInput is true for a non-input error")
	}
	if !IsInvalidInput(fmt.Errorf("wrapped: %w", &FieldError{Msg: "x"})) {
		t.Error("IsInvalidInput is false for a wrapped FieldError")
	}
}

func TestHelp(t *testing.T) {
	clearEnv(t)
	var stderr bytes.Buffer
	c, err := Load([]string{"--help"}, &stderr)
	if !errors.Is(err, ErrHelp) || !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: err = %v, want ErrHelp", err)
	}
	if c != nil {
		t.Errorf("--help returned a Config: %+v", c)
	}
	usage := stderr.String()
	lines := strings.Split(usage, "\n")
	lineFor := func(flagName string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, "--"+flagName+" ") {
				return l
			}
		}
		return ""
	}
	flagEnv := map[string]string{}
	for env, fl := range envFlags {
		flagEnv[fl] = env
	}
	fs, _ := (&Config{}).flagSet(io.Discard)
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		l := lineFor(f.Name)
		if l == "" {
			t.Errorf("usage does not list --%s", f.Name)
			return
		}
		if env, ok := flagEnv[f.Name]; ok && !strings.Contains(l, env) {
			t.Errorf("usage line for --%s does not name %s: %q", f.Name, env, l)
		}
	})
	if n < len(envFlags) {
		t.Errorf("only %d flags defined", n)
	}
	for env := range envFlags {
		if !strings.Contains(usage, env) {
			t.Errorf("usage does not mention %s", env)
		}
	}
	if !strings.Contains(usage, EnvTerminationMessagePath) || !strings.Contains(usage, DefaultTerminationMessagePath) {
		t.Errorf("usage does not explain %s and its default", EnvTerminationMessagePath)
	}
	if !strings.Contains(usage, "Exit codes") {
		t.Fatal("usage has no exit codes")
	}
	for code := report.ExitOK; code <= report.ExitInterrupted; code++ {
		if !strings.Contains(usage, fmt.Sprintf("\n  %d  ", code)) {
			t.Errorf("usage does not explain exit code %d", code)
		}
	}
}

// secretDir lays out dir the way the kubelet mounts a Secret volume: the
// files live in a timestamped directory, ..data points at it, and each
// visible name is a symlink through ..data.
func secretDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "..2026_11_30_10_00_00.123456789")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(data, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Base(data), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const testPEM = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n-----END PRIVATE KEY-----\n"

func TestLoadPropertiesSecretVolume(t *testing.T) {
	dir := secretDir(t, map[string]string{
		"sasl.password":     "s3cret-canary\n",
		"sasl.username":     "alice\r\n",
		"security.protocol": "SASL_SSL",
		"ssl.key.pem":       testPEM,
	})
	props, err := LoadProperties(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := Properties{
		"sasl.password":     "s3cret-canary",
		"sasl.username":     "alice",
		"security.protocol": "SASL_SSL",
		"ssl.key.pem":       testPEM, // PEM keeps its newline
	}
	if !reflect.DeepEqual(props, want) {
		t.Errorf("LoadProperties = %q, want %q", props, want)
	}
	if got := props.Names(); !reflect.DeepEqual(got, []string{"sasl.password", "sasl.username", "security.protocol", "ssl.key.pem"}) {
		t.Errorf("Names() = %v", got)
	}
}

func TestLoadPropertiesThroughConfig(t *testing.T) {
	clearEnv(t)
	dir := secretDir(t, map[string]string{"sasl.mechanism": "SCRAM-SHA-512"})
	t.Setenv(EnvKafkaConfigDir, dir)
	c := mustLoad(t, base...)
	if c.KafkaProperties["sasl.mechanism"] != "SCRAM-SHA-512" {
		t.Errorf("KafkaProperties = %v", c.KafkaProperties)
	}
}

func TestLoadPropertiesRejects(t *testing.T) {
	const canary = "CANARY-b1f0e3d2-value"
	tests := []struct {
		name string
		file string
		want string
	}{
		{"broker list", "metadata.broker.list", "--bootstrap-servers"},
		{"group", "group.id", "--group"},
		{"upper case", "SASL.PASSWORD", "not a librdkafka property name"},
		{"dash", "sasl-password", "not a librdkafka property name"},
		{"leading digit", "1sasl.password", "not a librdkafka property name"},
		{"space", "sasl password", "not a librdkafka property name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := secretDir(t, map[string]string{tt.file: canary, "sasl.mechanism": "PLAIN"})
			_, err := LoadProperties(dir)
			if err == nil {
				t.Fatalf("a config directory with %q was accepted", tt.file)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.file) {
				t.Errorf("error %q should name %q and say %q", err, tt.file, tt.want)
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("error %q contains the file's content", err)
			}
		})
	}
}

func TestLoadPropertiesErrorsNeverShowContent(t *testing.T) {
	const canary = "CANARY-7d1c-secret"
	// Through Load, with every kind of failure the directory can produce.
	dirs := map[string]func(t *testing.T) string{
		"reserved": func(t *testing.T) string { return secretDir(t, map[string]string{"group.id": canary}) },
		"bad name": func(t *testing.T) string { return secretDir(t, map[string]string{"Bad_Name": canary}) },
		"too big": func(t *testing.T) string {
			return secretDir(t, map[string]string{"sasl.password": canary + strings.Repeat("x", MaxPropertyBytes)})
		},
		"dangling link": func(t *testing.T) string {
			dir := secretDir(t, map[string]string{"sasl.username": canary})
			if err := os.Symlink("..data/missing", filepath.Join(dir, "sasl.password")); err != nil {
				t.Fatal(err)
			}
			return dir
		},
	}
	for name, mk := range dirs {
		t.Run(name, func(t *testing.T) {
			clearEnv(t)
			_, err := load(t, args("--kafka-config-dir", mk(t))...)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), "--kafka-config-dir") || !strings.Contains(err.Error(), EnvKafkaConfigDir) {
				t.Errorf("error %q does not name the flag and variable", err)
			}
			if strings.Contains(err.Error(), canary) || strings.Contains(err.Error(), "CANARY") {
				t.Errorf("error %q leaks a property value", err)
			}
		})
	}
}

// TestLoadPropertiesSkipsOnlyTheKubeletsEntries: the kubelet's ..data,
// ..data_tmp and timestamped directory are bookkeeping; any other dot file
// is a key someone put in the Secret and is refused by name, not ignored.
func TestLoadPropertiesSkipsOnlyTheKubeletsEntries(t *testing.T) {
	dir := secretDir(t, map[string]string{"client.id": "replay\n\n"})
	if err := os.Symlink("..2026_11_30_10_00_00.123456789", filepath.Join(dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "subdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	props, err := LoadProperties(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(props, Properties{"client.id": "replay"}) {
		t.Errorf("props = %q", props)
	}
	for _, name := range []string{".hidden", ".sasl.password", "..hidden", "...", "..data2", "..2026_11_30"} {
		t.Run(name, func(t *testing.T) {
			d := secretDir(t, map[string]string{"client.id": "replay"})
			if err := os.WriteFile(filepath.Join(d, name), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadProperties(d)
			if err == nil || !strings.Contains(err.Error(), strconv.Quote(name)) {
				t.Errorf("a directory with %s: err = %v, want it refused by name", name, err)
			}
		})
	}
}

// TestUnsafePropertiesRefused: properties that run programs or load code
// are refused naming the property, unless the operator allows each by name.
func TestUnsafePropertiesRefused(t *testing.T) {
	clearEnv(t)
	const canary = "CANARY-touch-/tmp/pwned"
	for _, name := range UnsafePropertyNames() {
		t.Run(name, func(t *testing.T) {
			dir := secretDir(t, map[string]string{name: canary, "sasl.mechanism": "GSSAPI"})
			_, err := load(t, args("--kafka-config-dir", dir)...)
			if !IsInvalidInput(err) {
				t.Fatalf("err = %v, want an input error", err)
			}
			for _, w := range []string{"--" + FlagKafkaConfigDir, name, "--" + FlagAllowUnsafeProperties} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %s", err, w)
				}
			}
			if strings.Contains(err.Error(), "CANARY") {
				t.Errorf("error %q shows the value", err)
			}
			// Allowed by name, through the flag or the variable.
			c := mustLoad(t, args("--kafka-config-dir", dir, "--"+FlagAllowUnsafeProperties, name)...)
			if c.KafkaProperties[name] != canary {
				t.Errorf("allowed %s not loaded: %v", name, c.KafkaProperties.Names())
			}
			t.Setenv(EnvAllowUnsafeProperties, "ssl.providers, "+name)
			mustLoad(t, args("--kafka-config-dir", dir)...)
		})
	}
	// Allowing one does not allow another.
	dir := secretDir(t, map[string]string{"sasl.kerberos.keytab": "/k", "plugin.library.paths": "/x.so"})
	_, err := load(t, args("--kafka-config-dir", dir, "--"+FlagAllowUnsafeProperties, "sasl.kerberos.keytab")...)
	if err == nil || !strings.Contains(err.Error(), "plugin.library.paths") || strings.Contains(err.Error(), "sasl.kerberos.keytab ") {
		t.Errorf("err = %v, want only plugin.library.paths refused", err)
	}
	// A name that needs no allowing is a mistake, not a no-op.
	_, err = load(t, args("--"+FlagAllowUnsafeProperties, "sasl.kerberos.kinit.command")...)
	if err == nil || !strings.Contains(err.Error(), "--"+FlagAllowUnsafeProperties) || !strings.Contains(err.Error(), "sasl.kerberos.kinit.cmd") {
		t.Errorf("err = %v, want the unknown name refused with the list", err)
	}
}

// TestGoClientPropertiesReserved: confluent-kafka-go's go.* settings are
// refused by name (the runner's librdkafka client takes none of them).
func TestGoClientPropertiesReserved(t *testing.T) {
	for _, name := range []string{"go.logs.channel.enable", "go.events.channel.size"} {
		_, err := LoadProperties(secretDir(t, map[string]string{name: "false"}))
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v, want it refused by name", name, err)
		}
	}
}

func TestIsSensitive(t *testing.T) {
	for _, n := range []string{"sasl.password", "ssl.key.password", "ssl.key.pem", "sasl.oauthbearer.client.secret", "sasl.oauthbearer.config", "sasl.jaas.config", "ssl.keystore.password"} {
		if !IsSensitive(n) {
			t.Errorf("IsSensitive(%q) = false", n)
		}
	}
	for _, n := range []string{"security.protocol", "sasl.mechanism", "sasl.username", "client.id", "bootstrap.servers"} {
		if IsSensitive(n) {
			t.Errorf("IsSensitive(%q) = true", n)
		}
	}
}

func TestRedactor(t *testing.T) {
	props := Properties{
		"sasl.password":     "hunter2-is-long",
		"ssl.key.pem":       testPEM,
		"security.protocol": "SASL_SSL",
		"ssl.key.password":  "abc", // too short to redact safely
	}
	r := props.Redactor()
	pemLines := strings.Split(strings.TrimSpace(testPEM), "\n")
	tests := []struct {
		in       string
		gone     []string
		kept     []string
		redacted bool
	}{
		{"auth failed for password hunter2-is-long at broker", []string{"hunter2-is-long"}, []string{"auth failed", "at broker"}, true},
		{"hunter2-is-long", []string{"hunter2-is-long"}, nil, true},
		{"twice: hunter2-is-long and hunter2-is-long", []string{"hunter2-is-long"}, []string{"twice"}, true},
		{"key: " + testPEM, []string{pemLines[1], pemLines[2]}, []string{"key: "}, true},
		{"ssl: cannot parse line " + pemLines[2] + " of the key", []string{pemLines[2]}, []string{"cannot parse line", "of the key"}, true},
		{"protocol SASL_SSL is fine", nil, []string{"SASL_SSL"}, false},
		{"abc and abcdef stay", nil, []string{"abc and abcdef stay"}, false},
		{"", nil, nil, false},
	}
	for _, tt := range tests {
		got := r.Redact(tt.in)
		for _, g := range tt.gone {
			if strings.Contains(got, g) {
				t.Errorf("Redact(%q) = %q still contains %q", tt.in, got, g)
			}
		}
		for _, k := range tt.kept {
			if !strings.Contains(got, k) {
				t.Errorf("Redact(%q) = %q lost %q", tt.in, got, k)
			}
		}
		if tt.redacted != strings.Contains(got, "[redacted]") {
			t.Errorf("Redact(%q) = %q; redaction marker expected: %v", tt.in, got, tt.redacted)
		}
	}
	var nilR *Redactor
	if nilR.Redact("hunter2-is-long") != "hunter2-is-long" {
		t.Error("a nil Redactor changed its input")
	}
	if (Properties(nil)).Redactor().Redact("anything at all") != "anything at all" {
		t.Error("an empty Redactor changed its input")
	}
}

func TestRedactorEscapedForms(t *testing.T) {
	// output.go redacts the JSON result and slog quotes values, so a secret
	// with characters that need escaping must be caught in those spellings.
	const secret = `p<a&ss"w\rd>1`
	r := Properties{"sasl.password": secret}.Redactor()
	js, err := json.Marshal(map[string]string{"error": "login with " + secret + " failed"})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{
		string(js),
		fmt.Sprintf("error=%q", "login with "+secret+" failed"),
		"raw " + secret,
	} {
		got := r.Redact(text)
		if !strings.Contains(got, "[redacted]") {
			t.Errorf("Redact(%s) = %s: secret not found", text, got)
		}
		// Decoding the JSON must not give the secret back either.
		var m map[string]string
		if json.Unmarshal([]byte(got), &m) == nil && strings.Contains(m["error"], secret) {
			t.Errorf("decoded redacted JSON still contains the secret: %q", m["error"])
		}
		if strings.Contains(got, `p<a&ss`) || strings.Contains(got, `p\u003ca\u0026ss`) {
			t.Errorf("Redact(%s) = %s leaks part of the secret", text, got)
		}
	}
	// The multi-line PEM inside JSON: newlines are escaped as \n.
	pr := Properties{"ssl.key.pem": testPEM}.Redactor()
	js, err = json.Marshal(map[string]string{"k": testPEM})
	if err != nil {
		t.Fatal(err)
	}
	got := pr.Redact(string(js))
	for _, l := range strings.Split(strings.TrimSpace(testPEM), "\n") {
		if strings.Contains(got, l) {
			t.Errorf("redacted JSON %s still contains PEM line %q", got, l)
		}
	}
}

func TestValidateBootstrapServers(t *testing.T) {
	for _, ok := range []string{"k:9092", "k1:9092, k2:9093", "SSL://k:9093", "[::1]:9092", "10.0.0.1:1"} {
		if err := ValidateBootstrapServers(ok); err != nil {
			t.Errorf("ValidateBootstrapServers(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", " ", "k", ":9092", "k:", "k:0", "k:65536", "k:port", "k:9092,", "[::1:9092", "a b:9092", "a/b:1"} {
		if err := ValidateBootstrapServers(bad); err == nil {
			t.Errorf("ValidateBootstrapServers(%q) = nil, want an error", bad)
		}
	}
}

// TestDurationSumsSaturate: --timeout and --wait-for-empty may each be as
// long as a duration goes; their sums saturate instead of wrapping around
// to a negative duration, a deadline already passed.
func TestDurationSumsSaturate(t *testing.T) {
	const longest = time.Duration(math.MaxInt64)
	for _, tc := range []struct{ a, b, want time.Duration }{
		{0, 0, 0},
		{time.Minute, time.Hour, time.Hour + time.Minute},
		{longest, 0, longest},
		{0, longest, longest},
		{longest, 1, longest},
		{longest - time.Second, time.Second, longest},
		{longest - time.Second, 2 * time.Second, longest},
		{longest, longest, longest},
	} {
		if got := AddDurations(tc.a, tc.b); got != tc.want {
			t.Errorf("AddDurations(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if got := CommitBound(longest / 2); got != longest-1 {
		t.Errorf("CommitBound(longest/2) = %d", got)
	}
	if got := CommitBound(longest/2 + 1); got != longest {
		t.Errorf("CommitBound(longest/2+1) = %d, want the longest duration", got)
	}
	if got := CommitBound(2 * time.Minute); got != 4*time.Minute {
		t.Errorf("CommitBound(2m) = %s", got)
	}
}
