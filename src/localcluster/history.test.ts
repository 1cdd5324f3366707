import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { Cluster } from './cluster.js';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('the watch history is bounded by bytes as well as by count: older versions of a large object go, a watch from them is 410', async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-history-'));
  const cluster = await Cluster.open(dir, 10_000, 1024 * 1024);
  const t = cluster.type('', 'v1', 'configmaps');
  const versions: string[] = [];
  for (let i = 0; i < 20; i++) {
    const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { v: `${i}`.padEnd(200 * 1024, 'x') } };
    const written = i === 0 ? await cluster.create(t, 'default', obj) : await cluster.update(t, 'default', 'big', { ...obj, metadata: { name: 'big' } });
    versions.push(written.metadata!.resourceVersion!);
  }
  const seen: string[] = [];
  const watch = (rv: string) => cluster.watch(t, 'default', { resourceVersion: rv }, (_type, o) => { seen.push((o.data as { v: string }).v.slice(0, 2)); });
  // 20 versions of 200 KB: about five fit in 1 MiB
  await expect(watch(versions[5]!)).rejects.toMatchObject({ code: 410, reason: 'Expired' });
  const stop = await watch(versions[16]!);
  expect(seen).toEqual(['17', '18', '19']);
  stop();
  await cluster.close();
});

it('objects whose owner never existed are collected and leave nothing behind in the owner index', async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'svc-history-'));
  const cluster = await Cluster.open(dir);
  const t = cluster.type('', 'v1', 'configmaps');
  for (let i = 0; i < 50; i++) {
    const owner = { apiVersion: 'v1', kind: 'ConfigMap', name: 'gone', uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` };
    await cluster.create(t, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `orphan-${i}`, ownerReferences: [owner] } });
  }
  await vi.waitFor(async () => expect((await cluster.list(t, 'default', {})).items).toEqual([]));
  expect((cluster as unknown as { dependents: Map<string, unknown> }).dependents.size).toBe(0);
  await cluster.close();
});
