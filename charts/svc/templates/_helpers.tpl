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

{{- define "svc.podSecurityContext" -}}
{{- toYaml .Values.podSecurityContext }}
{{- end -}}

{{- define "svc.sandboxImage" -}}
{{ .Values.sandbox.image.repository }}:{{ .Values.sandbox.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The API base URL sandboxes call (SVC_SANDBOX_API_URL). */}}
{{- define "svc.sandboxApiUrl" -}}
{{- if .Values.sandbox.apiUrl -}}
{{ .Values.sandbox.apiUrl }}
{{- else -}}
http://{{ include "svc.fullname" . }}-api.{{ .Release.Namespace }}.svc:{{ .Values.api.service.port }}/v1
{{- end -}}
{{- end -}}

{{/* Session settings both components read: the cap (routes answer 429, fires queue) and the idle timeout. */}}
{{- define "svc.sessionEnv" -}}
- name: SVC_MAX_CONCURRENT_SESSIONS
  value: {{ .Values.sandbox.maxConcurrentSessions | quote }}
- name: SVC_IDLE_TIMEOUT
  value: {{ .Values.sandbox.idleTimeoutSeconds | quote }}
{{- end -}}

{{/* The kubernetes sandbox provider's settings (src/sandbox/kubernetes/settings.ts). */}}
{{- define "svc.sandboxEnv" -}}
- name: SVC_SANDBOX_PROVIDER
  value: kubernetes
- name: SVC_SANDBOX_API_URL
  value: {{ include "svc.sandboxApiUrl" . | quote }}
- name: SVC_SANDBOX_IMAGE
  value: {{ include "svc.sandboxImage" . | quote }}
- name: SVC_SANDBOX_IMAGE_PULL_POLICY
  value: {{ .Values.sandbox.image.pullPolicy | quote }}
- name: SVC_SANDBOX_CPU
  value: {{ .Values.sandbox.resources.cpu | quote }}
- name: SVC_SANDBOX_MEMORY_MIB
  value: {{ .Values.sandbox.resources.memoryMiB | quote }}
- name: SVC_SANDBOX_DISK_MIB
  value: {{ .Values.sandbox.resources.diskMiB | quote }}
- name: SVC_SANDBOX_HOME_MIB
  value: {{ .Values.sandbox.resources.homeMiB | quote }}
- name: SVC_SANDBOX_PROVISIONING_DEADLINE_SECONDS
  value: {{ .Values.sandbox.provisioningDeadlineSeconds | quote }}
- name: SVC_SANDBOX_MAX_RESTARTS
  value: {{ .Values.sandbox.maxRestarts | quote }}
{{- with .Values.sandbox.runtimeClassName }}
- name: SVC_SANDBOX_RUNTIME_CLASS
  value: {{ . | quote }}
{{- end }}
{{- with .Values.sandbox.nodeSelector }}
- name: SVC_SANDBOX_NODE_SELECTOR
  value: {{ toJson . | quote }}
{{- end }}
{{- with .Values.sandbox.tolerations }}
- name: SVC_SANDBOX_TOLERATIONS
  value: {{ toJson . | quote }}
{{- end }}
{{- with .Values.sandbox.imagePullSecrets }}
- name: SVC_SANDBOX_IMAGE_PULL_SECRETS
  value: {{ join "," . | quote }}
{{- end }}
{{- with .Values.sandbox.buildBackend }}
- name: SVC_SANDBOX_BUILD_BACKEND
  value: {{ . | quote }}
{{- end }}
{{- end -}}

{{/* On each Deployment, so `kubectl describe deployment` says where the image comes from when its pods cannot pull it. */}}
{{- define "svc.imageAnnotation" -}}
svc.dev/image: {{ printf "%s must be built from images/svc/Dockerfile (make image IMAGE=<registry>/svc TAG=<tag>) and pushed to a registry the nodes can pull from; then set image.repository and image.tag (README.md)" (include "svc.image" .) | quote }}
{{- end -}}
