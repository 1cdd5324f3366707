// `svc sessions logs` when the API cannot be reached, refuses, or its stream is cut off midway:
// a line saying so and exit 1, never a stack trace; a stream that ends with its session says how
// it ended. Loopback servers play the API.
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SVC_BIN } from './run-cli.js';

const PROJECT = '6372d770-47f0-41fb-b668-84a73d370054';
const SESSION = 'a402e77f-9371-4ce9-aae3-792e37f17fc2';
let server: http.Server | null = null;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = null;
});

/** An API on loopback answering the session's route with `session` (else 404) and the events route with `answer`; its base URL. */
async function fakeApi(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void, session?: object): Promise<string> {
  server = http.createServer((req, res) => {
    if (req.url !== `/v1/projects/${PROJECT}/sessions/${SESSION}`) return answer(req, res);
    res.writeHead(session ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(session ? { session } : { error: 'not found' }));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

function logs(apiUrl: string, ...extra: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [SVC_BIN, 'sessions', 'logs', SESSION, '--project', PROJECT, ...extra], {
    env: { ...process.env, SVC_API_URL: apiUrl, SVC_CLI_TOKEN: 'svc_test', NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
  child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

describe('svc sessions logs, when things go wrong', () => {
  it('the API cannot be reached: says where it looked, exit 1', async () => {
    const url = await fakeApi(() => undefined);
    server!.close(); // the port is free again: the connection is refused
    const out = await logs(url);
    expect(out.stderr).toBe(`svc: cannot reach the svc API at ${url}: ECONNREFUSED\n`);
    expect(out.code).toBe(1);
  });

  it('SVC_API_URL set to the origin (the address svc dev prints for the dashboard) reaches the REST root; no scheme says so', async () => {
    const url = await fakeApi((req, res) => {
      res.writeHead(req.url === `/v1/projects/${PROJECT}/sessions/${SESSION}/events` ? 409 : 404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: req.url?.startsWith('/v1/') ? 'the session is not running' : `no route for GET ${req.url}` }));
    });
    expect((await logs(url.replace(/\/v1$/, '/'))).stderr).toBe('svc: the session is not running (HTTP 409)\n');
    const bare = await logs(url.replace(/^http:\/\//, ''));
    expect(bare.stderr).toBe(`svc: SVC_API_URL ${JSON.stringify(url.replace(/^http:\/\//, ''))} is not an http(s) URL (expected e.g. http://127.0.0.1:8080/v1)\n`);
    expect(bare.code).toBe(1);
  });

  it("the API's refusal: its message and code, exit 1", async () => {
    const url = await fakeApi((req, res) => {
      expect(req.url).toBe(`/v1/projects/${PROJECT}/sessions/${SESSION}/events`);
      res.writeHead(409, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'the session is not running', code: 'SESSION_NOT_RUNNING' }));
    });
    const out = await logs(url);
    expect(out.stderr).toBe('svc: the session is not running (SESSION_NOT_RUNNING)\n');
    expect(out.code).toBe(1);
  });

  it('the stream cut off midway: the events before it, then a line saying so, exit 1', async () => {
    const url = await fakeApi((req, res) => {
      expect(req.headers.accept).toBe('text/event-stream');
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"type":"server.connected","properties":{}}\n\n', () => setTimeout(() => res.socket?.destroy(), 50));
    }, { id: SESSION, status: 'running', desired_state: 'running', reason: null, message: null }); // its sandbox went away under it
    const out = await logs(url, '--json');
    expect(out.stdout).toBe('{"type":"server.connected","properties":{}}\n');
    expect(out.stderr).toMatch(/^svc: the event stream was cut off: \S+; run svc sessions show to see the session, then follow it again\n$/);
    expect(out.code).toBe(1);
  });

  it('the stream cut off while a prompt wakes a stopped session: not its end, follow it again (exit 1)', async () => {
    const url = await fakeApi((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"type":"server.connected","properties":{}}\n\n', () => setTimeout(() => res.socket?.destroy(), 50));
    }, { id: SESSION, status: 'stopped', desired_state: 'running', reason: 'Stopped', message: 'stopped; a prompt wakes it on the same branch' });
    const out = await logs(url);
    expect(out.stderr).toMatch(/^svc: the event stream was cut off: \S+; run svc sessions show to see the session, then follow it again\n$/);
    expect(out.code).toBe(1);
  });

  it.each([
    { status: 'stopped', desired: 'stopped', reason: 'Stopped', message: 'stopped; a prompt wakes it on the same branch', said: 'stopped (Stopped): stopped; a prompt wakes it on the same branch', code: 0 },
    { status: 'running', desired: 'stopped', reason: null, message: null, said: 'is being stopped', code: 0 },
    { status: 'failed', desired: 'running', reason: 'EngineFailed', message: 'the engine exited with code 1', said: 'failed (EngineFailed): the engine exited with code 1', code: 1 },
  ])('the stream cut off because the session ended ($said): says so, exit $code', async ({ status, desired, reason, message, said, code }) => {
    const url = await fakeApi((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"type":"server.connected","properties":{}}\n\n', () => setTimeout(() => res.socket?.destroy(), 50));
    }, { id: SESSION, status, desired_state: desired, reason, message });
    const out = await logs(url, '--json');
    expect(out.stdout).toBe('{"type":"server.connected","properties":{}}\n');
    expect(out.stderr).toBe(`svc: session ${SESSION} ${said}\n`);
    expect(out.code).toBe(code);
  });

  it('a session still starting (503): says once what it waits for, asks again, then follows', async () => {
    let asked = 0;
    const url = await fakeApi((_req, res) => {
      if (++asked <= 2) {
        res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `session ${SESSION} is provisioning: its sandbox is not ready yet; try again shortly` }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: {"type":"server.connected","properties":{}}\n\n');
    });
    const out = await logs(url, '--json');
    expect(asked).toBe(3);
    expect(out.stderr).toBe(`svc: waiting: session ${SESSION} is provisioning: its sandbox is not ready yet; try again shortly\n`);
    expect(out.stdout).toBe('{"type":"server.connected","properties":{}}\n');
    expect(out.code).toBe(0);
  });

  it('a session that fails while it is waited for: the refusal ends the wait, exit 1', async () => {
    let asked = 0;
    const url = await fakeApi((_req, res) => {
      const failed = ++asked > 1;
      res.writeHead(failed ? 409 : 503, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: failed ? `session ${SESSION} is failed; start a new session` : `session ${SESSION} is provisioning: its sandbox is not ready yet; try again shortly` }));
    });
    const out = await logs(url);
    expect(out.stderr).toMatch(new RegExp(`^svc: waiting: .*\nsvc: session ${SESSION} is failed; start a new session \\(HTTP 409\\)\n$`));
    expect(out.code).toBe(1);
  });

  it('the stream ended by the server: exit 0', async () => {
    const url = await fakeApi((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: {"type":"server.connected","properties":{}}\n\n');
    });
    const out = await logs(url);
    expect(out.stdout).toMatch(/^\d\d:\d\d:\d\d server\.connected\n$/);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
  });
});
