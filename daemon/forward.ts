// Forwards one HTTP request to a server on loopback and streams the answer back unbuffered (SPEC
// §4.5). Plain requests take this path, not http-proxy-middleware: undici's pooled keep-alive
// client with a dispatch handler doubled the daemon's request rate in bench/daemon-proxy
// (docs/daemon.md). WebSocket upgrades stay on http-proxy-middleware.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher, Pool } from 'undici';
import { undiciLib } from './proxy-libs.js';

/** Headers that describe one connection (RFC 9110 §7.6.1) and never cross a proxy. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
/** Request headers the forwarder sets itself: `host` is the target's (like changeOrigin). */
const NOT_FORWARDED = new Set([...HOP_BY_HOP, 'host', 'expect']);
/** Upstream pools kept at once; the least recently used closes (after its requests finish) beyond it. */
const MAX_POOLS = 32;

export interface ForwardOptions {
  /** the upstream path, starting with `/` */
  path: string;
  /** request headers (lower-case names) dropped before forwarding */
  drop?: ReadonlySet<string>;
  /** request headers set on the forwarded request, replacing the client's */
  set?: Readonly<Record<string, string>>;
}

/** Called when the upstream cannot be reached or fails before the answer started. */
export type ForwardFailure = (res: ServerResponse) => void;

export class Forwarder {
  private readonly pools = new Map<number, Pool>();

  constructor(private readonly onFailure: ForwardFailure) {}

  forward(port: number, req: IncomingMessage, res: ServerResponse, options: ForwardOptions): void {
    const headers = requestHeaders(req.rawHeaders, options);
    const hasBody = req.headers['content-length'] !== undefined ? req.headers['content-length'] !== '0' : req.headers['transfer-encoding'] !== undefined;
    const handler = new ResponseRelay(res, this.onFailure);
    const undici = undiciLib.loaded;
    if (!undici) {
      // the first proxied request of this svc-agent: undici loads now (proxy-libs.ts)
      undiciLib.get().then(() => this.forward(port, req, res, options), (err: Error) => handler.onError(err));
      return;
    }
    try {
      this.pool(port, undici.Pool).dispatch({
        origin: `http://127.0.0.1:${port}`,
        method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
        path: options.path,
        headers,
        body: hasBody ? req : null,
      }, handler);
    } catch (err) {
      handler.onError(err as Error);
    }
  }

  /** Closes every pool; requests in flight are cut. */
  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.destroy()));
  }

  private pool(port: number, PoolClass: typeof Pool): Pool {
    let pool = this.pools.get(port);
    if (pool) {
      this.pools.delete(port); // re-insert: Map order is recency order
    } else {
      // no timeouts: an engine call may wait minutes for a model, an SSE stream may idle for hours;
      // a client that goes away aborts its request instead
      pool = new PoolClass(`http://127.0.0.1:${port}`, { headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 10_000 });
      if (this.pools.size >= MAX_POOLS) {
        const [oldestPort, oldest] = this.pools.entries().next().value as [number, Pool];
        this.pools.delete(oldestPort);
        void oldest.close();
      }
    }
    this.pools.set(port, pool);
    return pool;
  }
}

function requestHeaders(raw: string[], options: ForwardOptions): string[] {
  const { drop, set } = options;
  const out = forwardable(raw, (name) => NOT_FORWARDED.has(name) || drop?.has(name) === true || (set !== undefined && name in set));
  if (set) for (const [name, value] of Object.entries(set)) out.push(name, value);
  return out;
}

/** The raw header list without hop-by-hop headers, those a `Connection` header names, and `skip`'s. */
function forwardable(raw: string[], skip: (lowerName: string) => boolean): string[] {
  let listed: Set<string> | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length !== 10 || raw[i]!.toLowerCase() !== 'connection') continue;
    for (const token of raw[i + 1]!.split(',')) {
      const name = token.trim().toLowerCase();
      if (name) (listed ??= new Set()).add(name);
    }
  }
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (skip(name) || listed?.has(name)) continue;
    out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

/** Relays the upstream's answer into the client's response, with backpressure both ways. */
class ResponseRelay implements Dispatcher.DispatchHandlers {
  private abort: ((err?: Error) => void) | null = null;
  private done = false;

  constructor(private readonly res: ServerResponse, private readonly onFailure: ForwardFailure) {
    // the client went away before the answer ended: stop the upstream request (SSE streams included)
    res.once('close', () => {
      if (!this.done) this.abort?.();
    });
  }

  onConnect(abort: (err?: Error) => void): void {
    if (this.res.destroyed) abort();
    else this.abort = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean {
    if (statusCode < 200) return true; // 1xx: node answers Expect itself; nothing to relay
    const raw = rawHeaders.map((b) => b.toString('latin1'));
    this.res.writeHead(statusCode, statusText, forwardable(raw, (name) => HOP_BY_HOP.has(name)));
    this.res.on('drain', resume);
    return !this.res.writableNeedDrain;
  }

  onData(chunk: Buffer): boolean {
    return this.res.write(chunk);
  }

  onComplete(): void {
    this.done = true;
    this.res.end();
  }

  onError(_err: Error): void {
    this.done = true;
    if (this.res.headersSent) this.res.destroy();
    else if (!this.res.destroyed) this.onFailure(this.res);
  }
}
