// Two operator processes (the chart's entry point) against one local cluster: exactly one holds
// the Lease and reconciles; when it is killed the other takes over within the lease duration.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Informer, KubeClient, loadClusterConfig } from '../../src/kube/index.js';
import { adminKubeconfig, startLocalCluster, type LocalCluster } from '../../src/localcluster/index.js';
import { LEASE, type KubeObject } from '../../src/resources/index.js';
import { REPO_ROOT } from '../helpers/dev.js';
import { makeRepo, manifestWithTriggers, run, runOk, waitFor } from './util.js';
import { isRunning } from '../../src/lib/proc.js';

// long enough that a leader renewing on a loaded machine (a full test run on two cores) keeps it
const LEASE_SECONDS = 6;
let tmp: string;
let cluster: LocalCluster;
let env: NodeJS.ProcessEnv;
const operators = new Map<string, { process: ChildProcess; output: string }>();

function startOperator(identity: string): void {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'dist/src/main/operator.js')], {
    env: {
      ...env, SVC_ALLOW_LOCAL_REPOS: '1', SVC_POD_NAME: identity, SVC_NAMESPACE: 'default', SVC_HTTP_PORT: '0',
      SVC_LEASE_DURATION_SECONDS: String(LEASE_SECONDS), SVC_MIRROR_DIR: path.join(tmp, `mirrors-${identity}`),
      // one node: both share the process provider's folder, as two operator replicas would
      SVC_SANDBOX_DIR: path.join(tmp, 'sandboxes'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const entry = { process: child, output: '' };
  child.stdout!.on('data', (c: Buffer) => { entry.output += c.toString(); });
  child.stderr!.on('data', (c: Buffer) => { entry.output += c.toString(); });
  operators.set(identity, entry);
}

const kubectl = (...args: string[]) => runOk('kubectl', args, env);
/** The pids of a process's children. */
const children = async (pid: number) => (await run('pgrep', ['-P', String(pid)])).stdout.split('\n').filter(Boolean);
/** Whether this machine jails sandboxes (then the process provider keeps a warm one). */
const isolated = () => process.getuid?.() === 0 && existsSync('/usr/bin/bwrap');
const leaseHolder = () => kubectl('get', 'lease', 'svc-operator', '-o', 'jsonpath={.spec.holderIdentity}');

async function applyProject(name: string, repo: string): Promise<void> {
  const project = { apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name }, spec: { repoUrl: repo, defaultBranch: 'main' } };
  await runOk('kubectl', ['apply', '-f', '-'], env, JSON.stringify(project));
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-leader-'));
  cluster = await startLocalCluster({ dataDir: path.join(tmp, 'cluster'), port: 0 });
  const kubeconfig = path.join(tmp, 'kubeconfig');
  writeFileSync(kubeconfig, adminKubeconfig(cluster), { mode: 0o600 });
  env = { ...process.env, KUBECONFIG: kubeconfig };
  await kubectl('apply', '-f', path.join(REPO_ROOT, 'crds'));
  makeRepo(path.join(tmp, 'repo'), { 'svc.yaml': manifestWithTriggers() });
  startOperator('op-a');
  startOperator('op-b');
}, 60_000);

