// `svc dev`: the whole system on one machine. This process hosts the local cluster and
// supervises the operator and the API as child processes running the same entry points the
// chart runs (dist/src/main/operator.js, dist/src/main/api.js), so dev exercises the
// production wiring and a crash in one component does not take the cluster down
// (docs/dev.md).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { adminKubeconfig, startLocalCluster, type LocalCluster } from '../localcluster/index.js';
import { clusterFetch, type ClusterFetch } from '../localcluster/client.js';
import { podLogReader, type NodeSimulator } from '../localcluster/node/index.js';
import { startSandboxNode } from './sandbox-node.js';
import { adminGrant, lookupName, newToken, principalFromSecret, tokenSecret } from '../api/tokens.js';
import { assertFetchablePort, assertPortFree } from './ports.js';
import { shellQuote } from '../lib/shell-quote.js';
import { jsonErrorText } from '../lib/json.js';
import { envFileText, parseEnvFile } from './env-file.js';
import { lockDataDir } from './data-dir-lock.js';
import { EXIT_WITH_PARENT_ENV } from './process.js';
import { CHECKPOINT_AND_PROGRESS_TUNABLES, SANDBOX_STOP_GRACE_MS } from '../lib/sandbox-stop.js';
import { FIRE_HISTORY_ENV, SESSION_HISTORY_ENV } from '../resources/index.js';
import { devPreflightChecks, runPreflight } from './preflight.js';
import { Jail, parseSandboxMount } from '../lib/jail/index.js';
import { ProcessSandboxProvider } from '../sandbox/process/provider.js';
import { KUBERNETES_SANDBOX_SETTINGS } from '../sandbox/kubernetes/index.js';
import { isolationLines, isolationStatus, type IsolationStatus } from './isolation-check.js';
import { JAIL_SETTINGS, sandboxJail } from './sandbox-jail.js';

/** The package root (holding crds/ and dist/), found upward: this code may run from dist/src/main or from the CLI bundle in dist/cli. */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'crds')) || !existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the svc package root (crds/ and package.json) above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
}
const REPO_ROOT = packageRoot();
/** The built composition roots the child processes run (the chart runs the same files). */
const MAIN_DIR = path.join(REPO_ROOT, 'dist/src/main');

export interface DevOptions {
  dataDir: string;
  apiPort: number;
  kubePort: number;
  /** Namespace of the operator's Lease, the token Secrets and the projects. */
  namespace?: string;
  /** Resync interval of the Project controller (default 30 s). */
  projectResyncSeconds?: number;
  /** svc-agent's engine command in every sandbox (default: the pinned opencode). */
  engineCommand?: string;
  /** The concurrent-session cap of the namespace (SVC_MAX_CONCURRENT_SESSIONS). */
  maxSessions?: number;
  /** Idle timeout of sessions in seconds (SVC_IDLE_TIMEOUT). */
  idleTimeoutSeconds?: number;
  /** Finished fires kept per trigger (SVC_TRIGGER_FIRE_HISTORY). */
  fireHistory?: number;
  /** Finished sessions a trigger started kept per trigger (SVC_SESSION_HISTORY; 0 keeps every one). */
  sessionHistory?: number;
  /** Sandbox provider (default process). */
  provider?: 'process' | 'kubernetes';
  /** --unsafe-no-isolation: sandboxes run unjailed (a loud warning on every start). */
  unsafeNoIsolation?: boolean;
  /** --sandbox-mount values, HOST_PATH[:ro|:rw] (docs/sandboxes.md). */
  sandboxMounts?: readonly string[];
  /** --sandbox-host-port: ports of the host sandboxes may reach at their gateway address (docs/sandboxes.md). */
  sandboxHostPorts?: readonly number[];
  log?: (line: string) => void;
  /** Aborted: the start ends where it is (everything started so far stopped) with the signal's reason. */
  signal?: AbortSignal;
}

export interface DevHandle {
  kubeUrl: string;
  apiUrl: string;
  /** Where sandboxes reach the API (the gateway address when isolated, else apiUrl). */
  sandboxApiUrl: string;
  kubeconfigPath: string;
  envPath: string;
  token: string;
  /** Resolves with a message when a child process dies while dev is running. */
  failed: Promise<string>;
  stop(): Promise<void>;
}

