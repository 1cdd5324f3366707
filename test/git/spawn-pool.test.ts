// runGit through the worker-thread spawn pool (what the operator and the API use): the same
// results, errors and timeouts as git started from the main thread, with real repositories.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { GitError, killRunningGit, TimeoutError, useGitSpawnWorkers } from '../../src/git/index.js';
import { runGit, streamGit } from '../../src/git/exec.js';
import { lines, seededHost, type HostRepo, type WorkClone } from './fixtures.js';

let host: HostRepo;
let work: WorkClone;
beforeAll(() => {
  useGitSpawnWorkers(2);
  ({ host, work } = seededHost());
  work.write('svc.yaml', 'version: 1\n').commit('manifest');
  work.push('main');
});
afterAll(() => {
  useGitSpawnWorkers(0);
  host?.cleanup();
});

describe('git spawn pool', () => {
  it('fetches, reads and merges as before, many at once', async () => {
    const mirror = host.mirror();
    await mirror.fetch();
    const reads = await Promise.all(Array.from({ length: 20 }, () => mirror.readBranchFiles('main', ['svc.yaml', 'src/app.txt', 'nope'])));
    for (const read of reads) expect(read).toEqual({ sha: host.tip('main'), files: ['version: 1\n', lines(1, 10), null] });
    work.checkout('feature', {}).write('a.txt', 'a\n').commit('a');
    work.push('feature');
    await mirror.fetch({ force: true });
    const merged = await mirror.merge({ base: 'main', head: 'feature', message: 'Merge feature' });
    expect(merged.merge_commit_sha).toBe(host.tip('main'));
  });

  it('passes input, classifies a failure and redacts it, and kills the process group on a timeout', async () => {
    const hashed = await runGit(['hash-object', '--stdin'], { input: 'hello\n', timeoutMs: 10_000 });
    expect(hashed.stdout.toString().trim()).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
    const failure = await runGit(['rev-parse', '--verify', 'secret-value-ref'], { gitDir: host.hostDir, timeoutMs: 10_000, secrets: ['secret-value'] }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(GitError);
    expect((failure as GitError).message).not.toContain('secret-value');
    const started = Date.now();
    const slow = await runGit(['-c', 'alias.nap=!sleep 30', 'nap'], { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(slow).toBeInstanceOf(TimeoutError);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(await runGit(['-c', 'alias.ok=!true', 'ok'], { timeoutMs: 10_000 })).toMatchObject({ exitCode: 0 });
  });

  it('killRunningGit ends the git processes of the pool and of the main thread, helpers and all, and their runs fail', async () => {
    // a shell alias stands for a fetch stuck on a remote: git and a child of its own
    const nap = (seconds: string) => ['-c', `alias.nap=!sleep ${seconds}`, 'nap'];
    const sleeping = (seconds: string) => {
      try { return execFileSync('pgrep', ['-f', `sleep ${seconds}`]).toString().split('\n').filter(Boolean).length; } catch { return 0; }
    };
    const waitForSleep = async (seconds: string) => {
      for (let i = 0; i < 200 && sleeping(seconds) === 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(sleeping(seconds)).toBeGreaterThan(0);
    };
    const outcome = (run: Promise<unknown>) => run.then(() => 'finished', (e: unknown) => e);
    const pooled = outcome(runGit(nap('91.25'), { timeoutMs: 120_000 }));
    const direct = outcome(streamGit(nap('92.25'), { timeoutMs: 120_000 }, () => undefined)); // always the main thread
    await waitForSleep('91.25');
    await waitForSleep('92.25');
    expect(await killRunningGit()).toBe(2);
    expect(await pooled).toBeInstanceOf(GitError);
    expect(await direct).toBeInstanceOf(GitError);
    expect(sleeping('91.25')).toBe(0);
    expect(sleeping('92.25')).toBe(0);
    expect(await killRunningGit()).toBe(0);
    expect(await runGit(['-c', 'alias.ok=!true', 'ok'], { timeoutMs: 10_000 })).toMatchObject({ exitCode: 0 });
  });
});
