// The node simulator against the local cluster: Pods become processes on their own loopback
// address, with the kubelet's env resolution, readiness, restarts, status and deletion.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { startNodeSimulator, type NodeSimulator } from '../../src/localcluster/node/index.js';
import { podDir } from '../../src/localcluster/node/logs.js';
import { eventually, startTestCluster, type TestCluster } from './helpers.js';

const SERVER = path.resolve(import.meta.dirname, '../fixtures/node/server.mjs');
const LABEL = 'test.svc.dev/simulated';
let tc: TestCluster;
let node: NodeSimulator;

beforeAll(async () => {
  tc = await startTestCluster();
  node = await startNodeSimulator({
    cluster: tc.cluster,
    labelSelector: LABEL,
    dataDir: path.join(tc.dir, 'node'),
    images: (image) => (image === 'fixture:1' ? { entrypoint: ['/bin/fixture'], env: { PATH: process.env.PATH ?? '', FROM_IMAGE: 'image' }, workingDir: '/app' } : undefined),
    commands: { '/bin/fixture': [process.execPath, SERVER] },
    restartBackoffMs: 200,
    maxRestartBackoffMs: 400,
    killGraceMs: 2000,
  });
  await tc.api('POST', '/api/v1/namespaces/default/secrets', {
    metadata: { name: 'creds' }, data: { token: Buffer.from('s3cret').toString('base64'), other: Buffer.from('o').toString('base64') },
  });
  await tc.api('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'settings' }, data: { mode: 'fast' } });
});
afterAll(async () => {
  await node?.close();
  await tc?.close();
});

interface PodView {
  metadata: { name: string; uid: string };
  status?: {
    phase?: string;
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { ready: boolean; restartCount: number; state: Record<string, { reason?: string; message?: string }>; lastState: { terminated?: { exitCode: number; reason: string; message?: string } } }[];
  };
}

function pod(name: string, container: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { [LABEL]: 'yes' } },
    spec: {
      containers: [{
        name: 'main',
        image: 'fixture:1',
        ports: [{ name: 'http', containerPort: 8080 }],
        env: [{ name: 'LISTEN_HOST', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
        ...container,
      }],
      ...extra,
    },
  };
}

async function create(body: object): Promise<void> {
  const res = await tc.api('POST', '/api/v1/namespaces/default/pods', body);
  expect(res.status).toBe(201);
}

async function getPod(name: string): Promise<PodView | undefined> {
  const res = await tc.api('GET', `/api/v1/namespaces/default/pods/${name}`);
  return res.status === 200 ? (res.body as unknown as PodView) : undefined;
}

function until(name: string, check: (p: PodView) => boolean, what: string): Promise<PodView> {
  return eventually(async () => {
    const p = await getPod(name);
    return p && check(p) ? p : undefined;
  }, what, 300);
}

const condition = (p: PodView, type: string) => p.status?.conditions?.find((c) => c.type === type)?.status;

it('runs the container with its env resolved, on its own address, and reports readiness', async () => {
  await create(pod('envy', {
    workingDir: '/workspace/sub',
    volumeMounts: [{ name: 'work', mountPath: '/workspace' }],
    readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 1, failureThreshold: 1 },
    envFrom: [{ secretRef: { name: 'creds' }, prefix: 'CREDS_' }, { configMapRef: { name: 'missing', optional: true } }],
    env: [
      { name: 'LISTEN_HOST', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
      { name: 'PLAIN', value: 'hello' },
      { name: 'EXPANDED', value: '$(PLAIN)-world $$(PLAIN)' },
      { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'creds', key: 'token' } } },
      { name: 'MODE', valueFrom: { configMapKeyRef: { name: 'settings', key: 'mode' } } },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'DATA', value: '/workspace/data' },
    ],
    args: ['--flag'],
  }, { volumes: [{ name: 'work', emptyDir: { sizeLimit: '1Gi' } }] }));
  const running = await until('envy', (p) => p.status?.phase === 'Running' && !!p.status.podIP, 'a running pod with an IP');
  const ip = running.status!.podIP!;
  expect(ip).toMatch(/^127\.0\.0\.(\d+)$/);
  expect(ip).not.toBe('127.0.0.1');
  expect(condition(running, 'Ready')).toBe('False');

  const seen = await eventually(async () => {
    try {
      return (await (await fetch(`http://${ip}:8080/env`)).json()) as { env: Record<string, string>; cwd: string; argv: string[] };
    } catch { return undefined; }
  }, 'the container answering on its pod IP', 200);
  expect(seen.env).toMatchObject({
    PLAIN: 'hello', EXPANDED: 'hello-world $(PLAIN)', TOKEN: 's3cret', MODE: 'fast', POD_NAME: 'envy',
    CREDS_token: 's3cret', CREDS_other: 'o', FROM_IMAGE: 'image', LISTEN_HOST: ip,
  });
  // emptyDir mount paths are local directories of the pod
  expect(seen.env.DATA).toMatch(/\/node\/[0-9a-f]{12}\/v\/work\/data$/);
  expect(seen.cwd).toMatch(/\/node\/[0-9a-f]{12}\/v\/work\/sub$/);
  expect(seen.argv).toEqual(['--flag']);

  await fetch(`http://${ip}:8080/ready`, { method: 'POST' });
  const ready = await until('envy', (p) => condition(p, 'Ready') === 'True', 'Ready');
  expect(condition(ready, 'ContainersReady')).toBe('True');
  expect(ready.status!.containerStatuses![0]!.ready).toBe(true);

  // deleting the pod kills its process
  await tc.api('DELETE', '/api/v1/namespaces/default/pods/envy');
  await eventually(async () => fetch(`http://${ip}:8080/env`).then(() => false, () => true), 'the process gone', 200);
  expect(node.pods().has('default/envy')).toBe(false);
});

