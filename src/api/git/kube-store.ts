// GitGatewayStore over the Kubernetes API: direct reads (a Session created a moment ago is seen).
import { isNotFound, readGitCredentials, readSecretData, type KubeClient } from '../../kube/index.js';
import { SECRET, SESSION, isValidName, sessionSecretName, sessionTokens, type Session, type SessionSecret } from '../../resources/index.js';
import { CredentialsUnavailableError } from '../change-requests/store.js';
import { projectLookup, type FindProject } from '../project-lookup.js';
import type { GitGatewayStore } from './service.js';

export function kubeGitGatewayStore(client: KubeClient, options: { findProject?: FindProject } = {}): GitGatewayStore {
  const sessions = client.resource<Session>(SESSION);
  const secrets = client.resource<SessionSecret>(SECRET);
  return {
    findProject: options.findProject ?? projectLookup(client),
    async findSession(namespace, sessionId) {
      return isValidName(sessionId) ? sessions.find(namespace, sessionId) : undefined;
    },
    async sandboxToken(namespace, sessionId) {
      return sessionTokens(await secrets.find(namespace, sessionSecretName(sessionId)))?.sandboxToken;
    },
    async annotateSession(namespace, sessionId, annotations) {
      try {
        await sessions.mergePatch(namespace, sessionId, { metadata: { annotations } });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    },
    async gitCredentials(project) {
      const lookup = await readGitCredentials(project, (namespace, name) => readSecretData(client, namespace, name));
      if (!lookup.ok) throw new CredentialsUnavailableError(lookup.message);
      return lookup.credentials;
    },
  };
}
