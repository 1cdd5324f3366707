// `kill -9` of svc dev's own process (not its group): its API and operator go with it at once,
// so that svc dev started again on the same data directory and the same API port runs (before,
// the orphaned API held the port until a log line met the closed pipe, seconds later). While it
// ran, a second svc dev on its data directory was refused (before, it ran a second cluster on the
// same journal, and its stop stopped the first one's sandboxes).
import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { REPO_ROOT, removeDevDir, startDev, type DevInstance } from '../helpers/dev.js';
import { run, waitFor } from './util.js';

let first: DevInstance | undefined;
let second: DevInstance | undefined;

afterAll(async () => {
  await second?.stop();
  if (first) removeDevDir(first.dataDir);
});

/** The children of `pid` running one of svc's composition roots. */
function roots(pid: number): number[] {
  return readdirSync('/proc').filter((e) => /^\d+$/.test(e)).filter((child) => {
    try {
      const ppid = Number(readFileSync(`/proc/${child}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);
      return ppid === pid && /dist\/src\/main\/(api|operator)\.js/.test(readFileSync(`/proc/${child}/cmdline`, 'utf8'));
    } catch { return false; }
  }).map(Number);
}

const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };

async function freePort(): Promise<number> {
  const server = http.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

describe('svc dev killed with SIGKILL', () => {
  it('a second svc dev on its data directory is refused; killed, it takes its API and operator with it; started again on the same port, it runs', async () => {
    const port = String(await freePort());
    first = await startDev({ args: ['--api-port', port] });
    const children = roots(first.process.pid!);
    expect(children).toHaveLength(2);
    const envFile = readFileSync(path.join(first.dataDir, 'env'), 'utf8');
    const again = await run(process.execPath, [path.join(REPO_ROOT, 'bin/svc.js'), 'dev', '--data-dir', first.dataDir, '--api-port', '0', '--kube-port', '0']);
    expect(again.code, again.stdout + again.stderr).toBe(1);
    expect(again.stderr).toContain(`svc dev could not start: svc dev is already running on ${first.dataDir} (pid ${first.process.pid}): stop it first, or use another --data-dir`);
    expect(again.stdout).not.toContain('local cluster at');
    expect(readFileSync(path.join(first.dataDir, 'env'), 'utf8')).toBe(envFile);
    expect((await fetch(`${first.apiUrl.replace(/\/v1$/, '')}/readyz`)).status).toBe(200);
    expect(roots(first.process.pid!)).toEqual(children);
    process.kill(first.process.pid!, 'SIGKILL');
    await first.stop(); // (waits for its exit)
    // gone as soon as their pipe closes: well before an orphan's next log line
    await waitFor('the API and the operator gone', async () => children.every((pid) => !alive(pid)), 3_000);
    second = await startDev({ dataDir: first.dataDir, args: ['--api-port', port] });
    expect(second.apiUrl).toBe(`http://127.0.0.1:${port}/v1`);
    expect((await fetch(`${second.apiUrl.replace(/\/v1$/, '')}/readyz`)).status).toBe(200);
  }, 120_000);
});
