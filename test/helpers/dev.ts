// Starts `svc dev` (the built CLI, as a user runs it) on free ports and a temporary data dir,
// and returns its URLs, its env and a way to stop it (or restart it on the same dir). Sandboxes
// run isolated, as for a user (docs/sandboxes.md): a fixture engine outside the toolchain is
// shown to them with --sandbox-mount (fixtureEngineArgs).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Jail } from '../../src/lib/jail/index.js';
import { parseEnvFile } from '../../src/main/env-file.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SVC = path.join(REPO_ROOT, 'bin/svc.js');

export interface DevInstance {
  dataDir: string;
  kubeconfig: string;
  apiUrl: string;
  /** Where sandboxes reach the API (svc dev prints it): the gateway address when isolated. */
  sandboxApiUrl: string;
  token: string;
  /** Environment for kubectl and the svc CLI: KUBECONFIG, SVC_API_URL, SVC_CLI_TOKEN. */
  env: NodeJS.ProcessEnv;
  /** Everything svc dev printed so far. */
  output(): string;
  process: ChildProcess;
  /** SIGTERM and wait; returns the exit code. */
  stop(): Promise<number | null>;
  /** Started `detached`: sends `signal` to svc dev and every process of its group (the API, the operator), and waits. */
  killGroup(signal: NodeJS.Signals): Promise<void>;
}

/** Starts svc dev on `dataDir` (a new temp dir by default); resolves once it printed that it runs. */
export async function startDev(options: { dataDir?: string; extraEnv?: NodeJS.ProcessEnv; timeoutMs?: number; args?: string[]; detached?: boolean; uid?: number } = {}): Promise<DevInstance> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'svc-dev-'));
  const child = spawn(process.execPath, [SVC, 'dev', '--data-dir', dataDir, '--api-port', '0', '--kube-port', '0', ...(options.args ?? [])], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...options.extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
    // its own process group: `kill -9` of the group is a crash of svc dev and its children
    detached: options.detached ?? false,
    // another user (root can): what svc dev does without the rights isolation needs
    ...(options.uid !== undefined ? { uid: options.uid, gid: options.uid } : {}),
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
  child.stderr!.on('data', (c: Buffer) => { output += c.toString(); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`svc dev did not start in time:\n${output}`)), options.timeoutMs ?? 45_000);
    const check = () => {
      if (output.includes('svc dev is running.')) { clearTimeout(timer); resolve(); }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => { clearTimeout(timer); reject(new Error(`svc dev exited (code ${code}):\n${output}`)); });
  });
  const env = parseEnvFile(readFileSync(path.join(dataDir, 'env'), 'utf8'));
  return {
    dataDir,
    kubeconfig: env.KUBECONFIG!,
    apiUrl: env.SVC_API_URL!,
    sandboxApiUrl: /sandboxes: {2}reach the API at (\S+)/.exec(output)?.[1] ?? env.SVC_API_URL!,
    token: env.SVC_CLI_TOKEN!,
    env: { ...process.env, ...env },
    output: () => output,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
    async killGroup(signal) {
      if (!options.detached) throw new Error('killGroup needs startDev({ detached: true })');
      try { process.kill(-child.pid!, signal); } catch { /* gone */ }
      await exited;
    },
  };
}

/**
 * svc dev's arguments to run `script` (a fixture engine, e.g. buildArtifacts().fixtureEngine) as
 * every sandbox's engine: --engine-command, and --sandbox-mount of its folder so that the
 * isolated sandbox sees it (read-only). `wrap` turns the engine's command into another one
 * (e.g. a shell that checks something first); it gets the quoted command without `{port}`.
 */
export function fixtureEngineArgs(script: string, wrap?: (command: string) => string): string[] {
  const command = `'${process.execPath}' '${script}'`;
  return ['--engine-command', wrap ? wrap(command) : `${command} --port {port}`, '--sandbox-mount', path.dirname(script)];
}

/**
 * The address isolated sandboxes reach this machine at (made if missing): a test server they
 * must reach listens here, and svc dev gets its port with --sandbox-host-port.
 */
export async function sandboxGateway(): Promise<string> {
  const jail = new Jail({ apiPorts: [], toolchain: [] });
  await jail.networks.ensureGateway();
  return jail.gateway;
}

/**
 * A REST call to svc dev's API (`urlPath` below /v1) with its admin token or `token`: the status,
 * the JSON body ({} when the answer is not JSON), the raw text and the content type.
 */
export async function callApi<T = Record<string, unknown>>(dev: DevInstance, method: string, urlPath: string, body?: unknown, token: string | null = dev.token): Promise<{ status: number; body: T; text: string; type: string | null }> {
  const res = await fetch(`${dev.apiUrl}${urlPath}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = {};
  try { parsed = text ? JSON.parse(text) : {}; } catch { /* not JSON: the text says it */ }
  return { status: res.status, body: parsed as T, text, type: res.headers.get('content-type') };
}

/** Removes a data dir made by startDev. */
export function removeDevDir(dataDir: string): void {
  rmSync(dataDir, { recursive: true, force: true });
}

/** Stops svc dev, ends the sandboxes a failed run may have left (by their state files), removes its data dir. */
export async function stopDevAndSandboxes(dev: DevInstance | undefined): Promise<void> {
  await dev?.stop();
  if (!dev) return;
  const root = path.join(dev.dataDir, 'sandboxes', 'default');
  for (const id of existsSync(root) ? readdirSync(root) : []) {
    try {
      const { pid } = JSON.parse(readFileSync(path.join(root, id, 'state.json'), 'utf8')) as { pid: number };
      process.kill(-pid, 'SIGKILL');
    } catch { /* gone */ }
  }
  removeDevDir(dev.dataDir);
}
