// The API's one Project-by-uid lookup (every route group uses it, through its store): the
// shared cache when there is one, and on a miss one live read, so a Project created a moment
// ago (by the API or by kubectl) is found before the cache has it. One rule everywhere: a
// Project of another namespace, or one being deleted, is not found (404).
import type { KubeCache, KubeClient } from '../kube/index.js';
import { PROJECT, type Project } from '../resources/index.js';

export type FindProject = (namespace: string, uid: string) => Promise<Project | undefined>;

const visible = (namespace: string) => (project: Project | undefined): Project | undefined =>
  project && project.metadata.namespace === namespace && !project.metadata.deletionTimestamp ? project : undefined;

/** Whether the API shows `project` at all (the same rule as the lookup, for listings). */
export const projectShown = (project: Project): boolean => !project.metadata.deletionTimestamp;

export function projectLookup(client: KubeClient, cache?: KubeCache): FindProject {
  const cached = cache?.resource<Project>(PROJECT);
  const live = client.resource<Project>(PROJECT);
  return async (namespace, uid) => {
    const hit = cached?.byUid(uid);
    if (hit) return visible(namespace)(hit);
    return visible(namespace)((await live.list(namespace)).items.find((p) => p.metadata.uid === uid));
  };
}
