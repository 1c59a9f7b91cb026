{{/*
Names. Every resource is <fullname>-<component>, the component being compose.yaml's service name.
*/}}
{{- define "mem0-mcp.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "mem0-mcp.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* <fullname>-<component>; call with (dict "root" $ "component" "bridge"). */}}
{{- define "mem0-mcp.componentName" -}}
{{- printf "%s-%s" (include "mem0-mcp.fullname" .root) .component -}}
{{- end -}}

{{- define "mem0-mcp.secretName" -}}
{{- default (include "mem0-mcp.fullname" .) .Values.secrets.existingSecret -}}
{{- end -}}

{{- define "mem0-mcp.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "mem0-mcp.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "mem0-mcp.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mem0-mcp.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "mem0-mcp.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{ include "mem0-mcp.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: {{ include "mem0-mcp.name" .root }}
{{- end -}}

{{/* Chart-wide labels (Secret, ServiceAccount). */}}
{{- define "mem0-mcp.commonLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "mem0-mcp.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: {{ include "mem0-mcp.name" . }}
{{- end -}}

{{/* An image built from this repository: (dict "root" $ "image" .Values.bridge.image). */}}
{{- define "mem0-mcp.image" -}}
{{- $registry := .root.Values.image.registry -}}
{{- $tag := default .root.Values.image.tag .image.tag -}}
{{- if $registry -}}
{{- printf "%s/%s:%s" (trimSuffix "/" $registry) .image.repository $tag -}}
{{- else -}}
{{- printf "%s:%s" .image.repository $tag -}}
{{- end -}}
{{- end -}}

{{/* A third-party image (mem0's server, PostgreSQL): repository:tag as given. */}}
{{- define "mem0-mcp.externalImage" -}}
{{- printf "%s:%s" .repository .tag -}}
{{- end -}}

{{/* secretKeyRef env value: (dict "root" $ "key" "bearer-token" "optional" false). */}}
{{- define "mem0-mcp.secretRef" -}}
valueFrom:
  secretKeyRef:
    name: {{ include "mem0-mcp.secretName" .root }}
    key: {{ .key }}
    {{- if .optional }}
    optional: true
    {{- end }}
{{- end -}}

{{/*
A Secret value: the one given in values, else the one already in the cluster (upgrades keep it),
else a new random one. (dict "root" $ "value" .Values.secrets.bearerToken "key" "bearer-token")
*/}}
{{- define "mem0-mcp.generatedSecret" -}}
{{- if .value -}}
{{- .value -}}
{{- else -}}
{{- $existing := lookup "v1" "Secret" .root.Release.Namespace (include "mem0-mcp.fullname" .root) -}}
{{- if and $existing (hasKey ($existing.data | default dict) .key) -}}
{{- index $existing.data .key | b64dec -}}
{{- else -}}
{{- randAlphaNum 48 -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Pod-level settings every workload of ours shares. */}}
{{- define "mem0-mcp.podSpecCommon" -}}
serviceAccountName: {{ include "mem0-mcp.serviceAccountName" . }}
automountServiceAccountToken: false
enableServiceLinks: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Spread a component's replicas over nodes: (dict "root" $ "component" "bridge"). */}}
{{- define "mem0-mcp.topologySpread" -}}
{{- if .root.Values.topologySpread.enabled }}
topologySpreadConstraints:
  - maxSkew: {{ .root.Values.topologySpread.maxSkew }}
    topologyKey: {{ .root.Values.topologySpread.topologyKey }}
    whenUnsatisfiable: {{ .root.Values.topologySpread.whenUnsatisfiable }}
    labelSelector:
      matchLabels:
        {{- include "mem0-mcp.selectorLabels" . | nindent 8 }}
    matchLabelKeys:
      - pod-template-hash
{{- end }}
{{- end -}}

{{/* Scheduling: (dict "root" $ "values" .Values.bridge "component" "bridge"). */}}
{{- define "mem0-mcp.scheduling" -}}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- include "mem0-mcp.topologySpread" (dict "root" .root "component" .component) }}
{{- end -}}

{{/* Where the bridge finds mem0 (MEM0_API_URL). */}}
{{- define "mem0-mcp.mem0Url" -}}
{{- $backend := .Values.mem0.backend -}}
{{- if eq $backend "official" -}}
{{- printf "http://%s:8000" (include "mem0-mcp.componentName" (dict "root" . "component" "mem0")) -}}
{{- else if eq $backend "local" -}}
{{- printf "http://%s:8000" (include "mem0-mcp.componentName" (dict "root" . "component" "mem0-local")) -}}
{{- else -}}
{{- required "mem0.backend external needs mem0.externalUrl (the mem0 server's base URL)" .Values.mem0.externalUrl -}}
{{- end -}}
{{- end -}}

{{/* The in-chart PostgreSQL's Service name. */}}
{{- define "mem0-mcp.postgresHost" -}}
{{- include "mem0-mcp.componentName" (dict "root" . "component" "postgres") -}}
{{- end -}}

{{/*
Settings the schema cannot express (it sees one value at a time); each failure names the fix.
*/}}
{{- define "mem0-mcp.validate" -}}
{{- $ranker := .Values.ranker -}}
{{- if eq $ranker.store "sqlite" -}}
{{- if or (gt (int $ranker.replicaCount) 1) $ranker.autoscaling.enabled -}}
{{- fail "ranker.store sqlite keeps the records in one pod's file: set ranker.replicaCount 1 and ranker.autoscaling.enabled false, or use ranker.store postgresql (every replica shares it)" -}}
{{- end -}}
{{- else if not (or .Values.postgresql.enabled .Values.externalPostgresql.rankerDatabaseUrl .Values.secrets.existingSecret) -}}
{{- fail "ranker.store postgresql needs a database: postgresql.enabled, externalPostgresql.rankerDatabaseUrl, or ranker-database-url in secrets.existingSecret" -}}
{{- end -}}
{{- if eq .Values.mem0.backend "official" -}}
{{- if not .Values.postgresql.enabled -}}
{{- fail "mem0.backend official runs mem0's server in the chart for evaluation, on the in-chart PostgreSQL: set postgresql.enabled, or run your own mem0 server and use mem0.backend external with mem0.externalUrl" -}}
{{- end -}}
{{- if not (or .Values.secrets.openaiApiKey .Values.secrets.existingSecret) -}}
{{- fail "mem0.backend official needs secrets.openaiApiKey (mem0's server embeds and extracts with it), or openai-api-key in secrets.existingSecret; mem0.backend local needs none" -}}
{{- end -}}
{{- end -}}
{{- if and (eq .Values.mem0.backend "local") (not (or .Values.postgresql.enabled .Values.externalPostgresql.mem0LocalDatabaseUrl .Values.secrets.existingSecret)) -}}
{{- fail "mem0.backend local keeps memories in pgvector: postgresql.enabled, externalPostgresql.mem0LocalDatabaseUrl, or mem0-local-database-url in secrets.existingSecret" -}}
{{- end -}}
{{- range $component := list "bridge" "ranker" "judge" -}}
{{- $hpa := (index $.Values $component).autoscaling -}}
{{- if and $hpa.enabled (gt (int $hpa.minReplicas) (int $hpa.maxReplicas)) -}}
{{- fail (printf "%s.autoscaling: minReplicas (%v) is above maxReplicas (%v)" $component $hpa.minReplicas $hpa.maxReplicas) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.bridge.tokensFile (not (or .Values.secrets.tokensFile .Values.secrets.existingSecret)) -}}
{{- fail "bridge.tokensFile needs secrets.tokensFile (the TOML) or tokens.toml in secrets.existingSecret" -}}
{{- end -}}
{{- end -}}

{{/* Extra Host values the bridge accepts: bridge.allowedHosts and the ingress hosts. */}}
{{- define "mem0-mcp.allowedHosts" -}}
{{- $hosts := list -}}
{{- range .Values.bridge.allowedHosts }}{{ $hosts = append $hosts . }}{{ end -}}
{{- if .Values.ingress.enabled -}}
{{- range .Values.ingress.hosts }}{{ $hosts = append $hosts . }}{{ end -}}
{{- end -}}
{{- $hosts | uniq | join "," -}}
{{- end -}}

{{/* The `/tmp` every Python process may need, on an emptyDir (the root filesystem is read-only). */}}
{{- define "mem0-mcp.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
{{- end -}}

{{- define "mem0-mcp.tmpMount" -}}
- name: tmp
  mountPath: /tmp
{{- end -}}
