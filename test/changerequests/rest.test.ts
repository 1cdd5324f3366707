// The change-request REST routes (SPEC §4.1, §3.1, §7) against the local cluster and real git
// repositories: validation in order, access, numbers, serialization, the state table, refresh
// on read, request-changes. Merges are in merge.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { API_VERSION, CHANGE_REQUEST, EVENT, NAMESPACE as NAMESPACE_TYPE, PROJECT, SESSION, type ChangeRequest, type KubeObject, type Project } from '../../src/resources/index.js';
import { git, seededHost, type HostRepo, type WorkClone } from '../git/fixtures.js';
import { eventually } from '../kube/cluster.js';
import { NAMESPACE, startHarness, type Harness } from './harness.js';

let h: Harness;
let host: HostRepo;
let work: WorkClone;
let project: Project;
let base: string;
const cleanups: (() => void)[] = [];

beforeAll(async () => {
  h = await startHarness();
  ({ host, work } = seededHost());
  cleanups.push(() => host.cleanup());
  project = await h.project('rest', host.hostDir);
  base = `/projects/${project.metadata.uid}/change-requests`;
  work.branch('feature-a', { 'a.txt': 'a\n' }, { from: 'main' });
  work.branch('feature-b', { 'b.txt': 'b\n' }, { from: 'main' });
  work.checkout('same-as-main', { from: 'main' }).push('same-as-main');
});
afterAll(async () => {
  await h?.close();
  for (const c of cleanups) c();
});

const admin = () => h.tokens.admin;
const open = (body: Record<string, unknown>, token = admin()) => h.call(token, 'POST', base, body);
const counter = async () => (await h.client.resource<Project>(PROJECT).get(NAMESPACE, 'rest')).status?.lastChangeRequestNumber ?? 0;
const crCount = async () => (await h.client.resource<ChangeRequest>(CHANGE_REQUEST).list(NAMESPACE)).items.length;

/** A Session of the project in the cluster (no sandbox runs here): an origin a CR can name. */
async function newSession(): Promise<string> {
  const sessionId = randomUUID();
  await h.client.resource(SESSION).create({
    apiVersion: API_VERSION, kind: SESSION.kind, metadata: { name: sessionId, namespace: NAMESPACE },
    spec: { projectRef: { name: 'rest' }, baseRef: 'main' },
  } as KubeObject);
  return sessionId;
}

