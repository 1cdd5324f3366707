// A session's CLI token is honoured only while its session is (docs/tokens.md): read from the
// stored Session and Session Secret at every request, never from an in-memory revocation, so it
// holds across restarts; a woken session whose tokens were rotated works with its new token only.
import type { KubeClient } from '../kube/index.js';
import { secretsEqual } from '../lib/sandbox-token.js';
import {
  SECRET, SESSION, controllerOf, isValidName, sessionCredentialsLive, sessionSecretName, sessionTokens, type Session, type SessionSecret,
} from '../resources/index.js';
import type { SessionTokenCheck } from './tokens.js';

/** What the check reads: the Session and its Secret (undefined when absent). */
export interface SessionCredentialReader {
  session(sessionId: string): Promise<Session | undefined>;
  secret(sessionId: string): Promise<SessionSecret | undefined>;
}

/**
 * The presented CLI token is live when its session's credentials are (`sessionCredentialsLive`),
 * the Session belongs to the token's project, and the token is the Session Secret's `cliToken`.
 */
export function sessionTokenCheck(read: SessionCredentialReader): SessionTokenCheck {
  return async (principal, token) => {
    if (!isValidName(principal.sessionId)) return false;
    const [session, secret] = await Promise.all([read.session(principal.sessionId), read.secret(principal.sessionId)]);
    if (!session || !sessionCredentialsLive(session)) return false;
    const owner = controllerOf(session);
    if (principal.projectUid !== null && owner && owner.uid !== principal.projectUid) return false;
    const current = sessionTokens(secret)?.cliToken;
    return current !== undefined && secretsEqual(current, token);
  };
}

/** Direct reads (not a cache): a stop is seen by the next request. */
export function kubeSessionCredentialReader(client: KubeClient, projectNamespace: string): SessionCredentialReader {
  const sessions = client.resource<Session>(SESSION);
  const secrets = client.resource<SessionSecret>(SECRET);
  return {
    session: (id) => sessions.find(projectNamespace, id),
    secret: (id) => secrets.find(projectNamespace, sessionSecretName(id)),
  };
}
