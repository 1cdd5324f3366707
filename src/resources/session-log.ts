// The kept log of a failed session (issue 23, docs/sessions.md "A failed session's log"): the last
// DAEMON_LOG_TAIL_BYTES of its sandbox's output (svc-agent and its engine), redacted, copied by
// the Sandbox controller before the failed sandbox is removed. A Secret `svc-session-log-<id>`
// in the project namespace, owned by the Session, so it lives exactly as long as the Session.
// A Secret rather than a ConfigMap: the redaction masks what svc knows to be secret, but a log
// can still carry what the agent printed, so it gets a Secret's access rules.
import type { Session } from './session.js';
import { LABEL_SESSION_LOG, sessionOwnedSecret, type SessionSecret } from './session-secret.js';

/** At most this much of the end of a failed sandbox's log is kept. */
export const DAEMON_LOG_TAIL_BYTES = 256 * 1024;
export const DAEMON_LOG_KEY = 'daemon.log';

/** A Secret of the session's, as its tokens' (sessionOwnedSecret). */
export type SessionLogSecret = SessionSecret;

export function sessionLogSecretName(sessionId: string): string {
  return `svc-session-log-${sessionId}`;
}

/** The last `maxBytes` of `text` (UTF-8), starting at a line when one starts in that window. */
export function logTail(text: string, maxBytes = DAEMON_LOG_TAIL_BYTES): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  const tail = bytes.subarray(bytes.length - maxBytes).toString('utf8').replace(/^\uFFFD+/, '');
  const newline = tail.indexOf('\n');
  return newline >= 0 && newline < tail.length - 1 ? tail.slice(newline + 1) : tail;
}

/** The Secret that keeps `text` (already bounded and redacted) for `session`. */
export function sessionLogSecret(session: Session, text: string): SessionLogSecret {
  return sessionOwnedSecret(session, sessionLogSecretName(session.metadata.name!), { [DAEMON_LOG_KEY]: text }, { [LABEL_SESSION_LOG]: 'true' });
}

/** The kept log of a stored Secret, or null when it holds none. */
export function sessionLogText(secret: SessionLogSecret | undefined | null): string | null {
  const data = secret?.data?.[DAEMON_LOG_KEY];
  return data === undefined ? null : Buffer.from(data, 'base64').toString('utf8');
}
