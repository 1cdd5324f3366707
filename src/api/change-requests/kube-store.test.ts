import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { KubeClient } from '../../kube/index.js';
import { CHANGE_REQUEST, type ChangeRequest, type Project } from '../../resources/index.js';
import { kubeChangeRequestStore } from './kube-store.js';

describe('kubeChangeRequestStore.get', () => {
  const project = { apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'web', namespace: 'default', uid: randomUUID() }, spec: { repoUrl: 'r' } } as Project;
  const cr = (n: number): ChangeRequest => ({
    apiVersion: 'svc.dev/v1alpha1', kind: 'ChangeRequest',
    metadata: { name: `web-${n}`, namespace: 'default', uid: randomUUID(), labels: { 'svc.dev/project': 'web' }, ownerReferences: [{ apiVersion: 'svc.dev/v1alpha1', kind: 'Project', name: 'web', uid: project.metadata.uid! }] },
    spec: { projectRef: { name: 'web' }, number: n, title: 't', headRef: `h${n}`, baseRef: 'main' },
  } as unknown as ChangeRequest);

  function doubles(stored: ChangeRequest[], now?: () => number) {
    const calls = { list: 0, find: 0 };
    const crs = {
      list: async () => { calls.list++; return { items: stored }; },
      find: async (_ns: string, name: string) => { calls.find++; return stored.find((c) => c.metadata.name === name); },
    };
    const client = { resource: (type: unknown) => (type === CHANGE_REQUEST ? crs : {}) } as unknown as KubeClient;
    return { calls, store: kubeChangeRequestStore(client, { findProject: async () => project, now }) };
  }

  it('reads a change request it has seen by name, not by listing its project\'s every change request', async () => {
    const all = Array.from({ length: 50 }, (_, i) => cr(i + 1));
    const { calls, store } = doubles(all);
    expect(await store.get(project, all[7]!.metadata.uid!)).toBe(all[7]); // not seen yet: one list
    expect(calls).toEqual({ list: 1, find: 0 });
    for (const c of all) expect(await store.get(project, c.metadata.uid!)).toBe(c);
    expect(calls).toEqual({ list: 1, find: 50 });
  });

  it('ids nobody made list the project at most 20 at once, then 10 a second; a change request seen since is still found', async () => {
    let t = 0;
    const all = [cr(1), cr(2)];
    const { calls, store } = doubles(all, () => t);
    for (let i = 0; i < 100; i++) expect(await store.get(project, randomUUID())).toBeUndefined();
    expect(calls.list).toBe(20);
    t += 1000;
    for (let i = 0; i < 100; i++) await store.get(project, randomUUID());
    expect(calls.list).toBe(30);
    // the lists taught it the real ones: read by name, no list needed
    expect(await store.get(project, all[1]!.metadata.uid!)).toBe(all[1]);
    expect(calls.list).toBe(30);
  });

  it('a name that now holds another change request (deleted and made again) is read again by listing', async () => {
    const first = cr(1);
    const stored = [first];
    const { calls, store } = doubles(stored);
    await store.list(project);
    stored[0] = cr(1); // the same name, a new uid
    expect(await store.get(project, first.metadata.uid!)).toBeUndefined();
    expect(calls).toEqual({ list: 2, find: 1 });
  });
});
