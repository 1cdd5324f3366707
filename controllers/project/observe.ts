// What one reconcile of a Project observes (I/O): its git credentials, one read of its
// repository (fetch, default branch tip, manifest, triggers), and the Triggers it owns.
import { readGitCredentials, readSecretData } from '../../src/kube/index.js';
import type { ReconcileContext } from '../../src/runtime/index.js';
import { TRIGGER, type Project, type Trigger } from '../../src/resources/index.js';
import type { ProjectObservation } from './desired.js';
import type { ReadRepository } from './repository.js';

/** Where observing a Project reads from: the manager's caches and client (kubeProjectWorld), or a test's memory. */
export interface ProjectWorld {
  /** Decoded data of a Secret, or null when it does not exist. */
  readSecret(namespace: string, name: string): Promise<Record<string, string> | null>;
  /** Triggers in the namespace controlled by the project. */
  listOwnedTriggers(project: Project): Promise<Trigger[]>;
}

export function kubeProjectWorld(ctx: ReconcileContext): ProjectWorld {
  return {
    readSecret: (namespace, name) => readSecretData(ctx.client, namespace, name),
    listOwnedTriggers: async (project) => ctx.resource<Trigger>(TRIGGER).ownedBy(project),
  };
}

/** A missing or unusable credentials Secret is reported, not fetched with. */
export async function observeProject(project: Project, world: ProjectWorld, readRepository: ReadRepository): Promise<ProjectObservation> {
  const credentials = await readGitCredentials(project, (namespace, name) => world.readSecret(namespace, name));
  const repository = credentials.ok
    ? await readRepository(project, credentials.credentials)
    : { kind: 'unreachable', reason: 'CredentialsNotFound', message: credentials.message } as const;
  return { repository, ownedTriggers: await world.listOwnedTriggers(project) };
}
