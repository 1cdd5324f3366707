// Request authentication for the daemon (SPEC §5.3, DESIGN.md §4).
import type { IncomingMessage } from 'node:http';
import { timingSafeEqual, createHash } from 'node:crypto';
import { CONTEXT_HEADER, NonceCache, verifyContextHeader, type ContextTarget } from '../src/lib/context-header.js';

export class RequestAuth {
  private readonly nonces = new NonceCache();
  private readonly tokenDigest: Buffer;

  constructor(private readonly sandboxToken: string, private readonly sessionId: string) {
    this.tokenDigest = digest(sandboxToken);
  }

  /** A valid, unreplayed context header for `target`; the header is removed from the request either way. */
  context(req: IncomingMessage, target: ContextTarget): boolean {
    const raw = req.headers[CONTEXT_HEADER];
    delete req.headers[CONTEXT_HEADER];
    const value = Array.isArray(raw) ? undefined : raw;
    return verifyContextHeader(value, { key: this.sandboxToken, sessionId: this.sessionId, target, nonces: this.nonces }) !== null;
  }

  /** Control routes: the context header, or `Authorization: Bearer $SVC_SANDBOX_TOKEN`. */
  control(req: IncomingMessage): boolean {
    const auth = req.headers.authorization;
    if (req.headers[CONTEXT_HEADER] !== undefined) return this.context(req, { kind: 'control' });
    if (typeof auth !== 'string' || !auth.startsWith('Bearer ')) return false;
    // compare digests: constant time regardless of the given token's length
    return timingSafeEqual(digest(auth.slice('Bearer '.length)), this.tokenDigest);
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
