// The API and the operator as the chart runs them (dist/src/main/*.js, so build first) against a
// test cluster: one process each, killable with any signal, with only the env given here (no
// SVC_ALLOW_LOCAL_REPOS unless the caller passes it).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { adminKubeconfig } from '../../src/localcluster/index.js';
import { mintToken } from '../../src/api/tokens.js';
import type { KubeClient } from '../../src/kube/index.js';
import { SECRET, type KubeObject } from '../../src/resources/index.js';
import { REPO_ROOT } from './dev.js';

export interface MainProcess {
  process: ChildProcess;
  output(): string;
  /** http://127.0.0.1:PORT (the API) or the health port (the operator). */
  url: string;
  /** Sends `signal` (default SIGTERM) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** The host's processes of a session's sandbox (those with its SVC_SESSION_ID), jailed or not. */
export function sessionProcesses(sessionId: string): number[] {
  return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).map(Number).filter((pid) => {
    try { return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`SVC_SESSION_ID=${sessionId}`); } catch { return false; }
  });
}

/** An admin kubeconfig file for `cluster` (its URL, token and certificate) in a new temp dir. */
export function writeKubeconfig(cluster: { url: string; token: string; ca: string }): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'svc-kubeconfig-')), 'kubeconfig');
  writeFileSync(file, adminKubeconfig(cluster), { mode: 0o600 });
  return file;
}

/** An admin token (write, every capability) stored as a token Secret in `namespace`. */
export async function adminToken(client: KubeClient, namespace = 'default'): Promise<string> {
  const { token, secret } = mintToken({ userId: randomUUID(), access: 'write', capabilities: ['*'] }, namespace);
  await client.resource(SECRET).create(secret as unknown as KubeObject);
  return token;
}

/** What a process runs: its entry (the chart's), or its composition root from the tsc output (bench/process-start's baseline). */
type MainScript = 'api.js' | 'operator.js' | 'api-root.js' | 'operator-root.js';

/** A mirror dir of its own for a process not given one, removed when it exits (each `make test` left ~15 MB of them in /tmp). */
function ownMirrors(env: NodeJS.ProcessEnv, prefix: string): string | undefined {
  return env.SVC_MIRROR_DIR ? undefined : mkdtempSync(path.join(os.tmpdir(), prefix));
}

function startMain(script: MainScript, env: NodeJS.ProcessEnv, listening: RegExp, scratch?: string): Promise<MainProcess> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'dist/src/main', script)], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, SVC_NAMESPACE: 'default', SVC_HTTP_PORT: '0', SVC_HTTP_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
    resolve();
  }));
  const append = (chunk: Buffer) => { output += chunk.toString(); };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  return new Promise((resolve, reject) => {
    const check = () => {
      const m = listening.exec(output);
      if (!m) return;
      child.stdout!.off('data', check);
      resolve({
        process: child,
        output: () => output,
        url: `http://127.0.0.1:${m[1]}`,
        async stop(signal = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          await exited;
        },
      });
    };
    child.stdout!.on('data', check);
    void exited.then(() => reject(new Error(`${script} exited before listening:\n${output}`)));
  });
}

/**
 * The API process; resolves once its caches synced (`/readyz` 200: until then `/v1` answers 503),
 * or, with `ready: false`, as soon as it listens.
 */
export async function startApiProcess(kubeconfig: string, env: NodeJS.ProcessEnv = {}, options: { ready?: boolean; script?: 'api.js' | 'api-root.js' } = {}): Promise<MainProcess> {
  const mirrors = ownMirrors(env, 'svc-api-mirrors-');
  const api = await startMain(options.script ?? 'api.js', { KUBECONFIG: kubeconfig, SVC_MIRROR_DIR: mirrors, ...env }, /svc api listening on http:\/\/127\.0\.0\.1:(\d+)/, mirrors);
  while (options.ready !== false && !(await fetch(`${api.url}/readyz`).then((r) => r.ok, () => false))) {
    if (api.process.exitCode !== null) throw new Error(`the API exited before it was ready:\n${api.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return api;
}

/** The operator process; resolves once its health port listens. */
export function startOperatorProcess(kubeconfig: string, env: NodeJS.ProcessEnv = {}, options: { script?: 'operator.js' | 'operator-root.js' } = {}): Promise<MainProcess> {
  const mirrors = ownMirrors(env, 'svc-op-mirrors-');
  return startMain(options.script ?? 'operator.js', {
    KUBECONFIG: kubeconfig,
    SVC_POD_NAME: `op-${randomUUID().slice(0, 8)}`,
    SVC_LEASE_DURATION_SECONDS: '2',
    SVC_PROJECT_RESYNC_SECONDS: '2',
    SVC_MIRROR_DIR: mirrors,
    ...env,
  }, /health on port (\d+)/, mirrors);
}
