// Issue 11 through `svc dev` and real HTTP: the webhook receiver with every auth form, the SPEC's
// refusals, redelivery (sequential and concurrent) giving one session, manual fire with a
// message (the CLI), reuse mode re-prompting and waking, the queue at the cap draining in order,
// a disabled trigger, and a trigger removed from the manifest. The outcome of a fire is a
// Session resource with the right spec (no Session controller is needed for these assertions).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, removeDevDir, fixtureEngineArgs, startDev, type DevInstance } from '../helpers/dev.js';
import { buildArtifacts, cleanupArtifacts } from '../daemon/harness.js';
import { commitFiles, makeRepo, run, runOk, waitFor } from '../dev/util.js';
import { signWebhookBody } from '../../src/triggers/index.js';
import { webhookManifest } from '../helpers/manifests.js';
import { fillPendingPrompts } from '../helpers/pending-prompts.js';
import { PENDING_PROMPTS_ANNOTATION, PENDING_PROMPTS_MAX_BYTES } from '../../src/resources/index.js';

const SVC = path.join(REPO_ROOT, 'bin/svc.js');
const SECRET = 'whsec-0123456789';
let tmp: string;
let repo: string;
let dev: DevInstance;
let projectId: string;

const manifest = (extra = '') => webhookManifest('push to {{ body.ref }}: {{ body.code }} ({{ headers.user_agent }}){{ body.missing }}', `  - slug: reuse-hook
    type: webhook
    secret_env: HOOK_SECRET
    session_mode: reuse
    prompt: "again {{ body.n }}"
  - slug: burst-hook
    type: webhook
    secret_env: HOOK_SECRET
    session_mode: reuse
    prompt: "burst {{ body.n }}"
  - slug: queue-hook
    type: webhook
    secret_env: HOOK_SECRET
    prompt: "queued {{ body.n }}"
  - slug: off
    type: webhook
    secret_env: HOOK_SECRET
    enabled: false
    prompt: never
  - slug: nosecret
    type: webhook
    secret_env: NOT_CONFIGURED
    prompt: never
  - slug: manual
    type: webhook
    secret_env: HOOK_SECRET
    model: openai/gpt-5
    prompt: "{{ source }} by {{ actor }}: {{ message.text }} via {{ message.source }}"
${extra}`);

const kubectl = (...args: string[]) => runOk('kubectl', args, dev.env);
const svc = (...args: string[]) => run(process.execPath, [SVC, ...args], dev.env);
const getJson = async <T>(...args: string[]) => JSON.parse(await kubectl('get', ...args, '-o', 'json')) as T;

interface Obj { metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string>; ownerReferences?: { kind: string; name: string }[] }; spec: Record<string, unknown>; status?: Record<string, unknown> }

