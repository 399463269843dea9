package config

import (
	"fmt"
	"strings"
)

// FieldNames says in whose terms the runner names its settings in errors,
// hints and warnings: a shell user typed flags, a ReplayRequest user wrote
// spec fields and never sees the runner's flags. The launcher sets
// REPLAY_FIELD_NAMES=spec on the Jobs it builds from a request.
type FieldNames string

const (
	// FieldNamesFlags names the flags (and environment variables), as
	// typed on a shell: --topic (REPLAY_TOPICS). The default.
	FieldNamesFlags FieldNames = "flags"
	// FieldNamesSpec names the ReplayRequest fields the launcher set the
	// runner's configuration from: spec.topics. A setting the launcher sets
	// itself, not from the request, is named by its environment variable.
	FieldNamesSpec FieldNames = "spec"
)

// Setting is one configuration setting under each of its names. The
// launcher builds a runner Job from a request by these names (launcher/job.go).
type Setting struct {
	// Flag is the runner's flag, without dashes.
	Flag string
	// Env is the environment variable; empty for a name that only appears
	// in hints (see the Ref* constants).
	Env string
	// Spec is the ReplayRequest field it comes from under the launcher;
	// empty if the launcher sets it itself.
	Spec string
}

// References that are not settings of their own but parts of one, named
// differently in a request: a hint names the field the user has to change.
const (
	// RefCredentials is where the credentials come from.
	RefCredentials = "kafka-secret-dir credentials"
	// RefWait is how to wait for an active group to empty.
	RefWait = "wait-for-empty hint"
	// RefOffsetsFile is the explicit offsets target (file: on a shell).
	RefOffsetsFile = "to file:"
	// RefFromGroup is the copy-from-another-group target.
	RefFromGroup = "to group:"
	// RefShift is the shift target.
	RefShift = "to shift:"
	// RefPlan is the target that applies an approved plan (plan: on a
	// shell); the launcher sets it from the request's approved plan.
	RefPlan = "to plan:"
	// RefUndo is the target that undoes an earlier run (undo: on a shell).
	RefUndo = "to undo:"
)

// settings is the one mapping of every setting, and of the references
// above, to its names. The Env* and Flag* constants are the names; this
// table says which belong together.
var settings = []Setting{
	{Flag: FlagBootstrapServers, Env: EnvBootstrapServers, Spec: "spec.kafka.bootstrapServers"},
	{Flag: FlagGroup, Env: EnvGroup, Spec: "spec.group"},
	{Flag: FlagTopic, Env: EnvTopics, Spec: "spec.topics"},
	{Flag: FlagTo, Env: EnvTo, Spec: "spec.target"},
	{Flag: FlagDryRun, Env: EnvDryRun, Spec: "spec.dryRun"},
	// The request's ConfigMap and Secret, mounted apart: only the Secret's
	// directory may bind the credentials (credentials.go).
	{Flag: FlagKafkaConfigDir, Env: EnvKafkaConfigDir, Spec: "spec.kafka.configMapRef"},
	{Flag: FlagKafkaSecretDir, Env: EnvKafkaSecretDir, Spec: "spec.kafka.secretRef"},
	{Flag: FlagResultFile, Env: EnvResultFile},
	{Flag: FlagRunID, Env: EnvRunID},
	{Flag: FlagWaitForEmpty, Env: EnvWaitForEmpty, Spec: "spec.waitTimeout"},
	{Flag: FlagOutput, Env: EnvOutput},
	{Flag: FlagTimeout, Env: EnvTimeout},
	{Flag: FlagEmitRecord, Env: EnvEmitRecord},
	{Flag: FlagAllowUnsafeProperties, Env: EnvAllowUnsafeProperties},
	{Flag: FlagAllowUnboundSecret, Env: EnvAllowUnboundSecret},
	{Flag: FlagFieldNames, Env: EnvFieldNames},
	{Flag: FlagMaxMessagesToReconsume, Env: EnvMaxMessagesToReconsume, Spec: "spec.limits.maxMessagesToReconsume"},
	{Flag: FlagAllowSkip, Env: EnvAllowSkip, Spec: "spec.limits.allowSkip"},
	{Flag: FlagForce, Env: EnvForce, Spec: "spec.force"},
	// The launcher's, for the plan: and undo: files it writes.
	{Flag: FlagFileDigest, Env: EnvFileDigest},
	{Flag: FlagCommitMode, Env: EnvCommitMode, Spec: "spec.commitMode"},
}

