// Hollow sandboxes: 200 Pods the node simulator plays without a process (kubemark's hollow
// nodes), each answering svc-agent's health, prompt and abort contract at its Pod's status
// address, with svc-agent's authentication; readiness, an initial prompt, a missing Secret and a
// deletion as a kubelet shows them.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signContextHeader } from '../../src/lib/context-header.js';
import { startNodeSimulator, type NodeSimulator } from '../../src/localcluster/node/index.js';
import { eventually, startTestCluster, type TestCluster } from './helpers.js';

const LABEL = 'test.svc.dev/hollow';
const TOKEN = 'hollow-sandbox-token-0123456789';
const COUNT = 200;
let tc: TestCluster;
let node: NodeSimulator;

interface PodView {
  metadata: { name: string; uid: string; annotations?: Record<string, string> };
  status?: { phase?: string; podIP?: string; conditions?: { type: string; status: string }[]; containerStatuses?: { ready: boolean; state: Record<string, { reason?: string; message?: string }> }[] };
}
interface Health {
  status: string;
  hollow: boolean;
  daemon: { state: string };
  engine: { state: string; root_session_id: string | null; initial_prompt_sent_at: string | null; run: { type: string } | null };
}

const childProcesses = () => execFileSync('ps', ['-o', 'pid=', '--ppid', String(process.pid)], { encoding: 'utf8' }).trim().split('\n').length;

function hollowPod(name: string, options: { byImage?: boolean; annotations?: Record<string, string>; env?: { name: string; value: string }[]; secret?: string } = {}) {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      name, labels: { [LABEL]: 'yes' },
      annotations: { ...(options.byImage ? {} : { 'sim.svc.dev/hollow': 'true' }), 'sim.svc.dev/hollow-busy-ms': '300', ...options.annotations },
    },
    spec: {
      containers: [{
        name: 'sandbox',
        // an image the simulator does not know: only a hollow pod runs without it
        image: options.byImage ? 'ghcr.io/example/svc-hollow-sandbox:1' : 'ghcr.io/example/not-pullable:1',
        ports: [{ name: 'daemon', containerPort: 8000 }],
        env: [{ name: 'SVC_SESSION_ID', value: `session-${name}` }, ...(options.env ?? [])],
        envFrom: [{ secretRef: { name: options.secret ?? 'hollow-secrets' } }],
      }],
    },
  };
}

async function getPod(name: string): Promise<PodView | undefined> {
  const res = await tc.api('GET', `/api/v1/namespaces/default/pods/${name}`);
  return res.status === 200 ? (res.body as unknown as PodView) : undefined;
}
const ready = (p: PodView | undefined) => p?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
async function health(ip: string, query = ''): Promise<{ status: number; body: Health }> {
  const res = await fetch(`http://${ip}:8000/svc/health${query}`);
  return { status: res.status, body: (await res.json()) as Health };
}
const engineHeader = (name: string) => signContextHeader(TOKEN, { sub: 'user-1', sid: `session-${name}`, scope: 'engine' });

beforeAll(async () => {
  tc = await startTestCluster();
  node = await startNodeSimulator({ cluster: tc.cluster, labelSelector: LABEL, dataDir: path.join(tc.dir, 'node'), images: () => undefined, hollowAddressOctet: 78 });
  await tc.api('POST', '/api/v1/namespaces/default/secrets', { metadata: { name: 'hollow-secrets' }, data: { SVC_SANDBOX_TOKEN: Buffer.from(TOKEN).toString('base64') } });
});
afterAll(async () => {
  await node?.close();
  await tc?.close();
});

