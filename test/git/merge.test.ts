// Merge preview and merge against a real host repository: fast-forward, three-way,
// conflicts, unrelated histories, quarantine, leases, concurrency.
import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  BaseMovedError, BranchExistsError, MergeConflictError, HeadMovedError, NothingToMergeError,
  InvalidInputError, RefNotFoundError, type Mirror, type MirrorOptions,
} from '../../src/git/index.js';
import { git, lines, objectCount, seededHost, type HostRepo, type WorkClone } from './fixtures.js';

let host: HostRepo;
afterEach(() => host?.cleanup());

const FIXED_DATE = new Date('2026-01-02T03:04:05Z');

function mirrorOf(h: HostRepo, extra: Partial<MirrorOptions> = {}): Mirror {
  return h.mirror({ clock: () => FIXED_DATE, ...extra });
}

/** main and `feature` both change; `edit` decides what the feature branch does. */
function diverged(editFeature: (w: WorkClone) => void, editMain: (w: WorkClone) => void): WorkClone {
  let work: WorkClone;
  ({ host, work } = seededHost());
  work.checkout('feature', {});
  editFeature(work);
  work.commit('feature change');
  work.push('feature');
  work.checkout('main');
  editMain(work);
  work.commit('main change');
  work.push('main');
  return work;
}

describe('merge preview', () => {
  it('fast-forward: head strictly ahead', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    const base = work.sha();
    work.branch('feature', { 'f.txt': 'f\n' });

    expect(await mirrorOf(host).preview('main', 'feature')).toEqual({
      base_sha: base, head_sha: host.tip('feature'), merge_base: base,
      is_up_to_date: false, can_merge: true, can_fast_forward: true, conflicts: [],
    });
  });

  it('up to date: head already contained in base', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    const old = work.sha();
    work.write('x.txt', 'x\n').commit('x');
    work.push('main');
    git(work.dir, 'push', '-q', 'origin', `${old}:refs/heads/stale`);

    const preview = await mirrorOf(host).preview('main', 'stale');
    expect(preview).toMatchObject({ merge_base: old, is_up_to_date: true, can_fast_forward: false, can_merge: true, conflicts: [] });
  });

  it('clean three-way merge, and the preview leaves no objects in the mirror', async () => {
    diverged(
      (w) => w.write('src/app.txt', lines(1, 10).replace('line 2\n', 'feature 2\n')),
      (w) => w.write('src/app.txt', lines(1, 10).replace('line 9\n', 'main 9\n')),
    );
    const mirror = mirrorOf(host);
    await mirror.fetch();
    const before = objectCount(mirror.dir);
    const preview = await mirror.preview('main', 'feature');
    expect(preview).toMatchObject({ is_up_to_date: false, can_merge: true, can_fast_forward: false, conflicts: [] });
    expect(preview.merge_base).toMatch(/^[0-9a-f]{40}$/);
    expect(objectCount(mirror.dir)).toBe(before);
    expect(git(mirror.dir, 'for-each-ref')).not.toContain('refs/svc');
  });

  it.each([
    ['content', (w: WorkClone) => w.write('src/app.txt', 'feature\n'), (w: WorkClone) => w.write('src/app.txt', 'main\n'), ['src/app.txt']],
    ['modify/delete', (w: WorkClone) => w.write('src/app.txt', 'feature\n'), (w: WorkClone) => w.remove('src/app.txt'), ['src/app.txt']],
    ['add/add', (w: WorkClone) => w.write('new.txt', 'one\n'), (w: WorkClone) => w.write('new.txt', 'two\n'), ['new.txt']],
    ['binary', (w: WorkClone) => w.write('img.bin', Buffer.from([0, 1, 2])), (w: WorkClone) => w.write('img.bin', Buffer.from([0, 3, 4])), ['img.bin']],
  ])('%s conflict: preview lists the path, merge refuses and changes nothing', async (_kind, feature, main, paths) => {
    diverged(feature, main);
    const mirror = mirrorOf(host);
    const preview = await mirror.preview('main', 'feature');
    expect(preview).toMatchObject({ can_merge: false, can_fast_forward: false, is_up_to_date: false, conflicts: paths });

    const baseBefore = host.tip('main');
    const error = await mirror.merge({ base: 'main', head: 'feature', message: 'm' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MergeConflictError);
    expect((error as MergeConflictError).paths).toEqual(paths);
    expect((error as MergeConflictError).message).toContain(paths[0]);
    expect(host.tip('main')).toBe(baseBefore);
    expect(await mirror.resolveBranch('main')).toBe(baseBefore);
  });

  it('lists the first 3,000 conflicting paths and counts them all; the refusal names ten', async () => {
    // an agent's branch could conflict in every one of 800,000 files: all were held, listed and named in the message
    const many = (w: WorkClone, content: string) => { for (let i = 0; i < 3_010; i++) w.write(`c/f${String(i).padStart(4, '0')}.txt`, content); };
    diverged((w) => many(w, 'feature\n'), (w) => many(w, 'main\n'));
    const mirror = mirrorOf(host);
    const preview = await mirror.preview('main', 'feature');
    expect(preview).toMatchObject({ can_merge: false, conflicts_omitted: 10 });
    expect(preview.conflicts).toHaveLength(3_000);
    expect(preview.conflicts.at(-1)).toBe('c/f2999.txt');

    const error = await mirror.merge({ base: 'main', head: 'feature', message: 'm' }).catch((e: unknown) => e) as MergeConflictError;
    expect(error).toBeInstanceOf(MergeConflictError);
    expect([error.paths.length, error.total]).toEqual([3_000, 3_010]);
    expect(error.message).toBe(`merge has conflicts in 3010 file(s): ${preview.conflicts.slice(0, 10).join(', ')}, and 3000 more; resolve the conflicts first`);
  }, 60_000);

  it('unrelated histories: merge_base null; disjoint files merge, same path conflicts', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    work.branch('orphan', { 'other.txt': 'o\n' }, { orphan: true });
    work.branch('orphan-clash', { 'README.md': 'different\n' }, { orphan: true });
    const mirror = mirrorOf(host);

    expect(await mirror.preview('main', 'orphan')).toMatchObject({
      merge_base: null, is_up_to_date: false, can_fast_forward: false, can_merge: true, conflicts: [],
    });
    expect(await mirror.preview('main', 'orphan-clash')).toMatchObject({ merge_base: null, can_merge: false, conflicts: ['README.md'] });

    const base = host.tip('main')!;
    const result = await mirror.merge({ base: 'main', head: 'orphan', message: 'Merge CR #2: orphan' });
    expect(result.fast_forward).toBe(false);
    expect(git(host.hostDir, 'rev-parse', 'main^1', 'main^2').split('\n')).toEqual([base, host.tip('orphan')]);
    expect(git(host.hostDir, 'ls-tree', '-r', '--name-only', 'main').split('\n')).toEqual(['README.md', 'other.txt', 'src/app.txt']);
  });
});

