// POST /v1/sandbox/events over HTTP with an in-memory store: only a live session's own sandbox
// token is heard, only its own Sandbox is annotated, a flood is answered 429 and folded into
// at most one write in flight per session.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { createApp } from '../app.js';
import { newSandboxToken } from '../../lib/sandbox-token.js';
import { DAEMON_EVENT_ANNOTATION, type Session } from '../../resources/index.js';
import { SandboxEventService, type SandboxEventStore } from './index.js';

const NS = 'default';
const live: string = randomUUID();
const other: string = randomUUID();
const stopped: string = randomUUID();
const tokens = new Map([live, other, stopped].map((id) => [id, newSandboxToken(id)]));
const session = (id: string, status: string) => ({ metadata: { name: id, namespace: NS }, spec: {}, status: { status } }) as unknown as Session;
const sessions = new Map([[live, session(live, 'running')], [other, session(other, 'running')], [stopped, session(stopped, 'stopped')]]);
const writes: { name: string; value: string }[] = [];
let release = null as (() => void) | null;
let hold = false;
const store: SandboxEventStore = {
  cachedSession: (ns, id) => (ns === NS ? sessions.get(id) : undefined),
  cachedSandboxToken: (ns, id) => (ns === NS ? tokens.get(id) : undefined),
  async annotateSandbox(_ns, name, annotations) {
    writes.push({ name, value: annotations[DAEMON_EVENT_ANNOTATION]! });
    if (hold) await new Promise<void>((resolve) => { release = resolve; });
  },
};
let now = Date.parse('2030-01-01T00:00:00Z');
let server: Server;
let base: string;

beforeAll(async () => {
  const app = createApp({
    projects: { listProjects: async () => [], createProject: async () => { throw new Error('no'); }, getProject: async () => undefined, triggersOf: async () => [], deleteProject: async () => {} },
    sandboxEvents: new SandboxEventService({ store, namespace: NS, budget: { burst: 3, perSecond: 1 }, now: () => new Date(now) }),
    verifyToken: async (token) => (token === 'svc_admin' ? { tokenName: 'a', userId: randomUUID(), access: 'write', projectUid: null, capabilities: '*' } : null),
    isReady: () => true,
    config: { projectNamespace: NS },
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

async function send(token: string | undefined, body: unknown = { event: 'ready' }): Promise<{ status: number; retryAfter: string | null; body: Record<string, unknown> }> {
  const res = await fetch(`${base}/v1/sandbox/events`, {
    method: 'POST',
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() as Record<string, unknown> };
}

describe('POST /v1/sandbox/events', () => {
  it('records the fact on the caller\'s own Sandbox, nothing else', async () => {
    writes.length = 0;
    const res = await send(tokens.get(live), { event: 'ready' });
    expect(res).toMatchObject({ status: 202, body: { recorded: true } });
    expect(writes).toEqual([{ name: live, value: '2030-01-01T00:00:00.000Z ready' }]);
  });

  it('401 for no token, an API token, a forged or stale sandbox token, a stopped session\'s', async () => {
    writes.length = 0;
    const forged = `svcsbx.${other}.${'A'.repeat(43)}`;
    for (const token of [undefined, 'svc_admin', forged, newSandboxToken(live), tokens.get(stopped)]) {
      expect((await send(token)).status).toBe(401);
    }
    expect(writes).toEqual([]);
  });

  it('400 for anything but a known kind; the body never names a session', async () => {
    now += 60_000;
    for (const body of [{ event: 'pwned' }, { event: 'ready', session: other }, 'not json']) expect((await send(tokens.get(other), body)).status).toBe(400);
  });

  it('429 with Retry-After past the budget, per session; the budget comes back over time', async () => {
    now += 60_000;
    writes.length = 0;
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await send(tokens.get(live)));
    expect(results.map((r) => r.status)).toEqual([202, 202, 202, 429, 429]);
    expect(results[3]!.retryAfter).toBe('1');
    expect(writes).toHaveLength(3);
    expect((await send(tokens.get(other))).status).toBe(202); // another session's budget is its own
    now += 1000;
    expect((await send(tokens.get(live))).status).toBe(202);
  });

  it('a burst while a write is in flight is folded into one more write with the latest kind', async () => {
    now += 60_000;
    writes.length = 0;
    hold = true;
    const first = send(tokens.get(live), { event: 'busy' });
    while (!release) await new Promise((r) => setTimeout(r, 5));
    const followers = await Promise.all([send(tokens.get(live), { event: 'idle' }), send(tokens.get(live), { event: 'changed' })]);
    expect(followers.map((r) => r.status)).toEqual([202, 202]);
    hold = false;
    const releaseFirst = release!;
    release = null;
    releaseFirst();
    expect((await first).status).toBe(202);
    expect(writes.map((w) => w.value.split(' ')[1])).toEqual(['busy', 'changed']);
  });
});
