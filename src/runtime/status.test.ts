import { describe, expect, it } from 'vitest';
import type { ResourceClient } from '../kube/index.js';
import { setCondition, type Project } from '../resources/index.js';
import { statusChanged, updateStatus } from './status.js';

const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-01T01:00:00Z');

function recordingClient() {
  const writes: Project[] = [];
  const client = { replaceStatus: async (obj: Project) => (writes.push(obj), { ...obj, metadata: { ...obj.metadata, resourceVersion: '2' } }) };
  return { writes, client: client as unknown as ResourceClient<Project> };
}

const base: Project = {
  apiVersion: 'svc.dev/v1alpha1',
  kind: 'Project',
  metadata: { name: 'p', namespace: 'default', resourceVersion: '1' },
  spec: { repoUrl: 'x', defaultBranch: 'main' },
  status: {
    defaultBranchSha: 'aaa',
    lastChangeRequestNumber: 7,
    conditions: setCondition([], { type: 'Ready', status: 'True', reason: 'Ok', message: '' }, t0),
  },
};

describe('status writes', () => {
  it('ignore a difference in condition transition times only', () => {
    const churned = { ...base.status, conditions: base.status!.conditions!.map((c) => ({ ...c, lastTransitionTime: '2030-01-01T00:00:00Z' })) };
    expect(statusChanged(base.status, churned)).toBe(false);
    expect(statusChanged(base.status, { ...base.status, defaultBranchSha: 'bbb' })).toBe(true);
    const notReady = setCondition(base.status!.conditions, { type: 'Ready', status: 'False', reason: 'Broken', message: '' }, t1);
    expect(statusChanged(base.status, { ...base.status, conditions: notReady })).toBe(true);
    expect(statusChanged({ a: 1, b: undefined }, { a: 1 })).toBe(false);
  });

  it('write nothing when nothing changed', async () => {
    const { writes, client } = recordingClient();
    const same = setCondition(base.status!.conditions, { type: 'Ready', status: 'True', reason: 'Ok', message: '' }, t1);
    expect(await updateStatus(client, base, { defaultBranchSha: 'aaa', conditions: same })).toBe(base);
    expect(writes).toEqual([]);
  });

  it('write the merged status with the object resourceVersion, keeping fields the caller does not own', async () => {
    const { writes, client } = recordingClient();
    const updated = await updateStatus(client, base, { defaultBranchSha: 'bbb' });
    expect(writes).toHaveLength(1);
    expect(writes[0].metadata.resourceVersion).toBe('1');
    expect(writes[0].status).toMatchObject({ defaultBranchSha: 'bbb', lastChangeRequestNumber: 7 });
    expect(updated.metadata.resourceVersion).toBe('2');
  });
});
