{{/*
Chart name, cut to the 63 characters of a label value.
*/}}
{{- define "kafka-replay.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name: the prefix of every object name. Cut to 40 characters so that
"<fullname>-launcher-metrics" and runbook CronJobs still fit their limits.
*/}}
{{- define "kafka-replay.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "kafka-replay.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Standard labels on every object the chart owns.
*/}}
{{- define "kafka-replay.labels" -}}
helm.sh/chart: {{ include "kafka-replay.chart" . }}
{{ include "kafka-replay.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kafka-replay
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "kafka-replay.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kafka-replay.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
The launcher's selector labels (stable across upgrades: never add to them).
*/}}
{{- define "kafka-replay.launcher.selectorLabels" -}}
{{ include "kafka-replay.selectorLabels" . }}
app.kubernetes.io/component: launcher
{{- end }}

{{- define "kafka-replay.launcher.labels" -}}
{{ include "kafka-replay.labels" . }}
app.kubernetes.io/component: launcher
{{- end }}

{{- define "kafka-replay.runner.labels" -}}
{{ include "kafka-replay.labels" . }}
app.kubernetes.io/component: runner
{{- end }}

{{- define "kafka-replay.launcher.fullname" -}}
{{- printf "%s-launcher" (include "kafka-replay.fullname" .) }}
{{- end }}

{{- define "kafka-replay.launcher.serviceAccountName" -}}
{{- if .Values.launcher.serviceAccount.create }}
{{- default (include "kafka-replay.launcher.fullname" .) .Values.launcher.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.launcher.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "kafka-replay.runner.serviceAccountName" -}}
{{- if .Values.runner.serviceAccount.create }}
{{- default (printf "%s-runner" (include "kafka-replay.fullname" .)) .Values.runner.serviceAccount.name }}
{{- else }}
{{- .Values.runner.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
An image reference from {repository, tag, digest}: a digest wins over a tag,
and the tag defaults to the chart's appVersion.
Usage: include "kafka-replay.image" (list $imageValues $)
*/}}
{{- define "kafka-replay.image" -}}
{{- $img := index . 0 }}
{{- $root := index . 1 }}
{{- if $img.digest }}
{{- printf "%s@%s" $img.repository $img.digest }}
{{- else }}
{{- printf "%s:%s" $img.repository (default $root.Chart.AppVersion $img.tag) }}
{{- end }}
{{- end }}

{{/*
kafka-replay.labelValue: the same value as launcher/api/v1alpha1.LabelValue.
A name that is a valid label value (at most 63 characters of [A-Za-z0-9._-],
starting and ending with an alphanumeric) is used as is; any other name
becomes "sha256-" and the first 48 hex digits of its SHA-256, so that
`kubectl get jobs -l kafkareplay.dev/group=<value>` finds Jobs made by the
launcher and by runbooks alike.
*/}}
{{- define "kafka-replay.labelValue" -}}
{{- if and (le (len .) 63) (regexMatch "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$" .) }}
{{- . }}
{{- else }}
{{- printf "sha256-%s" (sha256sum . | trunc 48) }}
{{- end }}
{{- end }}

{{/*
kafka-replay.durationSeconds: whole seconds of a duration made of integer
h, m and s parts ("90s", "5m", "1h30m"), as the schema allows.
*/}}
{{- define "kafka-replay.durationSeconds" -}}
{{- $total := 0 }}
{{- range regexFindAll "[0-9]+[hms]" . -1 }}
{{- $n := trimSuffix "h" (trimSuffix "m" (trimSuffix "s" .)) | atoi }}
{{- if hasSuffix "h" . }}{{ $total = add $total (mul $n 3600) }}
{{- else if hasSuffix "m" . }}{{ $total = add $total (mul $n 60) }}
{{- else }}{{ $total = add $total $n }}
{{- end }}
{{- end }}
{{- $total }}
{{- end }}

{{/*
The runner's restricted container security context: the same as the
launcher's Job builder (launcher/internal/runnerjob) puts on runner containers.
*/}}
{{- define "kafka-replay.runner.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/*
The runner's pod security context (runs as the image's user 65532, the
distroless "nonroot"; fsGroup makes the Kafka config volume readable).
*/}}
{{- define "kafka-replay.runner.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/*
kafka-replay.goDuration: whole seconds written as Go's time.Duration.String()
does ("5m0s", "1h30m0s", "45s"), so runbook Jobs carry the same
REPLAY_WAIT_FOR_EMPTY text as the launcher's Jobs.
*/}}
{{- define "kafka-replay.goDuration" -}}
{{- $s := int64 . }}
{{- $h := div $s 3600 }}
{{- $m := div (mod $s 3600) 60 }}
{{- $sec := mod $s 60 }}
{{- if gt $h 0 }}{{ printf "%dh%dm%ds" $h $m $sec }}
{{- else if gt $m 0 }}{{ printf "%dm%ds" $m $sec }}
{{- else }}{{ printf "%ds" $sec }}
{{- end }}
{{- end }}

{{/*
NetworkPolicy egress rule for DNS, to the peers given (any when empty).
*/}}
{{- define "kafka-replay.networkPolicy.dns" -}}
- ports:
    - port: 53
      protocol: UDP
    - port: 53
      protocol: TCP
  {{- with .to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