describe('merge', () => {
  it('fast-forwards when head is strictly ahead', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    const base = work.sha();
    const head = work.branch('feature', { 'f.txt': 'f\n' });
    const mirror = mirrorOf(host);

    const result = await mirror.merge({ base: 'main', head: 'feature', message: 'unused' });
    expect(result).toEqual({ merge_commit_sha: head, base_commit_sha: base, head_commit_sha: head, fast_forward: true });
    expect(host.tip('main')).toBe(head);
    expect(await mirror.resolveBranch('main')).toBe(head);
    for (const sha of [base, head]) expect(git(mirror.dir, 'rev-parse', `refs/svc/keep/${sha}`)).toBe(sha);
    expect(git(host.hostDir, 'for-each-ref', 'refs/svc')).toBe('');
  });

  it('three-way merge: parents (base, head), message, fixed identity and date', async () => {
    diverged((w) => w.write('feature.txt', 'f\n'), (w) => w.write('main.txt', 'm\n'));
    const base = host.tip('main')!;
    const head = host.tip('feature')!;
    const mirror = mirrorOf(host, { mergeIdentity: { name: 'Svc Bot', email: 'noreply@svc.example' } });

    const result = await mirror.merge({ base: 'main', head: 'feature', message: 'Merge CR #7: Add feature' });
    expect(result).toMatchObject({ base_commit_sha: base, head_commit_sha: head, fast_forward: false });
    expect(host.tip('main')).toBe(result.merge_commit_sha);
    expect(await mirror.resolveBranch('main')).toBe(result.merge_commit_sha);
    const show = (format: string) => git(host.hostDir, 'log', '-1', `--format=${format}`, 'main');
    expect(show('%P')).toBe(`${base} ${head}`);
    expect(show('%B')).toBe('Merge CR #7: Add feature');
    expect(show('%an <%ae>|%cn <%ce>')).toBe('Svc Bot <noreply@svc.example>|Svc Bot <noreply@svc.example>');
    expect(show('%at %ct')).toBe(`${FIXED_DATE.getTime() / 1000} ${FIXED_DATE.getTime() / 1000}`);
    expect(git(host.hostDir, 'ls-tree', '-r', '--name-only', 'main').split('\n')).toContain('feature.txt');
    // The merge commit's objects were migrated out of the quarantine into the mirror.
    expect(git(mirror.dir, 'cat-file', '-t', result.merge_commit_sha)).toBe('commit');
    expect(git(mirror.dir, 'fsck', '--no-dangling', '--connectivity-only')).toBe('');
  });

  it('uses svc <noreply@svc.dev> when no identity is configured', async () => {
    diverged((w) => w.write('feature.txt', 'f\n'), (w) => w.write('main.txt', 'm\n'));
    await mirrorOf(host).merge({ base: 'main', head: 'feature', message: 'Merge CR #1: x' });
    expect(git(host.hostDir, 'log', '-1', '--format=%an <%ae>', 'main')).toBe('svc <noreply@svc.dev>');
  });

  it('refuses a head that moved from the expected sha, and a head already merged', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    const first = work.checkout('feature', {}).write('f.txt', '1\n').commit('1');
    work.write('f.txt', '2\n').commit('2');
    work.push('feature');
    const mirror = mirrorOf(host);

    await expect(mirror.merge({ base: 'main', head: 'feature', message: 'm', expectedHeadSha: first }))
      .rejects.toBeInstanceOf(HeadMovedError);
    expect(host.tip('main')).not.toBe(host.tip('feature'));
    await mirror.merge({ base: 'main', head: 'feature', message: 'm', expectedHeadSha: host.tip('feature')! });
    await expect(mirror.merge({ base: 'main', head: 'feature', message: 'm' })).rejects.toBeInstanceOf(NothingToMergeError);
    await expect(mirror.merge({ base: 'main', head: 'gone', message: 'm' })).rejects.toBeInstanceOf(RefNotFoundError);
    await expect(mirror.merge({ base: 'main', head: 'feature', message: '  ' })).rejects.toBeInstanceOf(InvalidInputError);
  });

  it('the host refuses the push when base moved meanwhile: BaseMovedError, mirror ref unchanged', async () => {
    const work = diverged((w) => w.write('feature.txt', 'f\n'), (w) => w.write('main.txt', 'm\n'));
    const base = host.tip('main')!;
    const other = host.clone();
    let raced = false;
    // The clock is read after the mirror fetched and before it pushes: someone pushes to main then.
    const mirror = mirrorOf(host, {
      clock: () => {
        if (!raced) {
          raced = true;
          other.pull('main').write('race.txt', 'r\n').commit('pushed meanwhile');
          other.push('main');
        }
        return FIXED_DATE;
      },
    });

    const error = await mirror.merge({ base: 'main', head: 'feature', message: 'm' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BaseMovedError);
    expect((error as BaseMovedError).message).toMatch(/moved on the host/);
    expect(host.tip('main')).toBe(other.sha());
    expect(await mirror.resolveBranch('main')).toBe(base);
    expect(git(mirror.dir, 'for-each-ref', 'refs/svc')).toBe('');
    expect(work.sha('main')).toBe(base);

    // A retry fetches again and lands on top of the racing commit.
    const retry = await mirror.merge({ base: 'main', head: 'feature', message: 'm' });
    expect(retry.base_commit_sha).toBe(other.sha());
  });

  it('two concurrent merges into one base from two replicas: no commit is lost', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    const start = work.sha();
    work.branch('a', { 'a.txt': 'a\n' });
    work.branch('b', { 'b.txt': 'b\n' }, { from: 'main' });
    const replica1 = mirrorOf(host, { cacheDir: path.join(host.root, 'cache-1') });
    const replica2 = mirrorOf(host, { cacheDir: path.join(host.root, 'cache-2') });

    const outcomes = await Promise.allSettled([
      replica1.merge({ base: 'main', head: 'a', message: 'Merge CR #1: a' }),
      replica2.merge({ base: 'main', head: 'b', message: 'Merge CR #2: b' }),
    ]);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(BaseMovedError);
    }
    const landed = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [['a', 'b'][i]!] : []));
    expect(landed.length).toBeGreaterThanOrEqual(1);
    const tip = host.tip('main')!;
    expect(git(host.hostDir, 'merge-base', '--is-ancestor', start, tip)).toBe('');
    for (const branch of landed) expect(git(host.hostDir, 'merge-base', '--is-ancestor', host.tip(branch)!, tip)).toBe('');
  });

  it('two concurrent merges on one mirror are serialized and both land', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    work.branch('a', { 'a.txt': 'a\n' });
    work.branch('b', { 'b.txt': 'b\n' }, { from: 'main' });
    const mirror = mirrorOf(host);
    const twin = mirrorOf(host); // another handle on the same directory shares the lock

    const [a, b] = await Promise.all([
      mirror.merge({ base: 'main', head: 'a', message: 'Merge CR #1: a' }),
      twin.merge({ base: 'main', head: 'b', message: 'Merge CR #2: b' }),
    ]);
    expect([a.fast_forward, b.fast_forward].sort()).toEqual([false, true]);
    const files = git(host.hostDir, 'ls-tree', '-r', '--name-only', 'main').split('\n');
    expect(files).toEqual(expect.arrayContaining(['a.txt', 'b.txt']));
  });
});

