// `svc dev` stopped (SIGTERM, as Ctrl-C's SIGINT) while it is still starting: a clean stop, exit 0,
// nothing of it left running (before: the signal's default action killed svc dev alone and
// orphaned its cluster, API and operator; and a stop waited for an API that never got ready).
import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
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

/** Runs svc dev; `onOutput` sees everything it printed so far and may signal it. Resolves with its exit code and output. */
async function runDev(dataDir: string, env: NodeJS.ProcessEnv, onOutput: (output: string, child: ReturnType<typeof spawn>) => void): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/svc.js'), 'dev', '--data-dir', dataDir, '--api-port', '0', '--kube-port', '0'], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const seen = (c: Buffer) => { output += c.toString(); onOutput(output, child); };
  child.stdout.on('data', seen);
  child.stderr.on('data', seen);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  return { code, output };
}

describe('svc dev stopped while it starts', () => {
  it('SIGTERM after the local cluster is up, before "svc dev is running": exit 0, nothing left', async () => {
    const dataDir = path.join(tmp, 'data');
    let signalled = false;
    // the cluster is up and its children are starting: the moment that orphaned them before
    const { code, output } = await runDev(dataDir, {}, (text, child) => {
      if (!signalled && text.includes('local cluster at')) { signalled = true; child.kill('SIGTERM'); }
    });
    expect(signalled, output).toBe(true);
    expect(code, output).toBe(0);
    expect(output).toContain('svc dev: terminated, stopping...');
    expect(output).toContain('svc dev: stopped');
    expect(processesOf(dataDir), output).toEqual([]);
  }, 120_000);

  it('an API that never gets ready: svc dev says what it waits for, and SIGTERM to svc dev alone stops it', async () => {
    const dataDir = path.join(tmp, 'never-ready');
    // loaded into every process of this svc dev; in its API process, GET /readyz answers 503 for ever
    const fixture = path.join(tmp, 'never-ready-api.cjs');
    writeFileSync(fixture, `
      const http = require('node:http');
      if (/[\\/]api\\.js$/.test(process.argv[1] || '')) {
        const emit = http.Server.prototype.emit;
        http.Server.prototype.emit = function (event, req, res) {
          if (event !== 'request' || req.url !== '/readyz') return emit.apply(this, arguments);
          res.writeHead(503, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: 'never ready (a fixture)' }));
          return true;
        };
      }
    `);
    let signalled = false;
    const { code, output } = await runDev(dataDir, { NODE_OPTIONS: `--require ${fixture}` }, (text, child) => {
      if (!signalled && text.includes('still waiting for the API to be ready')) { signalled = true; child.kill('SIGTERM'); }
    });
    expect(signalled, output).toBe(true);
    expect(output).toMatch(/svc dev: still waiting for the API to be ready after \d+ s \(http:\/\/127\.0\.0\.1:\d+\/readyz answers 503: never ready \(a fixture\)\)/);
    expect(code, output).toBe(0);
    expect(output).toContain('svc dev: stopped');
    expect(output).not.toContain('svc dev is running.');
    expect(processesOf(dataDir), output).toEqual([]);
  }, 120_000);
});