describe('create: the seven rules in order, and nothing written on an error', () => {
  it('refuses bad bodies with 400 and a clear message', async () => {
    const before = [await counter(), await crCount()];
    const cases: [unknown, RegExp, string?][] = [
      [{ head_ref: 'feature-a' }, /title is required/],
      [{ title: '  ', head_ref: 'feature-a' }, /title must not be empty/],
      [{ title: 'x' }, /head_ref is required/],
      [{ title: 'x', head_ref: '' }, /head_ref is required/],
      [{ title: 'x', head_ref: 'main' }, /head_ref and base_ref are both main/],
      [{ title: 'x', head_ref: 'feature-a', base_ref: 'feature-a' }, /both feature-a/],
      [{ title: 'x', head_ref: 'feature-a', labels: ['x'] }, /unknown field\(s\) labels/],
      [{ title: 'x', head_ref: 'bad..name' }, /head_ref "bad..name" is not a valid branch name/],
      [{ title: 7, head_ref: 'feature-a' }, /title must be a string/],
      [{ title: 'nul\u0000byte', head_ref: 'feature-a' }, /title must not contain control characters/],
      [{ title: 'escape \u001b[31m', head_ref: 'feature-a' }, /title must not contain control characters/],
      [{ title: 'x', description: 'bell\u0007', head_ref: 'feature-a' }, /description must not contain control characters/],
      [['title'], /must be a JSON object/],
      [undefined, /request body is not valid JSON/, '{"title": '],
      // a value that is not a session's id was dropped without a word
      [{ title: 'x', head_ref: 'feature-a', session_id: 'a\u0000b' }, /session_id "a\\u0000b" is not a session id \(a UUID\)/],
      [{ title: 'x', head_ref: 'feature-a', session_id: 'a/b' }, /session_id "a\/b" is not a session id/],
    ];
    for (const [body, message, raw] of cases) {
      const res = await h.call(admin(), 'POST', base, body, raw);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatch(message);
    }
    expect([await counter(), await crCount()]).toEqual(before);
  });

  it('answers 422 CR_HEAD_NOT_AHEAD for a head at the base tip, behind it, or never pushed', async () => {
    const before = [await counter(), await crCount()];
    for (const head of ['same-as-main', 'never-pushed']) {
      const res = await open({ title: 'nothing', head_ref: head });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('CR_HEAD_NOT_AHEAD');
    }
    // feature-a is ahead of main but main is not ahead of feature-a's base... main behind a branch:
    const behind = await open({ title: 'behind', head_ref: 'main', base_ref: 'feature-a' });
    expect(behind.status).toBe(422);
    expect(behind.body.code).toBe('CR_HEAD_NOT_AHEAD');
    const noBase = await open({ title: 'x', head_ref: 'feature-a', base_ref: 'no-such-base' });
    expect(noBase.status).toBe(422);
    expect(noBase.body.error).toMatch(/base branch no-such-base does not exist/);
    expect([await counter(), await crCount()]).toEqual(before);
  });

  it('sees a push that landed just before the create (force-refetch)', async () => {
    await open({ title: 'warm the mirror', head_ref: 'same-as-main' });
    work.branch('just-pushed', { 'j.txt': 'j\n' }, { from: 'main' });
    const res = await open({ title: 'just pushed', head_ref: 'just-pushed' });
    expect(res.status).toBe(201);
    expect(res.body.change_request.head_commit_sha).toBe(host.tip('just-pushed'));
  });

  it('creates with defaults: base = default branch, anchor SHAs, unknown session dropped, a known one kept', async () => {
    const unknown = await open({ title: 'Add a', description: 'adds a.txt', head_ref: 'feature-a', session_id: randomUUID() });
    expect(unknown.status).toBe(201);
    const cr = unknown.body.change_request;
    const ns = await h.client.resource(NAMESPACE_TYPE).get('', NAMESPACE);
    const resource = (await h.client.resource<ChangeRequest>(CHANGE_REQUEST).list(NAMESPACE)).items.find((c) => c.metadata.uid === cr.cr_id)!;
    expect(cr).toEqual({
      cr_id: resource.metadata.uid,
      account_id: ns.metadata.uid,
      project_id: project.metadata.uid,
      number: cr.number,
      title: 'Add a',
      description: 'adds a.txt',
      base_ref: 'main',
      head_ref: 'feature-a',
      status: 'open',
      head_commit_sha: host.tip('feature-a'),
      base_commit_sha: host.tip('main'),
      origin_session_id: null,
      created_by: h.userId,
      merged_at: null,
      merged_by: null,
      merge_commit_sha: null,
      closed_at: null,
      closed_by: null,
      metadata: { requested_changes: [] },
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(resource.spec.number).toBe(cr.number);
    expect(resource.metadata.ownerReferences?.[0]?.uid).toBe(project.metadata.uid);

    const sessionId = await newSession();
    const known = await open({ title: 'Add b', head_ref: 'feature-b', session_id: sessionId });
    expect(known.status).toBe(201);
    expect(known.body.change_request.origin_session_id).toBe(sessionId);
    expect(known.body.change_request.description).toBe('');
  });

  it('sets origin_session_id to null once the originating Session is deleted; the CR stays (SPEC §2.2)', async () => {
    const sessionId = await newSession();
    const opened = await open({ title: 'from a session', head_ref: 'feature-b', session_id: sessionId });
    expect(opened.body.change_request.origin_session_id).toBe(sessionId);
    const crId = opened.body.change_request.cr_id as string;
    await h.client.resource(SESSION).delete(NAMESPACE, sessionId);

    const listed = await h.call(admin(), 'GET', `${base}?status=all`);
    expect(listed.body.change_requests.find((c: { cr_id: string }) => c.cr_id === crId).origin_session_id).toBeNull();
    const shown = await h.call(admin(), 'GET', `${base}/${crId}`);
    expect(shown.status).toBe(200);
    expect(shown.body.change_request.origin_session_id).toBeNull();
    const closed = await h.call(admin(), 'POST', `${base}/${crId}/close`);
    expect(closed.body.change_request.origin_session_id).toBeNull();
    // written on the resource by the ChangeRequest controller (the API's reads only show it)
    const resource = await eventually(async () => {
      const found = (await h.client.resource<ChangeRequest>(CHANGE_REQUEST).list(NAMESPACE)).items.find((c) => c.metadata.uid === crId)!;
      return found.spec.originSessionId === null ? found : undefined;
    }, 100);
    expect(resource.spec.originSessionId).toBeNull();
  });
});

describe('numbers', () => {
  it('are consecutive, unique under concurrent creates, and never reused', async () => {
    const start = await counter();
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => open({ title: `parallel ${i}`, head_ref: 'feature-a' })));
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(201));
    const numbers = results.map((r) => r.body.change_request.number as number).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 12 }, (_, i) => start + 1 + i));

    // Closing frees nothing; deleting the resource frees nothing.
    const last = results.find((r) => r.body.change_request.number === start + 12)!.body.change_request;
    expect((await h.call(admin(), 'POST', `${base}/${last.cr_id}/close`)).status).toBe(200);
    const resource = (await h.client.resource<ChangeRequest>(CHANGE_REQUEST).list(NAMESPACE)).items.find((c) => c.metadata.uid === last.cr_id)!;
    await h.client.resource(CHANGE_REQUEST).delete(NAMESPACE, resource.metadata.name!);
    const next = await open({ title: 'after delete', head_ref: 'feature-a' });
    expect(next.body.change_request.number).toBe(start + 13);
  });

  it('start at 1 in every project', async () => {
    const other = await h.project('rest-other', host.hostDir);
    const res = await h.call(admin(), 'POST', `/projects/${other.metadata.uid}/change-requests`, { title: 'first', head_ref: 'feature-b' });
    expect(res.status).toBe(201);
    expect(res.body.change_request.number).toBe(1);
    // A CR of another project is 404 under this one.
    expect((await h.call(admin(), 'GET', `${base}/${res.body.change_request.cr_id}`)).status).toBe(404);
  });
});

