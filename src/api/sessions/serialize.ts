// The REST shape of a session (DESIGN §4 "Interfaces pinned"; snake_case).
import type { SerializedSession } from '../../lib/rest-shapes.js';
import { getCondition, type Sandbox, type Session } from '../../resources/index.js';
import { sessionAgent } from '../../sessions/index.js';

export type { SerializedSession };

/** Why a session is as it is, for people (its Ready condition's message): REST's `message`, and the API's refusals. */
export function sessionMessage(session: Session): string | null {
  return getCondition(session.status?.conditions, 'Ready')?.message || null;
}

export function serializeSession(session: Session, projectId: string, options: { sandbox?: Sandbox | null; triggerSlug?: string | null; pendingPrompts?: number } = {}): SerializedSession {
  const status = session.status ?? {};
  return {
    id: session.metadata.name!,
    project_id: projectId,
    // Created in provisioning (SPEC §3.2) before the controller first writes the status.
    status: status.status ?? 'provisioning',
    desired_state: session.spec.desiredState ?? 'running',
    agent: sessionAgent(session, null), // the controller's choice once it recorded one
    model: session.spec.model ?? null,
    base_ref: session.spec.baseRef,
    base_sha: status.baseSha ?? null,
    branch: status.branch ?? null,
    trigger: options.triggerSlug ?? null,
    created_by: session.spec.createdBy ?? null,
    created_at: session.metadata.creationTimestamp ?? null,
    last_activity_at: status.lastActivityTime ?? options.sandbox?.status?.lastActivityTime ?? null,
    reason: status.reason ?? null,
    message: sessionMessage(session),
    model_error: liveProblem(session, 'ModelReachable'),
    progress_error: liveProblem(session, 'Progressing'),
    initial_prompt: session.spec.initialPrompt ?? null,
    pending_prompts: options.pendingPrompts ?? 0,
    sandbox_state: options.sandbox?.status?.state ?? status.sandboxState ?? null,
    checkpoint: status.checkpoint ? { sha: status.checkpoint.sha, at: status.checkpoint.at } : null,
    timeline: (status.timeline ?? []).map((p) => ({ phase: p.phase, started_at: p.startedAt, ended_at: p.endedAt ?? null })),
  };
}

/**
 * What the engine's condition `type` (ModelReachable, Progressing) says while it is False (kept
 * while no daemon answers; none once stopped or failed: the message says why then).
 */
function liveProblem(session: Session, type: 'ModelReachable' | 'Progressing'): string | null {
  const condition = getCondition(session.status?.conditions, type);
  const live = session.status?.status === 'running' || session.status?.status === 'provisioning';
  return live && condition?.status === 'False' ? condition.message || null : null;
}
