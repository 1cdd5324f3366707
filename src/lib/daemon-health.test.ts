// Reading a daemon's health from a real HTTP server on loopback: the sandbox answering is
// untrusted, so an answer past DAEMON_HEALTH_MAX_BYTES is not read (null), however it goes on.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DAEMON_HEALTH_MAX_BYTES, readDaemonHealth } from './daemon-health.js';
import { httpCall } from './http-call.js';

const health = {
  status: 'ok',
  daemon: { state: 'ready', error: null },
  engine: { state: 'ready', restarts: 0, last_error: null, root_session_id: 'ses_1', initial_prompt_sent_at: null, run: null },
  last_activity_at: null,
};

let server: http.Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A server answering `body`, or streaming without end when `body` is null. */
async function serve(body: string | null): Promise<string> {
  server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (body !== null) return res.end(body);
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const pump = () => { while (res.write(chunk)); };
    res.on('drain', pump);
    pump();
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('readDaemonHealth', () => {
  it('reads a health answer', async () => {
    expect(await readDaemonHealth(await serve(JSON.stringify(health)))).toMatchObject(health);
  });

  it('a valid answer past the bound is not read', async () => {
    const padded = JSON.stringify({ ...health, daemon: { ...health.daemon, error: 'e'.repeat(DAEMON_HEALTH_MAX_BYTES) } });
    expect(await readDaemonHealth(await serve(padded))).toBeNull();
  });

  it('an answer that never ends is cut at the bound, well before the timeout', async () => {
    const started = Date.now();
    await expect(httpCall(`http://${await serve(null)}/svc/health`, { timeoutMs: 30_000, maxBytes: DAEMON_HEALTH_MAX_BYTES })).rejects.toThrow(`the answer is larger than ${DAEMON_HEALTH_MAX_BYTES} bytes`);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(await readDaemonHealth(`127.0.0.1:${(server!.address() as AddressInfo).port}`)).toBeNull();
  });
});
