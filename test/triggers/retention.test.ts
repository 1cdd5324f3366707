// Retention of TriggerFires (DESIGN §8.4, docs/triggers.md "Retention") through
// `SVC_TRIGGER_FIRE_HISTORY=2 svc dev --max-sessions 1` (svc dev passes the setting on to its
// operator, as the chart does; 2, below the failure limit of 3) and real HTTP: finished fires are pruned to 2 per trigger,
// oldest first; a redelivery of a pruned delivery id gets its first answer and creates nothing
// (the delivery ledger); queued fires are never pruned, and each is started in its turn.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fixtureEngineArgs, removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';
import { buildArtifacts, cleanupArtifacts } from '../daemon/harness.js';
import { makeRepo, runOk, waitFor } from '../dev/util.js';
import { signWebhookBody } from '../../src/triggers/index.js';
import { deliveryFireName } from '../../src/resources/index.js';
import { FIRE_ANNOTATION } from '../../src/sessions/new-session.js';
import { webhookManifest, webhookProject } from '../helpers/manifests.js';

const SECRET = 'whsec-retention-0123456789';
const TRIGGER = 'keep-hook';
let tmp: string;
let dev: DevInstance;
let projectId: string;

interface Obj { metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }; spec: Record<string, unknown>; status?: Record<string, unknown>; data?: Record<string, string> }
interface Answer { status: number; body: Record<string, unknown> }

const kubectl = (...args: string[]) => runOk('kubectl', args, dev.env);
const items = async (...args: string[]) => (JSON.parse(await kubectl('get', ...args, '-o', 'json')) as { items: Obj[] }).items;
const fires = () => items('triggerfires', '-l', `svc.dev/trigger=${TRIGGER}`);
const sessions = () => items('sessions', '-l', `svc.dev/trigger=${TRIGGER}`);
const fireName = (delivery: string) => deliveryFireName(TRIGGER, delivery);
/** The fires that started a session (each session names its fire). */
const startedFires = async () => new Set((await sessions()).map((s) => s.metadata.annotations?.[FIRE_ANNOTATION]));

