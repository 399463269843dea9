package request

import (
	"regexp"
	"strings"

	"github.com/kafka-replay/kafka-replay/runner/config"
)

// The launcher and the runner it starts speak in a request's spec fields
// (spec.waitTimeout, spec.kafka.secretRef): the request is what they were
// given. Someone following a request through this plugin typed its flags
// instead, and is told about them here, each with the field it sets, so
// that the words fit both how the request was made and what it holds
// (issue 32, friction 8).

// specFlags are the spec fields a message may name, with the flag of
// `kubectl replay create` (or undo) that sets each. A field of a field
// (spec.kafka.secretRef.name) takes its parent's flag.
var specFlags = map[string]string{
	"spec.kafka.bootstrapServers":             FlagBootstrapServers,
	"spec.kafka.configMapRef":                 FlagConfigMap,
	"spec.kafka.secretRef":                    FlagSecret,
	"spec.kafka.clusterRef":                   FlagCluster,
	"spec.kafka.clusterRef.user":              FlagUser,
	"spec.group":                              FlagGroup,
	"spec.groups":                             FlagGroup,
	"spec.groupSelector":                      FlagGroupInclude,
	"spec.groupSelector.include":              FlagGroupInclude,
	"spec.groupSelector.exclude":              FlagGroupExclude,
	"spec.groupSelector.withOffsetsOn":        FlagGroupWithOffsetsOn,
	"spec.continueOnError":                    FlagContinueOnError,
	"spec.parallelism":                        FlagParallelism,
	"spec.topics":                             FlagTopic,
	"spec.target":                             FlagTo,
	"spec.dryRun":                             FlagDryRun,
	"spec.approval":                           FlagApproval,
	"spec.approvalTimeout":                    FlagApprovalTimeout,
	"spec.whenGroupActive":                    FlagWaitForEmpty,
	"spec.waitTimeout":                        FlagWaitForEmpty,
	"spec.consumers":                          FlagConsumers,
	"spec.consumerRef":                        FlagConsumerRef,
	"spec.limits.maxMessagesToReconsume":      FlagMaxMessagesToReconsume,
	"spec.limits.maxTotalMessagesToReconsume": FlagMaxTotalMessagesToReconsume,
	"spec.limits.allowSkip":                   FlagAllowSkip,
	"spec.force":                              FlagForce,
	"spec.commitMode":                         FlagCommitMode,
	"spec.runner.image":                       FlagRunnerImage,
	"spec.runner.serviceAccountName":          FlagServiceAccount,
	"spec.runner.activeDeadlineSeconds":       FlagActiveDeadline,
}

// waitPhrase is how the runner names the wait in a request's words: one
// flag of the plugin, two fields.
var waitPhrase = config.FieldNamesSpec.Name(config.RefWait)

var specField = regexp.MustCompile(`\bspec(\.[A-Za-z]+)+`)

// InPluginWords names, in a launcher's or runner's message, each spec field
// by the plugin's flag with the field after it: "wait longer
// (spec.waitTimeout)" becomes "wait longer (--wait-for-empty
// (spec.waitTimeout))". A field no flag sets is left as it is. It is pure.
func InPluginWords(msg string) string {
	parts := strings.Split(msg, waitPhrase)
	for i, p := range parts {
		parts[i] = specField.ReplaceAllStringFunc(p, func(field string) string {
			for f := field; strings.Contains(f, "."); f = f[:strings.LastIndexByte(f, '.')] {
				if flag, ok := specFlags[f]; ok {
					return "--" + flag + " (" + field + ")"
				}
			}
			return field
		})
	}
	return strings.Join(parts, "--"+FlagWaitForEmpty+" ("+waitPhrase+")")
}
