{{/* Names and labels shared by every template. */}}

{{- define "svc.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "svc.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: (dict "root" $ "component" "operator") */}}
{{- define "svc.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "svc.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "svc.operatorServiceAccount" -}}
{{- if .Values.serviceAccount.create -}}
{{ include "svc.fullname" . }}-operator
{{- else -}}
{{ required "serviceAccount.operatorName is required when serviceAccount.create is false" .Values.serviceAccount.operatorName }}
{{- end -}}
{{- end -}}

{{- define "svc.apiServiceAccount" -}}
{{- if .Values.serviceAccount.create -}}
{{ include "svc.fullname" . }}-api
{{- else -}}
{{ required "serviceAccount.apiName is required when serviceAccount.create is false" .Values.serviceAccount.apiName }}
{{- end -}}
{{- end -}}

{{/* Environment every svc process reads: its own namespace and pod name (downward API). */}}
{{- define "svc.podEnv" -}}
- name: SVC_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: SVC_POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
{{- end -}}

{{- define "svc.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
runAsUser: 10001
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Liveness and readiness on the component's http port. */}}
{{- define "svc.probes" -}}
livenessProbe:
  httpGet: { path: /healthz, port: http }
  periodSeconds: 10
  failureThreshold: 3
readinessProbe:
  httpGet: { path: /readyz, port: http }
  periodSeconds: 5
  failureThreshold: 2
{{- end -}}

{{- define "svc.podAnnotations" -}}
{{- if .root.Values.metrics.podAnnotations }}
annotations:
  prometheus.io/scrape: "true"
  prometheus.io/port: {{ .port | quote }}
  prometheus.io/path: /metrics
{{- end }}
{{- end -}}

{{/* On each Deployment, so `kubectl describe deployment` says where the image comes from when its pods cannot pull it. */}}
{{- define "svc.imageAnnotation" -}}
svc.dev/image: {{ printf "%s must be built from images/svc/Dockerfile (make image IMAGE=<registry>/svc TAG=<tag>) and pushed to a registry the nodes can pull from; then set image.repository and image.tag (README.md)" (include "svc.image" .) | quote }}
{{- end -}}
