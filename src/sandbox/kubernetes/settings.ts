// Cluster-wide settings of the kubernetes provider: the chart's `sandbox` values, passed to the
// operator as SVC_SANDBOX_* environment variables.

export interface KubernetesSandboxSettings {
  /** Image when neither the project nor the manifest template names one. */
  image: string;
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /** Defaults for a template without cpu (cores), memory (MiB) or disk (MiB). */
  cpu: number;
  memory: number;
  disk: number;
  /** Size limit of the engine home emptyDir (/opt/svc/home), MiB. */
  homeSizeLimit: number;
  /** gVisor, Kata, ... (a RuntimeClass the cluster has). */
  runtimeClassName?: string;
  nodeSelector?: Record<string, string>;
  tolerations?: Record<string, unknown>[];
  imagePullSecrets?: string[];
  /** Sandbox pods still not running after this long fail (default 5 min). */
  provisioningDeadlineMs: number;
  /** Restarts of the sandbox container tolerated before the sandbox fails. */
  maxRestarts: number;
  /** A service that builds images from a `dockerfile` template; none is configured today. */
  buildBackend?: string;
  /** Plain, non-secret variables every sandbox gets (e.g. SVC_ENGINE_COMMAND in tests). */
  extraEnv?: Record<string, string>;
}

export const DEFAULT_SANDBOX_IMAGE = 'ghcr.io/svc-dev/svc-sandbox:latest';

export const DEFAULT_SETTINGS: KubernetesSandboxSettings = {
  image: DEFAULT_SANDBOX_IMAGE,
  cpu: 1,
  memory: 2048,
  disk: 10240,
  homeSizeLimit: 2048,
  provisioningDeadlineMs: 300_000,
  maxRestarts: 3,
};

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min) throw new Error(`${name} must be an integer >= ${min}, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

function json<T>(env: Env, name: string, check: (v: unknown) => v is T): T | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new Error(`${name} must be JSON, got ${JSON.stringify(raw)}`);
  }
  if (!check(value)) throw new Error(`${name} has the wrong shape: ${raw}`);
  return value;
}

const isStringMap = (v: unknown): v is Record<string, string> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');
const isObjectList = (v: unknown): v is Record<string, unknown>[] =>
  Array.isArray(v) && v.every((x) => typeof x === 'object' && x !== null && !Array.isArray(x));

/** The settings settingsFromEnv reads (svc dev passes them on from its environment). */
export const KUBERNETES_SANDBOX_SETTINGS = ['SVC_SANDBOX_IMAGE', 'SVC_SANDBOX_IMAGE_PULL_POLICY', 'SVC_SANDBOX_CPU', 'SVC_SANDBOX_MEMORY_MIB',
  'SVC_SANDBOX_DISK_MIB', 'SVC_SANDBOX_HOME_MIB', 'SVC_SANDBOX_RUNTIME_CLASS', 'SVC_SANDBOX_NODE_SELECTOR', 'SVC_SANDBOX_TOLERATIONS',
  'SVC_SANDBOX_IMAGE_PULL_SECRETS', 'SVC_SANDBOX_PROVISIONING_DEADLINE_SECONDS', 'SVC_SANDBOX_MAX_RESTARTS', 'SVC_SANDBOX_BUILD_BACKEND'] as const;

/**
 * SVC_SANDBOX_IMAGE, SVC_SANDBOX_IMAGE_PULL_POLICY, SVC_SANDBOX_CPU, SVC_SANDBOX_MEMORY_MIB,
 * SVC_SANDBOX_DISK_MIB, SVC_SANDBOX_HOME_MIB, SVC_SANDBOX_RUNTIME_CLASS,
 * SVC_SANDBOX_NODE_SELECTOR (JSON object), SVC_SANDBOX_TOLERATIONS (JSON list),
 * SVC_SANDBOX_IMAGE_PULL_SECRETS (comma separated), SVC_SANDBOX_PROVISIONING_DEADLINE_SECONDS,
 * SVC_SANDBOX_MAX_RESTARTS, SVC_SANDBOX_BUILD_BACKEND.
 */
export function settingsFromEnv(env: Env): KubernetesSandboxSettings {
  const pullPolicy = env.SVC_SANDBOX_IMAGE_PULL_POLICY?.trim();
  if (pullPolicy && !['Always', 'IfNotPresent', 'Never'].includes(pullPolicy)) {
    throw new Error(`SVC_SANDBOX_IMAGE_PULL_POLICY must be Always, IfNotPresent or Never, got ${JSON.stringify(pullPolicy)}`);
  }
  const d = DEFAULT_SETTINGS;
  return {
    image: env.SVC_SANDBOX_IMAGE?.trim() || d.image,
    ...(pullPolicy ? { imagePullPolicy: pullPolicy as KubernetesSandboxSettings['imagePullPolicy'] } : {}),
    cpu: int(env, 'SVC_SANDBOX_CPU', d.cpu, 1),
    memory: int(env, 'SVC_SANDBOX_MEMORY_MIB', d.memory, 1),
    disk: int(env, 'SVC_SANDBOX_DISK_MIB', d.disk, 1),
    homeSizeLimit: int(env, 'SVC_SANDBOX_HOME_MIB', d.homeSizeLimit, 1),
    runtimeClassName: env.SVC_SANDBOX_RUNTIME_CLASS?.trim() || undefined,
    nodeSelector: json(env, 'SVC_SANDBOX_NODE_SELECTOR', isStringMap),
    tolerations: json(env, 'SVC_SANDBOX_TOLERATIONS', isObjectList),
    imagePullSecrets: env.SVC_SANDBOX_IMAGE_PULL_SECRETS?.split(',').map((s) => s.trim()).filter(Boolean),
    provisioningDeadlineMs: int(env, 'SVC_SANDBOX_PROVISIONING_DEADLINE_SECONDS', d.provisioningDeadlineMs / 1000, 1) * 1000,
    maxRestarts: int(env, 'SVC_SANDBOX_MAX_RESTARTS', d.maxRestarts, 0),
    buildBackend: env.SVC_SANDBOX_BUILD_BACKEND?.trim() || undefined,
  };
}
