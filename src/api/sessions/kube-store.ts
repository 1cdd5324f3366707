// SessionStore over the Kubernetes API: one session by id is read from the API server before a
// write, and from the cache for `GET` (what dashboards and CLIs poll); the sessions the cap counts
// and a project's listing come from the API's cache by index (never a namespace list). Cached
// reads lay this process's creates and patches over the cache until it shows them, so a caller
// sees its own writes.
import { readGitCredentials, readSecretData, RecentWrites, withConflictError, type KubeCache, type KubeClient } from '../../kube/index.js';
import {
  NAMESPACE, SANDBOX, SECRET, SESSION, SESSIONS_BY_PROJECT_INDEX, SLOT_HOLDERS_INDEX, TRIGGER, holdsSlot, isValidName, sessionLogSecretName, sessionLogText, sessionSecretName, sessionTokens, shownStatus,
  type KubeObject, type Sandbox, type Session, type SessionLogSecret, type SessionSecret, type Trigger,
} from '../../resources/index.js';
import { projectLookup, type FindProject } from '../project-lookup.js';
import type { SessionStore } from './store.js';

export function kubeSessionStore(client: KubeClient, cache: KubeCache, options: { findProject?: FindProject } = {}): SessionStore {
  const sessions = client.resource<Session>(SESSION);
  const cached = cache.resource<Session>(SESSION);
  const written = new RecentWrites<Session>();
  const remember = (session: Session) => {
    written.record(session, cached.get(session.metadata.namespace, session.metadata.name!)?.metadata.resourceVersion);
    return session;
  };
  const fromCache = (ns: string, name: string) => cached.get(ns, name);
  const sandboxes = cache.resource<Sandbox>(SANDBOX);
  const triggers = cache.resource<Trigger>(TRIGGER);
  const find = async <T extends KubeObject>(type: typeof SESSION, namespace: string, name: string) =>
    (isValidName(name) ? await client.resource<T>(type).find(namespace, name) : undefined);
  return {
    findProject: options.findProject ?? projectLookup(client),
    async gitCredentials(project) {
      const lookup = await readGitCredentials(project, (namespace, name) => readSecretData(client, namespace, name));
      return lookup.ok ? lookup.credentials : null;
    },
    async namespaceAnnotations(namespace) {
      try {
        return (await client.resource(NAMESPACE).get('', namespace)).metadata.annotations ?? {};
      } catch {
        return undefined; // RBAC without namespaces/get: the process-wide cap applies
      }
    },
    async slotHolders(namespace) {
      return written.overlaySelected(cached.indexed(SLOT_HOLDERS_INDEX, namespace), namespace, fromCache, holdsSlot);
    },
    async projectSessions(project, status) {
      const namespace = project.metadata.namespace!;
      const key = `${namespace}/${project.metadata.name}${status ? `/${status}` : ''}`;
      const selects = (s: Session) => s.spec.projectRef.name === project.metadata.name && (!status || shownStatus(s) === status);
      return written.overlaySelected(cached.indexed(SESSIONS_BY_PROJECT_INDEX, key), namespace, fromCache, selects);
    },
    getSession: (namespace, id) => find<Session>(SESSION, namespace, id),
    async cachedSession(namespace, id) {
      const inCache = cached.get(namespace, id);
      return written.get(namespace, id, inCache) ?? inCache ?? await find<Session>(SESSION, namespace, id);
    },
    getSandbox: (namespace, id) => find<Sandbox>(SANDBOX, namespace, id),
    cachedSandbox: (namespace, id) => sandboxes.get(namespace, id),
    async triggerSlug(namespace, name) {
      const trigger = triggers.get(namespace, name) ?? await find<Trigger>(TRIGGER, namespace, name);
      return trigger?.spec.slug ?? null;
    },
    createSession: async (session) => remember(await sessions.create(session)),
    patchSession: async (namespace, id, patch) => remember(await withConflictError(`patch session ${id}`, () => sessions.mergePatch(namespace, id, patch))),
    async daemonLog(namespace, id) {
      return sessionLogText(await client.resource<SessionLogSecret>(SECRET).find(namespace, sessionLogSecretName(id)));
    },
    async sandboxToken(namespace, id) {
      return sessionTokens(await client.resource<SessionSecret>(SECRET).find(namespace, sessionSecretName(id)))?.sandboxToken ?? null;
    },
    recordEvent: (obj, event) => client.recordEvent(obj, event),
  };
}
