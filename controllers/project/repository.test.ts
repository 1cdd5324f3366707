import { describe, expect, it } from 'vitest';
import type { Project } from '../../src/resources/index.js';
import type { Observation } from './desired.js';
import { rememberedReads, type ReadRepository } from './repository.js';

const project = (uid: string, extra: { generation?: number; refresh?: string; repoUrl?: string } = {}): Project => ({
  apiVersion: 'svc.dev/v1alpha1', kind: 'Project',
  metadata: { name: uid, namespace: 'default', uid, generation: extra.generation ?? 1, ...(extra.refresh ? { annotations: { 'svc.dev/refresh': extra.refresh } } : {}) },
  spec: { repoUrl: extra.repoUrl ?? '/srv/repo.git', defaultBranch: 'main' },
});

describe('rememberedReads', () => {
  it('reads a repository once per resync interval unless the spec or the refresh token changed', async () => {
    let t = 0;
    const reads: string[] = [];
    const read: ReadRepository = async (p) => { reads.push(p.metadata.uid!); return { kind: 'branch-missing', sha: null } satisfies Observation; };
    const remembered = rememberedReads(read, { maxAgeMs: 30_000, now: () => t });
    await remembered(project('a'), null);
    t = 10_000;
    await remembered(project('a'), null); // woken by its Triggers: the same read
    await remembered(project('b'), null);
    expect(reads).toEqual(['a', 'b']);
    await remembered(project('a', { generation: 2 }), null);
    await remembered(project('a', { generation: 2, refresh: 'x' }), null);
    await remembered(project('a', { generation: 2, refresh: 'x', repoUrl: '/srv/other.git' }), null);
    expect(reads).toEqual(['a', 'b', 'a', 'a', 'a']);
    t = 40_001; // the resync requeue
    await remembered(project('a', { generation: 2, refresh: 'x', repoUrl: '/srv/other.git' }), null);
    expect(reads).toHaveLength(6);
  });

  it('remembers at most `limit` projects', async () => {
    const reads: string[] = [];
    const remembered = rememberedReads(async (p) => { reads.push(p.metadata.uid!); return { kind: 'branch-missing', sha: null }; }, { maxAgeMs: 60_000, limit: 2, now: () => 0 });
    for (const uid of ['a', 'b', 'c', 'a']) await remembered(project(uid), null);
    expect(reads).toEqual(['a', 'b', 'c', 'a']); // a was forgotten when c came
  });
});
