// The node simulator isolated (issue 20 §1), as under `svc dev --provider kubernetes`: each pod
// jailed on its own address, each container as its securityContext says (runAsUser, runAsGroup,
// runAsNonRoot, readOnlyRootFilesystem), its slot gone with the pod; held to its memory and its
// ephemeral storage as a kubelet holds it.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Jail, RUN_DIR } from '../../src/lib/jail/index.js';
import { startNodeSimulator, type NodeSimulator } from '../../src/localcluster/node/index.js';
import { podDir } from '../../src/localcluster/node/logs.js';
import { eventually, startTestCluster, type TestCluster } from './helpers.js';

const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/node/server.mjs');
const LABEL = 'test.svc.dev/jailed';
let tc: TestCluster;
let node: NodeSimulator;
let fixtureDir: string;

beforeAll(async () => {
  tc = await startTestCluster();
  // the fixture is mounted from below /tmp (whatever TMPDIR says), as a checkout there is: the
  // jail's private /tmp shows it even where readOnlyRootFilesystem makes that /tmp read-only
  fixtureDir = mkdtempSync('/tmp/svc-node-fixture-');
  // the mount itself readable by the pod's user (mkdtemp's folder is the owner's alone)
  const server = path.join(fixtureDir, 'shown', 'server.mjs');
  mkdirSync(path.dirname(server), { mode: 0o755 });
  copyFileSync(FIXTURE, server);
  node = await startNodeSimulator({
    cluster: tc.cluster,
    labelSelector: LABEL,
    dataDir: path.join(tc.dir, 'node'),
    images: (image) => (image === 'fixture:1' ? { entrypoint: ['/bin/fixture'], env: { PATH: '/usr/bin:/bin' } } : undefined),
    // /bin/hog: a program that takes memory until something stops it
    // /bin/fill: a program that writes 3 MiB to the emptyDir at /data, then idles
    commands: {
      '/bin/fixture': [process.execPath, server], '/bin/hog': [process.execPath, '-e', 'const held = []; for (;;) held.push(Buffer.alloc(4 * 2 ** 20, 1))'],
      '/bin/fill': [process.execPath, '-e', "require('fs').writeFileSync('/data/fill', Buffer.alloc(3 * 2 ** 20, 1)); setInterval(() => {}, 2 ** 30)"],
    },
    // the fixture lives outside the toolchain: shown read-only, as --sandbox-mount does
    isolation: { jail: new Jail({ apiPorts: [], toolchain: [], mounts: [{ path: path.dirname(server), writable: false }] }) },
    restartBackoffMs: 200,
    killGraceMs: 2000,
    storageCheckIntervalMs: 200,
  });
});
afterAll(async () => {
  await node?.close();
  await tc?.close();
  if (fixtureDir) rmSync(fixtureDir, { recursive: true, force: true });
});

interface PodView { metadata: { uid: string }; status?: { phase?: string; podIP?: string; containerStatuses?: { state: Record<string, { reason?: string; message?: string }> }[] } }

