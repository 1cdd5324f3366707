// abortRun against a real HTTP server on loopback playing the session's daemon: its answer is
// untrusted, so only a few KiB of it are read.
import { afterEach, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Project } from '../../resources/index.js';
import { abortRun } from './relay.js';
import type { SessionService } from './service.js';

const project = { metadata: { name: 'web', namespace: 'default', uid: 'p1' } } as Project;
let server: http.Server | undefined;
afterEach(async () => { await new Promise((r) => (server ? server.close(r) : r(undefined))); server = undefined; });

async function daemon(answer: (res: http.ServerResponse) => void): Promise<SessionService> {
  server = http.createServer((req, res) => { req.resume(); answer(res); });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { proxyTarget: async () => ({ address, sandboxToken: 'sandbox-token-xyz', session: {} }) } as unknown as SessionService;
}

describe('abortRun', () => {
  it('passes the daemon\'s 409 on with its error, and a 200 as done', async () => {
    const conflict = await daemon((res) => res.writeHead(409, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'no run in progress' })));
    await expect(abortRun(conflict, project, 's1', 'u1')).rejects.toMatchObject({ status: 409, message: 'session s1 has no run to abort: no run in progress' });
    await new Promise((r) => server!.close(r));
    const ok = await daemon((res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"aborted":true}'));
    await expect(abortRun(ok, project, 's1', 'u1')).resolves.toBeUndefined();
  });

  it('stops reading an answer past 16 KiB: 64 MiB from a daemon is a 502, not 64 MiB in the API', async () => {
    const flood = await daemon((res) => {
      res.writeHead(409, { 'content-type': 'application/json' });
      const piece = Buffer.alloc(1024 * 1024, 0x61);
      let sent = 0;
      const more = () => { while (sent < 64 && res.write(piece)) sent++; if (sent < 64) res.once('drain', () => { sent++; more(); }); else res.end(); };
      res.on('error', () => undefined);
      more();
    });
    await expect(abortRun(flood, project, 's1', 'u1')).rejects.toMatchObject({ status: 502, message: 'the sandbox of session s1 did not answer (the answer is larger than 16384 bytes)' });
  });
});
