/**
 * Follow-up prompts waiting for a session's engine (the prompt route, request-changes feedback,
 * a `reuse` trigger fire). They are kept on the Session itself, in one annotation, so that they
 * survive restarts of the API, the operator and the sandbox: the Session controller delivers
 * them to the root engine session once the session is running and then removes them.
 * Writers append with the Session's resourceVersion as precondition (a Conflict means re-read
 * and append again), so concurrent appends are never lost.
 */
import type { Session } from './session.js';

export const PENDING_PROMPTS_ANNOTATION = 'svc.dev/pending-prompts';

export type PromptSource = 'api' | 'feedback' | 'trigger';

export interface PendingPrompt {
  /** Unique per prompt (a UUID): delivery removes exactly the prompts it delivered. */
  id: string;
  text: string;
  source: PromptSource;
  /** RFC 3339 time the prompt was accepted. */
  at: string;
}

/**
 * The most the waiting prompts of one session may hold (the annotation's bytes): Kubernetes
 * refuses a resource whose annotations exceed 256 KiB in all, and a session that cannot run
 * (stopped at the cap, a provider down) would otherwise gather prompts without end.
 */
export const PENDING_PROMPTS_MAX_BYTES = 192 * 1024;

/**
 * `prompts` appended, in order, to what waits on `session`: each one not waiting yet, while the
 * annotation stays within PENDING_PROMPTS_MAX_BYTES. The waiting ones are read once. Answers the
 * new list and, by prompt id, why one was left out. Every writer goes through it (`appendPromptPatch`
 * for one): the prompt route (429), a `reuse` fire (fails), request-changes feedback (undelivered).
 */
export function appendPrompts(session: Pick<Session, 'metadata'>, prompts: readonly PendingPrompt[]): { prompts: PendingPrompt[]; refused: Map<string, string> } {
  const list = pendingPrompts(session);
  const ids = new Set(list.map((p) => p.id));
  const refused = new Map<string, string>();
  let bytes = Buffer.byteLength(JSON.stringify(list));
  for (const prompt of prompts) {
    if (ids.has(prompt.id)) continue;
    const next = bytes + Buffer.byteLength(JSON.stringify(prompt)) + (list.length > 0 ? 1 : 0); // and a comma
    if (next > PENDING_PROMPTS_MAX_BYTES) {
      refused.set(prompt.id, `session ${session.metadata.name} already has ${list.length} prompt(s) waiting, ${PENDING_PROMPTS_MAX_BYTES} bytes at most in all`);
      continue;
    }
    list.push(prompt);
    ids.add(prompt.id);
    bytes = next;
  }
  return { prompts: list, refused };
}

/** The prompts waiting on a session, oldest first; an unreadable annotation reads as none. */
export function pendingPrompts(session: Pick<Session, 'metadata'>): PendingPrompt[] {
  const raw = session.metadata.annotations?.[PENDING_PROMPTS_ANNOTATION];
  if (!raw) return [];
  try {
    const parsed: unknown = JSON.parse(raw);
    if (!Array.isArray(parsed)) return [];
    return parsed.filter(
      (p): p is PendingPrompt => typeof p === 'object' && p !== null && typeof p.id === 'string' && typeof p.text === 'string',
    );
  } catch {
    return [];
  }
}

/** The metadata patch that appends `prompt`, guarded by the resourceVersion it was read at; or why it cannot (appendPrompts' bound). */
export function appendPromptPatch(session: Pick<Session, 'metadata'>, prompt: PendingPrompt): { refused: string } | { metadata: { resourceVersion?: string; annotations: Record<string, string> } } {
  const { prompts, refused } = appendPrompts(session, [prompt]);
  const why = refused.get(prompt.id);
  if (why) return { refused: why };
  return {
    metadata: {
      resourceVersion: session.metadata.resourceVersion,
      annotations: { [PENDING_PROMPTS_ANNOTATION]: JSON.stringify(prompts) },
    },
  };
}

/** The metadata patch that removes the delivered prompts (null deletes the annotation when none remain). */
export function removePromptsPatch(session: Pick<Session, 'metadata'>, deliveredIds: readonly string[]): { metadata: { resourceVersion?: string; annotations: Record<string, string | null> } } {
  const left = pendingPrompts(session).filter((p) => !deliveredIds.includes(p.id));
  return {
    metadata: {
      resourceVersion: session.metadata.resourceVersion,
      annotations: { [PENDING_PROMPTS_ANNOTATION]: left.length ? JSON.stringify(left) : null },
    },
  };
}