async function createPod(name: string, securityContext: Record<string, unknown>, containerContext: Record<string, unknown> = {}): Promise<void> {
  const res = await tc.api('POST', '/api/v1/namespaces/default/pods', {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { [LABEL]: 'yes' } },
    spec: {
      securityContext,
      containers: [{
        name: 'main', image: 'fixture:1', ports: [{ containerPort: 8080 }],
        env: [{ name: 'LISTEN_HOST', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
        volumeMounts: [{ name: 'data', mountPath: '/data' }],
        securityContext: containerContext,
      }],
      volumes: [{ name: 'data', emptyDir: {} }],
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}
const pod = async (name: string) => (await tc.api('GET', `/api/v1/namespaces/default/pods/${name}`)).body as unknown as PodView;
/** The jail slots this test's node holds (its pods', each released after its process ends). */
const slotsOfNode = () => readdirSync(path.join(RUN_DIR, 'slots')).filter((f) => slotRecord(f).includes(JSON.stringify(path.join(tc.dir, 'node'))));
/** A slot's record, or '' when it was released between the listing and the read. */
const slotRecord = (file: string) => {
  try {
    return readFileSync(path.join(RUN_DIR, 'slots', file), 'utf8');
  } catch {
    return '';
  }
};
const slotsFreed = () => eventually(async () => slotsOfNode().length === 0, 'the node\'s jail slots freed');

it('runs the container jailed on the pod\'s own address as its runAsUser and runAsGroup; readOnlyRootFilesystem leaves /tmp read-only (what is mounted below it still shown)', async () => {
  await createPod('runs-as', { runAsNonRoot: true, runAsUser: 4242, runAsGroup: 4343 }, { readOnlyRootFilesystem: true });
  const ip = await eventually(async () => { const p = await pod('runs-as'); return p.status?.phase === 'Running' ? p.status.podIP : undefined; }, 'running', 200);
  expect(ip).toMatch(/^10\.\d+\.\d+\.\d+$/);
  const seen = await eventually(async () => fetch(`http://${ip}:8080/env`).then((r) => r.json() as Promise<{ uid: number; gid: number; tmpWritable: boolean; env: Record<string, string> }>, () => undefined), 'answering', 200);
  expect(seen).toMatchObject({ uid: 4242, gid: 4343, tmpWritable: false });
  expect(seen.env.SVC_SANDBOX_OWN_NETWORK).toBe('1');
  const uid = (await pod('runs-as')).metadata.uid;
  await tc.api('DELETE', '/api/v1/namespaces/default/pods/runs-as');
  // its slot goes with it: nothing answers there any more
  await eventually(async () => fetch(`http://${ip}:8080/env`, { signal: AbortSignal.timeout(1000) }).then(() => false, () => true), 'the pod gone', 200);
  await slotsFreed();
  expect(uid).toBeTruthy();
});

it('refuses runAsNonRoot with an image that runs as root (CreateContainerConfigError, the kubelet\'s message)', async () => {
  await createPod('as-root', { runAsNonRoot: true });
  try {
    // ContainerCreating first (the pod's sandbox is made before its container), as a kubelet shows it
    const waiting = await eventually(async () => {
      const state = (await pod('as-root')).status?.containerStatuses?.[0]?.state.waiting;
      return state?.reason === 'ContainerCreating' ? undefined : state;
    }, 'waiting', 200);
    expect(waiting.reason).toBe('CreateContainerConfigError');
    expect(waiting.message).toContain('container has runAsNonRoot and image will run as root');
  } finally {
    await tc.api('DELETE', '/api/v1/namespaces/default/pods/as-root');
    await slotsFreed();
  }
});

it('holds a pod to the sum of its containers\' limits (its own control group); a container the kernel ends for memory is OOMKilled, as the kubelet says', async () => {
  const res = await tc.api('POST', '/api/v1/namespaces/default/pods', {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'small', labels: { [LABEL]: 'yes' } },
    spec: {
      restartPolicy: 'Never',
      securityContext: { runAsUser: 1000 },
      containers: [{ name: 'main', image: 'fixture:1', command: ['/bin/hog'], resources: { limits: { cpu: '250m', memory: '64Mi' } } }],
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  try {
    const terminated = await eventually(async () => (await pod('small')).status?.containerStatuses?.[0]?.state.terminated, 'terminated', 200);
    expect(terminated.reason).toBe('OOMKilled');
  } finally {
    await tc.api('DELETE', '/api/v1/namespaces/default/pods/small');
    await slotsFreed();
  }
});

it('evicts a pod over its ephemeral storage as the kubelet does (Failed, Evicted, its message), its processes gone; one within its limits runs on', async () => {
  const filler = (name: string, volume: Record<string, unknown>, limits: Record<string, string>) => tc.api('POST', '/api/v1/namespaces/default/pods', {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { [LABEL]: 'yes' } },
    spec: {
      securityContext: { runAsUser: 1000 },
      containers: [{ name: 'main', image: 'fixture:1', command: ['/bin/fill'], resources: { limits }, volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', emptyDir: volume }],
    },
  });
  for (const [name, volume, limits] of [['over-pod', {}, { 'ephemeral-storage': '1Mi' }], ['over-volume', { sizeLimit: '1Mi' }, {}], ['within', { sizeLimit: '16Mi' }, { 'ephemeral-storage': '16Mi' }]] as const) {
    const res = await filler(name, volume, limits);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
  type Status = { phase?: string; reason?: string; message?: string };
  try {
    const evicted = async (name: string) => eventually(async () => { const s = (await pod(name)).status as Status | undefined; return s?.phase === 'Failed' ? s : undefined; }, `${name} evicted`, 200);
    expect(await evicted('over-pod')).toMatchObject({ reason: 'Evicted', message: 'Pod ephemeral local storage usage exceeds the total limit of containers 1Mi.' });
    expect(await evicted('over-volume')).toMatchObject({ reason: 'Evicted', message: 'Usage of EmptyDir volume "data" exceeds the limit "1Mi".' });
    // its 3 MiB written, then measured as often as the others (every 200 ms here): within 16 MiB
    const filled = path.join(podDir(path.join(tc.dir, 'node'), (await pod('within')).metadata.uid), 'v', 'data', 'fill');
    await eventually(async () => existsSync(filled) && statSync(filled).size === 3 * 2 ** 20, 'the 3 MiB written', 200);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(((await pod('within')).status as Status).phase).toBe('Running');
    // the evicted pods' slots (their processes) are gone, the running one keeps its own
    await eventually(async () => slotsOfNode().length === 1, 'the evicted pods\' slots freed');
  } finally {
    for (const name of ['over-pod', 'over-volume', 'within']) await tc.api('DELETE', `/api/v1/namespaces/default/pods/${name}`);
    await slotsFreed();
  }
});

it('close stops every pod and frees its jail slot', async () => {
  await createPod('at-close', { runAsUser: 1000 });
  const ip = await eventually(async () => { const p = await pod('at-close'); return p.status?.phase === 'Running' ? p.status.podIP : undefined; }, 'running', 200);
  expect(slotsOfNode()).toHaveLength(1);
  await node.close();
  expect(slotsOfNode()).toEqual([]);
  await expect(fetch(`http://${ip}:8080/env`, { signal: AbortSignal.timeout(1000) })).rejects.toThrow();
});
