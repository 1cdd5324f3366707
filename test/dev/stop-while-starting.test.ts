// `svc dev` stopped (SIGTERM, as Ctrl-C's SIGINT) while it is still starting: a clean stop once the
// start is done, exit 0, nothing of it left running (before: the signal's default action killed svc
// dev alone and orphaned its cluster, API and operator).
import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, removeDevDir } from '../helpers/dev.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-dev-early-'));
afterAll(() => removeDevDir(tmp));

/** Processes whose command line or environment names `dir`. */
function processesOf(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const seen = readFileSync(`/proc/${entry}/cmdline`, 'utf8') + readFileSync(`/proc/${entry}/environ`, 'utf8');
      if (seen.includes(dir)) found.push(Number(entry));
    } catch { /* gone, or not ours to read */ }
  }
  return found;
}

describe('svc dev stopped while it starts', () => {
  it('SIGTERM after the local cluster is up, before "svc dev is running": exit 0, nothing left', async () => {
    const dataDir = path.join(tmp, 'data');
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/svc.js'), 'dev', '--data-dir', dataDir, '--api-port', '0', '--kube-port', '0'], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let signalled = false;
    const onOutput = (c: Buffer) => {
      output += c.toString();
      // the cluster is up and its children are starting: the moment that orphaned them before
      if (!signalled && output.includes('local cluster at')) {
        signalled = true;
        child.kill('SIGTERM');
      }
    };
    child.stdout.on('data', onOutput);
    child.stderr.on('data', onOutput);
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(signalled, output).toBe(true);
    expect(code, output).toBe(0);
    expect(output).toContain('svc dev: terminated, stopping...');
    expect(output).toContain('svc dev: stopped');
    expect(processesOf(dataDir), output).toEqual([]);
  }, 120_000);
});
