// When a session's credentials are honoured (issue 20, DESIGN §8.1): its sandbox token, its CLI
// token, every clone credential issued for it (and the model gateway's session key) die the
// moment the session is stopped or failed. The rule is read from the stored Session at
// authentication time, so it holds across restarts of the API and operator; a woken session
// gets new credentials from the Session controller, checked by the caller against what the
// Session Secret holds now.
import type { Session } from './session.js';

/** Session statuses from which every credential of the session is refused. */
export const CREDENTIALS_DEAD_STATUSES: ReadonlySet<string> = new Set(['stopped', 'failed']);

/**
 * True while the session's credentials may be honoured: the Session exists, is not being
 * deleted, and its status is neither `stopped` nor `failed`. A stop that is still under way
 * (desired `stopped`, sandbox going) keeps them, so a sandbox can save its work on SIGTERM.
 * Callers also compare the presented credential with the current one in the Session Secret.
 */
export function sessionCredentialsLive(session: Pick<Session, 'metadata' | 'status'> | null | undefined): boolean {
  if (!session || session.metadata.deletionTimestamp) return false;
  return !CREDENTIALS_DEAD_STATUSES.has(session.status?.status ?? 'provisioning');
}
