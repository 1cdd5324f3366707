// Authorization: what a verified principal may do (SPEC §5.1). Pure, so it is tested as a table.
import type { Access, Principal } from './tokens.js';

export interface Requirement {
  access: Access;
  /** The project the request acts on; null for a route over all projects (list, create). */
  projectUid: string | null;
  /** A capability the action needs on top of the access (SPEC §2.1 names). */
  capability?: string;
  /** The route creates or acts across projects: a project-scoped token may not (a string: the refusal's words). */
  unscopedOnly?: boolean | string;
  /**
   * The session the request acts on (its engine, ports, run, or a change request it opened; null:
   * a change request no session opened): a session's own token reaches no other.
   */
  sessionId?: string | null;
}

export type Decision = { allowed: true } | { allowed: false; reason: string };

/** Write implies read; a project-scoped token reaches only its project; `*` grants every capability. */
export function authorize(principal: Principal, need: Requirement): Decision {
  if (need.access === 'write' && principal.access !== 'write') {
    return { allowed: false, reason: 'this token has read access only; the request needs write access' };
  }
  if (principal.projectUid !== null) {
    if (need.unscopedOnly) return { allowed: false, reason: typeof need.unscopedOnly === 'string' ? need.unscopedOnly : 'this token is scoped to one project and cannot act across projects' };
    if (need.projectUid !== null && need.projectUid !== principal.projectUid) {
      return { allowed: false, reason: 'this token is scoped to another project' };
    }
  }
  if (principal.sessionId !== undefined && need.sessionId !== undefined && need.sessionId !== principal.sessionId) {
    const reason = `this token belongs to session ${principal.sessionId} and reaches no other session`;
    return { allowed: false, reason: need.sessionId === null ? `${reason}, nor a change request its session did not open` : reason };
  }
  if (need.capability && principal.capabilities !== '*' && !principal.capabilities.has(need.capability)) {
    return { allowed: false, reason: `this token lacks the capability ${need.capability}` };
  }
  return { allowed: true };
}

/** Whether the principal may see the project at all (used to filter listings). */
export function canSeeProject(principal: Principal, projectUid: string): boolean {
  return principal.projectUid === null || principal.projectUid === projectUid;
}
