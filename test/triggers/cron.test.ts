// The cron scheduler with real operator processes (the chart's entry point) on a local cluster:
// a `*/2` trigger fires on even seconds and never twice (fire names prove the instants), only the
// leader schedules, a kill -9 of the leader between instants loses no instant to a double fire
// and records the missed ones, run_at fires once and stays dormant across a restart, a schedule
// edit never fires at once, and a trigger removed from the manifest stops firing. The namespace's
// session cap is 0, so fires queue and no session (and no sandbox) is ever started.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Informer, KubeClient, loadClusterConfig } from '../../src/kube/index.js';
import { adminKubeconfig, startLocalCluster, type LocalCluster } from '../../src/localcluster/index.js';
import { TRIGGER_FIRE, type TriggerFire } from '../../src/resources/index.js';
import { REPO_ROOT } from '../helpers/dev.js';
import { commitFiles, makeRepo, runOk, waitFor } from '../dev/util.js';

const LEASE_SECONDS = 3;
let tmp: string;
let repo: string;
let cluster: LocalCluster;
let env: NodeJS.ProcessEnv;
let runAt: Date;
const operators = new Map<string, { process: ChildProcess; output: string }>();

const manifest = (tick: string | null) => `svc_version: 2
default_agent: coder
agents:
  coder: {}
triggers:
${tick === null ? '' : `  - slug: tick
    type: cron
    cron: "${tick}"
    prompt: "tick {{ cron.fired_at }} after {{ cron.last_fired_at }}"
`}  - slug: once
    type: cron
    run_at: "${runAt.toISOString()}"
    prompt: once
`;

