// Bearer tokens. A token is shown once, when minted; the cluster keeps only its SHA-256 in a
// Secret labelled svc.dev/token=true in the operator's namespace, named after a prefix of the
// hash so a request costs one GET and no listing. docs/tokens.md has the format.
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { hashToken, lookupName, TOKEN_LABEL, TOKEN_USER_ID as UUID, type Access, type TokenGrant } from '../lib/api-tokens.js';

export {
  hashToken, lookupName, mintToken, newToken, secretNameForHash, tokenSecret, TOKEN_LABEL,
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
}

const unb64 = (value: string | undefined) => (value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8'));

/** The grant of `svc dev`'s admin token: write, every project, every capability. */
export function adminGrant(userId: string = randomUUID()): TokenGrant {
  return { userId, access: 'write', projectUid: null, capabilities: ['*'] };
}

/** The parts of a stored Secret verification reads. */
export interface StoredSecret { metadata?: { name?: string; labels?: Record<string, string> }; data?: Record<string, string> }

/**
 * The principal a stored Secret grants to `token`, or null when the Secret does not belong to
 * it (hash mismatch, wrong label) or is malformed.
 */
export function principalFromSecret(token: string, secret: StoredSecret | null | undefined): Principal | null {
  if (!secret?.data || secret.metadata?.labels?.[TOKEN_LABEL] !== 'true') return null;
  const stored = Buffer.from(unb64(secret.data.sha256) ?? '', 'utf8');
  const presented = Buffer.from(hashToken(token), 'utf8');
  if (stored.length !== presented.length || !timingSafeEqual(stored, presented)) return null;
  const userId = unb64(secret.data.userId) ?? '';
  const access = unb64(secret.data.access);
  let capabilities: unknown;
  try { capabilities = JSON.parse(unb64(secret.data.capabilities) ?? '[]'); } catch { return null; }
  if (!UUID.test(userId) || (access !== 'read' && access !== 'write')) return null;
  if (!Array.isArray(capabilities) || !capabilities.every((c) => typeof c === 'string')) return null;
  return {
    tokenName: secret.metadata?.name ?? '',
    userId,
    access,
    projectUid: unb64(secret.data.projectUid) || null,
    capabilities: capabilities.includes('*') ? '*' : new Set(capabilities as string[]),
  };
}

/** Reads a token Secret by name from the operator's namespace (null when absent). */
export type TokenSecretReader = (name: string) => Promise<StoredSecret | null | undefined>;

export type TokenVerifier = (token: string) => Promise<Principal | null>;

export function secretTokenVerifier(readSecret: TokenSecretReader): TokenVerifier {
  return async (token) => {
    const name = lookupName(token);
    if (!name) return null;
    return principalFromSecret(token, await readSecret(name));
  };
}
