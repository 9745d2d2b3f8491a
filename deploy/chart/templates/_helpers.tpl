{{/* Names and labels. */}}
{{- define "gitops-console.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "gitops-console.fullname" -}}
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

{{- define "gitops-console.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gitops-console.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "gitops-console.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "gitops-console.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: gitops-console
{{- end }}

{{- define "gitops-console.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "gitops-console.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The `rules` of the ClusterRole in a file of files/ (copies of deploy/*.yaml, kept equal by a test). */}}
{{- define "gitops-console.rulesOf" -}}
{{- range $doc := splitList "\n---\n" (.root.Files.Get .file) }}
{{- $o := fromYaml $doc }}
{{- if eq (get $o "kind") "ClusterRole" }}
{{- toYaml (get $o "rules") }}
{{- end }}
{{- end }}
{{- end }}

{{/* Who the ClusterRoles are bound to: the ServiceAccount when in-cluster, the kubeconfig user name if set. */}}
{{- define "gitops-console.subjects" -}}
{{- if .Values.inCluster }}
- kind: ServiceAccount
  name: {{ include "gitops-console.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
{{- end }}
{{- if .Values.rbac.userName }}
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: {{ .Values.rbac.userName }}
{{- end }}
{{- end }}
