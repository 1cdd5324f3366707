// The health's branch and commit read from the repository's files say what `git rev-parse HEAD
// --abbrev-ref HEAD` says, or leave it to git.
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readHead } from './git.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'svc-read-head-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' }).trim();
const gitSays = (repo: string) => {
  const [commit, branch] = git(repo, 'rev-parse', 'HEAD', '--abbrev-ref', 'HEAD').split('\n');
  return { branch, commit };
};

describe('readHead', () => {
  const repo = path.join(root, 'repo');
  git(root, 'init', '-q', '-b', 'main', repo);

  it('an unborn branch is left to git', () => {
    expect(readHead(path.join(repo, '.git'))).toBeNull();
  });

  it('a branch with a loose ref, then a packed one, then a detached HEAD: as git says', () => {
    writeFileSync(path.join(repo, 'a.txt'), 'a\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'a');
    git(repo, 'checkout', '-qb', 'svc/session-1');
    git(repo, 'commit', '-q', '--allow-empty', '-m', 'b');
    expect(readHead(path.join(repo, '.git'))).toEqual(gitSays(repo));
    git(repo, 'pack-refs', '--all');
    expect(readHead(path.join(repo, '.git'))).toEqual(gitSays(repo));
    git(repo, 'checkout', '-q', '--detach', 'main');
    expect(readHead(path.join(repo, '.git'))).toEqual(gitSays(repo));
  });

  it('a .git that is a file (a worktree) is left to git', () => {
    const worktree = path.join(root, 'worktree');
    git(repo, 'worktree', 'add', '-q', worktree, 'main');
    expect(readHead(path.join(worktree, '.git'))).toBeNull();
  });

  it('what the agent made of its .git that is no regular file (a FIFO, a link) is left to git, without blocking', () => {
    const fake = path.join(root, 'fake-git');
    mkdirSync(path.join(fake, 'refs', 'heads'), { recursive: true });
    execFileSync('mkfifo', [path.join(fake, 'HEAD')]);
    expect(readHead(fake)).toBeNull();
    rmSync(path.join(fake, 'HEAD'));
    writeFileSync(path.join(fake, 'HEAD'), 'ref: refs/heads/x\n');
    symlinkSync('/etc/hostname', path.join(fake, 'refs', 'heads', 'x'));
    expect(readHead(fake)).toBeNull();
  });
});
