// Mirror fetch and reads against a real host repository: refs, files, ancestry, diffs.
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { InvalidInputError, InvalidRefError, RefNotFoundError, openMirror, pruneMirrors } from '../../src/git/index.js';
import { countGitCalls } from '../helpers/git-calls.js';
import { git, lines, seededHost, type HostRepo, type WorkClone } from './fixtures.js';

let host: HostRepo;
afterEach(() => host?.cleanup());

/** A host whose main has one commit more, with `files`, and its mirror, fetched. */
async function mirrorOfMain(files: Record<string, string>, message: string) {
  let work: WorkClone;
  ({ host, work } = seededHost());
  for (const [name, content] of Object.entries(files)) work.write(name, content);
  work.commit(message);
  work.push('main');
  const mirror = host.mirror();
  await mirror.fetch();
  return mirror;
}

describe('mirror fetch and reads', () => {
  it('creates a bare mirror with branch refs, reads tips and files', async () => {
    const mirror = await mirrorOfMain({ 'svc.yaml': 'version: 1\n' }, 'manifest');

    expect(mirror.dir).toBe(path.join(host.cacheDir, 'proj-1.git'));
    expect(git(mirror.dir, 'rev-parse', '--is-bare-repository')).toBe('true');
    expect(await mirror.resolveBranch('main')).toBe(host.tip('main'));
    expect(await mirror.resolveBranch('nope')).toBeNull();
    expect(await mirror.branches()).toEqual({ main: host.tip('main') });
    expect(await mirror.readFile('main', 'svc.yaml')).toBe('version: 1\n');
    expect(await mirror.readFile(host.tip('main')!, 'src/app.txt')).toBe(lines(1, 10));
    expect(await mirror.readFile('main', 'svc.toml')).toBeNull();
    expect(await mirror.readFile('main', 'src')).toBeNull(); // a directory is not a file
  });

  it('resolves an abbreviated commit id (7 to 39 hex digits) to its commit; none, too short or not hex is null', async () => {
    const mirror = await mirrorOfMain({ 'a.txt': 'a\n' }, 'a');
    const tip = host.tip('main')!;
    expect(await mirror.resolveAbbreviatedCommit(tip.slice(0, 7))).toBe(tip);
    expect(await mirror.resolveAbbreviatedCommit(tip.slice(0, 39))).toBe(tip);
    expect(await mirror.resolveAbbreviatedCommit(tip.slice(0, 6))).toBeNull();
    expect(await mirror.resolveAbbreviatedCommit(tip)).toBeNull(); // a full id is resolveCommit's
    expect(await mirror.resolveAbbreviatedCommit(tip.slice(0, 7).toUpperCase().replace(/[0-9]/g, 'g'))).toBeNull();
    const tree = git(mirror.dir, 'rev-parse', `${tip}^{tree}`);
    expect(await mirror.resolveAbbreviatedCommit(tree.slice(0, 12))).toBeNull(); // a tree is not a commit
    expect(await mirror.resolveAbbreviatedCommit('0000000')).toBeNull();
  });

  it('reads a branch tip and several files in one go (missing files and branches as null)', async () => {
    const mirror = await mirrorOfMain({ 'svc.yaml': 'version: 1\n', 'with space.txt': 'x\ny\n' }, 'manifest');
    expect(await mirror.readBranchFiles('main', ['svc.yaml', 'svc.toml', 'src/app.txt', 'src', 'with space.txt'])).toEqual({
      sha: host.tip('main'), files: ['version: 1\n', null, lines(1, 10), null, 'x\ny\n'],
    });
    expect(await mirror.readBranchFiles('nope', ['svc.yaml'])).toEqual({ sha: null, files: [null] });
    await expect(mirror.readBranchFiles('main', ['../x'])).rejects.toBeInstanceOf(InvalidInputError);
    await expect(mirror.readBranchFiles('bad..name', ['svc.yaml'])).rejects.toBeInstanceOf(InvalidRefError);
  });

  it('reads a branch tip and files within a limit in two git processes, one when none is there; a larger file is left unread', async () => {
    const mirror = await mirrorOfMain({ 'svc.yaml': 'x'.repeat(2000), 'small.txt': 'é\n', 'b.txt': 'b\n' }, 'sizes');
    const tip = host.tip('main');
    const calls = countGitCalls();
    try {
      expect(await mirror.readBranchFiles('main', ['svc.yaml', 'small.txt', 'svc.toml', 'src', 'b.txt'], 1999)).toEqual({
        sha: tip, files: [{ bytes: 2000 }, 'é\n', null, null, 'b\n'],
      });
      expect(calls.count()).toBe(2);
      expect(await mirror.readBranchFiles('main', ['svc.toml', 'src'], 10)).toEqual({ sha: tip, files: [null, null] });
      expect(calls.count()).toBe(3);
      expect(await mirror.readBranchFiles('main', ['small.txt'], 2)).toEqual({ sha: tip, files: [{ bytes: 3 }] }); // bytes, not characters
      expect(await mirror.readBranchFiles('nope', ['svc.yaml'], 10)).toEqual({ sha: null, files: [null] });
    } finally {
      calls.restore();
    }
    await expect(mirror.readBranchFiles('main', ['../x'], 10)).rejects.toBeInstanceOf(InvalidInputError);
  });

  it('leaves a file larger than the limit unread, giving its size; a file within it is read', async () => {
    const mirror = await mirrorOfMain({ 'svc.yaml': 'x'.repeat(2000), 'small.txt': 'é\n' }, 'sizes');
    expect(await mirror.readFile('main', 'svc.yaml', 1999)).toEqual({ bytes: 2000 });
    expect(await mirror.readFile('main', 'svc.yaml', 2000)).toBe('x'.repeat(2000));
    expect(await mirror.readFile('main', 'small.txt', 3)).toBe('é\n'); // bytes, not characters
    expect(await mirror.readFile('main', 'small.txt', 2)).toEqual({ bytes: 3 });
    expect(await mirror.readFile('main', 'svc.toml', 10)).toBeNull();
    expect(await mirror.readFile('main', 'src', 10)).toBeNull(); // a directory is not a file
  });

  it('answers ancestry and commits ahead', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    const base = work.sha();
    work.checkout('feature', {}).write('a.txt', 'a\n').commit('a');
    work.write('b.txt', 'b\n').commit('b');
    work.push('feature');
    const mirror = host.mirror();

    expect(await mirror.countAhead('main', 'feature')).toBe(2);
    expect(await mirror.countAhead('feature', 'main')).toBe(0);
    expect(await mirror.isAncestor('main', 'feature')).toBe(true);
    expect(await mirror.isAncestor('feature', 'main')).toBe(false);
    expect(await mirror.mergeBase('main', 'feature')).toBe(base);
  });

  it('reuses a fresh fetch, and a forced fetch sees a push that just landed', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    const mirror = host.mirror({ maxAgeMs: 60_000 });
    await mirror.fetch();
    const before = host.tip('main');
    work.write('late.txt', 'late\n').commit('late');
    work.push('main');

    await mirror.fetch(); // younger than maxAgeMs: no network
    expect(await mirror.resolveBranch('main')).toBe(before);
    await mirror.fetch({ force: true });
    expect(await mirror.resolveBranch('main')).toBe(host.tip('main'));

    work.write('later.txt', 'later\n').commit('later');
    work.push('main');
    mirror.invalidate();
    await mirror.fetch();
    expect(await mirror.resolveBranch('main')).toBe(host.tip('main'));
  });

  it('prunes branches deleted on the host but keeps keep-around refs', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    const sha = work.branch('topic', { 't.txt': 't\n' });
    const mirror = host.mirror();
    await mirror.fetch({ force: true });
    await mirror.keepAround([sha]);
    git(work.dir, 'push', '-q', 'origin', ':refs/heads/topic');

    await mirror.fetch({ force: true });
    expect(await mirror.resolveBranch('topic')).toBeNull();
    expect(git(mirror.dir, 'rev-parse', `refs/svc/keep/${sha}`)).toBe(sha);
    expect(await mirror.readFile(sha, 't.txt')).toBe('t\n');
    expect(git(host.hostDir, 'for-each-ref', 'refs/svc')).toBe(''); // never pushed
  });

  it('rejects bad refs and paths with errors, not answers', async () => {
    ({ host } = seededHost());
    const mirror = host.mirror();
    await expect(mirror.readFile('nope', 'README.md')).rejects.toBeInstanceOf(RefNotFoundError);
    await expect(mirror.diff('main', 'nope')).rejects.toMatchObject({ code: 'REF_NOT_FOUND', ref: 'nope' });
    await expect(mirror.preview('nope', 'main')).rejects.toBeInstanceOf(RefNotFoundError);
    await expect(mirror.resolveCommit('0'.repeat(40))).rejects.toBeInstanceOf(RefNotFoundError);
    for (const bad of ['main~1', 'a..b', '--upload-pack=x', 'x y', 'HEAD^{tree}', '']) {
      await expect(mirror.resolveBranch(bad)).rejects.toBeInstanceOf(InvalidRefError);
    }
    await expect(mirror.readFile('main', '../etc/passwd')).rejects.toBeInstanceOf(InvalidInputError);
  });

  it('works with a file:// URL, pushes included', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    const head = work.branch('feature', { 'f.txt': 'f\n' });
    const mirror = host.mirror({ url: `file://${host.hostDir}` });
    expect(await mirror.resolveBranch('feature')).toBe(head);
    await mirror.merge({ base: 'main', head: 'feature', message: 'm' });
    expect(host.tip('main')).toBe(head);
  });

  it('first read on an empty cache creates the mirror', async () => {
    ({ host } = seededHost());
    const mirror = host.mirror();
    expect(existsSync(mirror.dir)).toBe(false);
    expect(await mirror.resolveBranch('main')).toBe(host.tip('main'));
  });
});

