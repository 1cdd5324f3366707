// A deleted session's refs leave the project's repository (docs/sessions.md "When a session is
// deleted"): the Session's finalizer, since the repository is outside the cluster. What goes is
// decided by sessionRefsCleanup (src/sessions, pure); this carries it out with the project's own
// credentials. The Project waits for its sessions' cleanup when it is deleted itself (the
// Project controller's finalizer), so the Project and its credentials are still there.
import { redact } from '../../src/git/index.js';
import { readGitCredentials, readSecretData } from '../../src/kube/index.js';
import type { ReconcileContext } from '../../src/runtime/index.js';
import {
  CHANGE_REQUEST, LABEL_PROJECT, PROJECT, controllerOf,
  type ChangeRequest, type Project, type Session,
} from '../../src/resources/index.js';
import { REFS_CLEANUP_DEADLINE_MS, refsCleanupOverdue, sessionRefsCleanup } from '../../src/sessions/index.js';
import { openProjectMirror } from './steps.js';

/** Removes the refs of a Session being deleted; throws to be retried until REFS_CLEANUP_DEADLINE_MS, then gives up saying so. */
export async function cleanUpSessionRefs(session: Session, ctx: ReconcileContext, mirrorDir: string, now: () => Date): Promise<void> {
  const namespace = session.metadata.namespace!;
  const id = session.metadata.name!;
  const project = ctx.resource<Project>(PROJECT).get(namespace, session.spec.projectRef.name);
  const owner = controllerOf(session);
  if (!project || (owner && owner.uid !== project.metadata.uid)) {
    // without its Project there is no repository to reach (the Project waits for its sessions: this is a Project removed by force)
    await ctx.client.recordEvent(session, { type: 'Warning', reason: 'RefsNotDeleted', message: `the project ${session.spec.projectRef.name} is gone: the refs of session ${id} are left in its repository` });
    return;
  }
  const changeRequests = ctx.resource<ChangeRequest>(CHANGE_REQUEST).withLabel(LABEL_PROJECT, project.metadata.name!, namespace);
  const plan = sessionRefsCleanup(session, project, changeRequests);
  try {
    const credentials = await readGitCredentials(project, (ns, name) => readSecretData(ctx.client, ns, name));
    if (!credentials.ok) throw new Error(credentials.message);
    const mirror = openProjectMirror(mirrorDir, project, credentials.credentials);
    const deleted = await mirror.deleteSessionRefs(id, { branch: plan.branch === 'delete' });
    const kept = plan.branch === 'keep' ? `; branch ${id} kept: ${plan.because}` : '';
    ctx.log.info('session refs deleted', { deleted: deleted.join(' ') || 'none', kept: plan.branch === 'keep' ? plan.because : undefined });
    await ctx.client.recordEvent(session, { type: 'Normal', reason: 'RefsDeleted', message: `deleted from ${redact(project.spec.repoUrl)}: ${deleted.join(', ') || 'nothing (no refs left)'}${kept}` });
  } catch (error) {
    if (!refsCleanupOverdue(session, now())) throw error;
    const message = `gave up deleting the refs of session ${id} after ${REFS_CLEANUP_DEADLINE_MS / 60_000} minutes: ${redact((error as Error).message)}; delete refs/svc/checkpoints/${id}${plan.branch === 'delete' ? ` and refs/heads/${id}` : ''} by hand`;
    ctx.log.warn('session refs not deleted', { error: (error as Error).message });
    await ctx.client.recordEvent(session, { type: 'Warning', reason: 'RefsNotDeleted', message });
  }
}
