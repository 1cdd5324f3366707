// `svc dev` on a port something else holds: a clear error naming the port and the flag, a
// non-zero exit, and never "svc dev is running." (issue 14 §4).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, removeDevDir } from '../helpers/dev.js';

const SVC = path.join(REPO_ROOT, 'bin/svc.js');
let tmp: string;
let squatter: http.Server;
let busyPort: number;

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-dev-busy-'));
  // Answers 200 to everything, /readyz included: dev must not mistake it for its own API.
  squatter = http.createServer((_req, res) => { res.end('{"status":"ready"}'); });
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  busyPort = (squatter.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => squatter.close(resolve));
  removeDevDir(tmp);
});

function dev(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SVC, 'dev', '--data-dir', path.join(tmp, String(Math.random())), ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => { output += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { output += c.toString(); });
    const timer = setTimeout(() => child.kill('SIGTERM'), 30_000);
    child.once('exit', (code) => { clearTimeout(timer); resolve({ code, output }); });
  });
}

describe('svc dev with a busy port', () => {
  it('--api-port taken: names the port and the flag, exits non-zero, never says it is running', async () => {
    const { code, output } = await dev(['--api-port', String(busyPort), '--kube-port', '0']);
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(output).toContain(`port ${busyPort} on 127.0.0.1 is already in use (--api-port)`);
    expect(output).not.toContain('svc dev is running.');
  }, 40_000);

  it('one port for both: said at once, before anything starts', async () => {
    const { code, output } = await dev(['--api-port', String(busyPort + 1), '--kube-port', String(busyPort + 1)]);
    expect(code).toBe(1);
    expect(output).toContain(`svc dev could not start: --api-port and --kube-port are both ${busyPort + 1}: give each its own port (0 = any free port)`);
    expect(output).not.toContain('local cluster at');
  }, 40_000);

  // --api-port: it waited for its API forever; --kube-port: it said only "fetch failed"
  it.each([
    [['--api-port', '6000', '--kube-port', '0'], '--api-port 6000', 'neither the dashboard nor the CLI could reach the API'],
    [['--api-port', '0', '--kube-port', '6665'], '--kube-port 6665', 'svc dev could not reach its own local cluster'],
  ])('a port browsers and fetch refuse (%j): said at once, before anything starts', async (args, flag, why) => {
    const { code, output } = await dev(args);
    expect(code).toBe(1);
    expect(output).toContain(`svc dev could not start: ${flag}: browsers and Node's fetch refuse to connect to that port (a "bad port" of the Fetch standard), so ${why}`);
    expect(output).not.toContain('local cluster at');
  }, 40_000);

  it('--kube-port taken: the same', async () => {
    const { code, output } = await dev(['--api-port', '0', '--kube-port', String(busyPort)]);
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(output).toContain(`port ${busyPort} on 127.0.0.1 is already in use (--kube-port)`);
    expect(output).not.toContain('svc dev is running.');
  }, 40_000);
});