describe('diff', () => {
  it('reports statuses, per-file and total counts, binaries, and renames as delete + add', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    work.write('old-name.txt', lines(1, 3)).write('bin.dat', Buffer.from([0, 1, 2, 3])).commit('more');
    work.push('main');
    work.checkout('feature', {});
    work.write('src/app.txt', lines(1, 8) + 'changed 9\nchanged 10\nline 11\n'); // 3 added, 2 deleted
    work.write('new.txt', lines(1, 4)); // added, 4 lines
    work.remove('README.md'); // deleted, 1 line
    work.remove('old-name.txt').write('new-name.txt', lines(1, 3)); // rename
    work.write('bin.dat', Buffer.from([0, 9, 9, 9])); // binary modified
    work.commit('feature work');
    work.push('feature');

    const diff = await host.mirror().diff('main', 'feature');
    const byPath = Object.fromEntries(diff.files.map((f) => [f.path, f]));
    expect(byPath).toEqual({
      'src/app.txt': { path: 'src/app.txt', status: 'modified', additions: 3, deletions: 2, binary: false, truncated: false },
      'new.txt': { path: 'new.txt', status: 'added', additions: 4, deletions: 0, binary: false, truncated: false },
      'README.md': { path: 'README.md', status: 'deleted', additions: 0, deletions: 1, binary: false, truncated: false },
      'old-name.txt': { path: 'old-name.txt', status: 'deleted', additions: 0, deletions: 3, binary: false, truncated: false },
      'new-name.txt': { path: 'new-name.txt', status: 'added', additions: 3, deletions: 0, binary: false, truncated: false },
      'bin.dat': { path: 'bin.dat', status: 'modified', additions: 0, deletions: 0, binary: true, truncated: false },
    });
    expect(diff.additions).toBe(10);
    expect(diff.deletions).toBe(6);
    expect(diff.patch).toContain('diff --git a/src/app.txt b/src/app.txt');
    expect(diff.patch).toContain('+changed 10');
    expect(diff.patch).toContain('Binary files a/bin.dat and b/bin.dat differ');
    expect(diff.head_sha).toBe(host.tip('feature'));
    expect(diff.base_sha).toBe(host.tip('main'));
    expect(diff.truncated).toBe(false);
  });

  it('cuts the patch per file and in total, marks the cut files, and streams it to onPatch', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    work.checkout('big-diff', { from: 'main' });
    work.write('a-huge.txt', lines(1, 50_000)).write('b-small.txt', 'small\n').write('c-big.txt', lines(1, 3_000)).write('d-last.txt', 'last\n');
    work.commit('big files');
    work.push('big-diff');
    const mirror = host.mirror();
    const perFile = await mirror.diff('main', 'big-diff', { limits: { maxFileBytes: 4096, maxTotalBytes: 1 << 20 } });
    expect(perFile.files.map((f) => [f.path, f.truncated])).toEqual([['a-huge.txt', true], ['b-small.txt', false], ['c-big.txt', true], ['d-last.txt', false]]);
    expect(perFile.truncated).toBe(true);
    expect(perFile.files[0]!.additions).toBe(50_000); // counts stay whole
    expect(perFile.patch).toContain('+small');
    expect(perFile.patch).toContain('+last');
    expect(perFile.patch.length).toBeLessThan(4 * 4096);
    const chunks: string[] = [];
    const total = await mirror.diff('main', 'big-diff', { limits: { maxFileBytes: 1 << 20, maxTotalBytes: 20_000 }, onPatch: (text) => { chunks.push(text); } });
    expect(total.patch).toBe('');
    expect(Buffer.byteLength(chunks.join(''))).toBeLessThanOrEqual(20_000);
    expect(total.files.map((f) => f.truncated)).toEqual([true, true, true, true]);
  });

  it('lists the first 3,000 files of a larger diff and counts every file in the totals', async () => {
    // an agent's commit of 800,000 files was 109 MiB of git output, held and listed whole
    let work: WorkClone;
    ({ host, work } = seededHost());
    work.checkout('many', { from: 'main' });
    for (let i = 0; i < 3_100; i++) work.write(`many/f${String(i).padStart(4, '0')}.txt`, 'one\ntwo\n');
    work.commit('3,100 files');
    work.push('many');
    const diff = await host.mirror().diff('main', 'many');
    expect(diff.files).toHaveLength(3_000);
    expect(diff.files[2_999]).toEqual({ path: 'many/f2999.txt', status: 'added', additions: 2, deletions: 0, binary: false, truncated: false });
    expect(diff.files_omitted).toBe(100);
    expect([diff.additions, diff.deletions, diff.truncated]).toEqual([6_200, 0, true]);
    expect(diff.patch).toContain('+++ b/many/f3099.txt');
  }, 60_000);

  it('three-dot leaves out base changes; two-dot between stored shas does not', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    const fork = work.sha();
    work.branch('feature', { 'feature.txt': 'f\n' });
    work.checkout('main').write('base-only.txt', 'b\n').commit('base moves on');
    work.push('main');
    const mirror = host.mirror();

    const threeDot = await mirror.diff('main', 'feature');
    expect(threeDot.merge_base).toBe(fork);
    expect(threeDot.files.map((f) => [f.path, f.status])).toEqual([['feature.txt', 'added']]);

    const twoDot = await mirror.diff(host.tip('main')!, host.tip('feature')!, { mode: 'two-dot' });
    expect(twoDot.merge_base).toBeNull();
    expect(twoDot.files.map((f) => [f.path, f.status])).toEqual([['base-only.txt', 'deleted'], ['feature.txt', 'added']]);
  });

  it('diffs unrelated histories against the empty tree', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    work.branch('orphan', { 'other.txt': 'x\ny\n' }, { orphan: true });

    const diff = await host.mirror().diff('main', 'orphan');
    expect(diff.merge_base).toBeNull();
    expect(diff.files).toEqual([{ path: 'other.txt', status: 'added', additions: 2, deletions: 0, binary: false, truncated: false }]);
    expect(diff.patch).toContain('new file mode 100644');
  });
});

