// The webhook receiver and the trigger routes over HTTP with an in-memory trigger store: the
// SPEC's order of checks and status codes, the 202 bodies, redelivery, the queue answer.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../app.js';
import type { Principal } from '../tokens.js';
import { signWebhookBody } from '../../triggers/index.js';
import { fireAnswer, holdsSlot, isPendingFire, parseFireAnswer, type Project, type Session, type Trigger, type TriggerFire } from '../../resources/index.js';
import { TriggerService } from './service.js';
import type { TriggerStore } from './store.js';

const PROJECT_ID = '0b8f2f4e-4d7a-4c39-9a53-3a3f4bb0c001';
const SECRET = 'hook-secret';
const project: Project = { apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'web', namespace: 'default', uid: PROJECT_ID }, spec: { repoUrl: '/r', defaultBranch: 'main' }, status: { triggerErrors: [{ index: 2, slug: 'Bad', messages: ['slug is invalid'] }] } };

function trigger(slug: string, spec: Partial<Trigger['spec']> = {}, status?: Trigger['status']): Trigger {
  return {
    apiVersion: 'svc.dev/v1alpha1', kind: 'Trigger',
    metadata: { name: `web-${slug}`, namespace: 'default', uid: `uid-${slug}`, ownerReferences: [{ apiVersion: 'svc.dev/v1alpha1', kind: 'Project', name: 'web', uid: PROJECT_ID, controller: true }] },
    spec: { slug, type: 'webhook', prompt: 'p', name: slug, agent: 'a', sessionMode: 'fresh', enabled: true, timezone: 'UTC', secretEnv: 'HOOK_SECRET', projectRef: { name: 'web' }, ...spec },
    ...(status ? { status } : {}),
  };
}

let triggers: Trigger[];
let fires: TriggerFire[];
let sessions: Session[];
/** Sessions in the cluster that the API's cache does not show yet (read live). */
let uncached: Session[];
/** The delivery ledger: fire name -> the answer recorded when the fire was pruned. */
let ledger: Map<string, string>;
let secrets: Record<string, string>;
let cap: number;
let failCreate: boolean;
const events: string[] = [];

const store: TriggerStore = {
  findProject: async (_ns, uid) => (uid === PROJECT_ID ? project : undefined),
  readFire: async (_ns, name) => fires.find((f) => f.metadata.name === name),
  readSession: async (_ns, name) => [...sessions, ...uncached].find((x) => x.metadata.name === name),
  triggers: () => triggers,
  secretValue: async (_ns, name, key) => (name === 'web-secrets' ? secrets[key] : undefined),
  setSecretKeys: async (_ns, name) => new Set(Object.entries(name === 'web-secrets' ? secrets : {}).filter(([, value]) => value !== '').map(([key]) => key)),
  slotHolders: () => sessions.filter(holdsSlot),
  sessionsOf: (t) => sessions.filter((x) => x.metadata.labels?.['svc.dev/trigger'] === t.metadata.name),
  pendingFires: () => fires.filter(isPendingFire),
  fire: (_ns, name) => fires.find((f) => f.metadata.name === name),
  firesOf: (t) => fires.filter((f) => f.metadata.labels?.['svc.dev/trigger'] === t.metadata.name),
  prunedAnswer: (_ns, name) => parseFireAnswer(ledger.get(name)),
  cap: async () => cap,
  async createFire(fire) {
    if (failCreate) throw new Error('etcd is down, password=hunter2');
    const existing = fires.find((f) => f.metadata.name === fire.metadata.name);
    if (existing) return { existing };
    const created = { ...fire, metadata: { ...fire.metadata, uid: `u-${fires.length}`, creationTimestamp: '2030-01-01T00:00:00Z' } };
    fires.push(created);
    return { created };
  },
  async resume(t, token) { return { ...t, metadata: { ...t.metadata, annotations: { 'svc.dev/resume': token } } }; },
  async recordEvent(_obj, event) { events.push(event.reason); },
};

const USER = '9d0c8e7a-1111-4b2c-8d3e-000000000001';
const tokens: Record<string, Principal> = {
  svc_admin: { tokenName: 'a', userId: USER, access: 'write', projectUid: null, capabilities: '*' },
  svc_reader: { tokenName: 'r', userId: USER, access: 'read', projectUid: null, capabilities: new Set() },
};
let server: Server;
let base: string;
const logged: string[] = [];

