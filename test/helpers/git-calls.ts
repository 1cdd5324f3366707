// The git processes this process starts: a `git` first on PATH that notes each call (its
// arguments), then runs the real git. For tests of how many processes a read costs.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface GitCalls {
  /** How many git processes started since countGitCalls(). */
  count(): number;
  /** Their arguments, one line each. */
  lines(): string[];
  /** PATH as it was; the counting git removed. */
  restore(): void;
}

export function countGitCalls(): GitCalls {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-git-calls-'));
  const log = path.join(dir, 'calls');
  writeFileSync(log, '');
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  writeFileSync(path.join(dir, 'git'), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${realGit}' "$@"\n`, { mode: 0o755 });
  const before = process.env.PATH;
  process.env.PATH = `${dir}:${before}`;
  const lines = () => readFileSync(log, 'utf8').split('\n').filter(Boolean);
  return {
    lines,
    count: () => lines().length,
    restore() {
      process.env.PATH = before;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
