// The reconciler's cluster port over src/kube: Triggers by owner, merge-patches for Trigger
// updates, status through /status (only when changed), Events.
import { isAlreadyExists, isNotFound, type KubeClient } from '../../src/kube/index.js';
import { updateStatus } from '../../src/runtime/status.js';
import { controllerOf, LABEL_PROJECT, PROJECT, SECRET, TRIGGER, type KubeObject, type Project, type Trigger } from '../../src/resources/index.js';
import type { ProjectCluster } from './reconciler.js';

export function kubeProjectCluster(client: KubeClient): ProjectCluster {
  const triggers = client.resource<Trigger>(TRIGGER);
  const projects = client.resource<Project>(PROJECT);
  const secrets = client.resource<KubeObject & { data?: Record<string, string> }>(SECRET);
  return {
    async readSecret(namespace, name) {
      const secret = await secrets.find(namespace, name);
      if (!secret) return null;
      return Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
    },
    async listOwnedTriggers(project) {
      const list = await triggers.list(project.metadata.namespace, { labelSelector: `${LABEL_PROJECT}=${project.metadata.name}` });
      return list.items.filter((t) => controllerOf(t)?.uid === project.metadata.uid);
    },
    async createTrigger(trigger) {
      try {
        await triggers.create(trigger);
      } catch (error) {
        // A Trigger of that name left by an earlier Project of the same name: take it over.
        if (!isAlreadyExists(error)) throw error;
        await triggers.mergePatch(trigger.metadata.namespace!, trigger.metadata.name!, { metadata: { labels: trigger.metadata.labels, ownerReferences: trigger.metadata.ownerReferences }, spec: trigger.spec });
      }
    },
    async updateTrigger(trigger) {
      // Merge-patch: fields the entry no longer has must be sent as null to disappear.
      const current = await triggers.get(trigger.metadata.namespace!, trigger.metadata.name!);
      const spec: Record<string, unknown> = { ...trigger.spec };
      for (const key of Object.keys(current.spec ?? {})) if (!(key in spec)) spec[key] = null;
      await triggers.mergePatch(trigger.metadata.namespace!, trigger.metadata.name!, { metadata: { labels: trigger.metadata.labels }, spec });
    },
    async deleteTrigger(trigger) {
      try {
        await triggers.delete(trigger.metadata.namespace!, trigger.metadata.name!, { uid: trigger.metadata.uid });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    },
    async patchStatus(project, status) {
      await updateStatus(projects, project, status);
    },
    async recordEvent(project, event) {
      await client.recordEvent(project, event);
    },
  };
}