beforeAll(async () => {
  const app = createApp({
    projects: { listProjects: async () => [], getProject: async () => undefined, createProject: async (p) => p, triggersOf: async () => [], deleteProject: async () => {} },
    triggers: new TriggerService({ store, queueDepth: 2 }),
    verifyToken: async (token) => tokens[token] ?? null,
    isReady: () => true,
    config: { projectNamespace: 'default', webhookBodyLimit: 1024 },
    log: (m) => logged.push(m),
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  triggers = [trigger('hook'), trigger('off', { enabled: false }), trigger('nightly', { type: 'cron', cron: '0 0 3 * * *', secretEnv: undefined }), trigger('nosecret', { secretEnv: 'MISSING' })];
  fires = [];
  sessions = [];
  uncached = [];
  ledger = new Map();
  secrets = { HOOK_SECRET: SECRET };
  cap = 10;
  failCreate = false;
});

async function post(path: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const res = await fetch(base + path, { method: 'POST', headers, body });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) as Record<string, unknown> : {} };
}
const hook = (slug = 'hook', id = PROJECT_ID) => `/v1/webhooks/projects/${id}/${slug}`;
const signed = (body: string) => ({ 'x-svc-signature': signWebhookBody(body, SECRET), 'content-type': 'application/json' });

describe('webhook receiver', () => {
  it.each<[string, string, Record<string, string>, number]>([
    ['malformed project id', hook('hook', 'not-a-uuid'), signed('{}'), 400],
    ['malformed slug', hook('Bad Slug'), signed('{}'), 400],
    ['unknown project', hook('hook', '0b8f2f4e-4d7a-4c39-9a53-3a3f4bb0c999'), signed('{}'), 404],
    ['unknown trigger', hook('nope'), signed('{}'), 404],
    ['disabled trigger', hook('off'), signed('{}'), 404],
    ['not a webhook', hook('nightly'), signed('{}'), 404],
    ['secret not configured', hook('nosecret'), signed('{}'), 409],
    ['no authentication', hook(), { 'content-type': 'application/json' }, 401],
    ['bad signature with a good token', hook(), { 'x-svc-signature': 'sha256=' + '0'.repeat(64), 'x-svc-token': SECRET }, 401],
  ])('%s → %i, and no fire', async (_name, path, headers, status) => {
    const res = await post(path, '{}', headers);
    expect(res.status).toBe(status);
    expect(fires).toHaveLength(0);
    if (status === 401) expect(res.body).toEqual({ error: 'unauthorized' });
  });

  it('another method than POST: 405 saying what it takes (Allow: POST), never the API\'s "missing bearer token"', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const res = await fetch(base + hook(), { method });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(await res.json()).toEqual({ error: `a webhook takes POST (a delivery signed with the trigger's secret), not ${method}` });
    }
    expect(fires).toHaveLength(0);
  });

  it('a 404 comes before a 409 and a 409 before a 401', async () => {
    expect((await post(hook('nope'), 'x')).status).toBe(404);
    expect((await post(hook('nosecret'), 'x')).status).toBe(409);
  });

  it('a signed delivery is fired: 202 with the pre-assigned session id and the webhook variables', async () => {
    const body = '{"ref":"refs/heads/main","html":"a < b"}';
    const res = await post(hook(), body, { ...signed(body), 'user-agent': 'GitHub-Hookshot/x', 'x-forwarded-for': '10.1.1.1' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ status: 'fired', session_id: fires[0]!.spec.sessionName });
    expect(fires[0]!.spec).toMatchObject({
      source: 'webhook', triggerRef: { name: 'web-hook' },
      variables: { trigger: { slug: 'hook', type: 'webhook', kind: 'git' }, body: { ref: 'refs/heads/main', html: 'a < b' }, headers: { content_type: 'application/json', user_agent: 'GitHub-Hookshot/x', forwarded_for: '10.1.1.1' } },
    });
    expect(fires[0]!.metadata.labels).toEqual({ 'svc.dev/project': 'web', 'svc.dev/trigger': 'web-hook' });
  });

  it.each<[string, Record<string, string>]>([
    ['X-Hub-Signature-256', { 'x-hub-signature-256': signWebhookBody('a=1', SECRET) }],
    ['X-Svc-Token', { 'x-svc-token': SECRET }],
    ['Bearer', { authorization: `Bearer ${SECRET}` }],
    ['Basic', { authorization: `Basic ${Buffer.from(`any:${SECRET}`).toString('base64')}` }],
  ])('any content type and %s are accepted; an unparseable body is body.raw', async (_name, headers) => {
    const res = await post(hook(), 'a=1', { 'content-type': 'application/x-www-form-urlencoded', ...headers });
    expect(res.status).toBe(202);
    expect(fires[0]!.spec.variables?.body).toEqual({ raw: 'a=1' });
  });

  it('over the body limit: 413', async () => {
    const big = 'x'.repeat(2048);
    expect((await post(hook(), big, signed(big))).status).toBe(413);
    expect(fires).toHaveLength(0);
  });

  it('a redelivery (same delivery id) gets the same answer and no second fire', async () => {
    const headers = { ...signed('{}'), 'x-github-delivery': 'abc-123' };
    const first = await post(hook(), '{}', headers);
    const again = await post(hook(), '{}', headers);
    expect(again).toEqual(first);
    expect(fires).toHaveLength(1);
    expect(fires[0]!.spec.deliveryId).toBe('abc-123');
  });

  it('reuse: the session the last fire started, not in the cache yet (its fire came through first), is re-prompted, not doubled', async () => {
    triggers[0] = trigger('hook', { sessionMode: 'reuse' });
    const first = await post(hook(), '{}', signed('{}'));
    const started = first.body.session_id as string;
    // the operator made the session and recorded the fire; only the fire's update reached the cache
    fires[0]!.status = { phase: 'fired', sessionName: started };
    uncached = [{
      apiVersion: 'svc.dev/v1alpha1', kind: 'Session',
      metadata: { name: started, namespace: 'default', creationTimestamp: new Date().toISOString(), labels: { 'svc.dev/trigger': 'web-hook', 'svc.dev/project': 'web' } },
      spec: { projectRef: { name: 'web' }, agent: 'a', baseRef: 'main', desiredState: 'running' },
      status: { status: 'provisioning' },
    }];
    expect((await post(hook(), '{}', signed('{}'))).body).toEqual({ status: 'fired', session_id: started });
    // an old fire's session that is gone is not waited for
    fires[0]!.spec.firedAt = '2020-01-01T00:00:00.000Z';
    fires.splice(1);
    uncached = [];
    expect((await post(hook(), '{}', signed('{}'))).body.session_id).not.toBe(started);
  });

  it('at the cap: 202 queued with a reason; beyond the queue depth: 429 and an Event', async () => {
    cap = 0;
    const res = await post(hook(), '{}', signed('{}'));
    expect(res).toEqual({ status: 202, body: { status: 'queued', reason: expect.stringContaining('cap (0)') } });
    fires.forEach((f) => { f.status = { phase: 'queued' }; });
    await post(hook(), '{}', signed('{}'));
    fires.forEach((f) => { f.status = { phase: 'queued' }; });
    expect((await post(hook(), '{}', signed('{}'))).status).toBe(429);
    expect(fires).toHaveLength(2);
    expect(events).toContain('QueueFull');
  });

  it('a redelivery gets its first answer after the queue filled and after the trigger was paused; a new delivery does not', async () => {
    cap = 0;
    const first = await post(hook(), '{}', { ...signed('{}'), 'x-github-delivery': 'kept-1' });
    expect(first).toEqual({ status: 202, body: { status: 'queued', reason: expect.stringContaining('cap (0)') } });
    await post(hook(), '{}', signed('{}'));
    expect((await post(hook(), '{}', signed('{}'))).status).toBe(429); // the queue (depth 2) is full now
    expect(await post(hook(), '{}', { ...signed('{}'), 'x-github-delivery': 'kept-1' })).toEqual(first);
    triggers[0] = trigger('hook', {}, { paused: true, consecutiveFailures: 3 });
    expect(await post(hook(), '{}', { ...signed('{}'), 'x-github-delivery': 'kept-1' })).toEqual(first);
    const refused = await post(hook(), '{}', { ...signed('{}'), 'x-github-delivery': 'new-1' });
    expect(refused.status).toBe(404);
    expect(refused.body.error).toContain('svc triggers resume hook');
    expect(fires).toHaveLength(2);
  });

  it('a disabled trigger: a redelivery of a delivery it accepted gets its first answer (also pruned); anything else 404, never 401, 409 or 413', async () => {
    const headers = { ...signed('{}'), 'x-github-delivery': 'before-disable' };
    const first = await post(hook(), '{}', headers);
    expect(first.status).toBe(202);
    const pruned = { ...headers, 'x-github-delivery': 'pruned-before-disable' };
    const prunedFirst = await post(hook(), '{}', pruned);
    const [, prunedFire] = fires;
    fires.splice(1, 1);
    ledger.set(prunedFire!.metadata.name!, JSON.stringify(fireAnswer(prunedFire!)));
    triggers[0] = trigger('hook', { enabled: false });
    expect(await post(hook(), '{}', headers)).toEqual(first);
    expect(await post(hook(), '{}', pruned)).toEqual(prunedFirst);
    const big = 'x'.repeat(2048);
    for (const [what, body, h] of [
      ['a new signed delivery', '{}', { ...signed('{}'), 'x-github-delivery': 'after-disable' }],
      ['a new delivery without an id', '{}', signed('{}')],
      ['the redelivery unsigned', '{}', { 'content-type': 'application/json', 'x-github-delivery': 'before-disable' }],
      ['the redelivery badly signed', '{}', { 'x-svc-signature': 'sha256=' + '0'.repeat(64), 'x-github-delivery': 'before-disable' }],
      ['a body over the limit', big, { ...signed(big), 'x-github-delivery': 'before-disable' }],
    ] as const) {
      expect((await post(hook(), body, h)).status, what).toBe(404);
    }
    triggers[0] = trigger('hook', { enabled: false, secretEnv: 'MISSING' });
    expect((await post(hook(), '{}', headers)).status).toBe(404);
    expect(fires).toHaveLength(1);
  });

  it('a redelivery of a pruned fire gets its first answer from the delivery ledger and creates nothing, also when paused', async () => {
    const headers = { ...signed('{}'), 'x-github-delivery': 'pruned-1' };
    const first = await post(hook(), '{}', headers);
    expect(first.status).toBe(202);
    // the Trigger controller records the answer, then deletes the fire
    const [pruned] = fires.splice(0);
    ledger.set(pruned!.metadata.name!, JSON.stringify(fireAnswer(pruned!)));
    expect(await post(hook(), '{}', headers)).toEqual(first);
    triggers[0] = trigger('hook', {}, { paused: true, consecutiveFailures: 3 });
    cap = 0;
    expect(await post(hook(), '{}', headers)).toEqual(first);
    expect(fires).toHaveLength(0);
    // the same delivery id on another trigger is another delivery
    triggers.push(trigger('other'));
    expect((await post(hook('other'), '{}', headers)).body).toMatchObject({ status: 'queued' });
  });

  it('a refusal reads a first delivery the cache does not have yet, and answers with it', async () => {
    cap = 0;
    const first = await post(hook(), '{}', { ...signed('{}'), 'x-github-delivery': 'lagging-1' });
    const hidden = fires.splice(0); // the cache lost sight of it: only a live read finds it
    const live = store.readFire;
    store.readFire = async (_ns, name) => hidden.find((f) => f.metadata.name === name);
    try {
      triggers[0] = trigger('hook', {}, { paused: true, consecutiveFailures: 3 });
      expect(await post(hook(), '{}', { ...signed('{}'), 'x-github-delivery': 'lagging-1' })).toEqual(first);
    } finally {
      store.readFire = live;
    }
  });

  it('a failure to record the fire: 500 without the cause', async () => {
    failCreate = true;
    const res = await post(hook(), '{}', signed('{}'));
    expect(res.status).toBe(500);
    expect(JSON.stringify(res.body)).not.toContain('hunter2');
  });
});

