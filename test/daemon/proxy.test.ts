// svc-agent as a process with the fixture engine: authentication of the context header, the
// engine proxy, /proxy/{port} (HTTP, SSE, WebSocket), the root session, /svc/abort and /svc/env.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import net from 'node:net';
import { rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { encodeContextHeader } from '../../src/lib/context-header.js';
import {
  SESSION_ID, TOKEN, cleanupArtifacts, freePort, readCalls, sign, signed, startDaemon, tempDir, type DaemonProcess,
} from './harness.js';

type Echo = { url: string; method: string; body: string; headers: Record<string, string | undefined> };
type Env = Record<string, string | undefined>;
const json = async <T>(res: Response | Promise<Response>): Promise<T> => (await (await res).json()) as T;

let daemon: DaemonProcess;
let home: string;
let workspace: string;
let app: http.Server;
let appPort: number;
let wss: WebSocketServer;
/** paths of the test app's requests that ended before their answer did (the client went away) */
const cutShort: string[] = [];
/** MiB the test app's /big has handed to its socket so far */
let bigSent = 0;
const BIG_MIB = 64;

beforeAll(async () => {
  workspace = tempDir('ws');
  home = tempDir('home');
  // a test app inside the "sandbox": echoes requests, streams SSE, echoes WebSocket messages
  app = http.createServer((req, res) => {
    res.on('close', () => {
      if (!res.writableFinished) cutShort.push(req.url!);
    });
    if (req.url === '/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      const timer = setInterval(() => res.write('data: tick\n\n'), 50);
      req.on('close', () => clearInterval(timer));
      return;
    }
    if (req.url === '/slow') return; // never answers
    if (req.url === '/big') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(1024 * 1024, 'z');
      bigSent = 0;
      const more = () => {
        while (bigSent < BIG_MIB) {
          bigSent++;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end();
      };
      more();
      return;
    }
    if (req.url === '/cookies') {
      res.writeHead(201, 'Made', [['set-cookie', 'a=1'], ['set-cookie', 'b=2'], ['x-upstream', 'yes'], ['connection', 'x-private'], ['x-private', 'hop']].flat());
      res.end('made');
      return;
    }
    if (req.url === '/broken') {
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
      setTimeout(() => res.destroy(), 20);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ url: req.url, method: req.method, headers: req.headers, body: Buffer.concat(chunks).toString() }));
    });
  });
  wss = new WebSocketServer({ server: app });
  wss.on('connection', (socket) => socket.on('message', (data) => socket.send(`echo:${data.toString()}`)));
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  appPort = (app.address() as AddressInfo).port;
  daemon = await startDaemon({ workspace, home }, {
    // as in a jail or a Pod (its own network namespace): the test app plays a program of the sandbox
    SVC_SANDBOX_OWN_NETWORK: '1',
    SVC_BOOTSTRAP_ENGINE_SESSION: '1',
    SVC_AGENT_NAME: 'reviewer',
    SVC_ENGINE_MODEL: 'anthropic/claude-test',
    SVC_INITIAL_PROMPT: 'fix the flaky test',
    // as a project secret would: it overrides svc-agent's default for the engine
    OPENCODE_DISABLE_AUTOUPDATE: '0',
  });
  await daemon.waitFor((h) => h.engine.state === 'ready' && h.engine.initial_prompt_sent_at !== null, 'engine ready and prompt sent');
});

