// The operator's sandbox settings (docs/sessions.md): which provider makes sandboxes, the API
// URL they reach, and for the process provider where their folders live and how svc-agent runs;
// the kubernetes provider reads its SVC_SANDBOX_* settings (docs/kubernetes.md).
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gitGatewayUrl } from '../lib/git-credential.js';
import { sandboxJail } from './sandbox-jail.js';
import type { Project } from '../resources/index.js';
import type { KubeClient } from '../kube/index.js';
import { apiBaseUrl, KubernetesSandboxProvider, kubernetesSettingsFromEnv, ProcessSandboxProvider, type SandboxProvider } from '../sandbox/index.js';
import { envInt } from '../lib/env-int.js';
import { envString } from './process.js';
import { CHECKPOINT_AND_PROGRESS_TUNABLES } from '../lib/sandbox-stop.js';

/** The package root: this file runs as dist/src/main/sandboxes.js. */
const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** svc-agent settings the operator passes on to every process sandbox when set. */
const DAEMON_TUNABLES = ['SVC_ENGINE_MAX_RESTARTS', 'SVC_ENGINE_RESTART_WINDOW_MS', 'SVC_ENGINE_RESTART_BACKOFF_MS', 'SVC_ENGINE_RESTART_MAX_BACKOFF_MS', 'SVC_ENGINE_BOOT_TIMEOUT_MS', 'SVC_START_DEADLINE_MS', 'SVC_START_RETRY_BACKOFF_MS', 'SVC_START_RETRY_MAX_BACKOFF_MS', 'SVC_HTTP_STALL_TIMEOUT_MS', ...CHECKPOINT_AND_PROGRESS_TUNABLES];

export interface SandboxSettings {
  provider: SandboxProvider;
  apiUrl: string;
  repoUrl(project: Project): string;
  /** A clean operator stop (process provider: stops its sandbox processes, keeping their folders). */
  stop(): Promise<void>;
  /**
   * This operator leads (process provider: leftovers of a crash go, warm sandboxes start). A
   * standby touches no sandbox: another operator on the same data directory leads them.
   */
  lead(): void;
}

export async function sandboxSettingsFromEnv(client: KubeClient, env: NodeJS.ProcessEnv = process.env): Promise<SandboxSettings> {
  const kind = envString('SVC_SANDBOX_PROVIDER', 'process');
  if (kind !== 'process' && kind !== 'kubernetes') throw new Error(`SVC_SANDBOX_PROVIDER must be process or kubernetes, got ${JSON.stringify(kind)}`);
  const apiUrl = apiBaseUrl(envString('SVC_SANDBOX_API_URL', 'http://127.0.0.1:8080/v1'));
  const daemonEnv = Object.fromEntries(DAEMON_TUNABLES.filter((name) => env[name]).map((name) => [name, env[name]!]));
  // SVC_SANDBOX_ISOLATION: `jail` (default) or `none` (svc dev --unsafe-no-isolation); docs/sandboxes.md
  const isolation = envString('SVC_SANDBOX_ISOLATION', 'jail');
  if (isolation !== 'jail' && isolation !== 'none') throw new Error(`SVC_SANDBOX_ISOLATION must be jail or none, got ${JSON.stringify(isolation)}`);
  // SVC_SANDBOX_DIRECT_LOCAL_REPOS=1 (tests, debugging): a project on a local path is cloned
  // from that path, bypassing the git gateway and its push rules. Never for remote URLs, only
  // where local repositories are allowed at all (SVC_ALLOW_LOCAL_REPOS=1, as under svc dev), and
  // never into an isolated sandbox (it cannot see the host's path, by design).
  const direct = env.SVC_SANDBOX_DIRECT_LOCAL_REPOS === '1' && env.SVC_ALLOW_LOCAL_REPOS === '1' && isolation === 'none';
  const repoUrl = (project: Project) => (direct && path.isAbsolute(project.spec.repoUrl) ? project.spec.repoUrl : gitGatewayUrl(apiUrl, project.metadata.uid!));
  if (kind === 'kubernetes') {
    // Pods (docs/kubernetes.md); the engine command and daemon tunables, when set (svc dev, tests), go in as plain env
    const engineCommand = env.SVC_ENGINE_COMMAND?.trim();
    const extraEnv = { ...daemonEnv, ...(engineCommand ? { SVC_ENGINE_COMMAND: engineCommand } : {}) };
    const provider = new KubernetesSandboxProvider(client, { ...kubernetesSettingsFromEnv(env), extraEnv });
    return { provider, apiUrl, repoUrl, stop: async () => {}, lead: () => {} };
  }
  const dataDir = path.resolve(envString('SVC_SANDBOX_DIR', path.join(os.tmpdir(), `svc-sandboxes-${process.getuid?.() ?? 0}`)));
  // `svc` on the sandbox's PATH, for the agent's `svc cr open`.
  const binDir = path.join(dataDir, '.bin');
  // 755: a jailed sandbox (another uid) runs it as /opt/svc/bin/svc; it holds no secret
  await mkdir(binDir, { recursive: true, mode: 0o755 });
  await chmod(binDir, 0o755);
  await writeFile(path.join(binDir, 'svc'), `#!/bin/sh\nexec '${process.execPath}' '${path.join(PACKAGE_ROOT, 'bin/svc.js')}' "$@"\n`, { mode: 0o755 });
  // a template without memory or disk gets a Pod's defaults (SVC_SANDBOX_MEMORY_MIB, SVC_SANDBOX_DISK_MIB);
  // CPU only when asked for (SVC_SANDBOX_CPU): unasked, each sandbox's group shares the cores
  // equally with the others, and a quota would only slow it on an idle machine (docs/sandboxes.md)
  const { cpu: defaultCpu, memory, disk } = kubernetesSettingsFromEnv(env);
  const cpu = env.SVC_SANDBOX_CPU?.trim() ? defaultCpu : undefined;
  const provider = new ProcessSandboxProvider({
    dataDir,
    agentCommand: [process.execPath, path.join(PACKAGE_ROOT, 'bin/svc-agent.js')],
    engineCommand: env.SVC_ENGINE_COMMAND?.trim() || undefined,
    daemonEnv,
    pathPrepend: [binDir],
    isolation: isolation === 'none' ? 'none' : sandboxJail(apiUrl, PACKAGE_ROOT, env),
    // SVC_SANDBOX_WARM: jailed sandboxes started ahead of their session (docs/sandboxes.md "Warm sandboxes")
    warm: envInt('SVC_SANDBOX_WARM', 1, 0, 16, env),
    defaultResources: { cpu, memory, disk },
  });
  // leftovers of a crashed svc dev (jail slots no live sandbox holds) go once this operator leads
  return { provider, apiUrl, repoUrl, stop: () => provider.stopAll(), lead: () => void provider.sweepOnce() };
}