describe('trigger routes', () => {
  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(`${base}/v1/projects/${PROJECT_ID}/triggers${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: await res.json() as Record<string, unknown> };
  };

  it('lists the triggers with runtime state and the listing errors', async () => {
    triggers[0] = trigger('hook', {}, { lastFiredAt: '2030-01-01T00:00:00Z', paused: true, consecutiveFailures: 3 });
    const res = await call('GET', '', 'svc_reader');
    expect(res.status).toBe(200);
    expect((res.body.triggers as { slug: string }[]).map((t) => t.slug)).toEqual(['hook', 'nightly', 'nosecret', 'off']);
    expect((res.body.triggers as Record<string, unknown>[])[0]).toMatchObject({ slug: 'hook', type: 'webhook', enabled: true, last_fired_at: '2030-01-01T00:00:00Z', next_fire_at: null, dormant: false, paused: true });
    expect(res.body.errors).toEqual([{ index: 2, slug: 'Bad', messages: ['slug is invalid'] }]);
    // a webhook trigger says whether its secret is set (every delivery gets 409 until it is); a cron trigger has none
    const bySlug = Object.fromEntries((res.body.triggers as Record<string, unknown>[]).map((t) => [t.slug, t]));
    expect([bySlug.hook!.secret_configured, bySlug.nosecret!.secret_configured, 'secret_configured' in bySlug.nightly!]).toEqual([true, false, false]);
    secrets = { HOOK_SECRET: '' };
    expect(((await call('GET', '', 'svc_reader')).body.triggers as Record<string, unknown>[])[0]!.secret_configured).toBe(false);
  });

  it('names the prompt tags that render empty at every fire (a warning, not an error)', async () => {
    triggers[0] = trigger('hook', { prompt: 'Push to {{ payload.ref }} by {{ body.pusher.name }} ({{ message.text }})' });
    const listed = (await call('GET', '', 'svc_reader')).body.triggers as { slug: string; prompt_warnings: string[] }[];
    expect(listed[0]!.prompt_warnings).toEqual([
      expect.stringMatching(/^\{\{ payload\.ref \}\} names no variable of a webhook fire and renders empty; it has .*body\.\*/),
    ]);
    expect(listed.find((t) => t.slug === 'nightly')!.prompt_warnings).toEqual([]);
  });

  it('manual fire: 202, actor and message reach the variables; read-only tokens get 403', async () => {
    const res = await call('POST', '/hook/fire', 'svc_admin', { message: { text: 'please', source: 'cli' } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ status: 'fired', session_id: fires[0]!.spec.sessionName });
    expect(fires[0]!.spec.variables).toMatchObject({ source: 'manual', actor: USER, message: { text: 'please', source: 'cli' } });
    expect((await call('POST', '/hook/fire', 'svc_reader', {})).status).toBe(403);
    expect((await call('POST', '/hook/fire', 'svc_admin', { message: { text: 5 } })).status).toBe(400);
    expect(await call('POST', '/hook/fire', 'svc_admin', { message: { text: 'a\u0000b' } })).toMatchObject({ status: 400, body: { error: 'message.text must not contain a NUL character' } });
    expect((await call('POST', '/nope/fire', 'svc_admin', {})).status).toBe(404);
    expect((await call('POST', '/off/fire', 'svc_admin', {})).status).toBe(409);
  });

  it('lists fires newest first with phase and session', async () => {
    await call('POST', '/hook/fire', 'svc_admin', {});
    fires[0]!.status = { phase: 'fired', sessionName: 's-1' };
    const res = await call('GET', '/hook/fires', 'svc_reader');
    expect(res.body.fires).toEqual([{ name: fires[0]!.metadata.name, source: 'manual', fired_at: fires[0]!.spec.firedAt, phase: 'fired', reason: null, queue_position: null, session_id: 's-1', delivery_id: null }]);
    expect((await call('GET', '/hook/fires?limit=1', 'svc_reader')).status).toBe(200);
    for (const limit of ['0', '0x10', '1e2', '+1', '1.5', '']) expect((await call('GET', `/hook/fires?limit=${encodeURIComponent(limit)}`, 'svc_reader')).status, limit).toBe(400);
  });

  it('resume sets the annotation', async () => {
    const res = await call('POST', '/hook/resume', 'svc_admin');
    expect(res.status).toBe(200);
    expect(res.body.trigger).toMatchObject({ slug: 'hook' });
  });
});
