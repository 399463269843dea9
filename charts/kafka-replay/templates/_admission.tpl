{{/*
Admission policies (admission-requests.yaml, admission-launcher.yaml): the
annotations a ReplayRequest's requester is stamped into. The same names as
launcher/api/v1alpha1 AnnotationRequestedBy and AnnotationRequestedByGroups
(test/chart checks that they agree).
*/}}
{{- define "kafka-replay.annotation.requestedBy" -}}kafkareplay.dev/requested-by{{- end }}
{{- define "kafka-replay.annotation.requestedByGroups" -}}kafkareplay.dev/requested-by-groups{{- end }}

{{/*
The label on a child request naming its parent: launcher/api/v1alpha1
LabelParent.
*/}}
{{- define "kafka-replay.label.parent" -}}kafkareplay.dev/parent{{- end }}

{{/*
The launcher's finalizer on a ReplayRequest: launcher.Finalizer.
*/}}
{{- define "kafka-replay.finalizer" -}}kafkareplay.dev/runner{{- end }}

{{/*
The launcher's ServiceAccount, as the API server names its requests.
*/}}
{{- define "kafka-replay.launcher.username" -}}system:serviceaccount:{{ .Release.Namespace }}:{{ include "kafka-replay.launcher.serviceAccountName" . }}{{- end }}

{{/*
The annotations that approve or reject a plan (approval: Manual), and the
one the approver is stamped into: launcher/api/v1alpha1 AnnotationApprove,
AnnotationReject and AnnotationApprovedBy.
*/}}
{{- define "kafka-replay.annotation.approve" -}}kafkareplay.dev/approve{{- end }}
{{- define "kafka-replay.annotation.reject" -}}kafkareplay.dev/reject{{- end }}
{{- define "kafka-replay.annotation.approvedBy" -}}kafkareplay.dev/approved-by{{- end }}

{{/*
kafka-replay.admission.decisionChanged: a CEL expression, true when a
create or update of a ReplayRequest sets, changes or removes its approve or
reject annotation. Used where variables are not (matchConditions).
*/}}
{{- define "kafka-replay.admission.decisionChanged" -}}
{{- $approve := include "kafka-replay.annotation.approve" . -}}
{{- $reject := include "kafka-replay.annotation.reject" . -}}
request.operation == 'CREATE' ? (object.metadata.?annotations[?'{{ $approve }}'].hasValue() || object.metadata.?annotations[?'{{ $reject }}'].hasValue()) : (object.metadata.?annotations[?'{{ $approve }}'] != oldObject.metadata.?annotations[?'{{ $approve }}'] || object.metadata.?annotations[?'{{ $reject }}'] != oldObject.metadata.?annotations[?'{{ $reject }}'])
{{- end }}

{{/*
Whether the API server serves MutatingAdmissionPolicy (GA in Kubernetes
1.36): without it nothing stamps the requester, and the launcher records
"unknown".
*/}}
{{- define "kafka-replay.admission.mutatingServed" -}}
{{- if .Capabilities.APIVersions.Has "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy" }}true{{ end }}
{{- end }}

{{/*
kafka-replay.admission.imagePatterns: one RE2 pattern per image the
launcher may put in a runner Job, as a JSON list, or "" when any image is
allowed ("*" in runner.allowedImages). An entry is compared by registry and
repository exactly, never as a raw prefix:
  - host/path       that repository, with any tag and/or digest;
  - host[:port]     (no "/") any repository of that registry;
  - host/path/      any repository under that path;
  - host/path:      (the older prefix form for "tags of host/path") that repository.
The runner image's repository and every runbook's image repository are
always allowed.
*/}}
{{- define "kafka-replay.admission.imagePatterns" -}}
{{- $tail := "(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$" }}
{{- $path := "[a-z0-9]+([._-]+[a-z0-9]+)*(/[a-z0-9]+([._-]+[a-z0-9]+)*)*" }}
{{- $entries := list .Values.runner.image.repository }}
{{- range .Values.runbooks }}
{{- with .image }}{{ with .repository }}{{ $entries = append $entries . }}{{ end }}{{ end }}
{{- end }}
{{- $entries = concat $entries (.Values.runner.allowedImages | default list) }}
{{- if not (has "*" $entries) }}
{{- $trimmed := list }}
{{- range $entries }}{{ $trimmed = append $trimmed (trimSuffix ":" .) }}{{ end }}
{{- $out := list }}
{{- range $trimmed | uniq }}
{{- $e := . }}
{{- if hasSuffix "/" $e }}
{{- $out = append $out (printf "^%s%s%s" (regexQuoteMeta $e) $path $tail) }}
{{- else if not (contains "/" $e) }}
{{- $out = append $out (printf "^%s/%s%s" (regexQuoteMeta $e) $path $tail) }}
{{- else }}
{{- $out = append $out (printf "^%s%s" (regexQuoteMeta $e) $tail) }}
{{- end }}
{{- end }}
{{- toJson $out }}
{{- end }}
{{- end }}