describe('pushBranch', () => {
  it('creates a branch at a sha, is idempotent, and refuses to move an existing branch', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    const base = work.sha();
    const mirror = mirrorOf(host);
    await mirror.fetch();

    expect(await mirror.pushBranch('0b6a4f8e-session', base)).toEqual({ created: true });
    expect(host.tip('0b6a4f8e-session')).toBe(base);
    expect(await mirror.resolveBranch('0b6a4f8e-session')).toBe(base);
    expect(await mirror.pushBranch('0b6a4f8e-session', base)).toEqual({ created: false });

    const other = work.write('x.txt', 'x\n').commit('x');
    work.push('main');
    await expect(mirror.pushBranch('0b6a4f8e-session', other)).rejects.toBeInstanceOf(BranchExistsError);
    expect(host.tip('0b6a4f8e-session')).toBe(base);
  });

  it('branches asked for at once go to the host in few pushes, each with its own outcome', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    const base = work.sha();
    const moved = work.write('y.txt', 'y\n').commit('y');
    work.push('main');
    git(host.hostDir, 'update-ref', 'refs/heads/taken', moved); // an existing branch at another commit
    const pushes = path.join(host.hostDir, 'pushes.log');
    writeFileSync(path.join(host.hostDir, 'hooks', 'pre-receive'), `#!/bin/sh\necho push >> '${pushes}'\ncat > /dev/null\n`);
    chmodSync(path.join(host.hostDir, 'hooks', 'pre-receive'), 0o755);
    const mirror = mirrorOf(host);
    await mirror.fetch();

    const names = Array.from({ length: 20 }, (_, i) => `session-${i}`);
    const results = await Promise.allSettled([
      ...names.map((name) => mirror.pushBranch(name, base)),
      mirror.pushBranch('taken', base),
      mirror.pushBranch('unknown-sha', 'f'.repeat(40)),
      mirror.pushBranch('session-0', base), // asked twice: the same outcome, created once
    ]);
    const [taken, unknown, twice] = results.slice(names.length);
    expect(results.slice(0, names.length)).toEqual(names.map(() => ({ status: 'fulfilled', value: { created: true } })));
    for (const name of names) expect(host.tip(name)).toBe(base);
    expect(taken).toMatchObject({ status: 'rejected', reason: expect.any(BranchExistsError) });
    expect(host.tip('taken')).toBe(moved);
    expect(unknown).toMatchObject({ status: 'rejected', reason: expect.any(RefNotFoundError) });
    expect(twice).toEqual({ status: 'fulfilled', value: { created: false } });
    // the first push goes alone (nothing waited yet), the rest together
    expect(readFileSync(pushes, 'utf8').trim().split('\n').length).toBeLessThanOrEqual(3);
  });
});
