import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { KubeCache, KubeClient } from '../kube/index.js';
import type { Project } from '../resources/index.js';
import { LIVE_PROJECT_READS, projectLookup } from './project-lookup.js';

describe('projectLookup', () => {
  const project = { apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'web', namespace: 'default', uid: randomUUID() }, spec: { repoUrl: 'r' } } as Project;
  function doubles(items: Project[]) {
    const state = { lists: 0, now: 0 };
    const client = { resource: () => ({ list: async () => { state.lists++; return { items }; } }) } as unknown as KubeClient;
    const cache = { resource: () => ({ byUid: () => undefined }) } as unknown as KubeCache;
    return { state, find: projectLookup(client, cache, { now: () => state.now }) };
  }

  it('reads live on a cache miss (a Project created a moment ago is found)', async () => {
    const { find, state } = doubles([project]);
    expect(await find('default', project.metadata.uid!)).toBe(project);
    expect(await find('other', project.metadata.uid!)).toBeUndefined();
    expect(state.lists).toBe(2);
  });

  it('reads live a burst of times, then a few a second: made-up ids cannot turn each request into a list of every Project', async () => {
    const { find, state } = doubles([project]);
    for (let i = 0; i < 200; i++) expect(await find('default', randomUUID())).toBeUndefined();
    expect(state.lists).toBe(LIVE_PROJECT_READS.burst);
    state.now = 1_000;
    for (let i = 0; i < 200; i++) await find('default', randomUUID());
    expect(state.lists).toBe(LIVE_PROJECT_READS.burst + LIVE_PROJECT_READS.perSecond);
    // another namespace has its own
    await find('other', randomUUID());
    expect(state.lists).toBe(LIVE_PROJECT_READS.burst + LIVE_PROJECT_READS.perSecond + 1);
  });
});
