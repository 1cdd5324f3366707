// ProjectSecretsStore over the Kubernetes API (direct reads: a writer sees its own writes).
import { isAlreadyExists, isConflict, type KubeClient } from '../../kube/index.js';
import { PROJECT, SECRET, type Project, type ProjectSecretsSecret } from '../../resources/index.js';
import { SecretWriteConflict, type ProjectSecretsStore } from './service.js';

export function kubeProjectSecretsStore(client: KubeClient): ProjectSecretsStore {
  const projects = client.resource<Project>(PROJECT);
  const secrets = client.resource<ProjectSecretsSecret>(SECRET);
  return {
    async findProject(namespace, uid) {
      return (await projects.list(namespace)).items.find((p) => p.metadata.uid === uid);
    },
    read: (namespace, name) => secrets.find(namespace, name),
    async write(secret) {
      try {
        if (secret.metadata.resourceVersion) await secrets.replace(secret);
        else await secrets.create(secret);
      } catch (error) {
        if (isConflict(error) || isAlreadyExists(error)) throw new SecretWriteConflict('the project secrets changed concurrently');
        throw error;
      }
    },
    recordEvent: (project, reason, message) => client.recordEvent(project, { type: 'Normal', reason, message }),
  };
}