async function writePrivate(file: string, text: string): Promise<void> {
  await writeFile(file, text, { mode: 0o600 });
  await chmod(file, 0o600); // an existing file keeps its old mode on writeFile
}

/** Minimal REST calls against the local cluster (as its admin) for dev's own setup. */
async function kubeRequest(kube: ClusterFetch, method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await kube(urlPath, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** Creates or replaces every CRD of crds/. */
async function applyCrds(base: ClusterFetch): Promise<string[]> {
  const dir = path.join(REPO_ROOT, 'crds');
  const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
  const names: string[] = [];
  for (const file of files) {
    const crd = parseYaml(await readFile(path.join(dir, file), 'utf8')) as { metadata: { name: string; resourceVersion?: string } };
    const collection = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
    const created = await kubeRequest(base, 'POST', collection, crd);
    if (created.status === 409) {
      const current = await kubeRequest(base, 'GET', `${collection}/${crd.metadata.name}`);
      crd.metadata.resourceVersion = (current.body.metadata as { resourceVersion: string }).resourceVersion;
      const replaced = await kubeRequest(base, 'PUT', `${collection}/${crd.metadata.name}`, crd);
      if (replaced.status >= 300) throw new Error(`could not update CRD ${crd.metadata.name}: ${JSON.stringify(replaced.body)}`);
    } else if (created.status >= 300) {
      throw new Error(`could not create CRD ${crd.metadata.name}: ${JSON.stringify(created.body)}`);
    }
    names.push(crd.metadata.name);
  }
  return names;
}

async function ensureNamespace(base: ClusterFetch, namespace: string): Promise<void> {
  const res = await kubeRequest(base, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  if (res.status >= 300 && res.status !== 409) throw new Error(`could not create namespace ${namespace}: ${JSON.stringify(res.body)}`);
}

/**
 * The admin token: the one in DIR/env when its Secret still grants it, else a new one. The
 * plaintext lives only in DIR/env (mode 600); the cluster keeps its hash.
 */
async function ensureAdminToken(base: ClusterFetch, namespace: string, previous: string | undefined): Promise<string> {
  if (previous) {
    const name = lookupName(previous);
    const existing = name ? await kubeRequest(base, 'GET', `/api/v1/namespaces/${namespace}/secrets/${name}`) : null;
    if (existing?.status === 200 && principalFromSecret(previous, existing.body as never)) return previous;
  }
  // The cluster lost the Secret (a fresh cluster dir): re-grant the same token so clients keep working.
  const token = previous && lookupName(previous) ? previous : newToken();
  const secret = tokenSecret(token, adminGrant(randomUUID()), namespace);
  const res = await kubeRequest(base, 'POST', `/api/v1/namespaces/${namespace}/secrets`, secret);
  if (res.status >= 300) throw new Error(`could not store the admin token: ${JSON.stringify(res.body)}`);
  return token;
}

interface Child { name: string; process: ChildProcess; exited: Promise<number | null> }

/** Sandbox tunables of this process's environment that dev hands to the operator (docs/sessions.md). */
const DAEMON_TUNABLES = ['SVC_SANDBOX_DIRECT_LOCAL_REPOS', 'SVC_SANDBOX_WARM', 'SVC_ENGINE_MAX_RESTARTS', 'SVC_ENGINE_RESTART_WINDOW_MS', 'SVC_ENGINE_RESTART_BACKOFF_MS', 'SVC_ENGINE_RESTART_MAX_BACKOFF_MS', 'SVC_ENGINE_BOOT_TIMEOUT_MS', 'SVC_START_DEADLINE_MS', 'SVC_START_RETRY_BACKOFF_MS', 'SVC_START_RETRY_MAX_BACKOFF_MS', 'SVC_HTTP_STALL_TIMEOUT_MS', ...CHECKPOINT_AND_PROGRESS_TUNABLES,
  // the controllers' safety net under the daemons' state events (docs/sessions.md), read by the operator
  'SVC_SANDBOX_RESYNC_PROVISIONING_SECONDS', 'SVC_SANDBOX_RESYNC_RUNNING_SECONDS',
  // the model gateway's limits (docs/gateway.md), read by the API
  'SVC_LLM_MAX_REQUEST_BYTES', 'SVC_LLM_USAGE_RETENTION_DAYS', 'SVC_LLM_USAGE_MAX_RECORDS'];

/**
 * The operator's and the API's own settings (src/main/operator-root.ts, api-root.ts) that dev passes on from its
 * environment, as the chart passes its values on: `SVC_TRIGGER_FIRE_HISTORY=3 svc dev` works like
 * `--fire-history 3` (a flag wins). Only these: dev's shell may hold SVC_API_URL and a token.
 */
const COMPONENT_TUNABLES = ['SVC_ENGINE_COMMAND', 'SVC_MAX_CONCURRENT_SESSIONS', 'SVC_IDLE_TIMEOUT', FIRE_HISTORY_ENV, SESSION_HISTORY_ENV,
  'SVC_TRIGGER_SCHEDULER_INTERVAL_MS', 'SVC_TRIGGER_CATCH_UP_SECONDS', 'SVC_TRIGGER_MAX_FAILURES', 'SVC_TRIGGER_QUEUE_DEPTH',
  'SVC_WEBHOOK_BODY_LIMIT_BYTES', 'SVC_GIT_MAX_PUSH_BYTES', 'SVC_GIT_SPAWN_WORKERS', 'SVC_MERGE_CLAIM_TIMEOUT_SECONDS',
  'SVC_PROJECT_RESYNC_SECONDS', 'SVC_LEASE_DURATION_SECONDS', 'SVC_CR_FETCH_MAX_AGE_MS', 'SVC_DIFF_MAX_FILE_BYTES', 'SVC_DIFF_MAX_TOTAL_BYTES',
  'SVC_MERGE_AUTHOR_NAME', 'SVC_MERGE_AUTHOR_EMAIL', 'SVC_DASHBOARD_DIR', 'SVC_GRACEFUL_SHUTDOWN_TIMEOUT_MS'];

/** Every setting dev passes on from its environment to the operator and the API (docs/dev.md). */
export const PASSED_ON_SETTINGS: readonly string[] = [...COMPONENT_TUNABLES, ...KUBERNETES_SANDBOX_SETTINGS, ...DAEMON_TUNABLES, ...JAIL_SETTINGS];

/** The session and trigger settings of `svc dev`'s flags and environment, as the operator's and the API's environment (contracts.md). */
function sessionEnv(options: DevOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { SVC_SANDBOX_PROVIDER: options.provider ?? 'process' };
  for (const name of PASSED_ON_SETTINGS) if (process.env[name]) env[name] = process.env[name];
  if (options.engineCommand) env.SVC_ENGINE_COMMAND = options.engineCommand;
  if (options.maxSessions !== undefined) env.SVC_MAX_CONCURRENT_SESSIONS = String(options.maxSessions);
  if (options.idleTimeoutSeconds !== undefined) env.SVC_IDLE_TIMEOUT = String(options.idleTimeoutSeconds);
  if (options.fireHistory !== undefined) env[FIRE_HISTORY_ENV] = String(options.fireHistory);
  if (options.sessionHistory !== undefined) env[SESSION_HISTORY_ENV] = String(options.sessionHistory);
  return env;
}

function startChild(name: string, script: string, env: NodeJS.ProcessEnv, log: (line: string) => void, onLine?: (line: string) => void): Child {
  // stdin: a pipe that ends with this process, whatever ends it (exitWithParent)
  const child = spawn(process.execPath, [path.join(MAIN_DIR, script)], { env: { ...env, [EXIT_WITH_PARENT_ENV]: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
  const forward = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line) continue;
      onLine?.(line);
      log(`[${name}] ${line}`);
    }
  };
  child.stdout!.on('data', forward);
  child.stderr!.on('data', forward);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { name, process: child, exited };
}

async function stopChild(child: Child, graceMs = 10_000): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill('SIGTERM');
  const timer = setTimeout(() => child.process.kill('SIGKILL'), graceMs);
  await child.exited;
  clearTimeout(timer);
}

/** How often a start that waits on a child says what it still waits for. */
const STILL_WAITING_MS = 10_000;

/**
 * Polls `check` until it answers true. Ends with an error when the child exits first, and with the
 * signal's reason when the start is stopped: a stop never waits for a child that does not come up.
 * Every STILL_WAITING_MS it says what it waits for and what `check` last answered.
 */
async function waitForChild(child: Child, what: string, check: () => Promise<true | string> | true | string, log: (line: string) => void, signal?: AbortSignal): Promise<void> {
  const started = Date.now();
  let said = started;
  for (;;) {
    signal?.throwIfAborted();
    if (child.process.exitCode !== null || child.process.signalCode !== null) {
      throw new Error(`the ${child.name} process exited (${child.process.signalCode ?? `code ${child.process.exitCode}`}) while svc dev waited for ${what}`);
    }
    const state = await check();
    if (state === true) return;
    if (Date.now() - said >= STILL_WAITING_MS) {
      said = Date.now();
      log(`svc dev: still waiting for ${what} after ${Math.round((said - started) / 1000)} s${state ? ` (${state})` : ''}`);
    }
    await sleep(100, undefined, { signal }).catch(() => undefined);
  }
}

/** true once GET /readyz answers 2xx, else what it answered. */
async function apiReadiness(url: string): Promise<true | string> {
  try {
    const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) });
    if (res.ok) return true;
    const error = jsonErrorText(await res.text());
    return `${url}/readyz answers ${res.status}${error === undefined ? '' : `: ${error}`}`;
  } catch (error) {
    return `${url}/readyz: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * What the operator did not stop (a sandbox started just before a crash that no operator has
 * adopted yet; the operator killed at its grace): svc dev owns the data directory, so nothing of
 * it outlives svc dev. Before the API stops: the sandboxes checkpoint on their way out.
 */
async function stopLeftoverSandboxes(dataDir: string, isolation: IsolationStatus, log: (line: string) => void): Promise<void> {
  const sandboxDir = path.join(dataDir, 'sandboxes');
  if (!existsSync(sandboxDir) || isolation.mode === 'unavailable') return;
  // only the slots' records and namespaces are touched: no port or mount of the jail matters here
  const provider = new ProcessSandboxProvider({ dataDir: sandboxDir, agentCommand: [], isolation: isolation.mode === 'jail' ? new Jail({ apiPorts: [], toolchain: [] }) : 'none' });
  await provider.stopRecorded().catch((error: Error) => log(`svc dev: some sandboxes could not be stopped: ${error.message}`));
}

export async function runDev(options: DevOptions): Promise<DevHandle> {
  // The tools sessions need, before anything starts: every missing one named with how to get it.
  // the engine of --engine-command, else of SVC_ENGINE_COMMAND passed on (sessionEnv)
  await runPreflight(devPreflightChecks({ engineCommand: options.engineCommand ?? (process.env.SVC_ENGINE_COMMAND || undefined), unsafeNoIsolation: options.unsafeNoIsolation }));
  const dataDir = path.resolve(options.dataDir);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  // one svc dev per data directory (data-dir-lock.ts), before anything reads or writes it
  const unlock = lockDataDir(dataDir);
  try {
    return await runDevOn(dataDir, unlock, options);
  } catch (error) {
    unlock();
    throw error;
  }
}

async function runDevOn(dataDir: string, unlock: () => void, options: DevOptions): Promise<DevHandle> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const namespace = options.namespace ?? 'default';
  const kubeconfigPath = path.join(dataDir, 'kubeconfig');
  const envPath = path.join(dataDir, 'env');
  const previousEnv = parseEnvFile(await readFile(envPath, 'utf8').catch(() => ''));

  // Both ports checked before anything starts: a taken one is a clear error and a non-zero exit.
  if (options.apiPort !== 0 && options.apiPort === options.kubePort) throw new Error(`--api-port and --kube-port are both ${options.apiPort}: give each its own port (0 = any free port)`);
  // (it waited for its API's readiness forever on one fetch refuses, saying nothing; on such a
  // --kube-port it said only "fetch failed")
  assertFetchablePort(options.apiPort, '--api-port', 'neither the dashboard nor the CLI could reach the API');
  assertFetchablePort(options.kubePort, '--kube-port', 'svc dev could not reach its own local cluster');
  await assertPortFree(options.kubePort, '127.0.0.1', '--kube-port');
  await assertPortFree(options.apiPort, '127.0.0.1', '--api-port');
  // --sandbox-mount paths are checked (never the data directory) before anything starts too
  const mounts = (options.sandboxMounts ?? []).map((value) => parseSandboxMount(value, dataDir));
  const isolation = await isolationStatus(options.unsafeNoIsolation ?? false);
  for (const line of isolationLines(isolation)) log(line);
  const nodeDir = path.join(dataDir, 'node');
  // `kubectl logs` (and a failed sandbox's kept log) of the node simulator's pods come from its files
  const cluster: LocalCluster = await startLocalCluster({ dataDir: path.join(dataDir, 'cluster'), port: options.kubePort, podLogs: podLogReader(nodeDir) });
  const children: Child[] = [];
  let stopping = false;
  let reportFailure: (message: string) => void = () => {};
  const failed = new Promise<string>((resolve) => { reportFailure = resolve; });
  // a crashed operator's sandboxes outlive svc dev, as after a kill -9: the next operator adopts them
  let operatorCrashed = false;
  const watch = (child: Child) => {
    void child.exited.then((code) => {
      if (stopping) return;
      if (child.name === 'operator') operatorCrashed = true;
      reportFailure(`the ${child.name} process exited unexpectedly (code ${code})`);
    });
    return child;
  };
  let node: NodeSimulator | undefined;
  const stop = async () => {
    stopping = true;
    // the operator first (its sandboxes checkpoint through the API on their way out), with room for that
    for (const child of [...children].reverse()) {
      await stopChild(child, child.name === 'operator' ? SANDBOX_STOP_GRACE_MS + 5_000 : undefined);
      if (child.name === 'operator' && !operatorCrashed) await stopLeftoverSandboxes(dataDir, isolation, log);
    }
    await node?.close();
    await cluster.close();
    unlock();
  };
  try {
    await writePrivate(kubeconfigPath, adminKubeconfig(cluster, { namespace }));
    const kube = clusterFetch(cluster);
    await ensureNamespace(kube, namespace);
    const crds = await applyCrds(kube);
    log(`svc dev: local cluster at ${cluster.url} (data in ${dataDir}), ${crds.length} CRDs applied`);
    const token = await ensureAdminToken(kube, namespace, previousEnv.SVC_CLI_TOKEN);

    const baseEnv: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      KUBECONFIG: kubeconfigPath,
      SVC_NAMESPACE: namespace,
      SVC_PROJECT_NAMESPACE: namespace,
      // dev works on repositories of this machine; a deployment never sets it (docs/dev.md)
      SVC_ALLOW_LOCAL_REPOS: '1',
      NODE_OPTIONS: process.env.NODE_OPTIONS,
      ...sessionEnv(options),
      SVC_SANDBOX_ISOLATION: isolation.mode === 'none' ? 'none' : 'jail',
      ...(mounts.length ? { SVC_SANDBOX_MOUNTS: JSON.stringify(mounts) } : {}),
      ...(options.sandboxHostPorts?.length ? { SVC_SANDBOX_HOST_PORTS: options.sandboxHostPorts.join(',') } : {}),
    };
    let apiPort = options.apiPort;
    let listened = false;
    let sandboxApiBase: string | undefined;
    const listening = /listening on http:\/\/127\.0\.0\.1:(\d+)/;
    const listeningForSandboxes = /listening for sandboxes on (http:\/\/[^\s"]+)/;
    // each process its own mirror dir: a process removes the mirrors of Projects it does not see;
    // isolated sandboxes reach the API at the gateway address (docs/sandboxes.md)
    const api = startChild('api', 'api.js', {
      ...baseEnv, SVC_HTTP_PORT: String(options.apiPort), SVC_HTTP_HOST: '127.0.0.1', SVC_MIRROR_DIR: path.join(dataDir, 'api-mirrors'),
      ...(isolation.mode === 'jail' ? { SVC_HTTP_SANDBOX_HOST: isolation.gateway } : {}),
    }, log, (line) => {
      const m = listening.exec(line);
      if (m) { apiPort = Number(m[1]); listened = true; }
      const s = listeningForSandboxes.exec(line);
      if (s) sandboxApiBase = s[1];
    });
    children.push(watch(api));
    // Wait for this child's own "listening" line (with --api-port 0 it also names the port):
    // polling the port alone could reach another server that holds it.
    await waitForChild(api, 'the API to listen', () => (listened && apiPort !== 0 && (isolation.mode !== 'jail' || sandboxApiBase !== undefined)) || '', log, options.signal);
    const apiBase = `http://127.0.0.1:${apiPort}`;
    await waitForChild(api, 'the API to be ready', () => apiReadiness(apiBase), log, options.signal);
    const apiUrl = `${apiBase}/v1`;
    const sandboxApiUrl = sandboxApiBase ? `${sandboxApiBase}/v1` : apiUrl;
    if (options.provider === 'kubernetes') {
      // no kubelet here: the node simulator runs the sandbox Pods as local processes (docs/kubernetes.md)
      node = await startSandboxNode({
        cluster,
        dataDir: nodeDir,
        agentCommand: [process.execPath, path.join(REPO_ROOT, 'bin/svc-agent.js')],
        svcCommand: [process.execPath, path.join(REPO_ROOT, 'bin/svc.js')],
        isolation: isolation.mode === 'jail' ? { jail: sandboxJail(sandboxApiUrl, REPO_ROOT, baseEnv) }
          : isolation.mode === 'unavailable' ? { unavailable: isolation.message } : 'none',
        log: (line) => log(`[node] ${line}`),
      });
      log(`svc dev: sandboxes run as Pods on the node simulator (${isolation.mode === 'jail' ? 'each pod jailed on its own address' : 'pods as local processes on 127.0.0.N'})`);
    }
    // The operator starts after the API: its sandboxes need the API's URL (git gateway, clone credential).
    let operatorUp = false;
    const operator = startChild('operator', 'operator.js', {
      ...baseEnv,
      SVC_POD_NAME: `svc-dev-operator-${process.pid}`,
      SVC_HTTP_PORT: '0',
      SVC_HTTP_HOST: '127.0.0.1',
      SVC_MIRROR_DIR: path.join(dataDir, 'mirrors'),
      ...(options.projectResyncSeconds !== undefined ? { SVC_PROJECT_RESYNC_SECONDS: String(options.projectResyncSeconds) } : {}),
      SVC_SANDBOX_API_URL: sandboxApiUrl,
      SVC_SANDBOX_DIR: path.join(dataDir, 'sandboxes'),
    }, log, (line) => { if (/health on port \d+/.test(line)) operatorUp = true; });
    children.push(watch(operator));
    // "running" only once the operator is up too (its health line), never before a child dies
    await waitForChild(operator, 'the operator to start', () => operatorUp || '', log, options.signal);
    // the bundled tools (helm, the pinned opencode) first on PATH for whoever sources the file
    const bundledBin = path.join(REPO_ROOT, 'node_modules', '.bin');
    const pathLine = existsSync(bundledBin) ? `export PATH=${shellQuote(bundledBin)}:"$PATH"\n` : '';
    await writePrivate(envPath, envFileText({ KUBECONFIG: kubeconfigPath, SVC_API_URL: apiUrl, SVC_CLI_TOKEN: token }) + pathLine);
    log([
      'svc dev is running.',
      `  API:        ${apiUrl}`,
      `  sandboxes:  reach the API at ${sandboxApiUrl}`,
      `  dashboard:  ${apiBase}/  (sign in with the admin token: ${token})`,
      `  cluster:    ${cluster.url}`,
      `  kubeconfig: ${kubeconfigPath}`,
      '',
      'In another shell:',
      `  source ${/^[\w./-]+$/.test(envPath) ? envPath : shellQuote(envPath)}`,
      '  kubectl get svcdev -A',
      '  svc projects create NAME --repo URL',
      '',
      'Stop with Ctrl-C; start again with the same --data-dir to get everything back.',
      ...(isolation.mode === 'jail' ? [] : ['', ...isolationLines(isolation)]),
    ].join('\n'));
    return { kubeUrl: cluster.url, apiUrl, sandboxApiUrl, kubeconfigPath, envPath, token, failed, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
