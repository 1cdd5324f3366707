// The user's way into a running session: requests relayed to its daemon with a signed
// X-Svc-User-Context (the sandbox's token as key, the caller as subject), streaming both ways
// (SSE included). Also the one control call the API makes on a user's behalf: abort.
import http from 'node:http';
import type { Request, Response } from 'express';
import { signContextHeader, type ContextScope } from '../../lib/context-header.js';
import { httpCall, type HttpAnswer } from '../../lib/http-call.js';
import { jsonErrorText } from '../../lib/json.js';
import { SSE_KEEPALIVE_MS, SseKeepalive } from '../../lib/sse-keepalive.js';
import type { Project } from '../../resources/index.js';
import { ApiError } from '../errors.js';
import type { SessionService } from './service.js';

// Hop-by-hop headers (RFC 9110 §7.6.1) and what must not reach an untrusted sandbox: the
// caller's API token and cookies.
const DROPPED = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'authorization', 'cookie', 'x-svc-user-context']);
// ... and what a sandbox's answer must not do to the API's origin: set cookies on it (a few KB of
// them made every request of that browser 431 for years).
const DROPPED_FROM_ANSWERS = new Set([...DROPPED, 'set-cookie', 'set-cookie2']);
/** A sandbox's answer is never a page of the API's origin: no script runs, nothing is sniffed. */
const ANSWER_GUARDS = { 'content-security-policy': "sandbox; default-src 'none'", 'x-content-type-options': 'nosniff' };

function forwardHeaders(headers: http.IncomingHttpHeaders, dropped = DROPPED): http.OutgoingHttpHeaders {
  const listed = new Set(String(headers.connection ?? '').toLowerCase().split(',').map((h) => h.trim()).filter(Boolean));
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !dropped.has(name) && !listed.has(name)));
}

/** `host:port` of a Sandbox's status.address. */
function splitAddress(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at), port: Number(address.slice(at + 1)) };
}

export interface RelayRequest {
  project: Project;
  sessionId: string;
  /** The caller's user id (the header's `sub`). */
  userId: string;
  scope: ContextScope;
  /** The daemon's path and query. */
  path: string;
  /** A port inside the sandbox (the `/proxy/{port}` route): never the daemon's own. */
  proxyPort?: number;
  /** false: the request has no body to stream (a GET answered by a stream). Default true. */
  body?: boolean;
  /** How often the engine's quiet event stream gets a keepalive comment (tests shorten it). */
  keepaliveMs?: number;
}

/** Relays `req` to the session's daemon and streams the answer back; 409/503 before anything is sent when it is not running. */
export async function relayToDaemon(service: SessionService, req: Request, res: Response, relay: RelayRequest): Promise<void> {
  const target = await service.proxyTarget(relay.project, relay.sessionId);
  const { host, port } = splitAddress(target.address);
  if (relay.proxyPort !== undefined && relay.proxyPort === port) throw new ApiError(403, "the daemon's own port cannot be proxied");
  const headers = {
    ...forwardHeaders(req.headers),
    'x-svc-user-context': signContextHeader(target.sandboxToken, { sub: relay.userId, sid: relay.sessionId, scope: relay.scope }),
  };
  await new Promise<void>((resolve) => {
    let settled = false;
    const failed = (why: string) => {
      if (settled) return; // a later error of a request already answered
      settled = true;
      if (!res.headersSent) {
        for (const name of res.getHeaderNames()) res.removeHeader(name); // what a writeHead that threw had set
        res.status(502).json({ error: `the sandbox of session ${relay.sessionId} ${why}` });
      } else res.destroy();
      resolve();
    };
    const upstream = http.request({ host, port, method: req.method, path: relay.path, headers }, (answer) => {
      // the answer is untrusted: a status Node cannot send (099) threw here and ended the API
      const status = answer.statusCode ?? 0;
      if (status < 200 || status > 599) {
        answer.destroy();
        return failed(`answered with status ${status}, which is not relayed`);
      }
      try {
        res.writeHead(status, { ...forwardHeaders(answer.headers, DROPPED_FROM_ANSWERS), ...ANSWER_GUARDS });
      } catch {
        answer.destroy();
        return failed('answered with headers that cannot be relayed');
      }
      res.flushHeaders();
      // the engine's events: kept open for the person following them while the engine is idle
      const keepalive = relay.scope === 'engine' && /^text\/event-stream/i.test(String(answer.headers['content-type'] ?? ''))
        ? new SseKeepalive(relay.keepaliveMs ?? SSE_KEEPALIVE_MS) : undefined;
      if (keepalive) {
        res.on('close', () => keepalive.destroy());
        answer.pipe(keepalive).pipe(res);
      } else answer.pipe(res);
      answer.on('end', resolve);
      answer.on('error', () => { res.destroy(); resolve(); });
    });
    upstream.on('error', () => failed('did not answer'));
    // A caller that goes away ends the upstream request too (SSE streams stay open otherwise).
    res.on('close', () => { upstream.destroy(); resolve(); });
    if (relay.body === false) upstream.end();
    else req.pipe(upstream);
  });
}

/**
 * `POST /svc/abort` on the session's daemon (scope `engine`, the caller as subject): the engine's
 * current run stops, the session keeps running. 409 when the daemon has nothing to abort.
 */
export async function abortRun(service: SessionService, project: Project, sessionId: string, userId: string): Promise<void> {
  const target = await service.proxyTarget(project, sessionId);
  const header = signContextHeader(target.sandboxToken, { sub: userId, sid: sessionId, scope: 'engine' });
  let answer: HttpAnswer;
  try {
    // the daemon's answer is untrusted: a few KiB at most
    answer = await httpCall(`http://${target.address}/svc/abort`, { method: 'POST', headers: { 'x-svc-user-context': header }, timeoutMs: 30_000, maxBytes: 16 * 1024 });
  } catch (error) {
    throw new ApiError(502, `the sandbox of session ${sessionId} did not answer (${(error as Error).message})`);
  }
  if (answer.status >= 200 && answer.status < 300) return;
  const said = daemonError(answer.body);
  if (answer.status === 409) throw new ApiError(409, `session ${sessionId} has no run to abort${said}`);
  throw new ApiError(502, `the sandbox of session ${sessionId} could not abort the run (daemon answered ${answer.status}${said})`);
}

/** `: <error>` of a daemon's JSON answer (its first 300 characters), or ''. */
function daemonError(text: string): string {
  const error = jsonErrorText(text);
  return error === undefined ? '' : `: ${error.slice(0, 300)}`;
}