async function webhook(slug: string, body: string, headers: Record<string, string>, project = projectId) {
  const res = await fetch(`${dev.apiUrl}/webhooks/projects/${project}/${slug}`, { method: 'POST', headers, body });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) as Record<string, unknown> : {} };
}
const signed = (body: string, extra: Record<string, string> = {}) => ({ 'content-type': 'application/json', 'x-svc-signature': signWebhookBody(body, SECRET), ...extra });
const session = (id: string) => waitFor(`session ${id}`, async () => getJson<Obj>('session', id));
const firesOf = async (trigger: string) => (await getJson<{ items: Obj[] }>('triggerfires', '-l', `svc.dev/trigger=${trigger}`)).items;
const sessionsOf = async (trigger: string) => (await getJson<{ items: Obj[] }>('sessions', '-l', `svc.dev/trigger=${trigger}`)).items;
const stopSession = (name: string) => kubectl('patch', 'session', name, '--type=merge', '-p', '{"spec":{"desiredState":"stopped"}}');

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-triggers-'));
  repo = path.join(tmp, 'repo');
  makeRepo(repo, { 'svc.yaml': manifest() });
  // Sessions started by fires run for real (the Session controller is part of svc dev) on the light fixture engine.
  const { fixtureEngine } = await buildArtifacts();
  dev = await startDev({ dataDir: path.join(tmp, 'dev'), args: fixtureEngineArgs(fixtureEngine) });
  const project = { apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name: 'hooks' }, spec: { repoUrl: repo, defaultBranch: 'main' } };
  await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify(project));
  await kubectl('create', 'secret', 'generic', 'hooks-secrets', `--from-literal=HOOK_SECRET=${SECRET}`);
  await waitFor('project hooks Ready', async () => (await kubectl('get', 'project', 'hooks', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')) === 'True');
  projectId = await kubectl('get', 'project', 'hooks', '-o', 'jsonpath={.metadata.uid}');
  await waitFor('the API to see the trigger and the secret', async () => (await webhook('hook', '{}', {})).status === 401);
}, 120_000);

afterAll(async () => {
  await dev?.stop();
  if (tmp) removeDevDir(tmp);
  cleanupArtifacts();
});

describe('webhook receiver', () => {
  it.each<[string, (body: string) => Record<string, string>]>([
    ['X-Svc-Signature', (b) => signed(b)],
    ['X-Svc-Signature without prefix, upper case', (b) => ({ 'x-svc-signature': signWebhookBody(b, SECRET).slice(7).toUpperCase() })],
    ['X-Hub-Signature-256', (b) => ({ 'x-hub-signature-256': signWebhookBody(b, SECRET) })],
    ['X-Svc-Token', () => ({ 'x-svc-token': SECRET })],
    ['Bearer', () => ({ authorization: `Bearer ${SECRET}` })],
    ['Basic (password half)', () => ({ authorization: `Basic ${Buffer.from(`github:${SECRET}`).toString('base64')}` })],
  ])('%s: 202 fired, and the session has the rendered prompt and the trigger\'s agent', async (_name, headers) => {
    const body = JSON.stringify({ ref: 'refs/heads/main', code: 'a < b && "c"' });
    const res = await webhook('hook', body, { ...headers(body), 'user-agent': 'curl-test' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ status: 'fired', session_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const s = await session(res.body.session_id as string);
    expect(s.spec).toMatchObject({
      projectRef: { name: 'hooks' }, agent: 'coder', baseRef: 'main', desiredState: 'running', triggerRef: { name: 'hooks-hook' },
      initialPrompt: 'push to refs/heads/main: a < b && "c" (curl-test)',
    });
    expect(s.metadata.labels).toMatchObject({ 'svc.dev/project': 'hooks', 'svc.dev/trigger': 'hooks-hook' });
    expect(s.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Project', name: 'hooks' });
    await stopSession(s.metadata.name);
  });

  it('a payload that renders a prompt past 64 KiB: the prompt is cut, saying so, and the session runs (a first prompt past 128 KiB kept the sandbox from starting: E2BIG)', async () => {
    const body = JSON.stringify({ ref: 'r'.repeat(200_000), code: 'big' });
    const res = await webhook('hook', body, signed(body));
    expect(res.status).toBe(202);
    const id = res.body.session_id as string;
    const prompt = (await session(id)).spec.initialPrompt as string;
    expect(Buffer.byteLength(prompt)).toBeLessThanOrEqual(64 * 1024);
    expect(prompt).toMatch(/^push to r{60000,}\n\n\[svc: this prompt was cut to 65536 bytes; it had 200\d{3}\]$/);
    await waitFor(`session ${id} running`, async () => {
      const status = (await getJson<Obj>('session', id)).status;
      if (status?.status === 'failed') throw new Error(`session failed: ${JSON.stringify(status)}`);
      return status?.status === 'running';
    }, 60_000);
    await stopSession(id);
  }, 90_000);

  it('refuses with the SPEC statuses and writes nothing', async () => {
    const before = (await firesOf('hooks-hook')).length;
    const bad = signWebhookBody('other', SECRET);
    expect((await webhook('hook', '{}', signed('{}'), 'not-a-uuid')).status).toBe(400);
    expect((await webhook('Bad_Slug!', '{}', signed('{}'))).status).toBe(400);
    expect((await webhook('hook', '{}', signed('{}'), '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await webhook('nope', '{}', signed('{}'))).status).toBe(404);
    expect((await webhook('off', '{}', signed('{}'))).status).toBe(404);
    expect((await webhook('nosecret', '{}', signed('{}'))).status).toBe(409);
    expect(await webhook('hook', '{}', {})).toEqual({ status: 401, body: { error: 'unauthorized' } });
    expect((await webhook('hook', '{}', { 'x-svc-signature': bad, 'x-svc-token': SECRET })).status).toBe(401);
    expect((await webhook('hook', '{}', { 'x-svc-signature': signWebhookBody('{}', SECRET).slice(0, 70) })).status).toBe(401);
    const big = 'x'.repeat(1024 * 1024 + 10);
    expect((await webhook('hook', big, signed(big))).status).toBe(413);
    expect((await firesOf('hooks-hook')).length).toBe(before);
  });

  it("GitHub's ping when a webhook is made: 200 pong once its signature matches, and nothing fires", async () => {
    const before = (await firesOf('hooks-hook')).length;
    const body = '{"zen":"Keep it logically awesome.","hook_id":1}';
    const ping = { 'x-github-event': 'ping', 'x-github-delivery': 'ping-1', 'content-type': 'application/json' };
    expect(await webhook('hook', body, { ...ping, 'x-hub-signature-256': signWebhookBody(body, SECRET) })).toEqual({
      status: 200, body: { status: 'pong', message: "trigger hook is reached and the delivery is authenticated by its secret; nothing fired (GitHub's ping)" },
    });
    expect((await webhook('hook', body, { ...ping, 'x-hub-signature-256': signWebhookBody(body, 'wrong secret') })).status).toBe(401);
    expect((await webhook('off', body, { ...ping, 'x-hub-signature-256': signWebhookBody(body, SECRET) })).status).toBe(404);
    expect((await firesOf('hooks-hook')).length).toBe(before);
  });

  it('a form body is accepted and exposed as body.raw', async () => {
    const res = await webhook('queue-hook', 'n=1&x=2', { 'content-type': 'application/x-www-form-urlencoded', 'x-svc-token': SECRET });
    expect(res.status).toBe(202);
    const fire = (await firesOf('hooks-queue-hook')).find((f) => f.spec.sessionName === res.body.session_id)!;
    expect(fire.spec.variables).toMatchObject({ body: { raw: 'n=1&x=2' }, headers: { content_type: 'application/x-www-form-urlencoded' } });
    await stopSession(res.body.session_id as string);

    // GitHub's default content type: the JSON payload in a form field, signed as sent
    const form = new URLSearchParams({ payload: JSON.stringify({ ref: 'refs/heads/form', code: 7 }) }).toString();
    const github = await webhook('hook', form, { 'content-type': 'application/x-www-form-urlencoded', 'x-hub-signature-256': signWebhookBody(form, SECRET), 'user-agent': 'GitHub-Hookshot/1' });
    expect(github.status).toBe(202);
    expect((await session(github.body.session_id as string)).spec.initialPrompt).toBe('push to refs/heads/form: 7 (GitHub-Hookshot/1)');
    await stopSession(github.body.session_id as string);
  });

  it('redelivery, sequential and concurrent, gives the same answer and one session', async () => {
    const body = '{"ref":"refs/heads/dev"}';
    const first = await webhook('hook', body, signed(body, { 'x-github-delivery': 'delivery-seq-1' }));
    const again = await webhook('hook', body, signed(body, { 'x-github-delivery': 'delivery-seq-1' }));
    expect(first.status).toBe(202);
    expect(again).toEqual(first);
    const burst = await Promise.all(Array.from({ length: 6 }, () => webhook('hook', body, signed(body, { 'x-svc-delivery': 'delivery-burst-1' }))));
    expect(new Set(burst.map((r) => JSON.stringify(r))).size).toBe(1);
    expect(burst[0]!.status).toBe(202);
    await session(burst[0]!.body.session_id as string);
    const fires = (await firesOf('hooks-hook')).filter((f) => ['delivery-seq-1', 'delivery-burst-1'].includes(f.spec.deliveryId as string));
    expect(fires).toHaveLength(2);
    const sessions = await sessionsOf('hooks-hook');
    for (const id of [first.body.session_id, burst[0]!.body.session_id]) expect(sessions.filter((s) => s.metadata.name === id)).toHaveLength(1);
  });
});

describe('manual fire and listings (CLI)', () => {
  it('svc triggers fire --message: 202 fired; the session has the model, createdBy and the manual variables', async () => {
    const fired = await svc('triggers', 'fire', 'manual', '--message', 'run it now', '--project', 'hooks', '--json');
    expect(fired.stderr).toBe('');
    const answer = JSON.parse(fired.stdout) as { status: string; session_id: string };
    expect(answer.status).toBe('fired');
    const s = await session(answer.session_id);
    expect(s.spec).toMatchObject({ model: 'openai/gpt-5', createdBy: expect.any(String) });
    expect(s.spec.initialPrompt).toBe(`manual by ${s.spec.createdBy as string}: run it now via cli`);
    await stopSession(answer.session_id);

    const fires = await svc('triggers', 'fires', 'manual', '--project', 'hooks', '--json');
    const list = JSON.parse(fires.stdout) as { fires: { source: string; phase: string; session_id: string | null }[] };
    expect(list.fires[0]).toMatchObject({ source: 'manual' });
    await waitFor('the fire to be marked fired', async () => {
      const again = JSON.parse((await svc('triggers', 'fires', 'manual', '--project', 'hooks', '--json')).stdout) as typeof list;
      return again.fires[0]?.phase === 'fired' && again.fires[0].session_id === answer.session_id;
    });
    const text = await svc('triggers', 'fires', 'manual', '--project', 'hooks');
    expect(text.stdout).toContain(answer.session_id);
  });

  it('svc triggers ls --project: the live listing with runtime state; a disabled trigger cannot be fired', async () => {
    const listed = JSON.parse((await svc('triggers', 'ls', '--project', 'hooks', '--json')).stdout) as { triggers: Record<string, unknown>[]; errors: unknown[] };
    expect(listed.triggers.map((t) => t.slug)).toEqual(['burst-hook', 'hook', 'manual', 'nosecret', 'off', 'queue-hook', 'reuse-hook']);
    expect(listed.triggers.find((t) => t.slug === 'off')).toMatchObject({ enabled: false, paused: false, dormant: false, next_fire_at: null });
    await waitFor('last_fired_at of hook', async () => {
      const again = JSON.parse((await svc('triggers', 'ls', '--project', 'hooks', '--json')).stdout) as typeof listed;
      return typeof again.triggers.find((t) => t.slug === 'hook')?.last_fired_at === 'string';
    });
    expect(listed.errors).toEqual([]);
    const off = await svc('triggers', 'fire', 'off', '--project', 'hooks');
    expect(off.code).toBe(1);
    expect(off.stderr).toContain('disabled');
    const local = await svc('triggers', 'ls', path.join(repo, 'svc.yaml'), '--json');
    expect(local.code).toBe(0);
  });

  it('a secret set after a 409 holds for the next delivery, however quiet the time between; the listing says which secret is missing', async () => {
    const hint = 'nosecret: the project secret NOT_CONFIGURED is not set, so every delivery is refused (409): printf %s "$SECRET" | svc secrets set NOT_CONFIGURED --project hooks';
    const listing = async () => (await svc('triggers', 'ls', '--project', 'hooks')).stdout;
    expect(await listing()).toContain(hint);
    expect(await listing()).not.toContain('hook: the project secret');
    const value = 'set-after-the-409';
    const body = JSON.stringify({ ref: 'refs/heads/main' });
    expect((await webhook('nosecret', body, { 'x-svc-signature': signWebhookBody(body, value) })).status).toBe(409);
    const put = await fetch(`${dev.apiUrl}/projects/${projectId}/secrets/NOT_CONFIGURED`, {
      method: 'PUT', headers: { authorization: `Bearer ${dev.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ value }),
    });
    expect(put.status).toBe(204);
    try {
      // GitHub's "Redeliver" a while later: the API's memory of the secret is older than it may serve
      await new Promise((resolve) => setTimeout(resolve, 3_500));
      const res = await webhook('nosecret', body, { 'x-svc-signature': signWebhookBody(body, value) });
      expect(res.status).toBe(202);
      await stopSession((await session(res.body.session_id as string)).metadata.name);
      expect(await listing()).not.toContain('NOT_CONFIGURED is not set');
    } finally {
      await fetch(`${dev.apiUrl}/projects/${projectId}/secrets/NOT_CONFIGURED`, { method: 'DELETE', headers: { authorization: `Bearer ${dev.token}` } });
    }
  });
});

describe('reuse mode', () => {
  it('re-prompts the same session, and wakes it when stopped', async () => {
    const first = await webhook('reuse-hook', '{"n":1}', signed('{"n":1}'));
    expect(first.status).toBe(202);
    const id = first.body.session_id as string;
    expect((await session(id)).spec.initialPrompt).toBe('again 1');
    await waitFor('the API to see the session', async () => (await webhook('reuse-hook', '{"n":2}', signed('{"n":2}', { 'x-svc-delivery': 'reuse-2' }))).body.session_id === id);
    // the second fire re-prompted the first session (the Session controller then delivers the prompt and clears it)
    await waitFor('the second fire to re-prompt the session', async () => {
      const fire = (await firesOf('hooks-reuse-hook')).find((f) => f.spec.deliveryId === 'reuse-2');
      return fire?.status?.phase === 'fired' && fire.status.sessionName === id;
    });
    expect(await sessionsOf('hooks-reuse-hook')).toHaveLength(1);

    await stopSession(id);
    // stopped, not failed (the Session controller, when it runs, stops its sandbox first)
    const stopped = await waitFor('the session to stop', async () => {
      const s = await getJson<Obj>('session', id);
      return s.status?.status === undefined || s.status.status === 'stopped' || s.status.status === 'failed' ? s : undefined;
    });
    const third = await webhook('reuse-hook', '{"n":3}', signed('{"n":3}'));
    if (stopped.status?.status === 'failed') {
      // The Session controller gave up on it (SPEC §2.5: a dead session is not reused): a fresh one.
      expect(third.body).toEqual({ status: 'fired', session_id: expect.not.stringMatching(id) });
      await session(third.body.session_id as string);
      await stopSession(third.body.session_id as string);
      return;
    }
    expect(third.body).toEqual({ status: 'fired', session_id: id });
    await waitFor('the stopped session to be woken by the third fire', async () => {
      const s = await getJson<Obj>('session', id);
      const fire = (await firesOf('hooks-reuse-hook')).find((f) => (f.spec.variables as { body?: { n?: number } }).body?.n === 3);
      return s.spec.desiredState === 'running' && fire?.status?.phase === 'fired' && fire.status.sessionName === id;
    });
    expect(await sessionsOf('hooks-reuse-hook')).toHaveLength(1);
    await stopSession(id);
  });

  it('a burst of deliveries at once, before any session: one session, every 202 names it, the others re-prompt it (each delivery made a session of its own)', async () => {
    const bodies = [1, 2, 3, 4, 5].map((n) => JSON.stringify({ n }));
    const answers = await Promise.all(bodies.map((body, i) => webhook('burst-hook', body, signed(body, { 'x-svc-delivery': `burst-${i}` }))));
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202]);
    const ids = [...new Set(answers.map((a) => a.body.session_id))];
    expect(answers.map((a) => a.body.status)).toEqual(['fired', 'fired', 'fired', 'fired', 'fired']);
    expect(ids).toHaveLength(1);
    const id = ids[0] as string;
    const fires = await waitFor('every fire to be fired into that session', async () => {
      const all = await firesOf('hooks-burst-hook');
      return all.length === 5 && all.every((f) => f.status?.phase === 'fired' && f.status.sessionName === id) ? all : undefined;
    }, 30_000);
    const told = fires.map((f) => (f.status?.conditions as { type: string; message: string }[]).find((c) => c.type === 'Ready')?.message).sort();
    expect(told).toEqual([`created session ${id}`, ...Array(4).fill(`re-prompted session ${id}`)]);
    expect((await sessionsOf('hooks-burst-hook')).map((s) => s.metadata.name)).toEqual([id]);
    // a redelivery of any of them still gets its first answer
    expect(await webhook('burst-hook', bodies[3]!, signed(bodies[3]!, { 'x-svc-delivery': 'burst-3' }))).toEqual({ status: 202, body: { status: 'fired', session_id: id } });
    await stopSession(id);
  }, 60_000);

  it('a session whose waiting prompts are full: the fire fails PromptQueueFull, the trigger says why, the session is left as it was (the append was refused by the cluster and retried without end)', async () => {
    const first = await webhook('reuse-hook', '{"n":"full-1"}', signed('{"n":"full-1"}'));
    expect(first.status).toBe(202);
    const id = first.body.session_id as string;
    await session(id);
    await stopSession(id);
    await waitFor('the session to stop', async () => (await getJson<Obj>('session', id)).status?.status === 'stopped');
    // as much as the prompt route lets wait (192 KiB), and a fire whose prompt is cut at 64 KiB: past the cluster's 256 KiB of annotations
    const waiting = await fillPendingPrompts(dev.env, id, PENDING_PROMPTS_MAX_BYTES - 8);
    const body = JSON.stringify({ n: 'y'.repeat(70_000) });
    const big = await webhook('reuse-hook', body, signed(body, { 'x-svc-delivery': 'reuse-full' }));
    expect(big).toEqual({ status: 202, body: { status: 'fired', session_id: id } });
    const fire = await waitFor('the fire to fail', async () => {
      const found = (await firesOf('hooks-reuse-hook')).find((f) => f.spec.deliveryId === 'reuse-full');
      return found?.status?.phase === 'failed' ? found : undefined;
    }, 20_000);
    expect(fire.status?.reason).toBe(`PromptQueueFull: session ${id} already has 3 prompt(s) waiting, ${PENDING_PROMPTS_MAX_BYTES} bytes at most in all: this fire's prompt was not queued`);
    const warnings = await kubectl('get', 'events', '--field-selector', 'involvedObject.name=hooks-reuse-hook,type=Warning', '-o', 'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}');
    expect(warnings).toContain(`PromptQueueFull: fire ${fire.metadata.name}: session ${id} already has 3 prompt(s) waiting`);
    const after = await getJson<Obj>('session', id);
    expect(after.spec.desiredState).toBe('stopped');
    expect(after.metadata.annotations?.[PENDING_PROMPTS_ANNOTATION]).toBe(JSON.stringify(waiting));
    await kubectl('annotate', 'session', id, `${PENDING_PROMPTS_ANNOTATION}-`);
  }, 60_000);
});

describe('the queue at the concurrent-session cap', () => {
  it('cap 1, three fires: one fired, two queued in order; stopping the running session starts the next', async () => {
    // Every session of the earlier tests gives its slot back.
    for (const s of (await getJson<{ items: Obj[] }>('sessions')).items) if (s.spec.desiredState !== 'stopped') await stopSession(s.metadata.name);
    await kubectl('annotate', 'namespace', 'default', 'svc.dev/max-concurrent-sessions=1', '--overwrite');
    // a changed cap applies within about a second (docs/triggers.md: the API keeps the namespace's
    // read for 1 s and refreshes it in the background): the first delivery must see it
    await new Promise((r) => setTimeout(r, 2_500));
    const answers = [];
    for (const n of [1, 2, 3]) answers.push(await webhook('queue-hook', `{"n":${n}}`, signed(`{"n":${n}}`)));
    expect(answers.map((a) => a.body.status)).toEqual(['fired', 'queued', 'queued']);
    expect(answers[1]!.body.reason).toContain('cap (1)');
    const byN = async () => {
      const fires = (await firesOf('hooks-queue-hook')).filter((f) => (f.spec.variables as { body?: { n?: number } }).body?.n !== undefined);
      return new Map(fires.map((f) => [(f.spec.variables as { body: { n: number } }).body.n, f]));
    };
    await waitFor('phases fired, queued 1, queued 2', async () => {
      const f = await byN();
      return f.get(1)?.status?.phase === 'fired' && f.get(2)?.status?.queuePosition === 1 && f.get(3)?.status?.queuePosition === 2;
    });
    const printed = await kubectl('get', 'triggerfires', '-l', 'svc.dev/trigger=hooks-queue-hook');
    expect(printed).toMatch(/POSITION/);
    const queued = (await byN()).get(2)!;
    await expect(getJson<Obj>('session', queued.spec.sessionName as string)).rejects.toThrow(); // no session until dequeued

    await stopSession(answers[0]!.body.session_id as string);
    await waitFor('the second fire to start and the third to move up', async () => {
      const f = await byN();
      return f.get(2)?.status?.phase === 'fired' && f.get(3)?.status?.phase === 'queued' && f.get(3)?.status?.queuePosition === 1;
    });
    const second = (await byN()).get(2)!;
    expect((await session(second.spec.sessionName as string)).spec.initialPrompt).toBe('queued 2');
    await stopSession(second.spec.sessionName as string);
    await waitFor('the third fire to start', async () => (await byN()).get(3)?.status?.phase === 'fired');
    await stopSession((await byN()).get(3)!.spec.sessionName as string);
    await kubectl('annotate', 'namespace', 'default', 'svc.dev/max-concurrent-sessions-');
  }, 90_000);
});

describe('manifest changes', () => {
  it('a trigger disabled in the manifest: a redelivery of a delivery it accepted gets its first answer, anything new 404', async () => {
    const body = '{"n":1}';
    const first = await webhook('queue-hook', body, signed(body, { 'x-github-delivery': 'before-disabled-1' }));
    expect(first.status).toBe(202);
    const disabled = manifest().replace('    prompt: "queued {{ body.n }}"\n', '    prompt: "queued {{ body.n }}"\n    enabled: false\n');
    expect(disabled).not.toEqual(manifest());
    commitFiles(repo, { 'svc.yaml': disabled }, 'disable queue-hook');
    await kubectl('annotate', 'project', 'hooks', `svc.dev/refresh=${Date.now()}`, '--overwrite');
    await waitFor('queue-hook disabled', async () => (await kubectl('get', 'trigger', 'hooks-queue-hook', '-o', 'jsonpath={.spec.enabled}')) === 'false');
    let probe = 0;
    await waitFor('the API sees it disabled', async () => (await webhook('queue-hook', body, signed(body, { 'x-github-delivery': `probe-disabled-${++probe}` }))).status === 404);
    expect(await webhook('queue-hook', body, signed(body, { 'x-github-delivery': 'before-disabled-1' }))).toEqual(first);
    expect((await webhook('queue-hook', body, signed(body, { 'x-github-delivery': 'after-disabled-1' }))).status).toBe(404);
    expect((await webhook('queue-hook', body, { 'content-type': 'application/json', 'x-github-delivery': 'before-disabled-1' })).status).toBe(404);
    expect((await firesOf('hooks-queue-hook')).filter((f) => f.spec.deliveryId === 'after-disabled-1')).toHaveLength(0);
  });

  it('a trigger removed from the manifest stops firing (404)', async () => {
    const withoutHook = manifest().replace(/ {2}- slug: hook\n(?: {4}.*\n)+/, '');
    expect(withoutHook).not.toContain('slug: hook\n');
    commitFiles(repo, { 'svc.yaml': withoutHook }, 'drop the hook trigger');
    await kubectl('annotate', 'project', 'hooks', `svc.dev/refresh=${Date.now()}`, '--overwrite');
    await waitFor('the hook trigger to be gone', async () => (await webhook('hook', '{}', signed('{}'))).status === 404);
    expect((await webhook('manual', '{}', { 'x-svc-token': 'wrong' })).status).toBe(401);
  });
});
