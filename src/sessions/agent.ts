// The agent a session runs, one decision for the controller (its sandbox, its status) and the
// API: a Session may name none (applied with kubectl), as a REST request may.
import type { Project, Session } from '../resources/index.js';

/**
 * spec.agent, else the one recorded in status.agent (kept: a later manifest edit does not change
 * a session's agent), else the project manifest's default_agent, else `default`.
 */
export function sessionAgent(session: Pick<Session, 'spec' | 'status'>, project: Pick<Project, 'status'> | null | undefined): string {
  return session.spec.agent || session.status?.agent || project?.status?.manifest?.defaultAgent || 'default';
}