async function deliver(delivery: string, n: number | string): Promise<Answer> {
  const body = JSON.stringify({ n });
  const res = await fetch(`${dev.apiUrl}/webhooks/projects/${projectId}/hook`, {
    method: 'POST', body, headers: { 'content-type': 'application/json', 'x-svc-signature': signWebhookBody(body, SECRET), 'x-github-delivery': delivery },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Stops every session of the trigger that should still run (each one the moment it appears). */
async function stopAll(): Promise<void> {
  for (const s of await sessions()) {
    if (s.spec.desiredState !== 'stopped') await kubectl('patch', 'session', s.metadata.name, '--type=merge', '-p', '{"spec":{"desiredState":"stopped"}}');
  }
}

/** The session a fire started, once it exists. */
const sessionOf = (fire: string) => waitFor(`the session of ${fire}`, async () => {
  const f = (await fires()).find((x) => x.metadata.name === fire);
  return f?.status?.phase === 'fired' ? f.status.sessionName as string : undefined;
}, 60_000);

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-retention-'));
  const repo = path.join(tmp, 'repo');
  makeRepo(repo, { 'svc.yaml': webhookManifest('delivery {{ body.n }}') });
  const { fixtureEngine } = await buildArtifacts();
  dev = await startDev({ dataDir: path.join(tmp, 'dev'), args: [...fixtureEngineArgs(fixtureEngine), '--max-sessions', '1'], extraEnv: { SVC_TRIGGER_FIRE_HISTORY: '2' } });
  projectId = await webhookProject(dev, 'keep', repo, SECRET);
}, 120_000);

afterAll(async () => {
  await dev?.stop();
  if (tmp) removeDevDir(tmp);
  cleanupArtifacts();
});

describe('TriggerFire retention (SVC_TRIGGER_FIRE_HISTORY=2)', () => {
  const first = new Map<string, Answer>();

  it('prunes finished fires to 2 per trigger, oldest first, keeping their delivery ids in the ledger', async () => {
    for (let i = 1; i <= 5; i++) {
      const answer = await deliver(`ret-${i}`, i);
      expect(answer.status).toBe(202);
      first.set(`ret-${i}`, answer);
      await sessionOf(fireName(`ret-${i}`));
      await stopAll();
    }
    const kept = await waitFor('the fires pruned to 2', async () => {
      const names = (await fires()).map((f) => f.metadata.name).sort();
      return names.length === 2 ? names : undefined;
    }, 60_000);
    expect(kept).toEqual([4, 5].map((i) => fireName(`ret-${i}`)).sort());
    const pages = await items('configmaps', '-l', `svc.dev/ledger=deliveries,svc.dev/trigger=${TRIGGER}`);
    const entries = Object.assign({}, ...pages.map((p) => p.data ?? {})) as Record<string, string>;
    expect(JSON.parse(entries[fireName('ret-1')]!)).toEqual(first.get('ret-1')!.body);
    expect(JSON.parse(entries[fireName('ret-2')]!)).toEqual(first.get('ret-2')!.body);
    expect(JSON.parse(entries[fireName('ret-3')]!)).toEqual(first.get('ret-3')!.body);
    expect((await sessions()).length).toBe(5); // Sessions stay: they are the record
  }, 240_000);

  it('a redelivery of a pruned delivery id gets its first answer and creates nothing', async () => {
    const before = { fires: (await fires()).length, sessions: (await sessions()).length };
    expect(await deliver('ret-1', 'again')).toEqual(first.get('ret-1'));
    expect(await deliver('ret-2', 'again')).toEqual(first.get('ret-2'));
    await new Promise((r) => setTimeout(r, 1000));
    expect((await fires()).length).toBe(before.fires);
    expect((await sessions()).length).toBe(before.sessions);
    expect((await fires()).map((f) => f.metadata.name)).not.toContain(fireName('ret-1'));
  }, 60_000);

  it('never prunes a queued fire; each is started in its turn', async () => {
    // the one slot taken by a session left running: the next deliveries queue
    expect((await deliver('block', 'block')).body).toMatchObject({ status: 'fired' });
    await sessionOf(fireName('block'));
    const queued: string[] = [];
    for (let i = 1; i <= 4; i++) {
      const answer = await deliver(`queued-${i}`, `q${i}`);
      expect(answer).toMatchObject({ status: 202, body: { status: 'queued' } });
      queued.push(fireName(`queued-${i}`));
    }
    // the Trigger controller has looked at every fire (the newest finished ones stay, 2 at most)
    await waitFor('older finished fires pruned behind the queue', async () => {
      const all = await fires();
      const finished = all.filter((f) => f.status?.phase === 'fired');
      return finished.length <= 2 && !all.some((f) => f.metadata.name === fireName('ret-4')) ? true : undefined;
    }, 60_000);
    const waiting = (await fires()).filter((f) => queued.includes(f.metadata.name));
    expect(waiting.map((f) => `${f.metadata.name} ${String(f.status?.phase)}`).sort()).toEqual(queued.map((name) => `${name} queued`).sort());

    // free the slot again and again: every queued fire starts, in order, and the history ends at 2.
    // A fire has started once a session names it (FIRE_ANNOTATION): under load the first
    // ones can start and be pruned between two looks, so the fires left say nothing of them. At
    // every look the started ones are the first of the queue, and each one not started yet is
    // still there, queued (never pruned while it waits).
    let started: string[] = [];
    const outOfTurn: string[][] = [];
    const lost: string[] = [];
    await waitFor('every queued fire started', async () => {
      await stopAll();
      const byFire = await startedFires();
      const waitingNow = new Set((await fires()).filter((f) => f.status?.phase === 'queued').map((f) => f.metadata.name));
      const now = queued.filter((name) => byFire.has(name));
      if (now.some((name, i) => name !== queued[i])) outOfTurn.push(now);
      // a session made between the two reads: read again before calling the fire lost
      const sessionsAgain = await startedFires();
      lost.push(...queued.filter((name) => !byFire.has(name) && !waitingNow.has(name) && !sessionsAgain.has(name)));
      started = now;
      return started.length === queued.length ? true : undefined;
    }, 180_000);
    expect(lost).toEqual([]);
    expect(outOfTurn).toEqual([]);
    expect(started).toEqual(queued);
    await stopAll();
    const final = await waitFor('pruned to 2 again', async () => {
      const names = (await fires()).map((f) => f.metadata.name).sort();
      return names.length === 2 ? names : undefined;
    }, 60_000);
    expect(final).toEqual(queued.slice(2).sort());
    expect((await sessions()).length).toBe(5 + 1 + queued.length); // one session per accepted delivery, none for the redeliveries
  }, 360_000);
});
