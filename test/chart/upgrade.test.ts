// `helm upgrade` with changed values and `helm test` against the local cluster: the test pod is
// run by the node simulator and checks the /readyz of a real API process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { adminKubeconfig, startLocalCluster, type LocalCluster } from '../../src/localcluster/index.js';
import { startNodeSimulator, type NodeSimulator } from '../../src/localcluster/node/index.js';
import { CHART_DIR, REPO_ROOT, helmAsync as helm } from './helm.js';
import { runOk, waitFor } from '../dev/util.js';

let tmp: string;
let home: string;
let cluster: LocalCluster;
let node: NodeSimulator;
let kubeconfig: string;
let api: ChildProcess | undefined;
const kubectl = (...args: string[]) => runOk('kubectl', ['--kubeconfig', kubeconfig, ...args]);
const release = (...args: string[]) => ['--kubeconfig', kubeconfig, '--namespace', 'svc-system', ...args];

/** The API as the chart runs it (same entry point), on a free loopback port. */
async function startApi(): Promise<string> {
  let output = '';
  api = spawn(process.execPath, [path.join(REPO_ROOT, 'dist/src/main/api.js')], {
    env: { PATH: process.env.PATH, KUBECONFIG: kubeconfig, SVC_NAMESPACE: 'svc-system', SVC_HTTP_PORT: '0', SVC_HTTP_HOST: '127.0.0.1', SVC_MIRROR_DIR: path.join(tmp, 'mirrors') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  api.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
  api.stderr!.on('data', (c: Buffer) => { output += c.toString(); });
  const port = await waitFor('the API listening', async () => /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1]);
  return `http://127.0.0.1:${port}`;
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-helm-upgrade-'));
  home = path.join(tmp, 'helm');
  cluster = await startLocalCluster({ dataDir: path.join(tmp, 'cluster'), port: 0 });
  kubeconfig = path.join(tmp, 'kubeconfig');
  writeFileSync(kubeconfig, adminKubeconfig(cluster), { mode: 0o600 });
  // the node plays the chart's own image with this machine's node
  node = await startNodeSimulator({
    cluster,
    labelSelector: 'app.kubernetes.io/component=test',
    dataDir: path.join(tmp, 'node'),
    images: (ref) => (ref.startsWith('ghcr.io/svc-dev/svc:') ? { env: { PATH: `${path.dirname(process.execPath)}:${process.env.PATH}` } } : undefined),
  });
});

afterAll(async () => {
  api?.kill('SIGTERM');
  await node?.close();
  await cluster?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('helm upgrade and helm test', () => {
  it('upgrades with changed values, and helm test passes only while the API is ready', async () => {
    const install = await helm(['install', 'svc', CHART_DIR, ...release('--create-namespace')], home);
    expect(install.stderr).toBe('');
    expect(install.status).toBe(0);
    expect(await kubectl('get', 'networkpolicy', '-n', 'default', '-o', 'name')).toContain('networkpolicy.networking.k8s.io/svc-sandboxes');
    expect((await kubectl('-n', 'svc-system', 'get', 'pdb', '-o', 'name')).trim().split('\n').sort()).toEqual([
      'poddisruptionbudget.policy/svc-api', 'poddisruptionbudget.policy/svc-operator',
    ]);

    const apiUrl = await startApi();
    await waitFor('the API ready', async () => (await fetch(`${apiUrl}/readyz`)).ok);
    const upgrade = await helm(['upgrade', 'svc', CHART_DIR, ...release(
      '--set', 'operator.replicas=3', '--set', 'sandbox.maxConcurrentSessions=4', '--set', 'sandbox.runtimeClassName=gvisor',
      '--set', `tests.readyzUrl=${apiUrl}/readyz`,
    )], home);
    expect(upgrade.stderr).toBe('');
    expect(upgrade.stdout).toContain('REVISION: 2');
    expect(await kubectl('-n', 'svc-system', 'get', 'deployment', 'svc-operator', '-o', 'jsonpath={.spec.replicas}')).toBe('3');
    const env = await kubectl('-n', 'svc-system', 'get', 'deployment', 'svc-operator', '-o', 'jsonpath={.spec.template.spec.containers[0].env}');
    expect(env).toContain('{"name":"SVC_MAX_CONCURRENT_SESSIONS","value":"4"}');
    expect(env).toContain('{"name":"SVC_SANDBOX_RUNTIME_CLASS","value":"gvisor"}');

    const passed = await helm(['test', 'svc', ...release('--timeout', '60s')], home);
    expect(passed.stderr).toBe('');
    expect(passed.status).toBe(0);
    expect(passed.stdout).toMatch(/TEST SUITE:\s+svc-test-readyz[\s\S]*Phase:\s+Succeeded/);

    api!.kill('SIGTERM');
    await new Promise((r) => api!.once('exit', r));
    const failed = await helm(['test', 'svc', ...release('--timeout', '60s')], home);
    expect(failed.status).not.toBe(0);
    expect(`${failed.stdout}${failed.stderr}`).toMatch(/svc-test-readyz[\s\S]*(failed|Failed)/);
  });
});
