// Retention of the sessions a trigger started (docs/sessions.md "Session history") through
// `svc dev --session-history 2 --fire-history 1` (the fixture engine, jailed sandboxes) and real
// HTTP: finished sessions beyond the newest two are deleted, oldest first, with their branches and
// checkpoint refs; a running session is neither deleted nor counted; a session an open change
// request uses stays, and so does its branch. Without the flag every session stays (retention.test.ts).
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signWebhookBody } from '../../src/triggers/index.js';
import { buildArtifacts, cleanupArtifacts } from '../daemon/harness.js';
import { callApi, fixtureEngineArgs, removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';
import { webhookManifest, webhookProject } from '../helpers/manifests.js';
import { GIT_ENV, makeRepo, runOk, waitFor } from '../dev/util.js';

const SECRET = 'whsec-session-history-0123456789';
const TRIGGER = 'hist-hook';
let tmp: string;
let repo: string;
let dev: DevInstance;
let projectId: string;

interface Obj { metadata: { name: string }; spec: Record<string, unknown>; status?: Record<string, unknown> }

const kubectl = (...args: string[]) => runOk('kubectl', args, dev.env);
const sessionNames = async () => (JSON.parse(await kubectl('get', 'sessions', '-l', `svc.dev/trigger=${TRIGGER}`, '-o', 'json')) as { items: Obj[] }).items.map((s) => s.metadata.name).sort();
const hostRefs = () => execFileSync('git', ['for-each-ref', '--format=%(refname)'], { cwd: repo, encoding: 'utf8' }).split('\n').filter(Boolean);
const sessionStatus = async (id: string) => kubectl('get', 'session', id, '-o', 'jsonpath={.status.status}');

/** Delivers one webhook and returns the session it started, once it runs. */
async function fire(n: number): Promise<string> {
  const body = JSON.stringify({ n });
  const res = await fetch(`${dev.apiUrl}/webhooks/projects/${projectId}/hook`, {
    method: 'POST', body, headers: { 'content-type': 'application/json', 'x-svc-signature': signWebhookBody(body, SECRET), 'x-github-delivery': `history-${n}` },
  });
  const answer = (await res.json()) as { status: string; session_id: string };
  expect(res.status).toBe(202);
  expect(answer.status).toBe('fired');
  await waitFor(`session ${n} running`, async () => (await sessionStatus(answer.session_id).catch(() => '')) === 'running' || undefined, 60_000);
  return answer.session_id;
}

async function stop(id: string): Promise<void> {
  await kubectl('patch', 'session', id, '--type=merge', '-p', '{"spec":{"desiredState":"stopped"}}');
  await waitFor(`session ${id} stopped`, async () => (await sessionStatus(id)) === 'stopped' || undefined, 60_000);
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-session-history-'));
  repo = path.join(tmp, 'repo');
  makeRepo(repo, { 'svc.yaml': webhookManifest('delivery {{ body.n }}') });
  const { fixtureEngine } = await buildArtifacts();
  dev = await startDev({ dataDir: path.join(tmp, 'dev'), args: [...fixtureEngineArgs(fixtureEngine), '--session-history', '2', '--fire-history', '1'] });
  projectId = await webhookProject(dev, 'hist', repo, SECRET);
}, 120_000);

afterAll(async () => {
  await dev?.stop();
  if (tmp) removeDevDir(tmp);
  cleanupArtifacts();
});

describe('session history (svc dev --session-history 2)', () => {
  it('deletes finished sessions beyond the newest two with their refs, keeps a running one and one an open change request uses', async () => {
    const ids: string[] = [];
    for (let n = 1; n <= 4; n++) {
      const id = await fire(n);
      ids.push(id);
      if (n === 1) {
        // the first session's branch gets a commit of its own and a change request is opened on it
        const commit = execFileSync('git', ['commit-tree', `${id}^{tree}`, '-p', id, '-m', 'work'], { cwd: repo, encoding: 'utf8', env: GIT_ENV }).trim();
        execFileSync('git', ['update-ref', `refs/heads/${id}`, commit], { cwd: repo });
        const opened = await callApi(dev, 'POST', `/projects/${projectId}/change-requests`, { title: 'Work of the first session', head_ref: id });
        expect(opened.status, opened.text).toBe(201);
      }
      await stop(id);
      // a checkpoint ref, as a session that left uncommitted work has: it must go with the session
      if (n === 2) execFileSync('git', ['update-ref', `refs/svc/checkpoints/${id}`, id], { cwd: repo });
    }
    const [first, second, third, fourth] = ids as [string, string, string, string];
    const kept = await waitFor('the history pruned to the newest two and the reviewed one', async () => {
      const names = await sessionNames();
      return names.length === 3 ? names : undefined;
    }, 60_000);
    expect(kept).toEqual([first, third, fourth].sort());
    await waitFor('the refs of the deleted session gone from the repository', async () => !hostRefs().some((ref) => ref.endsWith(second)) || undefined, 60_000);
    expect(hostRefs()).toContain(`refs/heads/${first}`);

    // a running session is not finished: it is neither deleted nor counted
    const fifth = await fire(5);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await sessionNames()).toEqual([first, third, fourth, fifth].sort());
    await stop(fifth);
    const after = await waitFor('the third session deleted once the fifth finished', async () => {
      const names = await sessionNames();
      return names.includes(third) ? undefined : names;
    }, 60_000);
    expect(after).toEqual([first, fourth, fifth].sort());
    expect(hostRefs()).toContain(`refs/heads/${fourth}`);
  }, 300_000);
});
