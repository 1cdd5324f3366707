// The generic object reconciler against the local cluster: the status gate, predicates that
// ignore its own status writes, children, finalizers, terminal errors and the typed handles.
import { afterEach, describe, expect, it } from 'vitest';
import { ConflictError } from '../../src/kube/index.js';
import {
  Manager, TerminalError, generationChanged, objectController, planChildren, type ObjectFinalizer, type ReconcileContext,
} from '../../src/runtime/index.js';
import {
  LABEL_PROJECT, PROJECT, TRIGGER, controllerReference, getCondition, setCondition, triggerName,
  type Project, type ProjectStatus, type Trigger,
} from '../../src/resources/index.js';
import { eventually, projectObject as project, useTestCluster } from '../kube/cluster.js';

const env = useTestCluster();
const NS = 'default';
const projects = () => env.client.resource<Project>(PROJECT);
const triggers = () => env.client.resource<Trigger>(TRIGGER);
const managers: Manager[] = [];
afterEach(async () => {
  for (const m of managers.splice(0)) await m.stop();
});

function trigger(owner: Project, slug: string, prompt = 'p'): Trigger {
  return {
    apiVersion: 'svc.dev/v1alpha1', kind: 'Trigger',
    metadata: { name: triggerName(owner.metadata.name!, slug), namespace: NS, labels: { [LABEL_PROJECT]: owner.metadata.name! }, ownerReferences: [controllerReference(owner)] },
    spec: { projectRef: { name: owner.metadata.name! }, slug, type: 'webhook', prompt, name: slug, agent: 'default', sessionMode: 'fresh', enabled: true, timezone: 'UTC', secretEnv: 'HOOK' },
  };
}

/** The number of observes once none came for 300 ms. */
async function settled(observed: string[]): Promise<number> {
  for (;;) {
    const count = observed.length;
    await new Promise((resolve) => setTimeout(resolve, 300));
    if (observed.length === count) return count;
  }
}

interface Seen { slugs: string[]; owned: Trigger[]; labelled: number; signal: boolean }

async function run(options: { finalized?: string[]; finalizers?: ObjectFinalizer<Project>[]; terminal?: boolean; log?: (line: string) => void } = {}) {
  const observed: string[] = [];
  const manager = new Manager({ client: env.client, leaderElection: false, ...(options.log ? { log: options.log } : {}) });
  managers.push(manager);
  manager.add(objectController<Project, Seen>({
    name: 'test-projects',
    for: PROJECT,
    owns: [TRIGGER],
    predicates: [generationChanged],
    ...(options.finalized ? { finalizer: { name: 'svc.dev/test-cleanup', finalize: async (p: Project) => { options.finalized!.push(p.metadata.name!); } } } : {}),
    ...(options.finalizers ? { finalizer: options.finalizers } : {}),
    async observe(p, ctx: ReconcileContext) {
      observed.push(`${p.metadata.name}@${p.metadata.generation}`);
      if (options.terminal) throw new TerminalError('BadInput', `project ${p.metadata.name} cannot work`);
      const handle = ctx.resource<Trigger>(TRIGGER);
      return {
        slugs: (p.spec.description ?? '').split(',').filter(Boolean),
        owned: handle.ownedBy(p),
        labelled: handle.withLabel(LABEL_PROJECT, p.metadata.name!, NS).length,
        signal: ctx.signal instanceof AbortSignal && !ctx.signal.aborted,
      };
    },
    compute(p, seen, now) {
      const plan = planChildren(seen.owned, seen.slugs.map((slug) => trigger(p, slug)));
      const status: ProjectStatus = {
        triggers: seen.slugs,
        conditions: setCondition(p.status?.conditions, { type: 'Ready', status: 'True', reason: 'Counted', message: `${seen.owned.length} owned, ${seen.labelled} labelled, signal ${seen.signal}` }, now),
      };
      return { status, children: [{ type: TRIGGER, plan }], events: [] };
    },
  }));
  await manager.start();
  return { manager, observed };
}