describe('ids and access', () => {
  it('400 for malformed ids, 404 for unknown ones', async () => {
    const { body } = await open({ title: 'ids', head_ref: 'feature-a' });
    const crId = body.change_request.cr_id;
    expect((await h.call(admin(), 'GET', `${base}/not-a-uuid`)).status).toBe(400);
    expect((await h.call(admin(), 'GET', `${base}/${randomUUID()}`)).status).toBe(404);
    expect((await h.call(admin(), 'GET', `/projects/nope/change-requests`)).status).toBe(400);
    const unknownProject = await h.call(admin(), 'GET', `/projects/${randomUUID()}/change-requests/${crId}`);
    expect(unknownProject.status).toBe(404);
    expect(unknownProject.body.error).toMatch(/project .* not found/);
    expect((await h.call(admin(), 'POST', `${base}/${randomUUID()}/merge`)).status).toBe(404);
  });

  it('403 without the access or capability an endpoint needs', async () => {
    const { body } = await open({ title: 'access', head_ref: 'feature-a' });
    const cr = `${base}/${body.change_request.cr_id}`;
    const { reader, writer, pusher, otherProject } = h.tokens;
    const denied: [string, string, string, unknown?][] = [
      [reader, 'POST', base, { title: 't', head_ref: 'feature-a' }],
      [writer, 'POST', base, { title: 't', head_ref: 'feature-a' }],
      [reader, 'PATCH', cr, { title: 't' }],
      [reader, 'POST', `${cr}/close`],
      [reader, 'POST', `${cr}/reopen`],
      [writer, 'POST', `${cr}/request-changes`, { feedback: 'f' }],
      [writer, 'POST', `${cr}/merge`],
      [pusher, 'POST', `${cr}/merge`],
      [otherProject, 'GET', base],
      [otherProject, 'GET', cr],
    ];
    for (const [token, method, url, reqBody] of denied) {
      const res = await h.call(token, method, url, reqBody);
      expect(res.status, `${method} ${url}`).toBe(403);
      expect(res.body.error).toBeTruthy();
    }
    for (const url of [base, cr, `${cr}/diff`, `${cr}/merge-preview`]) expect((await h.call(reader, 'GET', url)).status).toBe(200);
    expect((await h.call(pusher, 'POST', base, { title: 'pusher', head_ref: 'feature-a' })).status).toBe(201);
    expect((await h.call(pusher, 'POST', `${cr}/request-changes`, { feedback: 'ok' })).status).toBe(200);
    expect((await h.call(writer, 'PATCH', cr, { title: 'renamed by a writer' })).status).toBe(200);
    const anonymous = await fetch(h.apiUrl + base);
    expect(anonymous.status).toBe(401);
  });
});

