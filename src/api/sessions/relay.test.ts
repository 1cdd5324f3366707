// abortRun and relayToDaemon against a real server on loopback playing the session's daemon: its
// answer is untrusted (only a few KiB of it are read; what cannot be relayed is a 502; it sets
// nothing on the API's origin).
import { afterEach, describe, expect, it } from 'vitest';
import express from 'express';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { Project } from '../../resources/index.js';
import { abortRun, relayToDaemon } from './relay.js';
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

describe('relayToDaemon', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => { for (const close of closers.splice(0)) await close(); });

  /** What a user gets through the relay when the daemon answers `raw` bytes. */
  async function relayed(raw: string): Promise<Response> {
    const fake = net.createServer((socket) => { socket.once('data', () => socket.end(raw)); socket.on('error', () => undefined); });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    const address = `127.0.0.1:${(fake.address() as AddressInfo).port}`;
    const service = { proxyTarget: async () => ({ address, sandboxToken: 'sandbox-token-xyz', session: {} }) } as unknown as SessionService;
    const app = express();
    app.get('/events', (req, res, next) => {
      relayToDaemon(service, req, res, { project, sessionId: 's1', userId: 'u1', scope: 'engine', path: '/event', body: false }).catch(next);
    });
    const api = app.listen(0, '127.0.0.1');
    await new Promise((r) => api.once('listening', r));
    closers.push(() => new Promise<void>((r) => { fake.close(); api.close(() => r()); api.closeAllConnections(); }));
    return fetch(`http://127.0.0.1:${(api.address() as AddressInfo).port}/events`);
  }

  it('a status line Node cannot send (099) is a 502, and the API stays up (it threw, uncaught, and ended the process)', async () => {
    for (const status of ['099', '000', '101', '999']) {
      const res = await relayed(`HTTP/1.1 ${status} X\r\ncontent-length: 2\r\n\r\nhi`);
      expect(res.status, status).toBe(502);
      expect((await res.json() as { error: string }).error).toBe(`the sandbox of session s1 answered with status ${Number(status)}, which is not relayed`);
    }
  });

  it("keeps the engine's quiet event stream open with comments between events; a port's stream is relayed as it is", async () => {
    const service = await daemon((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"type":"server.connected"}\n\n');
      setTimeout(() => res.end('data: {"type":"session.idle"}\n\n'), 300);
    });
    const app = express();
    app.get('/:scope', (req, res, next) => {
      const scope = req.params.scope === 'engine' ? 'engine' : 'proxy:3000';
      relayToDaemon(service, req, res, { project, sessionId: 's1', userId: 'u1', scope, path: '/event', body: false, keepaliveMs: 40 }).catch(next);
    });
    const api = app.listen(0, '127.0.0.1');
    await new Promise((r) => api.once('listening', r));
    closers.push(() => new Promise<void>((r) => { api.close(() => r()); api.closeAllConnections(); }));
    const url = (scope: string) => `http://127.0.0.1:${(api.address() as AddressInfo).port}/${scope}`;
    expect(await (await fetch(url('engine'))).text()).toMatch(/^data: \{"type":"server.connected"\}\n\n(: keepalive\n\n)+data: \{"type":"session.idle"\}\n\n$/);
    expect(await (await fetch(url('proxy'))).text()).toBe('data: {"type":"server.connected"}\n\ndata: {"type":"session.idle"}\n\n');
  });

  it('relays the answer without its cookies, as nothing a browser runs or sniffs', async () => {
    const res = await relayed([
      'HTTP/1.1 200 OK', 'content-type: text/html', 'set-cookie: a=1; Path=/; Max-Age=99999999', 'set-cookie: b=2', 'x-engine: kept',
      'content-length: 22', '', '<script>x()</script>\r\n',
    ].join('\r\n'));
    expect(res.status).toBe(200);
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(res.headers.get('x-engine')).toBe('kept');
    expect(res.headers.get('content-security-policy')).toBe("sandbox; default-src 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.text()).toBe('<script>x()</script>\r\n');
  });
});
