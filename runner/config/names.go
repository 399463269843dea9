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
	// FieldNamesRunbook names the chart's runbook values the runbook
	// CronJob's Job was made from: runbooks[].allowSkip, not --allow-skip,
	// which a runbook user never types. The chart sets
	// REPLAY_FIELD_NAMES=runbook on every runbook Job. A setting no
	// runbook value sets is named by its environment variable.
	FieldNamesRunbook FieldNames = "runbook"
)

// Setting is one configuration setting under each of its names. The
// launcher builds a runner Job from a request by these names (launcher/internal/runnerjob).
type Setting struct {
	// Flag is the runner's flag, without dashes.
	Flag string
	// Env is the environment variable; empty for a name that only appears
	// in hints (see the Ref* constants).
	Env string
	// Spec is the ReplayRequest field it comes from under the launcher;
	// empty if the launcher sets it itself.
	Spec string
	// Runbook is the chart's runbook value it comes from in a runbook
	// Job; empty if the chart sets it itself or runbooks have none.
	Runbook string
}

// runbookValue is how a runbook value is named: its place in the chart's
// values (charts/kafka-replay/values.schema.json, definitions.runbook).
func runbookValue(key string) string { return "runbooks[]." + key }

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
	{Flag: FlagBootstrapServers, Env: EnvBootstrapServers, Spec: "spec.kafka.bootstrapServers", Runbook: runbookValue("kafka.bootstrapServers")},
	{Flag: FlagGroup, Env: EnvGroup, Spec: "spec.group", Runbook: runbookValue("group")},
	{Flag: FlagTopic, Env: EnvTopics, Spec: "spec.topics", Runbook: runbookValue("topics")},
	{Flag: FlagTo, Env: EnvTo, Spec: "spec.target", Runbook: runbookValue("target")},
	{Flag: FlagDryRun, Env: EnvDryRun, Spec: "spec.dryRun", Runbook: runbookValue("dryRun")},
	// The request's ConfigMap and Secret, mounted apart: only the Secret's
	// directory may bind the credentials (credentials.go).
	{Flag: FlagKafkaConfigDir, Env: EnvKafkaConfigDir, Spec: "spec.kafka.configMapRef", Runbook: runbookValue("kafka.configMapRef")},
	{Flag: FlagKafkaSecretDir, Env: EnvKafkaSecretDir, Spec: "spec.kafka.secretRef", Runbook: runbookValue("kafka.secretRef")},
	{Flag: FlagResultFile, Env: EnvResultFile},
	{Flag: FlagRunID, Env: EnvRunID},
	{Flag: FlagWaitForEmpty, Env: EnvWaitForEmpty, Spec: "spec.waitTimeout", Runbook: runbookValue("waitForEmpty")},
	{Flag: FlagOutput, Env: EnvOutput},
	{Flag: FlagTimeout, Env: EnvTimeout},
	{Flag: FlagEmitRecord, Env: EnvEmitRecord},
	{Flag: FlagAllowUnsafeProperties, Env: EnvAllowUnsafeProperties},
	{Flag: FlagAllowUnboundSecret, Env: EnvAllowUnboundSecret},
	{Flag: FlagFieldNames, Env: EnvFieldNames},
	{Flag: FlagMaxMessagesToReconsume, Env: EnvMaxMessagesToReconsume, Spec: "spec.limits.maxMessagesToReconsume", Runbook: runbookValue("maxMessagesToReconsume")},
	{Flag: FlagAllowSkip, Env: EnvAllowSkip, Spec: "spec.limits.allowSkip", Runbook: runbookValue("allowSkip")},
	{Flag: FlagForce, Env: EnvForce, Spec: "spec.force"},
	// The launcher's, for the plan: and undo: files it writes.
	{Flag: FlagFileDigest, Env: EnvFileDigest},
	// The launcher's, for the properties a clusterRef resolves to.
	{Flag: FlagPropertiesDigest, Env: EnvPropertiesDigest, Spec: "status.resolvedKafka.propertiesDigest"},
	{Flag: FlagCADigest, Env: EnvCADigest, Spec: "status.resolvedKafka.caCertificates"},
	{Flag: FlagCommitMode, Env: EnvCommitMode, Spec: "spec.commitMode", Runbook: runbookValue("commitMode")},
	// The launcher's, from the Strimzi Kafka a request names.
	{Flag: FlagClusterID, Env: EnvClusterID, Spec: "spec.kafka.clusterRef (its Kafka's status.clusterId)"},
	{Flag: FlagGroupType, Env: EnvGroupType, Spec: "spec.groupType", Runbook: runbookValue("groupType")},
	// A shell user's: a request over several groups runs one Job per group.
	{Flag: FlagAllGroups, Env: EnvAllGroups},
	{Flag: FlagList, Env: EnvList},
	{Flag: FlagContinueOnError, Env: EnvContinueOnError},
	{Flag: FlagDeleteAllInternalTopics, Env: EnvDeleteAllInternalTopics, Spec: "spec.deleteAllInternalTopics"},
}

// refs are the hint-only references: Flag is how a shell user says it.
var refs = map[string]Setting{
	RefCredentials: {Flag: FlagKafkaSecretDir, Spec: "spec.kafka.secretRef", Runbook: runbookValue("kafka.secretRef")},
	RefWait:        {Flag: FlagWaitForEmpty, Spec: "spec.whenGroupActive: Wait (with a spec.waitTimeout)", Runbook: runbookValue("waitForEmpty")},
	RefOffsetsFile: {Flag: FlagTo + " file:", Spec: "spec.target.offsets"},
	RefFromGroup:   {Flag: FlagTo, Spec: "spec.target.fromGroup", Runbook: runbookValue("target") + " (group:)"},
	RefShift:       {Flag: FlagTo, Spec: "spec.target.shiftBy", Runbook: runbookValue("target") + " (shift:)"},
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
	case FieldNamesRunbook:
		return FieldNamesRunbook, nil
	}
	return FieldNamesFlags, fmt.Errorf("%q is not one of %s, %s, %s", s, FieldNamesFlags, FieldNamesSpec, FieldNamesRunbook)
}

// flags says whether n names the runner's flags (the default, also when
// unset).
func (n FieldNames) flags() bool { return n == "" || n == FieldNamesFlags }

// own is s's name in n's vocabulary, if it has one there (spec fields,
// runbook values); empty for the flags, or a setting that n lacks.
func (s Setting) own(n FieldNames) string {
	switch n {
	case FieldNamesSpec:
		return s.Spec
	case FieldNamesRunbook:
		return s.Runbook
	}
	return ""
}

// Name is how n names a setting (a Flag* constant) or reference (a Ref*
// constant) inside a sentence: --topic, or spec.topics.
func (n FieldNames) Name(name string) string {
	s, ok := settingOf(name)
	if !ok {
		return "--" + name
	}
	if own := s.own(n); own != "" {
		return own
	}
	if !n.flags() && s.Env != "" {
		return s.Env // set by the launcher or the chart, not by the user
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
	if !n.flags() {
		if s, ok := settingOf(flagName); ok && s.own(n) != "" {
			return s.own(n)
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
