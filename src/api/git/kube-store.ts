// GitGatewayStore over the Kubernetes API: direct reads (a Session created a moment ago is seen).
import { readGitCredentials, readSecretData, type KubeClient } from '../../kube/index.js';
import { PROJECT, SECRET, SESSION, isValidName, type KubeObject, type Project, type Session } from '../../resources/index.js';
import { CredentialsUnavailableError } from '../change-requests/store.js';
import type { GitGatewayStore } from './service.js';

/** The Session's Secret (contracts: created by the Session controller, key `sandboxToken`). */
export const sessionSecretName = (sessionId: string) => `svc-session-${sessionId}`;

export function kubeGitGatewayStore(client: KubeClient): GitGatewayStore {
  const projects = client.resource<Project>(PROJECT);
  const sessions = client.resource<Session>(SESSION);
  const secrets = client.resource<KubeObject & { data?: Record<string, string> }>(SECRET);
  return {
    async findProject(namespace, uid) {
      const { items } = await projects.list(namespace);
      return items.find((p) => p.metadata.uid === uid);
    },
    async findSession(namespace, sessionId) {
      return isValidName(sessionId) ? sessions.find(namespace, sessionId) : undefined;
    },
    async sandboxToken(namespace, sessionId) {
      const secret = await secrets.find(namespace, sessionSecretName(sessionId));
      const value = secret?.data?.sandboxToken;
      return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
    },
    async gitCredentials(project) {
      const lookup = await readGitCredentials(project, (namespace, name) => readSecretData(client, namespace, name));
      if (!lookup.ok) throw new CredentialsUnavailableError(lookup.message);
      return lookup.credentials;
    },
  };
}
