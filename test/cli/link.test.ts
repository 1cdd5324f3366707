// `svc projects link` outside a git repository: says where it is and what to do.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SVC_BIN } from './run-cli.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-not-a-repo-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('svc projects link outside a git repository', () => {
  it('says the directory is not in a repository (not git\'s own words about --local), exit 2', () => {
    const run = spawnSync(process.execPath, [SVC_BIN, 'projects', 'link'], { cwd: dir, encoding: 'utf8', env: { ...process.env, GIT_CEILING_DIRECTORIES: path.dirname(dir) } });
    expect(run.stderr).toBe(`svc: ${dir} is not inside a git repository: run svc projects link in your clone of the project\n`);
    expect(run.stdout).toBe('');
    expect(run.status).toBe(2);
  });
});