describe('hollow sandboxes', () => {
  it(`${COUNT} hollow pods start without a process and answer the daemon's health at their Pod address`, async () => {
    const processesBefore = childProcesses();
    const rssBefore = process.memoryUsage().rss;
    const started = performance.now();
    for (let i = 0; i < COUNT; i += 20) {
      await Promise.all(Array.from({ length: 20 }, (_, j) => tc.api('POST', '/api/v1/namespaces/default/pods', hollowPod(`h-${i + j}`, { byImage: (i + j) % 2 === 1 }))));
    }
    const pods = await eventually(async () => {
      const list = (await tc.api('GET', `/api/v1/namespaces/default/pods?labelSelector=${encodeURIComponent(LABEL)}`)).body.items as PodView[];
      return list.length === COUNT && list.every(ready) ? list : undefined;
    }, `${COUNT} hollow pods ready`, 1200);
    console.log(`${COUNT} hollow pods: created -> all Ready in ${(performance.now() - started).toFixed(0)} ms; RSS +${((process.memoryUsage().rss - rssBefore) / 2 ** 20).toFixed(1)} MiB`);
    expect(childProcesses()).toBe(processesBefore);

    const ips = new Set(pods.map((p) => p.status!.podIP!));
    expect(ips.size).toBe(COUNT);
    expect(node.pods().size).toBe(COUNT);
    for (const p of pods) {
      expect(p.status!.phase).toBe('Running');
      expect(p.status!.containerStatuses![0]!.state.running).toBeDefined();
    }
    const answers = await Promise.all(pods.map((p) => health(p.status!.podIP!)));
    for (const [i, { status, body }] of answers.entries()) {
      expect(status).toBe(200);
      expect(body).toMatchObject({ status: 'ok', hollow: true, daemon: { state: 'ready' }, engine: { state: 'ready', run: { type: 'idle' } } });
      expect(body.engine.root_session_id).toMatch(/^ses_hollow[0-9a-f]{20}$/);
      expect(body.engine.root_session_id).toBe(`ses_hollow${pods[i]!.metadata.uid.replace(/-/g, '').slice(0, 20)}`);
    }
  }, 120_000);

  it('takes prompts (204, busy, then idle) and aborts with the daemon\'s authentication; refuses others', async () => {
    const pod = (await getPod('h-7'))!;
    const ip = pod.status!.podIP!;
    const root = (await health(ip)).body.engine.root_session_id!;
    const prompt = (header: string) => fetch(`http://${ip}:8000/session/${root}/prompt_async`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-svc-user-context': header }, body: JSON.stringify({ parts: [{ type: 'text', text: 'hi' }] }),
    });
    const header = engineHeader('h-7');
    expect((await prompt(header)).status).toBe(204);
    expect((await health(ip)).body.engine.run).toEqual({ type: 'busy' });
    expect((await prompt(header)).status).toBe(401); // a header is accepted once
    expect((await prompt(signContextHeader('another-token', { sub: 'u', sid: 'session-h-7', scope: 'engine' }))).status).toBe(401);
    expect((await prompt(engineHeader('h-8'))).status).toBe(401); // signed for another session
    await eventually(async () => ((await health(ip)).body.engine.run?.type === 'idle' ? true : undefined), 'idle after the prompt', 50);

    expect((await prompt(engineHeader('h-7'))).status).toBe(204);
    expect((await fetch(`http://${ip}:8000/svc/abort`, { method: 'POST' })).status).toBe(401);
    const abort = await fetch(`http://${ip}:8000/svc/abort`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(abort.status).toBe(200);
    expect(await abort.json()).toEqual({ aborted: true, session_id: root });
    expect((await health(ip)).body.engine.run).toEqual({ type: 'idle' });
    // nothing runs behind a hollow sandbox
    expect((await fetch(`http://${ip}:8000/proxy/3000/`, { headers: { 'x-svc-user-context': signContextHeader(TOKEN, { sub: 'u', sid: 'session-h-7', scope: 'proxy' }) } })).status).toBe(502);
  });

  it('a booting hollow engine is not ready (pod and ?ready=1); an initial prompt is sent when it is', async () => {
    await tc.api('POST', '/api/v1/namespaces/default/pods', hollowPod('h-boot', {
      annotations: { 'sim.svc.dev/hollow-boot-ms': '1500' },
      env: [{ name: 'SVC_INITIAL_PROMPT', value: 'fix the bug' }],
    }));
    const booting = await eventually(async () => { const p = await getPod('h-boot'); return p?.status?.phase === 'Running' ? p : undefined; }, 'running', 50);
    expect(ready(booting)).toBe(false);
    const early = await health(booting.status!.podIP!, '?ready=1');
    expect(early.status).toBe(503);
    expect(early.body).toMatchObject({ status: 'starting', engine: { state: 'booting', root_session_id: null, initial_prompt_sent_at: null } });
    const up = await eventually(async () => { const p = await getPod('h-boot'); return ready(p) ? p : undefined; }, 'ready', 100);
    const later = await health(up.status!.podIP!, '?ready=1');
    expect(later.status).toBe(200);
    expect(later.body.engine.initial_prompt_sent_at).not.toBeNull();
    expect(later.body.engine.run).toEqual({ type: 'busy' });
  });

  it('a missing Secret is CreateContainerConfigError, as a kubelet says it', async () => {
    await tc.api('POST', '/api/v1/namespaces/default/pods', hollowPod('h-nosecret', { secret: 'missing-secrets' }));
    const p = await eventually(async () => {
      const pod = await getPod('h-nosecret');
      return pod?.status?.containerStatuses?.[0]?.state.waiting ? pod : undefined;
    }, 'waiting', 100);
    expect(p.status!.containerStatuses![0]!.state.waiting).toEqual({ reason: 'CreateContainerConfigError', message: 'secret "missing-secrets" not found' });
    expect(ready(p)).toBe(false);
  });

  it('deleting a hollow pod stops its responder', async () => {
    const ip = (await getPod('h-3'))!.status!.podIP!;
    expect((await health(ip)).status).toBe(200);
    await tc.api('DELETE', '/api/v1/namespaces/default/pods/h-3');
    await eventually(async () => (node.pods().has('default/h-3') ? undefined : true), 'evicted', 50);
    await expect(fetch(`http://${ip}:8000/svc/health`)).rejects.toThrow();
  });
});
