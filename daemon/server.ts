// The daemon's HTTP server on SVC_SERVICE_PORT (SPEC §4.5): /svc/* control, /proxy/{port}/* to a
// port inside the sandbox (own-ports.ts: never the host's), anything else to the engine. Everything outside /svc/* needs the signed
// context header; the header is stripped before forwarding. Plain requests go through the
// Forwarder (undici), WebSocket upgrades through http-proxy-middleware; both stream unbuffered.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import type * as ProxyMiddleware from 'http-proxy-middleware';
import type { RequestAuth } from './auth.js';
import { Forwarder } from './forward.js';
import { proxyMiddlewareLib } from './proxy-libs.js';
import { PortGuard } from './own-ports.js';
import { CONTEXT_HEADER } from '../src/lib/context-header.js';
import { cutStalledBodies, stallServerOptions } from '../src/lib/http-stall.js';

export interface ControlResult { status: number; body: unknown }

/** What the server needs from the rest of the daemon. */
export interface DaemonHandlers {
  health(): Promise<unknown>;
  refresh(): Promise<ControlResult>;
  abort(): Promise<ControlResult>;
  setEnv(body: unknown): ControlResult;
  engineState(): string;
  enginePort: number;
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

/** Where an authenticated request goes: the engine (its password added) or a port in the sandbox. */
interface Target { engine: boolean; port: number; path: string }

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
  const unreachable = (res: ServerResponse) => sendJson(res, 502, { error: 'upstream unreachable' });
  const forwarder = new Forwarder(unreachable);
  const engineHeaders = { authorization: handlers.engineAuthorization };
  const dropContext = new Set([CONTEXT_HEADER]);
  const upgradeError = (_err: Error, _req: IncomingMessage, res: ServerResponse | Duplex) => res.destroy();
  /** The upgrade proxies, made at the first upgrade (http-proxy-middleware loads then: proxy-libs.ts). */
  let upgraders: { port: ProxyMiddleware.RequestHandler; engine: ProxyMiddleware.RequestHandler } | undefined;
  const upgradersOf = ({ createProxyMiddleware, proxyEventsPlugin }: typeof ProxyMiddleware) => {
    const upgradeOptions = {
      changeOrigin: true,
      // only the plugin that wires `on`: no logging of URLs, our own error handling
      ejectPlugins: true,
      plugins: [proxyEventsPlugin],
    };
    upgraders ??= {
      port: createProxyMiddleware({
        ...upgradeOptions,
        router: (req) => `http://127.0.0.1:${(req as ProxiedRequest)[TARGET_PORT]}`,
        on: { error: upgradeError },
      }),
      engine: createProxyMiddleware({
        ...upgradeOptions,
        target: `http://127.0.0.1:${handlers.enginePort}`,
        on: { error: upgradeError, proxyReqWs: (proxyReq: http.ClientRequest) => proxyReq.setHeader('authorization', handlers.engineAuthorization) },
      }),
    };
    return upgraders;
  };
  // the server's own port, read once it listens (a proxy target that must be refused)
  let ownPort: number | undefined;
  const ports = new PortGuard();

  async function control(name: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (name === 'health') {
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: 'use GET' });
      const health = await handlers.health();
      // `?ready=1` is the readiness form (a Pod's readiness probe): 503 until the engine is ready
      const readiness = new URL(req.url ?? '/', 'http://x').searchParams.get('ready') === '1';
      const ready = (health as { status?: string }).status === 'ok';
      return sendJson(res, readiness && !ready ? 503 : 200, health);
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

  /** Authenticates a non-control request and says where it goes, or answers it itself (null). */
  function prepare(req: IncomingMessage, r: Exclude<Route, { kind: 'control' }>, refuse: (status: number, text: string, json?: unknown) => void): Target | null {
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
      if (r.port === (ownPort ??= handlers.ownPort())) {
        refuse(403, '', { error: "the daemon's own port cannot be proxied" });
        return null;
      }
      if (r.port === handlers.enginePort) {
        refuse(403, '', { error: 'the engine is reached through its own paths, not /proxy' });
        return null;
      }
      // only the sandbox's own ports, never the host's (own-ports.ts)
      const refusal = ports.refusal(r.port);
      if (refusal) {
        refuse(refusal.status, '', { error: refusal.error });
        return null;
      }
      return { engine: false, port: r.port, path: r.rest };
    }
    const state = handlers.engineState();
    if (state !== 'ready') {
      refuse(503, '', { error: `engine is ${state === 'booting' || state === 'restarting' ? 'booting' : state}`, engine_state: state });
      return null;
    }
    const path = req.url ?? '/';
    if (!path.startsWith('/')) {
      refuse(400, '', { error: 'the request target must be a path' });
      return null;
    }
    return { engine: true, port: handlers.enginePort, path };
  }

  const server = http.createServer(stallServerOptions(), (req, res) => {
    const r = route(req.url ?? '/');
    if (r.kind === 'control') {
      control(r.name, req, res).catch((err: Error & { status?: number }) => {
        if (!res.headersSent) sendJson(res, err.status ?? 500, { error: err.status ? err.message : 'internal error' });
        if (!err.status) process.stderr.write(`svc-agent: ${err.stack ?? err.message}\n`);
      });
      return;
    }
    const target = prepare(req, r, (status, text, json) => (json === undefined ? sendText(res, status, text) : sendJson(res, status, json)));
    if (!target) return;
    forwarder.forward(target.port, req, res, target.engine
      ? { path: target.path, drop: dropContext, set: engineHeaders }
      : { path: target.path, drop: dropContext });
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const r = route(req.url ?? '/');
    if (r.kind === 'control') return refuseSocket(socket, 404, 'not found');
    const target = prepare(req, r, (status, text, json) => refuseSocket(socket, status, json === undefined ? text : JSON.stringify(json)));
    if (!target) return;
    if (target.engine) delete req.headers.authorization;
    else {
      (req as ProxiedRequest)[TARGET_PORT] = target.port;
      req.url = target.path;
    }
    proxyMiddlewareLib.get().then((lib) => {
      const upgrade = upgradersOf(lib);
      return (target.engine ? upgrade.engine : upgrade.port).upgrade(req, socket as Socket, head);
    }, () => socket.destroy());
  });
  cutStalledBodies(server);
  server.on('close', () => void forwarder.close());
  return server;
}
