import { afterEach, describe, expect, it } from 'vitest';
import { Informer, KubeClient, loadClusterConfig, type KubeError } from '../../src/kube/index.js';
import { kubeconfigYaml } from '../../src/localcluster/index.js';
import { PROJECT, type Project } from '../../src/resources/index.js';
import { eventually, projectObject, startTestCluster, type TestCluster } from './cluster.js';

const project = (name: string, description = '') => projectObject(name, { description });
import { startFlakyProxy, type FlakyProxy } from './proxy.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function cluster(options: Parameters<typeof startTestCluster>[0] = {}): Promise<TestCluster> {
  const c = await startTestCluster(options);
  cleanups.push(() => c.close());
  return c;
}

/** An informer of `c`'s Projects, reaching it at `url` (its own by default, or a proxy's). */
function informerVia(c: TestCluster, url = c.url): Informer<Project> {
  const client = new KubeClient(loadClusterConfig({ yaml: kubeconfigYaml(url, { token: c.token, ca: c.ca }) }));
  const informer = new Informer<Project>(client, PROJECT, { namespace: 'default', backoffInitialMs: 20, backoffMaxMs: 200 });
  cleanups.push(() => informer.stop());
  return informer;
}

/** The informer's view: name -> description. */
function view(informer: Informer<Project>): Record<string, string | undefined> {
  return Object.fromEntries(informer.list('default').map((p) => [p.metadata.name!, p.spec.description]));
}

function until(informer: Informer<Project>, expected: Record<string, string | undefined>) {
  return eventually(() => (JSON.stringify(view(informer)) === JSON.stringify(expected) ? true : undefined));
}

describe('informer', () => {
  it('lists, then sees adds, updates and deletes', async () => {
    const c = await cluster();
    const projects = c.client().resource<Project>(PROJECT);
    await projects.create(project('one', 'first'));
    const informer = informerVia(c);
    const seen: string[] = [];
    informer.on('add', (p) => seen.push(`add ${p.metadata.name}`));
    informer.on('update', (p, old) => seen.push(`update ${p.metadata.name} ${old?.spec.description}->${p.spec.description}`));
    informer.on('delete', (p) => seen.push(`delete ${p.metadata.name}`));
    await informer.start();
    expect(informer.hasSynced()).toBe(true);
    expect(view(informer)).toEqual({ one: 'first' });

    await projects.create(project('two'));
    await projects.mergePatch('default', 'one', { spec: { description: 'changed' } });
    await projects.delete('default', 'two');
    await eventually(() => (seen.length >= 4 ? true : undefined));
    expect(seen).toEqual(['add one', 'add two', 'update one first->changed', 'delete two']);
    expect(informer.get('default', 'one')?.spec.defaultBranch).toBe('main');
  });

  it('survives dropped watches, and relists after a 410 for a resourceVersion that left the history', async () => {
    const c = await cluster({ watchHistory: 3 });
    const projects = c.client().resource<Project>(PROJECT);
    const proxy: FlakyProxy = await startFlakyProxy(c.url);
    cleanups.push(() => proxy.close());
    const informer = informerVia(c, proxy.url);
    await informer.start();
    await projects.create(project('a'));
    await until(informer, { a: '' });

    // A dropped watch with nothing missed: the informer comes back and keeps going.
    proxy.dropAll();
    await projects.create(project('b'));
    await until(informer, { a: '', b: '' });

    // Drop it again and keep it away while more changes happen than the server remembers.
    proxy.hold();
    proxy.dropAll();
    for (let i = 0; i < 5; i++) await projects.mergePatch('default', 'a', { spec: { description: `v${i}` } });
    await projects.delete('default', 'b');
    await projects.create(project('c'));
    proxy.release();
    await until(informer, { a: 'v4', c: '' });
    expect(informer.stats.expired).toBeGreaterThanOrEqual(1);
    expect(informer.stats.lists).toBeGreaterThanOrEqual(2);
  });

  it('keeps retrying through an API server outage and reports the errors', async () => {
    const c = await cluster();
    const informer = informerVia(c);
    const errors: KubeError[] = [];
    informer.onError((e) => errors.push(e));
    await informer.start();
    await c.stopServer();
    await eventually(() => (errors.length >= 2 ? true : undefined));
    expect(errors.every((e) => e.reason === 'Unavailable')).toBe(true);
    await c.startServer();
    await c.client().resource<Project>(PROJECT).create(project('after-outage', 'back'));
    await until(informer, { 'after-outage': 'back' });
  });
});
