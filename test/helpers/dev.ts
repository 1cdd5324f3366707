// Starts `svc dev` (the built CLI, as a user runs it) on free ports and a temporary data dir,
// and returns its URLs, its env and a way to stop it (or restart it on the same dir).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SVC = path.join(REPO_ROOT, 'bin/svc.js');

export interface DevInstance {
  dataDir: string;
  kubeconfig: string;
  apiUrl: string;
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

function parseEnv(text: string): Record<string, string> {
  return Object.fromEntries([...text.matchAll(/^export ([A-Z_]+)='([^']*)'$/gm)].map((m) => [m[1]!, m[2]!]));
}

/** Starts svc dev on `dataDir` (a new temp dir by default); resolves once it printed that it runs. */
export async function startDev(options: { dataDir?: string; extraEnv?: NodeJS.ProcessEnv; timeoutMs?: number; args?: string[]; detached?: boolean } = {}): Promise<DevInstance> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'svc-dev-'));
  const child = spawn(process.execPath, [SVC, 'dev', '--data-dir', dataDir, '--api-port', '0', '--kube-port', '0', ...(options.args ?? [])], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...options.extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
    // its own process group: `kill -9` of the group is a crash of svc dev and its children
    detached: options.detached ?? false,
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
  const env = parseEnv(readFileSync(path.join(dataDir, 'env'), 'utf8'));
  return {
    dataDir,
    kubeconfig: env.KUBECONFIG!,
    apiUrl: env.SVC_API_URL!,
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

/** Removes a data dir made by startDev. */
export function removeDevDir(dataDir: string): void {
  rmSync(dataDir, { recursive: true, force: true });
}