describe('pruneMirrors', () => {
  it("removes the mirrors of gone projects only, re-asking under each mirror's lock", async () => {
    ({ host } = seededHost());
    const mirrors = ['kept', 'gone', 'revived'].map((projectId) => openMirror({ cacheDir: host.cacheDir, projectId, url: host.hostDir }));
    for (const m of mirrors) await m.fetch();
    mkdirSync(path.join(host.cacheDir, '.init-staging.git-x'));
    writeFileSync(path.join(host.cacheDir, 'notes.txt'), 'not a mirror\n');
    let asked = 0;
    // first answer: only `kept` is live; later answers: `revived` appeared meanwhile
    const removed = await pruneMirrors(host.cacheDir, () => new Set(asked++ === 0 ? ['kept'] : ['kept', 'revived']));
    expect(removed).toEqual(['gone']);
    expect(existsSync(mirrors[0]!.dir)).toBe(true);
    expect(existsSync(mirrors[1]!.dir)).toBe(false);
    expect(existsSync(mirrors[2]!.dir)).toBe(true);
    expect(existsSync(path.join(host.cacheDir, '.init-staging.git-x'))).toBe(true);
    expect(existsSync(path.join(host.cacheDir, 'notes.txt'))).toBe(true);
    // a removed project's mirror comes back on use, from scratch
    expect(await openMirror({ cacheDir: host.cacheDir, projectId: 'gone', url: host.hostDir }).resolveBranch('main')).toBe(host.tip('main'));
    expect(await pruneMirrors(path.join(host.cacheDir, 'missing'), () => new Set())).toEqual([]);
  });
});

