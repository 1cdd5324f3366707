// Body of `GET /v1/projects/:id/git/clone-credential` (SPEC §4.4 leaves it unspecified; ours):
//   200 application/json  { "username": string, "password": string, "expires_at": RFC 3339 timestamp }
// The API serves it to a sandbox (bearer SVC_SANDBOX_TOKEN); the daemon hands it to git through a
// credential helper and fetches a new one when it has expired. See docs/daemon.md.
import { withoutTrailingSlashes } from './trailing-slashes.js';


export interface CloneCredential {
  username: string;
  password: string;
  /** RFC 3339 timestamp after which git hosts refuse the password */
  expires_at: string;
}

/** A credential is refreshed this long before it expires, so a push never starts with a dying one. */
export const CLONE_CREDENTIAL_REFRESH_MARGIN_MS = 30_000;

/** Validates a response body; throws an Error naming the bad field (never echoing the password). */
export function parseCloneCredential(body: unknown): CloneCredential {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new Error('clone credential: body must be a JSON object');
  }
  const b = body as Record<string, unknown>;
  for (const field of ['username', 'password', 'expires_at'] as const) {
    if (typeof b[field] !== 'string' || (b[field] as string).length === 0) {
      throw new Error(`clone credential: "${field}" must be a non-empty string`);
    }
  }
  const credential = { username: b.username as string, password: b.password as string, expires_at: b.expires_at as string };
  if (/[\n\0]/.test(credential.username) || /[\n\0]/.test(credential.password)) {
    throw new Error('clone credential: username and password may not contain newlines or NUL');
  }
  if (!/^\d{4}-\d{2}-\d{2}T/.test(credential.expires_at) || Number.isNaN(Date.parse(credential.expires_at))) {
    throw new Error('clone credential: "expires_at" must be an RFC 3339 timestamp');
  }
  return credential;
}

/** True when the credential is expired or about to be (within the refresh margin). */
export function cloneCredentialExpired(credential: CloneCredential, nowMs = Date.now()): boolean {
  return Date.parse(credential.expires_at) - CLONE_CREDENTIAL_REFRESH_MARGIN_MS <= nowMs;
}

/**
 * The sandbox's `SVC_REPO_URL`: the API's git gateway for a project (smart HTTP, clone
 * credential as HTTP Basic). `apiUrl` is the base ending in `/v1`.
 */
export function gitGatewayUrl(apiUrl: string, projectId: string): string {
  return `${withoutTrailingSlashes(apiUrl)}/projects/${encodeURIComponent(projectId)}/git`;
}