describe('the state table of SPEC §3.1', () => {
  it('close, reopen, request-changes and merge from every state', async () => {
    const { body } = await open({ title: 'states', head_ref: 'feature-b' });
    const id = body.change_request.cr_id;
    const act = (action: string, reqBody?: unknown) => h.call(admin(), 'POST', `${base}/${id}/${action}`, reqBody);

    const closed = await act('close');
    expect(closed.status).toBe(200);
    expect(closed.body.change_request).toMatchObject({ status: 'closed', closed_by: h.userId });
    expect(closed.body.change_request.closed_at).toMatch(/Z$/);
    const closedAgain = await act('close');
    expect(closedAgain.body.change_request.closed_at).toBe(closed.body.change_request.closed_at);

    for (const [action, message] of [['merge', /is closed: reopen it before merging/], ['request-changes', /is closed: changes can be requested only/]] as const) {
      const res = await act(action, action === 'request-changes' ? { feedback: 'please' } : undefined);
      expect(res.status).toBe(409);
      expect(res.body.error).toMatch(message);
    }

    const reopened = await act('reopen');
    expect(reopened.status).toBe(200);
    expect(reopened.body.change_request).toMatchObject({ status: 'open', closed_at: null, closed_by: null, head_commit_sha: host.tip('feature-b') });
    const reopenOpen = await act('reopen');
    expect(reopenOpen.status).toBe(409);
    expect(reopenOpen.body.error).toMatch(/open, not closed/);

    const merged = await act('merge');
    expect(merged.status).toBe(200);
    expect(merged.body.change_request.status).toBe('merged');
    for (const [action, message] of [['close', /already merged and cannot be closed/], ['reopen', /merged and cannot be reopened/], ['merge', /already merged/], ['request-changes', /is merged: changes can be requested only/]] as const) {
      const res = await act(action, action === 'request-changes' ? { feedback: 'late' } : undefined);
      expect(res.status, action).toBe(409);
      expect(res.body.error).toMatch(message);
    }
    const after = await h.call(admin(), 'GET', `${base}/${id}`);
    expect(after.body.change_request.status).toBe('merged');
    expect(after.body.change_request.metadata.requested_changes).toEqual([]);
    expect((await act('close', { force: true })).status).toBe(400);
  });

  it('request-changes appends {text, by, at} and records an Event; bad feedback is 400', async () => {
    const { body } = await open({ title: 'feedback', head_ref: 'feature-a' });
    const id = body.change_request.cr_id;
    for (const bad of [{}, { feedback: '' }, { feedback: '   ' }, { feedback: 3 }, { feedback: 'x', extra: 1 }, { feedback: 'a\u0000b' }]) {
      expect((await h.call(admin(), 'POST', `${base}/${id}/request-changes`, bad)).status).toBe(400);
    }
    await h.call(admin(), 'POST', `${base}/${id}/request-changes`, { feedback: 'rename the file' });
    const second = await h.call(admin(), 'POST', `${base}/${id}/request-changes`, { feedback: 'and add a test' });
    expect(second.status).toBe(200);
    const notes = second.body.change_request.metadata.requested_changes;
    expect(notes.map((n: { text: string }) => n.text)).toEqual(['rename the file', 'and add a test']);
    expect(notes[0]).toEqual({ text: 'rename the file', by: h.userId, at: expect.stringMatching(/Z$/) });
    const events = (await h.client.resource<KubeObject & { involvedObject: { uid: string }; reason: string; message: string }>(EVENT).list(NAMESPACE)).items
      .filter((e) => e.involvedObject.uid === id && e.reason === 'ChangesRequested');
    expect(events.map((e) => e.message).sort()).toEqual([expect.stringContaining('and add a test'), expect.stringContaining('rename the file')].sort());
  });

  it('the requested-changes log holds 256 KiB of notes at most: past it request-changes is 409 saying why, and the log is unchanged', async () => {
    const { body } = await open({ title: 'long review', head_ref: 'feature-a' });
    const id = body.change_request.cr_id;
    const ask = (text: string) => h.call(admin(), 'POST', `${base}/${id}/request-changes`, { feedback: text });
    for (const n of [1, 2, 3, 4]) expect((await ask(`${n}`.repeat(65_536))).status).toBe(200); // 4 × 64 KiB: exactly the bound
    const refused = await ask('one more');
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe(`change request #${body.change_request.number} already holds 262144 bytes of requested changes (4 note(s)), 262144 at most: write a shorter note, or close it and open a new one`);
    const after = await h.call(admin(), 'GET', `${base}/${id}`);
    expect(after.body.change_request.metadata.requested_changes).toHaveLength(4);
  });

  it('PATCH edits title and description only', async () => {
    const { body } = await open({ title: 'old title', head_ref: 'feature-a' });
    const url = `${base}/${body.change_request.cr_id}`;
    const res = await h.call(admin(), 'PATCH', url, { title: 'new title', description: 'now described' });
    expect(res.status).toBe(200);
    expect(res.body.change_request).toMatchObject({ title: 'new title', description: 'now described', number: body.change_request.number });
    for (const [bad, message] of [[{}, /give title and\/or description/], [{ title: '' }, /title must not be empty/], [{ title: 'a\u0000b' }, /title must not contain control characters/],
      [{ description: 'del\u007f' }, /description must not contain control characters/], [{ head_ref: 'x' }, /unknown field/], [{ status: 'merged' }, /unknown field/]] as const) {
      const r = await h.call(admin(), 'PATCH', url, bad);
      expect(r.status).toBe(400);
      expect(r.body.error).toMatch(message);
    }
    expect((await h.call(admin(), 'GET', url)).body.change_request.title).toBe('new title');
    // newline and tab stay allowed in a description
    const tabbed = await h.call(admin(), 'PATCH', url, { description: 'line 1\n\tline 2' });
    expect(tabbed.body.change_request.description).toBe('line 1\n\tline 2');
  });
});

