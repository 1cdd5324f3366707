// Bearer tokens. A token is shown once, when minted; the cluster keeps only its SHA-256 in a
// Secret labelled svc.dev/token=true in the operator's namespace, named after a prefix of the
// hash so a request costs one GET and no listing. docs/tokens.md has the format.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

export type Access = 'read' | 'write';

/** Who a verified token acts as. `projectUid` null = every project of the namespace. */
export interface Principal {
  tokenName: string;
  userId: string;
  access: Access;
  projectUid: string | null;
  /** `'*'` grants every capability. */
  capabilities: '*' | ReadonlySet<string>;
}

export interface TokenGrant {
  userId: string;
  access: Access;
  projectUid?: string | null;
  capabilities: readonly string[];
}

export const TOKEN_LABEL = 'svc.dev/token';
const TOKEN_PREFIX = 'svc_';
const SECRET_PREFIX = 'svc-token-';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The Secret as the cluster stores it (only the fields we read and write). */
export interface TokenSecret {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  type: 'Opaque';
  data: Record<string, string>;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function secretNameForHash(hash: string): string {
  return SECRET_PREFIX + hash.slice(0, 40);
}

/** Secret-name lookup key for a presented token, or null when it cannot be one of ours. */
export function lookupName(token: string): string | null {
  if (!token.startsWith(TOKEN_PREFIX) || token.length > 200) return null;
  return secretNameForHash(hashToken(token));
}

export function newToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

const b64 = (value: string) => Buffer.from(value, 'utf8').toString('base64');
const unb64 = (value: string | undefined) => (value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8'));

/** The Secret that makes `token` valid with `grant` (the plaintext is not in it). */
export function tokenSecret(token: string, grant: TokenGrant, namespace: string): TokenSecret {
  if (!UUID.test(grant.userId)) throw new Error(`token user id must be a UUID, got ${JSON.stringify(grant.userId)}`);
  const hash = hashToken(token);
  const data: Record<string, string> = {
    sha256: b64(hash),
    userId: b64(grant.userId),
    access: b64(grant.access),
    capabilities: b64(JSON.stringify([...grant.capabilities])),
  };
  if (grant.projectUid) data.projectUid = b64(grant.projectUid);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: secretNameForHash(hash), namespace, labels: { [TOKEN_LABEL]: 'true' } },
    type: 'Opaque',
    data,
  };
}

/** Mints a new token: the plaintext (to show once) and the Secret to store. */
export function mintToken(grant: TokenGrant, namespace: string): { token: string; secret: TokenSecret } {
  const token = newToken();
  return { token, secret: tokenSecret(token, grant, namespace) };
}

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
