// SandboxEventStore over the Kubernetes API: the session and its token from the API's caches
// (the model gateway's store holds both), the annotation through the client.
import { isNotFound, type KubeClient } from '../../kube/index.js';
import { SANDBOX, type Sandbox } from '../../resources/index.js';
import type { SandboxEventStore } from './service.js';

export function kubeSandboxEventStore(client: KubeClient, caches: Pick<SandboxEventStore, 'cachedSession' | 'cachedSandboxToken'>): SandboxEventStore {
  const sandboxes = client.resource<Sandbox>(SANDBOX);
  return {
    cachedSession: (namespace, id) => caches.cachedSession(namespace, id),
    cachedSandboxToken: (namespace, id) => caches.cachedSandboxToken(namespace, id),
    async annotateSandbox(namespace, name, annotations) {
      try {
        await sandboxes.mergePatch(namespace, name, { metadata: { annotations } });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    },
  };
}
