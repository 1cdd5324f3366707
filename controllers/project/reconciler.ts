// The Project kind on the runtime's object reconciler: observe (credentials, one read of the
// repository, the Triggers it owns) -> projectOutcome (pure, desired.ts) -> applyOutcome
// (Triggers, the status through the one gate, Events).
import { readGitCredentials } from '../../src/kube/index.js';
import { applyOutcome, type OutcomeWriter } from '../../src/runtime/index.js';
import type { Project, ProjectStatus, Trigger } from '../../src/resources/index.js';
import { projectOutcome, type ProjectEvent, type ProjectObservation, type TriggerPlan } from './desired.js';
import type { ReadRepository } from './repository.js';

/** What observing a Project reads from the cluster. */
export interface ProjectWorld {
  /** Decoded data of a Secret, or null when it does not exist. */
  readSecret(namespace: string, name: string): Promise<Record<string, string> | null>;
  /** Triggers in the namespace controlled by the project. */
  listOwnedTriggers(project: Project): Promise<Trigger[]>;
}

/** The world plus the writes: runs a Project reconcile outside the manager (tests, in memory). */
export interface ProjectCluster extends ProjectWorld {
  createTrigger(trigger: Trigger): Promise<void>;
  /** Merge-patches spec and labels of an existing Trigger. */
  updateTrigger(trigger: Trigger): Promise<void>;
  deleteTrigger(trigger: Trigger): Promise<void>;
  patchStatus(project: Project, status: ProjectStatus): Promise<void>;
  recordEvent(project: Project, event: ProjectEvent): Promise<void>;
}

/** I/O of one reconcile: a missing or unusable credentials Secret is reported, not fetched with. */
export async function observeProject(project: Project, world: ProjectWorld, readRepository: ReadRepository): Promise<ProjectObservation> {
  const credentials = await readGitCredentials(project, (namespace, name) => world.readSecret(namespace, name));
  const repository = credentials.ok
    ? await readRepository(project, credentials.credentials)
    : { kind: 'unreachable', reason: 'CredentialsNotFound', message: credentials.message } as const;
  return { repository, ownedTriggers: await world.listOwnedTriggers(project) };
}

export interface ProjectReconcilerOptions {
  cluster: ProjectCluster;
  readRepository: ReadRepository;
  /** How long until the default branch is read again (default 30 s). */
  resyncMs?: number;
  now?: () => Date;
}

export interface ReconcileOutcome {
  requeueAfterMs: number;
  plan: TriggerPlan | null;
  statusWritten: boolean;
}

function clusterWriter(cluster: ProjectCluster): OutcomeWriter<Project> {
  return {
    writeStatus: (project, status) => cluster.patchStatus(project, status),
    recordEvent: (project, event) => cluster.recordEvent(project, event as ProjectEvent),
    async applyChildren(_type, plan) {
      for (const trigger of plan.delete as Trigger[]) await cluster.deleteTrigger(trigger);
      for (const trigger of plan.update as Trigger[]) await cluster.updateTrigger(trigger);
      for (const trigger of plan.create as Trigger[]) await cluster.createTrigger(trigger);
    },
  };
}

/** The same observe -> compute -> apply steps as the controller, over a ProjectCluster port. */
export function projectReconciler(options: ProjectReconcilerOptions) {
  const resyncMs = options.resyncMs ?? 30_000;
  const now = options.now ?? (() => new Date());
  const writer = clusterWriter(options.cluster);

  return async function reconcile(project: Project): Promise<ReconcileOutcome> {
    if (project.metadata.deletionTimestamp) return { requeueAfterMs: 0, plan: null, statusWritten: false };
    const observed = await observeProject(project, options.cluster, options.readRepository);
    const outcome = projectOutcome(project, observed, now(), resyncMs);
    const { statusWritten } = await applyOutcome(project, outcome, writer);
    return { requeueAfterMs: resyncMs, plan: outcome.plan, statusWritten };
  };
}
