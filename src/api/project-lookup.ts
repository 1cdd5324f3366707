// The API's one Project-by-uid lookup (every route group uses it, through its store): the
// shared cache when there is one, and on a miss one live read, so a Project created a moment
// ago (by the API or by kubectl) is found before the cache has it. One rule everywhere: a
// Project of another namespace, or one being deleted, is not found (404).
import type { KubeCache, KubeClient } from '../kube/index.js';
import { KeyedRateLimiter } from '../lib/rate-limit.js';
import { PROJECT, type Project } from '../resources/index.js';

export type FindProject = (namespace: string, uid: string) => Promise<Project | undefined>;

const visible = (namespace: string) => (project: Project | undefined): Project | undefined =>
  project && project.metadata.namespace === namespace && !project.metadata.deletionTimestamp ? project : undefined;

/** Whether the API shows `project` at all (the same rule as the lookup, for listings). */
export const projectShown = (project: Project): boolean => !project.metadata.deletionTimestamp;

/**
 * Live reads on a cache miss, per namespace: a burst, then a few a second. A miss costs a list of
 * every Project, and anyone can cause one (a webhook to a made-up project needs no token): past
 * this the cache's answer stands, as it does for all but a Project created a moment ago.
 */
export const LIVE_PROJECT_READS = { burst: 20, perSecond: 10 };

export function projectLookup(client: KubeClient, cache?: KubeCache, options: { now?: () => number } = {}): FindProject {
  const cached = cache?.resource<Project>(PROJECT);
  const live = client.resource<Project>(PROJECT);
  const liveReads = new KeyedRateLimiter({ ...LIVE_PROJECT_READS, maxKeys: 1_000, now: options.now });
  return async (namespace, uid) => {
    const hit = cached?.byUid(uid);
    if (hit) return visible(namespace)(hit);
    if (cached && !liveReads.take(namespace).allowed) return undefined;
    return visible(namespace)((await live.list(namespace)).items.find((p) => p.metadata.uid === uid));
  };
}
