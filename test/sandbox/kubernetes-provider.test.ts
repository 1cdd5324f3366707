// The kubernetes provider's whole path against the local cluster, with the node simulator playing
// the node and the real svc-agent (fixture engine) playing the sandbox image: Secret and Pod,
// probes, status mapping, deletion, and a pod killed from outside. The node is isolated, as
// under svc dev: each pod jailed on its own address (src/lib/jail).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { KubeClient, loadClusterConfig } from '../../src/kube/index.js';
import { POD, SANDBOX, type KubeObject } from '../../src/resources/index.js';
import { Jail, packageToolchain } from '../../src/lib/jail/index.js';
import { startSandboxNode } from '../../src/main/sandbox-node.js';
import type { NodeSimulator } from '../../src/localcluster/node/index.js';
import { DEFAULT_SETTINGS, KubernetesSandboxProvider, sandboxObjectName, type KubernetesSandboxSettings } from '../../src/sandbox/kubernetes/index.js';
import type { SandboxRequest } from '../../src/sandbox/index.js';
import type { OwnedCache } from '../../src/sandbox/provider.js';
import { buildArtifacts, cleanupArtifacts, PROJECT_ID, TOKEN } from '../daemon/harness.js';
import { eventually, startTestCluster, type TestCluster } from '../localcluster/helpers.js';

const REPO_ROOT = path.resolve(import.meta.dirname, '../..');
let tc: TestCluster;
let node: NodeSimulator;
let client: KubeClient;
let settings: KubernetesSandboxSettings;

