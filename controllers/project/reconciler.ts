// The Project reconcile loop body: read the repository, make the Triggers match, write the
// status through /status when it changed, and record Events for what changed.
import type { Project, ProjectStatus, Trigger } from '../../src/resources/index.js';
import { desiredTriggers, eventsFor, nextStatus, planTriggers, statusChanged, triggersAreKnown, type ProjectEvent, type TriggerPlan } from './desired.js';
import { credentialsFromSecret, type ReadRepository } from './repository.js';

/** What the reconciler needs from the cluster (adapted from src/kube by the composition root). */
export interface ProjectCluster {
  /** Decoded data of a Secret, or null when it does not exist. */
  readSecret(namespace: string, name: string): Promise<Record<string, string> | null>;
  /** Triggers in the namespace controlled by the project. */
  listOwnedTriggers(project: Project): Promise<Trigger[]>;
  createTrigger(trigger: Trigger): Promise<void>;
  /** Merge-patches spec and labels of an existing Trigger. */
  updateTrigger(trigger: Trigger): Promise<void>;
  deleteTrigger(trigger: Trigger): Promise<void>;
  patchStatus(project: Project, status: ProjectStatus): Promise<void>;
  recordEvent(project: Project, event: ProjectEvent): Promise<void>;
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

export function projectReconciler(options: ProjectReconcilerOptions) {
  const { cluster, readRepository } = options;
  const resyncMs = options.resyncMs ?? 30_000;
  const now = options.now ?? (() => new Date());

  return async function reconcile(project: Project): Promise<ReconcileOutcome> {
    if (project.metadata.deletionTimestamp) return { requeueAfterMs: 0, plan: null, statusWritten: false };
    const namespace = project.metadata.namespace!;
    const ref = project.spec.gitCredentialsSecretRef?.name;
    let observation;
    const secret = ref ? await cluster.readSecret(namespace, ref) : null;
    if (ref && !secret) {
      observation = { kind: 'unreachable', reason: 'CredentialsNotFound', message: `the git credentials Secret ${ref} does not exist in namespace ${namespace}` } as const;
    } else if (ref && secret && !credentialsFromSecret(secret)) {
      observation = { kind: 'unreachable', reason: 'CredentialsNotFound', message: `the git credentials Secret ${ref} has neither a password nor a token key` } as const;
    } else {
      observation = await readRepository(project, secret ? credentialsFromSecret(secret) : null);
    }

    let plan: TriggerPlan | null = null;
    if (triggersAreKnown(observation) && observation.kind === 'read') {
      plan = planTriggers(await cluster.listOwnedTriggers(project), desiredTriggers(project, observation.triggers));
      for (const trigger of plan.delete) await cluster.deleteTrigger(trigger);
      for (const trigger of plan.update) await cluster.updateTrigger(trigger);
      for (const trigger of plan.create) await cluster.createTrigger(trigger);
    }

    const status = nextStatus(project, observation, now());
    const statusWritten = statusChanged(project.status, status);
    if (statusWritten) await cluster.patchStatus(project, status);
    for (const event of eventsFor(project.status, status, plan)) await cluster.recordEvent(project, event);
    return { requeueAfterMs: resyncMs, plan, statusWritten };
  };
}
