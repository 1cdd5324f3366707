// The sandbox token and the clone credential derived from it (DESIGN.md §4, ours):
//   sandbox token  svcsbx.<session id>.<43 base64url chars: 32 random bytes>
//   clone credential  username = session id,
//                     password = <exp unix s>.<base64url HMAC-SHA256(sandboxToken, "svc-clone-credential:v1:<project uid>:<session id>:<exp>")>
// The token is kept in the Session's Secret; whoever holds that Secret can check both.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { LOWER_UUID as UUID } from './uuid.js';

const PREFIX = 'svcsbx';
const TOKEN = /^svcsbx\.([0-9a-f-]{36})\.([A-Za-z0-9_-]{43})$/;
/** Longest lifetime of a clone credential (SPEC §4.4: at most one hour). */
export const CLONE_CREDENTIAL_MAX_TTL_S = 3600;

export function newSandboxToken(sessionId: string): string {
  if (!UUID.test(sessionId)) throw new Error('a sandbox token needs a session id (UUID)');
  return `${PREFIX}.${sessionId}.${randomBytes(32).toString('base64url')}`;
}

/** The session id a sandbox token claims (not yet verified), or undefined when it is no sandbox token. */
export function sandboxTokenSession(token: string): string | undefined {
  const m = TOKEN.exec(token);
  return m && UUID.test(m[1]!) ? m[1] : undefined;
}

/** Constant-time comparison of two secrets of any length. */
export function secretsEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

function credentialMac(sandboxToken: string, projectUid: string, sessionId: string, exp: number): string {
  return createHmac('sha256', sandboxToken).update(`svc-clone-credential:v1:${projectUid}:${sessionId}:${exp}`).digest('base64url');
}

/** A clone credential for one session, valid `ttlSeconds` (at most one hour) from `nowMs`. */
export function signCloneCredential(
  sandboxToken: string, projectUid: string, sessionId: string, nowMs: number, ttlSeconds = CLONE_CREDENTIAL_MAX_TTL_S,
): { username: string; password: string; expires_at: string } {
  const exp = Math.floor(nowMs / 1000) + Math.min(Math.max(1, ttlSeconds), CLONE_CREDENTIAL_MAX_TTL_S);
  return {
    username: sessionId,
    password: `${exp}.${credentialMac(sandboxToken, projectUid, sessionId, exp)}`,
    expires_at: new Date(exp * 1000).toISOString(),
  };
}

/** True when `password` is a live credential of `sessionId` for the project, signed with `sandboxToken`. */
export function verifyCloneCredential(
  sandboxToken: string, projectUid: string, sessionId: string, password: string, nowMs: number,
): boolean {
  const m = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(password);
  if (!m) return false;
  const exp = Number(m[1]);
  const now = Math.floor(nowMs / 1000);
  if (exp <= now || exp > now + CLONE_CREDENTIAL_MAX_TTL_S) return false;
  return secretsEqual(m[2]!, credentialMac(sandboxToken, projectUid, sessionId, exp));
}
