// What the session service needs from the cluster: a port, adapted to Kubernetes in kube-store.ts.
import type { GitCredentials } from '../../git/index.js';
import type { Project, Sandbox, Session, SessionStatusValue } from '../../resources/index.js';

export interface SessionStore {
  findProject(namespace: string, uid: string): Promise<Project | undefined>;
  gitCredentials(project: Project): Promise<GitCredentials | null>;
  /** Annotations of the Namespace (the per-account session cap), undefined when unreadable. */
  namespaceAnnotations(namespace: string): Promise<Record<string, string> | undefined>;
  /** The Sessions of the namespace that hold a slot of the cap (what the cap counts), with this process's own writes. */
  slotHolders(namespace: string): Promise<Session[]>;
  /** The Sessions of a project, of one status when given, with this process's own writes. */
  projectSessions(project: Project, status?: SessionStatusValue): Promise<Session[]>;
  getSession(namespace: string, id: string): Promise<Session | undefined>;
  /** The session as the API's cache has it, with this process's own writes over it (read your writes); read live when the cache has none. */
  cachedSession(namespace: string, id: string): Promise<Session | undefined>;
  getSandbox(namespace: string, id: string): Promise<Sandbox | undefined>;
  /** The Sandbox as the API's cache has it (a listing: no API call per session). */
  cachedSandbox(namespace: string, id: string): Sandbox | undefined;
  /** The slug of a Trigger (for `trigger` of a fired session), null when it is gone. */
  triggerSlug(namespace: string, triggerName: string): Promise<string | null>;
  createSession(session: Session): Promise<Session>;
  /** Merge-patch; ConflictError (src/kube) when the patch's resourceVersion precondition failed. */
  patchSession(namespace: string, id: string, patch: object): Promise<Session>;
  /** The kept log of a failed session's sandbox (docs/sessions.md), null when none is kept. */
  daemonLog(namespace: string, id: string): Promise<string | null>;
  /** The sandbox token of the session's Secret, null when it has none yet. */
  sandboxToken(namespace: string, id: string): Promise<string | null>;
  recordEvent(obj: Session, event: { type: 'Normal' | 'Warning'; reason: string; message: string }): Promise<void>;
}
