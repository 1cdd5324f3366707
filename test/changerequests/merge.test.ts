// Merging through the REST API (SPEC §4.1 merge procedure, §3.1 SHA capture) against real git
// hosts: fast-forward, three-way, conflicts, unrelated histories, the manifest gate, the head
// moving, concurrent merges, a host that rejects the push; plus diff and merge preview.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT, REFRESH_ANNOTATION, type Project } from '../../src/resources/index.js';
import { git, lines, seededHost, type HostRepo, type WorkClone } from '../git/fixtures.js';
import { MERGE_IDENTITY, NAMESPACE, startHarness, type Harness } from './harness.js';

let h: Harness;
let host: HostRepo;
let work: WorkClone;
let project: Project;
let base: string;

beforeAll(async () => {
  h = await startHarness();
  ({ host, work } = seededHost());
  project = await h.project('merges', host.hostDir);
  base = `/projects/${project.metadata.uid}/change-requests`;
});
afterAll(async () => {
  await h?.close();
  host?.cleanup();
});

const admin = () => h.tokens.admin;
async function openCr(head: string, title = `CR for ${head}`) {
  const res = await h.call(admin(), 'POST', base, { title, head_ref: head });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.change_request as { cr_id: string; number: number; [k: string]: unknown };
}
const merge = (id: string, body?: unknown) => h.call(admin(), 'POST', `${base}/${id}/merge`, body);
const get = async (id: string) => (await h.call(admin(), 'GET', `${base}/${id}`)).body.change_request;
const preview = async (id: string) => (await h.call(admin(), 'GET', `${base}/${id}/merge-preview`)).body;
const parents = (sha: string) => git(host.hostDir, 'rev-list', '--parents', '-n', '1', sha).split(' ').slice(1);
const isAncestor = (a: string, b: string) => {
  try { git(host.hostDir, 'merge-base', '--is-ancestor', a, b); return true; } catch { return false; }
};
/** Advances main on the host with a change to `file`. */
function advanceMain(file: string, content: string) {
  work.pull('main');
  work.write(file, content).commit(`main: ${file}`);
  work.push('main');
}

describe('fast-forward', () => {
  it('moves the base to the head, captures SHAs, asks the project to re-read, and keeps the diff', async () => {
    work.branch('ff', { 'ff.txt': 'one\ntwo\n', 'src/app.txt': lines(1, 11) }, { from: 'main' });
    const cr = await openCr('ff');
    const mainBefore = host.tip('main')!;
    const p = await preview(cr.cr_id);
    expect(p).toEqual({
      base_sha: mainBefore, head_sha: host.tip('ff'), merge_base: mainBefore,
      is_up_to_date: false, can_merge: true, can_fast_forward: true, conflicts: [],
    });
    const diff = (await h.call(admin(), 'GET', `${base}/${cr.cr_id}/diff`)).body;
    expect(diff.files).toEqual([
      { path: 'ff.txt', status: 'added', additions: 2, deletions: 0, binary: false, truncated: false },
      { path: 'src/app.txt', status: 'modified', additions: 1, deletions: 0, binary: false, truncated: false },
    ]);
    expect([diff.additions, diff.deletions]).toEqual([3, 0]);
    expect(diff.patch).toContain('+line 11');

    const res = await merge(cr.cr_id);
    expect(res.status).toBe(200);
    const merged = res.body.change_request;
    expect(host.tip('main')).toBe(host.tip('ff'));
    expect(merged).toMatchObject({
      status: 'merged', merged_by: h.userId, merge_commit_sha: host.tip('ff'),
      head_commit_sha: host.tip('ff'), base_commit_sha: mainBefore,
    });
    expect(merged.merged_at).toMatch(/Z$/);
    expect(merged.updated_at).toBe(merged.merged_at);
    const annotations = (await h.client.resource<Project>(PROJECT).get(NAMESPACE, 'merges')).metadata.annotations ?? {};
    expect(annotations[REFRESH_ANNOTATION]).toMatch(/^[0-9a-f-]{36}$/);

    // Keep-around: the head branch is deleted on the host, the merged diff still answers.
    git(work.dir, 'push', '-q', 'origin', ':refs/heads/ff');
    const after = await h.call(admin(), 'GET', `${base}/${cr.cr_id}/diff`);
    expect(after.status).toBe(200);
    expect(after.body.files.map((f: { path: string }) => f.path)).toEqual(['ff.txt', 'src/app.txt']);
    expect((await get(cr.cr_id)).merge_commit_sha).toBe(merged.merge_commit_sha);
  });
});

