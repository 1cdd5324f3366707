// `svc dev` checks what its sessions need before it starts anything (issue 23): run as a user
// would on a machine without git, it names every missing piece (the isolation tools too) with how
// to get it, exits non-zero and leaves nothing behind.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/dev.js';
import { run } from './util.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-preflight-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('svc dev preflight', () => {
  it('without git on PATH: one line saying how to get it, exit 1, nothing started', async () => {
    const dataDir = path.join(tmp, '.svc-dev');
    const result = await run(process.execPath, [path.join(REPO_ROOT, 'bin/svc.js'), 'dev', '--data-dir', dataDir, '--api-port', '0', '--kube-port', '0'], { PATH: path.join(tmp, 'empty-bin'), HOME: tmp });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('svc dev could not start: this machine lacks what svc dev needs:');
    expect(result.stderr).toMatch(/^ {2}- git: not found on PATH; install it \(Debian\/Ubuntu: apt-get install git/m);
    // the pinned engine comes from the package, whatever PATH says
    expect(result.stderr).not.toMatch(/the engine/);
    // the isolation tools (found on PATH, and bubblewrap is in /usr/bin) are listed in the same run
    expect(result.stderr).toMatch(/^ {2}- sandbox isolation: bwrap is missing: install it with `apt-get install bubblewrap` \(without it sessions refuse to start; --unsafe-no-isolation/m);
    expect(existsSync(dataDir)).toBe(false);
  });
});