// refs are the hint-only references: Flag is how a shell user says it.
var refs = map[string]Setting{
	RefCredentials: {Flag: FlagKafkaSecretDir, Spec: "spec.kafka.secretRef"},
	RefWait:        {Flag: FlagWaitForEmpty, Spec: "spec.whenGroupActive: Wait (with a spec.waitTimeout)"},
	RefOffsetsFile: {Flag: FlagTo + " file:", Spec: "spec.target.offsets"},
	RefFromGroup:   {Flag: FlagTo, Spec: "spec.target.fromGroup"},
	RefShift:       {Flag: FlagTo, Spec: "spec.target.shiftBy"},
	RefPlan:        {Flag: FlagTo + " plan:", Spec: "status.plan (the approved plan)"},
	RefUndo:        {Flag: FlagTo + " undo:", Spec: "spec.target.undoOf"},
}

// Settings returns the mapping of every setting to its names.
func Settings() []Setting { return append([]Setting(nil), settings...) }

// settingOf finds a setting or reference by its flag or Ref* name.
func settingOf(name string) (Setting, bool) {
	if s, ok := refs[name]; ok {
		return s, true
	}
	for _, s := range settings {
		if s.Flag == name {
			return s, true
		}
	}
	return Setting{}, false
}

// ParseFieldNames checks a REPLAY_FIELD_NAMES value; empty is flags.
func ParseFieldNames(s string) (FieldNames, error) {
	switch FieldNames(s) {
	case "", FieldNamesFlags:
		return FieldNamesFlags, nil
	case FieldNamesSpec:
		return FieldNamesSpec, nil
	}
	return FieldNamesFlags, fmt.Errorf("%q is not one of %s, %s", s, FieldNamesFlags, FieldNamesSpec)
}

// Name is how n names a setting (a Flag* constant) or reference (a Ref*
// constant) inside a sentence: --topic, or spec.topics.
func (n FieldNames) Name(name string) string {
	s, ok := settingOf(name)
	if !ok {
		return "--" + name
	}
	if n == FieldNamesSpec {
		if s.Spec != "" {
			return s.Spec
		}
		if s.Env != "" {
			return s.Env // set by the launcher, not by the request
		}
	}
	return "--" + s.Flag
}

// refMark delimits a reference in text that is rendered later, in the
// names the run was started with. The unit separator never appears in
// anything a user can give the runner unquoted (names are validated, values
// are quoted with %q, which escapes it).
const refMark = "\x1f"

// Ref stands for a setting (a Flag* constant) or reference (a Ref*
// constant) in a message whose audience is known only when it is written:
// errors built deep in the run, wrapped on the way out. Expand renders it.
func Ref(name string) string { return refMark + name + refMark }

// Expand renders every Ref in s in n's names.
func (n FieldNames) Expand(s string) string {
	if !strings.Contains(s, refMark) {
		return s
	}
	return n.replacer().Replace(s)
}

func (n FieldNames) replacer() *strings.Replacer {
	var pairs []string
	for _, s := range settings {
		pairs = append(pairs, Ref(s.Flag), n.Name(s.Flag))
	}
	for name := range refs {
		pairs = append(pairs, Ref(name), n.Name(name))
	}
	return strings.NewReplacer(pairs...)
}

// field is how n names a setting at the start of an error about it: the
// flag with its variable (--topic (REPLAY_TOPICS)), or the spec field.
func (n FieldNames) field(flagName, env string) string {
	if n == FieldNamesSpec {
		if s, ok := settingOf(flagName); ok && s.Spec != "" {
			return s.Spec
		}
		if env != "" {
			return env
		}
	}
	switch {
	case flagName != "" && env != "":
		return fmt.Sprintf("--%s (%s)", flagName, env)
	case flagName != "":
		return "--" + flagName
	}
	return env
}
