// Every HTTP server of svc (the API, the local cluster, svc-agent) cuts a request whose headers or
// body make no progress for STALL_TIMEOUT_MS (issue 20 §4): a client that sends its headers and
// then nothing (or connects and sends nothing at all) must not hold a handler, a lock or a socket
// for minutes. A connection that sends nothing at all is Node's too: its header timer runs from
// the connection (over TLS, from the end of the handshake), so it gets 408 after the same time;
// a timer of our own for it only raced Node's. Only *stalls* are cut, never total time: a long
// push whose body keeps flowing, a watch or an SSE answer (the request is complete, only the
// response streams) run as long as they need. Node's own total `requestTimeout` (300 s) is
// turned off for the same reason.
import type { IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';

export const STALL_TIMEOUT_MS = 60_000;

/** SVC_HTTP_STALL_TIMEOUT_MS (tests use a short one), else 60 s. */
export function stallTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SVC_HTTP_STALL_TIMEOUT_MS?.trim();
  const value = raw ? Number(raw) : NaN;
  return Number.isInteger(value) && value > 0 ? value : STALL_TIMEOUT_MS;
}

/**
 * Options for http.createServer / https.createServer: headers must arrive within `stallMs`
 * (Node answers 408 itself), no limit on a whole request's time. Node checks headers every
 * `connectionsCheckingInterval`, so it is a fraction of the limit.
 */
export function stallServerOptions(stallMs = stallTimeoutMs()): ServerOptions & { handshakeTimeout: number } {
  // handshakeTimeout: an https server's TLS handshake that stalls (a plain http server ignores it)
  return { headersTimeout: stallMs, requestTimeout: 0, connectionsCheckingInterval: Math.max(100, Math.min(5_000, Math.floor(stallMs / 4))), handshakeTimeout: stallMs };
}

interface Tracked { req: IncomingMessage; res: ServerResponse; bytes: number; since: number }

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return length.trim() !== '0';
  return req.headers['transfer-encoding'] !== undefined;
}

/**
 * Cuts a request whose body stalls: no byte read from its connection for `stallMs` while the
 * body is incomplete. Answers 408 when nothing was answered yet, then closes the connection.
 * Activity is the socket's byte counter, so a handler that streams the body is never disturbed.
 */
export function cutStalledBodies(server: Server | HttpsServer, stallMs = stallTimeoutMs()): void {
  const tracked = new Set<Tracked>();
  let timer: NodeJS.Timeout | undefined;
  const sweep = () => {
    const now = Date.now();
    for (const entry of tracked) {
      const { req, res } = entry;
      if (req.complete || req.destroyed) { tracked.delete(entry); continue; }
      const bytes = req.socket.bytesRead;
      if (bytes !== entry.bytes) { entry.bytes = bytes; entry.since = now; continue; }
      if (now - entry.since < stallMs) continue;
      tracked.delete(entry);
      if (!res.headersSent && !res.destroyed) {
        const text = JSON.stringify({ error: `the request body stalled: nothing received for ${Math.round(stallMs / 1000)} s` });
        res.writeHead(408, { 'content-type': 'application/json', connection: 'close', 'content-length': Buffer.byteLength(text) });
        res.end(text, () => req.socket.destroy());
        // a client that reads nothing either: do not wait for the answer to drain
        setTimeout(() => req.socket.destroy(), 1_000).unref();
      } else {
        req.socket.destroy();
      }
    }
    if (tracked.size === 0 && timer) { clearInterval(timer); timer = undefined; }
  };
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.complete || !hasBody(req)) return;
    tracked.add({ req, res, bytes: req.socket.bytesRead, since: Date.now() });
    timer ??= setInterval(sweep, Math.max(50, Math.min(1_000, Math.floor(stallMs / 4))));
    timer.unref();
  });
  server.on('close', () => { if (timer) clearInterval(timer); timer = undefined; tracked.clear(); });
}
