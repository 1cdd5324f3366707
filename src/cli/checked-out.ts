// A project made from a working copy on this machine (`svc projects create p --repo .`): git
// refuses a push to a branch checked out there, so merging a change request into it would fail
// at the end of the flow with git's "refusing to update checked out branch". Said at creation.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** receive.denyCurrentBranch values with which a push to the checked-out branch goes through. */
const PUSH_ALLOWED = new Set(['updateinstead', 'ignore', 'warn', 'false', 'no', 'off', '0']);

async function git(repo: string, args: string[]): Promise<string | null> {
  try {
    return (await run('git', ['-C', repo, ...args])).stdout.trim();
  } catch {
    return null;
  }
}

/** A warning when `repo` is a local path whose working copy (or a worktree of it) has `branch` checked out and refuses pushes to it; else null. */
export async function checkedOutBranchWarning(repo: string, branch: string): Promise<string | null> {
  if (!path.isAbsolute(repo) || !existsSync(repo)) return null;
  if ((await git(repo, ['rev-parse', '--is-bare-repository'])) !== 'false') return null;
  const worktrees = await git(repo, ['worktree', 'list', '--porcelain']);
  if (!worktrees?.split('\n').includes(`branch refs/heads/${branch}`)) return null;
  const deny = (await git(repo, ['config', '--get', 'receive.denyCurrentBranch'])) ?? '';
  if (PUSH_ALLOWED.has(deny.toLowerCase())) return null;
  return `warning: ${repo} has ${branch} checked out in a working copy, and git refuses a push to a checked-out branch: `
    + `merging a change request into ${branch} would fail. Use a bare repository (git clone --bare ${repo} ${repo.replace(/\/+$/, '')}.git), `
    + `or let pushes update the working copy when it is clean: git -C ${repo} config receive.denyCurrentBranch updateInstead`;
}
