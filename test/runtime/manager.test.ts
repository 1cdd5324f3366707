import { afterEach, describe, expect, it } from 'vitest';
import { Manager, updateStatus, type ControllerDefinition, type ObjectKey } from '../../src/runtime/index.js';
import {
  controllerReference,
  isTrue,
  LEASE,
  PROJECT,
  setCondition,
  TRIGGER,
  triggerName,
  type KubeObject,
  type Project,
  type Trigger,
} from '../../src/resources/index.js';
import { eventually, projectObject as project, startTestCluster, useTestCluster } from '../kube/cluster.js';

const env = useTestCluster();

const managers: Manager[] = [];
afterEach(async () => {
  for (const m of managers.splice(0)) await m.stop();
});

const NS = 'default';
const projects = () => env.client.resource<Project>(PROJECT);
const triggers = () => env.client.resource<Trigger>(TRIGGER);

/** A small Project controller: Ready reports how many Triggers the project owns. */
interface Call extends ObjectKey {
  /** Whether the reconcile wrote status. */
  wrote?: boolean;
  /** resourceVersion of the object the reconcile saw. */
  seen?: string;
}

function countingController(calls: Call[], label = ''): ControllerDefinition {
  return {
    name: `counting${label}`,
    for: PROJECT,
    owns: [TRIGGER],
    async reconcile(key, ctx) {
      const obj = ctx.informer<Project>(PROJECT).get(key.namespace, key.name);
      if (!obj) return void calls.push(key);
      const owned = ctx.informer<Trigger>(TRIGGER).list(key.namespace).filter((t) => t.metadata.ownerReferences?.some((r) => r.uid === obj.metadata.uid));
      const stored = await updateStatus(projects(), obj, {
        observedGeneration: obj.metadata.generation,
        triggers: owned.map((t) => t.spec.slug).sort(),
        conditions: setCondition(obj.status?.conditions, { type: 'Ready', status: 'True', reason: 'Counted', message: `${owned.length} triggers${label}`, observedGeneration: obj.metadata.generation }),
      });
      calls.push({ ...key, wrote: stored !== obj, seen: obj.metadata.resourceVersion });
    },
  };
}

function ownedTrigger(owner: Project, slug: string): Trigger {
  return {
    apiVersion: 'svc.dev/v1alpha1',
    kind: 'Trigger',
    metadata: { name: triggerName(owner.metadata.name!, slug), namespace: NS, ownerReferences: [controllerReference(owner)] },
    spec: { projectRef: { name: owner.metadata.name! }, slug, type: 'webhook', prompt: 'p', name: slug, agent: 'default', sessionMode: 'fresh', enabled: true, timezone: 'UTC', secretEnv: 'HOOK' },
  };
}

