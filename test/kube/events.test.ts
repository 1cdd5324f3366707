// Events bounded as Kubernetes bounds them, against the local cluster: the client counts repeats
// on one Event (kubectl describe shows "xN"), combines many similar ones, and the cluster expires
// Events nobody wrote to for the TTL (kube-apiserver --event-ttl).
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKubeconfig } from '../../src/localcluster/index.js';
import { EVENT, PROJECT, type KubeObject, type Project } from '../../src/resources/index.js';
import { eventually, projectObject, startTestCluster, type TestCluster } from './cluster.js';

type Event = KubeObject & { reason: string; message: string; count: number; firstTimestamp: string; lastTimestamp: string; involvedObject: { uid: string } };

let cluster: TestCluster;
let kubeconfig: string;
beforeAll(async () => {
  cluster = await startTestCluster({ eventTtlMs: 3000 });
  kubeconfig = path.join(cluster.dataDir, 'kubeconfig');
  writeFileSync(kubeconfig, adminKubeconfig(cluster), { mode: 0o600 });
});
afterAll(async () => { await cluster?.close(); });

async function eventsOf(owner: KubeObject): Promise<Event[]> {
  const list = await cluster.client().resource<Event>(EVENT).list('default');
  return list.items.filter((e) => e.involvedObject.uid === owner.metadata.uid);
}

describe('Events', () => {
  it('a repeated event is one Event with a count, as kubectl describe shows it', async () => {
    const client = cluster.client('svc-operator');
    const project = await client.resource<Project>(PROJECT).create(projectObject('repeats'));
    for (let i = 0; i < 3; i++) await client.recordEvent(project, { type: 'Warning', reason: 'FetchFailed', message: 'could not fetch' });
    // and a burst, all at once
    await Promise.all(Array.from({ length: 4 }, () => client.recordEvent(project, { type: 'Warning', reason: 'FetchFailed', message: 'could not fetch' })));
    await client.recordEvent(project, { type: 'Normal', reason: 'Synced', message: 'ok' });

    const events = await eventsOf(project);
    expect(events.map((e) => [e.reason, e.count]).sort()).toEqual([['FetchFailed', 7], ['Synced', 1]]);
    const failed = events.find((e) => e.reason === 'FetchFailed')!;
    expect(Date.parse(failed.lastTimestamp)).toBeGreaterThanOrEqual(Date.parse(failed.firstTimestamp));

    const { stdout } = await promisify(execFile)('kubectl', ['--kubeconfig', kubeconfig, 'describe', 'project', 'repeats']);
    expect(stdout).toMatch(/Warning\s+FetchFailed\s+.*\(x7 over .*\)\s+svc-operator\s+could not fetch/);
  });

  it('many similar events (one reason, changing messages) are combined into one Event', async () => {
    const client = cluster.client('svc-operator');
    const project = await client.resource<Project>(PROJECT).create(projectObject('similar'));
    for (let i = 0; i < 40; i++) await client.recordEvent(project, { type: 'Normal', reason: 'Fired', message: `fire ${i} created` });
    const events = await eventsOf(project);
    expect(events).toHaveLength(10);
    expect(events.find((e) => e.message.startsWith('(combined from similar events)'))).toMatchObject({ count: 31, message: '(combined from similar events): fire 39 created' });
  });

  it('the cluster deletes Events nobody wrote to for the TTL; a later repeat starts a new Event', async () => {
    const client = cluster.client('svc-operator');
    const project = await client.resource<Project>(PROJECT).create(projectObject('expiring'));
    await client.recordEvent(project, { type: 'Warning', reason: 'FetchFailed', message: 'gone soon' });
    await client.recordEvent(project, { type: 'Warning', reason: 'FetchFailed', message: 'gone soon' });
    expect((await eventsOf(project)).map((e) => e.count)).toEqual([2]);
    await eventually(async () => ((await eventsOf(project)).length === 0 ? true : undefined), 200);
    await client.recordEvent(project, { type: 'Warning', reason: 'FetchFailed', message: 'gone soon' });
    expect((await eventsOf(project)).map((e) => e.count)).toEqual([1]);
  });
});
