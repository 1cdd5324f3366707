// Events, not polling (issue 24 §2, docs/sessions.md): through `svc dev` with the controllers'
// safety net set to an hour, a session still starts, takes a prompt sent while it starts and
// wakes, because svc-agent tells the API when its state changes. And the attack: a sandbox token
// pokes only its own session, never another's or a stopped one's, and a flood is answered 429
// within a small budget while svc keeps serving.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { buildArtifacts } from '../daemon/harness.js';
import { callApi, fixtureEngineArgs, removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';
import { makeRepo, runOk, waitFor } from '../dev/util.js';

let dev: DevInstance;
let projectId: string;
const HOUR = '3600';

interface SessionView { id: string; status: string; reason: string | null }

const api = <T = Record<string, unknown>>(method: string, urlPath: string, body?: unknown) => callApi<T>(dev, method, urlPath, body);

const sessions = () => `/projects/${projectId}/sessions`;
const kubectl = (...args: string[]) => runOk('kubectl', args, dev.env);

async function start(body: Record<string, unknown> = {}): Promise<SessionView> {
  const res = await api<{ session: SessionView }>('POST', sessions(), body);
  expect(res.status).toBe(201);
  return res.body.session;
}

async function waitStatus(id: string, status: string, timeoutMs = 45_000): Promise<SessionView> {
  return waitFor(`session ${id} ${status}`, async () => {
    const { body } = await api<{ session: SessionView }>('GET', `${sessions()}/${id}`);
    if (body.session.status === 'failed' && status !== 'failed') throw new Error(`session failed: ${body.session.reason}`);
    return body.session.status === status ? body.session : undefined;
  }, timeoutMs);
}

/** What the agent holds: its sandbox token (the Session Secret). */
async function sandboxToken(id: string): Promise<string> {
  return Buffer.from(await kubectl('get', 'secret', `svc-session-${id}`, '-o', 'jsonpath={.data.sandboxToken}'), 'base64').toString('utf8');
}

const daemonEvent = (id: string) => kubectl('get', 'sandbox', id, '-o', 'jsonpath={.metadata.annotations.svc\\.dev/daemon-event}');

/**
 * The annotation once the session's own daemon is quiet: after `ready` it still says `changed` when
 * its engine's root session exists, which must not pass for another token's poke.
 */
async function quietDaemonEvent(id: string): Promise<string> {
  let last = await daemonEvent(id);
  let since = Date.now();
  return waitFor(`session ${id}'s daemon quiet`, async () => {
    const now = await daemonEvent(id);
    if (now !== last) [last, since] = [now, Date.now()];
    return Date.now() - since >= 1_500 ? now : undefined;
  }, 30_000);
}

async function poke(token: string | undefined, body: unknown = { event: 'ready' }): Promise<{ status: number; retryAfter: string | null }> {
  const res = await fetch(`${dev.apiUrl}/sandbox/events`, {
    method: 'POST',
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await res.body?.cancel();
  return { status: res.status, retryAfter: res.headers.get('retry-after') };
}

const promptsSent = (id: string): string[] => {
  const file = path.join(dev.dataDir, 'sandboxes', 'default', id, 'home', 'fixture-calls.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { path: string; body?: { parts?: { text: string }[] } })
    .filter((c) => c.path.endsWith('/prompt_async')).map((c) => c.body?.parts?.[0]?.text ?? '');
};

/** The svc-agent process of a session (node running bin/svc-agent.js with its session id), not the jail's launchers. */
function daemonPids(id: string): number[] {
  return readdirSync('/proc').filter((e) => /^\d+$/.test(e)).filter((pid) => {
    try {
      return readlinkSync(`/proc/${pid}/exe`) === process.execPath && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('bin/svc-agent.js')
        && readFileSync(`/proc/${pid}/environ`, 'latin1').includes(`SVC_SESSION_ID=${id}\0`);
    } catch { return false; }
  }).map(Number);
}

beforeAll(async () => {
  const { fixtureEngine } = await buildArtifacts();
  // the safety net an hour away: whatever happens within this test happens on events
  dev = await startDev({ args: [...fixtureEngineArgs(fixtureEngine), '--max-sessions', '10'], extraEnv: { SVC_SANDBOX_RESYNC_PROVISIONING_SECONDS: HOUR, SVC_SANDBOX_RESYNC_RUNNING_SECONDS: HOUR } });
  const repo = path.join(dev.dataDir, 'repo');
  makeRepo(repo, { 'README.md': '# events\n' });
  await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'events' }, spec: { repoUrl: repo, defaultBranch: 'main' } }));
  projectId = await waitFor('the project', async () => (await kubectl('get', 'project', 'events', '-o', 'jsonpath={.metadata.uid}')) || undefined);
}, 90_000);