function startOperator(identity: string): void {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'dist/src/main/operator.js')], {
    env: {
      ...env, SVC_POD_NAME: identity, SVC_NAMESPACE: 'default', SVC_HTTP_PORT: '0', SVC_HTTP_HOST: '127.0.0.1',
      SVC_LEASE_DURATION_SECONDS: String(LEASE_SECONDS), SVC_MIRROR_DIR: path.join(tmp, `mirrors-${identity}`),
      SVC_PROJECT_RESYNC_SECONDS: '2', SVC_TRIGGER_QUEUE_DEPTH: '100000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const entry = { process: child, output: '' };
  child.stdout!.on('data', (c: Buffer) => { entry.output += c.toString(); });
  child.stderr!.on('data', (c: Buffer) => { entry.output += c.toString(); });
  operators.set(identity, entry);
}

async function metrics(identity: string): Promise<Record<string, number>> {
  const port = /health on port (\d+)/.exec(operators.get(identity)!.output)?.[1];
  if (!port) throw new Error(`operator ${identity} has not printed its port`);
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return Object.fromEntries([...text.matchAll(/^(svc_\w+) (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
}

const kubectl = (...args: string[]) => runOk('kubectl', args, env);
const leaseHolder = () => kubectl('get', 'lease', 'svc-operator', '-o', 'jsonpath={.spec.holderIdentity}');
interface Fire { metadata: { name: string }; spec: { firedAt: string; source: string; variables: { cron: Record<string, string> } } }
async function fires(trigger: string): Promise<Fire[]> {
  const list = JSON.parse(await kubectl('get', 'triggerfires', '-l', `svc.dev/trigger=${trigger}`, '-o', 'json')) as { items: Fire[] };
  return list.items.sort((a, b) => a.spec.firedAt.localeCompare(b.spec.firedAt));
}
const seconds = (f: Fire) => Number(f.metadata.name.split('-').at(-1));

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-cron-'));
  cluster = await startLocalCluster({ dataDir: path.join(tmp, 'cluster'), port: 0 });
  const kubeconfig = path.join(tmp, 'kubeconfig');
  writeFileSync(kubeconfig, adminKubeconfig(cluster), { mode: 0o600 });
  env = { ...process.env, KUBECONFIG: kubeconfig };
  await kubectl('apply', '-f', path.join(REPO_ROOT, 'crds'));
  await runOk('kubectl', ['apply', '-f', '-'], env, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default', annotations: { 'svc.dev/max-concurrent-sessions': '0' } } }));
  runAt = new Date(Math.ceil((Date.now() + 15_000) / 1000) * 1000);
  repo = path.join(tmp, 'repo');
  makeRepo(repo, { 'svc.yaml': manifest('*/2 * * * * *') });
  startOperator('op-a');
  startOperator('op-b');
  await waitFor('a Lease holder', async () => (await leaseHolder()) || undefined);
  const project = { apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'cronp' }, spec: { repoUrl: repo, defaultBranch: 'main' } };
  await runOk('kubectl', ['apply', '-f', '-'], env, JSON.stringify(project));
}, 60_000);

afterAll(async () => {
  for (const { process: child } of operators.values()) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await cluster?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('cron scheduler', () => {
  it('a */2 trigger fires on even seconds, once each, only on the leader', async () => {
    const list = await waitFor('four tick fires', async () => { const f = await fires('cronp-tick'); return f.length >= 4 ? f : undefined; }, 30_000);
    const secs = list.map(seconds);
    expect(secs.every((s) => s % 2 === 0)).toBe(true);
    expect(new Set(secs).size).toBe(secs.length);
    for (let i = 1; i < secs.length; i++) expect(secs[i]! - secs[i - 1]!).toBe(2); // no instant skipped while the leader runs
    for (const f of list) expect(f.spec.firedAt).toBe(new Date(seconds(f) * 1000).toISOString());
    expect(list[1]!.spec.variables.cron).toEqual({ schedule: '*/2 * * * * *', timezone: 'UTC', fired_at: list[1]!.spec.firedAt, last_fired_at: list[0]!.spec.firedAt });
    expect(list[0]!.spec.source).toBe('cron');

    const leader = await leaseHolder();
    const standby = leader === 'op-a' ? 'op-b' : 'op-a';
    const [lead, stand] = await Promise.all([metrics(leader), metrics(standby)]);
    expect(lead.svc_trigger_cron_fires_total).toBeGreaterThanOrEqual(4);
    // between two instants the tick trigger's timer is armed (while a fire is being written it is not)
    await waitFor('an armed timer on the leader', async () => (await metrics(leader)).svc_trigger_timers >= 1, 5000);
    expect(stand.svc_trigger_cron_fires_total).toBe(0);
    expect(stand.svc_trigger_timers).toBe(0);
    const trigger = JSON.parse(await kubectl('get', 'trigger', 'cronp-tick', '-o', 'json')) as { status: { nextFireAt?: string; lastFiredAt?: string } };
    expect(trigger.status.nextFireAt).toMatch(/:\d[02468]\.000Z$/);
  }, 60_000);

  it('kill -9 of the leader between instants: the standby takes over and no instant fires twice', async () => {
    const leader = await leaseHolder();
    const standby = leader === 'op-a' ? 'op-b' : 'op-a';
    await waitFor('an odd second', async () => Math.floor(Date.now() / 1000) % 2 === 1, 5000);
    operators.get(leader)!.process.kill('SIGKILL');
    const killedAt = Date.now() / 1000;
    await waitFor('the standby to lead', async () => (await leaseHolder()) === standby, 20_000);
    const after = await waitFor('two fires by the new leader', async () => {
      const f = await fires('cronp-tick');
      return f.filter((x) => seconds(x) > killedAt + LEASE_SECONDS).length >= 2 ? f : undefined;
    }, 30_000);
    const secs = after.map(seconds);
    expect(new Set(secs).size).toBe(secs.length);
    expect(secs.every((s) => s % 2 === 0)).toBe(true);
    expect((await metrics(standby)).svc_trigger_cron_fires_total).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it('kill -9 of the only operator right after a fire and a restart 5 s later: only the instants that did not fire count as missed, at most the latest fires', async () => {
    const leader = await leaseHolder();
    // kill the leader the moment a fire appears: the Trigger's status does not say it fired yet
    const client = new KubeClient(loadClusterConfig({ file: env.KUBECONFIG! }), 'test');
    const watch = new Informer<TriggerFire>(client, TRIGGER_FIRE, { namespace: 'default', labelSelector: 'svc.dev/trigger=cronp-tick' });
    await watch.start();
    const justFired = await new Promise<string>((resolve) => watch.on('add', (f) => resolve(f.metadata.name!)));
    operators.get(leader)!.process.kill('SIGKILL');
    await watch.stop();
    const before = (await fires('cronp-tick')).map(seconds);
    const lastBefore = Number(justFired.split('-').at(-1));
    expect(Math.max(...before)).toBe(lastBefore);
    await new Promise((r) => setTimeout(r, 5000));
    const restartedAt = Date.now() / 1000;
    startOperator('op-c');
    startOperator('op-d');
    const after = await waitFor('fires after the restart', async () => {
      const f = (await fires('cronp-tick')).map(seconds);
      return f.filter((x) => x > restartedAt).length >= 2 ? f : undefined;
    }, 30_000);
    expect(new Set(after).size).toBe(after.length);
    const firstAfter = Math.min(...after.filter((x) => x > lastBefore));
    // nothing replayed in bulk: between the last fire before the kill and the first after it, no instant fired
    expect(firstAfter - lastBefore).toBeGreaterThan(2);
    const events = JSON.parse(await kubectl('get', 'events', '--field-selector', 'involvedObject.name=cronp-tick', '-o', 'json')) as { items: { reason: string; message: string }[] };
    // each MissedFires Event names the instants it counts: "the instant A" or "N instants from A to B"
    const missed = events.items.filter((e) => e.reason === 'MissedFires').map((e) => {
      const [first, last = first] = [...e.message.matchAll(/\d{4}-\d\d-\d\dT[\d:.]+Z/g)].map((m) => Date.parse(m[0]) / 1000);
      return { first: first!, last: last!, count: Number(/^(\d+) instants/.exec(e.message)?.[1] ?? 1), message: e.message };
    });
    // the instant that fired just before the crash is not missed; exactly those strictly between the two fires are
    expect(missed.filter((m) => m.first <= lastBefore && lastBefore <= m.last), JSON.stringify(missed)).toEqual([]);
    expect(missed.find((m) => m.first === lastBefore + 2), JSON.stringify(missed)).toMatchObject({ last: firstAfter - 2, count: (firstAfter - lastBefore) / 2 - 1 });
    const holder = await leaseHolder();
    expect((await metrics(holder)).svc_trigger_missed_fires_total).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('run_at fires once and stays dormant across a restart of the leader', async () => {
    const once = await waitFor('the run_at fire', async () => { const f = await fires('cronp-once'); return f.length ? f : undefined; }, 30_000);
    expect(once.map((f) => f.metadata.name)).toEqual([`cronp-once-${runAt.getTime() / 1000}`]);
    await waitFor('dormant', async () => (await kubectl('get', 'trigger', 'cronp-once', '-o', 'jsonpath={.status.dormant}')) === 'true');
    const leader = await leaseHolder();
    operators.get(leader)!.process.kill('SIGKILL');
    await waitFor('another leader', async () => { const h = await leaseHolder(); return h !== leader && h !== ''; }, 20_000).catch((e: Error) => {
      throw new Error(`${e.message}\n${[...operators.entries()].map(([k, v]) => `${k}:\n${v.output}`).join('\n')}`);
    });
    const next = await leaseHolder();
    await waitFor('the new leader to schedule', async () => (await metrics(next)).svc_trigger_timers >= 1, 20_000);
    await new Promise((r) => setTimeout(r, 2500));
    expect(await fires('cronp-once')).toHaveLength(1);
    expect(await kubectl('get', 'trigger', 'cronp-once', '-o', 'jsonpath={.status.dormant}')).toBe('true');
    expect(await kubectl('get', 'trigger', 'cronp-once', '-o', 'jsonpath={.status.nextFireAt}')).toBe('');
  }, 60_000);

  it('a schedule edit never fires at once; a trigger removed from the manifest stops firing', async () => {
    commitFiles(repo, { 'svc.yaml': manifest('0 0 0 1 1 *') }, 'tick yearly');
    await kubectl('annotate', 'project', 'cronp', `svc.dev/refresh=${Date.now()}`, '--overwrite');
    await waitFor('the edited schedule', async () => (await kubectl('get', 'trigger', 'cronp-tick', '-o', 'jsonpath={.spec.cron}')) === '0 0 0 1 1 *');
    const editedAt = Date.now() / 1000;
    await new Promise((r) => setTimeout(r, 4500));
    expect((await fires('cronp-tick')).filter((f) => seconds(f) > editedAt)).toEqual([]);

    commitFiles(repo, { 'svc.yaml': manifest('*/2 * * * * *') }, 'tick again');
    await kubectl('annotate', 'project', 'cronp', `svc.dev/refresh=${Date.now()}`, '--overwrite');
    await waitFor('ticking again', async () => (await fires('cronp-tick')).some((f) => seconds(f) > Date.now() / 1000 - 3), 20_000);
    commitFiles(repo, { 'svc.yaml': manifest(null) }, 'no tick');
    await kubectl('annotate', 'project', 'cronp', `svc.dev/refresh=${Date.now()}`, '--overwrite');
    await waitFor('the tick trigger to be gone', async () => (await kubectl('get', 'triggers', '-o', 'name')).includes('cronp-tick') === false);
    const removedAt = Date.now() / 1000;
    await new Promise((r) => setTimeout(r, 4500));
    expect((await fires('cronp-tick')).filter((f) => seconds(f) > removedAt + 1)).toEqual([]);
  }, 90_000);
});
