// A 202 is a promise kept (issue 19 §1), through `svc dev --max-sessions 5` and real HTTP: 300
// signed deliveries (about 10/s) while the sessions they start are stopped as they appear, once
// as is and once with `kill -9` of svc dev's whole process group (twice, restarted on the same
// data dir). Every delivery answered 202 (fired or queued) ends with its fire fired and its
// Session there; none is dropped; a delivery answered 429 leaves nothing behind; the trigger is
// not paused (capacity refusals are not failures). A redelivery gets its first answer after the
// queue filled, and after the trigger was paused by sessions that really failed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { buildArtifacts } from '../daemon/harness.js';
import { REPO_ROOT, removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';
import { makeRepo, runOk, waitFor } from '../dev/util.js';
import { signWebhookBody } from '../../src/triggers/index.js';
import { webhookManifest } from '../helpers/manifests.js';

const SECRET = 'whsec-promise-0123456789';
const DELIVERIES = 300;
const INTERVAL_MS = 100; // about 10 deliveries a second
let dev: DevInstance;
let devArgs: string[];
let dataDir: string;
const projects: Record<string, string> = {};

interface Answer { status: number; body: Record<string, unknown> }
interface Obj { metadata: { name: string }; spec: Record<string, unknown>; status?: Record<string, unknown> }

const kubectl = (...args: string[]) => runOk('kubectl', args, dev.env);
const getJson = async <T>(...args: string[]) => JSON.parse(await kubectl('get', ...args, '-o', 'json')) as T;

async function webhook(project: string, slug: string, body: string, delivery: string): Promise<Answer | 'unreachable'> {
  try {
    const res = await fetch(`${dev.apiUrl}/webhooks/projects/${projects[project]}/${slug}`, {
      method: 'POST', body, headers: { 'content-type': 'application/json', 'x-svc-signature': signWebhookBody(body, SECRET), 'x-github-delivery': delivery },
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) as Record<string, unknown> : {} };
  } catch {
    return 'unreachable'; // svc dev is down (killed): not an answer
  }
}

async function api<T>(method: string, urlPath: string): Promise<T> {
  const res = await fetch(`${dev.apiUrl}${urlPath}`, { method, headers: { authorization: `Bearer ${dev.token}` } });
  return (await res.json()) as T;
}

/** Stops every running session of the project, again and again, until `stop()`; `hold()` pauses it. */
function stopper(project: string) {
  let running = true;
  let held = true;
  const done = (async () => {
    while (running) {
      if (!held) {
        try {
          const { sessions } = await api<{ sessions: { id: string; desired_state: string }[] }>('GET', `/projects/${projects[project]}/sessions`);
          await Promise.all((sessions ?? []).filter((s) => s.desired_state !== 'stopped').map((s) => api('POST', `/projects/${projects[project]}/sessions/${s.id}/stop`).catch(() => undefined)));
        } catch { /* svc dev restarting */ }
      }
      await new Promise((r) => setTimeout(r, 150));
    }
  })();
  return { release: () => { held = false; }, stop: async () => { running = false; await done; } };
}

async function createProject(name: string, manifest: string): Promise<void> {
  const repo = path.join(dataDir, `repo-${name}`);
  makeRepo(repo, { 'svc.yaml': manifest });
  await runOk('kubectl', ['apply', '-f', '-'], dev.env, JSON.stringify({ apiVersion: 'svc.dev/v1alpha1', kind: 'Project', metadata: { name }, spec: { repoUrl: repo, defaultBranch: 'main' } }));
  await kubectl('create', 'secret', 'generic', `${name}-secrets`, `--from-literal=HOOK_SECRET=${SECRET}`);
  projects[name] = await waitFor(`project ${name}`, async () => (await kubectl('get', 'project', name, '-o', 'jsonpath={.metadata.uid}')) || undefined);
  // an unsigned delivery is 401 once the API knows the trigger and its secret (404/409 before)
  await waitFor(`the API to serve ${name}'s trigger`, async () => (await fetch(`${dev.apiUrl}/webhooks/projects/${projects[name]}/hook`, { method: 'POST', body: '{}' })).status === 401, 60_000);
}

/** Polls every 2 s (each look lists hundreds of objects through kubectl). */
async function poll<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2000));
  }
}

const hookManifest = (extra = '') => webhookManifest('delivery {{ body.n }}', extra);

beforeAll(async () => {
  const { fixtureEngine } = await buildArtifacts();
  // every fire is kept (--fire-history): the runs check each one's outcome (retention: retention.test.ts)
  devArgs = ['--engine-command', `'${process.execPath}' '${fixtureEngine}' --port {port}`, '--sandbox-mount', path.dirname(fixtureEngine), '--max-sessions', '5', '--fire-history', '100000'];
  dev = await startDev({ args: devArgs, detached: true, extraEnv: { SVC_ENGINE_MAX_RESTARTS: '1', SVC_ENGINE_RESTART_BACKOFF_MS: '50' } });
  dataDir = dev.dataDir;
}, 120_000);