beforeAll(async () => {
  tc = await startTestCluster();
  const crd = parseYaml(readFileSync(path.join(REPO_ROOT, 'crds/sandboxes.yaml'), 'utf8')) as object;
  expect((await tc.api('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status).toBe(201);
  const { daemon, fixtureEngine } = await buildArtifacts();
  const jail = new Jail({ apiPorts: [], toolchain: packageToolchain(REPO_ROOT) });
  node = await startSandboxNode({ cluster: tc.cluster, dataDir: path.join(tc.dir, 'node'), agentCommand: [process.execPath, daemon], restartBackoffMs: 300, isolation: { jail } });
  client = new KubeClient(loadClusterConfig({ file: tc.kubeconfig }), 'test');
  settings = { ...DEFAULT_SETTINGS, extraEnv: { SVC_ENGINE_COMMAND: `'${process.execPath}' '${fixtureEngine}' --port {port}` } };
});
afterAll(async () => {
  await node?.close();
  await tc?.close();
  cleanupArtifacts();
});

/** A Sandbox in the cluster (the owner of what the provider creates) and its request. */
async function sandbox(id: string, env: Record<string, string> = {}, template: SandboxRequest['template'] = {}): Promise<SandboxRequest> {
  const created = await client.resource<KubeObject>(SANDBOX).create({
    apiVersion: 'svc.dev/v1alpha1', kind: 'Sandbox', metadata: { name: id, namespace: 'default' },
    spec: { sessionRef: { name: id }, provider: 'kubernetes' },
  });
  return {
    namespace: 'default', name: id, uid: created.metadata.uid!, sessionId: id, projectId: PROJECT_ID, template,
    env: { SVC_PROJECT_ID: PROJECT_ID, SVC_SESSION_ID: id, SVC_SERVICE_PORT: '8000', SVC_PROJECT_SECRET_NAMES: 'DB_PASSWORD', ...env },
    secretEnv: { SVC_SANDBOX_TOKEN: TOKEN, SVC_TOKEN: TOKEN, SVC_CLI_TOKEN: 'svc_pat_not_in_specs', DB_PASSWORD: 'hunter2-secret' },
  };
}

describe('kubernetes provider with the node simulator', () => {
  it('runs a sandbox as a Pod plus a Secret, ready when the engine is; stop deletes both', async () => {
    const provider = new KubernetesSandboxProvider(client, settings);
    const request = await sandbox('0b6c9a4e-0000-4000-8000-000000000001');
    const first = await provider.ensure(request);
    expect(first).toMatchObject({ state: 'provisioning', detail: { podName: `svc-sandbox-${request.name}` } });
    // idempotent: a second ensure creates nothing new
    expect((await provider.ensure(request)).detail?.podName).toBe(`svc-sandbox-${request.name}`);

    const running = await eventually(async () => {
      const o = await provider.observe(request);
      return o.state === 'running' ? o : undefined;
    }, 'the sandbox running', 400);
    expect(running.address).toMatch(/^10\.\d+\.\d+\.\d+:8000$/);
    const health = await eventually(async () => {
      const h = await fetch(`http://${running.address}/svc/health`).then((r) => r.json() as Promise<{ status: string; engine: { state: string } }>, () => undefined);
      return h?.status === 'ok' ? h : undefined;
    }, 'the engine ready through the pod IP', 400);
    expect(health.engine.state).toBe('ready');

    const pod = JSON.parse(await tc.kubectlOk(['get', 'pod', `svc-sandbox-${request.name}`, '-o', 'json'])) as KubeObject & { status: { conditions: { type: string; status: string }[] } };
    await eventually(async () => {
      const p = JSON.parse(await tc.kubectlOk(['get', 'pod', `svc-sandbox-${request.name}`, '-o', 'json'])) as typeof pod;
      return p.status.conditions.find((c) => c.type === 'Ready')?.status === 'True';
    }, 'the pod Ready (readiness probe on the engine)', 200);
    const specText = JSON.stringify(pod.spec);
    for (const secret of [TOKEN, 'svc_pat_not_in_specs', 'hunter2-secret']) expect(specText).not.toContain(secret);
    expect(pod.metadata.ownerReferences![0]).toMatchObject({ kind: 'Sandbox', name: request.name, uid: request.uid });
    const secret = JSON.parse(await tc.kubectlOk(['get', 'secret', `svc-sandbox-${request.name}`, '-o', 'json'])) as KubeObject & { data: Record<string, string> };
    expect(Buffer.from(secret.data.DB_PASSWORD!, 'base64').toString()).toBe('hunter2-secret');

    await provider.delete(request);
    expect((await tc.kubectl(['get', 'secret', `svc-sandbox-${request.name}`])).code).not.toBe(0);
    // the Pod's deletion is graceful, as with a kubelet: marked while its processes stop, then gone
    // (test/dev/kubernetes.test.ts shows what the grace is for: the stop's checkpoint)
    await eventually(async () => (await tc.kubectl(['get', 'pod', `svc-sandbox-${request.name}`])).code !== 0, 'the pod gone', 200);
    await eventually(async () => fetch(`http://${running.address}/svc/health`).then(() => false, () => true), 'the daemon gone', 200);
    expect(await provider.observe(request)).toEqual({ state: 'absent' });
  });

  it('notices a pod killed from outside', async () => {
    const provider = new KubernetesSandboxProvider(client, settings);
    const request = await sandbox('0b6c9a4e-0000-4000-8000-000000000002');
    await provider.ensure(request);
    await eventually(async () => (await provider.observe(request)).state === 'running', 'running', 400);
    await tc.kubectlOk(['delete', 'pod', `svc-sandbox-${request.name}`, '--wait=false']);
    expect(await provider.observe(request)).toMatchObject({ state: 'failed', reason: 'PodDeleted' });
    await provider.delete(request);
  });

  it("reads its Pod from the controller's cache when the cache holds it, from the cluster when not", async () => {
    const provider = new KubernetesSandboxProvider(client, settings);
    const request = await sandbox('0b6c9a4e-0000-4000-8000-000000000006');
    await provider.ensure(request);
    const name = sandboxObjectName(request.name);
    const live = await client.resource<KubeObject>(POD).get('default', name);
    // what the cache says is what is seen (the cluster's Pod has not failed)
    const evicted = { ...live, status: { phase: 'Failed', reason: 'Evicted', message: 'said by the cache' } };
    const asked: string[] = [];
    const cacheOf = (pod: KubeObject | undefined): OwnedCache => (type) => ({
      get: (namespace, podName) => { asked.push(`${type.plural} ${namespace}/${podName}`); return pod; },
    });
    expect(await provider.observe(request, undefined, cacheOf(evicted))).toMatchObject({ state: 'failed', reason: 'Evicted', message: `pod ${name}: said by the cache` });
    expect(asked).toEqual([`pods default/${name}`]);
    // not in the cache yet (just created): the cluster's Pod, never a deleted one
    expect((await provider.observe(request, undefined, cacheOf(undefined))).state).not.toBe('failed');
    // the cache's Pod of that name belongs to an earlier Sandbox: the cluster's
    const earlier = { ...evicted, metadata: { ...evicted.metadata, ownerReferences: [{ ...evicted.metadata.ownerReferences![0]!, uid: 'an-earlier-sandbox' }] } };
    expect((await provider.observe(request, undefined, cacheOf(earlier))).state).not.toBe('failed');
    await provider.delete(request);
  });

  it('fails a daemon that cannot start with the pod reason and its last words', async () => {
    const provider = new KubernetesSandboxProvider(client, settings);
    // a branch name git refuses: svc-agent exits 2 at start
    const request = await sandbox('0b6c9a4e-0000-4000-8000-000000000003', { SVC_BRANCH_NAME: 'bad..branch' });
    await provider.ensure(request);
    const failed = await eventually(async () => {
      const o = await provider.observe(request);
      return o.state === 'failed' ? o : undefined;
    }, 'failed', 400);
    expect(failed.reason).toBe('CrashLoopBackOff');
    expect(failed.message).toContain('SVC_BRANCH_NAME is not a usable branch name');
    await provider.delete(request);
  });

  it('refuses a dockerfile template without a build backend, and an image the node cannot pull', async () => {
    const provider = new KubernetesSandboxProvider(client, settings);
    const built = await sandbox('0b6c9a4e-0000-4000-8000-000000000004', {}, { dockerfile: '.svc/Dockerfile' });
    expect(await provider.ensure(built)).toMatchObject({ state: 'failed', reason: 'NoBuildBackend' });
    expect((await tc.kubectl(['get', 'pod', `svc-sandbox-${built.name}`])).code).not.toBe(0);

    const pulled = await sandbox('0b6c9a4e-0000-4000-8000-000000000005', {}, { image: 'registry.example/private:1' });
    await provider.ensure(pulled);
    const failed = await eventually(async () => {
      const o = await provider.observe(pulled);
      return o.state === 'failed' ? o : undefined;
    }, 'failed', 400);
    expect(failed.reason).toMatch(/ErrImagePull|ImagePullBackOff/);
    expect(failed.message).toContain('registry.example/private:1');
    await provider.delete(pulled);
  });
});
