// What the kubernetes provider creates for one sandbox, as pure functions: a Secret with every
// secret value (tokens, project secrets) and a hardened Pod that reads it only by reference.
// Both are owned by the Sandbox, so they go with it.
import { LABEL_SANDBOX, LABEL_SESSION, POD, type KubeObject, type OwnerReference, type ResourceType } from '../../resources/index.js';
import type { SandboxRef, SandboxRequest } from '../provider.js';
import type { KubernetesSandboxSettings } from './settings.js';
import { SANDBOX_STOP_GRACE_MS } from '../../lib/sandbox-stop.js';

/** Every sandbox pod carries it (the node simulator and the chart's NetworkPolicy select on it). */
export const SANDBOX_COMPONENT_LABELS = { 'app.kubernetes.io/name': 'svc', 'app.kubernetes.io/component': 'sandbox' } as const;
/** Sandbox pods and nothing else: the operator caches only these Pods. */
export const SANDBOX_POD: ResourceType = { ...POD, labelSelector: LABEL_SANDBOX };
export const ENTRYPOINT = '/usr/local/bin/svc-entrypoint';
/** The one container of a sandbox Pod. */
export const SANDBOX_CONTAINER = 'sandbox';
export const DAEMON_PORT = 8000;
export const WORKSPACE = '/workspace';
export const ENGINE_HOME = '/opt/svc/home';
/** The image's `node` user. */
export const SANDBOX_UID = 1000;
/** Health that answers 503 until the engine is ready (the daemon's readiness form of /svc/health). */
export const READINESS_PATH = '/svc/health?ready=1';
export const LIVENESS_PATH = '/svc/health';
/** Room for svc-agent's stop: the checkpoint, then the engine and the sandbox's processes (src/lib/sandbox-stop.ts). */
export const TERMINATION_GRACE_SECONDS = Math.ceil(SANDBOX_STOP_GRACE_MS / 1000);

/** Pod and Secret share the name: `svc-sandbox-<sandbox name>` (63 characters at most for a session UUID). */
export function sandboxObjectName(sandboxName: string): string {
  return `svc-sandbox-${sandboxName}`;
}

function owner(ref: SandboxRef): OwnerReference {
  return { apiVersion: 'svc.dev/v1alpha1', kind: 'Sandbox', name: ref.name, uid: ref.uid, controller: true, blockOwnerDeletion: true };
}

function labels(request: SandboxRequest): Record<string, string> {
  return { ...SANDBOX_COMPONENT_LABELS, [LABEL_SANDBOX]: request.name, [LABEL_SESSION]: request.sessionId };
}

export function sandboxSecret(request: SandboxRequest): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: { name: sandboxObjectName(request.name), namespace: request.namespace, labels: labels(request), ownerReferences: [owner(request)] },
    data: Object.fromEntries(Object.entries(request.secretEnv).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')])),
  };
}

/** `entrypoint` of a template: one path runs as is; anything longer runs through /bin/sh -c, as Docker's shell form. */
export function entrypointCommand(entrypoint: string | undefined): string[] {
  const text = entrypoint?.trim();
  if (!text) return [ENTRYPOINT];
  return /\s/.test(text) ? ['/bin/sh', '-c', text] : [text];
}

function quantity(mib: number): string {
  return mib % 1024 === 0 ? `${mib / 1024}Gi` : `${mib}Mi`;
}

/** Why a request cannot become a Pod (no build backend for a dockerfile template), else undefined. */
export function unbuildable(request: SandboxRequest, settings: KubernetesSandboxSettings): string | undefined {
  const { template } = request;
  if (template.image || !template.dockerfile || settings.buildBackend) return undefined;
  return `the sandbox template builds its image from ${template.dockerfile}, but no image build backend is configured for the kubernetes provider; use a template with an image, or configure a build backend (chart value sandbox.buildBackend)`;
}

export function sandboxPod(request: SandboxRequest, settings: KubernetesSandboxSettings): KubeObject {
  const { template } = request;
  const cpu = String(template.cpu ?? settings.cpu);
  const memory = quantity(template.memory ?? settings.memory);
  const disk = quantity(template.disk ?? settings.disk);
  const secretName = sandboxObjectName(request.name);
  // plain values only; every secret value comes from the sandbox's Secret (envFrom)
  const env = Object.entries({ ...settings.extraEnv, ...request.env })
    .filter(([name]) => !(name in request.secretEnv))
    .map(([name, value]) => ({ name, value }));
  const probe = (path: string, periodSeconds: number, failureThreshold: number, timeoutSeconds: number) => ({
    httpGet: { path, port: DAEMON_PORT, scheme: 'HTTP' },
    periodSeconds,
    failureThreshold,
    timeoutSeconds,
    successThreshold: 1,
  });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: secretName, namespace: request.namespace, labels: labels(request), ownerReferences: [owner(request)] },
    spec: {
      restartPolicy: 'Always',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      hostNetwork: false,
      hostPID: false,
      hostIPC: false,
      terminationGracePeriodSeconds: TERMINATION_GRACE_SECONDS,
      ...(settings.runtimeClassName ? { runtimeClassName: settings.runtimeClassName } : {}),
      ...(settings.nodeSelector ? { nodeSelector: settings.nodeSelector } : {}),
      ...(settings.tolerations ? { tolerations: settings.tolerations } : {}),
      ...(settings.imagePullSecrets?.length ? { imagePullSecrets: settings.imagePullSecrets.map((name) => ({ name })) } : {}),
      securityContext: {
        runAsNonRoot: true,
        runAsUser: SANDBOX_UID,
        runAsGroup: SANDBOX_UID,
        fsGroup: SANDBOX_UID,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [{
        name: SANDBOX_CONTAINER,
        image: template.image ?? settings.image,
        ...(settings.imagePullPolicy ? { imagePullPolicy: settings.imagePullPolicy } : {}),
        command: entrypointCommand(template.entrypoint),
        workingDir: WORKSPACE,
        // a daemon that exits on bad settings says why in its last lines: they become the pod's reason
        terminationMessagePolicy: 'FallbackToLogsOnError',
        ports: [{ name: 'daemon', containerPort: DAEMON_PORT, protocol: 'TCP' }],
        env,
        envFrom: [{ secretRef: { name: secretName } }],
        resources: {
          requests: { cpu, memory, 'ephemeral-storage': disk },
          limits: { cpu, memory, 'ephemeral-storage': disk },
        },
        readinessProbe: probe(READINESS_PATH, 2, 3, 3),
        livenessProbe: { ...probe(LIVENESS_PATH, 10, 6, 5), initialDelaySeconds: 10 },
        securityContext: {
          runAsNonRoot: true,
          runAsUser: SANDBOX_UID,
          allowPrivilegeEscalation: false,
          privileged: false,
          capabilities: { drop: ['ALL'] },
          seccompProfile: { type: 'RuntimeDefault' },
        },
        volumeMounts: [
          { name: 'workspace', mountPath: WORKSPACE },
          { name: 'engine-home', mountPath: ENGINE_HOME },
        ],
      }],
      volumes: [
        { name: 'workspace', emptyDir: { sizeLimit: disk } },
        { name: 'engine-home', emptyDir: { sizeLimit: quantity(settings.homeSizeLimit) } },
      ],
    },
  };
}
