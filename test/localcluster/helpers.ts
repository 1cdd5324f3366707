// Shared by the local cluster tests: an in-process cluster on a temp dir, a kubeconfig, and
// helpers to run the real kubectl/helm against it and to make raw HTTP calls.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clusterFetch, type ClusterFetch } from '../../src/localcluster/client.js';
import { adminKubeconfig, startLocalCluster } from '../../src/localcluster/index.js';
import type { LocalCluster, LocalClusterOptions } from '../../src/localcluster/index.js';

export const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/localcluster');
export const HELM = path.resolve(import.meta.dirname, '../../node_modules/.bin/helm');

export interface RunResult { code: number | null; stdout: string; stderr: string }

/** Runs a binary without blocking the event loop (the cluster under test shares it). */
export function run(cmd: string, args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: opts.env ?? process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

export interface ApiResponse { status: number; body: Record<string, unknown> & { metadata?: Record<string, unknown> }; headers: Headers }

export interface TestCluster {
  cluster: LocalCluster;
  dir: string;
  kubeconfig: string;
  kubectl(args: string[], input?: string): Promise<RunResult>;
  /** kubectl that must succeed; returns stdout. */
  kubectlOk(args: string[], input?: string): Promise<string>;
  /** fetch() against the cluster as the admin: `tc.fetch('/api/v1/...')`. */
  fetch: ClusterFetch;
  /** A raw call as the admin (the token and the certificate picked up). */
  api(method: string, urlPath: string, body?: unknown, contentType?: string, accept?: string): Promise<ApiResponse>;
  close(): Promise<void>;
}

export async function startTestCluster(opts: Partial<LocalClusterOptions> = {}): Promise<TestCluster> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-localcluster-'));
  const cluster = await startLocalCluster({ dataDir: path.join(dir, 'data'), port: 0, ...opts });
  const kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, adminKubeconfig(cluster), { mode: 0o600 });
  const kube = clusterFetch(cluster);
  const env = { ...process.env, KUBECONFIG: kubeconfig, HOME: dir };
  const kubectl = (args: string[], input?: string) => run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', path.join(dir, 'kcache'), ...args], { input, env });
  return {
    cluster,
    dir,
    kubeconfig,
    kubectl,
    fetch: kube,
    async kubectlOk(args, input) {
      const r = await kubectl(args, input);
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
      return r.stdout;
    },
    async api(method, urlPath, body, contentType = 'application/json', accept = 'application/json') {
      const res = await kube(urlPath, {
        method,
        headers: { 'content-type': contentType, accept },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : {}, headers: res.headers };
    },
    async close() {
      await cluster.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls until `check` returns a truthy value (events in the cluster are asynchronous, e.g. GC). */
export async function eventually<T>(check: () => Promise<T | undefined | false>, what: string, attempts = 100): Promise<T> {
  for (let i = 0; i < attempts; i++) {
    const v = await check();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export const WIDGETS = '/apis/test.svc.dev/v1/namespaces/default/widgets';

export function widget(name: string, spec: Record<string, unknown> = { size: 1 }, labels?: Record<string, string>) {
  return { apiVersion: 'test.svc.dev/v1', kind: 'Widget', metadata: { name, ...(labels ? { labels } : {}) }, spec };
}
