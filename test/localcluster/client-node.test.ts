// @kubernetes/client-node 1.4 (what src/kube uses) against the local cluster: an informer sees
// ADDED/MODIFIED/DELETED, a watch from a too-old resourceVersion gets 410, a stale replace 409.
import { CustomObjectsApi, KubeConfig, PatchStrategy, Watch, makeInformer, setHeaderOptions } from '@kubernetes/client-node';
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES, WIDGETS, eventually, startTestCluster, widget } from './helpers.js';
import type { TestCluster } from './helpers.js';

let tc: TestCluster;
let kc: KubeConfig;
let api: CustomObjectsApi;
const ref = { group: 'test.svc.dev', version: 'v1', namespace: 'default', plural: 'widgets' };

beforeAll(async () => {
  // A short watch history, so that "too old" is reachable in a test.
  tc = await startTestCluster({ watchHistory: 5 });
  await tc.kubectlOk(['apply', '-f', path.join(FIXTURES, 'widget-crd.yaml')]);
  kc = new KubeConfig();
  kc.loadFromString(readFileSync(tc.kubeconfig, 'utf8'));
  api = kc.makeApiClient(CustomObjectsApi);
});
afterAll(async () => tc?.close());

it('an informer sees ADDED, MODIFIED and DELETED', async () => {
  const seen: string[] = [];
  const informer = makeInformer<KubernetesObject>(kc, WIDGETS, () => api.listNamespacedCustomObject(ref) as never);
  informer.on('add', (o) => seen.push(`add ${o.metadata?.name}`));
  informer.on('update', (o) => seen.push(`update ${o.metadata?.name} ${(o as { spec?: { size?: number } }).spec?.size}`));
  informer.on('delete', (o) => seen.push(`delete ${o.metadata?.name}`));
  await informer.start();
  try {
    await api.createNamespacedCustomObject({ ...ref, body: widget('inf', { size: 1 }) });
    await api.patchNamespacedCustomObject({ ...ref, name: 'inf', body: { spec: { size: 2 } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    await api.deleteNamespacedCustomObject({ ...ref, name: 'inf' });
    await eventually(async () => seen.includes('delete inf'), 'the delete event');
    expect(seen).toEqual(['add inf', 'update inf 2', 'delete inf']);
    expect(informer.list()).toEqual([]);
  } finally {
    await informer.stop();
  }
});

it('a watch from a resourceVersion older than the kept history gets 410 Expired', async () => {
  for (let i = 0; i < 8; i++) await api.createNamespacedCustomObject({ ...ref, body: widget(`old-${i}`) });
  const events: { type: string; object: { code?: number; reason?: string } }[] = [];
  await new Promise<void>((resolve, reject) => {
    new Watch(kc).watch(WIDGETS, { resourceVersion: '1' }, (type, object) => events.push({ type, object }), (err) => (err ? reject(err) : resolve())).catch(reject);
  });
  expect(events).toEqual([{ type: 'ERROR', object: expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired' }) }]);
});

it('a watch replays the changes after a recent resourceVersion', async () => {
  const start = await api.getNamespacedCustomObject({ ...ref, name: 'old-7' }) as KubernetesObject;
  await api.patchNamespacedCustomObject({ ...ref, name: 'old-7', body: { spec: { size: 9 } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
  const events: string[] = [];
  const controller = await new Watch(kc).watch(WIDGETS, { resourceVersion: start.metadata!.resourceVersion }, (type, o: { metadata: { name: string } }) => events.push(`${type} ${o.metadata.name}`), () => undefined);
  try {
    await eventually(async () => events.length > 0, 'the replayed event');
    expect(events).toEqual(['MODIFIED old-7']);
  } finally {
    controller.abort();
  }
});

it('a replace with a stale resourceVersion gets 409 Conflict and changes nothing', async () => {
  const current = await api.getNamespacedCustomObject({ ...ref, name: 'old-0' }) as KubernetesObject & { spec: { size: number } };
  await api.replaceNamespacedCustomObject({ ...ref, name: 'old-0', body: { ...current, spec: { size: 10 } } });
  const stale = api.replaceNamespacedCustomObject({ ...ref, name: 'old-0', body: { ...current, spec: { size: 20 } } });
  await expect(stale).rejects.toMatchObject({ code: 409 });
  const after = await api.getNamespacedCustomObject({ ...ref, name: 'old-0' }) as { spec: { size: number } };
  expect(after.spec.size).toBe(10);
});
