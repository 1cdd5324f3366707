// Issue 24 §5: right after a restart the API never claims a valid webhook trigger does not exist.
// The API process (dist/src/main/api.js, as the chart runs it) is killed and started again; it is
// fired at from the moment it listens, and every answer is 202 or 503 (with Retry-After), never
// 404. A second restart reaches the cluster through a proxy that holds connections, so the
// caches cannot sync: the API listens, answers 503 to the webhook and to the REST routes, and
// /readyz waits; once released the very same delivery gets its 202.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { adminKubeconfig, kubeconfigYaml } from '../../src/localcluster/index.js';
import { NAMESPACE, PROJECT, SECRET, type KubeObject, type Project } from '../../src/resources/index.js';
import { signWebhookBody } from '../../src/triggers/index.js';
import { makeRepo, waitFor } from '../dev/util.js';
import { adminToken, startApiProcess, startOperatorProcess, type MainProcess } from '../helpers/processes.js';
import { projectObject, startTestCluster, type TestCluster } from '../kube/cluster.js';
import { startFlakyProxy, type FlakyProxy } from '../kube/proxy.js';

const SECRET_VALUE = 'whsec-restart-0123456789';
let tmp: string;
let cluster: TestCluster;
let proxy: FlakyProxy;
let kubeconfig: string;
let proxiedKubeconfig: string;
let operator: MainProcess;
let api: MainProcess | undefined;
let projectId: string;
let token: string;

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-restart-window-'));
  cluster = await startTestCluster();
  proxy = await startFlakyProxy(cluster.url);
  kubeconfig = path.join(tmp, 'kubeconfig');
  writeFileSync(kubeconfig, adminKubeconfig(cluster), { mode: 0o600 });
  proxiedKubeconfig = path.join(tmp, 'kubeconfig-proxied');
  writeFileSync(proxiedKubeconfig, kubeconfigYaml(proxy.url, { token: cluster.token, ca: cluster.ca }), { mode: 0o600 });
  const client = cluster.client();
  // the namespace runs no session: fires queue, nothing else starts
  await client.resource<KubeObject>(NAMESPACE).mergePatch('', 'default', { metadata: { annotations: { 'svc.dev/max-concurrent-sessions': '0' } } });
  const repo = path.join(tmp, 'repo');
  makeRepo(repo, { 'svc.yaml': 'svc_version: 2\ndefault_agent: coder\nagents:\n  coder: {}\ntriggers:\n  - slug: hook\n    type: webhook\n    secret_env: HOOK_SECRET\n    prompt: "push"\n' });
  await client.resource(SECRET).create({ metadata: { name: 'hooks-secrets', namespace: 'default' }, data: { HOOK_SECRET: Buffer.from(SECRET_VALUE).toString('base64') } });
  const project = await client.resource<Project>(PROJECT).create(projectObject('hooks', { repoUrl: repo }));
  projectId = project.metadata.uid!;
  token = await adminToken(client);
  operator = await startOperatorProcess(kubeconfig, { SVC_ALLOW_LOCAL_REPOS: '1' });
  await waitFor('project hooks Ready', async () => {
    const p = await client.resource<Project>(PROJECT).get('default', 'hooks');
    return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  }, 60_000);
}, 90_000);

afterAll(async () => {
  await api?.stop('SIGKILL');
  await operator?.stop();
  await proxy?.close();
  await cluster?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

const body = JSON.stringify({ ref: 'refs/heads/main' });
async function fire(base: string): Promise<{ status: number; retryAfter: string | null }> {
  const res = await fetch(`${base}/v1/webhooks/projects/${projectId}/hook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-signature': signWebhookBody(body, SECRET_VALUE), 'x-svc-delivery': 'restart-window-1' },
    body,
  });
  await res.arrayBuffer();
  return { status: res.status, retryAfter: res.headers.get('retry-after') };
}

describe('the webhook receiver across API restarts', () => {
  it('fired at from the moment it listens: 202 or 503, never 404', async () => {
    api = await startApiProcess(kubeconfig);
    await waitFor('the first 202', async () => (await fire(api!.url)).status === 202);
    await api.stop('SIGKILL');

    api = await startApiProcess(kubeconfig, {}, { ready: false });
    const answers: number[] = [];
    for (;;) {
      const { status, retryAfter } = await fire(api.url);
      answers.push(status);
      if (status === 503) expect(retryAfter).toBe('1');
      if (status === 202) break;
    }
    expect(answers.filter((s) => s !== 202 && s !== 503)).toEqual([]);
  }, 60_000);

  it('while its caches cannot load: 503 on the webhook and the REST routes, /readyz waits; then 202', async () => {
    await api!.stop('SIGKILL');
    proxy.hold();
    api = await startApiProcess(proxiedKubeconfig, {}, { ready: false });
    const held = await Promise.all(Array.from({ length: 5 }, () => fire(api!.url)));
    expect(held.map((a) => a.status)).toEqual([503, 503, 503, 503, 503]);
    const rest = await fetch(`${api.url}/v1/projects/${projectId}`, { headers: { authorization: `Bearer ${token}` } });
    expect(rest.status).toBe(503);
    expect(await rest.json()).toEqual({ error: expect.stringContaining('not ready') });
    expect((await fetch(`${api.url}/readyz`)).status).toBe(503);

    proxy.release();
    const answers: number[] = [];
    await waitFor('the 202 once the caches synced', async () => {
      const { status } = await fire(api!.url);
      answers.push(status);
      return status === 202;
    });
    expect(answers.filter((s) => s !== 202 && s !== 503)).toEqual([]);
    expect((await fetch(`${api.url}/readyz`)).status).toBe(200);
  }, 60_000);
});
