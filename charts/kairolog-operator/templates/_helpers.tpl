{{/*
The chart name, shortened to the 63 characters of a label value.
*/}}
{{- define "kairolog-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The full name of the release's resources. When the release name already
contains the chart name it is used as is, so `helm install kairolog-operator`
does not name things kairolog-operator-kairolog-operator.
*/}}
{{- define "kairolog-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Chart name and version for the helm.sh/chart label.
*/}}
{{- define "kairolog-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels of every resource of the release.
*/}}
{{- define "kairolog-operator.labels" -}}
helm.sh/chart: {{ include "kairolog-operator.chart" . }}
{{ include "kairolog-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: operator
app.kubernetes.io/part-of: kairolog
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Labels that select the manager pods. They never change between chart
versions: a Deployment's selector is immutable.
*/}}
{{- define "kairolog-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kairolog-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
The manager's ServiceAccount name.
*/}}
{{- define "kairolog-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "kairolog-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
An image reference from {repository, tag, digest}: the digest wins over the
tag, and the tag defaults to the chart's appVersion.
Call with (dict "image" .Values.image "context" $).
*/}}
{{- define "kairolog-operator.imageRef" -}}
{{- if .image.digest }}
{{- printf "%s@%s" .image.repository .image.digest }}
{{- else }}
{{- printf "%s:%s" .image.repository (default .context.Chart.AppVersion .image.tag) }}
{{- end }}
{{- end }}

{{/*
Checks that the values fit together; values.schema.json checks each one alone.
*/}}
{{- define "kairolog-operator.validate" -}}
{{- if and .Values.metrics.serviceMonitor.enabled (not .Values.metrics.enabled) }}
{{- fail "metrics.serviceMonitor.enabled needs metrics.enabled" }}
{{- end }}
{{- if and .Values.metrics.service.enabled (not .Values.metrics.enabled) }}
{{- fail "metrics.service.enabled needs metrics.enabled" }}
{{- end }}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) }}
{{- fail "replicaCount above 1 needs leaderElection.enabled: two active managers would fight over every resource" }}
{{- end }}
{{- if eq (int .Values.metrics.port) (int .Values.healthPort) }}
{{- fail "metrics.port and healthPort must differ" }}
{{- end }}
{{- end }}
