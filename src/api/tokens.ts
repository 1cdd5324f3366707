// Bearer tokens. A token is shown once, when minted; the cluster keeps only its SHA-256 in a
// Secret labelled svc.dev/token=true in the operator's namespace, named after a prefix of the
// hash so a request costs one GET and no listing. docs/tokens.md has the format.
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { hashToken, LAST_USED_ANNOTATION, lookupName, TOKEN_LABEL, TOKEN_USER_ID as UUID, type Access, type TokenGrant } from '../lib/api-tokens.js';
import { LABEL_SESSION } from '../resources/index.js';

export {
  hashToken, LAST_USED_ANNOTATION, lookupName, mintToken, newToken, secretNameForHash, tokenSecret, TOKEN_LABEL, TOKEN_NAME_LABEL, TOKEN_NAME_PATTERN,
  type Access, type TokenGrant, type TokenSecret,
} from '../lib/api-tokens.js';


/** Who a verified token acts as. `projectUid` null = every project of the namespace. */
export interface Principal {
  tokenName: string;
  userId: string;
  access: Access;
  projectUid: string | null;
  /** `'*'` grants every capability. */
  capabilities: '*' | ReadonlySet<string>;
  /** RFC 3339; null or absent = never. A token is refused from this instant on. */
  expiresAt?: string | null;
  /**
   * The session whose CLI token this is (its Secret's `svc.dev/session` label): it reaches no
   * other session, and dies with its own (docs/tokens.md). Absent for a person's token.
   */
  sessionId?: string;
}

const unb64 = (value: string | undefined) => (value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8'));


/** The grant of `svc dev`'s admin token: write, every project, every capability. */
export function adminGrant(userId: string = randomUUID()): TokenGrant {
  return { userId, access: 'write', projectUid: null, capabilities: ['*'] };
}

/** The parts of a stored Secret verification reads. */
export interface StoredSecret {
  metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string>; creationTimestamp?: string };
  data?: Record<string, string>;
}

/** What a token grants and its bookkeeping, as read from its Secret (never the token itself). */
export interface TokenInfo {
  /** The given name, else the Secret's name (svc dev's admin token has none). */
  name: string;
  secretName: string;
  userId: string;
  access: Access;
  projectUid: string | null;
  capabilities: string[];
  expiresAt: string | null;
  createdAt: string | null;
  createdBy: string | null;
  lastUsedAt: string | null;
  /** The session of a session's CLI token (label `svc.dev/session`), else null. */
  sessionId: string | null;
}

/** The grant a token Secret holds, or null when it is not a well-formed token Secret. */
export function tokenInfo(secret: StoredSecret | null | undefined): TokenInfo | null {
  if (!secret?.data || secret.metadata?.labels?.[TOKEN_LABEL] !== 'true') return null;
  const userId = unb64(secret.data.userId) ?? '';
  const access = unb64(secret.data.access);
  let capabilities: unknown;
  try { capabilities = JSON.parse(unb64(secret.data.capabilities) ?? '[]'); } catch { return null; }
  if (!UUID.test(userId) || (access !== 'read' && access !== 'write')) return null;
  if (!Array.isArray(capabilities) || !capabilities.every((c) => typeof c === 'string')) return null;
  const secretName = secret.metadata?.name ?? '';
  return {
    name: unb64(secret.data.name) || secretName,
    secretName,
    userId,
    access,
    projectUid: unb64(secret.data.projectUid) || null,
    capabilities: capabilities as string[],
    expiresAt: unb64(secret.data.expiresAt) || null,
    createdAt: secret.metadata?.creationTimestamp ?? null,
    createdBy: unb64(secret.data.createdBy) || null,
    lastUsedAt: secret.metadata?.annotations?.[LAST_USED_ANNOTATION] ?? null,
    sessionId: secret.metadata?.labels?.[LABEL_SESSION] || null,
  };
}

