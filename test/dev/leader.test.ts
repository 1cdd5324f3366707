// Two operator processes (the chart's entry point) against one local cluster: exactly one holds
// the Lease and reconciles; when it is killed the other takes over within the lease duration.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { adminKubeconfig, startLocalCluster, type LocalCluster } from '../../src/localcluster/index.js';
import { REPO_ROOT } from '../helpers/dev.js';
import { makeRepo, manifestWithTriggers, runOk, waitFor } from './util.js';

const LEASE_SECONDS = 3;
let tmp: string;
let cluster: LocalCluster;
let env: NodeJS.ProcessEnv;
const operators = new Map<string, { process: ChildProcess; output: string }>();

function startOperator(identity: string): void {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'dist/src/main/operator.js')], {
    env: {
      ...env, SVC_ALLOW_LOCAL_REPOS: '1', SVC_POD_NAME: identity, SVC_NAMESPACE: 'default', SVC_HTTP_PORT: '0',
      SVC_LEASE_DURATION_SECONDS: String(LEASE_SECONDS), SVC_MIRROR_DIR: path.join(tmp, `mirrors-${identity}`),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const entry = { process: child, output: '' };
  child.stdout!.on('data', (c: Buffer) => { entry.output += c.toString(); });
  child.stderr!.on('data', (c: Buffer) => { entry.output += c.toString(); });
  operators.set(identity, entry);
}

const kubectl = (...args: string[]) => runOk('kubectl', args, env);
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

    const before = JSON.parse(await kubectl('get', 'lease', 'svc-operator', '-o', 'json')) as { spec: { renewTime: string; leaseDurationSeconds: number; leaseTransitions?: number } };
    expect(before.spec.leaseDurationSeconds).toBe(LEASE_SECONDS);
    operators.get(leader)!.process.kill('SIGKILL');
    await waitFor('the standby to take the Lease', async () => (await leaseHolder()) === standby, 20_000);
    const after = JSON.parse(await kubectl('get', 'lease', 'svc-operator', '-o', 'json')) as { spec: { acquireTime: string; leaseTransitions?: number } };
    // Taken over once the dead leader's lease ran out: no later than its duration plus one retry interval.
    const gapMs = Date.parse(after.spec.acquireTime) - Date.parse(before.spec.renewTime);
    expect(gapMs).toBeGreaterThanOrEqual(0);
    expect(gapMs).toBeLessThanOrEqual((LEASE_SECONDS + 1) * 1000 + 1000);
    expect(after.spec.leaseTransitions).toBe((before.spec.leaseTransitions ?? 0) + 1);

    await applyProject('second', path.join(tmp, 'repo'));
    await waitFor('project second Ready under the new leader', async () => (await kubectl('get', 'project', 'second', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')) === 'True');
    expect(operators.get(standby)!.output).toContain(`svc operator ${standby}: leading`);
  }, 60_000);
});