describe('three-way merge', () => {
  it('creates a merge commit with parents (base, head), the default or given message, and the service identity', async () => {
    work.branch('tw-1', { 'tw1.txt': 'tw1\n' }, { from: 'main' });
    work.branch('tw-2', { 'tw2.txt': 'tw2\n' }, { from: 'main' });
    const first = await openCr('tw-1', 'Add tw1');
    const second = await openCr('tw-2', 'Add tw2');
    advanceMain('README.md', '# demo, advanced\n');
    const mainBefore = host.tip('main')!;
    const headBefore = host.tip('tw-1')!;
    const p = await preview(first.cr_id);
    expect(p).toMatchObject({ can_merge: true, can_fast_forward: false, is_up_to_date: false, conflicts: [] });
    // Three-dot diff: main's own change is not part of the CR.
    expect((await h.call(admin(), 'GET', `${base}/${first.cr_id}/diff`)).body.files.map((f: { path: string }) => f.path)).toEqual(['tw1.txt']);

    const res = await merge(first.cr_id);
    expect(res.status).toBe(200);
    const mergeSha = host.tip('main')!;
    expect(parents(mergeSha)).toEqual([mainBefore, headBefore]);
    expect(git(host.hostDir, 'log', '-1', '--format=%s', mergeSha)).toBe(`Merge CR #${first.number}: Add tw1`);
    expect(git(host.hostDir, 'log', '-1', '--format=%an <%ae>|%cn <%ce>', mergeSha)).toBe(`${MERGE_IDENTITY.name} <${MERGE_IDENTITY.email}>|${MERGE_IDENTITY.name} <${MERGE_IDENTITY.email}>`);
    expect(res.body.change_request).toMatchObject({ merge_commit_sha: mergeSha, base_commit_sha: mainBefore, head_commit_sha: headBefore });

    const custom = await merge(second.cr_id, { message: 'Ship tw2\n\nwith a body' });
    expect(custom.status).toBe(200);
    expect(git(host.hostDir, 'log', '-1', '--format=%B', host.tip('main')!)).toBe('Ship tw2\n\nwith a body');
  });

  it('validates the merge body before anything happens', async () => {
    work.branch('body-check', { 'bc.txt': 'bc\n' }, { from: 'main' });
    const cr = await openCr('body-check');
    for (const [body, message] of [
      [{ message: '  ' }, /message must not be empty/],
      [{ expected_head_sha: 'abc' }, /expected_head_sha must be a full commit sha/],
      [{ author: 'me' }, /unknown field\(s\) author/],
      [{ message: 'with a NUL\u0000' }, /message must not contain control characters/],
      [{ message: 'carriage\rreturn' }, /message must not contain control characters/],
    ] as const) {
      const res = await merge(cr.cr_id, body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
    }
    expect((await get(cr.cr_id)).status).toBe('open');
    const moved = await merge(cr.cr_id, { expected_head_sha: host.tip('main') });
    expect(moved.status).toBe(409);
    expect(moved.body.error).toMatch(/head branch body-check moved/);
    expect((await get(cr.cr_id)).status).toBe('open');
    expect((await merge(cr.cr_id, { expected_head_sha: host.tip('body-check') })).status).toBe(200);
  });
});

describe('conflicts and unrelated histories', () => {
  it('409 naming the paths for content, modify/delete, add/add and binary conflicts; nothing merged', async () => {
    advanceMain('src/app.txt', lines(1, 10).replace('line 5', 'main 5'));
    work.pull('main');
    work.write('gone.txt', 'x\n').write('img.bin', Buffer.from([0, 1, 2, 3])).commit('add files');
    work.push('main');
    const forkPoint = host.tip('main')!;
    work.checkout('conflicting', { from: 'main' });
    work.write('src/app.txt', lines(1, 10).replace('line 5', 'head 5'))
      .write('gone.txt', 'edited\n')
      .write('both.txt', 'head\n')
      .write('img.bin', Buffer.from([9, 9, 9, 0]))
      .commit('head side');
    work.push('conflicting');
    const cr = await openCr('conflicting');
    work.checkout('main');
    work.write('src/app.txt', lines(1, 10).replace('line 5', 'base 5')).remove('gone.txt').write('both.txt', 'base\n').write('img.bin', Buffer.from([7, 7, 7, 0])).commit('base side');
    work.push('main');
    const mainBefore = host.tip('main')!;
    expect(mainBefore).not.toBe(forkPoint);

    const p = await preview(cr.cr_id);
    expect(p.can_merge).toBe(false);
    expect([...p.conflicts].sort()).toEqual(['both.txt', 'gone.txt', 'img.bin', 'src/app.txt']);
    const res = await merge(cr.cr_id);
    expect(res.status).toBe(409);
    for (const file of ['both.txt', 'gone.txt', 'img.bin', 'src/app.txt']) expect(res.body.error).toContain(file);
    expect(res.body.error).toMatch(/resolve the conflicts/);
    expect(host.tip('main')).toBe(mainBefore);
    expect((await get(cr.cr_id)).status).toBe('open');
  });

  it('a head conflicting in 3,010 files: the preview and the 409 list 3,000 and count the rest, the message names ten', async () => {
    // two unrelated branches that add the same 3,010 paths: main is left as it is for the other tests
    const many = (content: string) => Object.fromEntries(Array.from({ length: 3_010 }, (_, i) => [`c/f${String(i).padStart(4, '0')}.txt`, content]));
    work.branch('many-base', many('base\n'), { orphan: true });
    work.branch('many-head', many('head\n'), { orphan: true });
    const res0 = await h.call(admin(), 'POST', base, { title: 'many conflicts', head_ref: 'many-head', base_ref: 'many-base' });
    expect(res0.status, JSON.stringify(res0.body)).toBe(201);
    const cr = res0.body.change_request as { cr_id: string };
    const baseBefore = host.tip('many-base');

    const p = await preview(cr.cr_id);
    expect([p.can_merge, p.conflicts.length, p.conflicts_omitted]).toEqual([false, 3_000, 10]);
    const res = await merge(cr.cr_id);
    expect(res.status).toBe(409);
    expect([res.body.conflicts.length, res.body.conflicts_omitted]).toEqual([3_000, 10]);
    expect(res.body.error).toContain(`conflicts in ${p.conflicts.slice(0, 10).join(', ')}, and 3000 more; merge many-base into many-head`);
    expect(host.tip('many-base')).toBe(baseBefore);
  }, 60_000);

  it('merges unrelated histories with a two-parent commit; preview has merge_base null', async () => {
    work.branch('orphan', { 'orphan-only.txt': 'o\n' }, { orphan: true });
    const cr = await openCr('orphan');
    const p = await preview(cr.cr_id);
    expect(p).toMatchObject({ merge_base: null, can_fast_forward: false, can_merge: true, is_up_to_date: false });
    const diff = (await h.call(admin(), 'GET', `${base}/${cr.cr_id}/diff`)).body;
    expect(diff.files).toEqual([{ path: 'orphan-only.txt', status: 'added', additions: 1, deletions: 0, binary: false, truncated: false }]);
    const mainBefore = host.tip('main')!;
    const res = await merge(cr.cr_id);
    expect(res.status).toBe(200);
    expect(parents(host.tip('main')!)).toEqual([mainBefore, host.tip('orphan')]);
  });
});

describe('the manifest gate', () => {
  it('422 MANIFEST_INVALID with issues for an invalid svc.yaml or svc.toml on the head; a valid one merges', async () => {
    work.pull('main');
    work.branch('bad-yaml', { 'svc.yaml': 'svc_version: 2\n' }, { from: 'main' });
    work.checkout('main');
    work.branch('bad-toml', { 'svc.toml': 'svc_version = 7\n' }, { from: 'main' });
    work.checkout('main');
    work.branch('good-yaml', { 'svc.yaml': 'svc_version: 2\ndefault_agent: main\nagents:\n  main: {}\n' }, { from: 'main' });
    for (const head of ['bad-yaml', 'bad-toml']) {
      const cr = await openCr(head);
      const mainBefore = host.tip('main');
      const res = await merge(cr.cr_id);
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('MANIFEST_INVALID');
      expect(res.body.issues.length).toBeGreaterThan(0);
      expect(res.body.issues[0]).toEqual({ path: expect.any(String), message: expect.any(String) });
      expect(host.tip('main')).toBe(mainBefore);
      expect((await get(cr.cr_id)).status).toBe('open');
    }
    const good = await openCr('good-yaml');
    expect((await merge(good.cr_id)).status).toBe(200);
  });

  it('422 MANIFEST_INVALID for a head whose svc.yaml is larger than 1 MiB, refused unread (parsing 20 MB of YAML held the API for half a minute)', async () => {
    work.pull('main');
    const huge = `svc_version: 2\ndefault_agent: main\nagents:\n  main: {}\nenv:\n  optional:\n${'    - V\n'.repeat(200_000)}`;
    work.branch('huge-yaml', { 'svc.yaml': huge }, { from: 'main' });
    const cr = await openCr('huge-yaml');
    const mainBefore = host.tip('main');
    const res = await merge(cr.cr_id);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('MANIFEST_INVALID');
    expect(res.body.issues).toEqual([{ path: '', message: `svc.yaml is ${Buffer.byteLength(huge)} bytes; a manifest may be at most 1048576 bytes (1 MiB)` }]);
    expect(host.tip('main')).toBe(mainBefore);
  });
});

describe('races and a refusing host', () => {
  it('two concurrent merges into one base: both land or one gets 409; no commit is lost', async () => {
    work.pull('main');
    work.branch('race-1', { 'race1.txt': 'r1\n' }, { from: 'main' });
    work.checkout('main');
    work.branch('race-2', { 'race2.txt': 'r2\n' }, { from: 'main' });
    const a = await openCr('race-1');
    const b = await openCr('race-2');
    const mainBefore = host.tip('main')!;
    const results = await Promise.all([merge(a.cr_id), merge(b.cr_id)]);
    for (const r of results) expect([200, 409]).toContain(r.status);
    expect(results.some((r) => r.status === 200)).toBe(true);
    const main = host.tip('main')!;
    expect(isAncestor(mainBefore, main)).toBe(true);
    for (const [i, r] of results.entries()) {
      const head = host.tip(`race-${i + 1}`)!;
      if (r.status === 200) expect(isAncestor(head, main)).toBe(true);
      else expect((await get([a, b][i]!.cr_id)).status).toBe('open');
    }
  });

  it('a push the host rejects (pre-receive hook) is 409 with its reason; nothing changes', async () => {
    work.pull('main');
    work.branch('hooked', { 'hooked.txt': 'h\n' }, { from: 'main' });
    const cr = await openCr('hooked');
    const hook = path.join(host.hostDir, 'hooks', 'pre-receive');
    writeFileSync(hook, '#!/bin/sh\necho "policy: main is frozen for the release" >&2\nexit 1\n');
    chmodSync(hook, 0o755);
    const mainBefore = host.tip('main');
    try {
      const res = await merge(cr.cr_id);
      expect(res.status).toBe(409);
      expect(res.body.error).toMatch(/rejected the push to main: pre-receive hook declined: policy: main is frozen for the release$/);
      expect(host.tip('main')).toBe(mainBefore);
      expect((await get(cr.cr_id)).status).toBe('open');
    } finally {
      rmSync(hook);
    }
    expect((await merge(cr.cr_id)).status).toBe(200);
  });

  it('a head merged outside svc (already in the base) makes the CR merged, by nobody: a merge is 409', async () => {
    work.pull('main');
    work.branch('already', { 'already.txt': 'a\n' }, { from: 'main' });
    const cr = await openCr('already');
    const head = host.tip('already')!;
    const baseBefore = host.tip('main')!;
    git(work.dir, 'push', '-q', 'origin', 'already:refs/heads/main');
    const res = await merge(cr.cr_id);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatch(/already merged/);
    expect(await get(cr.cr_id)).toMatchObject({ status: 'merged', merged_by: null, merge_commit_sha: head, head_commit_sha: head, base_commit_sha: baseBefore });
  });

  it('a three-way merge done outside svc is found on read, with the merge commit and the base before it', async () => {
    work.pull('main');
    work.branch('outside', { 'outside.txt': 'o\n' }, { from: 'main' });
    const cr = await openCr('outside');
    advanceMain('outside-main.txt', 'm\n');
    const baseBefore = host.tip('main')!;
    work.pull('main');
    git(work.dir, 'merge', '-q', '--no-ff', '-m', 'merged by hand', 'origin/outside');
    work.push('main');
    const mergeSha = host.tip('main')!;
    expect(await get(cr.cr_id)).toMatchObject({ status: 'merged', merged_by: null, merge_commit_sha: mergeSha, head_commit_sha: host.tip('outside'), base_commit_sha: baseBefore });
    expect((await h.call(admin(), 'GET', `${base}?status=open`)).body.change_requests.map((c: { cr_id: string }) => c.cr_id)).not.toContain(cr.cr_id);
  });
});
