// The session's model-gateway key (SVC_LLM_API_KEY, DESIGN §8.2, docs/gateway.md), derived from its
// sandbox token like the clone credential (src/lib/sandbox-token.ts):
//   svcllm.<session id>.<base64url HMAC-SHA256(sandboxToken, "svc-llm-key:v1:<project uid>:<session id>")>
// Whoever holds the Session Secret can check it, nothing is stored for it, and a wake that
// rotates the sandbox token re-issues it.
import { createHmac } from 'node:crypto';
import { secretsEqual } from './sandbox-token.js';
import { LOWER_UUID as UUID } from './uuid.js';

const KEY = /^svcllm\.([0-9a-f-]{36})\.([A-Za-z0-9_-]{43})$/;

function keyMac(sandboxToken: string, projectUid: string, sessionId: string): string {
  return createHmac('sha256', sandboxToken).update(`svc-llm-key:v1:${projectUid}:${sessionId}`).digest('base64url');
}

/** Sessions are named by a UUID (the branch name); only those get a key. */
export const isSessionId = (name: string) => UUID.test(name);

/** The gateway key of one session of one project. */
export function llmKey(sandboxToken: string, projectUid: string, sessionId: string): string {
  if (!UUID.test(sessionId)) throw new Error('a model-gateway key needs a session id (UUID)');
  return `svcllm.${sessionId}.${keyMac(sandboxToken, projectUid, sessionId)}`;
}

/** The session a gateway key claims (not yet verified), or undefined when it is no gateway key. */
export function llmKeySession(key: string): string | undefined {
  const m = KEY.exec(key);
  return m && UUID.test(m[1]!) ? m[1] : undefined;
}

/** True when `key` is the gateway key of `sessionId` in the project, for this sandbox token. */
export function verifyLlmKey(key: string, sandboxToken: string, projectUid: string, sessionId: string): boolean {
  const m = KEY.exec(key);
  if (!m || m[1] !== sessionId) return false;
  return secretsEqual(m[2]!, keyMac(sandboxToken, projectUid, sessionId));
}
