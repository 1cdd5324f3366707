// The checkpoint's tree against git's racy-clean rule: a file rewritten with the same size in the
// second its index entry was written must still be seen (keep.txt v1 -> v2 was left out).
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Checkpointer } from './checkpoint.js';
import { Workspace } from './git.js';

const SESSION = '3f1c8f2e-6f3a-4f7e-9a55-0c1d2e3f4a5b';
const root = mkdtempSync(path.join(os.tmpdir(), 'svc-checkpoint-racy-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' }).trim();

describe('Checkpointer', () => {
  it('a same-size rewrite in the second of the agent index entry is in the checkpoint (the index copied with its own mtime)', async () => {
    const remote = path.join(root, 'remote.git');
    const workspace = path.join(root, 'workspace');
    git(root, 'init', '-q', '--bare', remote);
    git(root, 'init', '-q', '-b', SESSION, workspace);
    git(workspace, 'remote', 'add', 'origin', remote);
    // at the start of a second: v1 staged (the agent's index), then v2 in the same second, same size
    await new Promise((r) => setTimeout(r, 1050 - (Date.now() % 1000)));
    writeFileSync(path.join(workspace, 'keep.txt'), 'v1\n');
    git(workspace, 'add', 'keep.txt');
    git(workspace, 'commit', '-q', '-m', 'base');
    writeFileSync(path.join(workspace, 'keep.txt'), 'v2\n');
    await new Promise((r) => setTimeout(r, 1100)); // the checkpoint comes in a later second

    const checkpoints = new Checkpointer(
      new Workspace({ workspace, branch: SESSION, baseRef: undefined, repoUrl: remote, sessionId: SESSION, agentName: undefined, credentialHelper: undefined }),
      { sessionId: SESSION, stateDir: path.join(root, 'state'), policy: { enabled: true, intervalMs: 60_000, stopTimeoutMs: 10_000 }, conversation: null },
    );
    expect(await checkpoints.save('turn')).toBe('written');
    expect(git(remote, 'show', `refs/svc/checkpoints/${SESSION}:keep.txt`)).toBe('v2');
  });
});