afterAll(async () => {
  await dev?.stop();
  if (!dataDir) return;
  // sandboxes outlive a kill -9 of svc dev (their own process groups): end them by their state files
  const root = path.join(dataDir, 'sandboxes', 'default');
  for (const id of existsSync(root) ? readdirSync(root) : []) {
    try { process.kill(-(JSON.parse(readFileSync(path.join(root, id, 'state.json'), 'utf8')) as { pid: number }).pid, 'SIGKILL'); } catch { /* gone */ }
  }
  removeDevDir(dataDir);
});

/** kill -9 of svc dev and its children, then svc dev again on the same data dir. */
async function crashAndRestart(): Promise<void> {
  await dev.killGroup('SIGKILL');
  dev = await startDev({ dataDir, args: devArgs, detached: true, extraEnv: { SVC_ENGINE_MAX_RESTARTS: '1', SVC_ENGINE_RESTART_BACKOFF_MS: '50' } });
}

async function run(project: string, label: string, killAt: number[]): Promise<void> {
  const answers = new Map<string, Answer | 'unreachable'>();
  const stop = stopper(project);
  let firstAccepted: { delivery: string; answer: Answer } | undefined;
  let redeliveredWhileFull: Answer | 'unreachable' | undefined;
  let restarts = Promise.resolve();
  const sends: Promise<void>[] = [];
  for (let i = 0; i < DELIVERIES; i++) {
    if (killAt.includes(i)) restarts = restarts.then(crashAndRestart);
    // Sessions pile up at first (the queue fills and 429s come), then they are stopped as they appear.
    if (i === Math.floor(DELIVERIES / 2)) stop.release();
    const delivery = `${label}-${i}`;
    sends.push(webhook(project, 'hook', JSON.stringify({ n: i }), delivery).then(async (answer) => {
      answers.set(delivery, answer);
      if (answer !== 'unreachable' && answer.status === 202) firstAccepted ??= { delivery, answer };
      if (answer !== 'unreachable' && answer.status === 429 && firstAccepted && !redeliveredWhileFull) {
        redeliveredWhileFull = 'unreachable'; // once
        redeliveredWhileFull = await webhook(project, 'hook', JSON.stringify({ n: 'again' }), firstAccepted.delivery);
      }
    }));
    await new Promise((r) => setTimeout(r, INTERVAL_MS));
  }
  await Promise.all(sends);
  await restarts;
  stop.release();

  const accepted = [...answers].filter((e): e is [string, Answer] => e[1] !== 'unreachable' && e[1].status === 202);
  const refused = [...answers].filter(([, a]) => a !== 'unreachable' && a.status === 429).map(([d]) => d);
  const unreachable = [...answers].filter(([, a]) => a === 'unreachable').map(([d]) => d);
  const other = [...answers].filter(([, a]) => a !== 'unreachable' && a.status !== 202 && a.status !== 429);
  expect(other, 'only 202 and 429 answers').toEqual([]);
  expect(accepted.length).toBeGreaterThan(100);
  if (killAt.length) {
    expect(unreachable.length, 'deliveries sent while svc dev was down').toBeGreaterThan(0);
  } else {
    expect(refused.length, 'the queue filled (depth 100) while sessions piled up').toBeGreaterThan(0);
    expect(redeliveredWhileFull, 'a redelivery while the queue was full gets its first answer').toEqual(firstAccepted!.answer);
  }

  const trigger = `${project}-hook`;
  const firesByDelivery = async () => new Map((await getJson<{ items: Obj[] }>('triggerfires', '-l', `svc.dev/trigger=${trigger}`)).items.map((f) => [f.spec.deliveryId as string, f]));
  // Every 202 honoured: its fire fired, with the session the answer named (or, queued, any session), and that Session exists.
  const fires = await poll(`every accepted fire of ${label} to start`, async () => {
    const all = await firesByDelivery();
    return accepted.every(([d]) => all.get(d)?.status?.phase === 'fired') ? all : undefined;
  }, 180_000);
  const sessions = new Set((await getJson<{ items: Obj[] }>('sessions', '-l', `svc.dev/trigger=${trigger}`)).items.map((s) => s.metadata.name));
  for (const [delivery, answer] of accepted) {
    const fire = fires.get(delivery)!;
    if (answer.body.status === 'fired') expect(fire.status!.sessionName, delivery).toBe(answer.body.session_id);
    else expect(answer.body, delivery).toEqual({ status: 'queued', reason: expect.stringContaining('cap (5)') });
    expect(sessions.has(fire.status!.sessionName as string), `session of ${delivery}`).toBe(true);
  }
  // 0 dropped, and nothing recorded for a 429 (a delivery lost in a crash may have been recorded without an answer).
  const mine = [...fires].filter(([d]) => d?.startsWith(`${label}-`));
  expect(mine.filter(([, f]) => f.status?.phase === 'failed').map(([d, f]) => `${d}: ${String(f.status?.reason)}`)).toEqual([]);
  for (const delivery of refused) expect(fires.has(delivery), `429 ${delivery} left a fire`).toBe(false);
  for (const [delivery] of mine) expect(accepted.some(([d]) => d === delivery) || unreachable.includes(delivery), `fire of ${delivery}`).toBe(true);
  expect(await kubectl('get', 'trigger', trigger, '-o', 'jsonpath={.status.paused}/{.status.consecutiveFailures}')).toBe('false/0');
  // after everything (and any restart), a redelivery still gets its first answer
  expect(await webhook(project, 'hook', '{"n":"late"}', firstAccepted!.delivery)).toEqual(firstAccepted!.answer);
  // every slot given back before the next run
  await poll('every session of the run stopped', async () => {
    const { sessions } = await api<{ sessions: { desired_state: string }[] }>('GET', `/projects/${projects[project]}/sessions`);
    return sessions.every((x) => x.desired_state === 'stopped') ? true : undefined;
  }, 60_000);
  await stop.stop();
}

