// ProjectSecretsStore over the Kubernetes API (direct reads: a writer sees its own writes).
import { ConflictError, isAlreadyExists, isConflict, type KubeClient, type KubeError } from '../../kube/index.js';
import { SECRET, type ProjectSecretsSecret } from '../../resources/index.js';
import { projectLookup, type FindProject } from '../project-lookup.js';
import type { ProjectSecretsStore } from './service.js';

export function kubeProjectSecretsStore(client: KubeClient, options: { findProject?: FindProject } = {}): ProjectSecretsStore {
  const secrets = client.resource<ProjectSecretsSecret>(SECRET);
  return {
    findProject: options.findProject ?? projectLookup(client),
    read: (namespace, name) => secrets.find(namespace, name),
    async write(secret) {
      try {
        if (secret.metadata.resourceVersion) await secrets.replace(secret);
        else await secrets.create(secret);
      } catch (error) {
        // a create that lost a race is a conflict too: read again and apply the change on top
        if (isConflict(error) || isAlreadyExists(error)) throw new ConflictError(`write the project secrets ${secret.metadata.name}`, error as KubeError);
        throw error;
      }
    },
    recordEvent: (project, reason, message) => client.recordEvent(project, { type: 'Normal', reason, message }),
  };
}