describe('checkpoint refs in the mirror (DESIGN §8.3)', () => {
  it('fetches sessions\' checkpoint refs, prunes deleted ones, and deletes one on the host and in the mirror', async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    const tip = work.sha();
    const ref = (id: string) => `refs/svc/checkpoints/${id}`;
    git(host.hostDir, 'update-ref', ref('s1'), tip);
    git(host.hostDir, 'update-ref', ref('s2'), tip);
    const mirror = host.mirror();
    await mirror.fetch();
    expect(git(mirror.dir, 'for-each-ref', '--format=%(refname)', 'refs/svc/checkpoints/')).toBe(`${ref('s1')}\n${ref('s2')}`);
    git(host.hostDir, 'update-ref', '-d', ref('s2'));
    await mirror.fetch({ force: true });
    expect(git(mirror.dir, 'for-each-ref', '--format=%(refname)', 'refs/svc/checkpoints/')).toBe(ref('s1'));

    expect(await mirror.deleteCheckpoint('s1')).toBe(true);
    expect(git(host.hostDir, 'for-each-ref', 'refs/svc/')).toBe('');
    expect(git(mirror.dir, 'for-each-ref', 'refs/svc/checkpoints/')).toBe('');
    expect(await mirror.deleteCheckpoint('s1')).toBe(false); // idempotent
    await expect(mirror.deleteCheckpoint('../x')).rejects.toThrow();
  });

  it("deletes a session's checkpoint ref and branch in one push, or the checkpoint alone", async () => {
    let work: WorkClone;
    ({ host, work } = seededHost());
    const tip = work.sha();
    for (const id of ['s1', 's2']) {
      git(host.hostDir, 'update-ref', `refs/heads/${id}`, tip);
      git(host.hostDir, 'update-ref', `refs/svc/checkpoints/${id}`, tip);
    }
    const mirror = host.mirror();
    await mirror.fetch();
    expect((await mirror.deleteSessionRefs('s1', { branch: true })).sort()).toEqual(['refs/heads/s1', 'refs/svc/checkpoints/s1']);
    expect(await mirror.deleteSessionRefs('s2', { branch: false })).toEqual(['refs/svc/checkpoints/s2']);
    const left = (dir: string) => git(dir, 'for-each-ref', '--format=%(refname)', 'refs/heads/s1', 'refs/heads/s2', 'refs/svc/');
    expect(left(host.hostDir)).toBe('refs/heads/s2');
    expect(left(mirror.dir)).toBe('refs/heads/s2');
    expect(await mirror.deleteSessionRefs('s1', { branch: true })).toEqual([]); // idempotent
  });
});
