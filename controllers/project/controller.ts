// The Project controller definition for the runtime manager: reconciles Projects, re-runs
// when one of its Triggers changes, and requeues each project after the resync interval.
// A deleted Project's mirror is removed (and, once per start, those of Projects deleted while
// the operator was away).
import { pruneMirrors } from '../../src/git/index.js';
import type { ControllerDefinition, ReconcileContext } from '../../src/runtime/index.js';
import { PROJECT, TRIGGER, type Project } from '../../src/resources/index.js';
import { kubeProjectCluster } from './kube-cluster.js';
import { projectReconciler } from './reconciler.js';
import { repositoryReader } from './repository.js';

export interface ProjectControllerOptions {
  /** Directory of the bare mirrors. */
  mirrorDir: string;
  /** Re-read interval of each project's default branch (default 30 s). */
  resyncMs?: number;
  /** Projects reconciled at once (default 4: fetches wait on the network). */
  concurrency?: number;
}

export function projectController(options: ProjectControllerOptions): ControllerDefinition {
  const readRepository = repositoryReader({ mirrorDir: options.mirrorDir });
  let prunedSinceStart = false;
  const pruneGoneMirrors = async (ctx: ReconcileContext) => {
    const projects = ctx.informer<Project>(PROJECT);
    if (!projects.hasSynced()) return; // an unsynced cache would make every mirror look orphaned
    prunedSinceStart = true;
    try {
      await pruneMirrors(options.mirrorDir, () => new Set(projects.list().map((p) => p.metadata.uid!)));
    } catch (error) {
      // disk clean-up only: the next deletion tries again
      process.stderr.write(`project controller: removing mirrors of deleted projects failed: ${(error as Error).message}\n`);
    }
  };
  return {
    name: 'project',
    for: PROJECT,
    owns: [TRIGGER],
    concurrency: options.concurrency ?? 4,
    async reconcile(key, ctx) {
      const cached = ctx.informer<Project>(PROJECT).get(key.namespace, key.name);
      // Gone: its Triggers are garbage-collected through their owner references; its mirror goes here.
      if (!cached || !prunedSinceStart) await pruneGoneMirrors(ctx);
      if (!cached) return;
      const project = ctx.client.resource<Project>(PROJECT).decode(cached);
      const reconcile = projectReconciler({ cluster: kubeProjectCluster(ctx.client), readRepository, resyncMs: options.resyncMs });
      const outcome = await reconcile(project);
      return outcome.requeueAfterMs > 0 ? { requeueAfter: outcome.requeueAfterMs } : undefined;
    },
  };
}
