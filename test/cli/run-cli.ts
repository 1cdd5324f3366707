// Runs the built CLI (`node bin/svc.js ...`, after `make build`) as a real process.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SVC_BIN = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));
export const FIXTURES = 'test/fixtures/manifests';

export interface CliResult { code: number | null; stdout: string; stderr: string }

export function svc(args: string[], cwd = REPO_ROOT): CliResult {
  if (!existsSync(new URL('../../dist/src/cli/main.js', import.meta.url)) && !existsSync(new URL('../../dist/cli/svc.mjs', import.meta.url))) {
    throw new Error('the CLI is not built: run `make build` first');
  }
  const run = spawnSync(process.execPath, [SVC_BIN, ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}