it('restarts an exited container per restartPolicy and reports the last termination', async () => {
  await create(pod('crashy', { terminationMessagePolicy: 'FallbackToLogsOnError' }));
  const running = await until('crashy', (p) => p.status?.containerStatuses?.[0]?.state.running !== undefined && !!p.status.podIP, 'running');
  const ip = running.status!.podIP!;
  await eventually(async () => fetch(`http://${ip}:8080/exit?code=3`).then(() => true, () => false), 'asked to exit', 200);
  const restarted = await until('crashy', (p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1, 'a restart');
  expect(restarted.status!.containerStatuses![0]!.lastState.terminated).toMatchObject({ exitCode: 3, reason: 'Error', message: 'exiting with 3' });
  expect(restarted.status!.phase).toBe('Running');
  // it comes back on the same address
  await eventually(async () => fetch(`http://${ip}:8080/env`).then(() => true, () => false), 'running again', 200);
  // as the kubelet keeps them: the logs of the current run and the previous one, no older
  for (const count of [2, 3]) {
    await eventually(async () => fetch(`http://${ip}:8080/exit?code=3`).then(() => true, () => false), 'asked to exit', 200);
    await until('crashy', (p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= count && !!p.status?.containerStatuses?.[0]?.state.running, `restart ${count}`);
    await eventually(async () => fetch(`http://${ip}:8080/env`).then(() => true, () => false), 'running again', 200);
  }
  const uid = (await tc.api('GET', '/api/v1/namespaces/default/pods/crashy')).body.metadata!.uid as string;
  expect(readdirSync(path.join(podDir(path.join(tc.dir, 'node'), uid), 'logs', 'main')).sort()).toEqual(['2.log', '3.log']);
  await tc.api('DELETE', '/api/v1/namespaces/default/pods/crashy');
});

it('ends a restartPolicy Never pod Succeeded or Failed', async () => {
  await create(pod('once', {}, { restartPolicy: 'Never' }));
  const running = await until('once', (p) => !!p.status?.containerStatuses?.[0]?.state.running, 'running');
  await eventually(async () => fetch(`http://${running.status!.podIP}:8080/exit?code=0`).then(() => true, () => false), 'asked to exit', 200);
  const done = await until('once', (p) => p.status?.phase === 'Succeeded', 'Succeeded');
  expect(done.status!.containerStatuses![0]!.state.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
  await tc.api('DELETE', '/api/v1/namespaces/default/pods/once');
});

it('reports a missing Secret as CreateContainerConfigError and an unknown image as a pull error', async () => {
  await create(pod('nosecret', { env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'nope', key: 'k' } } }] }));
  const waiting = await until('nosecret', (p) => p.status?.containerStatuses?.[0]?.state.waiting?.reason === 'CreateContainerConfigError', 'config error');
  expect(waiting.status!.containerStatuses![0]!.state.waiting!.message).toBe('secret "nope" not found');
  expect(waiting.status!.phase).toBe('Pending');

  await create(pod('noimage', { image: 'registry.example/none:1' }));
  const pulling = await until('noimage', (p) => ['ErrImagePull', 'ImagePullBackOff'].includes(p.status?.containerStatuses?.[0]?.state.waiting?.reason ?? ''), 'pull error');
  expect(pulling.status!.containerStatuses![0]!.state.waiting!.message).toContain('registry.example/none:1');
  await tc.api('DELETE', '/api/v1/namespaces/default/pods/nosecret');
  await tc.api('DELETE', '/api/v1/namespaces/default/pods/noimage');
});

it('leaves pods without its label alone', async () => {
  await tc.api('POST', '/api/v1/namespaces/default/pods', { ...pod('other', {}), metadata: { name: 'other' } });
  await new Promise((r) => setTimeout(r, 300));
  expect((await getPod('other'))!.status?.phase).toBeUndefined();
  expect(node.pods().has('default/other')).toBe(false);
});
