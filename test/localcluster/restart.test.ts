// The process entry (src/localcluster/main.ts) killed with SIGKILL mid-stream and restarted on
// the same data directory: every acknowledged write is there. Also: clean exit on SIGTERM, and a
// journal compacted into a snapshot loads back the same state.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { build } from 'esbuild';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { clusterFetch, type ClusterFetch } from '../../src/localcluster/client.js';
import { Cluster } from '../../src/localcluster/cluster.js';

let dir: string;
let entry: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-localcluster-restart-'));
  // The process as `node dist/src/localcluster/main.js` runs it, without needing a full build.
  entry = path.join(dir, 'main.mjs');
  await build({ entryPoints: [path.resolve(import.meta.dirname, '../../src/localcluster/main.ts')], bundle: true, platform: 'node', format: 'esm', outfile: entry, logLevel: 'error' });
});
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** The process on `dataDir`, and fetch() as its admin (the token and certificate it keeps in its data dir). */
async function startProcess(dataDir: string): Promise<{ child: ChildProcess; url: string; fetch: ClusterFetch }> {
  const child = spawn(process.execPath, [entry, '--data-dir', dataDir, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`localcluster exited with ${code}`)));
  });
  const url = line.trim();
  const access = { url, token: readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim(), ca: readFileSync(path.join(dataDir, 'serving.crt'), 'utf8') };
  return { child, url, fetch: clusterFetch(access) };
}

const exited = (child: ChildProcess) => new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));

it('kill -9 loses nothing that was acknowledged', async () => {
  const dataDir = path.join(dir, 'kill');
  const first = await startProcess(dataDir);
  expect(first.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  expect((await fetch(`${first.url}/api/v1/namespaces`, { dispatcher: new Agent({ connect: { ca: readFileSync(path.join(dataDir, 'serving.crt')) } }) })).status).toBe(401);
  const cms = '/api/v1/namespaces/default/configmaps';
  // Concurrent writes (group-committed); the process is killed the moment the last is acknowledged.
  const acked = await Promise.all(Array.from({ length: 50 }, async (_, i) => {
    const res = await first.fetch(cms, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: { i: String(i) } }) });
    expect(res.status).toBe(201);
    return (await res.json()) as { metadata: { name: string; uid: string; resourceVersion: string } };
  }));
  const patched = await first.fetch(`${cms}/cm-0`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json' }, body: '{"data":{"i":"changed"}}' });
  expect(patched.status).toBe(200);
  const deleted = await first.fetch(`${cms}/cm-1`, { method: 'DELETE' });
  expect(deleted.status).toBe(200);
  first.child.kill('SIGKILL');
  await exited(first.child);

  const second = await startProcess(dataDir);
  const list = (await (await second.fetch('/api/v1/namespaces/default/configmaps')).json()) as { metadata: { resourceVersion: string }; items: { metadata: { name: string; uid: string }; data: { i: string } }[] };
  const byName = new Map(list.items.map((o) => [o.metadata.name, o]));
  expect(byName.size).toBe(49);
  expect(byName.has('cm-1')).toBe(false);
  expect(byName.get('cm-0')!.data.i).toBe('changed');
  for (const a of acked.slice(2)) expect(byName.get(a.metadata.name)!.metadata.uid).toBe(a.metadata.uid);
  // resourceVersions keep counting up after a restart.
  const maxAcked = Math.max(...acked.map((a) => Number(a.metadata.resourceVersion)));
  expect(Number(list.metadata.resourceVersion)).toBeGreaterThan(maxAcked);

  second.child.kill('SIGTERM');
  expect(await exited(second.child)).toBe(0);
});

it('a compacted journal loads back the same state', async () => {
  const dataDir = path.join(dir, 'compact');
  const c1 = await Cluster.open(dataDir);
  const t = c1.type('', 'v1', 'configmaps');
  await c1.create(t, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'before' } });
  c1.compact();
  await c1.create(t, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after' } });
  await c1.delete(t, 'default', 'before');
  const rv = c1.resourceVersion;
  await c1.close();
  const c2 = await Cluster.open(dataDir);
  const { items, resourceVersion } = await c2.list(t, 'default', {});
  expect(items.map((o) => o.metadata!.name)).toEqual(['after']);
  expect(resourceVersion).toBe(String(rv));
  await c2.close();
});
