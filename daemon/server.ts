// The daemon's HTTP server on SVC_SERVICE_PORT (SPEC §4.5): /svc/* control, /proxy/{port}/* to a
// port inside the sandbox, anything else to the engine. Everything outside /svc/* needs the signed
// context header; the header is stripped before forwarding. Proxied bodies, SSE and WebSocket
// upgrades stream through http-proxy-middleware unbuffered.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import { createProxyMiddleware, proxyEventsPlugin, type RequestHandler } from 'http-proxy-middleware';
import type { RequestAuth } from './auth.js';

export interface ControlResult { status: number; body: unknown }

/** What the server needs from the rest of the daemon. */
export interface DaemonHandlers {
  health(): Promise<unknown>;
  refresh(): Promise<ControlResult>;
  abort(): Promise<ControlResult>;
  setEnv(body: unknown): ControlResult;
  engineState(): string;
  engineUrl: string;
  engineAuthorization: string;
  /** the port this server listens on (refused as a proxy target) */
  ownPort(): number;
  touch(): void;
}

const MAX_CONTROL_BODY = 64 * 1024;
const PROXY_PATH = /^\/proxy\/([^/?#]*)(.*)$/;
const PORT = /^[1-9][0-9]{0,4}$/;
const TARGET_PORT = Symbol('svc-agent target port');

type ProxiedRequest = IncomingMessage & { [TARGET_PORT]?: number };

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}

function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Refuses an upgrade on the raw socket. */
function refuseSocket(socket: Duplex, status: number, text: string): void {
  const reason = http.STATUS_CODES[status] ?? 'Error';
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_CONTROL_BODY) throw Object.assign(new Error('request body too large'), { status: 413 });
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw Object.assign(new Error('request body is not valid JSON'), { status: 400 });
  }
}

type Route =
  | { kind: 'control'; name: string }
  | { kind: 'proxy'; port: number | null; rest: string }
  | { kind: 'engine' };

function route(url: string): Route {
  if (url === '/svc' || url.startsWith('/svc/') || url.startsWith('/svc?')) {
    return { kind: 'control', name: url.slice(5).split('?')[0]! };
  }
  const m = PROXY_PATH.exec(url);
  if (m && (m[2] === '' || m[2]!.startsWith('/') || m[2]!.startsWith('?'))) {
    const port = PORT.test(m[1]!) && Number(m[1]) <= 65535 ? Number(m[1]) : null;
    const rest = m[2]!.startsWith('/') ? m[2]! : `/${m[2]}`;
    return { kind: 'proxy', port, rest };
  }
  return { kind: 'engine' };
}

export function createDaemonServer(auth: RequestAuth, handlers: DaemonHandlers): http.Server {
  const proxyError = (_err: Error, _req: IncomingMessage, res: ServerResponse | Duplex) => {
    if ('writeHead' in res) {
      if (!res.headersSent) sendJson(res, 502, { error: 'upstream unreachable' });
      else res.destroy();
    } else res.destroy();
  };
  // keep-alive to upstreams: a new loopback connection per request costs more than the proxying
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const portProxy: RequestHandler = createProxyMiddleware({
    agent,
    router: (req) => `http://127.0.0.1:${(req as ProxiedRequest)[TARGET_PORT]}`,
    changeOrigin: true,
    // only the plugin that wires `on`: no logging of URLs, our own error answer
    ejectPlugins: true,
    plugins: [proxyEventsPlugin],
    on: { error: proxyError },
  });
  const setEngineAuth = (proxyReq: http.ClientRequest) => proxyReq.setHeader('authorization', handlers.engineAuthorization);
  const engineProxy: RequestHandler = createProxyMiddleware({
    agent,
    target: handlers.engineUrl,
    changeOrigin: true,
    ejectPlugins: true,
    plugins: [proxyEventsPlugin],
    on: { error: proxyError, proxyReq: setEngineAuth, proxyReqWs: setEngineAuth },
  });

  async function control(name: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (name === 'health') {
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: 'use GET' });
      return sendJson(res, 200, await handlers.health());
    }
    if (!['refresh', 'abort', 'env'].includes(name)) return sendJson(res, 404, { error: 'not found' });
    if (!auth.control(req)) return sendText(res, 401, 'unauthorized');
    handlers.touch();
    if (req.method !== 'POST') return sendJson(res, 405, { error: 'use POST' });
    let result: ControlResult;
    if (name === 'env') result = handlers.setEnv(await readJson(req));
    else if (name === 'refresh') result = await handlers.refresh();
    else result = await handlers.abort();
    sendJson(res, result.status, result.body);
  }

  /** Authenticates and prepares a non-control request; returns the proxy to use or answers itself. */
  function prepare(req: IncomingMessage, r: Exclude<Route, { kind: 'control' }>, refuse: (status: number, text: string, json?: unknown) => void): RequestHandler | null {
    const target = r.kind === 'proxy' ? { kind: 'proxy' as const, port: r.port ?? -1 } : { kind: 'engine' as const };
    if (!auth.context(req, target)) {
      refuse(401, 'unauthorized');
      return null;
    }
    handlers.touch();
    if (r.kind === 'proxy') {
      if (r.port === null) {
        refuse(400, '', { error: 'port must be a decimal number in 1..65535' });
        return null;
      }
      if (r.port === handlers.ownPort()) {
        refuse(403, '', { error: "the daemon's own port cannot be proxied" });
        return null;
      }
      (req as ProxiedRequest)[TARGET_PORT] = r.port;
      req.url = r.rest;
      return portProxy;
    }
    const state = handlers.engineState();
    if (state !== 'ready') {
      refuse(503, '', { error: `engine is ${state === 'booting' || state === 'restarting' ? 'booting' : state}`, engine_state: state });
      return null;
    }
    delete req.headers.authorization;
    return engineProxy;
  }

  const server = http.createServer((req, res) => {
    const r = route(req.url ?? '/');
    if (r.kind === 'control') {
      control(r.name, req, res).catch((err: Error & { status?: number }) => {
        if (!res.headersSent) sendJson(res, err.status ?? 500, { error: err.status ? err.message : 'internal error' });
        if (!err.status) process.stderr.write(`svc-agent: ${err.stack ?? err.message}\n`);
      });
      return;
    }
    const proxy = prepare(req, r, (status, text, json) => (json === undefined ? sendText(res, status, text) : sendJson(res, status, json)));
    if (proxy) void proxy(req, res);
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const r = route(req.url ?? '/');
    if (r.kind === 'control') return refuseSocket(socket, 404, 'not found');
    const proxy = prepare(req, r, (status, text, json) => refuseSocket(socket, status, json === undefined ? text : JSON.stringify(json)));
    if (proxy) proxy.upgrade(req, socket as Socket, head);
  });
  return server;
}
