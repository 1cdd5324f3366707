// The daemon's signed user-context header (DESIGN.md §4, SPEC §5.3):
//   X-Svc-User-Context: v1.<payload>.<sig>
// payload = base64url(JSON {sub, sid, scope, iat, exp, nonce}), sig = base64url(HMAC-SHA256(key, "v1." + payload)).
// The API signs it when it proxies a user to a session; the daemon verifies it.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const CONTEXT_HEADER = 'x-svc-user-context';
export const CONTEXT_HEADER_VERSION = 'v1';
/** Longest allowed lifetime (exp - iat) in seconds. */
export const CONTEXT_MAX_LIFETIME_S = 300;
/** Allowed clock skew in seconds, on both ends of the validity window. */
export const CONTEXT_CLOCK_SKEW_S = 30;

/** `*` anything; `engine` the engine paths; `proxy` any /proxy/{port}; `proxy:<port>` that port only. */
export type ContextScope = '*' | 'engine' | 'proxy' | `proxy:${number}`;

export interface ContextClaims {
  sub: string;
  sid: string;
  scope: ContextScope;
  iat: number;
  exp: number;
  nonce: string;
}

/** What a request is aiming at, to be checked against a scope. */
export type ContextTarget = { kind: 'engine' } | { kind: 'proxy'; port: number } | { kind: 'control' };

export interface SignContextOptions {
  /** user id */
  sub: string;
  /** session id */
  sid: string;
  scope: ContextScope;
  /** lifetime in seconds, default 60, at most 300 */
  ttlSeconds?: number;
  /** unix seconds, default now */
  now?: number;
  /** default 16 random bytes, base64url */
  nonce?: string;
}

const SCOPE_PATTERN = /^(\*|engine|proxy|proxy:([1-9][0-9]{0,4}))$/;

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

function mac(key: string, payload: string): Buffer {
  return createHmac('sha256', key).update(`${CONTEXT_HEADER_VERSION}.${payload}`, 'ascii').digest();
}

export function isContextScope(value: unknown): value is ContextScope {
  if (typeof value !== 'string') return false;
  const m = SCOPE_PATTERN.exec(value);
  if (!m) return false;
  return m[2] === undefined || Number(m[2]) <= 65535;
}

/** Signs a header value (the part after `X-Svc-User-Context: `) with the sandbox token as key. */
export function signContextHeader(key: string, options: SignContextOptions): string {
  if (!key) throw new Error('signContextHeader: empty key');
  if (!isContextScope(options.scope)) throw new Error(`signContextHeader: invalid scope ${JSON.stringify(options.scope)}`);
  const ttl = options.ttlSeconds ?? 60;
  if (!Number.isInteger(ttl) || ttl <= 0 || ttl > CONTEXT_MAX_LIFETIME_S) {
    throw new Error(`signContextHeader: ttlSeconds must be an integer in 1..${CONTEXT_MAX_LIFETIME_S}`);
  }
  const iat = options.now ?? Math.floor(Date.now() / 1000);
  const claims: ContextClaims = {
    sub: options.sub,
    sid: options.sid,
    scope: options.scope,
    iat,
    exp: iat + ttl,
    nonce: options.nonce ?? randomBytes(16).toString('base64url'),
  };
  return encodeContextHeader(key, claims);
}

/** Encodes arbitrary claims without validating them (tests use it to build bad headers). */
export function encodeContextHeader(key: string, claims: object): string {
  const payload = b64url(JSON.stringify(claims));
  return `${CONTEXT_HEADER_VERSION}.${payload}.${b64url(mac(key, payload))}`;
}

/** Whether `scope` lets its holder reach `target`. Control routes (/svc/*) need `*` or `engine`. */
export function scopeAllows(scope: ContextScope, target: ContextTarget): boolean {
  if (scope === '*') return true;
  switch (target.kind) {
    case 'engine':
    case 'control':
      return scope === 'engine';
    case 'proxy':
      return scope === 'proxy' || scope === `proxy:${target.port}`;
  }
}

/** Remembers nonces until their header can no longer be valid, so a header is accepted once. */
export class NonceCache {
  private readonly seen = new Map<string, number>();
  // Expiry has one-second resolution, so one sweep per second is as exact as one per request,
  // and keeps a claim O(1) instead of O(live nonces).
  private prunedAt = -Infinity;

  /** Records the nonce; false when it was already seen and has not expired. */
  claim(nonce: string, exp: number, now: number): boolean {
    if (now !== this.prunedAt) {
      this.prune(now);
      this.prunedAt = now;
    }
    if (this.seen.has(nonce)) return false;
    this.seen.set(nonce, exp);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }

  private prune(now: number): void {
    for (const [nonce, exp] of this.seen) {
      if (exp + CONTEXT_CLOCK_SKEW_S < now) this.seen.delete(nonce);
    }
  }
}

export interface VerifyContextOptions {
  key: string;
  sessionId: string;
  target: ContextTarget;
  nonces: NonceCache;
  /** unix seconds, default now */
  now?: number;
}

/**
 * Verifies a header value. Returns the claims, or null for any failure (callers answer 401
 * "unauthorized" without saying which check failed). The nonce is only consumed when every
 * other check passed.
 */
export function verifyContextHeader(value: string | undefined, options: VerifyContextOptions): ContextClaims | null {
  if (typeof value !== 'string' || value.length > 4096) return null;
  const parts = value.split('.');
  if (parts.length !== 3 || parts[0] !== CONTEXT_HEADER_VERSION) return null;
  const [, payload, sig] = parts as [string, string, string];
  const expected = mac(options.key, payload);
  const given = Buffer.from(sig, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  if (b64url(given) !== sig) return null; // non-canonical encoding of the same bytes
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!isClaims(claims)) return null;
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (claims.sid !== options.sessionId) return null;
  if (claims.exp - claims.iat > CONTEXT_MAX_LIFETIME_S || claims.exp <= claims.iat) return null;
  if (!(claims.iat - CONTEXT_CLOCK_SKEW_S <= now && now < claims.exp + CONTEXT_CLOCK_SKEW_S)) return null;
  if (!scopeAllows(claims.scope, options.target)) return null;
  if (!options.nonces.claim(claims.nonce, claims.exp, now)) return null;
  return claims;
}

function isClaims(value: unknown): value is ContextClaims {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Record<string, unknown>;
  return typeof c.sub === 'string'
    && typeof c.sid === 'string'
    && isContextScope(c.scope)
    && Number.isSafeInteger(c.iat)
    && Number.isSafeInteger(c.exp)
    && typeof c.nonce === 'string'
    && c.nonce.length > 0
    && c.nonce.length <= 256;
}
