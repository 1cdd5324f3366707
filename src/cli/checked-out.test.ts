// checkedOutBranchWarning against real repositories made with git on this machine.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkedOutBranchWarning } from './checked-out.js';

const root = mkdtempSync(path.join(tmpdir(), 'svc-checked-out-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.email=a@b', '-c', 'user.name=a', ...args], { cwd, stdio: 'pipe' });

function workingCopy(name: string): string {
  const dir = path.join(root, name);
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  git(dir, 'commit', '-q', '--allow-empty', '-m', 'init');
  return dir;
}

describe('checkedOutBranchWarning', () => {
  it('warns for a working copy with the default branch checked out, naming both ways out', async () => {
    const dir = workingCopy('plain');
    expect(await checkedOutBranchWarning(dir, 'main')).toBe(
      `warning: ${dir} has main checked out in a working copy, and git refuses a push to a checked-out branch: merging a change request into main would fail. `
      + `Use a bare repository (git clone --bare ${dir} ${dir}.git), or let pushes update the working copy when it is clean: git -C ${dir} config receive.denyCurrentBranch updateInstead`,
    );
    git(dir, 'config', 'receive.denyCurrentBranch', 'updateInstead');
    expect(await checkedOutBranchWarning(dir, 'main')).toBeNull();
  });

  it('also when a linked worktree has it checked out; not for another branch, a bare repository or a URL', async () => {
    const dir = workingCopy('worktrees');
    git(dir, 'checkout', '-q', '-b', 'dev');
    expect(await checkedOutBranchWarning(dir, 'main')).toBeNull();
    git(dir, 'worktree', 'add', '-q', path.join(root, 'linked'), 'main');
    expect(await checkedOutBranchWarning(dir, 'main')).toContain(`warning: ${dir} has main checked out`);
    const bare = path.join(root, 'bare.git');
    git(root, 'clone', '-q', '--bare', dir, bare);
    expect(await checkedOutBranchWarning(bare, 'main')).toBeNull();
    expect(await checkedOutBranchWarning('https://example.invalid/r.git', 'main')).toBeNull();
    expect(await checkedOutBranchWarning(path.join(root, 'not-there'), 'main')).toBeNull();
  });
});