/** Whether the token has expired at `now` (an unreadable expiry counts as expired). */
export function isExpired(info: Pick<TokenInfo, 'expiresAt'>, now: Date): boolean {
  if (!info.expiresAt) return false;
  const at = Date.parse(info.expiresAt);
  return Number.isNaN(at) || at <= now.getTime();
}

/**
 * A token its caller holds whole but that is refused all the same, with what to say: its holder
 * learns nothing they could not guess, and an expired CI token should say so, not "unknown".
 */
export interface TokenRefusal {
  refused: string;
}

export const isTokenRefusal = (value: Principal | TokenRefusal | null): value is TokenRefusal => value !== null && 'refused' in value;

/**
 * The principal a stored Secret grants to `token`, or null when the Secret does not belong to
 * it (hash mismatch, wrong label), is malformed, or the token has expired.
 */
export function principalFromSecret(token: string, secret: StoredSecret | null | undefined, now: Date = new Date()): Principal | null {
  const read = readTokenSecret(token, secret, now);
  return isTokenRefusal(read) ? null : read;
}

/** As principalFromSecret, but an expired token that matches its Secret is a refusal saying when it expired. */
function readTokenSecret(token: string, secret: StoredSecret | null | undefined, now: Date): Principal | TokenRefusal | null {
  const info = tokenInfo(secret);
  if (!info) return null;
  const stored = Buffer.from(unb64(secret!.data!.sha256) ?? '', 'utf8');
  const presented = Buffer.from(hashToken(token), 'utf8');
  if (stored.length !== presented.length || !timingSafeEqual(stored, presented)) return null;
  if (isExpired(info, now)) return { refused: `token ${info.name} expired at ${info.expiresAt}: a cluster admin makes a new one with \`svc tokens create\`` };
  return {
    tokenName: info.secretName,
    userId: info.userId,
    access: info.access,
    projectUid: info.projectUid,
    capabilities: info.capabilities.includes('*') ? '*' : new Set(info.capabilities),
    expiresAt: info.expiresAt,
    ...(info.sessionId ? { sessionId: info.sessionId } : {}),
  };
}

/** Reads a token Secret by name from the operator's namespace (null when absent). */
export type TokenSecretReader = (name: string) => Promise<StoredSecret | null | undefined>;

/** The principal of a token, a refusal saying why a token its caller holds is refused, or null for a token not known. */
export type TokenVerifier = (token: string) => Promise<Principal | TokenRefusal | null>;

/**
 * Whether a session's CLI token is still honoured: its session is not stopped or failed and the
 * token is the one the Session Secret holds now (src/api/session-credentials.ts).
 */
export type SessionTokenCheck = (principal: Principal & { sessionId: string }, token: string) => Promise<boolean>;

export interface VerifierOptions {
  now?: () => Date;
  /** Checks a session's CLI token at every request; without it, session tokens are refused. */
  sessionTokens?: SessionTokenCheck;
  /** Records that a token was used (best-effort, not awaited); called at most once a minute per token. */
  touch?: (secretName: string, at: string) => Promise<unknown>;
}

const TOUCH_INTERVAL_MS = 60_000;

export function secretTokenVerifier(readSecret: TokenSecretReader, options: VerifierOptions = {}): TokenVerifier {
  const now = options.now ?? (() => new Date());
  return async (token) => {
    const name = lookupName(token);
    if (!name) return null;
    const secret = await readSecret(name);
    const at = now();
    const principal = readTokenSecret(token, secret, at);
    if (principal === null || isTokenRefusal(principal)) return principal;
    if (principal.sessionId !== undefined) {
      const live = options.sessionTokens ? await options.sessionTokens(principal as Principal & { sessionId: string }, token) : false;
      if (!live) return null;
    }
    if (options.touch) {
      const last = Date.parse(secret?.metadata?.annotations?.[LAST_USED_ANNOTATION] ?? '');
      if (Number.isNaN(last) || at.getTime() - last >= TOUCH_INTERVAL_MS) void options.touch(name, at.toISOString()).catch(() => undefined);
    }
    return principal;
  };
}
