// What is removed from a project's repository when one of its sessions is deleted (issue 22,
// issue 24 §1, docs/sessions.md "When a session is deleted"), pure. Its checkpoint ref always
// goes: it is the session's scratch state and nobody else's. Its branch goes too, unless a
// person may still need it: an open change request reads it (as head, or as base), it is the
// project's default branch, or it is not a branch svc made for the session (a Session named by
// hand with kubectl, not by a UUID, may name a branch people use).
import { controllerOf, type ChangeRequest, type Project, type Session } from '../resources/index.js';
import { LOWER_UUID as UUID } from '../lib/uuid.js';


/** How long after its deletion started a session's cleanup keeps trying; then the refs are left (and a Warning says so). */
export const REFS_CLEANUP_DEADLINE_MS = 10 * 60_000;

export type RefsCleanup =
  | { branch: 'delete' }
  | { branch: 'keep'; because: string };

/** Change requests of `project` that are open (or not yet given a state: counted as open). */
function openChangeRequests(project: Project, changeRequests: readonly ChangeRequest[]): ChangeRequest[] {
  return changeRequests.filter((cr) => {
    const owner = controllerOf(cr);
    const ours = owner ? owner.uid === project.metadata.uid : cr.spec.projectRef.name === project.metadata.name;
    return ours && (cr.status?.status ?? 'open') === 'open';
  });
}

/** Whether the deleted `session`'s branch goes with its checkpoint ref, given the project's change requests. */
export function sessionRefsCleanup(session: Session, project: Project, changeRequests: readonly ChangeRequest[]): RefsCleanup {
  const branch = session.metadata.name!;
  if (!UUID.test(branch)) return { branch: 'keep', because: `${branch} is not a branch svc named for a session` };
  if (branch === (project.spec.defaultBranch || 'main')) return { branch: 'keep', because: `${branch} is the project's default branch` };
  const open = openChangeRequests(project, changeRequests).filter((cr) => cr.spec.headRef === branch || cr.spec.baseRef === branch);
  if (open.length) {
    const numbers = open.map((cr) => `#${cr.spec.number}`).join(', ');
    return { branch: 'keep', because: `open change request ${numbers} uses it` };
  }
  return { branch: 'delete' };
}

/** The cleanup has tried long enough: its deletion started more than REFS_CLEANUP_DEADLINE_MS before `now`. */
export function refsCleanupOverdue(session: Session, now: Date): boolean {
  const since = Date.parse(session.metadata.deletionTimestamp ?? '');
  return Number.isFinite(since) && now.getTime() - since > REFS_CLEANUP_DEADLINE_MS;
}