afterAll(async () => {
  await daemon?.stop();
  wss?.close();
  app?.closeAllConnections();
  app?.close();
  rmSync(workspace, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
  cleanupArtifacts();
});

describe('health', () => {
  it('reports daemon, engine and root session without any secret', async () => {
    const res = await fetch(`${daemon.url}/svc/health`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const health = JSON.parse(text);
    expect(health.status).toBe('ok');
    expect(health.daemon.state).toBe('ready');
    expect(health.engine).toMatchObject({ state: 'ready', restarts: 0, root_session_id: 'ses_fixture_1' });
    expect(text).not.toContain(TOKEN);
    const env = await json<Env>(fetch(`${daemon.url}/fixture/env`, signed()));
    expect(text).not.toContain(env.OPENCODE_SERVER_PASSWORD);
  });
});

describe('context header', () => {
  it('a signed request reaches the engine with the engine password, without the header', async () => {
    const res = await fetch(`${daemon.url}/global/health`, signed('engine'));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ healthy: true, version: 'fixture' });
    const echo = await json<Echo>(fetch(`${daemon.url}/fixture/echo`, signed('*', { headers: { authorization: 'Bearer user-supplied' } })));
    expect(echo.headers['x-svc-user-context']).toBeUndefined();
    expect(echo.headers.authorization).toMatch(/^Basic /);
  });

  it('an absolute-form request target is 400, never forwarded elsewhere', async () => {
    const socket = net.connect(daemon.port, '127.0.0.1');
    socket.write(`GET http://example.com/global/health HTTP/1.1\r\nHost: example.com\r\nX-Svc-User-Context: ${sign()}\r\nConnection: close\r\n\r\n`);
    let answer = '';
    for await (const chunk of socket) answer += String(chunk);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('the request target must be a path');
  });

  const refused: Array<[string, () => Record<string, string>]> = [
    ['no header', () => ({})],
    ['a tampered payload', () => {
      const [v, payload, sig] = sign().split('.');
      const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
      claims.sub = 'someone-else';
      return { 'x-svc-user-context': `${v}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${sig}` };
    }],
    ['a wrong key', () => ({ 'x-svc-user-context': sign('*', { key: 'another-token' }) })],
    ['an expired header', () => ({ 'x-svc-user-context': sign('*', { now: Math.floor(Date.now() / 1000) - 400, ttlSeconds: 60 }) })],
    ['a header from the future', () => ({ 'x-svc-user-context': sign('*', { now: Math.floor(Date.now() / 1000) + 120 }) })],
    ['a wrong session', () => ({ 'x-svc-user-context': sign('*', { sid: 'another-session' }) })],
    ['a lifetime over 300 s', () => {
      const now = Math.floor(Date.now() / 1000);
      return { 'x-svc-user-context': encodeContextHeader(TOKEN, { sub: 'u', sid: SESSION_ID, scope: '*', iat: now, exp: now + 301, nonce: 'n-long' }) };
    }],
    ['a proxy scope on an engine path', () => ({ 'x-svc-user-context': sign('proxy') })],
    ['garbage', () => ({ 'x-svc-user-context': 'v1.not-json.sig' })],
  ];
  it.each(refused)('refuses %s with 401 "unauthorized"', async (_name, headers) => {
    const res = await fetch(`${daemon.url}/global/health`, { headers: headers() });
    expect(res.status).toBe(401);
    expect(await res.text()).toBe('unauthorized');
  });

  it('accepts a header once: a replay is 401', async () => {
    const header = sign();
    expect((await fetch(`${daemon.url}/global/health`, { headers: { 'x-svc-user-context': header } })).status).toBe(200);
    const replay = await fetch(`${daemon.url}/global/health`, { headers: { 'x-svc-user-context': header } });
    expect(replay.status).toBe(401);
    expect(await replay.text()).toBe('unauthorized');
  });

  it('control routes take the header or the sandbox token as bearer', async () => {
    expect((await fetch(`${daemon.url}/svc/env`, { method: 'POST', body: '{"env":{}}' })).status).toBe(401);
    expect((await fetch(`${daemon.url}/svc/env`, { method: 'POST', body: '{"env":{}}', headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(`${daemon.url}/svc/env`, { method: 'POST', body: '{"env":{}}', headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    expect((await fetch(`${daemon.url}/svc/env`, signed('engine', { method: 'POST', body: '{"env":{}}' }))).status).toBe(200);
    expect((await fetch(`${daemon.url}/svc/env`, signed('proxy', { method: 'POST', body: '{"env":{}}' }))).status).toBe(401);
  });
});

describe('/proxy/{port} of a sandbox sharing the host network (svc dev --unsafe-no-isolation)', () => {
  it('reaches a port a program of the sandbox listens on, and refuses the host\'s ports (403) and free ones (502)', async () => {
    const ws = tempDir('ws-shared');
    const h = tempDir('home-shared');
    const ownPort = await freePort();
    const shared = await startDaemon({ workspace: ws, home: h }, { FIXTURE_ENGINE_APP_PORT: String(ownPort) });
    try {
      await shared.waitFor((x) => x.engine.state === 'ready', 'engine ready');
      // the engine's own second server: a program the sandbox runs
      const own = await fetch(`${shared.url}/proxy/${ownPort}/`, signed());
      expect(own.status).toBe(200);
      expect(await own.text()).toBe('app of the sandbox');
      // this test's server (the host's, like the local cluster or the API): refused, never reached
      const before = cutShort.length;
      const host = await fetch(`${shared.url}/proxy/${appPort}/api/items`, signed());
      expect(host.status).toBe(403);
      expect(await host.json()).toEqual({ error: `port ${appPort} is not a port of this sandbox: only programs the sandbox runs can be reached through /proxy` });
      expect(cutShort.length).toBe(before);
      const free = await freePort();
      expect((await fetch(`${shared.url}/proxy/${free}/`, signed())).status).toBe(502);
    } finally {
      await shared.stop();
      rmSync(ws, { recursive: true, force: true });
      rmSync(h, { recursive: true, force: true });
    }
  });
});

describe('/proxy/{port}', () => {
  it('forwards method, path, query and body to the port, without the context header', async () => {
    const res = await fetch(`${daemon.url}/proxy/${appPort}/api/items?x=1`, signed(`proxy:${appPort}`, { method: 'PUT', body: 'payload' }));
    expect(res.status).toBe(200);
    const echo = await json<Echo>(res);
    expect(echo).toMatchObject({ url: '/api/items?x=1', method: 'PUT', body: 'payload' });
    expect(echo.headers['x-svc-user-context']).toBeUndefined();
    const root = await json<Echo>(fetch(`${daemon.url}/proxy/${appPort}`, signed('proxy')));
    expect(root.url).toBe('/');
  });

  it('a proxy:<port> scope reaches only that port', async () => {
    const res = await fetch(`${daemon.url}/proxy/${appPort}/`, signed(`proxy:${appPort + 1 > 65535 ? 1 : appPort + 1}` as `proxy:${number}`));
    expect(res.status).toBe(401);
  });

  it("refuses the daemon's own port and the engine's (403), and a malformed port (400)", async () => {
    expect((await fetch(`${daemon.url}/proxy/${daemon.port}/svc/health`, signed())).status).toBe(403);
    const enginePort = Number((await json<Env>(fetch(`${daemon.url}/fixture/env`, signed()))).SVC_ENGINE_PORT);
    const viaProxy = await fetch(`${daemon.url}/proxy/${enginePort}/global/health`, signed());
    expect(viaProxy.status).toBe(403);
    expect(await viaProxy.json()).toEqual({ error: 'the engine is reached through its own paths, not /proxy' });
    for (const bad of ['0', '65536', '08080', 'abc', '80a', '-1']) {
      const res = await fetch(`${daemon.url}/proxy/${bad}/`, signed());
      expect(res.status, bad).toBe(400);
    }
  });

  it('streams SSE unbuffered', async () => {
    const res = await fetch(`${daemon.url}/proxy/${appPort}/events`, signed());
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = res.body!.getReader();
    const { value } = await reader.read(); // the upstream never ends: this only returns if unbuffered
    expect(Buffer.from(value!).toString()).toContain('data: first');
    await reader.cancel();
  });

  it('passes WebSocket upgrades (echo) and refuses unsigned ones', async () => {
    const ws = new WebSocket(`${daemon.url.replace('http', 'ws')}/proxy/${appPort}/socket`, { headers: { 'x-svc-user-context': sign() } });
    const reply = await new Promise<string>((resolve, reject) => {
      ws.on('open', () => ws.send('hello'));
      ws.on('message', (data) => resolve(data.toString()));
      ws.on('error', reject);
    });
    expect(reply).toBe('echo:hello');
    ws.close();
    const unsigned = new WebSocket(`${daemon.url.replace('http', 'ws')}/proxy/${appPort}/socket`);
    const status = await new Promise<number>((resolve) => {
      unsigned.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      unsigned.on('error', () => resolve(-1));
    });
    expect(status).toBe(401);
  });

  it('drops hop-by-hop headers both ways, sets Host to the target, and keeps repeated response headers', async () => {
    const sent = await rawRequest(`/proxy/${appPort}/h`, { connection: 'keep-alive, x-hop', 'x-hop': 'secret', 'proxy-connection': 'keep-alive', 'keep-alive': 'timeout=5', 'x-kept': 'kept' });
    const echo = JSON.parse(sent.body) as Echo;
    expect(echo.headers['x-hop']).toBeUndefined();
    expect(echo.headers['proxy-connection']).toBeUndefined();
    expect(echo.headers['keep-alive']).toBeUndefined();
    expect(echo.headers['x-kept']).toBe('kept');
    expect(echo.headers.host).toBe(`127.0.0.1:${appPort}`);

    const res = await rawRequest(`/proxy/${appPort}/cookies`);
    expect(res.status).toBe(201);
    expect(res.statusMessage).toBe('Made');
    expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(res.headers['x-upstream']).toBe('yes');
    expect(res.headers['x-private']).toBeUndefined();
    expect(res.body).toBe('made');
  });

  it('streams a chunked 8 MiB upload through intact', async () => {
    const size = 8 * 1024 * 1024;
    const payload = Buffer.alloc(size, 'abcdefghij');
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < size; at += 1024 * 1024) controller.enqueue(payload.subarray(at, at + 1024 * 1024));
        controller.close();
      },
    });
    const res = await fetch(`${daemon.url}/proxy/${appPort}/upload`, { ...signed('proxy', { method: 'POST', body }), duplex: 'half' } as RequestInit);
    const echo = await json<Echo>(res);
    expect(echo.headers['transfer-encoding']).toBe('chunked');
    expect(echo.body.length).toBe(size);
    expect(echo.body === payload.toString()).toBe(true);
  });

  it('a download waits for a reader that pauses (no buffering ahead), then arrives whole; HEAD has no body', async () => {
    const res = await fetch(`${daemon.url}/proxy/${appPort}/big`, signed('proxy'));
    const reader = res.body!.getReader();
    let size = (await reader.read()).value!.length;
    await new Promise((r) => setTimeout(r, 500));
    // socket buffers on both hops hold a few MiB; a proxy without backpressure would have taken all 64
    expect(bigSent).toBeLessThan(BIG_MIB / 2);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
    }
    expect(size).toBe(BIG_MIB * 1024 * 1024);
    const head = await rawRequest(`/proxy/${appPort}/cookies`, {}, 'HEAD');
    expect(head.status).toBe(201);
    expect(head.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(head.body).toBe('');
  });

  it('a client that goes away ends the upstream request: an SSE stream, and one still waiting for its answer', async () => {
    const controller = new AbortController();
    const res = await fetch(`${daemon.url}/proxy/${appPort}/events`, signed('proxy', { signal: controller.signal }));
    await res.body!.getReader().read();
    controller.abort();
    const waiting = new AbortController();
    const slow = fetch(`${daemon.url}/proxy/${appPort}/slow`, signed('proxy', { signal: waiting.signal })).catch(() => 'aborted');
    await new Promise((r) => setTimeout(r, 100));
    waiting.abort();
    expect(await slow).toBe('aborted');
    await expect.poll(() => [...new Set(cutShort)].filter((p) => p === '/events' || p === '/slow').sort(), { timeout: 5000 }).toEqual(['/events', '/slow']);
  });

  it('an upstream that dies mid-answer cuts the client connection instead of hanging', async () => {
    const res = await fetch(`${daemon.url}/proxy/${appPort}/broken`, signed('proxy'));
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
  });

  it('an unreachable port is 502', async () => {
    const res = await fetch(`${daemon.url}/proxy/1/`, signed());
    expect(res.status).toBe(502);
  });
});

describe('engine session control', () => {
  it('created the root session and sent the initial prompt once, with the agent and model', () => {
    const calls = readCalls(home);
    expect(calls.filter((c) => c.method === 'POST' && c.path === '/session')).toHaveLength(1);
    const prompts = calls.filter((c) => c.path === '/session/ses_fixture_1/prompt_async');
    expect(prompts).toHaveLength(1);
    expect(prompts[0]!.body).toEqual({
      agent: 'reviewer',
      model: { providerID: 'anthropic', modelID: 'claude-test' },
      parts: [{ type: 'text', text: 'fix the flaky test' }],
    });
  });

  it('reports the run status and /svc/abort reaches the engine', async () => {
    expect((await daemon.health()).engine.run).toEqual({ type: 'busy' });
    const res = await fetch(`${daemon.url}/svc/abort`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ aborted: true, session_id: 'ses_fixture_1' });
    expect(readCalls(home).filter((c) => c.path === '/session/ses_fixture_1/abort')).toHaveLength(1);
    expect((await daemon.health()).engine.run).toEqual({ type: 'idle' });
  });

  it('counts authenticated requests as activity', async () => {
    const before = (await daemon.health()).last_activity_at;
    await new Promise((r) => setTimeout(r, 5));
    await fetch(`${daemon.url}/global/health`, signed());
    const after = (await daemon.health()).last_activity_at;
    expect(after).not.toBeNull();
    expect(after! > (before ?? '')).toBe(true);
  });
});

describe('/svc/env', () => {
  const post = (body: string) => fetch(`${daemon.url}/svc/env`, { method: 'POST', body, headers: { authorization: `Bearer ${TOKEN}` } });

  it('refuses SVC_* names, bad names and reserved names, changing nothing', async () => {
    const blocked = [
      { OPENCODE_SERVER_PASSWORD: 'x' }, { OPENCODE_DISABLE_SHARE: '0' }, { opencode_config: 'x' }, { LD_PRELOAD: '/tmp/x.so' },
      { LD_LIBRARY_PATH: '/tmp' }, { NODE_OPTIONS: '--require /tmp/x.js' }, { BUN_INSTALL: '/tmp' }, { ENGINE_CONFIG_DIR: '/' },
    ];
    for (const env of [{ SVC_API_URL: 'x' }, { svc_token: 'x' }, { '1BAD': 'x' }, { 'A-B': 'x' }, { HOME: '/' }, ...blocked, { OK_NAME: 'x', SVC_X: 'y' }, { N: 3 }]) {
      const res = await post(JSON.stringify({ env }));
      expect(res.status, JSON.stringify(env)).toBe(400);
      expect((await json<{ issues: string[] }>(res)).issues.length).toBeGreaterThan(0);
    }
    for (const raw of ['{"env": {"__proto__": "x"}}', '{"env": {"constructor": "x"}}', '{"env": {"__defineGetter__": "x"}}']) {
      expect((await post(raw)).status, raw).toBe(400);
    }
    expect((await post('not json')).status).toBe(400);
    expect((await post('{"env": []}')).status).toBe(400);
    expect((await daemon.health()).runtime_env_names).toEqual([]);
  });

  it('sets names for the next engine start, not the running one', async () => {
    const res = await post(JSON.stringify({ env: { FEATURE_FLAG: 'on', OTHER: 'x' } }));
    expect(res.status).toBe(200);
    expect((await json<{ names: string[] }>(res)).names).toEqual(['FEATURE_FLAG', 'OTHER']);
    expect((await post(JSON.stringify({ env: { OTHER: null } }))).status).toBe(200);
    expect((await daemon.health()).runtime_env_names).toEqual(['FEATURE_FLAG']);
    const env = await json<Env>(fetch(`${daemon.url}/fixture/env`, signed()));
    expect(env.FEATURE_FLAG).toBeUndefined(); // the running engine is untouched
  });

  it('the engine sees the SPEC §2.6 sandbox token, and gets its config dir and home', async () => {
    const env = await json<Env>(fetch(`${daemon.url}/fixture/env`, signed()));
    expect(env.SVC_SANDBOX_TOKEN).toBe(TOKEN);
    expect(env.SVC_ENGINE_COMMAND).toBeUndefined();
    expect(env.SVC_SESSION_ID).toBe(SESSION_ID);
    expect(env.HOME).toBe(home);
    expect(env.OPENCODE_CONFIG_DIR).toBe(`${workspace}/.svc/engine`);
    expect(env.ENGINE_CONFIG_DIR).toBe(env.OPENCODE_CONFIG_DIR);
    // offline by default (no models.dev fetch: seconds of a start in a sandbox without internet), unless the environment says otherwise
    expect(env.OPENCODE_DISABLE_MODELS_FETCH).toBe('1');
    expect(env.OPENCODE_DISABLE_AUTOUPDATE).toBe('0');
  });
});

/** One request over a raw HTTP/1.1 client, to see the status message and repeated headers as sent. */
function rawRequest(path: string, headers: http.OutgoingHttpHeaders = {}, method = 'GET'): Promise<{ status: number; statusMessage: string; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${daemon.url}${path}`, { method, headers: { ...headers, 'x-svc-user-context': sign('proxy') } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode!, statusMessage: res.statusMessage!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