describe('a 202 is a promise kept', () => {
  it(`${DELIVERIES} deliveries at the cap of 5: every 202 honoured, none dropped, the trigger not paused`, async () => {
    await createProject('steady', hookManifest());
    await run('steady', 'steady', []);
  }, 420_000);

  it(`the same with kill -9 of svc dev twice during the run`, async () => {
    await createProject('crash', hookManifest());
    await run('crash', 'crash', [Math.floor(DELIVERIES / 4), Math.floor((DELIVERIES * 3) / 4)]);
  }, 600_000);

  it('after sessions really failed the trigger is paused: a redelivery gets its first answer, a new delivery 404', async () => {
    // engine config_dir outside the workspace: every session of this project fails (EngineFailed)
    await createProject('broken', hookManifest('engine:\n  config_dir: /etc\n'));
    const first = await webhook('broken', 'hook', '{"n":1}', 'broken-1');
    expect(first).toMatchObject({ status: 202, body: { status: 'fired' } });
    for (const n of [2, 3]) expect(await webhook('broken', 'hook', `{"n":${n}}`, `broken-${n}`)).toMatchObject({ status: 202 });
    await waitFor('the trigger paused after three failed sessions', async () => (await kubectl('get', 'trigger', 'broken-hook', '-o', 'jsonpath={.status.paused}')) === 'true', 120_000);
    const reason = await kubectl('get', 'trigger', 'broken-hook', '-o', 'jsonpath={.status.conditions[?(@.type=="Paused")].message}');
    expect(reason).toMatch(/paused after 3 failed fires in a row \(last: session .* failed: EngineFailed\)/);
    expect(await webhook('broken', 'hook', '{"n":1}', 'broken-1')).toEqual(first);
    const fresh = await webhook('broken', 'hook', '{"n":4}', 'broken-4');
    expect(fresh).toMatchObject({ status: 404, body: { error: expect.stringContaining('svc triggers resume hook') } });
    // the dashboard's REST listing says why
    const listed = await api<{ triggers: { slug: string; paused: boolean; paused_reason: string | null }[] }>('GET', `/projects/${projects.broken}/triggers`);
    expect(listed.triggers.find((t) => t.slug === 'hook')).toMatchObject({ paused: true, paused_reason: reason });
    // svc triggers resume: the pause is lifted, the next delivery fires again
    const svc = (...args: string[]) => runOk(process.execPath, [path.join(REPO_ROOT, 'bin/svc.js'), ...args], dev.env);
    expect(await svc('triggers', 'resume', 'hook', '--project', 'broken')).toBe('resumed hook: failed fires before now no longer count\n');
    await waitFor('the trigger resumed', async () => (await kubectl('get', 'trigger', 'broken-hook', '-o', 'jsonpath={.status.paused}')) === 'false', 60_000);
    expect(await webhook('broken', 'hook', '{"n":5}', 'broken-5')).toMatchObject({ status: 202 });
    expect(await svc('triggers', 'resume', 'hook', '--project', 'broken')).toBe('hook was not paused; failed fires before now no longer count toward pausing it\n');
  }, 180_000);
});
