import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { cutStalledBodies, stallServerOptions, stallTimeoutMs, STALL_TIMEOUT_MS } from './http-stall.js';

const STALL = 400;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let server: http.Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server that reads bodies to the end (answering their size) and streams /events without end. */
async function start(): Promise<number> {
  server = http.createServer(stallServerOptions(STALL), (req, res) => {
    if (req.url === '/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: hello\n\n');
      return;
    }
    let size = 0;
    req.on('data', (c: Buffer) => { size += c.length; });
    req.on('end', () => res.end(String(size)));
  });
  cutStalledBodies(server, STALL);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A raw connection: what it received, and whether the server closed it. */
function connect(port: number): { socket: net.Socket; received: () => string; closed: Promise<void> } {
  const socket = net.connect(port, '127.0.0.1');
  let text = '';
  socket.on('data', (c: Buffer) => { text += c.toString(); });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, received: () => text, closed };
}

describe('stalled requests', () => {
  it('cuts a request whose headers stall (408)', async () => {
    const port = await start();
    const c = connect(port);
    c.socket.write('POST /upload HTTP/1.1\r\nHost: x\r\n');
    await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it('closes a connection that sends nothing, with 408', async () => {
    const port = await start();
    const c = connect(port);
    await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it('cuts a request whose body stalls after the headers (408 with the reason)', async () => {
    const port = await start();
    const c = connect(port);
    c.socket.write('POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nhalf');
    await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 408/);
    expect(c.received()).toContain('the request body stalled');
  });

  it('keeps a slow body that keeps progressing, longer than the stall limit in total', async () => {
    const port = await start();
    const c = connect(port);
    c.socket.write('POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\n');
    for (let i = 0; i < 8; i++) {
      await sleep(STALL / 3);
      c.socket.write('x');
    }
    await sleep(100);
    expect(c.received()).toMatch(/^HTTP\/1\.1 200[\s\S]*\r\n\r\n8$/);
    c.socket.destroy();
  });

  it('keeps a streaming answer that is idle for longer than the stall limit (a watch, SSE)', async () => {
    const port = await start();
    const c = connect(port);
    c.socket.write('GET /events HTTP/1.1\r\nHost: x\r\n\r\n');
    await sleep(STALL * 3);
    expect(c.socket.destroyed).toBe(false);
    expect(c.received()).toContain('data: hello');
    c.socket.destroy();
  });

  it('60 s by default, SVC_HTTP_STALL_TIMEOUT_MS overrides it', () => {
    expect(STALL_TIMEOUT_MS).toBe(60_000);
    expect(stallTimeoutMs({})).toBe(60_000);
    expect(stallTimeoutMs({ SVC_HTTP_STALL_TIMEOUT_MS: '1500' })).toBe(1500);
    expect(stallTimeoutMs({ SVC_HTTP_STALL_TIMEOUT_MS: 'soon' })).toBe(60_000);
    expect(stallServerOptions(60_000)).toMatchObject({ headersTimeout: 60_000, requestTimeout: 0 });
  });
});
