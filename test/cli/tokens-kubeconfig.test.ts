// `svc tokens` without a kubeconfig to use: a line saying what to set, exit 1 (before: the
// client's guess, "HTTP protocol is not allowed when skipTLSVerify is not set", about localhost:8080).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SVC_BIN } from './run-cli.js';

const home = mkdtempSync(path.join(os.tmpdir(), 'svc-nohome-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

function tokensLs(env: Record<string, string>): { code: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [SVC_BIN, 'tokens', 'ls'], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: home, ...env } });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

const HINT = "set KUBECONFIG to the cluster's (under svc dev: source <data dir>/env, which sets it to <data dir>/kubeconfig)";

describe('svc tokens without a kubeconfig', () => {
  it('none set and none at ~/.kube/config: says so and what to set', () => {
    const out = tokensLs({});
    expect(out.stderr).toBe(`svc: no kubeconfig: KUBECONFIG is not set and ${path.join(home, '.kube', 'config')} does not exist; ${HINT}\n`);
    expect(out.stdout).toBe('');
    expect(out.code).toBe(1);
  });

  it('KUBECONFIG naming a file that is not there: names it', () => {
    const missing = path.join(home, 'gone', 'kubeconfig');
    const out = tokensLs({ KUBECONFIG: missing });
    expect(out.stderr).toBe(`svc: no kubeconfig: KUBECONFIG is ${missing}, which does not exist; ${HINT}\n`);
    expect(out.code).toBe(1);
  });
});
