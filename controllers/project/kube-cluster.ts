// What the Project controller observes, over the manager's caches and client.
import { readSecretData } from '../../src/kube/index.js';
import type { ReconcileContext } from '../../src/runtime/index.js';
import { TRIGGER, type Trigger } from '../../src/resources/index.js';
import type { ProjectWorld } from './reconciler.js';

export function kubeProjectWorld(ctx: ReconcileContext): ProjectWorld {
  return {
    readSecret: (namespace, name) => readSecretData(ctx.client, namespace, name),
    listOwnedTriggers: async (project) => ctx.resource<Trigger>(TRIGGER).ownedBy(project),
  };
}