describe('object reconciler', () => {
  it('writes children and status once; its own status writes do not wake it; the cache indexes find the children', async () => {
    const { observed } = await run();
    await projects().create(project('alpha', { description: 'a,b' }));
    const ready = await eventually(async () => {
      const p = await projects().get(NS, 'alpha');
      return getCondition(p.status?.conditions, 'Ready')?.message === '2 owned, 2 labelled, signal true' ? p : undefined;
    });
    expect((await triggers().list(NS, { labelSelector: `${LABEL_PROJECT}=alpha` })).items.map((t) => t.spec.slug).sort()).toEqual(['a', 'b']);
    // nothing left to change: no more writes
    const runs = await settled(observed);
    expect((await projects().get(NS, 'alpha')).metadata.resourceVersion).toBe(ready.metadata.resourceVersion);

    // a spec change (generation) runs again: b goes, c comes
    await projects().mergePatch(NS, 'alpha', { spec: { description: 'a,c' } });
    await eventually(async () => {
      const names = (await triggers().list(NS, { labelSelector: `${LABEL_PROJECT}=alpha` })).items.map((t) => t.spec.slug).sort();
      return names.join() === 'a,c' ? true : undefined;
    });
    expect(observed.length).toBeGreaterThan(runs);
    expect(observed).toContain('alpha@2');

    // an annotation-only change does not pass generationChanged (once the child events have settled)
    const before = await settled(observed);
    await projects().mergePatch(NS, 'alpha', { metadata: { annotations: { note: 'x' } } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(observed.length).toBe(before);
  });

  it('adds its finalizer, runs the clean-up on deletion and then lets the object go', async () => {
    const finalized: string[] = [];
    await run({ finalized });
    await projects().create(project('beta'));
    await eventually(async () => ((await projects().get(NS, 'beta')).metadata.finalizers?.includes('svc.dev/test-cleanup') ? true : undefined));
    await projects().delete(NS, 'beta');
    await eventually(async () => ((await projects().find(NS, 'beta')) ? undefined : true));
    expect(finalized).toEqual(['beta']);
  });

  it('several finalizers: all added at once, each run and removed in turn; one that waits is asked again and the object stays meanwhile', async () => {
    const calls: string[] = [];
    let waiting = true;
    await run({ finalizers: [
      { name: 'svc.dev/test-first', finalize: async () => { calls.push('first'); return waiting ? { requeueAfter: 50 } : undefined; } },
      { name: 'svc.dev/test-second', finalize: async () => { calls.push('second'); } },
    ] });
    await projects().create(project('epsilon'));
    await eventually(async () => ((await projects().get(NS, 'epsilon')).metadata.finalizers?.join() === 'svc.dev/test-first,svc.dev/test-second' ? true : undefined));
    await projects().delete(NS, 'epsilon');
    await eventually(async () => (calls.filter((c) => c === 'first').length >= 3 ? true : undefined));
    expect(calls).not.toContain('second');
    expect((await projects().get(NS, 'epsilon')).metadata.finalizers).toEqual(['svc.dev/test-first', 'svc.dev/test-second']);
    waiting = false;
    await eventually(async () => ((await projects().find(NS, 'epsilon')) ? undefined : true));
    expect(calls.at(-1)).toBe('second');
  });

  it('an object already let go when its finalizer is removed (a reconcile of a stale read) is done: no error, no retry', async () => {
    const lines: string[] = [];
    const calls: string[] = [];
    // the clean-up is done, and someone else removes the finalizer first (as an earlier reconcile the cache had not shown yet)
    await run({ log: (line) => lines.push(line), finalizers: [{ name: 'svc.dev/test-raced', finalize: async (p) => {
      calls.push(p.metadata.name!);
      await projects().mergePatch(NS, p.metadata.name!, { metadata: { finalizers: [] } });
    } }] });
    await projects().create(project('zeta'));
    await eventually(async () => ((await projects().get(NS, 'zeta')).metadata.finalizers?.includes('svc.dev/test-raced') ? true : undefined));
    await projects().delete(NS, 'zeta');
    await eventually(async () => ((await projects().find(NS, 'zeta')) === undefined ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(calls).toEqual(['zeta']);
    expect(lines.filter((l) => l.includes('"level":"error"'))).toEqual([]);
  });

  it('a terminal error says why in Ready and is not retried', async () => {
    const { observed } = await run({ terminal: true });
    await projects().create(project('gamma'));
    const ready = await eventually(async () => getCondition((await projects().get(NS, 'gamma')).status?.conditions, 'Ready'));
    expect(ready).toMatchObject({ status: 'False', reason: 'BadInput', message: 'project gamma cannot work' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(observed.filter((o) => o.startsWith('gamma'))).toEqual(['gamma@1']);
  });

  it('a typed handle turns a stale status write into ConflictError', async () => {
    const manager = new Manager({ client: env.client, leaderElection: false });
    managers.push(manager);
    const handle = manager.resource<Project>(PROJECT);
    await manager.start();
    const created = await projects().create(project('delta'));
    await projects().mergePatch(NS, 'delta', { metadata: { labels: { touched: 'yes' } } });
    await expect(handle.replaceStatus({ ...created, status: { triggers: ['x'] } })).rejects.toBeInstanceOf(ConflictError);
    const cached = await eventually(() => (handle.get(NS, 'delta')?.metadata.labels?.touched ? handle.get(NS, 'delta') : undefined));
    expect(handle.byUid(created.metadata.uid!)?.metadata.name).toBe('delta');
    expect(handle.withLabel('touched', 'yes').map((p) => p.metadata.name)).toEqual(['delta']);
    await projects().delete(NS, 'delta');
    await eventually(() => (handle.byUid(cached!.metadata.uid!) ? undefined : true));
    expect(handle.withLabel('touched', 'yes')).toEqual([]);
  });
});
