// API tokens as the cluster stores them (docs/tokens.md): the plaintext is shown once; a Secret
// labelled svc.dev/token=true keeps only its SHA-256, named after a prefix of the hash. Pure
// shapes shared by the API (verification, minting) and the Session controller (the session's
// CLI token, SPEC §5.2), which may not import the API.
import { UUID } from './uuid.js';
import { createHash, randomBytes } from 'node:crypto';

export type Access = 'read' | 'write';

export interface TokenGrant {
  userId: string;
  access: Access;
  projectUid?: string | null;
  capabilities: readonly string[];
  /** What people call it (`svc tokens ls`, `revoke NAME`); also a label, so it is looked up by name. */
  name?: string;
  /** RFC 3339; absent = never expires. */
  expiresAt?: string | null;
  /** User id of whoever minted it (audit; absent for svc dev's admin token). */
  createdBy?: string;
}

export const TOKEN_LABEL = 'svc.dev/token';
/** The token's name, as a label: `svc tokens revoke NAME` finds it with one selector. */
export const TOKEN_NAME_LABEL = 'svc.dev/token-name';
/** When the API last accepted the token (RFC 3339, written at most once a minute). */
export const LAST_USED_ANNOTATION = 'svc.dev/last-used-at';
/** Token names: a label value, lower case (`ci-bot`, `alice.laptop`). */
export const TOKEN_NAME_PATTERN = /^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$/;
const TOKEN_PREFIX = 'svc_';
const SECRET_PREFIX = 'svc-token-';
export const TOKEN_USER_ID = UUID;

/** The Secret as the cluster stores it (only the fields we read and write). */
export interface TokenSecret {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: { name: string; namespace: string; labels: Record<string, string>; annotations?: Record<string, string>; creationTimestamp?: string };
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

/** The Secret that makes `token` valid with `grant` (the plaintext is not in it). */
export function tokenSecret(token: string, grant: TokenGrant, namespace: string): TokenSecret {
  if (!TOKEN_USER_ID.test(grant.userId)) throw new Error(`token user id must be a UUID, got ${JSON.stringify(grant.userId)}`);
  const hash = hashToken(token);
  const data: Record<string, string> = {
    sha256: b64(hash),
    userId: b64(grant.userId),
    access: b64(grant.access),
    capabilities: b64(JSON.stringify([...grant.capabilities])),
  };
  if (grant.projectUid) data.projectUid = b64(grant.projectUid);
  const labels: Record<string, string> = { [TOKEN_LABEL]: 'true' };
  if (grant.name !== undefined) {
    if (!TOKEN_NAME_PATTERN.test(grant.name)) throw new Error(`token name ${JSON.stringify(grant.name)} must be 1-63 lower-case letters, digits, '.', '_' or '-', starting and ending with a letter or digit`);
    data.name = b64(grant.name);
    labels[TOKEN_NAME_LABEL] = grant.name;
  }
  if (grant.expiresAt) data.expiresAt = b64(grant.expiresAt);
  if (grant.createdBy) data.createdBy = b64(grant.createdBy);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: secretNameForHash(hash), namespace, labels },
    type: 'Opaque',
    data,
  };
}

/** Mints a new token: the plaintext (to show once) and the Secret to store. */
export function mintToken(grant: TokenGrant, namespace: string): { token: string; secret: TokenSecret } {
  const token = newToken();
  return { token, secret: tokenSecret(token, grant, namespace) };
}