describe('diff limits', () => {
  it('cuts a large patch per file, marks the cut files, and keeps the counts and the other files', async () => {
    work.pull('main');
    work.checkout('huge-file', { from: 'main' });
    // about 1.3 MB in one file: over the 512 KiB per-file default
    work.write('huge.txt', Array.from({ length: 20_000 }, (_, i) => `line ${i} ${'x'.repeat(60)}\n`).join('')).write('small.txt', 'small\n');
    work.commit('a huge file');
    work.push('huge-file');
    const { body } = await open({ title: 'huge', head_ref: 'huge-file' });
    const res = await fetch(`${h.apiUrl}${base}/${body.change_request.cr_id}/diff`, { headers: { authorization: `Bearer ${admin()}` } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.length).toBeLessThan(600 * 1024);
    const diff = JSON.parse(text);
    expect(diff.truncated).toBe(true);
    expect(diff.files).toEqual([
      expect.objectContaining({ path: 'huge.txt', truncated: true, additions: 20_000 }),
      expect.objectContaining({ path: 'small.txt', truncated: false, additions: 1 }),
    ]);
    expect(diff.patch).toContain('diff --git a/huge.txt b/huge.txt');
    expect(diff.patch).toContain('+small');
    expect(diff).toMatchObject({ additions: 20_001, deletions: 0, head_sha: expect.any(String), base_sha: expect.any(String) });
  });
});

describe('reads', () => {
  it('lists newest first, filtered by status (default all); a bad filter is 400', async () => {
    const { body } = await open({ title: 'to close', head_ref: 'feature-a' });
    await h.call(admin(), 'POST', `${base}/${body.change_request.cr_id}/close`);
    const all = await h.call(admin(), 'GET', base);
    expect(all.status).toBe(200);
    const numbers = all.body.change_requests.map((c: { number: number }) => c.number);
    expect(numbers).toEqual([...numbers].sort((a, b) => b - a));
    for (const status of ['open', 'merged', 'closed'] as const) {
      const res = await h.call(admin(), 'GET', `${base}?status=${status}`);
      expect(res.status).toBe(200);
      expect(res.body.change_requests.length).toBeGreaterThan(0);
      expect(res.body.change_requests.every((c: { status: string }) => c.status === status)).toBe(true);
    }
    expect((await h.call(admin(), 'GET', `${base}?status=all`)).body.change_requests).toHaveLength(numbers.length);
    const bad = await h.call(admin(), 'GET', `${base}?status=draft`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/status must be one of open, merged, closed, all/);
  });

  it('lists the CRs one session opened with origin_session_id; a malformed id is 400', async () => {
    const sessionId = await newSession();
    const mine = (await open({ title: 'from the session', head_ref: 'feature-a', session_id: sessionId })).body.change_request;
    await open({ title: 'from no session', head_ref: 'feature-b' });
    const listed = await h.call(admin(), 'GET', `${base}?status=all&origin_session_id=${sessionId.toUpperCase()}`);
    expect(listed.status).toBe(200);
    expect(listed.body.change_requests.map((c: { cr_id: string }) => c.cr_id)).toEqual([mine.cr_id]);
    expect((await h.call(admin(), 'GET', `${base}?status=closed&origin_session_id=${sessionId}`)).body.change_requests).toEqual([]);
    expect((await h.call(admin(), 'GET', `${base}?origin_session_id=${randomUUID()}`)).body.change_requests).toEqual([]);
    const bad = await h.call(admin(), 'GET', `${base}?origin_session_id=nope`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('origin_session_id "nope" is not a UUID');
    const twice = await h.call(admin(), 'GET', `${base}?origin_session_id=${sessionId}&origin_session_id=${sessionId}`);
    expect([twice.status, twice.body.error]).toEqual([400, 'origin_session_id must be given once']);
  });

  it('refreshes SHAs of open CRs from the live branches; skips silently when a branch is gone or the host is unreachable', async () => {
    work.branch('moving', { 'm.txt': 'm1\n' }, { from: 'main' });
    const { body } = await open({ title: 'moving', head_ref: 'moving' });
    const url = `${base}/${body.change_request.cr_id}`;
    const first = body.change_request;

    work.write('m.txt', 'm2\n').commit('more');
    work.push('moving');
    const refreshed = (await h.call(admin(), 'GET', url)).body.change_request;
    expect(refreshed.head_commit_sha).toBe(host.tip('moving'));
    expect(refreshed.head_commit_sha).not.toBe(first.head_commit_sha);
    expect(Date.parse(refreshed.updated_at)).toBeGreaterThan(Date.parse(first.updated_at));
    // The list refreshes too, and the new SHA is stored on the resource.
    work.write('m.txt', 'm3\n').commit('even more');
    work.push('moving');
    const listed = (await h.call(admin(), 'GET', `${base}?status=open`)).body.change_requests.find((c: { cr_id: string }) => c.cr_id === first.cr_id);
    expect(listed.head_commit_sha).toBe(host.tip('moving'));
    const stored = (await h.client.resource<ChangeRequest>(CHANGE_REQUEST).list(NAMESPACE)).items.find((c) => c.metadata.uid === first.cr_id)!;
    expect(stored.status?.headCommitSha).toBe(host.tip('moving'));

    // An unchanged read does not move updated_at.
    const again = (await h.call(admin(), 'GET', url)).body.change_request;
    expect(again.updated_at).toBe((await h.call(admin(), 'GET', url)).body.change_request.updated_at);

    // The head branch is deleted on the host: the stored SHAs are served.
    const before = (await h.call(admin(), 'GET', url)).body.change_request;
    work.checkout('main');
    git(work.dir, 'push', '-q', 'origin', ':refs/heads/moving');
    const gone = await h.call(admin(), 'GET', url);
    expect(gone.status).toBe(200);
    expect(gone.body.change_request.head_commit_sha).toBe(before.head_commit_sha);
    expect(gone.body.change_request.updated_at).toBe(before.updated_at);
    // its preview and its merge say which branch is gone and what to do, not "branch or commit"
    for (const [method, suffix] of [['GET', 'merge-preview'], ['POST', 'merge']] as const) {
      const answer = await h.call(admin(), method, `${url}/${suffix}`);
      expect(answer.status).toBe(404);
      expect(answer.body.error).toBe('the head branch moving does not exist in the repository (any more): push it again, or close the change request');
    }
    // the base branch deleted instead: the preview names that one
    work.branch('release-x', { 'r.txt': 'r\n' }, { from: 'main' });
    work.branch('on-release', { 'o.txt': 'o\n' }, { from: 'release-x' });
    const onRelease = (await open({ title: 'on release', head_ref: 'on-release', base_ref: 'release-x' })).body.change_request;
    work.checkout('main');
    git(work.dir, 'push', '-q', 'origin', ':refs/heads/release-x');
    const baseGone = await h.call(admin(), 'GET', `${base}/${onRelease.cr_id}/merge-preview`);
    expect(baseGone.status).toBe(404);
    expect(baseGone.body.error).toBe('the base branch release-x does not exist in the repository (any more): push it again, or close the change request');

    // The host is unreachable: still 200 with the stored SHAs.
    await h.client.resource<Project>(PROJECT).mergePatch(NAMESPACE, 'rest', { spec: { repoUrl: `${host.root}/missing.git` } });
    try {
      const unreachable = await h.call(admin(), 'GET', url);
      expect(unreachable.status).toBe(200);
      expect(unreachable.body.change_request.head_commit_sha).toBe(before.head_commit_sha);
      expect((await h.call(admin(), 'GET', base)).status).toBe(200);
      const create = await open({ title: 'x', head_ref: 'feature-a' });
      expect(create.status).toBe(502);
      expect(create.body.error).toMatch(/cannot be reached/);
    } finally {
      await h.client.resource<Project>(PROJECT).mergePatch(NAMESPACE, 'rest', { spec: { repoUrl: host.hostDir } });
    }
  });
});
