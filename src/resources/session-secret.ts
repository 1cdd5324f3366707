// The Session Secret (contracts): `svc-session-<session id>` in the project namespace, owned by
// the Session, labelled svc.dev/session=<id>. Keys: `sandboxToken` (the sandbox's service key,
// SPEC §5.2) and `cliToken` (the session's project-scoped CLI token). Written once by the Session
// controller before the Sandbox; read by the Sandbox controller (to start the sandbox), by the
// API's git gateway (to check a sandbox token) and by the session routes (to sign the context header).
import { TOKEN_LABEL } from '../lib/api-tokens.js';
import { LABEL_SANDBOX, LABEL_SESSION } from './constants.js';
import { controllerReference, type KubeObject } from './meta.js';
import type { Session } from './session.js';

export const SANDBOX_TOKEN_KEY = 'sandboxToken';
export const CLI_TOKEN_KEY = 'cliToken';

export interface SessionSecret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

export function sessionSecretName(sessionId: string): string {
  return `svc-session-${sessionId}`;
}

/**
 * Marks a session's Secret that holds its kept log, not its tokens: the API caches the session
 * Secrets it checks tokens against, and a failed session's log (up to 256 KiB, kept as long as the
 * Session) has no place there.
 */
export const LABEL_SESSION_LOG = 'svc.dev/session-log';

/**
 * The selector of the Secrets that hold sessions' tokens: a Secret of a session that is not its
 * log, not its kubernetes sandbox's environment (project secrets) and not its CLI token's record.
 */
export const SESSION_TOKEN_SECRETS = `${LABEL_SESSION},!${LABEL_SESSION_LOG},!${LABEL_SANDBOX},!${TOKEN_LABEL}`;

/** An Opaque Secret of `session`, owned by it (gone with it), with `data` base64 as Kubernetes stores it. */
export function sessionOwnedSecret(session: Session, name: string, data: Record<string, string>, labels: Record<string, string> = {}): SessionSecret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace: session.metadata.namespace,
      labels: { [LABEL_SESSION]: session.metadata.name!, ...labels },
      ownerReferences: [controllerReference(session)],
    },
    type: 'Opaque',
    data: Object.fromEntries(Object.entries(data).map(([key, value]) => [key, Buffer.from(value, 'utf8').toString('base64')])),
  };
}

/** The Secret holding a session's tokens (values base64 as Kubernetes stores them). */
export function sessionSecret(session: Session, tokens: { sandboxToken: string; cliToken: string }): SessionSecret {
  return sessionOwnedSecret(session, sessionSecretName(session.metadata.name!), { [SANDBOX_TOKEN_KEY]: tokens.sandboxToken, [CLI_TOKEN_KEY]: tokens.cliToken });
}

/** The tokens of a stored Session Secret, or null when it lacks one. */
export function sessionTokens(secret: SessionSecret | undefined | null): { sandboxToken: string; cliToken: string } | null {
  const read = (key: string) => (secret?.data?.[key] ? Buffer.from(secret.data[key], 'base64').toString('utf8') : '');
  const sandboxToken = read(SANDBOX_TOKEN_KEY);
  const cliToken = read(CLI_TOKEN_KEY);
  return sandboxToken && cliToken ? { sandboxToken, cliToken } : null;
}
