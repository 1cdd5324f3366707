// Removes the bare mirrors of deleted Projects: once when started (Projects deleted while the
// process was away) and after every Project deletion. A Runnable: the operator's manager runs it
// on the leader; the API (whose every replica has its own mirrors) starts it over its own cache.
import { pruneMirrors } from '../git/index.js';
import type { Informer } from '../kube/index.js';
import type { Logger } from '../lib/log.js';
import { PROJECT, type KubeObject, type ResourceType } from '../resources/index.js';
import type { Runnable } from '../runtime/index.js';

/** What the pruner needs of a ReconcileContext: the Project cache (synced) and a logger. */
export interface PrunerContext {
  informer<T extends KubeObject>(type: ResourceType): Informer<T>;
  log: Logger;
}

export function mirrorPruner(mirrorDir: string): Runnable & { start(ctx: PrunerContext): Promise<void> } {
  let running = false;
  return {
    name: 'mirror-pruner',
    async start(ctx) {
      running = true;
      const projects = ctx.informer(PROJECT);
      await projects.start(); // already started by the cache: waits for its first list
      const prune = async () => {
        // an unsynced cache would make every mirror look orphaned
        if (!running || !projects.hasSynced()) return;
        try {
          await pruneMirrors(mirrorDir, () => new Set(projects.list().map((p) => p.metadata.uid!)));
        } catch (error) {
          // disk clean-up only: the next deletion tries again
          ctx.log.warn('removing mirrors of deleted projects failed', { error: (error as Error).message });
        }
      };
      projects.on('delete', () => void prune());
      await prune();
    },
    stop() { running = false; },
  };
}