afterAll(async () => {
  await dev?.stop();
  if (dev) removeDevDir(dev.dataDir);
});

describe('a session starts on its daemon\'s events (the controllers\' polling an hour away)', () => {
  let first: SessionView;

  it('running without waiting for a poll; a prompt sent while it starts is delivered once its root session exists', async () => {
    const started = Date.now();
    first = await start();
    const early = await api('POST', `${sessions()}/${first.id}/prompt`, { text: 'sent while starting' });
    expect(early.status).toBe(202);
    await waitStatus(first.id, 'running');
    // a generous bound for a shared machine; a poll would have taken an hour
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(await daemonEvent(first.id)).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z (starting|ready|busy|idle|failed|changed)$/);
    await waitFor('the early prompt delivered', async () => promptsSent(first.id).includes('sent while starting'));
  }, 60_000);

  it('stop and wake by prompt: running again, the prompt delivered', async () => {
    expect((await api('POST', `${sessions()}/${first.id}/stop`)).status).toBe(200);
    await waitStatus(first.id, 'stopped');
    expect((await api('POST', `${sessions()}/${first.id}/prompt`, { text: 'after the wake' })).status).toBe(202);
    await waitStatus(first.id, 'running');
    await waitFor('the wake\'s prompt delivered', async () => promptsSent(first.id).includes('after the wake'));
  }, 90_000);

  it('a daemon that dies (it can say nothing) is started again at once: its process\'s end is the event', async () => {
    const [pid] = daemonPids(first.id);
    expect(pid).toBeDefined();
    const killed = Date.now();
    process.kill(pid!, 'SIGKILL');
    const [next] = await waitFor('a new svc-agent', async () => { const pids = daemonPids(first.id).filter((p) => p !== pid); return pids.length ? pids : undefined; }, 30_000);
    expect(next).not.toBe(pid);
    expect(Date.now() - killed).toBeLessThan(20_000);
    await waitStatus(first.id, 'running');
  }, 60_000);
});

describe('attack: a sandbox token pokes only its own session, and a flood is bounded', () => {
  let a: SessionView;
  let b: SessionView;
  let tokenA: string;
  let tokenB: string;

  beforeAll(async () => {
    [a, b] = [await start(), await start()];
    await Promise.all([waitStatus(a.id, 'running'), waitStatus(b.id, 'running')]);
    [tokenA, tokenB] = [await sandboxToken(a.id), await sandboxToken(b.id)];
  }, 90_000);

  it('the token says whose Sandbox: the body cannot name another; forged, API and other tokens are 401', async () => {
    const before = await quietDaemonEvent(b.id);
    expect((await poke(tokenA, { event: 'ready', session: b.id })).status).toBe(400);
    expect((await poke(tokenA, { event: 'ready' })).status).toBe(202);
    expect(await daemonEvent(b.id)).toBe(before);
    const forged = `svcsbx.${b.id}.${randomBytes(32).toString('base64url')}`;
    for (const token of [undefined, forged, dev.token, `${tokenB}x`]) expect((await poke(token)).status).toBe(401);
    expect(await daemonEvent(b.id)).toBe(before);
  }, 60_000);

  it('a stopped session\'s token pokes nothing', async () => {
    expect((await api('POST', `${sessions()}/${b.id}/stop`)).status).toBe(200);
    await waitStatus(b.id, 'stopped');
    expect((await poke(tokenB)).status).toBe(401);
  }, 60_000);

  it('a flood: past a small budget every request is 429 with Retry-After; svc keeps serving the session', async () => {
    const started = Date.now();
    const answers: { status: number; retryAfter: string | null }[] = [];
    for (let round = 0; round < 10; round++) answers.push(...await Promise.all(Array.from({ length: 30 }, () => poke(tokenA))));
    const seconds = (Date.now() - started) / 1000;
    const accepted = answers.filter((r) => r.status === 202).length;
    const refused = answers.filter((r) => r.status === 429);
    expect(accepted + refused.length).toBe(answers.length);
    // the budget (docs/sessions.md): a burst of 20, then 2 a second
    expect(accepted).toBeLessThanOrEqual(20 + Math.ceil(2 * seconds) + 1);
    expect(refused.every((r) => Number(r.retryAfter) >= 1)).toBe(true);
    expect((await api<{ session: SessionView }>('GET', `${sessions()}/${a.id}`)).body.session.status).toBe('running');
  }, 60_000);
});
