// SessionStore over the Kubernetes API: reads go to the API server, so a caller sees its own writes.
import { readGitCredentials, readSecretData, withConflictError, type KubeClient } from '../../kube/index.js';
import {
  NAMESPACE, SANDBOX, SECRET, SESSION, TRIGGER, isValidName, sessionLogSecretName, sessionLogText, sessionSecretName, sessionTokens,
  type KubeObject, type Sandbox, type Session, type SessionLogSecret, type SessionSecret, type Trigger,
} from '../../resources/index.js';
import { projectLookup, type FindProject } from '../project-lookup.js';
import type { SessionStore } from './store.js';

export function kubeSessionStore(client: KubeClient, options: { findProject?: FindProject } = {}): SessionStore {
  const sessions = client.resource<Session>(SESSION);
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
    async listSessions(namespace) {
      return (await sessions.list(namespace)).items;
    },
    getSession: (namespace, id) => find<Session>(SESSION, namespace, id),
    getSandbox: (namespace, id) => find<Sandbox>(SANDBOX, namespace, id),
    async triggerSlug(namespace, name) {
      const trigger = await find<Trigger>(TRIGGER, namespace, name);
      return trigger?.spec.slug ?? null;
    },
    createSession: (session) => sessions.create(session),
    patchSession: (namespace, id, patch) => withConflictError(`patch session ${id}`, () => sessions.mergePatch(namespace, id, patch)),
    async daemonLog(namespace, id) {
      return sessionLogText(await client.resource<SessionLogSecret>(SECRET).find(namespace, sessionLogSecretName(id)));
    },
    async sandboxToken(namespace, id) {
      return sessionTokens(await client.resource<SessionSecret>(SECRET).find(namespace, sessionSecretName(id)))?.sandboxToken ?? null;
    },
    recordEvent: (obj, event) => client.recordEvent(obj, event),
  };
}