describe('manager and controllers', () => {
  it('reconciles its kind, is woken by owned objects, and writes status only when it changed', async () => {
    const calls: Call[] = [];
    const manager = new Manager({ client: env.client, leaderElection: false });
    managers.push(manager);
    manager.add(countingController(calls));
    await manager.start();

    const owner = await projects().create(project('counted'));
    await eventually(async () => (isTrue((await projects().get(NS, 'counted')).status?.conditions, 'Ready') ? true : undefined));

    await triggers().create(ownedTrigger(owner, 'nightly'));
    const withTrigger = await eventually(async () => {
      const p = await projects().get(NS, 'counted');
      return p.status?.triggers?.length === 1 ? p : undefined;
    });
    expect(withTrigger.status?.triggers).toEqual(['nightly']);
    expect(withTrigger.status?.conditions?.[0]).toMatchObject({ type: 'Ready', status: 'True', message: '1 triggers', observedGeneration: withTrigger.metadata.generation });

    // A reconcile that computes the same status writes nothing.
    const touched = await projects().mergePatch(NS, 'counted', { metadata: { annotations: { touch: '1' } } });
    const call = await eventually(() => calls.find((c) => c.seen === touched.metadata.resourceVersion));
    expect(call.wrote).toBe(false);
    expect((await projects().get(NS, 'counted')).metadata.resourceVersion).toBe(touched.metadata.resourceVersion);
  });

  it('with two managers on one Lease, exactly one runs controllers; the other takes over when it stops or dies', async () => {
    const lease = { namespace: NS, name: 'svc-operator-test', leaseDurationMs: 2000, renewIntervalMs: 200, renewDeadlineMs: 1000, retryIntervalMs: 100 };
    const callsA: Call[] = [];
    const callsB: Call[] = [];
    const a = new Manager({ client: env.cluster.client('a'), leaderElection: { ...lease, identity: 'a' } }).add(countingController(callsA, ' (a)'));
    const b = new Manager({ client: env.cluster.client('b'), leaderElection: { ...lease, identity: 'b' } }).add(countingController(callsB, ' (b)'));
    managers.push(a, b);
    let bothActive = false;
    const check = () => (bothActive ||= a.isActive() && b.isActive());
    a.onLeadershipChange(check);
    b.onLeadershipChange(check);

    await a.start();
    await eventually(() => (a.isActive() ? true : undefined));
    await b.start();
    await projects().create(project('elected'));
    await eventually(async () => ((await projects().get(NS, 'elected')).status?.conditions?.[0]?.message === '0 triggers (a)' ? true : undefined));
    expect(b.isActive()).toBe(false);
    expect(callsB).toEqual([]);
    const held = await env.client.resource<KubeObject & { spec: { holderIdentity: string } }>(LEASE).get(NS, 'svc-operator-test');
    expect(held.spec.holderIdentity).toBe('a');

    // a dies without releasing the Lease: b takes over once the Lease expires.
    await a.stop({ releaseLease: false });
    await eventually(() => (b.isActive() ? true : undefined));
    await projects().create(project('after-failover'));
    await eventually(async () => ((await projects().get(NS, 'after-failover')).status?.conditions?.[0]?.message === '0 triggers (b)' ? true : undefined));
    expect(callsA.some((k) => k.name === 'after-failover')).toBe(false);

    // b stops cleanly and releases: a new candidate takes over without waiting for expiry.
    const c = new Manager({ client: env.cluster.client('c'), leaderElection: { ...lease, identity: 'c' } });
    managers.push(c);
    await c.start();
    await b.stop();
    await eventually(() => (c.isActive() ? true : undefined));
    expect(bothActive).toBe(false);
  });

  it('a leader that cannot renew its Lease stops its controllers, and leads again once the API server is back', async () => {
    const own = await startTestCluster();
    try {
      const lease = { namespace: NS, name: 'svc-operator-outage', identity: 'solo', leaseDurationMs: 1500, renewIntervalMs: 100, renewDeadlineMs: 800, retryIntervalMs: 100 };
      const transitions: boolean[] = [];
      const m = new Manager({ client: own.client(), leaderElection: lease }).add(countingController([]));
      managers.push(m);
      m.onLeadershipChange((leading) => transitions.push(leading));
      await m.start();
      await eventually(() => (m.isActive() ? true : undefined));
      await own.stopServer();
      await eventually(() => (m.isActive() ? undefined : true));
      await own.startServer();
      await eventually(() => (m.isActive() ? true : undefined));
      expect(transitions).toEqual([true, false, true]);
      await m.stop();
    } finally {
      await own.close();
    }
  });

  it('a stop waits for a reconcile in flight only so long: it abandons it, releases the Lease, and the standby leads', async () => {
    const lease = { namespace: NS, name: 'svc-operator-stuck', leaseDurationMs: 60_000, renewIntervalMs: 200, renewDeadlineMs: 30_000, retryIntervalMs: 100 };
    let entered = false;
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => { release = resolve; });
    const abandoned: string[] = [];
    const log: string[] = [];
    // a reconcile that ignores ctx.signal (a git fetch from a remote that never answers)
    const hanging: ControllerDefinition = {
      name: 'hanging',
      for: PROJECT,
      async reconcile(key) {
        if (key.name !== 'stuck') return;
        entered = true;
        await stuck;
      },
    };
    const a = new Manager({
      client: env.cluster.client('a'), leaderElection: { ...lease, identity: 'a' }, gracefulShutdownTimeoutMs: 300, log: (line) => log.push(line),
      abandon: () => { abandoned.push('called'); release(); },
    }).add(hanging);
    const b = new Manager({ client: env.cluster.client('b'), leaderElection: { ...lease, identity: 'b' } });
    managers.push(a, b);
    try {
      await a.start();
      await eventually(() => (a.isActive() ? true : undefined));
      await b.start();
      await projects().create(project('stuck'));
      await eventually(() => (entered ? true : undefined));

      await a.stop();
      expect(abandoned).toEqual(['called']);
      expect(log.some((line) => line.includes('still running 300 ms after the stop') && line.includes('hanging default/stuck'))).toBe(true);
      // released, not left to expire (60 s): the standby leads at once
      await eventually(() => (b.isActive() ? true : undefined));
      const held = await env.client.resource<KubeObject & { spec: { holderIdentity: string } }>(LEASE).get(NS, 'svc-operator-stuck');
      expect(held.spec.holderIdentity).toBe('b');
    } finally {
      release();
    }
  });
});