afterAll(async () => {
  for (const { process: child } of operators.values()) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await cluster?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('two operators, one Lease', () => {
  it('exactly one leads and reconciles; the other takes over within the lease duration when it is killed', async () => {
    const leader = await waitFor('a Lease holder', async () => (await leaseHolder()) || undefined);
    const standby = leader === 'op-a' ? 'op-b' : 'op-a';
    await waitFor('the leader to start its controllers', async () => operators.get(leader)!.output.includes(`svc operator ${leader}: leading`));

    await applyProject('first', path.join(tmp, 'repo'));
    await waitFor('project first Ready', async () => (await kubectl('get', 'project', 'first', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')) === 'True');
    const events = JSON.parse(await kubectl('get', 'events', '-o', 'json')) as { items: { source?: { component?: string }; reason: string }[] };
    expect(events.items.filter((e) => e.reason === 'TriggersSynced')).toHaveLength(1);
    expect(operators.get(standby)!.output).not.toContain('leading\n');
    expect(operators.get(standby)!.output).not.toContain('started leading');
    // a standby touches no sandbox: no warm sandbox of its own, no sweep of the leader's
    await waitFor('the leader\'s warm sandbox', async () => (await children(operators.get(leader)!.process.pid!)).length > 0 || !isolated(), 20_000);
    expect(await children(operators.get(standby)!.process.pid!)).toEqual([]);

    const before = JSON.parse(await kubectl('get', 'lease', 'svc-operator', '-o', 'json')) as { spec: { renewTime: string; leaseDurationSeconds: number; leaseTransitions?: number } };
    expect(before.spec.leaseDurationSeconds).toBe(LEASE_SECONDS);
    operators.get(leader)!.process.kill('SIGKILL');
    const killedAt = Date.now();
    await waitFor('the standby to take the Lease', async () => (await leaseHolder()) === standby, 20_000);
    const after = JSON.parse(await kubectl('get', 'lease', 'svc-operator', '-o', 'json')) as { spec: { acquireTime: string; leaseTransitions?: number } };
    // Taken over once the dead leader's lease ran out (the standby watches the Lease and wakes
    // when it expires): within the lease duration + 2 s of the crash.
    const gapMs = Date.parse(after.spec.acquireTime) - Date.parse(before.spec.renewTime);
    expect(gapMs).toBeGreaterThanOrEqual(0);
    expect(Date.parse(after.spec.acquireTime) - killedAt).toBeLessThanOrEqual((LEASE_SECONDS + 2) * 1000);
    console.log(`kill -9: the standby took the ${LEASE_SECONDS} s Lease ${Date.parse(after.spec.acquireTime) - killedAt} ms after the kill`);
    expect(after.spec.leaseTransitions).toBe((before.spec.leaseTransitions ?? 0) + 1);

    await applyProject('second', path.join(tmp, 'repo'));
    await waitFor('project second Ready under the new leader', async () => (await kubectl('get', 'project', 'second', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')) === 'True');
    expect(operators.get(standby)!.output).toContain(`svc operator ${standby}: leading`);
  }, 60_000);

  it('a clean stop releases the Lease: the standby takes it within 2 s of the release and starts its controllers', async () => {
    const leader = await leaseHolder();
    startOperator('op-c');
    await waitFor('op-c to stand by', async () => operators.get('op-c')!.output.includes('waiting for Lease'));
    // every version of the Lease, as the API server hands them out
    const client = new KubeClient(loadClusterConfig({ file: env.KUBECONFIG! }), 'test');
    const records: { holder: string; renewTime?: string; acquireTime?: string }[] = [];
    const watch = new Informer<KubeObject & { spec?: { holderIdentity?: string; renewTime?: string; acquireTime?: string } }>(client, LEASE, { namespace: 'default', fieldSelector: 'metadata.name=svc-operator' });
    const record = (l: KubeObject & { spec?: { holderIdentity?: string; renewTime?: string; acquireTime?: string } }) =>
      records.push({ holder: l.spec?.holderIdentity ?? '', renewTime: l.spec?.renewTime, acquireTime: l.spec?.acquireTime });
    watch.on('add', record);
    watch.on('update', record);
    await watch.start();
    try {
      const stopped = Date.now();
      operators.get(leader)!.process.kill('SIGTERM');
      await waitFor('op-c to lead', async () => operators.get('op-c')!.output.includes('svc operator op-c: leading'), 20_000);
      const leadingAfterMs = Date.now() - stopped;
      const released = records.find((r) => r.holder === '');
      const taken = records.find((r) => r.holder === 'op-c');
      expect(released, JSON.stringify(records)).toBeDefined();
      expect(taken).toBeDefined();
      const handoverMs = Date.parse(taken!.acquireTime!) - Date.parse(released!.renewTime!);
      expect(handoverMs).toBeGreaterThanOrEqual(0);
      expect(handoverMs).toBeLessThanOrEqual(2000);
      console.log(`clean stop: Lease released -> taken in ${handoverMs} ms; SIGTERM -> controllers of the standby started in ${leadingAfterMs} ms`);
      // it exits after the release (its sandboxes stopped, its port closed): maybe after the standby leads
      await waitFor('the old leader to exit', async () => operators.get(leader)!.process.exitCode !== null, 20_000);
      expect(operators.get(leader)!.process.exitCode, operators.get(leader)!.output.slice(-3000)).toBe(0);
    } finally {
      await watch.stop();
    }
  }, 60_000);

  it('a clean stop does not wait for a git fetch that never ends: it ends git, releases the Lease, and leaves no git behind', async () => {
    // a git host that takes the connection and never answers: the leader's Project reconcile
    // sits in git fetch (its own timeout is 120 s)
    const sockets = new Set<Socket>();
    const closedSockets = new Set<Socket>();
    const stalled = http.createServer(() => { /* never answers */ });
    stalled.on('connection', (socket) => { sockets.add(socket); socket.on('close', () => closedSockets.add(socket)); });
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
    const repoUrl = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}/stalled-host.git`;
    try {
      const leader = await leaseHolder();
      startOperator('op-d');
      await waitFor('op-d to stand by', async () => operators.get('op-d')!.output.includes('waiting for Lease'));
      await applyProject('stalled', repoUrl);
      await waitFor('git to reach the stalled host', async () => sockets.size > 0);
      // the standby fetches nothing: every git on that host is the leader's
      const gitOnHost = async () => (await run('pgrep', ['-f', 'stalled-host.git'])).stdout.split('\n').filter(Boolean);
      const gitOfLeader = await gitOnHost();
      expect(gitOfLeader).not.toEqual([]);

      // the leader's connections: once the standby leads, its own fetch opens new ones that stay open
      const socketsOfLeader = [...sockets];
      const stopped = Date.now();
      operators.get(leader)!.process.kill('SIGTERM');
      await waitFor('the old leader to exit', async () => operators.get(leader)!.process.exitCode !== null, 20_000);
      const exitedAfterMs = Date.now() - stopped;
      expect(operators.get(leader)!.process.exitCode, operators.get(leader)!.output.slice(-3000)).toBe(0);
      const said = operators.get(leader)!.output;
      expect(said).toMatch(/still running 1000 ms after the stop, going on without: [^"]*project default\/stalled/);
      expect(said).toContain('ended 1 git process still running');
      // git is gone, not left fetching for the next 120 s
      await waitFor('git to hang up on the stalled host', async () => socketsOfLeader.every((socket) => closedSockets.has(socket)));
      // a zombie is gone (its helper, orphaned when git died, waits for this VM's init to reap it)
      expect(gitOfLeader.filter((pid) => isRunning(Number(pid)))).toEqual([]);
      // the Lease was released, not left to expire: the standby leads, and its own fetch is the one stuck now
      await waitFor('op-d to lead', async () => operators.get('op-d')!.output.includes('svc operator op-d: leading'), 20_000);
      expect(await leaseHolder()).toBe('op-d');
      console.log(`a clean stop with a fetch stuck in flight: the leader exited ${exitedAfterMs} ms after SIGTERM`);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => stalled.close(() => resolve()));
    }
  }, 60_000);
});
